"""Shared by the end-to-end scripts: random inputs for a model's graph
inputs and running a model in ONNX Runtime on the CPU."""
import numpy as np
import onnx
from onnx import helper


def random_inputs(model, rng, dynamic_dim=2):
    """Standard-normal floats, 0/1 integers and booleans, shaped after the
    graph inputs (symbolic dimensions become `dynamic_dim`)."""
    init_names = {t.name for t in model.graph.initializer}
    feeds = {}
    for inp in model.graph.input:
        if inp.name in init_names:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dynamic_dim
                 for d in tt.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[inp.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[inp.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            feeds[inp.name] = rng.integers(0, 2, shape).astype(dtype)
    return feeds


def run_ort(path, feeds):
    """Output name -> array."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))

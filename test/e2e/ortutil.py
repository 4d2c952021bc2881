"""Shared by the end-to-end scripts: random inputs for a model's graph
inputs (lstm_opt.random_inputs) and running a model in ONNX Runtime."""
import os
import sys

# The input generator is the package's (python/lstm_opt), one copy for both.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from lstm_opt import random_inputs  # noqa: E402,F401


def run_ort(path, feeds):
    """Output name -> array."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))

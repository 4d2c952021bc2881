"""Shared by the end-to-end scripts: random inputs for a model's graph
inputs (lstm_opt.random_inputs) and running a model in ONNX Runtime."""
import os
import sys

# The input generator is the package's (python/lstm_opt), one copy for both.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from lstm_opt import random_inputs  # noqa: E402,F401


def max_rel_error(got, ref, floor=0.1):
    """max over the outputs of ref (name -> array) of |got - ref| /
    max(|ref|, floor), elementwise."""
    import numpy as np
    return max(float(np.max(np.abs(got[k] - ref[k]) / np.maximum(np.abs(ref[k]), floor)))
               for k in ref)


def run_lstm_run(lstm_run, path, feeds, stem, extra=()):
    """Runs `lstm-run` on `path` with `feeds` (saved to stem.in.npz);
    returns (outputs or None, stderr)."""
    import subprocess
    import numpy as np
    inp, out = stem + ".in.npz", stem + ".out.npz"
    np.savez(inp, **feeds)
    p = subprocess.run([lstm_run, path, "--inputs", inp, "--outputs", out, "-q", *extra],
                       capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr
    return dict(np.load(out)), p.stderr


def run_ort(path, feeds):
    """Output name -> array."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def iter_nodes(graph):
    """The nodes of an onnx GraphProto and of its subgraphs (Loop, Scan and
    If bodies), depth first."""
    import onnx
    for n in graph.node:
        yield n
        for at in n.attribute:
            if at.type == onnx.AttributeProto.GRAPH:
                yield from iter_nodes(at.g)
            for sub in at.graphs:
                yield from iter_nodes(sub)

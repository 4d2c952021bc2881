"""Runs two ONNX models on the same random inputs in ONNX Runtime (open
dimensions set to argv[3], default 3) and prints 'equal' if every output is
bit-identical, else the largest difference."""
import sys

import numpy as np
import onnxruntime as ort

a, b = sys.argv[1:3]
open_dim = int(sys.argv[3]) if len(sys.argv) > 3 else 3
rng = np.random.default_rng(0)
sa = ort.InferenceSession(a, providers=["CPUExecutionProvider"])
sb = ort.InferenceSession(b, providers=["CPUExecutionProvider"])
feeds = {}
for i in sa.get_inputs():
    shape = [d if isinstance(d, int) else open_dim for d in i.shape]
    feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
worst = 0.0
for x, y in zip(sa.run(None, feeds), sb.run(None, feeds)):
    worst = max(worst, float(np.max(np.abs(x - y))) if x.shape == y.shape else float("inf"))
print("equal" if worst == 0.0 else f"differ: {worst:g}")

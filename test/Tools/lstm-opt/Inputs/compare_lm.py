"""Compares the AOT driver's raw output with ONNX Runtime (target-cpu.test)."""
import sys

import numpy as np
import onnxruntime as ort

model, tokens_path, out_path = sys.argv[1:4]
tokens = np.fromfile(tokens_path, dtype="<i8").reshape(8, 2)
got = np.fromfile(out_path, dtype="<f4").reshape(8, 2, 20)
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
want = sess.run(None, {"tokens": tokens})[0]
rel = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-1))
print("match" if rel <= 1e-4 else f"mismatch: max rel err {rel:.3e}")

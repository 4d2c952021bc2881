#!/usr/bin/env python3
"""ConvInteger with one weight zero point per output channel (the ONNX spec
allows it; ONNX Runtime refuses it): lstm-run against a numpy evaluation of
the spec, on a uint8 graph input.

Usage: conv_integer_per_channel.py LSTM_RUN WORKDIR   (prints 'per-channel: ok')
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

lstm_run, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(1)
w = rng.integers(-128, 128, (6, 4, 3)).astype(np.int8)
wz = np.array([0, 1, -1, 5, -7, 127], np.int8)
x = rng.integers(0, 256, (1, 4, 10)).astype(np.uint8)
g = helper.make_graph(
    [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1])], "g",
    [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 10])],
    [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 6, 10])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(wz, "wz"),
     numpy_helper.from_array(np.array(7, np.uint8), "xz")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
path = os.path.join(work, "ci.onnx")
onnx.save(m, path)
np.savez(os.path.join(work, "in.npz"), x=x)
subprocess.run([lstm_run, path, "--inputs", os.path.join(work, "in.npz"), "--outputs",
                os.path.join(work, "out.npz"), "-q"], check=True)
got = np.load(os.path.join(work, "out.npz"))["y"]
xi = np.pad(x.astype(np.int32) - 7, ((0, 0), (0, 0), (1, 1)))
wi = w.astype(np.int32) - wz.astype(np.int32)[:, None, None]
ref = np.zeros((1, 6, 10), np.int32)
for oc in range(6):
    for o in range(10):
        ref[0, oc, o] = (xi[0, :, o:o + 3] * wi[oc]).sum()
print("per-channel:", "ok" if np.array_equal(got, ref) else "FAIL")

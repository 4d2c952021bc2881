"""Writes an LSTM converted to f16, as onnxconverter_common's float16 leaves
it: f16 initializers W and R (errors.test)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)
w = nh.from_array(rng.standard_normal((1, 8, 1)).astype(np.float16), "W")
r = nh.from_array(rng.standard_normal((1, 8, 2)).astype(np.float16), "R")
node = oh.make_node("LSTM", ["x", "W", "R"], ["y", "yh"], hidden_size=2, name="lstm_f16")
g = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", TP.FLOAT16, [3, 1, 1])],
                  [oh.make_tensor_value_info("yh", TP.FLOAT16, [1, 1, 2])], [w, r])
m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)])
m.ir_version = 9
onnx.save(m, sys.argv[1])

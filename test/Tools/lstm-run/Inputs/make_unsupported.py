"""Writes a model with an op the CPU backend does not lower (errors.test)."""
import sys

import onnx
from onnx import TensorProto as TP
from onnx import helper as oh

node = oh.make_node("Hardmax", ["x"], ["v"], name="the_hardmax")
g = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [2, 6])],
                  [oh.make_tensor_value_info("v", TP.FLOAT, [2, 6])], [])
m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 14)])
m.ir_version = 8
onnx.save(m, sys.argv[1])

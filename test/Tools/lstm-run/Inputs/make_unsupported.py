"""Writes a model with an op the CPU backend does not lower (errors.test)."""
import sys

import onnx
from onnx import TensorProto as TP
from onnx import helper as oh

k = oh.make_tensor("k", TP.INT64, [1], [2])
node = oh.make_node("TopK", ["x", "k"], ["v", "i"], name="the_topk")
g = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [2, 6])],
                  [oh.make_tensor_value_info("v", TP.FLOAT, [2, 2])], [k])
m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 14)])
m.ir_version = 8
onnx.save(m, sys.argv[1])

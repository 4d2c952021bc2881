#!/usr/bin/env python3
"""Hostile inputs that need a real file system to exist (made at test time,
into OUT, by errors-hostile.test):

  m/model.onnx       external data '../m2/secret.bin': a sibling folder whose
                     name starts with the model folder's (m2 vs m)
  f/model.onnx       external data 'fifo.bin', a FIFO (reading it would block)
  o/model.onnx       external data of 8 bytes at offset 2^64 - 1 (offset +
                     length wraps)
  esc.onnx           a node named with terminal escape sequences and a
                     missing required input (its error names the node)
  dup_out.onnx       a graph that lists its output 'y' twice

Usage: make_hostile_models.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def ext_model(folder, location, offset=None, length=None):
    os.makedirs(os.path.join(out, folder), exist_ok=True)
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2])
    w.data_location = TensorProto.EXTERNAL
    e = w.external_data.add()
    e.key, e.value = "location", location
    for key, v in (("offset", offset), ("length", length)):
        if v is not None:
            e = w.external_data.add()
            e.key, e.value = key, str(v)
    m = model([helper.make_node("Add", ["x", "W"], ["y"], name="add")],
              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w])
    with open(os.path.join(out, folder, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())


ext_model("m", "../m2/secret.bin")
os.makedirs(os.path.join(out, "m2"), exist_ok=True)
np.array([1, 2], np.float32).tofile(os.path.join(out, "m2", "secret.bin"))

ext_model("f", "fifo.bin")
os.mkfifo(os.path.join(out, "f", "fifo.bin"))

ext_model("o", "data.bin", offset=2**64 - 1, length=8)
np.array([1, 2], np.float32).tofile(os.path.join(out, "o", "data.bin"))

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
esc = model([helper.make_node("Gemm", ["x", ""], ["y"], name="\x1b[31mred\x1b]0;pwned\x07")], [x], [y])
with open(os.path.join(out, "esc.onnx"), "wb") as f:
    f.write(esc.SerializeToString())

dup = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x], [y, y])
with open(os.path.join(out, "dup_out.onnx"), "wb") as f:
    f.write(dup.SerializeToString())

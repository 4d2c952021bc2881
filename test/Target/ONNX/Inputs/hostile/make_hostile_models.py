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
  gather_out_of_range.onnx  an LSTMCell loop whose first step gathers step 7 of 5
  nested_if_*.onnx   If nested 3, 66 and 2,600 levels deep (binary), 10,000
                     (text)

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


def _varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num, payload):
    """A length-delimited protobuf field."""
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _float2(name):
    """ValueInfoProto name: float[2]."""
    dim = _field(1, _varint(1 << 3) + _varint(2))  # Dimension.dim_value = 2
    tensor = _varint(1 << 3) + _varint(1) + _field(2, dim)  # elem_type FLOAT, shape
    return _field(1, name) + _field(2, _field(1, tensor))


def nested_if(depth):
    """An If whose then-branch holds an If ... `depth` levels deep, encoded
    by hand: onnx's Python protobuf refuses to build messages this deep."""
    def graph(nodes, name, inputs=b""):
        return b"".join(_field(1, n) for n in nodes) + _field(2, name) + inputs + \
            _field(12, _float2("o"))
    leaf = graph([_field(1, "x") + _field(2, "o") + _field(4, "Identity")], "leaf")
    inner = leaf
    for i in range(depth):
        attr = lambda name, g: _field(1, name) + _field(6, g) + _varint(20 << 3) + _varint(5)
        node = (_field(1, "c") + _field(2, "o") + _field(3, f"if{depth - i}") + _field(4, "If")
                + _field(5, attr("then_branch", inner)) + _field(5, attr("else_branch", leaf)))
        inner = graph([node], f"g{i}")
    bool_c = _field(1, "c") + _field(2, _field(1, _varint(1 << 3) + _varint(9) + _field(2, b"")))
    main = inner[:inner.rindex(_field(12, _float2("o")))]  # drop the output, re-add below
    main = main + _field(11, bool_c) + _field(11, _float2("x")) + _field(12, _float2("o"))
    opset = _field(1, "") + _varint(2 << 3) + _varint(17)
    return _varint(1 << 3) + _varint(8) + _field(8, opset) + _field(7, main)


# 3 is what silero-vad nests; 66 is past lstm-opt's limit of 64; 2,600
# (which overflowed the importer's stack) is past what its protobuf parser
# reads.
for depth in (3, 66, 2600):
    with open(os.path.join(out, f"nested_if_{depth}.onnx"), "wb") as f:
        f.write(nested_if(depth))
# The textual form, 10,000 levels deep (libonnx's parser recursed and crashed).
text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c, float[2] x) => (float[2] o) {\n"
opens = [f"o = If (c) <then_branch = t{i} () => (float[2] o) {{ " for i in range(10000)]
closes = [f" }}, else_branch = e{i} () => (float[2] o) {{ o = Identity (x) }}>"
          for i in reversed(range(10000))]
with open(os.path.join(out, "nested_if_10000.onnxtext"), "w") as f:
    f.write(text + "  " + "".join(opens) + "o = Identity (x)" + "".join(closes) + "\n}\n")

# A Gather whose constant index is out of range (ONNX Runtime refuses the
# model): torch_lstmcell_gather with step 0's index set to 7 of 5 steps.
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "e2e",
                   "models", "torch_lstmcell_gather.onnx")
m = onnx.load(src)
first = next(n for n in m.graph.node if n.op_type == "Gather")
for n in m.graph.node:
    if n.op_type == "Constant" and n.output[0] == first.input[1]:
        n.attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(np.array(7, np.int64)))
onnx.save(m, os.path.join(out, "gather_out_of_range.onnx"))

#!/usr/bin/env python3
"""Writes the malformed models of the errors-*.test lit tests.

Run with the project's Python (onnx installed):

    .venv/bin/python test/Target/ONNX/Inputs/bad/make_bad_models.py

The output is deterministic (fixed seeds, no timestamps) and goes next to this
script; the files are committed with it, so only rerun it to change them.

The models are built as raw ModelProto messages: onnx.helper and the checker
would refuse most of them, so neither the checker nor shape inference is
called here. Every model is a variant of the same tiny graph

    y = Relu(MatMul(x, W))      x: float[1, 2], W: float[2, 2] initializer

with one defect each. The external-data cases live in extdata/, with
secret.bin next to this script so that '../secret.bin' names a real file
outside the model's folder.
"""

import os
import random
import struct

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
EXT = os.path.join(HERE, "extdata")

FLOAT = TensorProto.FLOAT
W_VALUES = [1.0, -2.0, 3.0, -4.0]
W_BYTES = struct.pack("<4f", *W_VALUES)  # 16 bytes for float[2, 2]


def write(rel, data):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def save(rel, model):
    write(rel, model.SerializeToString(deterministic=True))


def text(rel, body):
    write(rel, body.lstrip("\n").encode())


def value_info(name, dims, elem=FLOAT):
    """A tensor ValueInfoProto; dims are ints (may be negative) or strings."""
    vi = onnx.ValueInfoProto()
    vi.name = name
    tt = vi.type.tensor_type
    tt.elem_type = elem
    shape = tt.shape
    shape.SetInParent()
    for d in dims:
        dim = shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = d
    return vi


def tensor(name, dims, raw, elem=FLOAT):
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external_tensor(name, dims, location, elem=FLOAT):
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key = "location"
    entry.value = location
    return t


def node(op, inputs, outputs, name):
    n = onnx.NodeProto()
    n.op_type = op
    n.name = name
    n.input.extend(inputs)
    n.output.extend(outputs)
    return n


def model(nodes, inputs=None, outputs=None, inits=None, ir_version=8,
          opset=17):
    m = onnx.ModelProto()
    if ir_version is not None:
        m.ir_version = ir_version
    m.producer_name = "make_bad_models.py"
    op = m.opset_import.add()
    op.domain = ""
    op.version = opset
    g = m.graph
    g.name = "bad"
    g.node.extend(nodes)
    g.input.extend(inputs if inputs is not None else [value_info("x", [1, 2])])
    g.output.extend(outputs if outputs is not None
                    else [value_info("y", [1, 2])])
    g.initializer.extend(inits if inits is not None
                         else [tensor("W", [2, 2], W_BYTES)])
    return m


def base_nodes():
    return [node("MatMul", ["x", "W"], ["t"], "mm"),
            node("Relu", ["t"], ["y"], "relu")]


def main():
    # The valid model the truncated files are cut from (a control: it must
    # import).
    valid = model(base_nodes()).SerializeToString(deterministic=True)
    write("valid.onnx", valid)

    # 2. Truncated models.
    write("truncated_half.onnx", valid[: len(valid) // 2])
    write("truncated_10.onnx", valid[:10])

    # 3. Random bytes (seeded) and an empty file.
    rng = random.Random(20240611)
    write("random.onnx", bytes(rng.getrandbits(8) for _ in range(256)))
    write("empty.onnx", b"")

    # 4. Cycles: 'a' and 'b' feed each other; 'relu' (first in the file) only
    # consumes the cycle and must not be blamed for it; 'self' reads its own
    # output.
    save("cycle.onnx", model([
        node("Add", ["x", "d"], ["c"], "a"),
        node("Add", ["c", "x"], ["d"], "b"),
        node("Relu", ["d"], ["y"], "relu"),
    ], inits=[]))
    save("cycle_downstream.onnx", model([
        node("Relu", ["d"], ["y"], "relu"),
        node("Add", ["x", "d"], ["c"], "a"),
        node("Add", ["c", "x"], ["d"], "b"),
    ], inits=[]))
    save("cycle_self.onnx", model([
        node("Add", ["x", "y"], ["y"], "self"),
    ], inits=[]))

    # 5. A dangling input.
    save("dangling.onnx", model([
        node("MatMul", ["x", "nowhere"], ["t"], "mm"),
        node("Relu", ["t"], ["y"], "relu"),
    ], inits=[]))

    # 6. Missing required inputs: too few inputs, and an empty name in a
    # required slot.
    save("missing_input_gemm.onnx", model([
        node("Gemm", ["x"], ["t"], "gemm"),
        node("Relu", ["t"], ["y"], "relu"),
    ]))
    save("missing_input_matmul.onnx", model([
        node("MatMul", ["x"], ["t"], "mm"),
        node("Relu", ["t"], ["y"], "relu"),
    ]))
    save("missing_input_empty.onnx", model([
        node("Gemm", ["x", "", "W"], ["t"], "gemm"),
        node("Relu", ["t"], ["y"], "relu"),
    ]))

    # 7. raw_data of 12 bytes for a float[2, 2] (16 bytes) initializer.
    save("raw_data_size.onnx", model(base_nodes(),
                                     inits=[tensor("W", [2, 2], W_BYTES[:12])]))

    # 8. Negative dims: in an initializer, and in a graph input's type.
    save("negative_dim_init.onnx", model(base_nodes(), inits=[
        tensor("W", [2, -2], W_BYTES)]))
    save("negative_dim_input.onnx", model(base_nodes(), inputs=[
        value_info("x", [-1, 2])]))

    # 9. IR versions: too new, explicitly 0, and absent.
    save("ir_version_99.onnx", model(base_nodes(), ir_version=99))
    save("ir_version_0.onnx", model(base_nodes(), ir_version=0))
    save("ir_version_missing.onnx", model(base_nodes(), ir_version=None))

    # 10. External data: escaping the folder, absolute, missing. secret.bin
    # holds exactly the 16 bytes W needs, so only the path is wrong.
    write("secret.bin", W_BYTES)
    for name, location in [("model_escape.onnx", "../secret.bin"),
                           ("model_absolute.onnx", "/etc/passwd"),
                           ("model_missing.onnx", "missing.bin")]:
        save(os.path.join("extdata", name), model(
            base_nodes(), inits=[external_tensor("W", [2, 2], location)]))

    # 11. Two nodes producing one name; a graph output nothing produces.
    save("duplicate_output.onnx", model([
        node("MatMul", ["x", "W"], ["t"], "first"),
        node("Relu", ["x"], ["t"], "second"),
        node("Relu", ["t"], ["y"], "relu"),
    ]))
    save("unproduced_output.onnx", model(base_nodes(), outputs=[
        value_info("y", [1, 2]), value_info("z", [1, 2])]))

    # 12. Sizes whose products pass 2^63 (the importer multiplied them
    # before any bound): an initializer of [21, 2^62] with 420 bytes, a graph
    # input of [2^40, 2^40], an LSTM whose hidden_size is 2^62, and a Split
    # whose num_outputs (2^31) contradicts its four outputs (the ONNX
    # library's shape inference grew a vector of 2^31 types: 17 GB).
    save("size_overflow_init.onnx", model(base_nodes(), inits=[
        tensor("W", [21, 1 << 62], bytes(420))]))
    save("size_overflow_input.onnx", model(base_nodes(), inputs=[
        value_info("x", [1 << 40, 1 << 40])]))
    lstm = node("LSTM", ["x3", "W3", "R3"], ["", "yh"], "lstm")
    lstm.attribute.extend([helper.make_attribute("hidden_size", 1 << 62)])
    save("size_overflow_hidden.onnx", model(
        [lstm], inputs=[value_info("x3", [1, 1, 2])],
        outputs=[value_info("yh", [1, 1, 1])],
        inits=[tensor("W3", [1, 4, 2], bytes(32)),
               tensor("R3", [1, 4, 1], bytes(16))]))
    split = node("Split", ["x"], ["a", "b", "c", "d"], "split")
    split.attribute.extend([helper.make_attribute("axis", 1),
                            helper.make_attribute("num_outputs", 1 << 31)])
    save("split_num_outputs.onnx", model(
        [split], inputs=[value_info("x", [1, 4])],
        outputs=[value_info(n, [1, 1]) for n in "abcd"], inits=[], opset=18))

    # The same count stated as a FLOAT attribute whose integer field says
    # 2^31: the library reads the integer whatever the kind (found by the
    # structure-aware fuzzer in seconds).
    split = node("Split", ["x"], ["a", "b", "c"], "split")
    kind = helper.make_attribute("num_outputs", 1.0)
    kind.i = 1 << 31
    split.attribute.extend([helper.make_attribute("axis", 1), kind])
    save("split_num_outputs_kind.onnx", model(
        [split], inputs=[value_info("x", [1, 3])],
        outputs=[value_info(n, [1, 1]) for n in "abc"], inits=[], opset=18))

    # 13. An opset that does not exist (ONNX Runtime refuses it).
    save("opset_999.onnx", model(base_nodes(), opset=999))

    # Textual variants (the tool reads .onnxtext too).
    header = """
<
  ir_version: 8,
  opset_import: ["" : 17]
>
"""
    text("cycle.onnxtext", header + """
bad (float[1, 2] x) => (float[1, 2] y) {
  c = Add(x, d)
  d = Add(c, x)
  y = Relu(d)
}
""")
    text("dangling.onnxtext", header + """
bad (float[1, 2] x) => (float[1, 2] y) {
  t = MatMul(x, nowhere)
  y = Relu(t)
}
""")
    text("missing_input.onnxtext", header + """
bad (float[1, 2] x) => (float[1, 2] y) {
  t = MatMul(x)
  y = Relu(t)
}
""")
    # The parser takes an empty slot for an empty name ("" is a syntax error).
    text("missing_input_empty.onnxtext", header + """
bad (float[1, 2] x, float[2, 2] w) => (float[1, 2] y) {
  t = Gemm(x, , w)
  y = Relu(t)
}
""")
    text("duplicate_output.onnxtext", header + """
bad (float[1, 2] x, float[2, 2] w) => (float[1, 2] y) {
  t = MatMul(x, w)
  t = Relu(x)
  y = Relu(t)
}
""")
    text("unproduced_output.onnxtext", header + """
bad (float[1, 2] x) => (float[1, 2] y, float[1, 2] z) {
  y = Relu(x)
}
""")
    text("ir_version_99.onnxtext", """
<
  ir_version: 99,
  opset_import: ["" : 17]
>
bad (float[1, 2] x) => (float[1, 2] y) {
  y = Relu(x)
}
""")
    # Not parseable at all: the parser's position must reach the user.
    text("syntax.onnxtext", header + """
bad (float[1, 2] x) => (float[1, 2] y) {
  y = Relu(x
}
""")


if __name__ == "__main__":
    main()

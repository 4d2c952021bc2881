#!/usr/bin/env python3
"""Generate hand-written ONNX Scan recurrences (onnx.helper), for lstm-opt e2e tests.

Run with the project's venv (onnx, onnxruntime, numpy; see scripts/setup.sh):

    .venv/bin/python test/e2e/models/gen_onnx_scan.py

No exporter writes ONNX Scan for recurrent layers today (tf2onnx and jax2onnx write
Loop), but Scan is the operator ONNX defines for exactly this, and hand-written or
converted graphs use it. Each fixture is a Scan whose body is one cell step written
per op, weights as outer-scope initializers read directly by the body:

  * onnx_scan_lstm: LSTM (gate order i,f,g,o, one [I,4H] and one [H,4H] MatMul, bias
    Add, Split into 4), time-major x[T,B,I] scanned along axis 0, states h/c carried,
    scan output h stacked along axis 0; h0/c0 are graph inputs.
  * onnx_scan_gru_reverse_bf: GRU (PyTorch form, r applied after the recurrent matmul),
    batch-first x[B,T,I] scanned along axis 1 in reverse (scan_input_directions=[1]),
    outputs stacked along axis 1 in reverse too (scan_output_directions=[1]), so y[:, t]
    is the h computed from x[:, t]: a reverse layer; zero initial state.
  * onnx_scan_gru_expanded: GRU with the reset gate applied before the recurrent matmul
    (linear_before_reset = 0: n = tanh(x Wn + (r*h) Rn + bn)) and the update multiplied
    out, h' = (n - z*n) + z*h, as hand-written graphs write it; time-major, h0 an input.

Every model is checked with onnx.checker and against a numpy reference in ONNX Runtime.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _manifest_util import HERE, layer, update_manifest  # noqa: E402

GENERATOR = "gen_onnx_scan.py"
EXPORTER = "onnx.helper %s (hand-written)" % ".".join(onnx.__version__.split(".")[:2])
OPSET = 21
SEED = 7
T, B, I, H = 6, 3, 4, 5
rng = np.random.default_rng(SEED)


def w(*shape):
    return (rng.standard_normal(shape) * 0.4).astype(np.float32)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def name_nodes(graph, prefix=""):
    """Names every node as exporters do (/scope/OpType_i), subgraphs too."""
    for i, n in enumerate(graph.node):
        n.name = "%s/%s_%d" % (prefix, n.op_type, i)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                name_nodes(a.g, "%s/%s" % (prefix, a.g.name))


def save(name, graph):
    name_nodes(graph)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="gen_onnx_scan.py")
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(HERE, name + ".onnx")
    onnx.save(model, path)
    return name + ".onnx", path


def check(path, feeds, want):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)
    for a, b in zip(want, got):
        err = float(np.max(np.abs(a - b)))
        if err > 1e-5:
            sys.exit("%s: ONNX Runtime and the numpy reference differ by %g" % (path, err))


def onnx_scan_lstm():
    Wx, Wh, b = w(I, 4 * H), w(H, 4 * H), w(4 * H)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["gx"]),
         helper.make_node("MatMul", ["h", "Wh"], ["gh"]),
         helper.make_node("Add", ["gx", "gh"], ["g0"]),
         helper.make_node("Add", ["g0", "b"], ["g"]),
         helper.make_node("Split", ["g"], ["gi", "gf", "gg", "go"], axis=1, num_outputs=4),
         helper.make_node("Sigmoid", ["gi"], ["i"]),
         helper.make_node("Sigmoid", ["gf"], ["f"]),
         helper.make_node("Tanh", ["gg"], ["cand"]),
         helper.make_node("Sigmoid", ["go"], ["o"]),
         helper.make_node("Mul", ["f", "c"], ["fc"]),
         helper.make_node("Mul", ["i", "cand"], ["ic"]),
         helper.make_node("Add", ["fc", "ic"], ["c_new"]),
         helper.make_node("Tanh", ["c_new"], ["tc"]),
         helper.make_node("Mul", ["o", "tc"], ["h_new"]),
         helper.make_node("Identity", ["h_new"], ["y_t"])],
        "lstm_step",
        [f32("h", [B, H]), f32("c", [B, H]), f32("x_t", [B, I])],
        [f32("h_new", [B, H]), f32("c_new", [B, H]), f32("y_t", [B, H])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "c0", "x"], ["h_T", "c_T", "y"], body=body,
                          num_scan_inputs=1)],
        "onnx_scan_lstm",
        [f32("x", [T, B, I]), f32("h0", [B, H]), f32("c0", [B, H])],
        [f32("y", [T, B, H]), f32("h_T", [B, H]), f32("c_T", [B, H])],
        [numpy_helper.from_array(Wx, "Wx"), numpy_helper.from_array(Wh, "Wh"),
         numpy_helper.from_array(b, "b")])
    file, path = save("onnx_scan_lstm", graph)
    x, h, c = w(T, B, I), w(B, H), w(B, H)
    feeds = {"x": x, "h0": h, "c0": c}
    ys = []
    for t in range(T):
        g = x[t] @ Wx + h @ Wh + b
        gi, gf, gg, go = np.split(g, 4, axis=1)
        c = sigmoid(gf) * c + sigmoid(gi) * np.tanh(gg)
        h = sigmoid(go) * np.tanh(c)
        ys.append(h)
    check(path, feeds, [np.stack(ys), h, c])
    return {
        "file": file, "generator": GENERATOR, "exporter": EXPORTER, "opset": OPSET,
        "description": "ONNX Scan over time-major x (axis 0), body: one LSTM step written per "
                       "op (2 MatMul, bias Add, Split num_outputs=4); h0/c0 graph inputs; "
                       "weights are outer-scope initializers.",
        "inputs": {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        "outputs": {"y": [T, B, H], "h_T": [B, H], "c_T": [B, H]},
        "gate_order": "i,f,g,o (columns of Wx [I,4H] and Wh [H,4H])",
        "expected": {"cells": "lstm", "standard_rnn_ops": 0, "layers": [
            layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs")]},
        "time_loop": "ONNX Scan (num_scan_inputs=1, axis 0, forward)",
    }


def onnx_scan_gru_reverse_bf():
    Wx, Wh, bx, bh = w(I, 3 * H), w(H, 3 * H), w(3 * H), w(3 * H)
    body = helper.make_graph(
        [helper.make_node("Gemm", ["x_t", "Wx", "bx"], ["gx"]),
         helper.make_node("Gemm", ["h", "Wh", "bh"], ["gh"]),
         helper.make_node("Split", ["gx"], ["xr", "xz", "xn"], axis=1, num_outputs=3),
         helper.make_node("Split", ["gh"], ["hr", "hz", "hn"], axis=1, num_outputs=3),
         helper.make_node("Add", ["xr", "hr"], ["ar"]),
         helper.make_node("Sigmoid", ["ar"], ["r"]),
         helper.make_node("Add", ["xz", "hz"], ["az"]),
         helper.make_node("Sigmoid", ["az"], ["z"]),
         helper.make_node("Mul", ["r", "hn"], ["rhn"]),
         helper.make_node("Add", ["xn", "rhn"], ["an"]),
         helper.make_node("Tanh", ["an"], ["n"]),
         helper.make_node("Sub", ["h", "n"], ["d"]),
         helper.make_node("Mul", ["z", "d"], ["zd"]),
         helper.make_node("Add", ["n", "zd"], ["h_new"]),
         helper.make_node("Identity", ["h_new"], ["y_t"])],
        "gru_step",
        [f32("h", [B, H]), f32("x_t", [B, I])],
        [f32("h_new", [B, H]), f32("y_t", [B, H])])
    zeros = numpy_helper.from_array(np.zeros((B, H), np.float32), "h_zero")
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h_zero", "x"], ["h_T", "y"], body=body, num_scan_inputs=1,
                          scan_input_axes=[1], scan_input_directions=[1],
                          scan_output_axes=[1], scan_output_directions=[1])],
        "onnx_scan_gru_reverse_bf",
        [f32("x", [B, T, I])],
        [f32("y", [B, T, H]), f32("h_T", [B, H])],
        [numpy_helper.from_array(Wx, "Wx"), numpy_helper.from_array(Wh, "Wh"),
         numpy_helper.from_array(bx, "bx"), numpy_helper.from_array(bh, "bh"), zeros])
    file, path = save("onnx_scan_gru_reverse_bf", graph)
    x = w(B, T, I)
    h = np.zeros((B, H), np.float32)
    ys = [None] * T
    for t in reversed(range(T)):
        xr, xz, xn = np.split(x[:, t] @ Wx + bx, 3, axis=1)
        hr, hz, hn = np.split(h @ Wh + bh, 3, axis=1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        h = n + z * (h - n)
        ys[t] = h
    check(path, {"x": x}, [np.stack(ys, axis=1), h])
    return {
        "file": file, "generator": GENERATOR, "exporter": EXPORTER, "opset": OPSET,
        "description": "ONNX Scan over batch-first x[B,T,I] along axis 1 in reverse "
                       "(scan_input_directions=[1]), outputs stacked along axis 1 in reverse "
                       "(scan_output_directions=[1]); body: one GRU step (2 Gemm, 2 Split, "
                       "h' = n + z*(h - n)); zero initial state.",
        "inputs": {"x": [B, T, I]},
        "outputs": {"y": [B, T, H], "h_T": [B, H]},
        "gate_order": "r,z,n (columns of Wx [I,3H] and Wh [H,3H]; r applied to Wh_n h + bh_n)",
        "expected": {"cells": "gru", "standard_rnn_ops": 0, "layers": [
            layer("gru", T, H, I, direction="reverse", batch=B, time_major=False,
                  initial_state="zeros", linear_before_reset=True)]},
        "time_loop": "ONNX Scan (num_scan_inputs=1, axis 1, reverse in and out)",
    }


def onnx_scan_gru_expanded():
    Wx, Wh, Wn, b = w(I, 3 * H), w(H, 2 * H), w(H, H), w(3 * H)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["gx0"]),
         helper.make_node("Add", ["gx0", "b"], ["gx"]),
         helper.make_node("Split", ["gx"], ["xr", "xz", "xn"], axis=1, num_outputs=3),
         helper.make_node("MatMul", ["h", "Wh"], ["gh"]),
         helper.make_node("Split", ["gh"], ["hr", "hz"], axis=1, num_outputs=2),
         helper.make_node("Add", ["xr", "hr"], ["ar"]),
         helper.make_node("Sigmoid", ["ar"], ["r"]),
         helper.make_node("Add", ["xz", "hz"], ["az"]),
         helper.make_node("Sigmoid", ["az"], ["z"]),
         helper.make_node("Mul", ["r", "h"], ["rh"]),
         helper.make_node("MatMul", ["rh", "Wn"], ["rhn"]),
         helper.make_node("Add", ["xn", "rhn"], ["an"]),
         helper.make_node("Tanh", ["an"], ["n"]),
         helper.make_node("Mul", ["z", "n"], ["zn"]),
         helper.make_node("Sub", ["n", "zn"], ["keep"]),
         helper.make_node("Mul", ["h", "z"], ["zh"]),
         helper.make_node("Add", ["keep", "zh"], ["h_new"]),
         helper.make_node("Identity", ["h_new"], ["y_t"])],
        "gru_step",
        [f32("h", [B, H]), f32("x_t", [B, I])],
        [f32("h_new", [B, H]), f32("y_t", [B, H])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "x"], ["h_T", "y"], body=body, num_scan_inputs=1)],
        "onnx_scan_gru_expanded",
        [f32("x", [T, B, I]), f32("h0", [B, H])],
        [f32("y", [T, B, H]), f32("h_T", [B, H])],
        [numpy_helper.from_array(Wx, "Wx"), numpy_helper.from_array(Wh, "Wh"),
         numpy_helper.from_array(Wn, "Wn"), numpy_helper.from_array(b, "b")])
    file, path = save("onnx_scan_gru_expanded", graph)
    x, h = w(T, B, I), w(B, H)
    feeds = {"x": x, "h0": h}
    ys = []
    for t in range(T):
        xr, xz, xn = np.split(x[t] @ Wx + b, 3, axis=1)
        hr, hz = np.split(h @ Wh, 2, axis=1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + (r * h) @ Wn)
        h = (n - z * n) + z * h
        ys.append(h)
    check(path, feeds, [np.stack(ys), h])
    return {
        "file": file, "generator": GENERATOR, "exporter": EXPORTER, "opset": OPSET,
        "description": "ONNX Scan over time-major x (axis 0); body: one GRU step with the "
                       "reset gate before the recurrent matmul (n = tanh(x Wn + (r*h) Rn + bn)) "
                       "and the update multiplied out, h' = (n - z*n) + z*h; h0 a graph input.",
        "inputs": {"x": [T, B, I], "h0": [B, H]},
        "outputs": {"y": [T, B, H], "h_T": [B, H]},
        "gate_order": "r,z,n (columns of Wx [I,3H]; Wh [H,2H] holds r,z; Wn [H,H] reads r*h)",
        "expected": {"cells": "gru", "standard_rnn_ops": 0, "layers": [
            layer("gru", T, H, I, batch=B, time_major=True, initial_state="inputs",
                  linear_before_reset=False)]},
        "time_loop": "ONNX Scan (num_scan_inputs=1, axis 0, forward)",
    }


FIXTURES = [onnx_scan_lstm, onnx_scan_gru_reverse_bf, onnx_scan_gru_expanded]

if __name__ == "__main__":
    entries = [fx() for fx in FIXTURES]
    update_manifest(GENERATOR, entries)
    for e in entries:
        print("wrote", e["file"])

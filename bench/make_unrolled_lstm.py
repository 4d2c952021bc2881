#!/usr/bin/env python3
"""Writes a synthetic unrolled LSTM model the way PyTorch exports an
nn.LSTMCell loop: per step Gather(x, t), two MatMuls, bias Adds, Split into
four gates, Sigmoid/Tanh, the cell and hidden updates (16 nodes per step),
with the weights shared by all steps.

Usage: make_unrolled_lstm.py OUT.onnx --steps T [--hidden H] [--input I] [--batch B]
                             [--style torch|pergate] [--layers L]
--style pergate writes the hand-written form instead: one MatMul per gate and
input (8 per step), 30 nodes per step. --layers L > 1 stacks L torch-style
cells (build_stacked), layer l's h sequence feeding layer l+1.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_pergate(steps, hidden, inp, batch, opset=17):
    """The hand-written style: one MatMul per gate and input (8 per step), two
    bias Adds per gate (input and recurrent), the step input cut by Slice +
    Squeeze: 32 nodes per step."""
    rng = np.random.default_rng(0)
    H, I, B = hidden, inp, batch
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axis0")]
    for g in "ifgo":
        inits += [
            numpy_helper.from_array(rng.standard_normal((I, H)).astype(np.float32) * 0.1, "W_" + g),
            numpy_helper.from_array(rng.standard_normal((H, H)).astype(np.float32) * 0.1, "R_" + g),
            numpy_helper.from_array(rng.standard_normal((H,)).astype(np.float32) * 0.1, "b_" + g),
            numpy_helper.from_array(rng.standard_normal((H,)).astype(np.float32) * 0.1, "c_" + g),
        ]
    nodes, outs = [], []
    h, c = "h0", "c0"
    for t in range(steps):
        p = f"s{t}_"
        inits.append(numpy_helper.from_array(np.array([t], np.int64), p + "start"))
        inits.append(numpy_helper.from_array(np.array([t + 1], np.int64), p + "end"))
        nodes.append(helper.make_node("Slice", ["x", p + "start", p + "end", "axis0"],
                                      [p + "xs"], name=p + "slice"))
        nodes.append(helper.make_node("Squeeze", [p + "xs", "axis0"], [p + "xt"], name=p + "squeeze"))
        act = {}
        for g, fn in zip("ifgo", ["Sigmoid", "Sigmoid", "Tanh", "Sigmoid"]):
            nodes += [
                helper.make_node("MatMul", [p + "xt", "W_" + g], [p + "xw" + g], name=p + "mmx" + g),
                helper.make_node("MatMul", [h, "R_" + g], [p + "hr" + g], name=p + "mmh" + g),
                helper.make_node("Add", [p + "xw" + g, p + "hr" + g], [p + "s" + g], name=p + "add" + g),
                helper.make_node("Add", [p + "s" + g, "b_" + g], [p + "q" + g], name=p + "bias" + g),
                helper.make_node("Add", [p + "q" + g, "c_" + g], [p + "p" + g], name=p + "rbias" + g),
                helper.make_node(fn, [p + "p" + g], [p + "a" + g], name=p + "act" + g),
            ]
            act[g] = p + "a" + g
        nodes += [
            helper.make_node("Mul", [act["f"], c], [p + "fc"], name=p + "mul_fc"),
            helper.make_node("Mul", [act["i"], act["g"]], [p + "ig"], name=p + "mul_ig"),
            helper.make_node("Add", [p + "fc", p + "ig"], [p + "c"], name=p + "add_c"),
            helper.make_node("Tanh", [p + "c"], [p + "tc"], name=p + "tanh_c"),
            helper.make_node("Mul", [act["o"], p + "tc"], [p + "h"], name=p + "mul_h"),
            helper.make_node("Unsqueeze", [p + "h", "axis0"], [p + "hu"], name=p + "unsq"),
        ]
        h, c = p + "h", p + "c"
        outs.append(p + "hu")
    nodes.append(helper.make_node("Concat", outs, ["y"], name="stack", axis=0))
    return _model(nodes, inits, steps, B, I, H, h, c, opset)


def _model(nodes, inits, steps, B, I, H, h, c, opset):
    nodes.append(helper.make_node("Identity", [h], ["h_n"], name="h_out"))
    nodes.append(helper.make_node("Identity", [c], ["c_n"], name="c_out"))
    graph = helper.make_graph(
        nodes, "unrolled_lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, B, I]),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [B, H]),
         helper.make_tensor_value_info("c0", TensorProto.FLOAT, [B, H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, B, H]),
         helper.make_tensor_value_info("h_n", TensorProto.FLOAT, [B, H]),
         helper.make_tensor_value_info("c_n", TensorProto.FLOAT, [B, H])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="lstm-opt bench")
    model.ir_version = 8
    return model


def build(steps, hidden, inp, batch, opset=17, scale=0.1):
    """scale: weights and biases are N(0, scale^2)."""
    rng = np.random.default_rng(0)
    H, I, B = hidden, inp, batch
    inits = [
        numpy_helper.from_array(rng.standard_normal((I, 4 * H)).astype(np.float32) * scale, "W_T"),
        numpy_helper.from_array(rng.standard_normal((H, 4 * H)).astype(np.float32) * scale, "R_T"),
        numpy_helper.from_array(rng.standard_normal((4 * H,)).astype(np.float32) * scale, "b"),
        numpy_helper.from_array(np.array([H, H, H, H], np.int64), "split"),
    ]
    nodes = []
    h, c = "h0", "c0"
    outs = []
    for t in range(steps):
        p = f"s{t}_"
        inits.append(numpy_helper.from_array(np.array(t, np.int64), p + "idx"))
        nodes += [
            helper.make_node("Gather", ["x", p + "idx"], [p + "xt"], name=p + "gather", axis=0),
            helper.make_node("MatMul", [p + "xt", "W_T"], [p + "xw"], name=p + "mm_x"),
            helper.make_node("MatMul", [h, "R_T"], [p + "hr"], name=p + "mm_h"),
            helper.make_node("Add", [p + "xw", "b"], [p + "xwb"], name=p + "add_b"),
            helper.make_node("Add", [p + "xwb", p + "hr"], [p + "g"], name=p + "add_g"),
            helper.make_node("Split", [p + "g", "split"], [p + "i", p + "f", p + "gg", p + "o"],
                             name=p + "split", axis=1),
            helper.make_node("Sigmoid", [p + "i"], [p + "si"], name=p + "sig_i"),
            helper.make_node("Sigmoid", [p + "f"], [p + "sf"], name=p + "sig_f"),
            helper.make_node("Tanh", [p + "gg"], [p + "tg"], name=p + "tanh_g"),
            helper.make_node("Sigmoid", [p + "o"], [p + "so"], name=p + "sig_o"),
            helper.make_node("Mul", [p + "sf", c], [p + "fc"], name=p + "mul_fc"),
            helper.make_node("Mul", [p + "si", p + "tg"], [p + "ig"], name=p + "mul_ig"),
            helper.make_node("Add", [p + "fc", p + "ig"], [p + "c"], name=p + "add_c"),
            helper.make_node("Tanh", [p + "c"], [p + "tc"], name=p + "tanh_c"),
            helper.make_node("Mul", [p + "so", p + "tc"], [p + "h"], name=p + "mul_h"),
            helper.make_node("Unsqueeze", [p + "h", "axis0"], [p + "hu"], name=p + "unsq"),
        ]
        h, c = p + "h", p + "c"
        outs.append(p + "hu")
    inits.append(numpy_helper.from_array(np.array([0], np.int64), "axis0"))
    nodes.append(helper.make_node("Concat", outs, ["y"], name="stack", axis=0))
    return _model(nodes, inits, steps, B, I, H, h, c, opset)


def build_stacked(steps, hidden, inp, batch, layers, opset=17, scale=0.1):
    """`layers` PyTorch-style LSTM cells stacked the way a Python loop over
    layers writes them: layer l runs all T steps over its input sequence
    (Gather(seq, t) per step, the same 16 nodes per step as build()), its h's
    are stacked (Unsqueeze + Concat) into the sequence layer l+1 reads. Each
    layer has its own weights (W_T_l [I or H, 4H], R_T_l [H, 4H], b_l [4H])
    and its own initial-state inputs h0_l, c0_l [B, H]. Outputs: y (the last
    layer's h for every step) and h_n_l, c_n_l per layer.

    Why layer by layer and not interleaved (layer l+1's step t reading layer
    l's h at step t directly): with I == H, lstm-opt (as of 2026-11-22) cannot
    tell an interleaved upper layer's step input from its hidden state (both
    are [B, H] values from outside the layer: "cannot tell the step input from
    the hidden state") and leaves layers 1..L-1 unfused. Here the step input
    is a Gather of a [T, B, H] sequence, which tells them apart. Weights and
    biases are N(0, scale^2)."""
    rng = np.random.default_rng(0)
    H, I, B = hidden, inp, batch
    inits = [numpy_helper.from_array(np.array([H, H, H, H], np.int64), "split"),
             numpy_helper.from_array(np.array([0], np.int64), "axis0")]
    inits += [numpy_helper.from_array(np.array(t, np.int64), f"s{t}_idx") for t in range(steps)]
    for l in range(layers):
        inits += [
            numpy_helper.from_array(
                rng.standard_normal((I if l == 0 else H, 4 * H)).astype(np.float32) * scale, f"W_T_{l}"),
            numpy_helper.from_array(rng.standard_normal((H, 4 * H)).astype(np.float32) * scale, f"R_T_{l}"),
            numpy_helper.from_array(rng.standard_normal((4 * H,)).astype(np.float32) * scale, f"b_{l}"),
        ]
    nodes, hn, cn = [], [], []
    seq = "x"
    for l in range(layers):
        h, c, outs = f"h0_{l}", f"c0_{l}", []
        for t in range(steps):
            p = f"l{l}_s{t}_"
            nodes += [
                helper.make_node("Gather", [seq, f"s{t}_idx"], [p + "xt"], name=p + "gather", axis=0),
                helper.make_node("MatMul", [p + "xt", f"W_T_{l}"], [p + "xw"], name=p + "mm_x"),
                helper.make_node("MatMul", [h, f"R_T_{l}"], [p + "hr"], name=p + "mm_h"),
                helper.make_node("Add", [p + "xw", f"b_{l}"], [p + "xwb"], name=p + "add_b"),
                helper.make_node("Add", [p + "xwb", p + "hr"], [p + "g"], name=p + "add_g"),
                helper.make_node("Split", [p + "g", "split"], [p + "i", p + "f", p + "gg", p + "o"],
                                 name=p + "split", axis=1),
                helper.make_node("Sigmoid", [p + "i"], [p + "si"], name=p + "sig_i"),
                helper.make_node("Sigmoid", [p + "f"], [p + "sf"], name=p + "sig_f"),
                helper.make_node("Tanh", [p + "gg"], [p + "tg"], name=p + "tanh_g"),
                helper.make_node("Sigmoid", [p + "o"], [p + "so"], name=p + "sig_o"),
                helper.make_node("Mul", [p + "sf", c], [p + "fc"], name=p + "mul_fc"),
                helper.make_node("Mul", [p + "si", p + "tg"], [p + "ig"], name=p + "mul_ig"),
                helper.make_node("Add", [p + "fc", p + "ig"], [p + "c"], name=p + "add_c"),
                helper.make_node("Tanh", [p + "c"], [p + "tc"], name=p + "tanh_c"),
                helper.make_node("Mul", [p + "so", p + "tc"], [p + "h"], name=p + "mul_h"),
                helper.make_node("Unsqueeze", [p + "h", "axis0"], [p + "hu"], name=p + "unsq"),
            ]
            h, c = p + "h", p + "c"
            outs.append(p + "hu")
        seq = "y" if l == layers - 1 else f"y_{l}"
        nodes.append(helper.make_node("Concat", outs, [seq], name=f"stack_{l}", axis=0))
        hn.append(h)
        cn.append(c)
    graph_ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, B, I])]
    graph_outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, B, H])]
    for l in range(layers):
        graph_ins += [helper.make_tensor_value_info(f"h0_{l}", TensorProto.FLOAT, [B, H]),
                      helper.make_tensor_value_info(f"c0_{l}", TensorProto.FLOAT, [B, H])]
        nodes.append(helper.make_node("Identity", [hn[l]], [f"h_n_{l}"], name=f"h_out_{l}"))
        nodes.append(helper.make_node("Identity", [cn[l]], [f"c_n_{l}"], name=f"c_out_{l}"))
        graph_outs += [helper.make_tensor_value_info(f"h_n_{l}", TensorProto.FLOAT, [B, H]),
                       helper.make_tensor_value_info(f"c_n_{l}", TensorProto.FLOAT, [B, H])]
    graph = helper.make_graph(nodes, "unrolled_lstm_stacked", graph_ins, graph_outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="lstm-opt bench")
    model.ir_version = 8
    return model

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--input", type=int, default=8)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--style", choices=["torch", "pergate"], default="torch")
    ap.add_argument("--layers", type=int, default=1,
                    help="stacked layers (torch style only; > 1 uses build_stacked)")
    a = ap.parse_args()
    if a.layers > 1:
        model = build_stacked(a.steps, a.hidden, a.input, a.batch, a.layers)
    else:
        make = build if a.style == "torch" else build_pergate
        model = make(a.steps, a.hidden, a.input, a.batch)
    onnx.save(model, a.out)
    print(f"{a.out}: {len(model.graph.node)} nodes, {len(model.graph.initializer)} initializers")


if __name__ == "__main__":
    main()

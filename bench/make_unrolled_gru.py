#!/usr/bin/env python3
"""Writes a synthetic unrolled GRU model the way PyTorch exports an
nn.GRUCell loop (PyTorch equations, i.e. ONNX linear_before_reset = 1):

    gi = x_t W_ih^T + b_ih          gh = h W_hh^T + b_hh      (gate order r, z, n)
    r  = sigmoid(gi_r + gh_r)       z  = sigmoid(gi_z + gh_z)
    n  = tanh(gi_n + r * gh_n)      h' = n + z * (h - n)

per step Gather(x, t), two MatMuls, two bias Adds, two Splits, the gates and
the update (18 nodes per step), with the weights shared by all steps; weights
and biases are N(0, scale^2) (0.1 unless told).

Usage: make_unrolled_gru.py OUT.onnx --steps T [--hidden H] [--input I] [--batch B]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(steps, hidden, inp, batch, opset=17, scale=0.1):
    rng = np.random.default_rng(0)
    H, I, B = hidden, inp, batch
    inits = [
        numpy_helper.from_array(rng.standard_normal((I, 3 * H)).astype(np.float32) * scale, "W_ih_T"),
        numpy_helper.from_array(rng.standard_normal((H, 3 * H)).astype(np.float32) * scale, "W_hh_T"),
        numpy_helper.from_array(rng.standard_normal((3 * H,)).astype(np.float32) * scale, "b_ih"),
        numpy_helper.from_array(rng.standard_normal((3 * H,)).astype(np.float32) * scale, "b_hh"),
        numpy_helper.from_array(np.array([H, H, H], np.int64), "split"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
    ]
    nodes, outs = [], []
    h = "h0"
    for t in range(steps):
        p = f"s{t}_"
        inits.append(numpy_helper.from_array(np.array(t, np.int64), p + "idx"))
        nodes += [
            helper.make_node("Gather", ["x", p + "idx"], [p + "xt"], name=p + "gather", axis=0),
            helper.make_node("MatMul", [p + "xt", "W_ih_T"], [p + "xw"], name=p + "mm_x"),
            helper.make_node("Add", [p + "xw", "b_ih"], [p + "gi"], name=p + "add_bi"),
            helper.make_node("MatMul", [h, "W_hh_T"], [p + "hw"], name=p + "mm_h"),
            helper.make_node("Add", [p + "hw", "b_hh"], [p + "gh"], name=p + "add_bh"),
            helper.make_node("Split", [p + "gi", "split"], [p + "gi_r", p + "gi_z", p + "gi_n"],
                             name=p + "split_i", axis=1),
            helper.make_node("Split", [p + "gh", "split"], [p + "gh_r", p + "gh_z", p + "gh_n"],
                             name=p + "split_h", axis=1),
            helper.make_node("Add", [p + "gi_r", p + "gh_r"], [p + "pr"], name=p + "add_r"),
            helper.make_node("Sigmoid", [p + "pr"], [p + "r"], name=p + "sig_r"),
            helper.make_node("Add", [p + "gi_z", p + "gh_z"], [p + "pz"], name=p + "add_z"),
            helper.make_node("Sigmoid", [p + "pz"], [p + "z"], name=p + "sig_z"),
            helper.make_node("Mul", [p + "gh_n", p + "r"], [p + "rgh"], name=p + "mul_r"),
            helper.make_node("Add", [p + "gi_n", p + "rgh"], [p + "pn"], name=p + "add_n"),
            helper.make_node("Tanh", [p + "pn"], [p + "n"], name=p + "tanh_n"),
            helper.make_node("Sub", [h, p + "n"], [p + "hmn"], name=p + "sub"),
            helper.make_node("Mul", [p + "hmn", p + "z"], [p + "zd"], name=p + "mul_z"),
            helper.make_node("Add", [p + "zd", p + "n"], [p + "h"], name=p + "add_h"),
            helper.make_node("Unsqueeze", [p + "h", "axis0"], [p + "hu"], name=p + "unsq"),
        ]
        h = p + "h"
        outs.append(p + "hu")
    nodes.append(helper.make_node("Concat", outs, ["y"], name="stack", axis=0))
    nodes.append(helper.make_node("Identity", [h], ["h_n"], name="h_out"))
    graph = helper.make_graph(
        nodes, "unrolled_gru",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, B, I]),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [B, H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, B, H]),
         helper.make_tensor_value_info("h_n", TensorProto.FLOAT, [B, H])],
        inits)
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
    a = ap.parse_args()
    model = build(a.steps, a.hidden, a.input, a.batch)
    onnx.save(model, a.out)
    print(f"{a.out}: {len(model.graph.node)} nodes, {len(model.graph.initializer)} initializers")


if __name__ == "__main__":
    main()

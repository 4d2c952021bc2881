#!/usr/bin/env python3
"""A streaming LSTM layer as a model ships it: one standard ONNX `LSTM` over
a chunk of T steps (batch 1), its initial state as inputs (h0, c0) and its
final state as outputs (hn, cn), random weights (seeded).

Usage: make_state_lstm.py --hidden H [--input I] [--steps T] OUT.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--input", type=int, default=32)
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    H, I, T = a.hidden, a.input, a.steps
    rng = np.random.default_rng(0)
    init = [nh.from_array((rng.standard_normal((1, 4 * H, I)) * 0.2).astype(np.float32), "W"),
            nh.from_array((rng.standard_normal((1, 4 * H, H)) * 0.2).astype(np.float32), "R"),
            nh.from_array((rng.standard_normal((1, 8 * H)) * 0.1).astype(np.float32), "B")]
    node = oh.make_node("LSTM", ["x", "W", "R", "B", "", "h0", "c0"], ["y", "hn", "cn"],
                        hidden_size=H)
    vi = oh.make_tensor_value_info
    graph = oh.make_graph(
        [node], "state_lstm",
        [vi("x", TP.FLOAT, [T, 1, I]), vi("h0", TP.FLOAT, [1, 1, H]), vi("c0", TP.FLOAT, [1, 1, H])],
        [vi("y", TP.FLOAT, [T, 1, 1, H]), vi("hn", TP.FLOAT, [1, 1, H]),
         vi("cn", TP.FLOAT, [1, 1, H])], init)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Cells whose gates are a HardSigmoid written out, Clip(alpha * x + beta, 0, 1)
(Keras' and TF's hard_sigmoid exported op by op): an unrolled LSTM (i, f, o
hard, g and the cell output tanh) and an unrolled GRU (r, z hard), built
here (deterministic). lstm-opt must fuse each into one layer with the
HardSigmoid activation and its alpha/beta (the ONNX LSTM/GRU it writes
carries them), and ONNX Runtime must give the original's outputs on the
fused model (|a - b| <= 1e-5 * max(|a|, 0.1)); a gate whose Clip bounds are
not 0 and 1 is not a HardSigmoid and stays unfused.

Usage: hard_sigmoid_cells.py --lstm-opt PATH --workdir DIR
Prints one line per model and 'hard_sigmoid: N passed, M failed'.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ortutil import max_rel_error, run_ort  # noqa: E402

T, B, I, H = 5, 2, 3, 4


def hard(nodes, inits, x, name, alpha, beta, lo=0.0, hi=1.0, swap=False, style="keras2"):
    """Clip(alpha * x + beta, lo, hi) as Mul, Add, Clip (operands swapped
    in the Mul and Add with `swap`). Keras 3's relu6(x + 3) / 6 instead with
    style "keras3" (Mul(Clip(x + 3, 0, 6), 1/6)), "div" (Div(Clip(x + 3, 0, 6), 6))
    or "badscale" (Mul(Clip(x + 3, 0, 6), 0.2): not a HardSigmoid, 6 * 0.2 != 1)."""
    if style != "keras2":
        scale = {"keras3": np.float32(1) / np.float32(6), "div": 6.0, "badscale": 0.2}[style]
        for k, v in ((f"{name}_3", 3.0), (f"{name}_0", 0.0), (f"{name}_6", 6.0), (f"{name}_k", scale)):
            inits.append(nh.from_array(np.array(v, np.float32), k))
        nodes.append(oh.make_node("Add", [x, f"{name}_3"], [f"{name}_s"]))
        nodes.append(oh.make_node("Clip", [f"{name}_s", f"{name}_0", f"{name}_6"], [f"{name}_r6"]))
        nodes.append(oh.make_node("Div" if style == "div" else "Mul",
                                  [f"{name}_r6", f"{name}_k"] if swap or style == "div"
                                  else [f"{name}_k", f"{name}_r6"], [name]))
        return name
    for k, v in ((f"{name}_a", alpha), (f"{name}_b", beta), (f"{name}_lo", lo), (f"{name}_hi", hi)):
        if not any(i.name == k for i in inits):
            inits.append(nh.from_array(np.array(v, np.float32), k))
    m, s = f"{name}_m", f"{name}_s"
    nodes.append(oh.make_node("Mul", [f"{name}_a", x] if swap else [x, f"{name}_a"], [m]))
    nodes.append(oh.make_node("Add", [f"{name}_b", m] if swap else [m, f"{name}_b"], [s]))
    nodes.append(oh.make_node("Clip", [s, f"{name}_lo", f"{name}_hi"], [name]))
    return name


def model(path, kind, lo=0.0, style="keras2"):
    rng = np.random.default_rng(0 if kind == "lstm" else 1)
    G = 4 if kind == "lstm" else 3
    nodes, inits = [], []
    inits += [nh.from_array((rng.standard_normal((I, G * H)) * 0.5).astype(np.float32), "W"),
              nh.from_array((rng.standard_normal((H, G * H)) * 0.5).astype(np.float32), "R"),
              nh.from_array((rng.standard_normal((G * H,)) * 0.5).astype(np.float32), "Bias"),
              nh.from_array(np.array([H] * G, np.int64), "split")]
    h, c = "h0", "c0"
    ys = []
    for t in range(T):
        inits.append(nh.from_array(np.array(t, np.int64), f"t{t}"))
        nodes.append(oh.make_node("Gather", ["X", f"t{t}"], [f"x{t}"], axis=0))
        nodes.append(oh.make_node("MatMul", [f"x{t}", "W"], [f"xw{t}"]))
        nodes.append(oh.make_node("MatMul", [h, "R"], [f"hr{t}"]))
        if kind == "lstm":
            nodes.append(oh.make_node("Add", [f"xw{t}", f"hr{t}"], [f"s{t}"]))
            nodes.append(oh.make_node("Add", [f"s{t}", "Bias"], [f"g{t}"]))
            nodes.append(oh.make_node("Split", [f"g{t}", "split"],
                                      [f"gi{t}", f"gf{t}", f"gg{t}", f"go{t}"], axis=1))
            i = hard(nodes, inits, f"gi{t}", f"i{t}", 0.2, 0.5, lo, swap=t % 2 == 1, style=style)
            f = hard(nodes, inits, f"gf{t}", f"f{t}", 0.2, 0.5, lo, style=style)
            o = hard(nodes, inits, f"go{t}", f"o{t}", 0.2, 0.5, lo, style=style)
            nodes.append(oh.make_node("Tanh", [f"gg{t}"], [f"cc{t}"]))
            nodes.append(oh.make_node("Mul", [f, c], [f"fc{t}"]))
            nodes.append(oh.make_node("Mul", [i, f"cc{t}"], [f"ic{t}"]))
            nodes.append(oh.make_node("Add", [f"fc{t}", f"ic{t}"], [f"c{t + 1}"]))
            nodes.append(oh.make_node("Tanh", [f"c{t + 1}"], [f"tc{t}"]))
            nodes.append(oh.make_node("Mul", [o, f"tc{t}"], [f"h{t + 1}"]))
            c = f"c{t + 1}"
        else:
            # PyTorch's GRU: r, z from x W + h R (+ bias), n = tanh(xn + r * hn).
            nodes.append(oh.make_node("Add", [f"xw{t}", "Bias"], [f"xb{t}"]))
            nodes.append(oh.make_node("Split", [f"xb{t}", "split"], [f"xr{t}", f"xz{t}", f"xn{t}"], axis=1))
            nodes.append(oh.make_node("Split", [f"hr{t}", "split"], [f"hr_r{t}", f"hr_z{t}", f"hr_n{t}"], axis=1))
            nodes.append(oh.make_node("Add", [f"xr{t}", f"hr_r{t}"], [f"pr{t}"]))
            nodes.append(oh.make_node("Add", [f"xz{t}", f"hr_z{t}"], [f"pz{t}"]))
            r = hard(nodes, inits, f"pr{t}", f"r{t}", 0.2, 0.5, lo, style=style)
            z = hard(nodes, inits, f"pz{t}", f"z{t}", 0.2, 0.5, lo, swap=True, style=style)
            nodes.append(oh.make_node("Mul", [r, f"hr_n{t}"], [f"rn{t}"]))
            nodes.append(oh.make_node("Add", [f"xn{t}", f"rn{t}"], [f"pn{t}"]))
            nodes.append(oh.make_node("Tanh", [f"pn{t}"], [f"n{t}"]))
            nodes.append(oh.make_node("Sub", [h, f"n{t}"], [f"d{t}"]))
            nodes.append(oh.make_node("Mul", [z, f"d{t}"], [f"zd{t}"]))
            nodes.append(oh.make_node("Add", [f"n{t}", f"zd{t}"], [f"h{t + 1}"]))
        h = f"h{t + 1}"
        inits.append(nh.from_array(np.array([0], np.int64), f"ax{t}"))
        nodes.append(oh.make_node("Unsqueeze", [h, f"ax{t}"], [f"y{t}"]))
        ys.append(f"y{t}")
    nodes.append(oh.make_node("Concat", ys, ["Y"], axis=0))
    ins = [oh.make_tensor_value_info("X", TP.FLOAT, [T, B, I]),
           oh.make_tensor_value_info("h0", TP.FLOAT, [B, H])]
    if kind == "lstm":
        ins.append(oh.make_tensor_value_info("c0", TP.FLOAT, [B, H]))
    g = oh.make_graph(nodes, kind, ins, [oh.make_tensor_value_info("Y", TP.FLOAT, [T, B, H])], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    rng = np.random.default_rng(5)
    return {i.name: rng.uniform(-1, 1, [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in ins}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    passed = failed = 0
    for name, kind, lo, style, want, want_alpha in (
            ("lstm_hard_sigmoid", "lstm", 0.0, "keras2", "LSTM", 0.2),
            ("gru_hard_sigmoid", "gru", 0.0, "keras2", "GRU", 0.2),
            ("lstm_clip_not_hard_sigmoid", "lstm", -1.0, "keras2", None, None),
            ("lstm_keras3_hard_sigmoid", "lstm", 0.0, "keras3", "LSTM", 1 / 6),
            ("gru_keras3_hard_sigmoid_div", "gru", 0.0, "div", "GRU", 1 / 6),
            ("lstm_relu6_scale_not_hard_sigmoid", "lstm", 0.0, "badscale", None, None)):
        src = os.path.join(a.workdir, name + ".onnx")
        dst = os.path.join(a.workdir, name + ".fused.onnx")
        feeds = model(src, kind, lo, style)
        p = subprocess.run([a.lstm_opt, src, "-o", dst], capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL {name}: lstm-opt: {p.stderr.strip()[-300:]}")
            failed += 1
            continue
        fused = onnx.load(dst)
        layers = [n for n in fused.graph.node if n.op_type in ("LSTM", "GRU", "RNN")]
        acts = [list(oh.get_attribute_value(x)) for n in layers for x in n.attribute
                if x.name == "activations"]
        alpha = [list(oh.get_attribute_value(x)) for n in layers for x in n.attribute
                 if x.name == "activation_alpha"]
        ref, got = run_ort(src, feeds), run_ort(dst, feeds)
        err = max_rel_error(got, ref)
        if want:
            ok = ([n.op_type for n in layers] == [want] and acts and
                  acts[0][0] == b"HardSigmoid" and abs(alpha[0][0] - want_alpha) < 1e-7 and err <= 1e-5)
            what = f"fused into {[n.op_type for n in layers]} with activations {acts}"
        else:
            ok = not layers and err == 0.0
            what = f"left unfused ({len(layers)} layers)"
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}; max rel error {err:.1e}")
        passed += ok
        failed += not ok
    print(f"hard_sigmoid: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

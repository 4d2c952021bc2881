#!/usr/bin/env python3
"""Hand-written LSTM cell variants, unrolled (built here, deterministic):
per-gate MatMuls on x and h, a bias, and
  * peepholes: P_i * c and P_f * c added to i's and f's pre-activations, P_o * c'
    to o's (ONNX LSTM's P);
  * a coupled input-forget gate: c' = (1 - i) * c + i * g (ONNX's input_forget);
  * both, and a bidirectional pair of peephole layers (forward and reverse
    over the same x);
  * and cells that no ONNX op computes: a "peephole" on the cell candidate g,
    a gate multiplied elementwise by h instead of c, a clip on the carried
    cell state and a LayerNorm of it.

lstm-opt must fuse each of the first kind into ONNX LSTMs carrying P /
input_forget, equal to the original in ONNX Runtime (|a - b| <= 1e-5 *
max(|a|, 0.1)), and leave the others unfused with a remark naming the reason
and unchanged numbers. lstm-run must run every model within 1e-4 of ONNX
Runtime.

Usage: lstm_variant_cells.py --lstm-opt PATH --lstm-run PATH --workdir DIR
Prints one line per model and 'lstm_variants: N passed, M failed'.
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
from ortutil import max_rel_error, run_lstm_run, run_ort  # noqa: E402

T, B, I, H = 5, 3, 4, 6


def chain(nodes, inits, rng, tag, xs, h, c, peephole=(), coupled=False,
          diag_on=None, post_c=None, width=I):
    """One LSTM layer over the step inputs `xs`, gate by gate. `peephole`
    lists the gates (of "ifo") with a P * c term; `diag_on` = (gate, value
    name) adds another elementwise product; `post_c` ("clip", "layernorm")
    transforms the new cell state before it is used. Returns the step
    outputs."""
    def const(name, shape, scale=0.5):
        inits.append(nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                   f"{tag}_{name}"))
        return f"{tag}_{name}"
    W = {g: const("W" + g, (width, H)) for g in "ifgo"}
    R = {g: const("R" + g, (H, H)) for g in "ifgo"}
    Bs = {g: const("B" + g, (H,)) for g in "ifgo"}
    P = {g: const("P" + g, (H,), 1.0) for g in "ifgo"}
    if not any(i.name == "one" for i in inits):
        inits.append(nh.from_array(np.array(1.0, np.float32), "one"))
    ys = []
    for t, x in enumerate(xs):
        n = f"{tag}{t}"

        def pre(g, cstate):
            nodes.append(oh.make_node("MatMul", [x, W[g]], [f"{n}xw{g}"]))
            nodes.append(oh.make_node("MatMul", [h, R[g]], [f"{n}hr{g}"]))
            nodes.append(oh.make_node("Add", [f"{n}xw{g}", f"{n}hr{g}"], [f"{n}s{g}"]))
            nodes.append(oh.make_node("Add", [f"{n}s{g}", Bs[g]], [f"{n}p{g}"]))
            out = f"{n}p{g}"
            extra = []
            if g in peephole:
                extra.append(cstate)
            if diag_on and diag_on[0] == g:
                extra.append({"c": cstate, "h": h}[diag_on[1]])
            for k, v in enumerate(extra):
                # Operands in both orders across steps.
                ops = [v, P[g]] if (t + k) % 2 else [P[g], v]
                nodes.append(oh.make_node("Mul", ops, [f"{n}pc{g}{k}"]))
                nodes.append(oh.make_node("Add", [out, f"{n}pc{g}{k}"], [f"{n}pp{g}{k}"]))
                out = f"{n}pp{g}{k}"
            return out
        nodes.append(oh.make_node("Sigmoid", [pre("i", c)], [f"{n}i"]))
        if coupled:
            nodes.append(oh.make_node("Sub", ["one", f"{n}i"], [f"{n}f"]))
        else:
            nodes.append(oh.make_node("Sigmoid", [pre("f", c)], [f"{n}f"]))
        nodes.append(oh.make_node("Tanh", [pre("g", c)], [f"{n}g"]))
        nodes.append(oh.make_node("Mul", [f"{n}f", c], [f"{n}fc"]))
        nodes.append(oh.make_node("Mul", [f"{n}i", f"{n}g"], [f"{n}ig"]))
        if post_c is None:
            nodes.append(oh.make_node("Add", [f"{n}fc", f"{n}ig"], [f"{n}c"]))
        else:
            nodes.append(oh.make_node("Add", [f"{n}fc", f"{n}ig"], [f"{n}craw"]))
            if post_c == "clip":
                if not any(i.name == "lo" for i in inits):
                    inits.append(nh.from_array(np.array(-0.5, np.float32), "lo"))
                    inits.append(nh.from_array(np.array(0.5, np.float32), "hi"))
                nodes.append(oh.make_node("Clip", [f"{n}craw", "lo", "hi"], [f"{n}c"]))
            else:
                nodes.append(oh.make_node("LayerNormalization",
                                          [f"{n}craw", const("ln_s", (H,)), const("ln_b", (H,))]
                                          if t == 0 else
                                          [f"{n}craw", f"{tag}_ln_s", f"{tag}_ln_b"],
                                          [f"{n}c"], axis=-1))
        nodes.append(oh.make_node("Sigmoid", [pre("o", f"{n}c")], [f"{n}o"]))
        nodes.append(oh.make_node("Tanh", [f"{n}c"], [f"{n}tc"]))
        nodes.append(oh.make_node("Mul", [f"{n}o", f"{n}tc"], [f"{n}h"]))
        h, c = f"{n}h", f"{n}c"
        ys.append(h)
    return ys


def gru_chain(nodes, inits, rng, tag, xs, h, width, hidden):
    """A PyTorch-style GRU layer (x of `width` features) over the steps
    `xs`: returns the step outputs."""
    def const(name, shape):
        inits.append(nh.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32),
                                   f"{tag}_{name}"))
        return f"{tag}_{name}"
    W, R = const("W", (width, 3 * hidden)), const("R", (hidden, 3 * hidden))
    Bx, Bh = const("Bx", (3 * hidden,)), const("Bh", (3 * hidden,))
    split = f"{tag}_split"
    inits.append(nh.from_array(np.array([hidden] * 3, np.int64), split))
    ys = []
    for t, x in enumerate(xs):
        n = f"{tag}{t}"
        nodes.append(oh.make_node("Gemm", [x, W, Bx], [f"{n}gx"]))
        nodes.append(oh.make_node("Gemm", [h, R, Bh], [f"{n}gh"]))
        nodes.append(oh.make_node("Split", [f"{n}gx", split], [f"{n}xr", f"{n}xz", f"{n}xn"], axis=1))
        nodes.append(oh.make_node("Split", [f"{n}gh", split], [f"{n}hr", f"{n}hz", f"{n}hn"], axis=1))
        nodes.append(oh.make_node("Add", [f"{n}xr", f"{n}hr"], [f"{n}ar"]))
        nodes.append(oh.make_node("Sigmoid", [f"{n}ar"], [f"{n}r"]))
        nodes.append(oh.make_node("Add", [f"{n}xz", f"{n}hz"], [f"{n}az"]))
        nodes.append(oh.make_node("Sigmoid", [f"{n}az"], [f"{n}z"]))
        nodes.append(oh.make_node("Mul", [f"{n}r", f"{n}hn"], [f"{n}rn"]))
        nodes.append(oh.make_node("Add", [f"{n}xn", f"{n}rn"], [f"{n}an"]))
        nodes.append(oh.make_node("Tanh", [f"{n}an"], [f"{n}n"]))
        nodes.append(oh.make_node("Sub", [h, f"{n}n"], [f"{n}d"]))
        nodes.append(oh.make_node("Mul", [f"{n}z", f"{n}d"], [f"{n}zd"]))
        nodes.append(oh.make_node("Add", [f"{n}n", f"{n}zd"], [f"{n}h"]))
        h = f"{n}h"
        ys.append(h)
    return ys


def model(path, seed, bidirectional=False, gru_below=0, **cell):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    xs = []
    for t in range(T):
        inits.append(nh.from_array(np.array(t, np.int64), f"t{t}"))
        nodes.append(oh.make_node("Gather", ["X", f"t{t}"], [f"x{t}"], axis=0))
        xs.append(f"x{t}")
    outs = []
    extra_ins = []
    if gru_below:
        # A GRU of width `gru_below` below: the LSTM reads its step outputs.
        xs = gru_chain(nodes, inits, rng, "gru", xs, "h0_gru", I, gru_below)
        extra_ins.append(oh.make_tensor_value_info("h0_gru", TP.FLOAT, [B, gru_below]))
    dirs = [("fw", xs)] + ([("bw", xs[::-1])] if bidirectional else [])
    for tag, steps in dirs:
        ys = chain(nodes, inits, rng, tag, steps, f"h0_{tag}", f"c0_{tag}",
                   width=gru_below or I, **cell)
        if tag == "bw":
            ys = ys[::-1]
        for t, y in enumerate(ys):
            if not any(i.name == "ax0" for i in inits):
                inits.append(nh.from_array(np.array([0], np.int64), "ax0"))
            nodes.append(oh.make_node("Unsqueeze", [y, "ax0"], [f"{tag}_y{t}"]))
        nodes.append(oh.make_node("Concat", [f"{tag}_y{t}" for t in range(T)],
                                  [f"Y_{tag}"], axis=0))
        outs.append(oh.make_tensor_value_info(f"Y_{tag}", TP.FLOAT, [T, B, H]))
    ins = [oh.make_tensor_value_info("X", TP.FLOAT, [T, B, I])] + extra_ins
    for tag, _ in dirs:
        ins += [oh.make_tensor_value_info(f"h0_{tag}", TP.FLOAT, [B, H]),
                oh.make_tensor_value_info(f"c0_{tag}", TP.FLOAT, [B, H])]
    g = oh.make_graph(nodes, "cell", ins, outs, inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    rng = np.random.default_rng(seed + 100)
    return {i.name: rng.uniform(-1, 1, [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in ins}


# name, model arguments, expected fused layers [(direction, has P, input_forget)]
# (None: left unfused) and, for those, a piece of the remark that says why.
CASES = [
    ("lstm_peephole", dict(peephole="ifo"), [("forward", True, 0)], None),
    ("lstm_peephole_o_only", dict(peephole="o"), [("forward", True, 0)], None),
    ("lstm_coupled", dict(coupled=True), [("forward", False, 1)], None),
    ("lstm_coupled_peephole", dict(coupled=True, peephole="io"),
     [("forward", True, 1)], None),
    ("lstm_peephole_bidirectional", dict(peephole="ifo", bidirectional=True),
     [("bidirectional", True, 0)], None),
    # A GRU of another width below an LSTM: both fuse, the LSTM reading the
    # GRU's Y.
    ("gru_below_lstm", dict(gru_below=9), [("forward", False, 0)], None),
    ("lstm_peephole_on_g", dict(diag_on=("g", "c")), None,
     "ONNX's peepholes are on i, f and o"),
    ("lstm_gate_times_h", dict(diag_on=("i", "h")), None,
     "not the cell state before the step"),
    # No cell form has these: the remark comes from the recurrence check.
    ("lstm_clipped_cell_state", dict(post_c="clip"), None,
     "a recurrence is left as it is"),
    ("lstm_layernorm_cell_state", dict(post_c="layernorm"), None,
     "a recurrence is left as it is"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    passed = failed = 0
    for seed, (name, spec, want, why) in enumerate(CASES):
        src = os.path.join(a.workdir, name + ".onnx")
        dst = os.path.join(a.workdir, name + ".fused.onnx")
        feeds = model(src, seed, **spec)
        p = subprocess.run([a.lstm_opt, src, "-o", dst], capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL {name}: lstm-opt: {p.stderr.strip()[-300:]}")
            failed += 1
            continue
        fused = onnx.load(dst)
        layers = []
        for n in fused.graph.node:
            if n.op_type != "LSTM":
                continue
            at = {x.name: oh.get_attribute_value(x) for x in n.attribute}
            layers.append((at.get("direction", b"forward").decode(),
                           len(n.input) > 7 and n.input[7] != "",
                           int(at.get("input_forget", 0))))
        ref, got = run_ort(src, feeds), run_ort(dst, feeds)
        err = max_rel_error(got, ref)
        if want:
            ok = layers == want and err <= 1e-5
            what = f"fused into {layers}"
        else:
            ok = not layers and err == 0.0 and why in p.stderr
            what = f"left unfused ({len(layers)} layers)" + (
                f", remark: {why}" if why in p.stderr else ", no remark saying why")
        # lstm-run on the original.
        run, stderr = run_lstm_run(a.lstm_run, src, feeds, os.path.join(a.workdir, name))
        if run is None:
            ok = False
            what += f"; lstm-run failed: {stderr.strip()[-200:]}"
        else:
            rerr = max_rel_error(run, ref)
            ok = ok and rerr <= 1e-4
            what += f"; lstm-run max rel error {rerr:.1e}"
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}; ONNX Runtime on the output: "
              f"max rel error {err:.1e}")
        passed += ok
        failed += not ok
    print(f"lstm_variants: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

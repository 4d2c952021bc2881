#!/usr/bin/env python3
"""A differential test of the recogniser: random unrolled LSTM and GRU cells.

Each model (seeded, deterministic) is one unrolled layer of T steps written
in a random way:
  * weights: one fused MatMul per operand with a Split in a random gate
    order, a MatMul per gate (created in a random order), or Concat([x, h])
    times one kernel;
  * gate activations: Sigmoid, HardSigmoid (random alpha, beta), or a
    HardSigmoid written out as Clip(alpha * x + beta, 0, 1) or as Keras 3's
    Clip(x + beta/alpha, 0, 1/alpha) * alpha, or one of Tanh, Relu,
    Softsign, LeakyRelu, Elu; LSTM g: Tanh,
    Relu, Softsign, LeakyRelu or Elu; h: Tanh or Softsign;
  * LSTM: peepholes on a random subset of i, f, o; a coupled forget gate
    f = 1 - i; GRU: the reset before or after the recurrent product, and the
    update written as n + z*(h - n), (1 - z)*n + z*h, (n - z*n) + z*h, the
    negated z*n + (1 - z)*h, or torch.lerp's Where of two branches;
  * the steps cut out of X by Gather, Slice + Squeeze, Split + Squeeze or
    Slice + Reshape, from a time-major or a batch-major X;
  * sometimes each step's input computed inside the loop before the cell
    reads it: a projection (MatMul + Add + Relu, or Gemm + Tanh), a scale
    and an Elu, an Unsqueeze + Reshape, or different ops at different steps;
  * sometimes something no ONNX op computes: a clip or a LayerNorm of the
    carried state, the state times a mask input, the previous output fed into
    the next step's input, an elementwise product on the cell candidate.

Every model goes through `lstm-opt` (default pipeline, ONNX target). ONNX
Runtime must give the original's outputs on lstm-opt's model (|a - b| <=
1e-5 * max(|a|, 0.1)): a wrong number is a failure, whatever was fused. A
model of two or more steps left (partly) unfused must come with a `not
fused` remark (never silent). With --lstm-run, every --run-every'th model is also compiled and
run by lstm-run (the CPU kernels), within 1e-4 of ONNX Runtime. Prints the
failures, then
'random_cells: N models, F fused (P%), W wrong, S silent, E errors, R run'.

Usage: random_cells.py --lstm-opt PATH --workdir DIR [--count N] [--seed S]
                       [--lstm-run PATH [--run-every K]]
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


class Graph:
    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.n = rng, [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value, base="c"):
        nm = self.name(base)
        self.inits.append(nh.from_array(np.asarray(value, np.float32), nm))
        return nm

    def i64(self, value, base="i"):
        nm = self.name(base)
        self.inits.append(nh.from_array(np.asarray(value, np.int64), nm))
        return nm

    def rand(self, shape, scale=0.5, base="w"):
        return self.const(self.rng.standard_normal(shape) * scale, base)

    def op(self, kind, ins, nout=1, **attrs):
        outs = [self.name(kind.lower()) for _ in range(nout)]
        self.nodes.append(oh.make_node(kind, ins, outs, **attrs))
        return outs[0] if nout == 1 else outs


def gate_act(g, pre, spec):
    kind, alpha, beta = spec
    if kind.startswith("other:"):
        return other_act(g, pre, kind[len("other:"):])
    if kind == "sigmoid":
        return g.op("Sigmoid", [pre])
    if kind == "hardsigmoid":
        return g.op("HardSigmoid", [pre], alpha=alpha, beta=beta)
    if kind == "written3":
        # Keras 3's hard_sigmoid, relu6(x + 3) / 6, generalised: Clip(x +
        # beta/alpha, 0, 1/alpha) times alpha (or divided by 1/alpha).
        a = g.op("Add", [pre, g.const(np.float32(beta) / np.float32(alpha))])
        c = g.op("Clip", [a, g.const(0.0), g.const(np.float32(1) / np.float32(alpha))])
        if g.div:
            return g.op("Div", [c, g.const(np.float32(1) / np.float32(alpha))])
        return g.op("Mul", [g.const(alpha), c])
    m = g.op("Mul", [pre, g.const(alpha)])
    a = g.op("Add", [g.const(beta), m])
    return g.op("Clip", [a, g.const(0.0), g.const(1.0)])


def other_act(g, x, kind):
    if kind == "leakyrelu":
        return g.op("LeakyRelu", [x], alpha=0.15)
    if kind == "elu":
        return g.op("Elu", [x], alpha=0.8)
    return g.op({"tanh": "Tanh", "relu": "Relu", "softsign": "Softsign"}[kind], [x])


def build(seed, path):
    rng = np.random.default_rng(seed)
    g = Graph(rng)
    kind = "lstm" if rng.random() < 0.65 else "gru"
    gates = "ifgo" if kind == "lstm" else "rzn"
    T, B, I, H = (int(rng.integers(1, 5)), int(rng.integers(1, 4)),
                  int(rng.integers(1, 6)), int(rng.integers(1, 7)))
    layout = rng.choice(["fused", "pergate", "concat"])
    order = list(rng.permutation(len(gates)))  # column block k holds gates[order[k]]
    ga = rng.choice(["sigmoid", "hardsigmoid", "written"])
    # Half the written-out HardSigmoids as Keras 3 writes them, drawn from a
    # stream of their own so that the other choices stay as they were.
    # One way per model (Mul by alpha or Div by 1/alpha), as an exporter has.
    own = np.random.default_rng(seed + 1000003)
    if ga == "written" and own.random() < 0.5:
        ga = "written3"
    g.div = own.random() < 0.5
    # Sometimes gates of another of ONNX's activations (Keras'
    # recurrent_activation="tanh", "relu", ...), from a stream of its own.
    other_gate = np.random.default_rng(seed + 7000003)
    if other_gate.random() < 0.2:
        ga = "other:" + str(other_gate.choice(["tanh", "relu", "softsign", "leakyrelu", "elu"]))
    # Each step's input computed inside the loop before the cell reads it
    # (the same ops at every step, or at "mixed" different ones).
    pre_x = str(own.choice(["none"] * 5 + ["proj", "gemm", "unary", "reshape", "mixed"]))
    # Or x_t joined with a vector every step reads (a condition), by Concat
    # (its own stream again).
    if pre_x == "none" and I >= 2 and np.random.default_rng(seed + 3000003).random() < 0.3:
        pre_x = "cond"
    gspec = (ga, float(np.round(rng.uniform(0.1, 0.4), 3)),
             float(np.round(rng.uniform(0.3, 0.7), 3)))
    act_g = rng.choice(["tanh", "tanh", "relu", "softsign", "leakyrelu", "elu"])
    act_h = rng.choice(["tanh", "tanh", "softsign"])
    peep = [x for x in "ifo" if rng.random() < 0.3] if kind == "lstm" else []
    coupled = kind == "lstm" and rng.random() < 0.2
    lbr = rng.random() < 0.5
    update = rng.choice(["interpolate", "textbook", "expanded", "negated"])
    # Or torch.lerp(n, h, z) as PyTorch exports it (a Where of two branches;
    # its own stream).
    if update == "interpolate" and np.random.default_rng(seed + 5000003).random() < 0.4:
        update = "lerp"
    bad = rng.choice(["none"] * 6 + ["clip", "layernorm", "mask", "feedback", "gpeep"])
    # How step t is cut out of X ([T, B, I], or [B, T, I] when batch-major).
    steps = rng.choice(["gather", "slice_squeeze", "split_squeeze", "slice_reshape",
                        "gather_batch_major", "slice_squeeze_batch_major"])
    if kind == "gru" and bad == "gpeep":
        bad = "none"
    desc = dict(kind=kind, T=T, B=B, I=I, H=H, layout=str(layout), gate=ga, g=str(act_g),
                h=str(act_h), peep="".join(peep), coupled=coupled, lbr=lbr,
                update=str(update), bad=str(bad), steps=str(steps), pre=pre_x)

    G = len(gates)
    Wx = rng.standard_normal((I, G * H)).astype(np.float32) * 0.6
    Rh = rng.standard_normal((H, G * H)).astype(np.float32) * 0.6
    bias = rng.standard_normal((G * H,)).astype(np.float32) * 0.3
    # Column block of gate q in the exported matrices.
    col = {gates[order[k]]: k for k in range(G)}

    def block(m, q):
        k = col[q]
        return m[..., k * H:(k + 1) * H]

    wx_n, rh_n, b_n = g.const(Wx, "W"), g.const(Rh, "R"), g.const(bias, "B")
    pg = {q: g.rand((H,), 1.0, "P") for q in "ifgo"}
    wg = {q: g.const(block(Wx, q), "Wg") for q in gates}
    rg = {q: g.const(block(Rh, q), "Rg") for q in gates}
    bg = {q: g.const(block(bias, q), "Bg") for q in gates}
    kern = g.const(np.concatenate([Wx, Rh], 0), "K")
    major = str(steps).endswith("batch_major")
    inputs = [oh.make_tensor_value_info("X", TP.FLOAT, [B, T, I] if major else [T, B, I]),
              oh.make_tensor_value_info("h0", TP.FLOAT, [B, H])]
    if kind == "lstm":
        inputs.append(oh.make_tensor_value_info("c0", TP.FLOAT, [B, H]))
    if bad == "mask":
        inputs.append(oh.make_tensor_value_info("mask", TP.FLOAT, [B, H]))
    split = g.i64([H] * G, "split")
    V = g.rand((H, I), 0.3, "V") if bad == "feedback" else None
    ln_s, ln_b = (g.rand((H,), 0.5, "ln"), g.rand((H,), 0.5, "ln")) if bad == "layernorm" else (None, None)
    if pre_x != "none":
        prng = np.random.default_rng(seed + 2000003)
        pw = g.const(prng.standard_normal((I, I)).astype(np.float32) * 0.5, "PW")
        pb = g.const(prng.standard_normal((I,)).astype(np.float32) * 0.2, "PB")
        cond = g.const(prng.standard_normal((B, 1)).astype(np.float32), "COND")
        pw2 = g.const(prng.standard_normal((I, I - 1)).astype(np.float32) * 0.5, "PW_cond")

    def step_input(x, t):
        if pre_x == "proj":
            return g.op("Relu", [g.op("Add", [g.op("MatMul", [x, pw]), pb])])
        if pre_x == "gemm":
            return g.op("Tanh", [g.op("Gemm", [x, pw, pb], transB=1)])
        if pre_x == "unary":
            return g.op("Elu", [g.op("Mul", [x, pb])], alpha=0.7)
        if pre_x == "reshape":
            return g.op("Reshape", [g.op("Unsqueeze", [x, g.i64([0])]), g.i64([B, I])])
        if pre_x == "mixed":
            return g.op("Relu" if t % 2 == 0 else "Abs", [x])
        if pre_x == "cond":
            return g.op("Concat", [g.op("MatMul", [x, pw2]), cond], axis=1)
        return x

    def gate_pre(x, h, hr_only=None):
        """Pre-activations {gate: value}; for a GRU with the reset inside
        the product, `hr_only` returns h's products apart."""
        pre, hpart = {}, {}
        if layout == "fused":
            xw = g.op("MatMul", [x, wx_n])
            hw = g.op("MatMul", [h, rh_n])
            if hr_only:
                xs = g.op("Split", [g.op("Add", [xw, b_n]), split], nout=G, axis=1)
                hs = g.op("Split", [hw, split], nout=G, axis=1)
                for k in range(G):
                    pre[gates[order[k]]] = xs[k]
                    hpart[gates[order[k]]] = hs[k]
                return pre, hpart
            s = g.op("Add", [g.op("Add", [xw, hw]), b_n])
            parts = g.op("Split", [s, split], nout=G, axis=1)
            for k in range(G):
                pre[gates[order[k]]] = parts[k]
            return pre, hpart
        if layout == "concat" and not hr_only:
            xh = g.op("Concat", [x, h], axis=1)
            s = g.op("Add", [g.op("MatMul", [xh, kern]), b_n])
            parts = g.op("Split", [s, split], nout=G, axis=1)
            for k in range(G):
                pre[gates[order[k]]] = parts[k]
            return pre, hpart
        for q in [gates[k] for k in rng.permutation(G)]:
            xw = g.op("MatMul", [x, wg[q]])
            hw = g.op("MatMul", [h, rg[q]])
            if hr_only:
                pre[q] = g.op("Add", [xw, bg[q]])
                hpart[q] = hw
            else:
                pre[q] = g.op("Add", [g.op("Add", [xw, hw]), bg[q]])
        return pre, hpart

    h, c = "h0", "c0"
    ys = []
    axis = 1 if major else 0
    if steps == "split_squeeze":
        parts = g.op("Split", ["X", g.i64([1] * T)], nout=T, axis=0) if T > 1 else ["X"]
    for t in range(T):
        if steps.startswith("gather"):
            x = g.op("Gather", ["X", g.i64(t)], axis=axis)
        elif steps.startswith("slice_squeeze"):
            s = g.op("Slice", ["X", g.i64([t]), g.i64([t + 1]), g.i64([axis])])
            x = g.op("Squeeze", [s, g.i64([axis])])
        elif steps == "split_squeeze":
            x = g.op("Squeeze", [parts[t], g.i64([0])])
        else:
            s = g.op("Slice", ["X", g.i64([t]), g.i64([t + 1]), g.i64([0])])
            x = g.op("Reshape", [s, g.i64([B, I])])
        x = step_input(x, t)
        if bad == "feedback" and t > 0:
            x = g.op("Add", [x, g.op("MatMul", [h, V])])
        if kind == "lstm":
            pre, _ = gate_pre(x, h)
            for q in peep:
                if q != "o":
                    pre[q] = g.op("Add", [pre[q], g.op("Mul", [c, pg[q]])])
            if bad == "gpeep":
                pre["g"] = g.op("Add", [pre["g"], g.op("Mul", [pg["g"], c])])
            i = gate_act(g, pre["i"], gspec)
            f = g.op("Sub", [g.const(1.0), i]) if coupled else gate_act(g, pre["f"], gspec)
            gg = other_act(g, pre["g"], act_g)
            cn = g.op("Add", [g.op("Mul", [f, c]), g.op("Mul", [i, gg])])
            if bad == "clip":
                cn = g.op("Clip", [cn, g.const(-0.7), g.const(0.7)])
            elif bad == "layernorm":
                cn = g.op("LayerNormalization", [cn, ln_s, ln_b], axis=-1)
            elif bad == "mask":
                cn = g.op("Mul", [cn, "mask"])
            po = pre["o"]
            if "o" in peep:
                po = g.op("Add", [g.op("Mul", [pg["o"], cn]), po])
            o = gate_act(g, po, gspec)
            hn = g.op("Mul", [o, other_act(g, cn, act_h)])
            c = cn
        else:
            if lbr:
                pre, hp = gate_pre(x, h, hr_only=True)
                r = gate_act(g, g.op("Add", [pre["r"], hp["r"]]), gspec)
                z = gate_act(g, g.op("Add", [pre["z"], hp["z"]]), gspec)
                n = other_act(g, g.op("Add", [pre["n"], g.op("Mul", [r, hp["n"]])]), act_g)
            else:
                # Reset before the product: r * h times the n gate's weights.
                xs = {q: g.op("Add", [g.op("MatMul", [x, wg[q]]), bg[q]]) for q in gates}
                r = gate_act(g, g.op("Add", [xs["r"], g.op("MatMul", [h, rg["r"]])]), gspec)
                z = gate_act(g, g.op("Add", [xs["z"], g.op("MatMul", [h, rg["z"]])]), gspec)
                rh = g.op("Mul", [r, h])
                n = other_act(g, g.op("Add", [xs["n"], g.op("MatMul", [rh, rg["n"]])]), act_g)
            one = g.const(1.0)
            if update == "interpolate":
                hn = g.op("Add", [n, g.op("Mul", [z, g.op("Sub", [h, n])])])
            elif update == "lerp":
                d = g.op("Sub", [h, n])
                lo = g.op("Add", [n, g.op("Mul", [z, d])])
                hi = g.op("Sub", [h, g.op("Mul", [d, g.op("Sub", [one, z])])])
                hn = g.op("Where", [g.op("Less", [z, g.const(0.5)]), lo, hi])
            elif update == "textbook":
                hn = g.op("Add", [g.op("Mul", [g.op("Sub", [one, z]), n]), g.op("Mul", [z, h])])
            elif update == "expanded":
                hn = g.op("Add", [g.op("Sub", [n, g.op("Mul", [z, n])]), g.op("Mul", [z, h])])
            else:
                hn = g.op("Add", [g.op("Mul", [z, n]), g.op("Mul", [g.op("Sub", [one, z]), h])])
            if bad == "clip":
                hn = g.op("Clip", [hn, g.const(-0.7), g.const(0.7)])
            elif bad == "layernorm":
                hn = g.op("LayerNormalization", [hn, ln_s, ln_b], axis=-1)
            elif bad == "mask":
                hn = g.op("Mul", [hn, "mask"])
        h = hn
        ys.append(g.op("Unsqueeze", [h, "ax0"]))
    g.inits.append(nh.from_array(np.array([0], np.int64), "ax0"))
    g.nodes.append(oh.make_node("Concat", ys, ["Y"], axis=0))
    outs = [oh.make_tensor_value_info("Y", TP.FLOAT, [T, B, H])]
    graph = oh.make_graph(g.nodes, "cell", inputs, outs, g.inits)
    m = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    frng = np.random.default_rng(seed + 1)
    feeds = {vi.name: frng.uniform(-1, 1, [d.dim_value for d in vi.type.tensor_type.shape.dim])
             .astype(np.float32) for vi in inputs}
    return feeds, desc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", action="store_true", help="keep every model")
    ap.add_argument("--lstm-run")
    ap.add_argument("--run-every", type=int, default=10)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    fused = wrong = silent = errors = ran = 0
    by_kind = {}
    for k in range(a.count):
        seed = a.seed + k
        src = os.path.join(a.workdir, f"cell{seed}.onnx")
        dst = os.path.join(a.workdir, f"cell{seed}.out.onnx")
        feeds, desc = build(seed, src)
        p = subprocess.run([a.lstm_opt, src, "-o", dst], capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL seed {seed} {desc}: lstm-opt exit {p.returncode}: {p.stderr.strip()[-300:]}")
            errors += 1
            continue
        out = onnx.load(dst)
        layers = [n.op_type for n in out.graph.node if n.op_type in ("LSTM", "GRU", "RNN")]
        # The step inputs' own projection (by PW, or by its transpose, which
        # lstm-opt names batched_gemm_B) is the model's, not a cell's.
        leftover = [n.op_type for n in out.graph.node if n.op_type in ("MatMul", "Gemm")
                    and not (n.input[1].startswith("PW_") or n.input[1].startswith("batched_gemm_B"))]
        ref, got = run_ort(src, feeds), run_ort(dst, feeds)
        err = max_rel_error(got, ref)
        key = desc["kind"] + ("" if desc["bad"] == "none" else "+" + desc["bad"])
        tot, fu, one = by_kind.get(key, (0, 0, 0))
        whole = bool(layers) and not leftover
        by_kind[key] = (tot + 1, fu + whole, one + (whole and len(layers) == 1))
        fused += whole
        before = wrong + silent + errors
        if err > 1e-5:
            wrong += 1
            print(f"FAIL seed {seed} {desc}: ONNX Runtime on lstm-opt's output differs "
                  f"(max rel {err:.2e}; layers {layers})")
        elif (leftover and desc["T"] > 1 and "not fused" not in p.stderr
              and "not rolled" not in p.stderr):
            silent += 1
            print(f"FAIL seed {seed} {desc}: left {len(leftover)} GEMMs unfused with no remark")
        elif a.lstm_run and k % a.run_every == 0:
            run, stderr = run_lstm_run(a.lstm_run, src, feeds, src)
            if run is None:
                errors += 1
                print(f"FAIL seed {seed} {desc}: lstm-run: {stderr.strip()[-300:]}")
            else:
                rerr = max_rel_error(run, ref)
                ran += 1
                if rerr > 1e-4:
                    wrong += 1
                    print(f"FAIL seed {seed} {desc}: lstm-run differs from ONNX Runtime "
                          f"(max rel {rerr:.2e})")
        if not a.keep and wrong + silent + errors == before:
            for f in (src, dst, src + ".in.npz", src + ".out.npz"):  # run_lstm_run's
                if os.path.exists(f):
                    os.remove(f)
    n = a.count
    for key in sorted(by_kind):
        tot, fu, one = by_kind[key]
        print(f"  {key}: {fu}/{tot} fused, {one} into one layer")
    print(f"random_cells: {n} models, {fused} fused ({100.0 * fused / max(n, 1):.0f}%), "
          f"{wrong} wrong, {silent} silent, {errors} errors, {ran} run")
    return 1 if wrong or silent or errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The CPU backend on layer variants the exported corpus does not cover.

Usage: cpu_variants.py --lstm-run PATH [--workdir DIR] [--only SUBSTRING]

Builds small models in the workdir (deterministic), runs each with
`lstm-run --threads 1` and `--threads 2`, and compares every output with ONNX
Runtime on the same model: |a - b| <= 1e-4 * max(|b|, 1e-1) elementwise.
  * standard ONNX LSTM / GRU / RNN nodes (imported into rnn.sequence):
    directions, GRU linear_before_reset 0/1, sequence_lens, clip, non-default
    activations (with alpha/beta), LSTM peepholes (P) and coupled input and
    forget gates (input_forget), odd sizes H = 1, 7, 33; B = 1, 5; T = 1;
  * unrolled LSTMs from bench/make_unrolled_lstm.py (recognised first) at
    odd sizes, in both the PyTorch and the per-gate style.
Prints one line per model and 'variants: N passed, M failed'. With
--write-only it writes the models and stops.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(__file__))
from ortutil import run_ort  # noqa: E402

SRC = os.path.join(os.path.dirname(__file__), "..", "..")
RTOL = 1e-4


def layer_model(path, kind="LSTM", T=5, B=3, I=4, H=7, direction="forward",
                lbr=0, lens=False, acts=None, alpha=None, beta=None, clip=None,
                seed=0, wscale=0.5, input_forget=0, peephole=False):
    """One standard ONNX recurrent node with X, h0 (c0, lens) as inputs; an
    LSTM optionally with peephole weights P and input_forget."""
    rng = np.random.default_rng(seed)
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    D = 2 if direction == "bidirectional" else 1
    inits = [nh.from_array((rng.standard_normal((D, G * H, I)) * 0.5).astype(np.float32), "W"),
             nh.from_array((rng.standard_normal((D, G * H, H)) * wscale).astype(np.float32), "R"),
             nh.from_array((rng.standard_normal((D, 2 * G * H)) * 0.5).astype(np.float32), "B")]
    ins = ["X", "W", "R", "B", "lens" if lens else "", "h0"]
    vi = [oh.make_tensor_value_info("X", TP.FLOAT, [T, B, I]),
          oh.make_tensor_value_info("h0", TP.FLOAT, [D, B, H])]
    if lens:
        vi.append(oh.make_tensor_value_info("lens", TP.INT32, [B]))
    outs = ["Y", "Y_h"]
    if kind == "LSTM":
        ins.append("c0")
        vi.append(oh.make_tensor_value_info("c0", TP.FLOAT, [D, B, H]))
        outs.append("Y_c")
        if peephole:
            ins.append("P")
            inits.append(nh.from_array(
                rng.standard_normal((D, 3 * H)).astype(np.float32), "P"))
    attrs = dict(hidden_size=H, direction=direction)
    if input_forget:
        attrs["input_forget"] = input_forget
    if kind == "GRU":
        attrs["linear_before_reset"] = lbr
    for k, v in (("activations", acts), ("activation_alpha", alpha),
                 ("activation_beta", beta), ("clip", clip)):
        if v is not None:
            attrs[k] = v
    node = oh.make_node(kind, ins, outs, name="layer", **attrs)
    gout = [oh.make_tensor_value_info("Y", TP.FLOAT, [T, D, B, H]),
            oh.make_tensor_value_info("Y_h", TP.FLOAT, [D, B, H])]
    if kind == "LSTM":
        gout.append(oh.make_tensor_value_info("Y_c", TP.FLOAT, [D, B, H]))
    m = oh.make_model(oh.make_graph([node], "g", vi, gout, inits),
                      opset_imports=[oh.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    feeds = {"X": rng.standard_normal((T, B, I)).astype(np.float32),
             "h0": rng.standard_normal((D, B, H)).astype(np.float32)}
    if kind == "LSTM":
        feeds["c0"] = rng.standard_normal((D, B, H)).astype(np.float32)
    if lens:
        # Lengths from 1 to T. (Length 0 is left out: ONNX Runtime ends such a
        # row in zeros for LSTM/GRU and forward RNN but in h0 for reverse RNN;
        # lstm-opt ends it in zeros.)
        feeds["lens"] = rng.integers(1, T + 1, (B,)).astype(np.int32)
    return feeds


LAYERS = {
    "lstm": dict(kind="LSTM"),
    "lstm_bidir": dict(kind="LSTM", direction="bidirectional"),
    "lstm_reverse_lens": dict(kind="LSTM", direction="reverse", lens=True),
    "lstm_clip": dict(kind="LSTM", clip=0.7),
    "lstm_acts": dict(kind="LSTM", acts=["HardSigmoid", "LeakyRelu", "ScaledTanh"],
                      alpha=[0.3, 0.05, 1.5], beta=[0.4, 0.8]),
    "lstm_h33_b5_t3": dict(kind="LSTM", H=33, B=5, T=3),
    "lstm_input_forget": dict(kind="LSTM", input_forget=1),
    "lstm_peephole": dict(kind="LSTM", peephole=True, H=33, B=5),
    "lstm_peephole_bidir_lens_clip": dict(kind="LSTM", peephole=True, lens=True,
                                          direction="bidirectional", clip=0.6),
    "lstm_peephole_input_forget_reverse_acts": dict(
        kind="LSTM", peephole=True, input_forget=1, direction="reverse",
        acts=["HardSigmoid", "Tanh", "Softsign"], alpha=[0.3], beta=[0.4]),
    "lstm_h1_b1_t1": dict(kind="LSTM", H=1, B=1, T=1, I=1),
    "lstm_h16_b9_i17": dict(kind="LSTM", H=16, B=9, T=4, I=17),
    "gru_lbr": dict(kind="GRU", lbr=1),
    "gru_reset_before": dict(kind="GRU", lbr=0),
    "gru_reverse": dict(kind="GRU", direction="reverse", lbr=0, H=33, B=5),
    "gru_bidir_lens": dict(kind="GRU", direction="bidirectional", lens=True, lbr=1),
    "gru_h1_t1": dict(kind="GRU", H=1, B=1, T=1, I=1),
    "rnn_tanh": dict(kind="RNN"),
    "rnn_relu": dict(kind="RNN", acts=["Relu"]),
    "rnn_bidir_lens": dict(kind="RNN", direction="bidirectional", B=5, lens=True),
    "rnn_softsign_h33": dict(kind="RNN", acts=["Softsign"], H=33),
    # Small batch, recurrent weights within 32 KiB: a step's GEMM tiles
    # several hidden blocks (convert-rnn-to-cpu, block-tile).
    "lstm_h32_b1_peephole_clip": dict(kind="LSTM", H=32, B=1, T=6, peephole=True, clip=0.8),
    "lstm_h32_b2_bidir_lens": dict(kind="LSTM", H=32, B=2, T=5, direction="bidirectional",
                                   lens=True),
    "gru_lbr_h48_b1_reverse": dict(kind="GRU", lbr=1, H=48, B=1, T=5, direction="reverse"),
    "rnn_h64_b1": dict(kind="RNN", H=64, B=1, T=6),
    # Recurrent weights (12-16 MiB) larger than any core's L2: odd steps
    # read them backwards (convert-rnn-to-cpu, cache-bytes).
    "lstm_h1024_big": dict(kind="LSTM", H=1024, B=3, T=4, I=8, wscale=0.5 / 32),
    "gru_reset_before_h1024_reverse_lens_big": dict(
        kind="GRU", lbr=0, direction="reverse", lens=True, H=1024, B=3, T=4,
        I=8, wscale=0.5 / 32),
}

# (style, steps, hidden, input, batch): unrolled graphs recognised first.
UNROLLED = [("torch", 1, 33, 7, 5), ("torch", 3, 7, 5, 1), ("pergate", 4, 1, 3, 5),
            ("pergate", 2, 33, 16, 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--lstm-opt", help="unused")
    ap.add_argument("--workdir")
    ap.add_argument("--only", default="")
    ap.add_argument("--skip", action="append", default=[],
                    help="leave out the cases whose name contains this")
    ap.add_argument("--extra", action="append", default=[],
                    help="an extra lstm-run flag (repeatable), e.g. "
                         "--extra=--gpu-kernels-on-cpu")
    ap.add_argument("--write-only", action="store_true",
                    help="write the models into --workdir and stop (for other "
                         "runners, e.g. test/Utils/cross_run.py)")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="cpu-variants-")
    os.makedirs(work, exist_ok=True)

    cases = []
    for i, (name, spec) in enumerate(LAYERS.items()):
        path = os.path.join(work, name + ".onnx")
        cases.append((name, path, layer_model(path, seed=i, **spec)))
    rng = np.random.default_rng(7)
    for style, t, h, inp, b in UNROLLED:
        name = f"unrolled_{style}_t{t}_h{h}_i{inp}_b{b}"
        path = os.path.join(work, name + ".onnx")
        subprocess.run([sys.executable, os.path.join(SRC, "bench", "make_unrolled_lstm.py"),
                        path, "--steps", str(t), "--hidden", str(h), "--input", str(inp),
                        "--batch", str(b), "--style", style], check=True,
                       capture_output=True)
        m = onnx.load(path)
        inits = {x.name for x in m.graph.initializer}
        feeds = {}
        for vi in m.graph.input:
            if vi.name in inits:
                continue
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
        cases.append((name, path, feeds))

    if a.write_only:
        print(f"variants: {len(cases)} models written")
        return 0
    passed = failed = 0
    for name, path, feeds in cases:
        if a.only not in name or any(s in name for s in a.skip):
            continue
        ref = run_ort(path, feeds)
        inp = os.path.join(work, name + ".in.npz")
        np.savez(inp, **feeds)
        for k in (1, 2):
            out = os.path.join(work, f"{name}.t{k}.npz")
            proc = subprocess.run([a.lstm_run, path, "--inputs", inp, "--outputs", out,
                                   "--threads", str(k), "-q"] + a.extra,
                                  capture_output=True, text=True)
            if proc.returncode:
                print(f"FAIL {name} threads={k}: exit {proc.returncode}\n{proc.stderr}")
                failed += 1
                continue
            got = dict(np.load(out))
            worst = 0.0
            for o, want in ref.items():
                g = got[o]
                worst = max(worst, float(np.max(np.abs(g - want) /
                                                np.maximum(np.abs(want), 1e-1))))
            ok = worst <= RTOL
            print(f"{'ok  ' if ok else 'FAIL'} {name} threads={k}: max rel err {worst:.2e}")
            passed += ok
            failed += not ok
    print(f"variants: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The CPU backend's bf16 precision against an exact reference.

Usage: cpu_bf16.py --lstm-run PATH [--workdir DIR]

`lstm-run --precision=bf16` stores the weights as bf16 and rounds x and h
(and, for a GRU with the reset before its matmul, r * h) to bf16 for the
products; accumulation, gates and states stay f32. The reference here is a
numpy implementation of the ONNX LSTM / GRU / RNN equations that does the
same roundings (round to nearest, ties to even) and accumulates in float64:
every output must agree within |a - b| <= 1e-4 * max(|b|, 0.1), so a
rounding done differently (or not at all) fails, where a comparison with f32
(also printed, as the precision's own error) could not tell.
Covers directions, GRU linear_before_reset 0/1, sequence_lens, clip, odd
sizes (I, H not multiples of the vector width, odd I), B = 1/5, T = 1, and
1 and 2 threads. Prints 'bf16: N passed, M failed'.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from cpu_variants import layer_model  # noqa: E402
from ortutil import run_ort  # noqa: E402

RTOL = 1e-4


def bf16(a):
    """float32 array rounded to the nearest bf16 (ties to even), as float32."""
    a = np.asarray(a, np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, r)


def sig(x):
    return 1 / (1 + np.exp(-x))


def reference(kind, X, W, R, B, h0, c0, lens, direction, lbr, clip):
    """ONNX layer equations with bf16 operands; returns Y, Y_h (, Y_c)."""
    T, Bn, _ = X.shape
    D = W.shape[0]
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    H = W.shape[1] // G
    Y = np.zeros((T, D, Bn, H))
    Yh = np.zeros((D, Bn, H))
    Yc = np.zeros((D, Bn, H))
    lens = lens if lens is not None else np.full(Bn, T)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    Xr = bf16(X).astype(np.float64)
    for d in range(D):
        Wr = bf16(W[d]).astype(np.float64)
        Rr = bf16(R[d]).astype(np.float64)
        bw, br = B[d, :G * H].astype(np.float64), B[d, G * H:].astype(np.float64)
        for b in range(Bn):
            h = h0[d, b].astype(np.float32)
            c = c0[d, b].astype(np.float32) if c0 is not None else np.zeros(H, np.float32)
            steps = range(lens[b]) if d == 0 and direction != "reverse" else \
                reversed(range(lens[b]))
            for t in steps:
                xw = Wr @ Xr[t, b] + bw
                hr = bf16(h).astype(np.float64)
                if kind == "LSTM":
                    g = (xw + Rr @ hr + br).astype(np.float32)
                    i, o, f, cc = (g[k * H:(k + 1) * H] for k in range(4))
                    i, o, f = sig(cl(i)), sig(cl(o)), sig(cl(f))
                    c = (f * c + i * np.tanh(cl(cc))).astype(np.float32)
                    h = (o * np.tanh(c)).astype(np.float32)
                elif kind == "GRU":
                    gz = cl((xw[:H] + Rr[:H] @ hr + br[:H]).astype(np.float32))
                    gr = cl((xw[H:2 * H] + Rr[H:2 * H] @ hr + br[H:2 * H]).astype(np.float32))
                    z, r = sig(gz), sig(gr)
                    if lbr:
                        n = xw[2 * H:] + r * (Rr[2 * H:] @ hr + br[2 * H:])
                    else:
                        rh = bf16((r * h).astype(np.float32)).astype(np.float64)
                        n = xw[2 * H:] + Rr[2 * H:] @ rh + br[2 * H:]
                    n = np.tanh(cl(n.astype(np.float32)))
                    h = ((1 - z) * n + z * h).astype(np.float32)
                else:
                    h = np.tanh(cl((xw + Rr @ hr + br).astype(np.float32)))
                Y[t, d, b] = h
            Yh[d, b] = h if lens[b] else 0
            Yc[d, b] = c if lens[b] else 0
    return [Y, Yh] + ([Yc] if kind == "LSTM" else [])


CASES = {
    "lstm_fwd_h33_i5_b5": dict(kind="LSTM", T=6, B=5, I=5, H=33),
    "lstm_bidir_lens_clip": dict(kind="LSTM", T=7, B=3, I=9, H=16,
                                 direction="bidirectional", lens=True, clip=2.0),
    "lstm_rev_t1_b1_h7": dict(kind="LSTM", T=1, B=1, I=4, H=7, direction="reverse"),
    "gru_lbr1_h17": dict(kind="GRU", T=5, B=2, I=6, H=17, lbr=1),
    "gru_lbr0_bidir_lens": dict(kind="GRU", T=6, B=4, I=3, H=24,
                                direction="bidirectional", lbr=0, lens=True),
    "rnn_fwd_h40": dict(kind="RNN", T=8, B=2, I=11, H=40),
    # Large enough for an OpenMP team with 2 threads, and for odd steps to
    # read the weights backwards where a thread's share (1 MiB) passes a
    # 512 KiB..1 MiB L2; odd I.
    "lstm_team_h512_i33": dict(kind="LSTM", T=3, B=1, I=33, H=512, wscale=0.05),
    "gru_lbr0_team_h384": dict(kind="GRU", T=3, B=2, I=16, H=384, lbr=0, wscale=0.05),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--workdir")
    ap.add_argument("--lstm-opt", help="also check lstm-opt's remark: its simulated bf16 "
                    "error against f32 within a factor of 20 of the measured one")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="cpu-bf16-")
    os.makedirs(work, exist_ok=True)
    import onnx
    from onnx import numpy_helper as nh
    passed = failed = 0
    for i, (name, spec) in enumerate(CASES.items()):
        path = os.path.join(work, name + ".onnx")
        feeds = layer_model(path, seed=i, **spec)
        spec = {k: v for k, v in spec.items() if k != "wscale"}
        m = onnx.load(path)
        init = {t.name: nh.to_array(t) for t in m.graph.initializer}
        ref = reference(spec["kind"], feeds["X"], init["W"], init["R"], init["B"],
                        feeds["h0"], feeds.get("c0"), feeds.get("lens"), spec.get("direction", "forward"),
                        spec.get("lbr", 0), spec.get("clip"))
        f32 = run_ort(path, feeds)
        inp = os.path.join(work, name + ".in.npz")
        np.savez(inp, **feeds)
        names = [o.name for o in m.graph.output]
        for k in (1, 2):
            out = os.path.join(work, f"{name}.t{k}.npz")
            proc = subprocess.run([a.lstm_run, path, "--inputs", inp, "--outputs", out,
                                   "--threads", str(k), "--precision=bf16", "-q"],
                                  capture_output=True, text=True)
            if proc.returncode:
                print(f"FAIL {name} threads={k}: exit {proc.returncode}\n{proc.stderr}")
                failed += 1
                continue
            got = np.load(out)
            worst = err32 = 0.0
            for n, want in zip(names, ref):
                g = got[n]
                worst = max(worst, float(np.max(np.abs(g - want) /
                                                np.maximum(np.abs(want), 1e-1))))
                err32 = max(err32, float(np.max(np.abs(g - f32[n])) /
                                         max(float(np.max(np.abs(f32[n]))), 1e-30)))
            ok = worst <= RTOL
            sim = ""
            if a.lstm_opt and k == 1:
                # The remark's estimate (other random inputs, up to 8 steps, one
                # batch row) is of the same order as what the kernels do.
                p = subprocess.run([a.lstm_opt, path, "--target=cpu", "--precision=bf16",
                                    "-o", os.path.join(work, name + ".mlir")],
                                   capture_output=True, text=True)
                found = re.search(r"simulated on the host\): max rel error ([0-9.e+-]+)", p.stderr)
                est = float(found.group(1)) if found else None
                close = est is not None and (err32 < 1e-6 or err32 / 20 <= est <= err32 * 20)
                ok = ok and close
                sim = f"; remark's simulated {est if est is None else f'{est:.1e}'}" + \
                    ("" if close else " (not within 20x of the measured)")
            print(f"{'ok  ' if ok else 'FAIL'} {name} threads={k}: vs bf16 reference "
                  f"{worst:.2e}; vs f32 (ONNX Runtime) max rel {err32:.2e}{sim}")
            passed += ok
            failed += not ok
    print(f"bf16: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

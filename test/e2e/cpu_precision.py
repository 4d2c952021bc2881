#!/usr/bin/env python3
"""The CPU backend's bf16 and int8 precisions against exact references.

Usage: cpu_precision.py --lstm-run PATH [--precision bf16|int8] [--workdir DIR]

`lstm-run --precision=bf16` stores the weights as bf16 and rounds x and h
(and, for a GRU with the reset before its matmul, r * h) to bf16 for the
products; accumulation, gates and states stay f32. The reference here is a
numpy implementation of the ONNX LSTM / GRU / RNN equations that does the
same roundings (round to nearest, ties to even) and accumulates in float64:
every output must agree within |a - b| <= 1e-4 * max(|b|, 0.1), so a
rounding done differently (or not at all) fails, where a comparison with f32
(also printed, as the precision's own error) could not tell.

`--precision=int8` quantizes the weights per gate row and x, h (and r * h)
per row and step, symmetrically to their range (q = round(v * 127 / max|v|),
ties to even, in float32 as the kernels do), and sums the integer products
exactly. The reference does the same. A value the kernels' activations put
within ~1e-5 of a rounding boundary may round the other way than numpy's
(their polynomials differ from numpy's in the last bits), so int8 checks
the median error against the reference (<= 1e-5) and its maximum against a
third of the int8 error itself (the error against f32): a wrong scale,
offset or layout moves every output by about the latter. The kernels of a
CPU with VNNI (vpdpbusd) are also compared with the same model compiled for
x86-64-v3 (AVX2 vpmaddwd on pairs of k, the int8 weights sign-extended in
registers, exact 32-bit sums): the same integers, so the two must give the
same bits.
Covers directions, GRU linear_before_reset 0/1, sequence_lens, clip, odd
sizes (I, H not multiples of the vector width, odd I), B = 1/5, T = 1, and
1 and 2 threads. Prints '<precision>: N passed, M failed'.
"""
import argparse
import os
import platform
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


def int8_rows(a):
    """Each row (last axis) quantized to int8 for its range and dequantized,
    in float32 as the kernels and lstm-opt's packing do."""
    a = np.asarray(a, np.float32)
    m = np.max(np.abs(a), axis=-1, keepdims=True).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(m > 0, np.float32(127) / m, np.float32(0)).astype(np.float32)
    q = np.clip(np.rint((a * inv).astype(np.float32)), -127, 127)
    return (q.astype(np.float64) * (m / np.float32(127)).astype(np.float64))


def sig(x):
    return 1 / (1 + np.exp(-x))


def reference(kind, X, W, R, B, h0, c0, lens, direction, lbr, clip, low=bf16,
              round_x=True):
    """ONNX layer equations with the products' operands rounded by `low`
    (bf16, or int8_rows); returns Y, Y_h (, Y_c). round_x=False leaves the
    input projection's x and W alone (the GPU kernels' bf16)."""
    T, Bn, _ = X.shape
    D = W.shape[0]
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    H = W.shape[1] // G
    Y = np.zeros((T, D, Bn, H))
    Yh = np.zeros((D, Bn, H))
    Yc = np.zeros((D, Bn, H))
    lens = lens if lens is not None else np.full(Bn, T)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    lowx = low if round_x else (lambda v: v)
    Xr = lowx(X).astype(np.float64)
    for d in range(D):
        Wr = lowx(W[d]).astype(np.float64)
        Rr = np.concatenate([low(R[d, g * H:(g + 1) * H]) for g in range(G)]).astype(np.float64)
        bw, br = B[d, :G * H].astype(np.float64), B[d, G * H:].astype(np.float64)
        for b in range(Bn):
            h = h0[d, b].astype(np.float32)
            c = c0[d, b].astype(np.float32) if c0 is not None else np.zeros(H, np.float32)
            steps = range(lens[b]) if d == 0 and direction != "reverse" else \
                reversed(range(lens[b]))
            for t in steps:
                xw = Wr @ Xr[t, b] + bw
                hr = low(h).astype(np.float64)
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
                        rh = low((r * h).astype(np.float32)).astype(np.float64)
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
    "lstm_bidir_clip_h20": dict(kind="LSTM", T=5, B=2, I=6, H=20,
                                direction="bidirectional", clip=1.5),
    # Batch 1, 18 KiB of bf16 (9 KiB of int8) recurrent weights: a step's
    # GEMM is one register tile over the three hidden blocks.
    "lstm_b1_h48_block_tile": dict(kind="LSTM", T=5, B=1, I=8, H=48),
    # Large enough for an OpenMP team with 2 threads, and for odd steps to
    # read the weights backwards where a thread's share (1 MiB) passes a
    # 512 KiB..1 MiB L2; odd I.
    "lstm_team_h512_i33": dict(kind="LSTM", T=3, B=1, I=33, H=512, wscale=0.05),
    "gru_lbr0_team_h384": dict(kind="GRU", T=3, B=2, I=16, H=384, lbr=0, wscale=0.05),
    # int8 on a team: the small ones above keep each thread's own quantized
    # h; a batch whose quantized h passes 32 KiB shares one copy, each
    # thread quantizing its blocks, behind a second barrier. (int8 only: at
    # this many outputs, bf16's maximum against its numpy twin meets values
    # that the two round to neighbouring bf16s.)
    "lstm_team_shared_q_b48": dict(kind="LSTM", T=3, B=48, I=16, H=384, wscale=0.05,
                                   only="int8"),
    "gru_lbr0_team_shared_q_b32": dict(kind="GRU", T=3, B=32, I=16, H=384, lbr=0,
                                       wscale=0.05, only="int8"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--workdir")
    ap.add_argument("--precision", choices=["bf16", "int8"], default="bf16")
    ap.add_argument("--extra", action="append", default=[],
                    help="an extra lstm-run flag (repeatable), e.g. "
                         "--extra=--gemm-chunk-steps=2")
    ap.add_argument("--lstm-opt", help="also check lstm-opt's remark: its simulated "
                    "error against f32 within a factor of 20 of the measured one")
    ap.add_argument("--gpu-twin", action="store_true",
                    help="bf16 of the generated GPU kernels, through their CPU-mapped "
                    "twin (lstm-run --gpu-kernels-on-cpu=persistent): h and R rounded, "
                    "x and W not; a GRU with the reset before its matmul stays f32; "
                    "no sequence_lens")
    a = ap.parse_args()
    int8 = a.precision == "int8"
    work = a.workdir or tempfile.mkdtemp(prefix="cpu-" + a.precision + "-")
    os.makedirs(work, exist_ok=True)
    import onnx
    from onnx import numpy_helper as nh
    passed = failed = 0
    for i, (name, spec) in enumerate(CASES.items()):
        if a.gpu_twin and spec.get("lens"):
            continue
        if spec.get("only", a.precision) != a.precision:
            continue
        path = os.path.join(work, name + ".onnx")
        spec = {k: v for k, v in spec.items() if k != "only"}
        feeds = layer_model(path, seed=i, **spec)
        spec = {k: v for k, v in spec.items() if k != "wscale"}
        m = onnx.load(path)
        init = {t.name: nh.to_array(t) for t in m.graph.initializer}
        low = int8_rows if int8 else bf16
        if a.gpu_twin and spec["kind"] == "GRU" and not spec.get("lbr", 0):
            low = lambda v: v  # noqa: E731  (the two-phase GRU stays f32)
        ref = reference(spec["kind"], feeds["X"], init["W"], init["R"], init["B"],
                        feeds["h0"], feeds.get("c0"), feeds.get("lens"), spec.get("direction", "forward"),
                        spec.get("lbr", 0), spec.get("clip"), low, round_x=not a.gpu_twin)
        f32 = run_ort(path, feeds)
        inp = os.path.join(work, name + ".in.npz")
        np.savez(inp, **feeds)
        names = [o.name for o in m.graph.output]
        for k in ((1,) if a.gpu_twin else (1, 2)):
            out = os.path.join(work, f"{name}.t{k}.npz")
            twin = ["--gpu-kernels-on-cpu=persistent"] if a.gpu_twin else []
            proc = subprocess.run([a.lstm_run, path, "--inputs", inp, "--outputs", out,
                                   "--threads", str(k), "--precision=" + a.precision, "-q"]
                                  + twin + a.extra, capture_output=True, text=True)
            if proc.returncode:
                print(f"FAIL {name} threads={k}: exit {proc.returncode}\n{proc.stderr}")
                failed += 1
                continue
            got = np.load(out)
            worst = err32 = 0.0
            rel = []
            for n, want in zip(names, ref):
                g = got[n]
                e = np.abs(g - want) / np.maximum(np.abs(want), 1e-1)
                rel.append(e.ravel())
                worst = max(worst, float(np.max(e)))
                err32 = max(err32, float(np.max(np.abs(g - f32[n])) /
                                         max(float(np.max(np.abs(f32[n]))), 1e-30)))
            median = float(np.median(np.concatenate(rel)))
            if int8:
                ok = median <= 1e-5 and (worst <= RTOL or worst <= err32 / 3)
            else:
                ok = worst <= RTOL
            widen = ""
            if k == 1 and not a.gpu_twin and platform.machine() in ("x86_64", "AMD64"):
                # The same model for a CPU without VNNI and AVX512_BF16: int8
                # runs vpmaddwd on the same integers, so the same bits; bf16
                # widens its weights in registers: the same roundings, the
                # products summed in another order.
                out3 = os.path.join(work, f"{name}.v3.npz")
                p3 = subprocess.run([a.lstm_run, path, "--inputs", inp, "--outputs", out3,
                                     "--precision=" + a.precision, "--target-cpu=x86-64-v3",
                                     "-q"], capture_output=True, text=True)
                if p3.returncode:
                    print(f"FAIL {name} x86-64-v3: exit {p3.returncode}\n{p3.stderr}")
                    ok = False
                else:
                    g3 = np.load(out3)
                    if int8:
                        d3 = max(float(np.max(np.abs(g3[n] - got[n]))) for n in names)
                        ok = ok and d3 == 0.0
                        widen = f"; vpmaddwd (x86-64-v3) vs this CPU's {d3:.1e}"
                    else:
                        d3 = max(float(np.max(np.abs(g3[n] - want) /
                                              np.maximum(np.abs(want), 1e-1)))
                                 for n, want in zip(names, ref))
                        ok = ok and d3 <= RTOL
                        widen = f"; widened (x86-64-v3) vs bf16 reference {d3:.1e}"
            sim = ""
            if a.lstm_opt and k == 1:
                # The remark's estimate (other random inputs, up to 8 steps, one
                # batch row) is of the same order as what the kernels do.
                p = subprocess.run([a.lstm_opt, path, "--target=cpu", "--precision=" + a.precision,
                                    "-o", os.path.join(work, name + ".mlir")],
                                   capture_output=True, text=True)
                found = re.search(r"simulated on the host\): max rel error ([0-9.e+-]+)", p.stderr)
                est = float(found.group(1)) if found else None
                close = est is not None and (err32 < 1e-6 or err32 / 20 <= est <= err32 * 20)
                ok = ok and close
                sim = f"; remark's simulated {est if est is None else f'{est:.1e}'}" + \
                    ("" if close else " (not within 20x of the measured)")
            print(f"{'ok  ' if ok else 'FAIL'} {name} threads={k}: vs {a.precision} reference "
                  f"{worst:.2e} (median {median:.1e}); vs f32 (ONNX Runtime) max rel "
                  f"{err32:.2e}{sim}{widen}")
            passed += ok
            failed += not ok
    print(f"{a.precision}: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generated kernels or a library GEMM? The measurement behind the CPU
backend's choice (issue 4), in one run on one machine.

For each LSTM size (T, B, I, H) and thread count:
  * lstm-opt's hoisted input GEMM: lstm-run on the layer minus lstm-run on the
    same layer with I = 16 (whose input GEMM is negligible);
  * lstm-opt's recurrence (generated step kernel with the fused epilogue):
    lstm-run with I = 16;
  * OpenBLAS: one sgemm for the hoisted GEMM, and T per-step sgemm calls plus
    the pointwise LSTM update (bench/gemm/sgemm_paths.c).
Writes bench/results/gemm_choice.{md,json}.

Usage: gemm_choice.py [--threads 1 2] [--reps N]
Needs: build/bin/lstm-run, libopenblas-dev, gcc.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
from cpu_variants import layer_model  # noqa: E402

SIZES = [(100, 1, 64, 64), (25, 1, 512, 512), (150, 1, 256, 256),
         (25, 4, 1024, 1024), (50, 4, 1536, 1536), (100, 64, 512, 512)]


def lstm_run_ms(work, T, B, I, H, threads, reps):
    path = os.path.join(work, f"l_{T}_{B}_{I}_{H}.onnx")
    feeds = layer_model(path, kind="LSTM", T=T, B=B, I=I, H=H)
    inp = path + ".npz"
    np.savez(inp, **feeds)
    out = subprocess.run([os.path.join(ROOT, "build", "bin", "lstm-run"), path,
                          "--inputs", inp, "--bench", str(reps), "--threads",
                          str(threads), "-q"], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gemm-choice-")
    exe = os.path.join(work, "sgemm_paths")
    subprocess.run(["gcc", "-O2", "-march=native", os.path.join(HERE, "gemm", "sgemm_paths.c"),
                    "-o", exe, "-lopenblas", "-lm"], check=True)
    rows = []
    for (T, B, I, H) in SIZES:
        for k in a.threads:
            full = lstm_run_ms(work, T, B, I, H, k, a.reps)
            rec = lstm_run_ms(work, T, B, 16, H, k, a.reps)
            out = subprocess.run([exe, str(T), str(B), str(I), str(H), str(k), str(a.reps)],
                                 capture_output=True, text=True, check=True).stdout.split()
            blas_hoisted, blas_stepped = float(out[1]), float(out[3])
            rows.append(dict(T=T, B=B, I=I, H=H, threads=k, lstm_opt_total_ms=full,
                             lstm_opt_recurrence_ms=rec,
                             lstm_opt_input_gemm_ms=max(full - rec, 0.0),
                             openblas_hoisted_gemm_ms=blas_hoisted,
                             openblas_stepped_recurrence_ms=blas_stepped))
            r = rows[-1]
            print(f"{(T, B, I, H)} threads={k}: input GEMM lstm-opt {r['lstm_opt_input_gemm_ms']:.3f} "
                  f"vs OpenBLAS {blas_hoisted:.3f} ms; recurrence lstm-opt {rec:.3f} vs "
                  f"per-step sgemm {blas_stepped:.3f} ms", flush=True)
    res = os.path.join(HERE, "results")
    os.makedirs(res, exist_ok=True)
    meta = dict(machine=platform.node(), cpu=next((l.split(":", 1)[1].strip()
                for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
                cores=os.cpu_count(), reps=a.reps)
    json.dump(dict(meta=meta, rows=rows), open(os.path.join(res, "gemm_choice.json"), "w"),
              indent=1)
    with open(os.path.join(res, "gemm_choice.md"), "w") as f:
        f.write(f"Machine: {meta['cpu']}, {meta['cores']} cores. Medians of {a.reps} runs, ms.\n\n")
        f.write("| (T, B, I, H) | threads | input GEMM: lstm-opt | OpenBLAS sgemm | "
                "recurrence: lstm-opt fused kernel | OpenBLAS sgemm per step + update |\n")
        f.write("|---|---:|---:|---:|---:|---:|\n")
        for r in rows:
            f.write(f"| ({r['T']}, {r['B']}, {r['I']}, {r['H']}) | {r['threads']} | "
                    f"{r['lstm_opt_input_gemm_ms']:.3f} | {r['openblas_hoisted_gemm_ms']:.3f} | "
                    f"{r['lstm_opt_recurrence_ms']:.3f} | {r['openblas_stepped_recurrence_ms']:.3f} |\n")
    print("wrote bench/results/gemm_choice.{md,json}")


if __name__ == "__main__":
    main()

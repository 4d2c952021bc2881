#!/usr/bin/env python3
"""ONNX Runtime on an unrolled LSTM graph vs on what lstm-opt makes of it.

For each size (T, B, I, H) builds the PyTorch-style unrolled LSTM
(make_unrolled_lstm.py, 16 nodes per step), fuses it with lstm-opt's default
pipeline (one ONNX LSTM node), checks that both give the same outputs, and
times both in ONNX Runtime (CPU, one inference at a time, median of N after
warm-up), in one run on one machine.

Usage: ort_unrolled_vs_fused.py [--lstm-opt build/bin/lstm-opt] [--runs 50] [--threads 2]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(__file__))
import make_unrolled_lstm  # noqa: E402
from roundtrip_scale import cpu_name  # noqa: E402

SIZES = [(100, 1, 64, 64), (25, 1, 512, 512), (150, 1, 256, 256), (25, 4, 1024, 1024)]


def session(path, threads):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def median_ms(sess, feeds, runs):
    for _ in range(3):
        sess.run(None, feeds)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), float(np.min(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default="build/bin/lstm-opt")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="lstm-opt-ort-")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; onnxruntime {ort.__version__}, "
          f"{a.threads} threads, median of {a.runs}")
    print("| T, B, I, H | unrolled nodes | ORT unrolled ms | ORT fused ms | speed-up | max abs diff |")
    print("|---|---:|---:|---:|---:|---:|")
    for (t, b, i, h) in SIZES:
        model = make_unrolled_lstm.build(t, h, i, b)
        src = os.path.join(work, f"u_{t}_{b}_{i}_{h}.onnx")
        dst = os.path.join(work, f"f_{t}_{b}_{i}_{h}.onnx")
        onnx.save(model, src)
        subprocess.run([a.lstm_opt, src, "-o", dst], check=True, stderr=subprocess.DEVNULL)
        rng = np.random.default_rng(0)
        feeds = {"x": rng.standard_normal((t, b, i)).astype(np.float32),
                 "h0": rng.standard_normal((b, h)).astype(np.float32),
                 "c0": rng.standard_normal((b, h)).astype(np.float32)}
        su, sf = session(src, a.threads), session(dst, a.threads)
        diff = max(float(np.abs(x - y).max())
                   for x, y in zip(su.run(None, feeds), sf.run(None, feeds)))
        mu, _ = median_ms(su, feeds, a.runs)
        mf, _ = median_ms(sf, feeds, a.runs)
        print(f"| {t}, {b}, {i}, {h} | {len(model.graph.node)} | {mu:.3f} | {mf:.3f} | "
              f"{mu / mf:.1f}x | {diff:.1e} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How the default pipeline's time grows with the number of unrolled steps.

Builds hand-written-style unrolled LSTMs (make_unrolled_lstm.py --style
pergate: 8 MatMuls and 32 nodes per step) for growing T, runs
`lstm-opt M.onnx -o fused.onnx --report=json` (best of 3), checks that one
LSTM node remains, and prints wall time, lstm-opt's phase times and the time
per step. Issue 3's goal: T = 1024 (>= 30k nodes) in under 2 s, linear in T.

Usage: recognition_scale.py [--lstm-opt build/bin/lstm-opt] [--steps 128,256,512,1024,2048]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import make_unrolled_lstm  # noqa: E402
import onnx  # noqa: E402
from roundtrip_scale import cpu_name  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default="build/bin/lstm-opt")
    ap.add_argument("--steps", default="128,256,512,1024,2048")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="lstm-opt-recog-")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores")
    print("| T | nodes | total s | import s | passes s | export s | passes us/step | LSTM nodes after |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in [int(x) for x in a.steps.split(",")]:
        model = make_unrolled_lstm.build_pergate(t, 8, 8, 1)
        path = os.path.join(work, f"m{t}.onnx")
        onnx.save(model, path)
        out, rep = os.path.join(work, f"o{t}.onnx"), os.path.join(work, f"r{t}.json")
        best, phases = None, None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            subprocess.run([a.lstm_opt, path, "-o", out, "--report=json",
                            "--report-file", rep], check=True,
                           stderr=subprocess.DEVNULL)
            dt = time.perf_counter() - t0
            if best is None or dt < best:
                best = dt
                phases = {p["name"]: p["ms"] / 1000 for p in json.load(open(rep))["phases"]}
        lstms = sum(n.op_type == "LSTM" for n in onnx.load(out).graph.node)
        print(f"| {t} | {len(model.graph.node)} | {best:.2f} | {phases['import']:.2f} | "
              f"{phases['passes']:.3f} | {phases['export']:.3f} | "
              f"{phases['passes'] / t * 1e6:.0f} | {lstms} |")


if __name__ == "__main__":
    main()

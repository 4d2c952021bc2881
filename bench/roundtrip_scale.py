#!/usr/bin/env python3
"""Import/export speed of lstm-opt on large unrolled graphs.

Builds unrolled-LSTM models (bench/make_unrolled_lstm.py, 16 nodes per step)
of growing size and times a pure round trip
    lstm-opt M.onnx -o out.onnx --pass-pipeline='builtin.module()'
(best of --repeat runs, wall clock), with lstm-opt's own per-phase times
from --report=json. Issue 2's goal: 100k nodes in under 5 s.

Usage: roundtrip_scale.py [--lstm-opt build/bin/lstm-opt] [--nodes 1000,10000,100000]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import make_unrolled_lstm  # noqa: E402
import onnx  # noqa: E402


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default="build/bin/lstm-opt")
    ap.add_argument("--nodes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra", default="", help="extra lstm-opt flags, e.g. --no-shape-inference")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="lstm-opt-bench-")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores")
    print(f"| nodes | file MB | round trip s (best of {a.repeat}) | import s | export s | nodes/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in [int(x) for x in a.nodes.split(",")]:
        steps = max(1, (n - 3) // 16)
        model = make_unrolled_lstm.build(steps, 8, 8, 1)
        path = os.path.join(work, f"m{n}.onnx")
        onnx.save(model, path)
        nodes = len(model.graph.node)
        out = os.path.join(work, f"o{n}.onnx")
        rep = os.path.join(work, f"r{n}.json")
        best, phases = None, None
        for _ in range(a.repeat):
            cmd = [a.lstm_opt, path, "-o", out, "--pass-pipeline=builtin.module()",
                   "--report=json", "--report-file", rep] + a.extra.split()
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True)
            dt = time.perf_counter() - t0
            if best is None or dt < best:
                best = dt
                phases = {p["name"]: p["ms"] / 1000 for p in json.load(open(rep))["phases"]}
        back = onnx.load(out)
        assert len(back.graph.node) == nodes, "round trip lost nodes"
        print(f"| {nodes} | {os.path.getsize(path) / 1e6:.1f} | {best:.2f} | "
              f"{phases.get('import', 0):.2f} | {phases.get('export', 0):.2f} | {nodes / best:,.0f} |")


if __name__ == "__main__":
    main()

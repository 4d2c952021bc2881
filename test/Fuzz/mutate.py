#!/usr/bin/env python3
"""Mutation fuzzing of lstm-opt's ONNX reader and the default pipeline.

Takes valid models, flips/inserts/deletes random bytes (seeded), runs
`lstm-opt M.onnx -o out.onnx` on each, and fails if the tool crashes (dies
by a signal), hangs, or exits with anything but 0 or 1, or exits 1 without
an error message, or leaves a partial output behind on failure.
Usage: mutate.py --lstm-opt PATH [--iterations N] [--seed S] MODEL...
Prints 'mutate: N passed, M failed'.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def mutate(data: bytearray, rng: random.Random) -> bytearray:
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        pos = rng.randrange(len(data)) if data else 0
        if kind < 0.6 and data:
            data[pos] = rng.randrange(256)
        elif kind < 0.8:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif data:
            del data[pos:pos + rng.randint(1, 16)]
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    seeds = [bytearray(open(m, "rb").read()) for m in a.models]
    work = tempfile.mkdtemp(prefix="lstm-opt-fuzz-")
    passed = failed = 0
    for i in range(a.iterations):
        src = os.path.join(work, "m.onnx")
        out = os.path.join(work, "out.onnx")
        if os.path.exists(out):
            os.remove(out)
        with open(src, "wb") as f:
            f.write(mutate(rng.choice(seeds), rng))
        try:
            p = subprocess.run([a.lstm_opt, src, "-o", out], capture_output=True,
                               text=True, errors="replace", timeout=60)
        except subprocess.TimeoutExpired:
            failed += 1
            print(f"FAIL {i}: timeout; input kept at {src}.{i}")
            os.rename(src, f"{src}.{i}")
            continue
        ok = p.returncode in (0, 1)
        if p.returncode == 1:
            ok = ok and "error:" in p.stderr and not os.path.exists(out)
        if ok:
            passed += 1
        else:
            failed += 1
            keep = f"{src}.{i}"
            os.rename(src, keep)
            print(f"FAIL {i}: exit {p.returncode}; input kept at {keep}\n{p.stderr[-2000:]}")
    print(f"mutate: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

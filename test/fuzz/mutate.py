#!/usr/bin/env python3
"""Mutation fuzzing of lstm-opt's ONNX reader and the default pipeline.

Takes valid models, flips/inserts/deletes random bytes (seeded), runs
`lstm-opt M.onnx -o out.onnx` on each, and fails if the tool crashes (dies
by a signal), hangs, or exits with anything but 0 or 1, or exits 1 without
an error message, or leaves a partial output behind on failure.
Usage: mutate.py --lstm-opt PATH [--iterations N] [--seed S] MODEL...
With --check-numerics, every mutated model that lstm-opt accepts and ONNX
Runtime can run is also run after fusion: the outputs must agree (rtol 1e-4,
atol 1e-5) -- a mutation that changes a weight or a shape must never make
the fusion wrong.
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


COMPARED = [0]


def mutate_weights(data: bytearray, rng: random.Random) -> bytes:
    """Changes some values of up to three float initializers."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    model = onnx.load_from_string(bytes(data))
    floats = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT]
    for t in rng.sample(floats, min(len(floats), rng.randint(1, 3))):
        arr = numpy_helper.to_array(t).copy()
        if arr.size == 0:
            continue
        for _ in range(rng.randint(1, 4)):
            idx = rng.randrange(arr.size)
            arr.flat[idx] = rng.choice([0.0, -arr.flat[idx], arr.flat[idx] * 3 + 0.5,
                                        rng.uniform(-2, 2)])
        t.CopyFrom(numpy_helper.from_array(arr, t.name))
    return model.SerializeToString()


def same_outputs(original, fused, rng):
    """False if both models run in ONNX Runtime and disagree."""
    import numpy as np
    import onnx
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
    from ortutil import random_inputs, run_ort
    try:
        feeds = random_inputs(onnx.load(original), np.random.default_rng(rng.randrange(1 << 30)))
        a = run_ort(original, feeds)
    except Exception:  # the mutant is not runnable: nothing to compare
        return True
    b = run_ort(fused, feeds)
    COMPARED[0] += 1
    for k in a:
        x, y = a[k], b.get(k)
        if y is None or x.shape != y.shape:
            print(f"  output {k}: shape {None if y is None else y.shape} vs {x.shape}")
            return False
        if x.dtype.kind == "f" and not np.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True):
            print(f"  output {k}: max abs diff {np.nanmax(np.abs(x - y))}")
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check-numerics", action="store_true")
    ap.add_argument("--mode", choices=["bytes", "weights"], default="bytes",
                    help="bytes: random byte edits; weights: random changes to "
                         "float initializer values (the model stays valid)")
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
            base = rng.choice(seeds)
            f.write(mutate(base, rng) if a.mode == "bytes"
                    else mutate_weights(base, rng))
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
        if ok and p.returncode == 0 and a.check_numerics:
            ok = same_outputs(src, out, rng)
        if ok:
            passed += 1
        else:
            failed += 1
            keep = f"{src}.{i}"
            os.rename(src, keep)
            print(f"FAIL {i}: exit {p.returncode}; input kept at {keep}\n{p.stderr[-2000:]}")
    if a.check_numerics:
        print(f"numerics compared on {COMPARED[0]} runnable mutants")
    print(f"mutate: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""lstm-opt --stream-to-sequence=N against N calls of the original model.

Usage: stream_to_sequence.py --lstm-opt PATH --workdir DIR [--chunks N]
                             [--compile-arg=ARG ...] [--chunk-shape=IN=D0xD1 ...] MODEL.onnx ...

For each model: `lstm-opt MODEL --stream-to-sequence=N` (state pairs from
--state=auto unless a --compile-arg gives --state; the remark lists them),
then ONNX Runtime on the original called N times with the state carried by
hand (each non-state input random, its symbolic sizes 2 unless the output
model fixes them) against ONNX Runtime on the rewritten model called once
with the N chunks stacked: every stacked output and every final state within
1e-5 relative. Prints 'stream-to-sequence: P passed, F failed'.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

TOL = 1e-5
DTYPES = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64}


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("--chunk-shape", action="append", default=[],
                    help="INPUT=D0xD1...: one chunk's shape of an input whose "
                         "sizes are symbolic (default: each symbolic size 2)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    passed = failed = 0
    N = a.chunks
    chunk_shapes = {k: [int(d) for d in v.split("x")]
                    for k, v in (x.split("=") for x in a.chunk_shape)}
    for path in a.models:
        name = os.path.basename(path).replace(".onnx", "")
        out = os.path.join(a.workdir, name + ".seq.onnx")
        p = subprocess.run([a.lstm_opt, path, f"--stream-to-sequence={N}", "-o", out]
                           + a.compile_arg, capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL {name}: lstm-opt: {p.stderr.strip()[-400:]}")
            failed += 1
            continue
        m = re.search(r"state pairs (.*)", p.stderr)
        given = [x for x in a.compile_arg if x.startswith("--state")]
        spec = m.group(1).strip() if m else given[0].split("=", 1)[1]
        pairs = [tuple(s.strip().split("=")) for s in spec.split(",")]
        print(f"{name}: state pairs {', '.join(i + '=' + o for i, o in pairs)}", flush=True)
        form = re.search(r"onnx-stream-to-sequence: (the \d+ chunks batched.*|a Loop over the chunks.*)",
                         p.stderr)
        print(f"{name}: {form.group(1) if form else 'a Loop over the chunks'}", flush=True)
        seq = onnx.load(out)
        init = {t.name for t in seq.graph.initializer}
        rng = np.random.default_rng(0)
        state_in = {i for i, _ in pairs}
        stacked, state0 = {}, {}
        for vi in seq.graph.input:
            if vi.name in init:
                continue
            t = vi.type.tensor_type
            shape = [d.dim_value if d.dim_value > 0 else 2 for d in t.shape.dim]
            if vi.name in chunk_shapes:
                shape = ([] if vi.name in state_in else [N]) + chunk_shapes[vi.name]
            dt = DTYPES[t.elem_type]
            if vi.name in state_in:
                state0[vi.name] = rng.uniform(-1, 1, shape).astype(dt)
            elif np.issubdtype(dt, np.floating):
                stacked[vi.name] = rng.uniform(-1, 1, shape).astype(dt)
            else:
                stacked[vi.name] = np.full(shape, 16000 if "sr" in vi.name else 1, dt)
        # The original, N calls, the state carried.
        orig = session(path)
        outs = [o.name for o in orig.get_outputs()]
        # Inputs bound at compile time (--bind NAME=V): the original gets V.
        bound = {}
        for x in a.compile_arg:
            if x.startswith("--bind="):
                k, v = x[len("--bind="):].split("=", 1)
                bound[k] = np.array(int(v), np.int64)
        state = dict(state0)
        per_chunk = {o: [] for o in outs}
        for k in range(N):
            feed = {n: np.asarray(v[k]) for n, v in stacked.items()}
            feed.update(state)
            feed.update(bound)
            res = dict(zip(outs, orig.run(None, feed)))
            for o in outs:
                per_chunk[o].append(res[o])
            state = {i: res[o] for i, o in pairs}
        # The rewritten model, one call.
        got = dict(zip([o.name for o in session(out).get_outputs()],
                       session(out).run(None, {**stacked, **state0})))
        worst = 0.0
        for o in outs:
            want = state[[i for i, s in pairs if s == o][0]] if o in {s for _, s in pairs} \
                else np.stack(per_chunk[o])
            g = got[o]
            if g.shape != want.shape:
                worst = float("inf")
                print(f"  {o}: shape {g.shape}, want {want.shape}")
                continue
            if want.size:
                worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - want))
                                   / max(float(np.max(np.abs(want))), 1e-30)))
        ok = worst <= TOL
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {N} chunks in one call == {N} calls "
              f"of the original, max rel {worst:.1e}", flush=True)
        passed += ok
        failed += not ok
    print(f"stream-to-sequence: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

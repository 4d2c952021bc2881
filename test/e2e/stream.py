#!/usr/bin/env python3
"""Stateful compiled models (lstm-opt --state): the stream API against the
same model with its state passed by hand.

Usage: stream.py --lstm-opt PATH --lstm-run PATH --workdir DIR
                 [--compile-arg=ARG ...] MODEL.onnx ...

For each model (its inputs' symbolic sizes 2): compiled with --state=auto
(the pairs the remark lists must be the model's h0/c0 -> h_n/c_n style
inputs and outputs), then, on 12 chunks of random inputs:
  * Model.stream().run chunk by chunk == Model.run with the state passed by
    hand, bit for bit (the same code runs);
  * run_chunks on the 12 chunks stacked == the 12 runs, bit for bit;
  * the final state (Stream.state) == the by-hand state; reset() gives the
    first chunk's outputs again; state = {...} continues from a given state;
  * 8 streams from 8 threads at once (the state of each in its own stream)
    == 8 separate runs;
  * the C API from a C program (test/e2e/stream_abi.c, built here with cc
    and AddressSanitizer + UBSan): create, run, get/set state, run_chunks,
    reset, destroy, and 4 pthreads streaming at once;
  * lstm-run --stream on the ONNX model == ONNX Runtime chunk by chunk with
    the state carried (<= 1e-4 relative: the compiled code's polynomial
    tanh and sigmoid).
Prints 'stream: N passed, M failed'.
"""
import argparse
import os
import re
import subprocess
import sys
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from lstm_opt.runtime import Model  # noqa: E402

CHUNKS = 12


def chunk_feeds(m, stream, rng):
    return [{t.name: rng.uniform(-1, 1, t.shape).astype(t.dtype) for t in stream.inputs}
            for _ in range(CHUNKS)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="more lstm-opt/lstm-run arguments (--bind, --input-shape)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        passed += bool(ok)
        failed += not ok

    for path in a.models:
        name = os.path.basename(path).replace(".onnx", "")
        so = os.path.join(a.workdir, name + ".so")
        p = subprocess.run([a.lstm_opt, path, "--target=cpu", "--state=auto", "-o", so] +
                           a.compile_arg,
                           capture_output=True, text=True)
        pairs = re.search(r"state pairs \(--state=auto\): (.*)", p.stderr)
        check(p.returncode == 0 and pairs, f"{name}: compiled with --state=auto: "
              f"{pairs.group(1) if pairs else p.stderr.strip()[-300:]}")
        if p.returncode:
            continue
        rng = np.random.default_rng(1)
        with Model(so, threads=1) as m:
            s = m.stream()
            chunks = chunk_feeds(m, s, rng)
            state_in = [i for i, _ in m.state_pairs]
            # By hand: the state inputs fed from the previous outputs.
            state = {t.name: np.zeros(t.shape, t.dtype) for t in m.inputs if t.name in state_in}
            by_hand = []
            for c in chunks:
                r = m.run({**c, **state, **m.bound})
                by_hand.append(r)
                state = {i: r[o] for i, o in m.state_pairs}
            streamed = [s.run(c) for c in chunks]
            outs = [t.name for t in s.outputs]
            same = all(np.array_equal(x[n], y[n]) for x, y in zip(streamed, by_hand) for n in outs)
            check(same, f"{name}: stream.run == the state passed by hand, bit for bit ({CHUNKS} chunks)")
            fin = s.state
            check(all(np.array_equal(fin[k], state[k]) for k in state),
                  f"{name}: Stream.state == the by-hand final state")
            s.reset()
            stacked = {n: np.stack([c[n] for c in chunks]) for n in chunks[0]}
            rc = s.run_chunks(stacked)
            check(all(np.array_equal(rc[n], np.stack([x[n] for x in streamed])) for n in outs),
                  f"{name}: run_chunks == {CHUNKS} runs, bit for bit")
            s.reset()
            again = s.run(chunks[0])
            check(all(np.array_equal(again[n], streamed[0][n]) for n in outs),
                  f"{name}: reset() starts again from zeros")
            # Continue from a given state: the 7th chunk from the state after 6.
            s.reset()
            mid = {t.name: np.zeros(t.shape, t.dtype) for t in s.states}
            for c in chunks[:6]:
                r = m.run({**c, **mid, **m.bound})
                mid = {i: r[o] for i, o in m.state_pairs}
            s.state = mid
            r7 = s.run(chunks[6])
            check(all(np.array_equal(r7[n], streamed[6][n]) for n in outs),
                  f"{name}: state = ... continues from the given state")
            # 8 streams from 8 threads.
            results = [None] * 8
            feeds = [chunk_feeds(m, s, np.random.default_rng(10 + k)) for k in range(8)]

            def work(k):
                with m.stream() as st:
                    results[k] = [st.run(c) for c in feeds[k]]
            ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            alone = []
            for k in range(8):
                with m.stream() as st:
                    alone.append([st.run(c) for c in feeds[k]])
            check(all(np.array_equal(x[n], y[n]) for k in range(8)
                      for x, y in zip(results[k], alone[k]) for n in outs),
                  f"{name}: 8 streams on 8 threads == 8 separate runs")
            s.close()
            # The C API from C.
            exe = os.path.join(a.workdir, name + "_abi")
            cc = subprocess.run(["cc", "-O1", "-g", "-fsanitize=address,undefined",
                                 "-fno-sanitize-recover=all", "-I", a.workdir,
                                 "-include", os.path.join(a.workdir, name + ".h"),
                                 os.path.join(HERE, "stream_abi.c"), so, "-lpthread",
                                 "-Wl,-rpath," + os.path.abspath(a.workdir), "-o", exe],
                                capture_output=True, text=True)
            if cc.returncode:
                check(False, f"{name}: C API test builds: {cc.stderr[-500:]}")
            else:
                sizes = [str(int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize)
                         for t in s.inputs] + ["/"] + \
                        [str(int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize)
                         for t in s.outputs]
                r = subprocess.run([exe] + sizes, capture_output=True, text=True,
                                   env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
                check(r.returncode == 0 and "stream_abi: ok" in r.stdout,
                      f"{name}: C API (create, run, state, run_chunks, reset, 4 threads) "
                      f"under ASan+UBSan: {(r.stdout + r.stderr).strip()[-300:]}")
            # lstm-run --stream against ONNX Runtime chunk by chunk.
            import onnxruntime as ort
            npz = os.path.join(a.workdir, name + ".chunks.npz")
            bound = {k: v.reshape(next(t.shape for t in m.inputs if t.name == k))
                     for k, v in m.bound.items()}
            np.savez(npz, **stacked, **bound)
            out = os.path.join(a.workdir, name + ".stream.npz")
            r = subprocess.run([a.lstm_run, path, "--stream", "--inputs", npz, "--outputs", out,
                                "-q"] + [f"--input-shape={t.name}=" + "x".join(map(str, t.shape))
                                         for t in m.inputs if t.name in state_in],
                               capture_output=True, text=True)
            if r.returncode:
                check(False, f"{name}: lstm-run --stream: {r.stderr.strip()[-300:]}")
                continue
            got = np.load(out)
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            st = {t.name: np.zeros(t.shape, t.dtype) for t in m.inputs if t.name in state_in}
            refs = []
            names = [o.name for o in sess.get_outputs()]
            for c in chunks:
                vals = dict(zip(names, sess.run(None, {**c, **st, **bound})))
                refs.append(vals)
                st = {i: vals[o] for i, o in m.state_pairs}
            worst = 0.0
            for n in outs:
                ref = np.stack([x[n] for x in refs])
                worst = max(worst, float(np.max(np.abs(got[n] - ref)) / max(np.max(np.abs(ref)), 1e-30)))
            for i, o in m.state_pairs:
                worst = max(worst, float(np.max(np.abs(got[o] - st[i])) / max(np.max(np.abs(st[i])), 1e-30)))
            check(worst <= 1e-4, f"{name}: lstm-run --stream == ONNX Runtime chunk by chunk "
                  f"(max rel {worst:.1e})")
    print(f"stream: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A compiled stream whose calls take K chunks each, batched.

`lstm-opt MODEL --target=cpu --stream-to-sequence=K --state=auto -o m.so`
compiles the batched form of a streaming model (the ops that do not read the
state once over the K chunks, each recurrent layer once over all their
steps) as a library with state: `Model(m.so).stream().run` takes K chunks
per call and carries the state to the next. Checked against ONNX Runtime on
the original called chunk by chunk with the state carried by hand: R calls of
`run` (R*K chunks) and one `run_chunks` over the same R blocks, every output
and the final state within 1e-5 (max |a - b| / max(1, max |b|): absolute
for probabilities and states).

With --embedded: `lstm-opt MODEL --target=cpu --state=auto --stream-block=K
-o m.so` instead, a plain stream (one chunk per `run`) whose run_chunks runs
each whole block of K chunks through the batched form compiled beside it:
run_chunks over R*K + 3 chunks (R blocks, then 3 one by one) against ONNX
Runtime's chunk loop, and 3 single `run` calls after it.

With --threads N (compiled with --threads=N): the library's thread setting
(Model.threads) must read N, and the embedded check runs at N threads and
again at 1: the block form's OpenMP teams take their size from the same
setting as the model's.

Usage: stream_blocks.py --lstm-opt PATH --workdir DIR --block K --blocks R
                        [--embedded] [--threads N] [--compile-arg=ARG ...]
                        [--chunk-shape=IN=D0xD1 ...] MODEL.onnx ...
Prints one line per model and 'stream-blocks: P passed, F failed'.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from lstm_opt.runtime import Model  # noqa: E402

TOL = 1e-5


def rel(a, b):
    """max |a - b| / max(1, max |b|): absolute for values within [-1, 1]
    (probabilities, states), relative beyond."""
    return float(np.max(np.abs(a.astype(np.float64) - b)) / max(float(np.max(np.abs(b))), 1.0))


def original(path):
    """ONNX Runtime on the original: the session, its output and input names."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    orig = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    outs = [o.name for o in orig.get_outputs()]
    names = {i.name for i in orig.get_inputs()}
    return orig, outs, names


def embedded(s, m, path, K, R, shapes, bound):
    n = R * K + 3
    rng = np.random.default_rng(2)
    feeds = {t.name: rng.uniform(-1, 1, [n] + shapes.get(t.name, list(t.shape))).astype(np.float32)
             for t in s.inputs}
    orig, outs, names = original(path)
    pairs = m.state_pairs
    state = {k: np.zeros(v.shape, np.float32) for k, v in s.state.items()}
    want = {o: [] for o in outs}
    for k in range(n + 3):
        feed = {nm: v[k % n] for nm, v in feeds.items()}
        feed.update(state)
        feed.update({nm: v for nm, v in bound.items() if nm in names})
        res = dict(zip(outs, orig.run(None, feed)))
        for o in outs:
            want[o].append(res[o])
        state = {i: res[o] for i, o in pairs}
    got = s.run_chunks(feeds)
    worst = 0.0
    for t in s.outputs:
        worst = max(worst, rel(got[t.name], np.stack(want[t.name][:n])))
    # Then single calls continue from the state the blocks left.
    for k in range(3):
        r = s.run({nm: v[k] for nm, v in feeds.items()})
        for t in s.outputs:
            worst = max(worst, rel(r[t.name], want[t.name][n + k]))
    for i, _ in pairs:
        worst = max(worst, rel(s.state[i], state[i]))
    return worst <= TOL, worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--block", type=int, default=8)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("--chunk-shape", action="append", default=[])
    ap.add_argument("--embedded", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    K, R = a.block, a.blocks
    shapes = {k: [int(d) for d in v.split("x")] for k, v in (x.split("=") for x in a.chunk_shape)}
    bound = {}
    for x in a.compile_arg:
        if x.startswith("--bind="):
            k, v = x[len("--bind="):].split("=", 1)
            bound[k] = np.array(int(v), np.int64)
    passed = failed = 0
    for path in a.models:
        name = os.path.basename(path).replace(".onnx", "")
        so = os.path.join(a.workdir, name + f".block{K}.so")
        form = f"--stream-block={K}" if a.embedded else f"--stream-to-sequence={K}"
        p = subprocess.run([a.lstm_opt, path, "--target=cpu", form,
                            "--state=auto", f"--threads={a.threads}", "-o", so] + a.compile_arg,
                           capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL {name}: lstm-opt: {p.stderr.strip()[-400:]}")
            failed += 1
            continue
        m = Model(so)
        s = m.stream()
        if a.embedded:
            ok, worst = embedded(s, m, path, K, R, shapes, bound)
            threads = ""
            if a.threads > 1:
                # The setting reaches the block's teams: it reads N (not the
                # 1 of a model whose own layers are too small for a team),
                # and one thread gives the same outputs.
                at = m.threads
                m.threads = 1
                s.reset()
                ok1, worst1 = embedded(s, m, path, K, R, shapes, bound)
                ok = ok and ok1 and at == a.threads and m.threads == 1
                worst = max(worst, worst1)
                threads = f", threads {at} then {m.threads}"
            print(f"{'ok  ' if ok else 'FAIL'} {name}: run_chunks of {R * K + 3} chunks ({R} "
                  f"blocks of {K} batched, 3 one by one) == {R * K + 3} calls of the original, "
                  f"max err {worst:.1e}{threads}", flush=True)
            passed += ok
            failed += not ok
            s.close()
            m.close()
            continue
        rng = np.random.default_rng(1)
        # The original's inputs: the stream's (a leading K) without it.
        feeds = {}
        for t in s.inputs:
            shape = shapes.get(t.name, list(t.shape[1:]))
            feeds[t.name] = rng.uniform(-1, 1, [R, K] + shape).astype(np.float32)
        so_ = ort.SessionOptions()
        so_.intra_op_num_threads = 1
        so_.log_severity_level = 3
        orig = ort.InferenceSession(path, so_, providers=["CPUExecutionProvider"])
        outs = [o.name for o in orig.get_outputs()]
        state = {k: np.zeros(v.shape, np.float32) for k, v in s.state.items()}
        pairs = m.state_pairs
        want = {o: [] for o in outs}
        for r in range(R):
            for k in range(K):
                feed = {n: v[r, k] for n, v in feeds.items()}
                feed.update(state)
                feed.update({n: v for n, v in bound.items()
                             if n in {i.name for i in orig.get_inputs()}})
                res = dict(zip(outs, orig.run(None, feed)))
                for o in outs:
                    want[o].append(res[o])
                state = {i: res[o] for i, o in pairs}
        worst = 0.0
        got_runs = {t.name: [] for t in s.outputs}
        for r in range(R):
            res = s.run({n: v[r] for n, v in feeds.items()})
            for t in s.outputs:
                got_runs[t.name].append(res[t.name])
        for t in s.outputs:
            w = np.stack(want[t.name]).reshape((R,) + tuple(t.shape))
            worst = max(worst, rel(np.stack(got_runs[t.name]), w))
        for i, _ in pairs:
            worst = max(worst, rel(s.state[i], state[i]))
        s.reset()
        whole = s.run_chunks(feeds)
        for t in s.outputs:
            w = np.stack(want[t.name]).reshape((R,) + tuple(t.shape))
            worst = max(worst, rel(whole[t.name], w))
        ok = worst <= TOL
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {R} calls of {K} chunks == {R * K} calls of "
              f"the original, max err {worst:.1e}", flush=True)
        passed += ok
        failed += not ok
        s.close()
        m.close()
    print(f"stream-blocks: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Many silero-vad streams at once: throughput against the number of threads.

One silero-vad model (the package's default, 16 kHz) compiled with
`lstm-opt --target=cpu --threads=1 --state=auto`; 64 streams of it
(`Model.stream()`, one state each, the weights shared), each fed its own
recording chunk by chunk. W Python threads (1 .. cores) each drive 64 / W
streams; `Stream.run` releases the GIL for the whole call. The same with ONNX
Runtime: one session per thread (intra-op 1 thread), the state carried by
hand. Every stream's probabilities must be bit-identical to the same stream
run alone.

Usage: stream_scaling.py [--models DIR] [--streams 64] [--chunks 200]
Writes bench/results/stream_scaling.{md,json}.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from lstm_opt.runtime import Model  # noqa: E402
from silero_stream import cpu_name, isa  # noqa: E402
from silero_vad import speech_like  # noqa: E402  (test/RealModels, on the path now)


def chunked(audio, n=512, ctx=64):
    out, context = [], np.zeros((1, ctx), np.float32)
    for k in range(len(audio) // n):
        x = np.concatenate([context, audio[None, k * n:(k + 1) * n]], axis=1)
        context = x[:, -ctx:]
        out.append(np.ascontiguousarray(x))
    return out


def run_threads(workers, jobs):
    """Runs `jobs` (callables) split over `workers` threads, job k on thread
    k % workers; seconds."""
    parts = [jobs[w::workers] for w in range(workers)]
    ths = [threading.Thread(target=lambda p=p: [j() for j in p]) for p in parts]
    t0 = time.perf_counter()
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default=os.path.join(HERE, "..", "build", "bin", "lstm-opt"))
    ap.add_argument("--models", default=os.path.expanduser("~/.cache/lstm-opt/models/silero-vad-6.2.3"))
    ap.add_argument("--model", default="silero_vad.onnx")
    ap.add_argument("--streams", type=int, default=64)
    ap.add_argument("--chunks", type=int, default=200)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "stream_scaling"))
    a = ap.parse_args()
    src = os.path.join(a.models, a.model)
    work = tempfile.mkdtemp(prefix="stream-scaling-")
    so = os.path.join(work, "m.so")
    subprocess.run([a.lstm_opt, src, "--target=cpu", "--threads=1", "-o", so,
                    "--input-shape=input=1x576", "--input-shape=state=2x1x128",
                    "--input-shape=sr=scalar", "--bind=sr=16000", "--state=auto"],
                   check=True, capture_output=True)
    model = Model(so)
    sr = 16000
    recordings = [chunked(speech_like(a.chunks * 512 / sr + 0.1, sr, seed=s))[:a.chunks]
                  for s in range(a.streams)]
    # Each stream alone: the reference.
    alone = []
    for rec in recordings:
        s = model.stream()
        alone.append(np.concatenate([s.run({"input": x})["output"].ravel() for x in rec]))
    cores = os.cpu_count() or 1
    rows = []
    for workers in sorted({1, 2, cores} & set(range(1, cores + 1))):
        # lstm-opt: one stream object per recording, `workers` threads.
        streams = [model.stream() for _ in recordings]
        outs = [[] for _ in recordings]

        def job(k):
            def go():
                s, o = streams[k], outs[k]
                for x in recordings[k]:
                    o.append(s.run({"input": x})["output"].ravel()[0])
            return go
        secs = run_threads(workers, [job(k) for k in range(a.streams)])
        identical = all(np.array_equal(np.array(outs[k], np.float32), alone[k])
                        for k in range(a.streams))
        # ONNX Runtime: one session per thread, state carried by hand.
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        sessions = [ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])
                    for _ in range(workers)]

        def ort_jobs():
            jobs = []
            for k in range(a.streams):
                def go(k=k):
                    sess = sessions[k % workers]  # this thread's own session
                    state = np.zeros((2, 1, 128), np.float32)
                    for x in recordings[k]:
                        p, state = sess.run(None, {"input": x, "state": state,
                                                   "sr": np.array(sr, np.int64)})
                jobs.append(go)
            return jobs
        ort_secs = run_threads(workers, ort_jobs())
        total = a.streams * a.chunks
        rows.append({"threads": workers, "lstm_opt_chunks_per_s": total / secs,
                     "ort_chunks_per_s": total / ort_secs, "identical_to_alone": identical})
        print(rows[-1], flush=True)
    base = rows[0]["lstm_opt_chunks_per_s"]
    meta = {"cpu": cpu_name(), "isa": isa(), "cores": cores, "streams": a.streams,
            "chunks": a.chunks, "model": a.model, "onnxruntime": ort.__version__}
    with open(a.out + ".json", "w") as f:
        json.dump({"machine": meta, "rows": rows}, f, indent=2)
    lines = [f"# {a.streams} silero-vad streams at once ({a.model}, 16 kHz, {a.chunks} "
             f"chunks each)", "",
             f"{meta['cpu']} ({meta['isa']}), {cores} cores; onnxruntime {ort.__version__}.", "",
             "| threads | lstm-opt streams, chunks/s | scaling | ONNX Runtime, chunks/s | "
             "lstm-opt / ORT | every stream identical to it run alone |",
             "|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['threads']} | {r['lstm_opt_chunks_per_s']:.0f} | "
                     f"{r['lstm_opt_chunks_per_s'] / base:.2f}x | {r['ort_chunks_per_s']:.0f} | "
                     f"{r['lstm_opt_chunks_per_s'] / r['ort_chunks_per_s']:.2f}x | "
                     f"{'yes' if r['identical_to_alone'] else 'NO'} |")
    lines += ["", "The model is compiled with --threads=1 --state=auto; each Python thread "
              "drives its share of the streams through Stream.run (the GIL released in "
              "the call). ONNX Runtime: one session per thread, intra-op 1 thread, the "
              "state passed in and out by hand."]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""silero-vad streaming: time per chunk, side by side, in one run.

For every ONNX model the silero-vad package ships (scripts/fetch-models.sh
puts them in ~/.cache/lstm-opt/models/silero-vad-6.2.3), streamed as the
package's OnnxWrapper calls it (16 kHz: 512 samples + 64 of context per
chunk, the state carried from call to call; silero_vad_16k_sequence.onnx:
one call over N frames):
  * ONNX Runtime on the original, 1 thread (what the package configures);
  * ONNX Runtime on lstm-opt's fused model (default pipeline), 1 thread;
  * the model compiled for this CPU by lstm-opt (--target=cpu --threads=1
    --bind sr=16000) run through lstm_opt.runtime, the state passed by hand;
  * the same compiled with --state=auto, streamed: Model.stream().run per
    chunk (the state stays in the stream);
  * the whole recording in one call: Stream.run_chunks (time per chunk: the
    model's own work; stream median minus it: the per-call overhead);
  * the whole recording batched: the stream compiled with --stream-block=K
    (--block, default 125: a block's intermediates fit the L2 cache), 1 and
    2 threads, its run_chunks: what does not read the state runs once per
    block of K chunks, the LSTM once over their steps;
  * ONNX Runtime on lstm-opt's batched ONNX model (--stream-to-sequence=N,
    all N chunks in one call).
Reports the median and min time per chunk over --chunks chunks (after
--warmup), the ratios, and the largest difference of the compiled model's
probabilities from ONNX Runtime's. Writes bench/results/silero_stream.{md,json}.

Usage: silero_stream.py [--lstm-opt build/bin/lstm-opt] [--models DIR] [--chunks 1000]
                        [--block 125]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "RealModels"))
from lstm_opt.runtime import Model  # noqa: E402
from silero_vad import session, speech_like  # noqa: E402


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def isa():
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()
    if "avx512f" in flags:
        return "AVX-512" + (" + AMX" if "amx_tile" in flags else "")
    if "avx2" in flags:
        return "AVX2"
    return platform.machine()


def time_stream(call, chunks, warmup):
    state = np.zeros((2, 1, 128), np.float32)
    times, probs = [], []
    for k, x in enumerate(chunks):
        t0 = time.perf_counter()
        prob, state = call(x, state)
        dt = time.perf_counter() - t0
        if k >= warmup:
            times.append(dt * 1e3)
        probs.append(float(np.ravel(prob)[0]))
    return times, probs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default=os.path.join(HERE, "..", "build", "bin", "lstm-opt"))
    ap.add_argument("--models", default=os.path.expanduser("~/.cache/lstm-opt/models/silero-vad-6.2.3"))
    ap.add_argument("--chunks", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--block", type=int, default=125,
                    help="chunks per call of the batched library")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "silero_stream"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="silero-bench-")
    sr, n, ctx = 16000, 512, 64
    audio = speech_like((a.chunks + a.warmup) * n / sr + 0.1, sr)
    chunks, context = [], np.zeros((1, ctx), np.float32)
    for k in range(a.chunks + a.warmup):
        x = np.concatenate([context, audio[None, k * n:(k + 1) * n]], axis=1)
        context = x[:, -ctx:]
        chunks.append(np.ascontiguousarray(x))
    rows = []
    for name in sorted(f for f in os.listdir(a.models) if f.endswith(".onnx")):
        src = os.path.join(a.models, name)
        if "sequence" in name:
            continue  # a whole-sequence model, not a streaming one
        orig = session(src)
        names = {i.name for i in orig.get_inputs()}
        fused_path = os.path.join(work, name + ".fused.onnx")
        subprocess.run([a.lstm_opt, src, "-o", fused_path], check=True, capture_output=True)
        fused = session(fused_path)
        so = os.path.join(work, name + ".so")
        cmd = [a.lstm_opt, src, "--target=cpu", "--threads=1", "-o", so,
               "--input-shape=input=1x576", "--input-shape=state=2x1x128"]
        if "sr" in names:
            cmd += ["--input-shape=sr=scalar", "--bind=sr=16000"]
        subprocess.run(cmd, check=True, capture_output=True)
        model = Model(so)
        so_state = os.path.join(work, name + ".state.so")
        subprocess.run([c if c != so else so_state for c in cmd] + ["--state=auto"],
                       check=True, capture_output=True)
        stream = Model(so_state).stream()
        # The batched block libraries (K chunks per call), 1 and 2 threads,
        # and the batched ONNX model over all chunks.
        K = a.block
        blocks = {}
        for threads in (1, 2):
            so_block = os.path.join(work, f"{name}.block{K}.t{threads}.so")
            subprocess.run([c if c != so else so_block for c in cmd if c != "--threads=1"]
                           + ["--state=auto", f"--threads={threads}",
                              f"--stream-block={K}"], check=True, capture_output=True)
            blocks[threads] = Model(so_block).stream()
        seq_path = os.path.join(work, name + ".seq.onnx")
        seq_cmd = [a.lstm_opt, src, "-o", seq_path, "--input-shape=input=1x576",
                   "--input-shape=state=2x1x128", f"--stream-to-sequence={len(chunks)}"]
        if "sr" in names:
            seq_cmd += ["--input-shape=sr=scalar", "--bind=sr=16000"]
        subprocess.run(seq_cmd, check=True, capture_output=True)
        seq = session(seq_path)

        def ort_call(sess):
            def call(x, state):
                feeds = {"input": x, "state": state}
                if "sr" in names:
                    feeds["sr"] = np.array(sr, dtype=np.int64)
                return sess.run(None, feeds)
            return call

        def compiled_call(x, state):
            feeds = {"input": x, "state": state}
            if "sr" in names:
                feeds["sr"] = np.array(sr, dtype=np.int64)
            out = model.run(feeds)
            return out["output"], out["stateN"]

        def stream_call(x, state):
            return stream.run({"input": x})["output"], state

        t_orig, p_orig = time_stream(ort_call(orig), chunks, a.warmup)
        t_fused, _ = time_stream(ort_call(fused), chunks, a.warmup)
        t_comp, p_comp = time_stream(compiled_call, chunks, a.warmup)
        stream.reset()
        t_stream, p_stream = time_stream(stream_call, chunks, a.warmup)
        # The whole recording in one call (best of 5).
        stacked = np.stack(chunks)
        whole = []
        for _ in range(5):
            stream.reset()
            t0 = time.perf_counter()
            p_whole = stream.run_chunks({"input": stacked})["output"]
            whole.append((time.perf_counter() - t0) * 1e3 / len(chunks))
        # Batched: blocks of K chunks (the recording cut to whole blocks).
        nb = len(chunks) // K
        blocked = stacked[:nb * K]
        batched, p_batched = {}, None
        for threads, bs in blocks.items():
            times = []
            for _ in range(5):
                bs.reset()
                t0 = time.perf_counter()
                p_b = bs.run_chunks({"input": blocked})["output"]
                times.append((time.perf_counter() - t0) * 1e3 / (nb * K))
            batched[threads] = min(times)
            p_batched = p_b if p_batched is None else p_batched
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            p_seq = seq.run(None, {"input": stacked, "state": np.zeros((2, 1, 128), np.float32)})[0]
            times.append((time.perf_counter() - t0) * 1e3 / len(chunks))
        ort_seq = min(times)
        # ONNX Runtime's chunk loop over the whole recording, for the ratio.
        t0 = time.perf_counter()
        time_stream(ort_call(orig), chunks, 0)
        ort_loop = (time.perf_counter() - t0) * 1e3 / len(chunks)
        med = {k: statistics.median(v) for k, v in
               (("ort", t_orig), ("ort_fused", t_fused), ("lstm_opt", t_comp),
                ("stream", t_stream))}
        mins = {k: min(v) for k, v in (("ort", t_orig), ("ort_fused", t_fused),
                                       ("lstm_opt", t_comp), ("stream", t_stream))}
        p99 = {k: float(np.percentile(v, 99)) for k, v in
               (("ort", t_orig), ("stream", t_stream))}
        rows.append({"model": name, "median_ms": med, "min_ms": mins, "p99_ms": p99,
                     "run_chunks_ms_per_chunk": min(whole), "ort_loop_ms_per_chunk": ort_loop,
                     "max_prob_diff": float(np.max(np.abs(np.array(p_orig) - np.array(p_comp)))),
                     "stream_max_prob_diff": float(np.max(np.abs(np.array(p_orig) - np.array(p_stream)))),
                     "run_chunks_max_prob_diff": float(np.max(np.abs(np.array(p_orig) -
                                                                     np.ravel(p_whole)))),
                     "block": K, "batched_ms_per_chunk": batched,
                     "batched_max_prob_diff": float(np.max(np.abs(
                         np.ravel(p_orig)[:nb * K] - np.ravel(p_batched)))),
                     "ort_batched_onnx_ms_per_chunk": ort_seq,
                     "ort_batched_onnx_max_prob_diff": float(np.max(np.abs(
                         np.ravel(p_orig) - np.ravel(p_seq))))})
        print(name, {k: round(v, 4) for k, v in med.items()}, flush=True)
    meta = {"cpu": cpu_name(), "isa": isa(), "cores": os.cpu_count(), "chunks": a.chunks,
            "onnxruntime": ort.__version__, "threads": 1, "sample_rate": sr}
    with open(a.out + ".json", "w") as f:
        json.dump({"machine": meta, "rows": rows}, f, indent=2)
    lines = [f"# silero-vad streaming, time per chunk (16 kHz, 576 samples per call)", "",
             f"{meta['cpu']} ({meta['isa']}), {meta['cores']} cores; 1 thread everywhere; "
             f"{a.chunks} chunks after {a.warmup} warm-up; onnxruntime {ort.__version__}.", "",
             "| model | ORT original ms | ORT fused ms | lstm-opt compiled ms | vs ORT | "
             "lstm-opt stream ms (p99) | vs ORT | run_chunks ms per chunk | per-call overhead us "
             "| ORT chunk loop / run_chunks | max |p - p_ORT| |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        m = r["median_ms"]
        rc = r["run_chunks_ms_per_chunk"]
        lines.append(f"| {r['model']} | {m['ort']:.4f} | {m['ort_fused']:.4f} | "
                     f"{m['lstm_opt']:.4f} | {m['ort'] / m['lstm_opt']:.2f}x | "
                     f"{m['stream']:.4f} ({r['p99_ms']['stream']:.4f}) | "
                     f"{m['ort'] / m['stream']:.2f}x | {rc:.4f} | {(m['stream'] - rc) * 1e3:.1f} | "
                     f"{r['ort_loop_ms_per_chunk'] / rc:.2f}x | "
                     f"{max(r['max_prob_diff'], r['stream_max_prob_diff'], r['run_chunks_max_prob_diff']):.1e} |")
    lines += ["", "Medians; the JSON file has the minima too. The stream is the model compiled "
              "with --state=auto through Model.stream().run; run_chunks streams the whole "
              "recording in one call (best of 5, per chunk).", "",
              f"The whole recording batched (ms per chunk, best of 5): the stream compiled with "
              f"--stream-block=K, its run_chunks (the ops that do not read the state run once "
              f"per block of K chunks, the LSTM once over the block's steps); and ONNX Runtime on lstm-opt's "
              f"batched ONNX model, all chunks in one call. Ratios against ONNX Runtime's "
              f"chunk loop on the original (1 thread).", "",
              "| model | K | ORT chunk loop | batched, 1 thread | vs ORT | batched, 2 threads "
              "| vs ORT | max |p - p_ORT| | ORT on batched ONNX | vs ORT loop | max |p - p_ORT| |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        b, loop = r["batched_ms_per_chunk"], r["ort_loop_ms_per_chunk"]
        lines.append(f"| {r['model']} | {r['block']} | {loop:.4f} | {b[1]:.4f} | "
                     f"{loop / b[1]:.2f}x | {b[2]:.4f} | {loop / b[2]:.2f}x | "
                     f"{r['batched_max_prob_diff']:.1e} | {r['ort_batched_onnx_ms_per_chunk']:.4f} | "
                     f"{loop / r['ort_batched_onnx_ms_per_chunk']:.2f}x | "
                     f"{r['ort_batched_onnx_max_prob_diff']:.1e} |")
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

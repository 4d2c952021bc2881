#!/usr/bin/env python3
"""GPU benchmark, ready to run on a machine with an NVIDIA GPU (issue 5):
lstm-opt + cuDNN against ONNX Runtime's CUDA execution provider, on the
unrolled graph and on lstm-opt's fused ONNX, in one run.

Columns per size (median ms per inference after warm-up):
  ort_cuda_unrolled   ORT CUDA EP on the hand-written unrolled graph
  ort_cuda_fused      ORT CUDA EP on `lstm-opt unrolled.onnx -o fused.onnx`
                      (ORT runs its LSTM/GRU op through cuDNN)
  lstm_opt_cudnn      build/bin/lstm-run unrolled.onnx --device=cuda
                      (the layers through lstm-opt's cuDNN runtime, fp32)
  lstm_opt_cudnn_f16  the same with --cudnn-data-type=f16 (Tensor Cores)
  lstm_opt_persist    the same with --cudnn-algo=persist-static (batch <= 4)
Every output is compared with ORT on the CPU on the unrolled graph (the
reference); cells that cannot run (no GPU, no onnxruntime-gpu, cuDNN
refusing an option) are "n/a" with the reason, and the run goes on.
Writes bench/results/gpu_backend.{md,json}.

Needs: a CUDA GPU and driver, a build with the cuDNN runtime
(LSTM_OPT_ENABLE_CUDNN), and for the ORT columns `pip install
onnxruntime-gpu` matching the CUDA version (in a separate venv from the
test suite's CPU onnxruntime).

Usage: gpu_backend.py [--sizes NAME,...] [--runs N] [--quick]
On a machine without a GPU it says so and exits 0 after writing nothing.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LSTM_OPT = os.path.join(ROOT, "build", "bin", "lstm-opt")
LSTM_RUN = os.path.join(ROOT, "build", "bin", "lstm-run")

# name: (cell, T, B, I, H)
SIZES = {
    "lstm-100-1-64-64": ("lstm", 100, 1, 64, 64),
    "lstm-25-1-512-512": ("lstm", 25, 1, 512, 512),
    "lstm-150-1-256-256": ("lstm", 150, 1, 256, 256),
    "lstm-25-4-1024-1024": ("lstm", 25, 4, 1024, 1024),
    "lstm-50-4-1536-1536": ("lstm", 50, 4, 1536, 1536),
    "lstm-100-64-512-512": ("lstm", 100, 64, 512, 512),
    "gru-187-1-1536-1536": ("gru", 187, 1, 1536, 1536),
}


def have_gpu():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and "GPU" in out.stdout, out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return False, "nvidia-smi not found"


def make_model(work, cell, T, B, I, H):
    """The unrolled graph of bench/cpu_backend.py (same builders, same
    contractive weight scale), so both benchmarks run the same models."""
    import onnx
    sys.path.insert(0, HERE)
    from cpu_backend import build_model
    path = os.path.join(work, f"{cell}-{T}-{B}-{I}-{H}.onnx")
    onnx.save(build_model(cell, T, B, I, H, 1), path)
    return path


def feeds_for(path, rng):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
            .astype(np.float32) for i in m.graph.input if i.name not in inits}


def ort_time(path, feeds, provider, runs):
    import onnxruntime as ort
    if provider not in ort.get_available_providers():
        raise RuntimeError(f"{provider} not available (pip install onnxruntime-gpu)")
    sess = ort.InferenceSession(path, providers=[provider])
    for _ in range(3):
        out = sess.run(None, feeds)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    names = [o.name for o in sess.get_outputs()]
    return float(np.median(times)), dict(zip(names, out))


DEVICE = "cuda"
GPU_EP = "CUDAExecutionProvider"


def lstm_run_time(path, inp, out, runs, extra):
    cmd = [LSTM_RUN, path, "--inputs", inp, "--outputs", out, "--bench", str(runs),
           "--device=" + DEVICE, "-q"] + (extra if DEVICE == "cuda" else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr else "failed")
    return float(p.stdout.split()[1]), dict(np.load(out))


def rel_err(got, ref):
    return max(float(np.max(np.abs(got[k] - ref[k])) / max(float(np.max(np.abs(ref[k]))), 1e-6))
               for k in ref)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cpu-dry-run", action="store_true",
                    help="check the script on a machine without a GPU: ORT's CPU "
                         "provider and lstm-run --device=cpu stand in; the figures "
                         "mean nothing and go to results/gpu_backend.dry.*")
    a = ap.parse_args()
    global DEVICE, GPU_EP
    ok, gpus = have_gpu()
    if a.cpu_dry_run:
        ok, gpus, DEVICE, GPU_EP = True, "none (CPU dry run)", "cpu", "CPUExecutionProvider"
    if not ok:
        print(f"gpu_backend: no CUDA GPU here ({gpus}); nothing measured.")
        return 0
    runs = 5 if a.quick else a.runs
    work = tempfile.mkdtemp(prefix="gpu-bench-")
    rng = np.random.default_rng(0)
    rows = []
    for name, (cell, T, B, I, H) in SIZES.items():
        if a.sizes and not any(s in name for s in a.sizes.split(",")):
            continue
        unrolled = make_model(work, cell, T, B, I, H)
        fused = unrolled.replace(".onnx", ".fused.onnx")
        subprocess.run([LSTM_OPT, unrolled, "-o", fused], check=True, capture_output=True)
        feeds = feeds_for(unrolled, rng)
        inp = os.path.join(work, name + ".npz")
        np.savez(inp, **feeds)
        _, ref = ort_time(unrolled, feeds, "CPUExecutionProvider", 1)
        row = {"size": name}
        for col, fn in [
            ("ort_cuda_unrolled", lambda: ort_time(unrolled, feeds, GPU_EP, runs)),
            ("ort_cuda_fused", lambda: ort_time(fused, feeds, GPU_EP, runs)),
            ("lstm_opt_cudnn", lambda: lstm_run_time(unrolled, inp, inp + ".o1.npz", runs, [])),
            ("lstm_opt_cudnn_f16", lambda: lstm_run_time(
                unrolled, inp, inp + ".o2.npz", runs, ["--cudnn-data-type=f16"])),
            ("lstm_opt_persist", lambda: lstm_run_time(
                unrolled, inp, inp + ".o3.npz", runs, ["--cudnn-algo=persist-static"])),
        ]:
            try:
                ms, out = fn()
                row[col] = {"median_ms": ms, "rel_err": rel_err(out, ref)}
            except Exception as e:  # noqa: BLE001 - a cell records why it is n/a
                row[col] = {"error": str(e)}
            print(name, col, row[col], flush=True)
        rows.append(row)
    res = os.path.join(HERE, "results")
    os.makedirs(res, exist_ok=True)
    meta = {"gpus": gpus, "host": platform.node(), "runs": runs,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S")}
    stem = "gpu_backend.dry" if a.cpu_dry_run else "gpu_backend"
    json.dump({"meta": meta, "rows": rows}, open(os.path.join(res, stem + ".json"), "w"),
              indent=1)
    cols = ["ort_cuda_unrolled", "ort_cuda_fused", "lstm_opt_cudnn", "lstm_opt_cudnn_f16",
            "lstm_opt_persist"]
    with open(os.path.join(res, stem + ".md"), "w") as f:
        f.write(f"GPU: {gpus}. Median ms per inference ({runs} runs); rel err vs ORT CPU.\n\n")
        f.write("| size | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols) + "\n")
        for r in rows:
            cells = [f"{r[c]['median_ms']:.3f} ({r[c]['rel_err']:.0e})" if "median_ms" in r[c]
                     else "n/a" for c in cols]
            f.write(f"| {r['size']} | " + " | ".join(cells) + " |\n")
    print(f"wrote bench/results/{stem}.{{md,json}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""IREE on every form of an unrolled LSTM, side by side in one run.

For each size (an unrolled PyTorch-style LSTM from make_unrolled_lstm.py):
  * IREE on the original unrolled ONNX (iree-import-onnx, then iree-compile);
  * IREE on lstm-opt's fused ONNX (one onnx.LSTM; iree-import-onnx expands it);
  * IREE on lstm-opt --target=linalg (the time loop as scf.for);
  * IREE on lstm-opt --target=linalg --linalg-unroll-steps=T (the steps
    written one after the other);
  * IREE on lstm-opt --target=iree --iree-kernels=iree (the time loop
    inside one flow.dispatch.region: the whole recurrence is one dispatch,
    IREE's code);
  * IREE on lstm-opt --target=iree (the default: each layer one dispatch
    calling lstm-opt's CPU kernel, linked into IREE's executable), also
    at --precision=bf16 and int8 (their error is against ONNX Runtime's f32);
  * lstm-run on the same model, 1 thread (the CPU backend), at f32, bf16
    and int8.
Every IREE module is compiled the same way (llvm-cpu, --iree-llvmcpu-target-cpu=host)
and timed through iree.runtime with the local-sync driver (one thread, no
task system) and local-task (IREE's thread pool), outputs fetched to the host
each call. Reports median ms per inference and each output's max rel error
against ONNX Runtime. Writes bench/results/iree_bench.{md,json}.

Usage: iree_bench.py [--lstm-opt build/bin/lstm-opt] [--lstm-run build/bin/lstm-run] [--runs 200]
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_BIN = os.path.dirname(sys.executable)
SIZES = [("lstm-100-1-64-64", 100, 1, 64, 64), ("lstm-25-1-512-512", 25, 1, 512, 512)]
IREE_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
              "--iree-llvmcpu-target-cpu=host"]


def cpu():
    name = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                 if l.startswith("model name")), platform.processor())
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else platform.machine()
    isa += "".join(f", {f.upper()}" for f in ("avx512_bf16", "avx512_vnni", "amx_tile") if f in flags)
    fam = {k: next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                    if l.split(":")[0].strip() == k), "?") for k in ("cpu family", "model")}
    return f"{name}, family {fam['cpu family']} model {fam['model']} ({isa})"


def time_iree(vmfb, mlir, args, driver, runs):
    import iree.runtime as rt
    ctx = rt.SystemContext(config=rt.Config(driver))
    with open(vmfb, "rb") as f:
        ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, f.read()))
    fn = ctx.modules.module[re.search(r"func\.func @([\w$.-]+)\(", open(mlir).read()).group(1)]

    def call():
        r = fn(*args)
        return [np.asarray(x.to_host()) for x in (r if isinstance(r, (list, tuple)) else [r])]
    for _ in range(10):
        outs = call()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts) * 1e3), outs


def time_iree_benchmark_module(vmfb, mlir, args, d):
    """Median ms of IREE's own harness (iree-benchmark-module, local-sync):
    no Python, inputs already on the device."""
    fn = re.search(r"func\.func @([\w$.-]+)\(", open(mlir).read()).group(1)
    inputs = []
    for i, x in enumerate(args):
        path = os.path.join(d, f"arg{i}.npy")
        np.save(path, x)
        inputs.append("--input=@" + path)
    p = subprocess.run([os.path.join(VENV_BIN, "iree-benchmark-module"), "--module=" + vmfb,
                        "--device=local-sync", "--function=" + fn, "--benchmark_repetitions=5"]
                       + inputs, capture_output=True, text=True)
    m = re.search(r"real_time_median\s+([\d.]+) ms", p.stdout)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default=os.path.join(ROOT, "build", "bin", "lstm-opt"))
    ap.add_argument("--lstm-run", default=os.path.join(ROOT, "build", "bin", "lstm-run"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "iree_bench"))
    a = ap.parse_args()
    import onnxruntime as ort
    work = tempfile.mkdtemp(prefix="iree-bench-")
    rows = []
    for name, T, B, I, H in SIZES:
        d = os.path.join(work, name)
        os.makedirs(d)
        src = os.path.join(d, "unrolled.onnx")
        subprocess.run([sys.executable, os.path.join(HERE, "make_unrolled_lstm.py"), "--steps", str(T),
                        "--hidden", str(H), "--input", str(I), "--batch", str(B), src],
                       check=True, capture_output=True)
        model = onnx.load(src)
        rng = np.random.default_rng(0)
        feeds = {i.name: rng.uniform(-1, 1, [x.dim_value for x in i.type.tensor_type.shape.dim]).astype(np.float32)
                 for i in model.graph.input}
        args = [feeds[i.name] for i in model.graph.input]
        ref = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)
        fused = os.path.join(d, "fused.onnx")
        subprocess.run([a.lstm_opt, src, "-o", fused], check=True, capture_output=True)
        forms = {}
        for form, onnx_path in (("original", src), ("lstm-opt ONNX", fused)):
            mlir = os.path.join(d, form.replace(" ", "_") + ".mlir")
            subprocess.run([os.path.join(VENV_BIN, "iree-import-onnx"), onnx_path, "-o", mlir],
                           check=True, capture_output=True)
            forms[form] = (mlir, [])
        for form, extra in (("lstm-opt linalg (scf.for)", ["--target=linalg"]),
                            ("lstm-opt linalg (unrolled)",
                             ["--target=linalg", f"--linalg-unroll-steps={T}"]),
                            ("lstm-opt iree (one dispatch)", ["--target=iree", "--iree-kernels=iree"]),
                            ("lstm-opt iree (lstm-opt kernel)", ["--target=iree"]),
                            ("lstm-opt iree (lstm-opt kernel bf16)", ["--target=iree", "--precision=bf16"]),
                            ("lstm-opt iree (lstm-opt kernel int8)", ["--target=iree", "--precision=int8"])):
            mlir = os.path.join(d, form.split("(")[1][:-1].replace(".", "_").replace(" ", "_").replace("-", "_")
                                + ".linalg.mlir")
            subprocess.run([a.lstm_opt, src, "-o", mlir] + extra,
                           check=True, capture_output=True)
            forms[form] = (mlir, ["--iree-input-type=none"])
        res = {"name": name, "T": T, "B": B, "I": I, "H": H, "columns": {}}
        for form, (mlir, extra) in forms.items():
            vmfb = mlir + ".vmfb"
            t0 = time.perf_counter()
            p = subprocess.run([os.path.join(VENV_BIN, "iree-compile"), mlir] + extra + IREE_FLAGS +
                               ["-o", vmfb], capture_output=True, text=True)
            col = {"compile_s": time.perf_counter() - t0}
            if p.returncode:
                col["error"] = p.stderr[-500:]
            else:
                for driver in ("local-sync", "local-task"):
                    ms, outs = time_iree(vmfb, mlir, args, driver, a.runs)
                    col[driver] = ms
                col["benchmark-module"] = time_iree_benchmark_module(vmfb, mlir, args, d)
                col["rel_err"] = max(float(np.max(np.abs(o - r)) / max(np.max(np.abs(r)), 1e-30))
                                     for o, r in zip(outs, ref))
            res["columns"][form] = col
            print(name, form, col, flush=True)
        npz = os.path.join(d, "in.npz")
        np.savez(npz, **feeds)
        for precision in ("f32", "bf16", "int8"):
            p = subprocess.run([a.lstm_run, src, "--inputs", npz, "--bench", str(a.runs), "--threads", "1",
                                "--precision=" + precision, "-q"], capture_output=True, text=True)
            m = re.search(r"median_ms:\s*([\d.]+)", p.stdout)
            col = "lstm-run" + ("" if precision == "f32" else " " + precision)
            res["columns"][col] = {"local-sync": float(m.group(1)) if m else None}
            print(name, col, res["columns"][col], flush=True)
        rows.append(res)
    from importlib.metadata import version
    meta = {"cpu": cpu(), "cores": os.cpu_count(), "iree": version("iree-base-compiler"),
            "onnxruntime": ort.__version__}
    with open(a.out + ".json", "w") as f:
        json.dump({"machine": meta, "rows": rows}, f, indent=1)
    L = ["# IREE on every form of an unrolled LSTM (`bench/iree_bench.py`)", "",
         f"{meta['cpu']}, {meta['cores']} cores; IREE {meta['iree']} (llvm-cpu, host CPU); "
         f"median ms per inference over {a.runs} runs through iree.runtime (Python), outputs "
         "fetched each call; iree-benchmark-module: IREE's own harness (local-sync, no Python, "
         "median of 5 repetitions); lstm-run with 1 thread (its --bench).", "",
         "| LSTM T, B, I, H | form | IREE local-sync | IREE local-task | vs original (local-sync) "
         "| iree-benchmark-module | vs original (benchmark-module) | rel err |",
         "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        base = r["columns"]["original"].get("local-sync")
        bbase = r["columns"]["original"].get("benchmark-module")
        for form, c in r["columns"].items():
            ms = c.get("local-sync")
            bm = c.get("benchmark-module")
            bench_cols = (f"{bm:.3f} | {bbase / bm:.2f}x" if bm and bbase else "- | -")
            L.append(f"| {r['T']}, {r['B']}, {r['I']}, {r['H']} | {form} | "
                     f"{ms:.3f} | " + (f"{c['local-task']:.3f}" if "local-task" in c else "-") +
                     f" | {base / ms:.2f}x | {bench_cols} | " +
                     (f"{c['rel_err']:.1e}" if "rel_err" in c else "-") + " |"
                     if ms else f"| {r['T']}, {r['B']}, {r['I']}, {r['H']} | {form} | n/a | | | | | |")
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()

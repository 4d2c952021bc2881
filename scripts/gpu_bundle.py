#!/usr/bin/env python3
"""Builds a self-contained folder that proves lstm-opt's GPU paths on a machine
with an NVIDIA GPU but no compiler: Python 3 + numpy + the CUDA driver, and
cuDNN 9 where PyTorch's wheels (nvidia-cudnn-cu*) or the system provide it.

    .venv/bin/python scripts/gpu_bundle.py OUT_DIR [--models a.onnx ...]
        [--chip sm_90] [--variants cpu,cudnn-f32,...]

For every model (default: every test/e2e/models fixture that lstm-run
compiles) and every variant it writes OUT_DIR/models/<model>/<variant>.so
(lstm-opt --target=cpu|cudnn|gpu -o), the inputs (inputs.npz, the seed of
cpu_run.py) and ONNX Runtime's outputs on the original model (reference.npz).
Variants:

    cpu             --target=cpu (a check of the runner itself; runs anywhere)
    cudnn-f32       --target=cudnn                     (f32 with TF32 off; algo auto)
    cudnn-f16       --target=cudnn --cudnn-data-type=f16
    cudnn-standard  --target=cudnn --cudnn-algo=standard
    cudnn-persist   --target=cudnn --cudnn-algo=persist-static
    cudnn-small-h   --target=cudnn --cudnn-algo=persist-small-h
    gpu-auto        --target=gpu --gpu-design=auto     (generated kernels)
    gpu-step        --target=gpu --gpu-design=step
    gpu-persistent  --target=gpu --gpu-design=persistent
    gpu-persistent-grid  the same, 2 hidden units per block (--gpu-units-per-block=2):
                    several blocks per direction exchanging h as (value, step) words
    gpu-persistent-barrier  the same with --gpu-grid-sync=barrier (a grid barrier per step)
    gpu-persistent-shared, gpu-persistent-grid-shared  gpu-persistent and -grid with
                    --gpu-weights=shared (the recurrent weights in shared memory, not
                    registers)
    gpu-persistent-bf16, gpu-persistent-grid-bf16  gpu-persistent and -grid with
                    --precision=bf16 (the recurrent products on the tensor cores), also
                    checked against twin-bf16.npz: the CPU-mapped twin's outputs
                    (lstm-run --gpu-kernels-on-cpu=persistent --precision=bf16)

Next to them: lib/ (libLstmOptCUDNNRuntime.so, libLstmOptGPURuntime.so and the
CUDA runtime libcudart.so.13 they were linked against), lstm_opt_runtime.py
(the ctypes loader of the Python package), run.py (the runner: every model,
compared with the reference and timed, into report.md and report.json), and
bundle.json (what was built, with which tolerances). A model or variant that
does not compile is listed in bundle.json with the error and skipped.

On the target machine:  python3 run.py [--repeat 50]   (see README.md there)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
from ortutil import random_inputs, run_ort  # noqa: E402  (the e2e tests' own)

VARIANTS = {
    "cpu": (["--target=cpu"], "cpu", 1e-4),
    "cudnn-f32": (["--target=cudnn"], "cuda", 1e-4),
    "cudnn-f16": (["--target=cudnn", "--cudnn-data-type=f16"], "cuda", 2e-2),
    "cudnn-standard": (["--target=cudnn", "--cudnn-algo=standard"], "cuda", 1e-4),
    "cudnn-persist": (["--target=cudnn", "--cudnn-algo=persist-static"], "cuda", 1e-4),
    "cudnn-small-h": (["--target=cudnn", "--cudnn-algo=persist-small-h"], "cuda", 1e-4),
    "gpu-auto": (["--target=gpu", "--gpu-design=auto"], "cuda", 1e-4),
    "gpu-step": (["--target=gpu", "--gpu-design=step"], "cuda", 1e-4),
    "gpu-persistent": (["--target=gpu", "--gpu-design=persistent"], "cuda", 1e-4),
    # The persistent kernel over several blocks per direction (grid barrier,
    # h through global memory) even where one block would hold the layer.
    "gpu-persistent-grid": (["--target=gpu", "--gpu-design=persistent",
                             "--gpu-units-per-block=2"], "cuda", 1e-4),
    "gpu-persistent-barrier": (["--target=gpu", "--gpu-design=persistent",
                                "--gpu-units-per-block=2", "--gpu-grid-sync=barrier"],
                               "cuda", 1e-4),
    # The recurrent weights in shared memory even where they fit registers.
    "gpu-persistent-shared": (["--target=gpu", "--gpu-design=persistent",
                               "--gpu-weights=shared"], "cuda", 1e-4),
    "gpu-persistent-grid-shared": (["--target=gpu", "--gpu-design=persistent",
                                    "--gpu-units-per-block=2", "--gpu-weights=shared"],
                                   "cuda", 1e-4),
    # bf16 recurrent products on the tensor cores (one block per direction
    # where it fits, and one 16-row tile per block). Against ONNX Runtime the
    # error is bf16's (up to 5e-2 of an element of 0.1 on the corpus); each
    # is also checked against the CPU-mapped twin, which rounds the same
    # operands (TWIN_TOLERANCE).
    "gpu-persistent-bf16": (["--target=gpu", "--gpu-design=persistent",
                             "--precision=bf16"], "cuda", 1e-1),
    "gpu-persistent-grid-bf16": (["--target=gpu", "--gpu-design=persistent",
                                  "--gpu-units-per-block=2", "--precision=bf16"],
                                 "cuda", 1e-1),
}
# The bf16 variants against their twin: lstm-run --gpu-kernels-on-cpu=persistent
# --precision=bf16 (the same roundings; only the order of the f32 sums differs).
TWIN_TOLERANCE = 1e-5
LIMIT_BYTES = 60 << 20


def run_tool(cmd, shapes):
    """Runs lstm-opt or lstm-run with the inputs' shapes fixed; None, or the
    last error line."""
    cmd = cmd + ["--input-shape=%s=%s" % (n, "x".join(map(str, s)) if s else "scalar")
                 for n, s in shapes.items()]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        errors = [l for l in p.stderr.splitlines() if "error" in l]
        return (errors or p.stderr.splitlines() or ["exit %d" % p.returncode])[-1]
    return None


def twin_outputs(lstm_opt, model, inputs, shapes, out):
    """The bf16 variants' reference: the CPU-mapped twin of the tensor-core
    design on the same inputs; None, or the error."""
    return run_tool([os.path.join(os.path.dirname(lstm_opt), "lstm-run"), model, "-q",
                     "--inputs=" + inputs, "--outputs=" + out,
                     "--gpu-kernels-on-cpu=persistent", "--precision=bf16"], shapes)


def compile_model(lstm_opt, model, flags, chip, out, shapes, target_cpu):
    cmd = [lstm_opt, model, "-o", out, "--target-cpu=" + target_cpu] + flags
    if any(f.startswith("--target=gpu") for f in flags):
        cmd.append("--gpu-chip=" + chip)
    return run_tool(cmd, shapes)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--models", nargs="*", default=None,
                    help="ONNX models (default: the e2e fixtures)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--chip", default="sm_90", help="--gpu-chip for the gpu variants")
    ap.add_argument("--target-cpu", default="x86-64-v3",
                    help="--target-cpu for the host code (default x86-64-v3: any AVX2 "
                         "machine, whatever CPU the GPU machine has)")
    ap.add_argument("--lstm-opt", default=os.path.join(ROOT, "build", "bin", "lstm-opt"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            sys.exit("gpu_bundle: unknown variant '%s' (%s)" % (v, ", ".join(VARIANTS)))
    models = args.models
    if models is None:
        mdir = os.path.join(ROOT, "test", "e2e", "models")
        manifest = json.load(open(os.path.join(mdir, "manifest.json")))
        models = [os.path.join(mdir, e["file"]) for e in manifest]
    out = os.path.abspath(args.out)
    if os.path.exists(out) and os.listdir(out):
        sys.exit("gpu_bundle: %s exists and is not empty" % out)
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    os.makedirs(os.path.join(out, "models"), exist_ok=True)

    # The runtime libraries the compiled models link against.
    libdir = os.path.join(os.path.dirname(os.path.dirname(args.lstm_opt)), "lib")
    libs = []
    for name in ["libLstmOptCUDNNRuntime.so", "libLstmOptGPURuntime.so"]:
        path = os.path.join(libdir, name)
        if os.path.exists(path):
            shutil.copy2(path, os.path.join(out, "lib", name))
            libs.append(name)
    for cudart in ["/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib/libcudart.so.13"]:
        if os.path.exists(cudart):
            shutil.copy2(cudart, os.path.join(out, "lib", "libcudart.so.13"))
            libs.append("libcudart.so.13")
            break
    # The cuDNN runtime's own device test (a C++ program), when it was built.
    device_test = os.path.join(os.path.dirname(args.lstm_opt), "LstmOptCUDNNDeviceTest")
    if os.path.exists(device_test):
        shutil.copy2(device_test, os.path.join(out, "lib", "LstmOptCUDNNDeviceTest"))
    shutil.copy2(os.path.join(ROOT, "python", "lstm_opt", "runtime.py"),
                 os.path.join(out, "lstm_opt_runtime.py"))
    shutil.copy2(os.path.join(ROOT, "scripts", "gpu_bundle_run.py"), os.path.join(out, "run.py"))
    shutil.copy2(os.path.join(ROOT, "scripts", "gpu_bundle_all.sh"), os.path.join(out, "run_all.sh"))

    entries = []
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        mdir = os.path.join(out, "models", name)
        os.makedirs(mdir, exist_ok=True)
        import onnx
        feeds = random_inputs(onnx.load(model), np.random.default_rng(args.seed),
                              dynamic_dim=2)
        ref = run_ort(model, feeds)
        np.savez(os.path.join(mdir, "inputs.npz"), **feeds)
        np.savez(os.path.join(mdir, "reference.npz"), **ref)
        shapes = {k: list(v.shape) for k, v in feeds.items() if v.dtype != np.int64 or v.size > 16}
        for v in variants:
            flags, device, tol = VARIANTS[v]
            so = os.path.join(mdir, v + ".so")
            err = compile_model(args.lstm_opt, model, flags, args.chip, so, shapes,
                                args.target_cpu)
            hdr = os.path.join(mdir, v + ".h")
            if os.path.exists(hdr):
                os.remove(hdr)
            entry = {"model": name, "variant": v, "device": device,
                     "so": os.path.relpath(so, out) if err is None else None,
                     "inputs": os.path.relpath(os.path.join(mdir, "inputs.npz"), out),
                     "reference": os.path.relpath(os.path.join(mdir, "reference.npz"), out),
                     "tolerance": tol, "compile_error": err}
            twin = os.path.join(mdir, "twin-bf16.npz")
            if "--precision=bf16" in flags and err is None:
                if not os.path.exists(twin):
                    err = twin_outputs(args.lstm_opt, model,
                                       os.path.join(mdir, "inputs.npz"), shapes, twin)
                if err is None:
                    entry.update(twin=os.path.relpath(twin, out), twin_tolerance=TWIN_TOLERANCE)
                else:
                    entry.update(so=None, compile_error="no twin reference: " + err)
            entries.append(entry)
            print("%-40s %-15s %s" % (name, v, "ok" if err is None else "not compiled: " + err))
    with open(os.path.join(out, "bundle.json"), "w") as f:
        json.dump({"chip": args.chip, "target_cpu": args.target_cpu, "libs": libs,
                   "entries": entries}, f, indent=1)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(README)
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(out) for n in ns)
    print("gpu_bundle: %d models x %d variants, %.1f MiB in %s"
          % (len(models), len(variants), size / 2**20, out))
    if size > LIMIT_BYTES:
        sys.exit("gpu_bundle: the bundle is larger than 60 MiB")


README = """# lstm-opt GPU bundle

Compiled models (lstm-opt --target=cpu|cudnn|gpu) with their inputs and ONNX
Runtime's outputs, and a runner that needs Python 3, numpy and the CUDA
driver; the cuDNN variants need cuDNN 9 as well, which the runner finds in
PyTorch's wheels (`nvidia/cudnn/lib` next to the `torch` package), in
`$CUDNN_LIB`, or on the system's library path.

    python3 run.py                 # every model and variant
    python3 run.py --repeat 100    # more timed runs
    python3 run.py --only gpu-     # variants whose name starts with gpu-
    bash run_all.sh                # the device test, every variant under a
                                   # timeout, bench.py, compute-sanitizer

It writes report.md and report.json here: per model and variant, pass/fail
against the reference (max relative error), median and min time. Without a
CUDA device the GPU variants are reported as skipped ("no CUDA device"),
never as passed.
"""

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""End-to-end check of the CPU backend on one model.

Usage: cpu_run.py --lstm-run PATH MODEL.onnx [--workdir DIR] [--batch N ...]
                  [--threads K ...]

For each batch size given for the model's symbolic dimensions (default 2
and 5) and each thread count (default 1 and 2): random inputs are written to
an npz, `lstm-run MODEL --inputs in.npz --outputs out.npz --threads K`
compiles and runs the ORIGINAL model, and every output must match ONNX
Runtime on the original model within a relative error of 1e-4 (5e-3 with
--device cuda)
(|a - b| <= 1e-4 * max(|b|, 1e-1) elementwise). Models without symbolic
dimensions run once per thread count. Prints the figures and
'cpu: N passed, M failed'; exits 1 on failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(__file__))
from ortutil import random_inputs, run_ort  # noqa: E402

RTOL = 1e-4  # cuDNN's default math may use TF32 on Ampere and later: 5e-3


def has_symbolic_dims(model):
    inits = {t.name for t in model.graph.initializer}
    return any(not d.HasField("dim_value")
               for i in model.graph.input if i.name not in inits
               for d in i.type.tensor_type.shape.dim)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--lstm-opt", help="unused; accepted for the lit runner")
    ap.add_argument("--workdir")
    ap.add_argument("--batch", type=int, action="append")
    ap.add_argument("--threads", type=int, action="append")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu",
                    help="cpu, cuda (lstm-run --device=cuda: cuDNN layers) "
                         "or gpu (--device=gpu: generated GPU kernels)")
    ap.add_argument("--extra", action="append", default=[],
                    help="an extra lstm-run flag (repeatable), e.g. "
                         "--extra=--gpu-kernels-on-cpu")
    ap.add_argument("model")
    a = ap.parse_args()
    # gpu: the generated kernels are fp32 FMA code (no TF32), as on the CPU.
    rtol = RTOL if a.device in ("cpu", "gpu") else 5e-3
    work = a.workdir or tempfile.mkdtemp(prefix="cpu-")
    os.makedirs(work, exist_ok=True)
    model = onnx.load(a.model)
    batches = (a.batch or [2, 5]) if has_symbolic_dims(model) else [None]
    threads = a.threads or [1, 2]
    rng = np.random.default_rng(a.seed)
    passed, failed = 0, 0
    for b in batches:
        feeds = random_inputs(model, rng, dynamic_dim=b or 2)
        ref = run_ort(a.model, feeds)
        inp = os.path.join(work, "in.npz")
        np.savez(inp, **feeds)
        for k in threads:
            out = os.path.join(work, f"out-b{b}-t{k}.npz")
            cmd = [a.lstm_run, a.model, "--inputs", inp, "--outputs", out,
                   "--threads", str(k), "--device", a.device] + a.extra
            proc = subprocess.run(cmd, capture_output=True, text=True)
            tag = f"batch={b} threads={k}"
            if proc.returncode != 0:
                print(f"FAIL {tag}: lstm-run exited {proc.returncode}\n"
                      f"{proc.stdout}{proc.stderr}")
                failed += 1
                continue
            got = dict(np.load(out))
            for name, want in ref.items():
                if name not in got:
                    print(f"FAIL {tag}: output '{name}' missing from {out}")
                    failed += 1
                    continue
                g = got[name]
                if g.shape != want.shape or g.dtype != want.dtype:
                    print(f"FAIL {tag}: output '{name}' is {g.dtype}{list(g.shape)}, "
                          f"ONNX Runtime gives {want.dtype}{list(want.shape)}")
                    failed += 1
                    continue
                if want.dtype.kind == "f":
                    err = np.abs(g.astype(np.float64) - want)
                    scale = np.maximum(np.abs(want), 1e-1)
                    rel = float(np.max(err / scale)) if err.size else 0.0
                    ok = rel <= rtol and np.all(np.isfinite(g) == np.isfinite(want))
                else:
                    rel = 0.0 if np.array_equal(g, want) else float("inf")
                    ok = rel == 0.0
                print(f"{'ok  ' if ok else 'FAIL'} {tag}: '{name}' "
                      f"{list(want.shape)} max rel err {rel:.2e}")
                passed += ok
                failed += not ok
    print(f"cpu: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

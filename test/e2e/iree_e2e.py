#!/usr/bin/env python3
"""lstm-opt's portable lowering consumed by IREE: every model compiled by
`lstm-opt --target=linalg`, then `iree-compile --iree-input-type=none`
(llvm-cpu, host CPU), run by `iree.runtime` (local-sync) on random inputs
(symbolic sizes 2, given to lstm-opt with --input-shape), against ONNX
Runtime on the original model: every output within 1e-5 relative
(max |a - b| / max |ref|).

With --variants, also the standard-node layers of cpu_variants.py (every
cell kind, directions, sequence_lens, clip, GRU linear_before_reset 0/1,
non-default activations, odd sizes), built in the workdir with their inputs.

With --precision bf16|int8 (--target=iree with lstm-opt's kernels), the
layers run at that precision, and the reference is lstm-run at the same
precision on one thread instead of ONNX Runtime: the same kernels, so the
outputs agree within 1e-6 (the rest of the graph is IREE's code there).

Usage: iree_e2e.py --lstm-opt PATH --iree-compile PATH --workdir DIR
                   [--variants] [--target linalg|iree|iree-vmfb]
                   [--iree-kernels lstm-opt|iree]
                   [--precision f32|bf16|int8 --lstm-run PATH] [MODEL.onnx ...]
Prints one line per model and 'iree: N passed, M failed'.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ortutil import random_inputs, run_ort  # noqa: E402

TOL = 1e-5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--iree-compile", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--target", default="linalg", choices=["linalg", "iree", "iree-vmfb"],
                    help="lstm-opt's target: linalg (upstream dialects only), iree "
                         "(each recurrence in one flow.dispatch.region), or iree-vmfb "
                         "(--target=iree -o m.vmfb: lstm-opt runs the IREE compiler "
                         "library itself; iree-compile is not used)")
    ap.add_argument("--iree-kernels", default="lstm-opt", choices=["lstm-opt", "iree"],
                    help="--target=iree: each layer as lstm-opt's CPU kernel in an IREE "
                         "dispatch (default), or IREE's own code for the time loop")
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16", "int8"])
    ap.add_argument("--lstm-run", help="with --precision: the reference lstm-run")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    import iree.runtime as rt
    passed = failed = 0
    cases = [(p, None) for p in a.models]
    if a.variants:
        from cpu_variants import LAYERS, layer_model
        for i, (name, spec) in enumerate(LAYERS.items()):
            if "big" in name:
                continue
            path = os.path.join(a.workdir, "variant_" + name + ".onnx")
            cases.append((path, layer_model(path, seed=i, **spec)))
    for path, given in cases:
        name = os.path.basename(path).replace(".onnx", "")
        model = onnx.load(path)
        feeds = given or random_inputs(model, np.random.default_rng(0))
        if a.precision == "f32":
            ref = run_ort(path, feeds)
        else:
            npz_in = os.path.join(a.workdir, name + ".in.npz")
            npz_out = os.path.join(a.workdir, name + ".ref.npz")
            np.savez(npz_in, **feeds)
            p = subprocess.run([a.lstm_run, path, "--inputs", npz_in, "--outputs", npz_out,
                                "--precision=" + a.precision, "--threads", "1", "-q"],
                               capture_output=True, text=True)
            if p.returncode:
                print(f"FAIL {name}: lstm-run --precision={a.precision}: {p.stderr.strip()[-400:]}")
                failed += 1
                continue
            with np.load(npz_out) as z:
                ref = {o.name: z[o.name] for o in model.graph.output}
        mlir = os.path.join(a.workdir, name + ".mlir")
        vmfb = os.path.join(a.workdir, name + ".vmfb")
        shapes = []
        for k, v in feeds.items():
            shape = "x".join(map(str, v.shape)) if v.ndim else "scalar"
            shapes.append(f"--input-shape={k}={shape}")
        target = "iree" if a.target == "iree-vmfb" else a.target
        out = vmfb if a.target == "iree-vmfb" else mlir
        kernels = [] if a.target == "linalg" else ["--iree-kernels=" + a.iree_kernels]
        if a.precision != "f32":
            kernels.append("--precision=" + a.precision)
        p = subprocess.run([a.lstm_opt, path, "--target=" + target, "-o", out] + shapes + kernels,
                           capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL {name}: lstm-opt --target={target} -o {os.path.basename(out)}: "
                  f"{p.stderr.strip()[-400:]}")
            failed += 1
            continue
        if a.target == "iree-vmfb":
            # The module lstm-opt compiled, for the dialect checks below.
            p = subprocess.run([a.lstm_opt, path, "--target=iree", "-o", mlir] + shapes + kernels,
                               capture_output=True, text=True)
        text = open(mlir).read()
        # lstm-opt's kernels: the graph holds one flow.dispatch per layer, the
        # executables after it call the kernels' object files (memref there).
        graph = text.split('"stream.executable"')[0]
        foreign = [d for d in ("onnx.", "rnn.", "memref.", "llvm.") if d in graph]
        if a.target == "linalg" and "flow." in text:
            foreign.append("flow.")
        # --target=iree: one dispatch region per direction's time loop.
        regions = text.count('"flow.dispatch.region"') + text.count('"flow.dispatch"(')
        kinds = "kernel dispatches" if '"flow.dispatch"(' in text else "dispatch regions"
        p = subprocess.run([a.iree_compile, mlir, "--iree-input-type=none",
                            "--iree-hal-target-device=local",
                            "--iree-hal-local-target-device-backends=llvm-cpu",
                            "--iree-llvmcpu-target-cpu=host", "-o", vmfb],
                           capture_output=True, text=True) if a.target != "iree-vmfb" else None
        if p and p.returncode:
            print(f"FAIL {name}: iree-compile: {p.stderr.strip()[-600:]}")
            failed += 1
            continue
        ctx = rt.SystemContext(config=rt.Config("local-sync"))
        with open(vmfb, "rb") as f:
            ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, f.read()))
        module = ctx.modules.module
        fn = re.search(r"func\.func @([\w$.-]+)\(", text).group(1)
        graph_inputs = [i.name for i in model.graph.input
                        if i.name not in {t.name for t in model.graph.initializer}]
        out = module[fn](*[feeds[k] for k in graph_inputs])
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        worst = 0.0
        for o, (k, r) in zip(outs, ref.items()):
            got = np.asarray(o.to_host() if hasattr(o, "to_host") else o)
            if got.shape != r.shape:
                worst = float("inf")
                break
            worst = max(worst, float(np.max(np.abs(got - r)) / max(np.max(np.abs(r)), 1e-30)))
        ok = worst <= (TOL if a.precision == "f32" else 1e-6) and len(outs) == len(ref) \
            and not foreign
        against = "ONNX Runtime" if a.precision == "f32" else f"lstm-run {a.precision}"
        print(f"{'ok  ' if ok else 'FAIL'} {name}: IREE on lstm-opt's {a.target} vs {against} "
              f"max rel {worst:.1e}" + (f", {regions} {kinds}" if a.target != "linalg" else "")
              + (f"; foreign dialects left: {foreign}" if foreign else ""),
              flush=True)
        passed += ok
        failed += not ok
    print(f"iree: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

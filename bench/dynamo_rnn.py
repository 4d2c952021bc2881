#!/usr/bin/env python3
"""PyTorch's nn.RNN through the dynamo exporter: the unrolled graph it writes,
what lstm-opt makes of it, and lstm-run, side by side in one run.

`torch.onnx.export(..., dynamo=True)` (the default since torch 2.9) writes
nn.LSTM and nn.GRU as ONNX LSTM/GRU nodes, but unrolls nn.RNN: torch.export's
decomposition, one input projection for all steps and per step a MatMul, two
Adds and the activation on a [1, B, H] state. For each size this script
exports such a model, fuses it with lstm-opt's default pipeline (an ONNX RNN
node), compiles it with `lstm-opt --target=cpu`, checks all three against
ONNX Runtime on the original, and times ONNX Runtime on the original, ONNX
Runtime on the fused model and lstm-run (CPU, one inference at a time,
median of N after warm-up).

Needs torch (the torch2 venv of test/e2e/models/README.md, which also has
onnxruntime):

    /opt/torch2venv/bin/python bench/dynamo_rnn.py --lstm-opt build/bin/lstm-opt \\
        --lstm-run build/bin/lstm-run --runs 50 --threads 1
"""
import argparse
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
from ort_unrolled_vs_fused import median_ms, session  # noqa: E402
from roundtrip_scale import cpu_name  # noqa: E402

# (T, B, I, H, layers, bidirectional, nonlinearity)
SIZES = [
    (100, 1, 64, 64, 1, False, "tanh"),
    (25, 1, 512, 512, 1, False, "tanh"),
    (50, 4, 128, 128, 2, True, "relu"),
]


class RNNModel(torch.nn.Module):
    def __init__(self, i, h, layers, bidir, act):
        super().__init__()
        self.rnn = torch.nn.RNN(i, h, num_layers=layers, bidirectional=bidir,
                                nonlinearity=act)

    def forward(self, x):
        return self.rnn(x)[0]


def export(path, t, b, i, h, layers, bidir, act):
    torch.manual_seed(0)
    model = RNNModel(i, h, layers, bidir, act).eval()
    x = torch.randn(t, b, i)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                          dynamo=True, external_data=False, verbose=False)
        logging.disable(logging.NOTSET)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", default="build/bin/lstm-opt")
    ap.add_argument("--lstm-run", default="build/bin/lstm-run")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="lstm-opt-dynamo-rnn-")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; torch {torch.__version__}, "
          f"onnxruntime {ort.__version__}, {a.threads} thread(s), median of {a.runs}")
    print("| T, B, I, H, layers | nodes | ORT original ms | ORT fused ms | lstm-run ms "
          "| fused vs original | lstm-run vs original | max abs diff (fused, lstm-run) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for (t, b, i, h, layers, bidir, act) in SIZES:
        tag = f"t{t}_b{b}_i{i}_h{h}_l{layers}{'_bi' if bidir else ''}_{act}"
        orig = os.path.join(work, tag + ".onnx")
        fused = os.path.join(work, tag + ".fused.onnx")
        lib = os.path.join(work, tag + ".so")
        export(orig, t, b, i, h, layers, bidir, act)
        nodes = len(onnx.load(orig).graph.node)
        for cmd in ([a.lstm_opt, orig, "-o", fused],
                    [a.lstm_opt, orig, "--target=cpu", f"--threads={a.threads}", "-o", lib]):
            subprocess.run(cmd, check=True, capture_output=True)
        fused_ops = {n.op_type for n in onnx.load(fused).graph.node}
        assert "RNN" in fused_ops and not fused_ops & {"Tanh", "Relu"}, fused_ops
        x = np.random.default_rng(0).standard_normal((t, b, i)).astype(np.float32)
        feeds = {"x": x}
        so, sf = session(orig, a.threads), session(fused, a.threads)
        ref, got = so.run(None, feeds)[0], sf.run(None, feeds)[0]
        npz_in, npz_out = os.path.join(work, tag + ".in.npz"), os.path.join(work, tag + ".out.npz")
        np.savez(npz_in, x=x)
        run = subprocess.run([a.lstm_run, lib, "--inputs", npz_in, "--outputs", npz_out,
                              f"--threads={a.threads}", f"--bench={a.runs}"],
                             check=True, capture_output=True, text=True)
        ours = np.load(npz_out)["y"]
        m = re.search(r"median_ms: ([0-9.eE+-]+)", run.stdout + run.stderr)
        t_run = float(m.group(1))
        t_orig, t_fused = median_ms(so, feeds, a.runs)[0], median_ms(sf, feeds, a.runs)[0]
        print(f"| {t}, {b}, {i}, {h}, {layers}{' bidir' if bidir else ''} {act} | {nodes} "
              f"| {t_orig:.3f} | {t_fused:.3f} | {t_run:.3f} | {t_orig / t_fused:.1f}x "
              f"| {t_orig / t_run:.1f}x | {np.abs(ref - got).max():.1e}, "
              f"{np.abs(ref - ours).max():.1e} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""End-to-end check of the default pipeline on one exported model.

Usage: fusion.py --lstm-opt PATH --manifest manifest.json MODEL.onnx [--workdir DIR]

Runs `lstm-opt MODEL -o fused.onnx --report=json` and checks, against the
manifest's "expected" entry for MODEL:
  * onnx's checker (full_check) accepts the result;
  * no per-step cell op remains (Sigmoid, Tanh, Relu, HardSigmoid, Softsign,
    Softplus, Elu, LeakyRelu, ThresholdedRelu), in the
    graph or a subgraph, beyond the entry's "kept_ops" (the model's own
    activations outside its cells, such as a per-step projection's ReLU);
  * the number of ONNX LSTM / GRU / RNN nodes (in a Loop that stays, its
    step's) is the number of expected layers of each kind;
  * ONNX Runtime gives the original's outputs, max relative error <= 1e-5
    (|a - b| <= 1e-5 * max(|a|, 1e-1) elementwise), on two random inputs.
Prints the figures and 'fusion: N passed, M failed'; exits 1 on failure.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(__file__))
from ortutil import iter_nodes, random_inputs, run_ort  # noqa: E402

CELL_OPS = {"Sigmoid", "Tanh", "Relu", "HardSigmoid", "Softsign", "Softplus", "Elu",
            "LeakyRelu", "ThresholdedRelu"}
failures, passes = [], 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--workdir")
    ap.add_argument("model")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="fusion-")
    os.makedirs(work, exist_ok=True)
    name = os.path.basename(a.model)
    entries = {e["file"]: e for e in json.load(open(a.manifest))}
    expected = entries[name]["expected"]

    out = os.path.join(work, "fused.onnx")
    rep = os.path.join(work, "report.json")
    proc = subprocess.run([a.lstm_opt, a.model, "-o", out, "--report=json",
                           "--report-file", rep], capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr)
        print(f"fusion {name}: 0 passed, 1 failed")
        sys.exit(1)
    report = json.load(open(rep))
    fused = onnx.load(out)
    try:
        onnx.checker.check_model(fused, full_check=True)
        check(True, "")
    except Exception as e:  # noqa: BLE001
        check(False, f"onnx.checker: {e}")

    # Nodes of the graph and of its subgraphs: a Loop whose trip count is
    # known only when the model runs stays a Loop, its step fused inside.
    ops = collections.Counter(n.op_type for n in iter_nodes(fused.graph))
    # "kept_ops": activations of the model's own that are not a cell's (a
    # projection's ReLU computed per step before the cell), which stay.
    kept = expected.get("kept_ops", {})
    left = {k: v - kept.get(k, 0) for k, v in ops.items() if k in CELL_OPS and v != kept.get(k, 0)}
    check(not left, f"per-step cell ops remain (beyond kept_ops {kept}): {left}")
    want = collections.Counter(l["kind"].upper() for l in expected["layers"])
    for kind in ("LSTM", "GRU", "RNN"):
        check(ops.get(kind, 0) == want.get(kind, 0),
              f"{kind} nodes: {ops.get(kind, 0)}, expected {want.get(kind, 0)}")

    orig = onnx.load(a.model)
    worst = 0.0
    for seed in (0, 1):
        feeds = random_inputs(orig, np.random.default_rng(seed), dynamic_dim=3)
        ra, rb = run_ort(a.model, feeds), run_ort(out, feeds)
        for x, y in ((ra[k], rb[k]) for k in ra):
            if x.shape != y.shape:
                check(False, f"output shape {y.shape}, expected {x.shape}")
                continue
            if x.size:
                rel = np.max(np.abs(x - y) / np.maximum(np.abs(x), 1e-1))
                worst = max(worst, float(rel))
    check(worst <= 1e-5, f"max relative error {worst:.3g} > 1e-5")

    print(f"{name}: nodes {report['nodes_before']} -> {report['nodes_after']}, "
          f"ops after {dict(ops)}, max rel err {worst:.2g}")
    for r in report["remarks"]:
        print(f"  {r['severity']}: {r['node']}: {r['message']}")
    print(f"fusion {name}: {passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

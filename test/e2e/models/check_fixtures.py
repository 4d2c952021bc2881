#!/usr/bin/env python3
"""Verify every ONNX fixture listed in manifest.json (plus the quick-start example).

For each entry: the file exists and is small, onnx.checker.check_model (full_check)
passes, the default-domain opset equals the manifest's, the graph inputs/outputs
have the names and shapes the manifest records, the number of ONNX LSTM/GRU/RNN
nodes equals expected.standard_rnn_ops, and one onnxruntime run on random inputs
(symbolic dims bound to 3) returns finite outputs of the recorded shapes.

    .venv/bin/python test/e2e/models/check_fixtures.py                   # verify
    .venv/bin/python test/e2e/models/check_fixtures.py --update-manifest # also store node_count/op_counts/size_bytes
    .venv/bin/python test/e2e/models/check_fixtures.py --markdown        # also print a node-count table

Needs numpy, onnx and onnxruntime.  Exits non-zero if any check fails.
The last line is "check_fixtures: N passed, M failed".
"""
import argparse
import collections
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
MANIFEST = os.path.join(HERE, "manifest.json")
EXAMPLE = os.path.join(REPO, "examples", "lstmcell_unrolled.onnx")
MAX_FILE_BYTES = 200 * 1024
MAX_TOTAL_BYTES = 3 * 1024 * 1024
SYM_DIM_VALUE = 3
STANDARD_RNN_OPS = {"LSTM", "GRU", "RNN"}
REQUIRED_KEYS = ("file", "generator", "exporter", "opset", "description", "inputs", "expected", "gate_order")

_NP_TYPES = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32,
}


def _shape(vi):
    return [d.dim_param if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]


def _bind(shape):
    return [SYM_DIM_VALUE if isinstance(d, str) else d for d in shape]


def check_one(path, entry, rng):
    """Returns (problems, info) for one model; entry may be None (example)."""
    problems = []
    info = {"size_bytes": os.path.getsize(path)}
    if info["size_bytes"] > MAX_FILE_BYTES:
        problems.append("file is %d bytes (> %d)" % (info["size_bytes"], MAX_FILE_BYTES))
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as ex:  # noqa: BLE001
        problems.append("onnx.checker: %s" % str(ex).splitlines()[0])
    g = model.graph
    ops = collections.Counter(n.op_type for n in g.node)
    info["node_count"] = len(g.node)
    info["op_counts"] = dict(sorted(ops.items()))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    info["opset"] = opset
    inits = {i.name for i in g.initializer}
    inputs = [i for i in g.input if i.name not in inits]
    n_std = sum(ops[o] for o in STANDARD_RNN_OPS)

    if entry is not None:
        missing = [k for k in REQUIRED_KEYS if k not in entry]
        if missing:
            problems.append("manifest entry lacks %s" % ", ".join(missing))
        if opset != entry.get("opset"):
            problems.append("opset %s != manifest %s" % (opset, entry.get("opset")))
        got_in = {i.name: _shape(i) for i in inputs}
        if got_in != entry.get("inputs"):
            problems.append("inputs %s != manifest %s" % (got_in, entry.get("inputs")))
        if "outputs" in entry:
            # The manifest records the logical output shapes.  An exporter may leave a dim
            # symbolic (with an invented name) where the manifest has a number; that is
            # accepted here, and the runtime shape is checked against the manifest below.
            got_out = {o.name: _shape(o) for o in g.output}
            if list(got_out) != list(entry["outputs"]):
                problems.append("output names %s != manifest %s" % (list(got_out), list(entry["outputs"])))
            else:
                for name, decl in got_out.items():
                    want = entry["outputs"][name]
                    ok = len(decl) == len(want) and all(
                        isinstance(d, str) or d == w for d, w in zip(decl, want))
                    if not ok:
                        problems.append("output %s declared %s, manifest %s" % (name, decl, want))
        exp = entry.get("expected", {})
        if exp.get("standard_rnn_ops") != n_std:
            problems.append("%d LSTM/GRU/RNN nodes, manifest expects %s" % (n_std, exp.get("standard_rnn_ops")))
        for lay in exp.get("layers", []):
            for k in ("kind", "steps", "direction", "hidden", "input"):
                if k not in lay:
                    problems.append("expected layer lacks %r" % k)

    # One onnxruntime run on random inputs.
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feeds = {}
        ranges = (entry or {}).get("input_ranges", {})
        for vi in inputs:
            dt = _NP_TYPES[vi.type.tensor_type.elem_type]
            shp = _bind(_shape(vi))
            if np.issubdtype(dt, np.integer):
                lo, hi = ranges.get(vi.name, [0, 2])
                feeds[vi.name] = rng.integers(lo, hi, size=shp).astype(dt)
            else:
                feeds[vi.name] = rng.standard_normal(shp).astype(dt)
        outs = sess.run(None, feeds)
        logical = (entry or {}).get("outputs", {})
        for vi, val in zip(g.output, outs):
            want = _bind(logical.get(vi.name, _shape(vi)))
            if list(val.shape) != want:
                problems.append("output %s has shape %s, expected %s" % (vi.name, list(val.shape), want))
            if not np.all(np.isfinite(val)):
                problems.append("output %s is not finite" % vi.name)
    except Exception as ex:  # noqa: BLE001
        problems.append("onnxruntime: %s" % str(ex).splitlines()[0])
    return problems, info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update-manifest", action="store_true",
                    help="write node_count, op_counts and size_bytes into manifest.json")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table of node counts")
    ap.add_argument("--no-example", action="store_true", help="skip examples/lstmcell_unrolled.onnx")
    args = ap.parse_args()

    with open(MANIFEST) as f:
        manifest = json.load(f)
    rng = np.random.default_rng(0)
    passed = failed = 0
    total = 0
    rows = []
    seen = set()
    items = [(os.path.join(HERE, e["file"]), e) for e in manifest]
    if not args.no_example:
        items.append((EXAMPLE, None))
    for path, entry in items:
        rel = os.path.relpath(path, REPO)
        if entry is not None and entry["file"] in seen:
            print("FAIL %s: duplicate manifest entry" % rel)
            failed += 1
            continue
        if entry is not None:
            seen.add(entry["file"])
        if not os.path.exists(path):
            print("FAIL %s: missing" % rel)
            failed += 1
            continue
        problems, info = check_one(path, entry, rng)
        total += info["size_bytes"]
        if entry is not None:
            for k in ("node_count", "op_counts", "size_bytes"):
                if args.update_manifest:
                    entry[k] = info[k]
                elif k in entry and entry[k] != info[k]:
                    problems.append("%s %s != manifest %s (rerun with --update-manifest)" % (k, info[k], entry[k]))
        status = "FAIL" if problems else "ok  "
        print("%s %-52s opset %-2s nodes %4d  %6d B  %s" % (
            status, rel, info["opset"], info["node_count"], info["size_bytes"],
            " ".join("%s:%d" % kv for kv in info["op_counts"].items())))
        for p in problems:
            print("       - " + p)
        if problems:
            failed += 1
        else:
            passed += 1
        rows.append((rel, entry, info))

    on_disk = {f for f in os.listdir(HERE) if f.endswith(".onnx")}
    for f in sorted(on_disk - seen):
        print("FAIL %s: .onnx file not listed in manifest.json" % f)
        failed += 1
    if total > MAX_TOTAL_BYTES:
        print("FAIL total fixture size %d bytes > %d" % (total, MAX_TOTAL_BYTES))
        failed += 1
    print("total size %d bytes (%.1f KiB) in %d models" % (total, total / 1024.0, len(rows)))

    if args.update_manifest:
        with open(MANIFEST, "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
        print("updated %s" % os.path.relpath(MANIFEST, REPO))
    if args.markdown:
        print()
        print("| fixture | generator | opset | nodes | LSTM/GRU/RNN ops | expected | size (B) |")
        print("| --- | --- | ---: | ---: | ---: | --- | ---: |")
        for rel, entry, info in rows:
            n_std = sum(info["op_counts"].get(o, 0) for o in STANDARD_RNN_OPS)
            if entry is None:
                gen, exp = "examples/make_example.py", "lstm, 16 steps, H=32, I=32"
            else:
                gen = entry["generator"]
                exp = "; ".join("%s %s %s steps H=%s I=%s" % (
                    l["kind"], l["direction"], l["steps"], l["hidden"], l["input"])
                    for l in entry["expected"]["layers"])
            print("| `%s` | %s | %s | %d | %d | %s | %d |" % (
                os.path.basename(rel), gen, info["opset"], info["node_count"], n_std, exp, info["size_bytes"]))
        print()
    print("check_fixtures: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end round-trip check of one ONNX model through lstm-opt.

Usage: roundtrip.py --lstm-opt PATH MODEL.onnx [--workdir DIR]

Runs three round trips and compares each result with the original:
  pure:    lstm-opt MODEL -o out.onnx --pass-pipeline='builtin.module()'
  default: lstm-opt MODEL -o out.onnx            (the default pipeline:
           fused cells, so outputs are compared within rtol 1e-5)
  text:    lstm-opt MODEL -o m.mlir; lstm-opt m.mlir -o out.onnx
For the pure round trip everything must be identical: model fields, opsets,
metadata, graph inputs/outputs (names, types, symbolic dims), initializers
(names and bytes), nodes (names, types, inputs, outputs, attributes) and the
original value_info. For every result: onnx's checker (full_check) passes and
ONNX Runtime gives bit-identical outputs on the same random inputs.
Prints one line per check and 'roundtrip: N passed, M failed' at the end;
exits 1 if anything failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from ortutil import random_inputs, run_ort  # noqa: E402

failures = []
passes = 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"FAIL: command {' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}")
        sys.exit(1)
    return proc


def type_str(t):
    return t.SerializeToString()


def io_sig(values):
    return [(v.name, type_str(v.type)) for v in values]


def attr_value(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, onnx.TensorProto):
        arr = numpy_helper.to_array(v)
        return ("tensor", arr.dtype.str, arr.shape, arr.tobytes())
    if isinstance(v, onnx.GraphProto):
        return ("graph", graph_sig(v))
    if isinstance(v, list):
        return tuple(attr_value_item(x) for x in v)
    return v


def graph_sig(g):
    """A subgraph, field by field: what the pure round trip must keep.
    Node attributes compare as a set (their order carries no meaning);
    value_info entries the original had must come back (more may be added)."""
    inits = tuple(sorted((t.name, numpy_helper.to_array(t).dtype.str,
                          numpy_helper.to_array(t).tobytes()) for t in g.initializer))
    return (g.name, g.doc_string, tuple(io_sig(g.input)), tuple(io_sig(g.output)), inits,
            tuple(node_sig(n) + (n.doc_string,) for n in g.node))


def subgraph_value_info_lost(g0, g1):
    """Names of original subgraph value_info entries missing or changed in
    the corresponding subgraph of the result (nodes paired by position)."""
    lost = []
    for n0, n1 in zip(g0.node, g1.node):
        for a0, a1 in zip(sorted(n0.attribute, key=lambda a: a.name),
                          sorted(n1.attribute, key=lambda a: a.name)):
            subs0 = ([a0.g] if a0.type == onnx.AttributeProto.GRAPH else list(a0.graphs))
            subs1 = ([a1.g] if a1.type == onnx.AttributeProto.GRAPH else list(a1.graphs))
            for s0, s1 in zip(subs0, subs1):
                vi1 = {v.name: type_str(v.type) for v in s1.value_info}
                lost += [v.name for v in s0.value_info if vi1.get(v.name) != type_str(v.type)]
                lost += subgraph_value_info_lost(s0, s1)
    return lost


def attr_value_item(x):
    if isinstance(x, onnx.GraphProto):
        return ("graph", graph_sig(x))
    if isinstance(x, onnx.TensorProto):
        arr = numpy_helper.to_array(x)
        return ("tensor", arr.dtype.str, arr.shape, arr.tobytes())
    return x


def node_sig(n):
    attrs = sorted((a.name, repr(attr_value(a))) for a in n.attribute)
    return (n.name, n.op_type, n.domain or "", tuple(n.input), tuple(n.output), tuple(attrs))


def compare_structure(orig, new, tag):
    check(orig.ir_version == new.ir_version, f"{tag}: ir_version {orig.ir_version} vs {new.ir_version}")
    check(sorted((o.domain, o.version) for o in orig.opset_import) ==
          sorted((o.domain, o.version) for o in new.opset_import), f"{tag}: opset_import")
    for field in ["producer_name", "producer_version", "domain", "model_version", "doc_string"]:
        check(getattr(orig, field) == getattr(new, field), f"{tag}: model.{field}")
    check([(p.key, p.value) for p in orig.metadata_props] ==
          [(p.key, p.value) for p in new.metadata_props], f"{tag}: metadata_props")
    g0, g1 = orig.graph, new.graph
    check(g0.name == g1.name and g0.doc_string == g1.doc_string, f"{tag}: graph name/doc_string")
    check(io_sig(g0.input) == io_sig(g1.input), f"{tag}: graph inputs (names, types, dims)")
    check(io_sig(g0.output) == io_sig(g1.output), f"{tag}: graph outputs (names, types, dims)")
    s0 = [node_sig(n) for n in g0.node]
    s1 = [node_sig(n) for n in g1.node]
    check(s0 == s1, f"{tag}: nodes (names, types, inputs, outputs, attributes) "
                    f"[{len(s0)} vs {len(s1)} nodes]")
    if s0 != s1:
        for a, b in zip(s0, s1):
            if a != b:
                print(f"  first difference:\n    {a}\n    {b}")
                break
    vi1 = {v.name: type_str(v.type) for v in g1.value_info}
    missing = [v.name for v in g0.value_info if vi1.get(v.name) != type_str(v.type)]
    check(not missing, f"{tag}: original value_info kept (missing/changed: {missing[:5]})")
    lost = subgraph_value_info_lost(g0, g1)
    check(not lost, f"{tag}: subgraphs' value_info kept (missing/changed: {lost[:5]})")
    # metadata_props (IR 10+) of nodes, graph inputs/outputs and value_info.
    props = lambda x: [(p.key, p.value) for p in x.metadata_props]  # noqa: E731
    check([props(n) for n in g0.node] == [props(n) for n in g1.node],
          f"{tag}: node metadata_props")
    check([props(v) for v in list(g0.input) + list(g0.output)] ==
          [props(v) for v in list(g1.input) + list(g1.output)],
          f"{tag}: graph input/output metadata_props")
    vp1 = {v.name: props(v) for v in g1.value_info}
    lost = [v.name for v in g0.value_info if vp1.get(v.name) != props(v)]
    check(not lost, f"{tag}: value_info metadata_props (lost: {lost[:5]})")


def compare_initializers(orig, new, tag):
    i0 = {t.name: numpy_helper.to_array(t) for t in orig.graph.initializer}
    i1 = {t.name: numpy_helper.to_array(t) for t in new.graph.initializer}
    check(sorted(i0) == sorted(i1), f"{tag}: initializer names")
    bad = [n for n in i0 if n in i1 and not (
        i0[n].dtype == i1[n].dtype and i0[n].shape == i1[n].shape and
        i0[n].tobytes() == i1[n].tobytes())]
    check(not bad, f"{tag}: initializer tensors identical (differ: {bad[:5]})")


def compare_ort(orig_path, new_path, feeds, tag, exact=True):
    """Bit-identical outputs, or (exact=False, for rewritten graphs) equal
    within rtol 1e-5 / atol 1e-6."""
    a = run_ort(orig_path, feeds)
    b = run_ort(new_path, feeds)
    check(sorted(a) == sorted(b), f"{tag}: ORT output names")
    def same(x, y):
        if x.shape != y.shape:
            return False
        if exact:
            return np.array_equal(x, y, equal_nan=True)
        return np.allclose(x, y, rtol=1e-5, atol=1e-6)
    bad = [k for k in a if k in b and not same(a[k], b[k])]
    what = "bit-identical" if exact else "equal within rtol 1e-5"
    check(not bad, f"{tag}: ORT outputs {what} (differ: {bad})")


def checker(path, tag):
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        check(True, "")
    except Exception as e:  # noqa: BLE001
        check(False, f"{tag}: onnx.checker: {e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("model")
    ap.add_argument("--workdir")
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="roundtrip-")
    os.makedirs(work, exist_ok=True)
    orig = onnx.load(args.model)
    feeds = random_inputs(orig, np.random.default_rng(0))
    tool = args.lstm_opt

    pure = os.path.join(work, "pure.onnx")
    run([tool, args.model, "-o", pure, "--pass-pipeline=builtin.module()"])
    new = onnx.load(pure)
    compare_structure(orig, new, "pure")
    compare_initializers(orig, new, "pure")
    checker(pure, "pure")
    compare_ort(args.model, pure, feeds, "pure")

    default = os.path.join(work, "default.onnx")
    run([tool, args.model, "-o", default])
    checker(default, "default")
    # The default pipeline rewrites recurrent cells: equal within tolerance.
    compare_ort(args.model, default, feeds, "default", exact=False)

    mlir = os.path.join(work, "model.mlir")
    text = os.path.join(work, "text.onnx")
    run([tool, args.model, "-o", mlir, "--pass-pipeline=builtin.module()"])
    run([tool, mlir, "-o", text])
    new = onnx.load(text)
    check(io_sig(orig.graph.input) == io_sig(new.graph.input), "text: graph inputs")
    check(io_sig(orig.graph.output) == io_sig(new.graph.output), "text: graph outputs")
    compare_initializers(orig, new, "text")
    checker(text, "text")
    compare_ort(args.model, text, feeds, "text")

    name = os.path.basename(args.model)
    print(f"roundtrip {name}: {passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

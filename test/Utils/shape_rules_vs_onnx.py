"""The onnx dialect's shape rules against the ONNX library's shape inference.

Builds random chains of the shape-moving operators the dialect has typed ops
for (Transpose, Reshape, Squeeze, Unsqueeze, Slice, Concat, Split, Gather,
Expand, MatMul, Gemm, Shape, ConstantOfShape, elementwise ops), with
negative axes, clamped and negative-step slices, 0/-1 reshape entries and
broadcasting. Each model is imported by lstm-opt *without* the ONNX
library's inference (--no-shape-inference), the rules fill in the types
(-onnx-infer-shapes), and every intermediate value's type is compared with
what onnx.shape_inference (strict mode) infers. A model that the library
refuses is skipped; one that lstm-opt refuses, or any difference, is a
failure.

Prints 'models: N checked, M values compared, K skipped' and exits 1 on a
difference.

Usage: shape_rules_vs_onnx.py --lstm-opt PATH [--models N] [--seed S]
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, rng, opset):
        self.rng = rng
        self.opset = opset
        self.nodes, self.inits = [], []
        self.n = 0

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def const(self, values, dtype=np.int64):
        name = self.name("c")
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op, inputs, outputs=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs if outputs > 1 else outs[0]


def step(b, rng, x, shape):
    """One random op on x (shape known to this generator); returns the new
    value and its shape, or None when the op does not apply."""
    rank = len(shape)
    op = rng.choice(["Transpose", "Reshape", "Squeeze", "Unsqueeze", "Slice",
                     "Concat", "Split", "Gather", "Expand", "MatMul", "Gemm",
                     "Add", "Sigmoid", "ShapeReshape", "ConstantOfShape",
                     "MatMulBatch", "MatMulVector", "SplitEqual", "SqueezeAll"])
    if op == "Transpose" and rank >= 1:
        perm = list(range(rank))
        rng.shuffle(perm)
        if rng.random() < 0.3:
            return b.node("Transpose", [x]), shape[::-1]
        return b.node("Transpose", [x], perm=perm), [shape[p] for p in perm]
    if op == "Reshape":
        total = int(np.prod(shape))
        if total == 0:
            return None  # a literal 0 in the target would mean "copy"
        dims = []
        rest = total
        while rest > 1 and len(dims) < 3:
            divs = [d for d in range(2, rest + 1) if rest % d == 0]
            d = rng.choice(divs)
            dims.append(d)
            rest //= d
        if rest > 1 or not dims:
            dims.append(rest)
        target = list(dims)
        if rng.random() < 0.5:
            target[rng.randrange(len(target))] = -1
        for i in range(min(len(target), rank)):
            if target[i] != -1 and shape[i] == target[i] and rng.random() < 0.5:
                target[i] = 0
        return b.node("Reshape", [x, b.const(target)]), dims
    if op == "Squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        if not ones:
            return None
        axes = rng.sample(ones, rng.randint(1, len(ones)))
        axes = [a - rank if rng.random() < 0.5 else a for a in axes]
        norm = {a % rank for a in axes}
        return (b.node("Squeeze", [x, b.const(axes)]),
                [d for i, d in enumerate(shape) if i not in norm])
    if op == "Unsqueeze" and rank < 5:
        out_rank = rank + rng.randint(1, 2)
        axes = rng.sample(range(out_rank), out_rank - rank)
        out, it = [], iter(shape)
        for i in range(out_rank):
            out.append(1 if i in axes else next(it))
        axes = [a - out_rank if rng.random() < 0.5 else a for a in axes]
        return b.node("Unsqueeze", [x, b.const(axes)]), out
    if op == "Slice" and rank >= 1:
        k = rng.randint(1, rank)
        axes = rng.sample(range(rank), k)
        starts, ends, steps, out = [], [], [], list(shape)
        for a in axes:
            n = shape[a]
            step_ = rng.choice([1, 1, 2, -1, -2, 3])
            s = rng.randint(-n - 2, n + 2)
            e = rng.choice([rng.randint(-n - 2, n + 2), 2**62, -2**62])
            starts.append(s), ends.append(e), steps.append(step_)
            out[a] = len(range(*slice(s, e, step_).indices(n)))
        signed = [a - rank if rng.random() < 0.5 else a for a in axes]
        y = b.node("Slice", [x, b.const(starts), b.const(ends), b.const(signed),
                             b.const(steps)])
        return y, out
    if op == "Concat" and rank >= 1:
        a = rng.randrange(rank)
        out = list(shape)
        out[a] *= 2
        return b.node("Concat", [x, x], axis=a - rank if rng.random() < 0.5 else a), out
    if op == "Split" and rank >= 1:
        a = rng.randrange(rank)
        if shape[a] < 2:
            return None
        first = rng.randint(1, shape[a] - 1)
        y0, y1 = b.node("Split", [x, b.const([first, shape[a] - first])], outputs=2,
                        axis=a)
        out = list(shape)
        out[a] = first if rng.random() < 0.5 else shape[a] - first
        return (y0 if out[a] == first else y1), out
    if op == "Gather" and rank >= 1:
        a = rng.randrange(rank)
        if shape[a] == 0:
            return None
        ishape = rng.choice([[], [2], [2, 3]])
        idx = np.array(rng.choices(range(-shape[a], shape[a]), k=int(np.prod(ishape))),
                       dtype=np.int64).reshape(ishape)
        out = shape[:a] + ishape + shape[a + 1:]
        return b.node("Gather", [x, b.const(idx)], axis=a), out
    if op == "Expand" and rank <= 3:
        target = [rng.choice([1, 2, 3])] + [1 if d != 1 else rng.choice([1, 4]) for d in shape]
        out = list(np.broadcast_shapes(tuple(shape), tuple(target)))
        return b.node("Expand", [x, b.const(target)]), [int(d) for d in out]
    if op == "MatMul" and rank >= 1:
        k = shape[-1]
        n = rng.randint(1, 4)
        w = b.const(np.ones((k, n), np.float32), np.float32)
        return b.node("MatMul", [x, w]), shape[:-1] + [n]
    if op == "MatMulBatch" and rank >= 2:
        k = shape[-1]
        batch = [rng.choice([1, d]) for d in shape[:-2]]
        if rng.random() < 0.5:
            batch = [rng.randint(1, 2)] + batch
        w = b.const(np.ones(batch + [k, 2], np.float32), np.float32)
        return b.node("MatMul", [x, w]), [int(d) for d in np.broadcast_shapes(
            tuple(shape[:-2]), tuple(batch))] + [shape[-2], 2]
    if op == "MatMulVector" and rank >= 1:
        w = b.const(np.ones((shape[-1],), np.float32), np.float32)
        if rank == 1:
            return None  # a scalar: nothing left to chain
        return b.node("MatMul", [x, w]), shape[:-1]
    if op == "SplitEqual" and rank >= 1:
        a = rng.randrange(rank)
        n = rng.randint(2, 3)
        if b.opset >= 18:
            if shape[a] < n:
                return None
            outs = b.node("Split", [x], outputs=n, axis=a, num_outputs=n)
            part = -(-shape[a] // n)
            sizes = [min(part, shape[a] - i * part) for i in range(n)]
        else:
            if shape[a] % n:
                return None
            outs = b.node("Split", [x], outputs=n, axis=a)
            sizes = [shape[a] // n] * n
        j = rng.randrange(n)
        if sizes[j] <= 0:
            return None
        out = list(shape)
        out[a] = sizes[j]
        return outs[j], out
    if op == "SqueezeAll" and 1 in shape:
        return b.node("Squeeze", [x]), [d for d in shape if d != 1]
    if op == "Gemm" and rank == 2:
        ta, tb = rng.randint(0, 1), rng.randint(0, 1)
        m, k = (shape[1], shape[0]) if ta else (shape[0], shape[1])
        n = rng.randint(1, 4)
        w = b.const(np.ones((n, k) if tb else (k, n), np.float32), np.float32)
        c = b.const(np.ones((n,), np.float32), np.float32)
        return b.node("Gemm", [x, w, c], transA=ta, transB=tb), [m, n]
    if op == "Add":
        other = [d if rng.random() < 0.6 else 1 for d in shape[rng.randint(0, rank):]]
        y = b.node("Add", [x, b.const(np.ones(other, np.float32), np.float32)])
        return y, shape
    if op == "Sigmoid":
        return b.node("Sigmoid", [x]), shape
    if op == "ShapeReshape" and rank >= 1:
        # Reshape to its own shape, read back through Shape(start, end).
        s = b.node("Shape", [x])
        return b.node("Reshape", [x, s]), shape
    if op == "ConstantOfShape":
        s = b.node("Shape", [x], start=rng.randint(-rank, rank), end=rng.randint(-rank, rank + 1))
        c = b.node("ConstantOfShape", [s],
                   value=numpy_helper.from_array(np.array([1.5], np.float32)))
        return c, None
    return None


def make_model(rng):
    b = Builder(rng, rng.choice([17, 18]))
    shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 4))]
    x = "x"
    cur, cur_shape = x, shape
    for _ in range(rng.randint(2, 6)):
        r = step(b, rng, cur, cur_shape)
        if r is None:
            continue
        cur, cur_shape = r
        if cur_shape is None:
            break
    y = b.node("Identity", [cur])
    graph = helper.make_graph(
        b.nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", b.opset)])


NAMES = re.compile(r'onnx\.names = \[([^\]]*)\]')


def our_types(tool, path):
    """{value name: dims or None} from lstm-opt's rules."""
    out = subprocess.run([tool, path, "--no-shape-inference",
                          "-pass-pipeline=builtin.module(onnx-infer-shapes)"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    types = {}
    for line in out.stdout.splitlines():
        m = NAMES.search(line)
        if not m or "->" not in line:
            continue
        names = re.findall(r'"([^"]*)"', m.group(1))
        results = line.rsplit("->", 1)[1].strip()
        if results.startswith("("):
            results = results[1:-1]
        for n, t in zip(names, results.split(", ")):
            dm = re.match(r"tensor<((?:[0-9?]+x)*)[a-z0-9]+>$", t.strip())
            types[n] = None if not dm else [
                None if d == "?" else int(d) for d in dm.group(1).split("x")[:-1]]
    return types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    checked = compared = skipped = total = 0
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.models):
            model = make_model(rng)
            try:
                inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
            except Exception:
                skipped += 1
                continue
            ref = {}
            for vi in inferred.graph.value_info:
                t = vi.type.tensor_type
                if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
                    ref[vi.name] = [d.dim_value for d in t.shape.dim]
            path = os.path.join(tmp, f"m{i}.onnx")
            onnx.save(model, path)
            try:
                ours = our_types(args.lstm_opt, path)
            except RuntimeError as e:
                bad.append(f"model {i}: lstm-opt refused it: {e}")
                continue
            checked += 1
            total += len(ref)
            for name, dims in ref.items():
                if name not in ours:
                    bad.append(f"model {i}: {name}: not in lstm-opt's output")
                    continue
                compared += 1
                if ours[name] != dims:
                    ops = " -> ".join(n.op_type for n in model.graph.node)
                    bad.append(f"model {i} ({ops}): {name}: rules {ours[name]}, "
                               f"ONNX {dims}")
    for line in bad[:20]:
        print("FAIL:", line)
    print(f"models: {checked} checked, {compared} of {total} values compared, "
          f"{skipped} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

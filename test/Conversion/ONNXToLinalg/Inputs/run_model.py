#!/usr/bin/env python3
"""Runs ONNX models through convert-onnx-to-linalg and upstream MLIR, and
compares the results with ONNX Runtime.

Usage: run_model.py --lstm-opt BIN --mlir-opt BIN --mlir-runner BIN
                    --libs LIB1,LIB2 MODEL[:NAME=D0xD1...] ...

For each model: fixes the given graph inputs' symbolic sizes (onnx shape
inference then makes every type static, as the CPU driver does), lowers the
whole graph with `lstm-opt --pass-pipeline=builtin.module(convert-onnx-to-linalg)`
(no recognition, so every node goes through the pass), adds a `main` that
calls the graph on random inputs (as constants) and prints each output with
printMemrefF32, lowers to LLVM with mlir-opt, runs it with mlir-runner and
compares with ONNX Runtime on the same inputs. Prints
`OK <model>: <n> outputs, max error <e>` per model, where the error is
max |got - expected| / (1 + |expected|); exits 1 if it exceeds 1e-4 for any
output (printMemrefF32 prints six significant digits, and ONNX Runtime sums
in another order).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import shape_inference

LOWER_TO_LLVM = [
    "--allow-unregistered-dialect",
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-linalg-to-loops", "--convert-scf-to-cf",
    "--expand-strided-metadata", "--lower-affine", "--finalize-memref-to-llvm",
    "--convert-math-to-llvm", "--convert-arith-to-llvm",
    "--convert-func-to-llvm", "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
]
ELEMENT = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64",
           np.dtype(np.int32): "i32"}


def specialise(model, shapes):
    """Gives the graph inputs in `shapes` those sizes and re-infers types."""
    for value in model.graph.input:
        if value.name in shapes:
            dims = value.type.tensor_type.shape.dim
            for d, size in zip(dims, shapes[value.name]):
                d.ClearField("dim_param")
                d.dim_value = size
    for value in model.graph.output:
        for d in value.type.tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                d.ClearField("dim_param")
    del model.graph.value_info[:]
    return shape_inference.infer_shapes(model)


def tensor_type(a):
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + ELEMENT[a.dtype] + ">"


def dense(a):
    def nest(x):
        if x.ndim == 0:
            return repr(float(x)) if a.dtype == np.float32 else str(int(x))
        return "[" + ", ".join(nest(y) for y in x) + "]"
    return f"dense<{nest(a)}> : {tensor_type(a)}"


def make_main(ir, feeds):
    """`ir` with a main() that calls its graph function on `feeds`."""
    func = re.search(r"func\.func @([\w.$-]+)\((.*)$", ir, re.M)
    name = func.group(1)
    results = func.group(2).split(" -> ", 1)[1]
    results = re.sub(r"\{[^{}]*\}", "", results.split(" attributes ")[0])
    result_types = re.findall(r"tensor<[^>]*>", results)
    lines = ["func.func private @printMemrefF32(tensor<*xf32>)",
             "func.func @main() {"]
    args, types = [], []
    for k, a in enumerate(feeds.values()):
        lines.append(f"  %in{k} = arith.constant {dense(a)}")
        args.append(f"%in{k}")
        types.append(tensor_type(a))
    outs = [f"%r{k}" for k in range(len(result_types))]
    lines.append(f"  {', '.join(outs)} = call @{name}({', '.join(args)}) : "
                 f"({', '.join(types)}) -> ({', '.join(result_types)})")
    for out, t in zip(outs, result_types):
        lines.append(f"  %u{out[1:]} = tensor.cast {out} : {t} to tensor<*xf32>")
        lines.append(f"  call @printMemrefF32(%u{out[1:]}) : (tensor<*xf32>) -> ()")
    lines += ["  return", "}"]
    body, sep, resources = ir.partition("{-#")
    end = body.rstrip().rfind("}")  # the module's closing brace
    return body[:end] + "\n".join(lines) + "\n" + body[end:] + sep + resources


def parse_prints(text):
    """The data of each printMemrefF32 call, flattened."""
    values = []
    for block in text.split("Unranked Memref")[1:]:
        data = block.split("data =", 1)[1]
        numbers = re.findall(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", data)
        values.append(np.array([float(n) for n in numbers]))
    return values


def run(spec, tools, tmp):
    path, _, shape_spec = spec.partition(":")
    shapes = {}
    for item in filter(None, shape_spec.split(",")):
        input_name, dims = item.split("=")
        shapes[input_name] = [int(d) for d in dims.split("x")]
    model = specialise(onnx.load(path), shapes)
    model_path = os.path.join(tmp, os.path.basename(path))
    onnx.save(model, model_path)

    rng = np.random.default_rng(0)
    initializers = {i.name for i in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        dims = [d.dim_value for d in t.shape.dim]
        if t.elem_type == onnx.TensorProto.FLOAT:
            feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
        else:  # token ids
            feeds[value.name] = rng.integers(0, 4, dims).astype(
                onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))
    session = ort.InferenceSession(model_path,
                                   providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)

    ir = subprocess.run(
        [tools.lstm_opt, model_path,
         "--pass-pipeline=builtin.module(convert-onnx-to-linalg)",
         "--emit=mlir", "-o", "-"],
        check=True, capture_output=True, text=True).stdout
    llvm = subprocess.run([tools.mlir_opt] + LOWER_TO_LLVM,
                          input=make_main(ir, feeds), check=True,
                          capture_output=True, text=True).stdout
    # mlir-runner cannot parse the module's #onnx.opset attributes.
    llvm = re.sub(r"^module attributes \{.*\} \{$", "module {", llvm,
                  count=1, flags=re.M)
    printed = subprocess.run(
        [tools.mlir_runner, "-e", "main", "-entry-point-result=void",
         f"-shared-libs={tools.libs}"],
        input=llvm, check=True, capture_output=True, text=True).stdout
    got = parse_prints(printed)

    name = os.path.basename(path)
    if len(got) != len(expected):
        print(f"FAIL {name}: {len(got)} outputs printed, expected "
              f"{len(expected)}")
        return False
    worst = 0.0
    for k, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(e, np.float64).ravel()
        if g.size != e.size:
            print(f"FAIL {name}: output {k} has {g.size} values, expected "
                  f"{e.size}")
            return False
        if e.size:
            worst = max(worst, float(np.max(np.abs(g - e) /
                                            (1 + np.abs(e)))))
    if not worst <= 1e-4:
        print(f"FAIL {name}: max error {worst:.1e}")
        return False
    print(f"OK {name}: {len(expected)} outputs, max error {worst:.0e}")
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lstm-opt", dest="lstm_opt", required=True)
    parser.add_argument("--mlir-opt", dest="mlir_opt", required=True)
    parser.add_argument("--mlir-runner", dest="mlir_runner", required=True)
    parser.add_argument("--libs", required=True)
    parser.add_argument("models", nargs="+")
    tools = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for spec in tools.models:
            try:
                ok &= run(spec, tools, tmp)
            except subprocess.CalledProcessError as e:
                print(f"FAIL {spec}: {' '.join(e.cmd[:2])} exited with "
                      f"{e.returncode}\n{e.stderr[-3000:]}")
                ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

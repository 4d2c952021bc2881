#!/usr/bin/env python3
"""Checks lstm-run on a model with com.microsoft.DynamicQuantizeLSTM layers.

Usage: check_dynquant.py LSTM_RUN MODEL.onnx WORKDIR

lstm-run imports the layer with its weights dequantized exactly, and runs it
on the int8 kernels (the model's own precision: weights requantized per gate
row, x and h quantized per row and step), or in f32 with --precision=f32.
Two references, both from ONNX Runtime on random inputs:
  * the same model with each DynamicQuantizeLSTM replaced by a float ONNX
    LSTM whose W/R are dequantized here, independently, with numpy
    ((q - zero_point) * scale, transposed to [D, 4H, K]): lstm-run
    --precision=f32 must agree within 1e-4 (|a - b| <= 1e-4 * max(|b|, 0.1));
  * ONNX Runtime on the quantized model itself, which also quantizes x and h
    to uint8 per GEMM: its distance to the float reference is the
    quantization's own error; lstm-run's default (int8) run must be within
    3x of it from the float reference, and closer to it than 0.1 (a layer
    run wrong is 0.3 and more away).
Prints 'dynquant: N passed, M failed'.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper


def dequantized_model(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    nodes = []
    for n in m.graph.node:
        if n.op_type != "DynamicQuantizeLSTM":
            nodes.append(n)
            continue
        ins = list(n.input) + [""] * (12 - len(n.input))

        def deq(q, s, z):
            qa = inits[ins[q]].astype(np.int32)
            sc = inits[ins[s]].astype(np.float32)
            zp = inits[ins[z]].astype(np.int32) if ins[z] else np.zeros_like(sc, np.int32)
            # [D] or [D, 4H] scales; q is [D, K, 4H]
            sc = sc.reshape(sc.shape[0], 1, -1)
            zp = zp.reshape(zp.shape[0], 1, -1)
            w = ((qa - zp).astype(np.float32) * sc).astype(np.float32)
            return np.ascontiguousarray(w.transpose(0, 2, 1))
        wn, rn = n.name + "_Wf", n.name + "_Rf"
        m.graph.initializer.extend([numpy_helper.from_array(deq(1, 8, 9), wn),
                                    numpy_helper.from_array(deq(2, 10, 11), rn)])
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        for k in ("direction",):
            if isinstance(attrs.get(k), bytes):
                attrs[k] = attrs[k].decode()
        lstm_in = [ins[0], wn, rn] + ins[3:8]
        while lstm_in and lstm_in[-1] == "":
            lstm_in.pop()
        nodes.append(helper.make_node("LSTM", lstm_in, list(n.output),
                                      name=n.name + "_f32", **attrs))
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m


def main():
    lstm_run, path, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    model = onnx.load(path)
    rng = np.random.default_rng(3)
    feeds = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type == onnx.TensorProto.INT32:
            feeds[i.name] = rng.integers(0, shape and 6 or 1, size=shape).astype(np.int32)
            feeds[i.name][0] = 5  # at least one full-length row ...
            feeds[i.name][-1] = 0  # ... and one empty
        else:
            feeds[i.name] = rng.uniform(-1, 1, size=shape).astype(np.float32)
    np.savez(os.path.join(work, "in.npz"), **feeds)
    runs = {}
    for prec in ("f32", "default"):
        out_npz = os.path.join(work, f"out.{prec}.npz")
        subprocess.run([lstm_run, path, "--inputs", os.path.join(work, "in.npz"),
                        "--outputs", out_npz] + (["--precision=f32"] if prec == "f32" else []),
                       check=True)
        runs[prec] = np.load(out_npz)
    names = [o.name for o in model.graph.output]
    f32 = ort.InferenceSession(dequantized_model(model).SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(names, feeds)
    quant = ort.InferenceSession(model.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(names, feeds)
    passed = failed = 0
    for name, ref, q in zip(names, f32, quant):
        a = runs["f32"][name]
        tol = 1e-4 * np.maximum(np.abs(ref), 0.1)
        ok = a.shape == ref.shape and bool(np.all(np.abs(a - ref) <= tol))
        print("%s %s --precision=f32: max |lstm-run - ORT(dequantized f32)| = %.3g; "
              "max |lstm-run - ORT(DynamicQuantizeLSTM)| = %.3g" %
              ("PASS" if ok else "FAIL", name, np.max(np.abs(a - ref)),
               np.max(np.abs(a - q))))
        passed += ok
        failed += not ok
        a = runs["default"][name]
        own = float(np.max(np.abs(q - ref)))  # ONNX Runtime's int8 error
        err = float(np.max(np.abs(a - ref)))
        ok = a.shape == ref.shape and err <= 3 * own and float(np.max(np.abs(a - q))) <= 0.1
        print("%s %s int8: max |lstm-run - ORT(dequantized f32)| = %.3g (ORT int8's: %.3g); "
              "max |lstm-run - ORT(DynamicQuantizeLSTM)| = %.3g" %
              ("PASS" if ok else "FAIL", name, err, own, np.max(np.abs(a - q))))
        passed += ok
        failed += not ok
    print("dynquant: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

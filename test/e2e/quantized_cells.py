#!/usr/bin/env python3
"""Unrolled cells quantized by onnxruntime.quantization.quantize_dynamic.

An unrolled LSTM (PyTorch style) and an unrolled GRU (bench/make_unrolled_*.py)
are quantized the way users do it: every MatMul becomes
DynamicQuantizeLinear + MatMulInteger + Cast + Mul, with int8 weights per
tensor, int8 per output column (per_channel) or uint8. For each:
  * the ONNX target (lstm-opt -o out.onnx) keeps the quantized MatMuls for
    ONNX Runtime, with a remark, and ONNX Runtime on its output gives the
    quantized model's numbers (|a - b| <= 1e-6 * max|b|);
  * the CPU target fuses the steps into one int8 layer (two for a
    bidirectional one; lstm-opt
    --target=cpu --report=json: one layer, a remark naming precision int8);
  * lstm-run (int8, the model's own precision) and lstm-run --precision=f32
    are as far from the float model as ONNX Runtime on the quantized model,
    within 2x (max |y - y_f32| / max |y_f32|).

The corpus LSTM language model goes the same way: its embedding becomes a
uint8 Gather + DequantizeLinear and its head DynamicQuantizeLinear +
MatMulInteger, which lstm-run runs as they are. And quantize_static on the
unrolled LSTM and GRU, in the QDQ format over every op and over the MatMuls
only, and in the QOperator format (QLinearMatMul): cells whose only
roundings are their MatMuls' become int8 layers, the others stay with a
remark naming the rounding; lstm-run as far from the float model as ONNX
Runtime on the quantized one, within 2x.

Usage: quantized_cells.py --lstm-opt PATH --lstm-run PATH --workdir DIR
Prints one line per model and 'quantized: N passed, M failed'.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
from onnxruntime.quantization import QuantType, quantize_dynamic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ortutil import run_ort  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def calibration(seed, make, batches=4):
    """quantize_static's calibration data: `batches` feeds made by make(rng)."""
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.n = 0

        def get_next(self):
            if self.n == batches:
                return None
            self.n += 1
            return make(np.random.default_rng(seed + self.n))

    return Reader()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    passed = failed = 0
    floats = {}
    for kind, maker, extra in (("lstm", "make_unrolled_lstm.py", ["--style", "torch"]),
                               ("gru", "make_unrolled_gru.py", [])):
        path = os.path.join(a.workdir, kind + ".onnx")
        subprocess.run([sys.executable, os.path.join(SRC, "bench", maker), path, "--steps", "8",
                        "--hidden", "32", "--input", "16", "--batch", "2"] + extra,
                       check=True, capture_output=True)
        floats[kind] = path
    # A whole model: an LSTM language model (embedding, LSTMCell loop,
    # Linear head): quantize_dynamic also makes the embedding a uint8
    # Gather + DequantizeLinear and the head DynamicQuantizeLinear +
    # MatMulInteger, which lstm-run runs as they are.
    floats["lm"] = os.path.join(SRC, "test", "e2e", "models", "torch_lstm_lm.onnx")
    # Keras 3 GRUs (reset after, forward and bidirectional): their many
    # quantized MatMuls once made recognition read a dequantized weight
    # cached for an op since erased (another op at its address): weights
    # that changed from compile to compile.
    for k in ("keras3_gru_unroll", "keras3_bidir_gru_unroll"):
        floats[k] = os.path.join(SRC, "test", "e2e", "models", k + ".onnx")
    for kind, f32 in floats.items():
        for name, opts in (("s8", dict(weight_type=QuantType.QInt8)),
                           ("s8_per_channel", dict(weight_type=QuantType.QInt8, per_channel=True)),
                           ("u8", dict(weight_type=QuantType.QUInt8))):
            tag = f"{kind}_{name}"
            q = os.path.join(a.workdir, tag + ".onnx")
            quantize_dynamic(f32, q, **opts)
            import onnx
            m = onnx.load(q)
            rng = np.random.default_rng(3)
            feeds = {}
            inits = {i.name for i in m.graph.initializer}
            for vi in m.graph.input:
                if vi.name not in inits:
                    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
                    if vi.type.tensor_type.elem_type == onnx.TensorProto.INT64:
                        feeds[vi.name] = rng.integers(0, 10, shape).astype(np.int64)
                    else:
                        feeds[vi.name] = rng.uniform(-1, 1, shape).astype(np.float32)
            ref, refq = run_ort(f32, feeds), run_ort(q, feeds)
            ort_err = max(rel(refq[k], ref[k]) for k in ref)
            problems = []
            # The ONNX target: the quantized MatMuls stay, numbers unchanged.
            out = os.path.join(a.workdir, tag + ".out.onnx")
            p = subprocess.run([a.lstm_opt, q, "-o", out], capture_output=True, text=True)
            if p.returncode or "stays as it is for ONNX Runtime" not in p.stderr:
                problems.append("ONNX target: " + p.stderr.strip()[-200:])
            else:
                got = run_ort(out, feeds)
                if max(rel(got[k], refq[k]) for k in refq) > 1e-6:
                    problems.append("ONNX target changed the numbers")
            # The CPU target: one int8 layer.
            rep = os.path.join(a.workdir, tag + ".json")
            p = subprocess.run([a.lstm_opt, q, "--target=cpu", "-o",
                                os.path.join(a.workdir, tag + ".so"), "--report=json",
                                "--report-file", rep], capture_output=True, text=True)
            if p.returncode:
                problems.append("--target=cpu: " + p.stderr.strip()[-200:])
            else:
                r = json.load(open(rep))
                int8 = any("precision int8" in x["message"] for x in r["remarks"])
                # (The CPU target runs a bidirectional layer's directions
                # as two layers, as it does at f32.)
                want = 2 if "bidir" in kind else 1
                if len(r["layers"]) != want or not int8:
                    problems.append(f"--target=cpu: {len(r['layers'])} layers, int8 {int8}")
            # The same compiled code every time.
            texts = []
            for i in range(3):
                lin = os.path.join(a.workdir, f"{tag}.{i}.mlir")
                p = subprocess.run([a.lstm_opt, q, "--target=linalg", "-o", lin],
                                   capture_output=True, text=True)
                texts.append(open(lin).read() if not p.returncode else p.stderr)
            if len(set(texts)) != 1:
                problems.append("--target=linalg: the output differs from run to run")
            # lstm-run, int8 and f32.
            inp = os.path.join(a.workdir, tag + ".in.npz")
            np.savez(inp, **feeds)
            errs = {}
            for prec in ("int8", "f32"):
                o = os.path.join(a.workdir, f"{tag}.{prec}.npz")
                cmd = [a.lstm_run, q, "--inputs", inp, "--outputs", o, "-q"]
                if prec == "f32":
                    cmd.append("--precision=f32")
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode:
                    problems.append(f"lstm-run {prec}: " + p.stderr.strip()[-200:])
                    continue
                got = dict(np.load(o))
                errs[prec] = max(rel(got[k], ref[k]) for k in ref)
                if errs[prec] > 2 * ort_err:
                    problems.append(f"lstm-run {prec} error {errs[prec]:.1e} > 2x ONNX Runtime's")
            ok = not problems
            print(f"{'ok  ' if ok else 'FAIL'} {tag}: error against the float model: ONNX Runtime "
                  f"{ort_err:.1e}, lstm-run int8 {errs.get('int8', float('nan')):.1e}, "
                  f"f32 {errs.get('f32', float('nan')):.1e}" + ("; " + "; ".join(problems) if problems else ""))
            passed += ok
            failed += not ok
    # quantize_static, calibrated on random inputs, in three forms:
    #   qdq      the QDQ format over every op it quantizes (its default):
    #            QuantizeLinear + DequantizeLinear around the cells' Adds,
    #            Muls and activations too, rounding the cell's values;
    #   mm_qdq   QDQ, op_types_to_quantize=['MatMul'], per channel: each
    #            MatMul's input and product rounded, its weight dequantized;
    #   mm_qop   the QOperator format, MatMuls only: QuantizeLinear +
    #            QLinearMatMul + DequantizeLinear;
    #   qop      the QOperator format over every op it quantizes:
    #            com.microsoft's QLinearAdd, QLinearMul, QLinearSigmoid and
    #            QLinearConcat too, which the compiled targets run as their
    #            QDQ form.
    # The CPU target makes an int8 layer of a cell whose only roundings are
    # its MatMuls' (LSTM: mm_qdq, mm_qop; GRU: mm_qop) and otherwise leaves
    # it, with a remark naming the QuantizeLinear that rounds a value inside
    # the cell (qdq, qop; the GRU's mm_qdq, whose state update reads the
    # rounded h). The ONNX target keeps every model as it is (ONNX Runtime on its
    # output is ONNX Runtime on the input). lstm-run is as far from the float
    # model as ONNX Runtime on the quantized one, within 2x.
    # A real PyTorch export (nn.LSTMCell over 5 steps: Gemm, not MatMul) the
    # same way with op_types_to_quantize=['Gemm']: QDQ (mm_qdq) makes one
    # int8 layer, each step's int32 bias (quantized to its own input scale)
    # within the model's rounding of the first's; the QOperator format
    # (com.microsoft.QGemm, mm_qop) shares one int32 bias between steps
    # whose input scales differ, so each step's bias differs (by ONNX
    # Runtime's own arithmetic) and each step is a one-step int8 layer.
    from onnxruntime.quantization import QuantFormat, quantize_static
    import onnx
    floats["cell"] = os.path.join(SRC, "test", "e2e", "models",
                                  "torch2_lstmcell_batchfirst_op20.onnx")
    # Fused layers per quantized form where the CPU target fuses (int8).
    fuses = {("lstm", "mm_qdq"): 1, ("lstm", "mm_qop"): 1, ("gru", "mm_qop"): 1,
             ("cell", "mm_qdq"): 1, ("cell", "mm_qop"): 5}
    for kind in ("lstm", "gru", "cell"):
        f32 = floats[kind]
        product = "Gemm" if kind == "cell" else "MatMul"
        m = onnx.load(f32)
        shapes = [(vi.name, [d.dim_value for d in vi.type.tensor_type.shape.dim])
                  for vi in m.graph.input]

        def Reader():
            return calibration(10, lambda r: {n: r.uniform(-1, 1, sh).astype(np.float32)
                                              for n, sh in shapes})

        for name, opts in (("qdq", dict(quant_format=QuantFormat.QDQ)),
                           ("mm_qdq", dict(quant_format=QuantFormat.QDQ, per_channel=True,
                                           op_types_to_quantize=[product])),
                           ("mm_qop", dict(quant_format=QuantFormat.QOperator,
                                           per_channel=kind == "cell",
                                           op_types_to_quantize=[product])),
                           ("qop", dict(quant_format=QuantFormat.QOperator))):
            tag = f"{kind}_{name}"
            q = os.path.join(a.workdir, tag + ".onnx")
            quantize_static(f32, q, Reader(), **opts)
            rng = np.random.default_rng(3)
            feeds = {n: rng.uniform(-1, 1, sh).astype(np.float32) for n, sh in shapes}
            ref, refq = run_ort(f32, feeds), run_ort(q, feeds)
            ort_err = max(rel(refq[k], ref[k]) for k in ref)
            problems = []
            out = os.path.join(a.workdir, tag + ".out.onnx")
            p = subprocess.run([a.lstm_opt, q, "-o", out], capture_output=True, text=True)
            if p.returncode:
                problems.append("ONNX target: " + p.stderr.strip()[-200:])
            elif max(rel(v, refq[k]) for k, v in run_ort(out, feeds).items()) > 1e-6:
                problems.append("ONNX target changed the numbers")
            rep = os.path.join(a.workdir, tag + ".json")
            p = subprocess.run([a.lstm_opt, q, "--target=cpu", "-o",
                                os.path.join(a.workdir, tag + ".so"), "--report=json",
                                "--report-file", rep], capture_output=True, text=True)
            layers = "?"
            if p.returncode:
                problems.append("--target=cpu: " + p.stderr.strip()[-200:])
            else:
                r = json.load(open(rep))
                layers = len(r["layers"])
                int8 = any("precision int8" in x["message"] for x in r["remarks"])
                rounds = any("rounds a value inside the cell" in x["message"]
                             for x in r["remarks"])
                if (kind, name) in fuses and (layers != fuses[kind, name] or not int8):
                    problems.append(f"--target=cpu: {layers} layers, int8 {int8}")
                if (kind, name) not in fuses and (layers != 0 or not rounds):
                    problems.append(f"--target=cpu: {layers} layers, remark {rounds}")
            inp, o = os.path.join(a.workdir, tag + ".in.npz"), os.path.join(a.workdir, tag + ".out.npz")
            np.savez(inp, **feeds)
            p = subprocess.run([a.lstm_run, q, "--inputs", inp, "--outputs", o, "-q"],
                               capture_output=True, text=True)
            err = float("nan")
            if p.returncode:
                problems.append("lstm-run: " + p.stderr.strip()[-200:])
            else:
                got = dict(np.load(o))
                err = max(rel(got[k], ref[k]) for k in ref)
                if err > 2 * ort_err:
                    problems.append(f"lstm-run error {err:.1e} > 2x ONNX Runtime's")
            ok = not problems
            print(f"{'ok  ' if ok else 'FAIL'} {tag}: {layers} layers; error against the float "
                  f"model: ONNX Runtime {ort_err:.1e}, lstm-run {err:.1e}"
                  + ("; " + "; ".join(problems) if problems else ""))
            passed += ok
            failed += not ok
    # The seq2seq encoder calling a 2-layer nn.GRU per token, quantize_static
    # QDQ over every op: each step a layer of its own, the state rounded
    # between them. Tokens that repeat (lstm-run compiles small int64 inputs
    # in) give two layers the same step input; each layer call once read
    # it where the first call did, and an op in between wrote over that
    # buffer. lstm-run now equals ONNX Runtime on the quantized model.
    enc = os.path.join(SRC, "test", "e2e", "models", "torch2_s2s_encoder_gru2_op18.onnx")
    m = onnx.load(enc)
    h0_shape = [d.dim_value for d in m.graph.input[1].type.tensor_type.shape.dim]
    steps = m.graph.input[0].type.tensor_type.shape.dim[0].dim_value

    q = os.path.join(a.workdir, "s2s_gru2_qdq.onnx")
    quantize_static(enc, q, calibration(20, lambda r: {
        "tokens": r.integers(0, 20, [steps]).astype(np.int64),
        "h0": r.uniform(-1, 1, h0_shape).astype(np.float32)}), quant_format=QuantFormat.QDQ)
    feeds = {"tokens": np.array([1, 1, 1, 0, 0][:steps] + [2] * max(0, steps - 5), np.int64),
             "h0": np.random.default_rng(5).uniform(-1, 1, h0_shape).astype(np.float32)}
    refq = run_ort(q, feeds)
    inp, o = os.path.join(a.workdir, "s2s_gru2_qdq.in.npz"), os.path.join(a.workdir, "s2s_gru2_qdq.out.npz")
    np.savez(inp, **feeds)
    p = subprocess.run([a.lstm_run, q, "--inputs", inp, "--outputs", o, "-q"],
                       capture_output=True, text=True)
    if p.returncode:
        ok, msg = False, "lstm-run: " + p.stderr.strip()[-200:]
    else:
        got = dict(np.load(o))
        err = max(rel(got[k], refq[k]) for k in refq)
        ok, msg = err <= 1e-5, f"lstm-run against ONNX Runtime on it: {err:.1e}"
    print(f"{'ok  ' if ok else 'FAIL'} s2s_gru2_qdq: {msg}")
    passed += ok
    failed += not ok
    print(f"quantized: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Makes the DynamicQuantizeLSTM fixtures of dynamic-quantize-lstm.test.

Run with the repository's .venv (onnx, onnxruntime, numpy):

    .venv/bin/python test/Tools/lstm-run/Inputs/make_dynquant_lstm.py

Each is a float ONNX LSTM (random weights) quantized by ONNX Runtime's own
`onnxruntime.quantization.quantize_dynamic`, as users quantize models (and as
ddddocr ships its OCR model): the LSTM becomes com.microsoft.DynamicQuantizeLSTM
with int8/uint8 W [D, I, 4H] and R [D, H, 4H] and their scales/zero points.

  * dq_lstm_bidir_int8_channel.onnx: bidirectional, int8 weights with one
    scale per gate row (per_channel=True), bias, initial states as inputs;
  * dq_lstm_fwd_uint8_tensor.onnx: forward, uint8 weights with one scale and
    a non-zero zero point per direction, sequence_lens and a clip.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

HERE = os.path.dirname(os.path.abspath(__file__))


def lstm_model(path, direction, T, B, I, H, lens=False, clip=None, states=False):
    D = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(11)
    W = (rng.standard_normal((D, 4 * H, I)) * 0.3).astype(np.float32)
    R = (rng.standard_normal((D, 4 * H, H)) * 0.3).astype(np.float32)
    Bi = (rng.standard_normal((D, 8 * H)) * 0.1).astype(np.float32)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I])]
    lstm_in = ["x", "W", "R", "B"]
    if lens:
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [B]))
        lstm_in.append("lens")
    else:
        lstm_in.append("")
    if states:
        inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [D, B, H])
                   for n in ("h0", "c0")]
        lstm_in += ["h0", "c0"]
    attrs = {"direction": direction, "hidden_size": H}
    if clip is not None:
        attrs["clip"] = clip
    node = helper.make_node("LSTM", lstm_in, ["y", "yh", "yc"], name="lstm", **attrs)
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [T, D, B, H]),
               helper.make_tensor_value_info("yh", TensorProto.FLOAT, [D, B, H]),
               helper.make_tensor_value_info("yc", TensorProto.FLOAT, [D, B, H])]
    graph = helper.make_graph(
        [node], "dq_lstm", inputs, outputs,
        [numpy_helper.from_array(a, n) for a, n in ((W, "W"), (R, "R"), (Bi, "B"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    f32 = path + ".f32.onnx"
    onnx.save(model, f32)
    return f32


def main():
    for name, kw, per_channel, wtype in (
            ("dq_lstm_bidir_int8_channel", dict(direction="bidirectional", T=6,
             B=2, I=12, H=24, states=True), True, QuantType.QInt8),
            ("dq_lstm_fwd_uint8_tensor", dict(direction="forward", T=5, B=3,
             I=10, H=16, lens=True, clip=4.0), False, QuantType.QUInt8)):
        out = os.path.join(HERE, name + ".onnx")
        f32 = lstm_model(out, **kw)
        quantize_dynamic(f32, out, weight_type=wtype, per_channel=per_channel)
        os.remove(f32)
        m = onnx.load(out)
        assert [n.op_type for n in m.graph.node] == ["DynamicQuantizeLSTM"], m.graph.node
        print(out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()

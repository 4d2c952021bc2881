#!/usr/bin/env python3
"""Keras recurrent layers over a time axis of unknown length, exported by
tf2onnx as ONNX Loops, against lstm-opt's fused model, in ONNX Runtime.

A Keras GRU, Bidirectional(GRU) or SimpleRNN with unroll=False over an input
of shape (None, None, F) becomes an ONNX Loop whose trip count is read from
the input's shape when the model runs: it cannot be unrolled, and ONNX
Runtime runs its body's nodes once per step. lstm-opt
(rnn-loop-to-sequence) makes each Loop one GRU/RNN node with the time axis
left dynamic. Two steps, since TensorFlow and ONNX Runtime live in different
venvs here:

    /opt/keras3venv/bin/python bench/keras_dyntime.py export DIR   # Keras 3 + tf2onnx
    .venv/bin/python bench/keras_dyntime.py time DIR --lstm-opt build/bin/lstm-opt

`time` fuses each model, checks it against ONNX Runtime on the original and
prints, per model and T, ONNX Runtime's median ms on both (one thread, batch
1, median of --runs).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

MODELS = ("gru", "bigru", "rnn")
H, I = 128, 64


def export(out):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    import tf2onnx
    make = {"gru": lambda: keras.layers.GRU(H, return_sequences=True),
            "bigru": lambda: keras.layers.Bidirectional(keras.layers.GRU(H, return_sequences=True)),
            "rnn": lambda: keras.layers.SimpleRNN(H, return_sequences=True)}
    os.makedirs(out, exist_ok=True)
    for name in MODELS:
        keras.utils.set_random_seed(1)
        inp = keras.Input(shape=(None, I), name="x")
        model = keras.Model(inp, make[name]()(inp))
        spec = (tf.TensorSpec((1, None, I), tf.float32, name="x"),)
        tf2onnx.convert.from_keras(model, input_signature=spec, opset=18,
                                   output_path=os.path.join(out, f"keras_{name}.onnx"))
        print("wrote", name)


def timing(d, lstm_opt, runs):
    import onnxruntime as ort
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ort_unrolled_vs_fused import median_ms, session  # noqa: E402
    from roundtrip_scale import cpu_name  # noqa: E402

    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; onnxruntime {ort.__version__}, "
          f"1 thread, median of {runs}")
    print("| Keras layer (H128, I64, B1, time axis None) | T | ORT on the Loop ms "
          "| ORT on lstm-opt's output ms | speed-up | max abs diff |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in MODELS:
        orig = os.path.join(d, f"keras_{name}.onnx")
        fused = os.path.join(d, f"keras_{name}.fused.onnx")
        subprocess.run([lstm_opt, orig, "-o", fused], check=True, capture_output=True)
        a, b = session(orig, 1), session(fused, 1)
        for T in (25, 100):
            feeds = {"x": np.random.default_rng(T).standard_normal((1, T, I)).astype(np.float32)}
            diff = float(np.max(np.abs(a.run(None, feeds)[0] - b.run(None, feeds)[0])))
            if diff > 1e-5:
                sys.exit(f"{name} T{T}: fused differs by {diff}")
            ta, tb = median_ms(a, feeds, runs)[0], median_ms(b, feeds, runs)[0]
            label = {"gru": "GRU", "bigru": "Bidirectional(GRU)", "rnn": "SimpleRNN"}[name]
            print(f"| {label} | {T} | {ta:.3f} | {tb:.3f} | {ta / tb:.1f}x | {diff:.1e} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=("export", "time"))
    ap.add_argument("dir")
    ap.add_argument("--lstm-opt", default="build/bin/lstm-opt")
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
    if a.step == "export":
        export(a.dir)
    else:
        timing(a.dir, a.lstm_opt, a.runs)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generate JAX `lax.scan` recurrences exported with jax2onnx, for lstm-opt e2e tests.

Run with the JAX venv described in README.md (see requirements-jax.txt: jax 0.10.2,
jax2onnx 0.17.1, onnx 1.23.2):

    /opt/jaxvenv/bin/python test/e2e/models/gen_jax.py            # all fixtures
    /opt/jaxvenv/bin/python test/e2e/models/gen_jax.py NAME ...   # only some

Each fixture is one recurrent cell written as a step function and scanned over the time
axis with jax.lax.scan; jax2onnx (its default opset 23, IR 10) exports the scan as ONE
ONNX Loop whose body is the step: the weights are outer initializers handed to the
Loop as loop-carried values (passed through with Identity), the whole input sequence is
carried too and the body Gathers step t from it, and the per-step h is the Loop's scan
output. lstm-opt unrolls such a Loop (rnn-unroll-recurrent-loops), then recognises and
rolls the steps.

Weights come from numpy.random.default_rng(SEED) and are closed over (constants).
Gate orders follow PyTorch: LSTM i,f,g,o; GRU r,z,n with r applied to (W_hn h + b_hn).
Every model is checked with onnx.checker and against JAX in ONNX Runtime (1e-5).
"""
import importlib.metadata
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax2onnx import to_onnx  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _manifest_util import HERE, layer, update_manifest  # noqa: E402

GENERATOR = "gen_jax.py"
EXPORTER = "jax2onnx %s + jax %s" % (
    ".".join(importlib.metadata.version("jax2onnx").split(".")[:2]),
    ".".join(jax.__version__.split(".")[:2]))
OPSET = 23
SEED = 0
T, B, I, H = 5, 2, 4, 6
LSTM_ORDER = "i,f,g,o (PyTorch order: z = x W_ih^T + h W_hh^T + b split in 4)"
GRU_ORDER = ("r,z,n (PyTorch order; n = tanh(W_in x + b_in + r*(W_hn h + b_hn)), "
             "h' = (1-z)*n + z*h)")
RNN_ORDER = "single gate: h' = tanh(x W_ih^T + h W_hh^T + b)"
LOOP = ("ONNX Loop from lax.scan (trip count and condition are constants; weights and "
        "the input sequence are loop-carried values; body Gathers x[t])")

rng = np.random.default_rng(SEED)


def w(*shape):
    return (rng.standard_normal(shape) * 0.4).astype(np.float32)


L_Wih, L_Whh, L_b = w(4 * H, I), w(4 * H, H), w(4 * H)
G_Wih, G_Whh, G_bih, G_bhh = w(3 * H, I), w(3 * H, H), w(3 * H), w(3 * H)
R_Wih, R_Whh, R_b = w(H, I), w(H, H), w(H)
X, H0, C0 = w(T, B, I), w(B, H), w(B, H)


def lstm(x, h0, c0):
    def step(carry, xt):
        h, c = carry
        z = xt @ L_Wih.T + h @ L_Whh.T + L_b
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    (h_t, c_t), ys = lax.scan(step, (h0, c0), x)
    return ys, h_t, c_t


def gru(x, h0):
    def step(h, xt):
        ir, iz, inn = jnp.split(xt @ G_Wih.T + G_bih, 3, axis=-1)
        hr, hz, hn = jnp.split(h @ G_Whh.T + G_bhh, 3, axis=-1)
        r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
        n = jnp.tanh(inn + r * hn)
        h = (1 - z) * n + z * h
        return h, h
    h_t, ys = lax.scan(step, h0, x)
    return ys, h_t


def rnn(x, h0):
    def step(h, xt):
        h = jnp.tanh(xt @ R_Wih.T + h @ R_Whh.T + R_b)
        return h, h
    h_t, ys = lax.scan(step, h0, x)
    return ys, h_t


def export(name, fn, args, in_names, out_names):
    file = name + ".onnx"
    path = os.path.join(HERE, file)
    to_onnx(fn, inputs=[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args],
            model_name=name, return_mode="file", output_path=path,
            input_names=in_names, output_names=out_names)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    want = [np.asarray(r) for r in jax.jit(fn)(*args)]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, dict(zip(in_names, args)))
    for n, a, b in zip(out_names, want, got):
        err = float(np.max(np.abs(a - b)))
        if err > 1e-5:
            sys.exit("%s: ONNX Runtime and JAX differ on %s by %g" % (file, n, err))
    return file


def entry(file, description, expected, gate_order, inputs, outputs):
    return {
        "file": file, "generator": GENERATOR, "exporter": EXPORTER, "opset": OPSET,
        "description": description, "inputs": inputs, "outputs": outputs,
        "gate_order": gate_order, "expected": expected, "time_loop": LOOP,
    }


def expect(cells, layers):
    return {"cells": cells, "layers": layers, "standard_rnn_ops": 0}


def jax_lstm_scan():
    f = export("jax_lstm_scan", lstm, [X, H0, C0], ["x", "h0", "c0"], ["ys", "h_T", "c_T"])
    return entry(f, "LSTM step (PyTorch gate order) scanned over time-major x[T,B,I] with "
                 "lax.scan; h0/c0 are graph inputs; outputs all h, last h and last c.",
                 expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True,
                                       initial_state="inputs")]),
                 LSTM_ORDER, {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
                 {"ys": [T, B, H], "h_T": [B, H], "c_T": [B, H]})


def jax_gru_scan():
    f = export("jax_gru_scan", gru, [X, H0], ["x", "h0"], ["ys", "h_T"])
    return entry(f, "GRU step (PyTorch form, reset gate after the recurrent matmul) scanned "
                 "over time-major x with lax.scan; h0 is a graph input.",
                 expect("gru", [layer("gru", T, H, I, batch=B, time_major=True,
                                      initial_state="inputs", linear_before_reset=True)]),
                 GRU_ORDER, {"x": [T, B, I], "h0": [B, H]}, {"ys": [T, B, H], "h_T": [B, H]})


def jax_rnn_scan():
    f = export("jax_rnn_scan", rnn, [X, H0], ["x", "h0"], ["ys", "h_T"])
    return entry(f, "tanh RNN step scanned over time-major x with lax.scan; h0 is a graph input.",
                 expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=True,
                                      initial_state="inputs", activation="tanh")]),
                 RNN_ORDER, {"x": [T, B, I], "h0": [B, H]}, {"ys": [T, B, H], "h_T": [B, H]})


FIXTURES = [jax_lstm_scan, jax_gru_scan, jax_rnn_scan]

if __name__ == "__main__":
    names = set(sys.argv[1:])
    entries = [fx() for fx in FIXTURES if not names or fx.__name__ in names]
    if names:
        import json
        with open(os.path.join(HERE, "manifest.json")) as fh:
            old = [e for e in json.load(fh) if e.get("generator") == GENERATOR
                   and e["file"][:-5] not in names]
        entries = old + entries
    update_manifest(GENERATOR, entries)
    for e in entries:
        print("wrote", e["file"])

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
    want = [np.asarray(r) for r in jax.tree_util.tree_leaves(fn(*args))]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, dict(zip(in_names, args)))
    for n, a, b in zip(out_names, want, got):
        err = float(np.max(np.abs(a - b)))
        if err > 1e-5:
            sys.exit("%s: ONNX Runtime and JAX differ on %s by %g" % (file, n, err))
    return file


def entry(file, description, expected, gate_order, inputs, outputs):
    # The scan fixtures' time loop; the unrolled ones override it.
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


# ---------------------------------------------------------------------------
# Unrolled loops: a Python for over the time steps, each step its own nodes.
# jax2onnx writes x[:, t] as a Slice over every axis (starts [0, t, 0], ends
# [B, t + 1, I]) + Squeeze, and lax.dynamic_index_in_dim as a Slice whose
# starts are computed (Where(t < 0, t + T, t) over constants).

XB = w(B, T, I)  # batch-major input of the unrolled fixtures
H2 = 9           # the second layer's width in the GRU -> LSTM chain


def _flax_cell(kind):
    from flax import nnx
    rngs = nnx.Rngs(SEED)
    return {"lstm": lambda: nnx.LSTMCell(I, H, rngs=rngs),
            "optlstm": lambda: nnx.OptimizedLSTMCell(I, H, rngs=rngs),
            "gru": lambda: nnx.GRUCell(I, H, rngs=rngs),
            "simple": lambda: nnx.SimpleCell(I, H, rngs=rngs)}[kind]()


def _flax_unrolled(cell):
    """An nnx.Module (what users hand to jax2onnx): y[B,T,H] = the cell run over
    x[:, t] from flax's zero carry."""
    from flax import nnx

    class Unrolled(nnx.Module):
        def __init__(self, cell):
            self.cell = cell

        def __call__(self, x):
            carry, ys = None, []
            for t in range(T):
                xt = x[:, t]
                if carry is None:
                    carry = self.cell.initialize_carry(xt.shape, rngs=nnx.Rngs(SEED))
                carry, y = self.cell(carry, xt)
                ys.append(y)
            return jnp.stack(ys, axis=1)
    return Unrolled(cell)


FLAX_NOTE = ("flax.nnx %s over a batch-major x[B,T,I], a Python for over t (unrolled), x[:, t] "
             "exported as a Slice over every axis + Squeeze; zero initial carry "
             "(initialize_carry); y = stack(h, axis=1).")


def _flax_fixture(name, kind, cls, cells, layer_kind, gate_order, **extra):
    f = export(name, _flax_unrolled(_flax_cell(kind)), [XB], ["x"], ["y"])
    e = entry(f, FLAX_NOTE % cls,
              expect(cells, [layer(layer_kind, T, H, I, batch=B, time_major=False,
                                   initial_state="zeros", step_extraction="Slice (all axes) + Squeeze",
                                   **extra)]),
              gate_order, {"x": [B, T, I]}, {"y": [B, T, H]})
    e["time_loop"] = "unrolled (Python for)"
    return e


def jax_flax_lstm_unroll():
    return _flax_fixture("jax_flax_lstm_unroll", "lstm", "LSTMCell (one Linear per gate)", "lstm",
                         "lstm", "i,f,g,o (flax LSTMCell: ii/if/ig/io + hi/hf/hg/ho Linears)")


def jax_flax_optlstm_unroll():
    return _flax_fixture("jax_flax_optlstm_unroll", "optlstm", "OptimizedLSTMCell (fused gate kernels)",
                         "lstm", "lstm", "i,f,g,o (flax OptimizedLSTMCell: one kernel per input, split in 4)")


def jax_flax_gru_unroll():
    return _flax_fixture("jax_flax_gru_unroll", "gru", "GRUCell", "gru", "gru",
                         "r,z,n (flax GRUCell: n = tanh(W_in x + b_in + r*(W_hn h + b_hn)), "
                         "h' = (1-z)*n + z*h)", linear_before_reset=True)


def jax_flax_simple_unroll():
    return _flax_fixture("jax_flax_simple_unroll", "simple", "SimpleCell (tanh)", "rnn", "rnn",
                         RNN_ORDER, activation="tanh")


def _lstm_step(xt, h, c, Wih=L_Wih, Whh=L_Whh, b=L_b):
    z = xt @ Wih.T + h @ Whh.T + b
    i, f, g, o = jnp.split(z, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


def jax_dynamic_index_unroll():
    def f(x, h0, c0):
        h, c, ys = h0, c0, []
        for t in range(T):
            h, c = _lstm_step(lax.dynamic_index_in_dim(x, t, axis=1, keepdims=False), h, c)
            ys.append(h)
        return jnp.stack(ys, 1), h, c
    name = "jax_dynamic_index_unroll"
    fl = export(name, f, [XB, H0, C0], ["x", "h0", "c0"], ["y", "h_T", "c_T"])
    e = entry(fl, "LSTM step (PyTorch gate order) unrolled over a batch-major x, the step input "
              "lax.dynamic_index_in_dim(x, t, axis=1): jax2onnx computes the Slice's starts as "
              "Where(t < 0, t + T, t) over constants; h0/c0 are graph inputs.",
              expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="inputs",
                                    step_extraction="Slice with computed starts + Squeeze")]),
              LSTM_ORDER, {"x": [B, T, I], "h0": [B, H], "c0": [B, H]},
              {"y": [B, T, H], "h_T": [B, H], "c_T": [B, H]})
    e["time_loop"] = "unrolled (Python for)"
    return e


R_L_Wih, R_L_Whh, R_L_b = w(4 * H, I), w(4 * H, H), w(4 * H)


def jax_bidir_unroll():
    def f(x, h0, c0):
        h, c, yf = h0, c0, []
        for t in range(T):
            h, c = _lstm_step(x[:, t], h, c)
            yf.append(h)
        h, c, yb = h0, c0, [None] * T
        for t in reversed(range(T)):
            h, c = _lstm_step(x[:, t], h, c, R_L_Wih, R_L_Whh, R_L_b)
            yb[t] = h
        return jnp.concatenate([jnp.stack(yf, 1), jnp.stack(yb, 1)], -1)
    name = "jax_bidir_unroll"
    fl = export(name, f, [XB, H0, C0], ["x", "h0", "c0"], ["y"])
    lay = dict(batch=B, time_major=False, initial_state="inputs",
               step_extraction="Slice (all axes) + Squeeze")
    e = entry(fl, "A bidirectional LSTM written as two unrolled loops over a batch-major x (forward, "
              "then t = T-1 .. 0 with its own weights), both from h0/c0; y = concat of both "
              "directions' h sequences on the feature axis.",
              expect("lstm", [layer("lstm", T, H, I, direction="bidirectional", **lay)]),
              LSTM_ORDER, {"x": [B, T, I], "h0": [B, H], "c0": [B, H]}, {"y": [B, T, 2 * H]})
    e["time_loop"] = "unrolled (Python for), one loop per direction"
    return e


C_G_Wih, C_G_Whh, C_G_b = w(I, 3 * H), w(H, 3 * H), w(3 * H)
C_L_Wih, C_L_Whh, C_L_b = w(H, 4 * H2), w(H2, 4 * H2), w(4 * H2)


def jax_gru_into_lstm_unroll():
    def gru_step(xt, h):
        ir, iz, inn = jnp.split(xt @ C_G_Wih, 3, -1)
        hr, hz, hn = jnp.split(h @ C_G_Whh + C_G_b, 3, -1)
        r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
        n = jnp.tanh(inn + r * hn)
        return (1 - z) * n + z * h

    def f(x, h0):
        h, ys = h0, []
        for t in range(T):
            h = gru_step(x[:, t], h)
            ys.append(h)
        h2, c2, zs = jnp.zeros((B, H2)), jnp.zeros((B, H2)), []
        for t in range(T):
            h2, c2 = _lstm_step(ys[t], h2, c2, C_L_Wih.T, C_L_Whh.T, C_L_b)
            zs.append(h2)
        return jnp.stack(zs, 1)
    name = "jax_gru_into_lstm_unroll"
    fl = export(name, f, [XB, H0], ["x", "h0"], ["y"])
    e = entry(fl, "Two chained unrolled loops of different kinds and widths: a GRU (H 6, h0 input) "
              "over x[:, t], then an LSTM (H 9, zero state) over the GRU's per-step h.",
              expect("mixed", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="inputs",
                                     linear_before_reset=True),
                               layer("lstm", T, H2, H, batch=B, time_major=False, initial_state="zeros",
                                     input_from="layer 0 y")]),
              "GRU r,z,n; LSTM i,f,g,o", {"x": [B, T, I], "h0": [B, H]}, {"y": [B, T, H2]})
    e["time_loop"] = "unrolled (Python for), one loop per layer"
    return e


FIXTURES = [jax_lstm_scan, jax_gru_scan, jax_rnn_scan,
            jax_flax_lstm_unroll, jax_flax_optlstm_unroll, jax_flax_gru_unroll, jax_flax_simple_unroll,
            jax_dynamic_index_unroll, jax_bidir_unroll, jax_gru_into_lstm_unroll]

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

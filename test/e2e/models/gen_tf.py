#!/usr/bin/env python3
"""Generate TensorFlow/Keras ONNX fixtures (converted with tf2onnx) for lstm-opt e2e tests.

Run with the TF venv described in README.md (tensorflow-cpu 2.15.1, tf2onnx 1.16.1):

    /opt/tfvenv/bin/python test/e2e/models/gen_tf.py            # all fixtures
    /opt/tfvenv/bin/python test/e2e/models/gen_tf.py NAME ...   # only some

Determinism: every fixture seeds TF (tf.keras.utils.set_random_seed) and then
overwrites ALL variables (including biases, which TF initialises to zero/one)
with values from numpy.random.default_rng(SEED), so the weights do not depend
on TF's initialisers.

Gate orders:
  * tf.compat.v1 BasicLSTMCell / LSTMCell: one kernel over concat([x, h]) -> [I+H, 4H],
    split into i, j(=g, candidate), f, o;
    c' = c*sigmoid(f + forget_bias) + sigmoid(i)*tanh(j), h' = sigmoid(o)*tanh(c'), forget_bias=1.0
  * Keras LSTM: kernel [I,4H], recurrent_kernel [H,4H], columns i, f, c, o
  * Keras GRU: columns z, r, h; reset_after=True -> bias [2,3H], r applied after the recurrent
    matmul (ONNX linear_before_reset=1); reset_after=False -> r*h before the matmul (=0).
    h' = z*h + (1-z)*h~
"""
import os
import sys

# tf2onnx's constant de-duplication iterates over sets, so the surviving names depend on
# str hash randomisation; re-exec with a fixed hash seed to get byte-identical files.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _manifest_util import HERE, MANIFEST, layer, update_manifest  # noqa: E402

GENERATOR = "gen_tf.py"


def _mm(v):
    return ".".join(v.split(".")[:2])


EXPORTER = "tf2onnx %s + tensorflow %s" % (_mm(tf2onnx.__version__), _mm(tf.__version__))
SEED = 1234

TF1_ORDER = ("i,j,f,o (TF1 LSTMCell: kernel over concat([x,h]); j is the candidate g; "
             "forget_bias=1.0 added to f before the sigmoid)")
KERAS_LSTM_ORDER = "i,f,c,o (Keras LSTM kernel/recurrent_kernel columns)"
KERAS_GRU_ORDER_AFTER = "z,r,h (Keras GRU, reset_after=True: bias[2,3H], r*(U_h h + b_rh), linear_before_reset=1)"
KERAS_GRU_ORDER_BEFORE = "z,r,h (Keras GRU, reset_after=False: U_h (r*h), single bias, linear_before_reset=0)"


def _rand_like(rng, shape, scale=0.5):
    return rng.uniform(-scale, scale, size=shape).astype(np.float32)


def _io_shapes(path, which):
    m = onnx.load(path)
    vals = m.graph.input if which == "in" else m.graph.output
    inits = {i.name for i in m.graph.initializer}
    out = {}
    for v in vals:
        if v.name in inits:
            continue
        out[v.name] = [d.dim_param if d.dim_param else d.dim_value
                       for d in v.type.tensor_type.shape.dim]
    return out


def entry(file, opset, description, expected, gate_order, **extra):
    path = os.path.join(HERE, file)
    e = {
        "file": file,
        "generator": GENERATOR,
        "exporter": EXPORTER,
        "opset": opset,
        "description": description,
        "inputs": _io_shapes(path, "in"),
        "outputs": _io_shapes(path, "out"),
        "gate_order": gate_order,
        "expected": expected,
    }
    e.update(extra)
    return e


# step0_recurrent_matmul_folded: with a constant zero initial state tf2onnx constant-folds
# h0 @ recurrent_kernel, so step 0 has no recurrent MatMul (and c0 is a zero constant).
def expect(cells, layers, standard_rnn_ops=0):
    return {"cells": cells, "layers": layers, "standard_rnn_ops": standard_rnn_ops}


# ---------------------------------------------------------------------------
# TF1 graph mode: static_rnn, frozen graph -> tf2onnx.convert.from_graph_def

_NODE_SERIAL = [0]


def _make_tf2onnx_deterministic():
    """tf2onnx keeps graph nodes in Python sets; Node objects hash by id() (memory address),
    so node order (and hence which of several identical constants survives de-duplication)
    varies from run to run.  Give every Node a creation-order serial number as its hash:
    equality stays identity, only set iteration order becomes reproducible.  Together with
    PYTHONHASHSEED=0 and the name counter reset this makes the .onnx files byte-identical."""
    node_cls = tf2onnx.graph.Node
    if getattr(node_cls, "_lstm_opt_det_hash", False):
        return
    orig_init = node_cls.__init__

    def __init__(self, *a, **k):
        _NODE_SERIAL[0] += 1
        self._lstm_opt_serial = _NODE_SERIAL[0]
        orig_init(self, *a, **k)

    node_cls.__init__ = __init__
    node_cls.__hash__ = lambda self: self._lstm_opt_serial
    node_cls._lstm_opt_det_hash = True


_make_tf2onnx_deterministic()


def _reset_name_counter():
    # tf2onnx numbers the nodes it creates with a process-global counter; reset it so
    # that each fixture's node names (and bytes) do not depend on which ran before.
    tf2onnx.utils.INTERNAL_NAME = 1
    _NODE_SERIAL[0] = 0


def _tf1_convert(name, build, opset):
    """build() -> (input tensors, output tensors); runs inside a fresh v1 graph."""
    _reset_name_counter()
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(SEED)
        ins, outs = build()
        rng = np.random.default_rng(SEED)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for v in tf.compat.v1.global_variables():
                v.load(_rand_like(rng, v.shape.as_list()), sess)
            frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), [t.op.name for t in outs])
    path = os.path.join(HERE, name + ".onnx")
    tf2onnx.convert.from_graph_def(
        frozen,
        input_names=[t.name for t in ins],
        output_names=[t.name for t in outs],
        opset=opset,
        output_path=path,
    )
    return os.path.basename(path)


def tf1_basiclstm_static_rnn():
    B, T, I, H, opset = 2, 5, 4, 6, 13

    def build():
        v1 = tf.compat.v1
        x = v1.placeholder(tf.float32, [B, T, I], name="x")
        cell = v1.nn.rnn_cell.BasicLSTMCell(H, forget_bias=1.0)
        steps = tf.unstack(x, axis=1)  # batch-major -> list of T [B,I]
        outs, state = v1.nn.static_rnn(cell, steps, dtype=tf.float32)
        y = tf.stack(outs, axis=1, name="y")
        c = tf.identity(state.c, name="c_n")
        h = tf.identity(state.h, name="h_n")
        return [x], [y, h, c]

    f = _tf1_convert("tf1_basiclstm_static_rnn", build, opset)
    return entry(
        f, opset,
        "TF1 graph mode: tf.compat.v1.nn.rnn_cell.BasicLSTMCell(forget_bias=1.0) through "
        "tf.compat.v1.nn.static_rnn over tf.unstack(x, axis=1) of a batch-major x[B,T,I]; zero state from "
        "static_rnn(dtype=...); outputs re-stacked on axis 1. Frozen graph converted with tf2onnx.",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              forget_bias=1.0, concat_xh_kernel=True, step_extraction="Unpack axis 1")]),
        TF1_ORDER)


def tf1_lstmcell_static_rnn():
    T, B, I, H, opset = 3, 3, 5, 7, 15

    def build():
        v1 = tf.compat.v1
        x = v1.placeholder(tf.float32, [T, B, I], name="x")
        h0 = v1.placeholder(tf.float32, [B, H], name="h0")
        c0 = v1.placeholder(tf.float32, [B, H], name="c0")
        cell = v1.nn.rnn_cell.LSTMCell(H)  # forget_bias=1.0 default, no peepholes/projection
        steps = tf.unstack(x, axis=0)  # time-major
        outs, state = v1.nn.static_rnn(
            cell, steps, initial_state=v1.nn.rnn_cell.LSTMStateTuple(c0, h0))
        y = tf.stack(outs, axis=0, name="y")
        c = tf.identity(state.c, name="c_n")
        h = tf.identity(state.h, name="h_n")
        return [x, h0, c0], [y, h, c]

    f = _tf1_convert("tf1_lstmcell_static_rnn", build, opset)
    return entry(
        f, opset,
        "TF1 graph mode: tf.compat.v1.nn.rnn_cell.LSTMCell (the non-Basic cell, forget_bias=1.0 default) "
        "through static_rnn over tf.unstack(x, axis=0) of time-major x[T,B,I]; initial state from the "
        "h0/c0 placeholders (graph inputs).",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              forget_bias=1.0, concat_xh_kernel=True, step_extraction="Unpack axis 0")]),
        TF1_ORDER)


# ---------------------------------------------------------------------------
# Keras (TF2) unrolled recurrent layers -> tf2onnx.convert.from_keras

def _keras_convert(name, make_layer, B, T, I, opset):
    _reset_name_counter()
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(SEED)
    inp = tf.keras.Input(shape=(T, I), batch_size=B, name="x")
    out = make_layer()(inp)
    model = tf.keras.Model(inp, out, name=name)
    rng = np.random.default_rng(SEED)
    model.set_weights([_rand_like(rng, w.shape) for w in model.get_weights()])
    path = os.path.join(HERE, name + ".onnx")
    spec = (tf.TensorSpec((B, T, I), tf.float32, name="x"),)
    tf2onnx.convert.from_keras(model, input_signature=spec, opset=opset, output_path=path)
    return os.path.basename(path)


def keras_lstm_unroll_seq():
    B, T, I, H, opset = 2, 6, 5, 8, 13
    f = _keras_convert("keras_lstm_unroll_seq",
                       lambda: tf.keras.layers.LSTM(H, unroll=True, return_sequences=True),
                       B, T, I, opset)
    return entry(
        f, opset,
        "Keras LSTM(8, unroll=True, return_sequences=True), batch-major x[B,T,I]; zero initial state "
        "built inside the graph; output all hidden states [B,T,H].",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True)]),
        KERAS_LSTM_ORDER)


def keras_lstm_unroll_last():
    B, T, I, H, opset = 1, 4, 3, 1, 17
    f = _keras_convert("keras_lstm_unroll_last",
                       lambda: tf.keras.layers.LSTM(H, unroll=True, return_sequences=False),
                       B, T, I, opset)
    return entry(
        f, opset,
        "Keras LSTM(1, unroll=True), return_sequences=False: only the last hidden state [B,H] is an output "
        "(B=1, H=1); zero initial state.",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                              outputs="last_h_only")]),
        KERAS_LSTM_ORDER)


def keras_gru_unroll_resetafter():
    B, T, I, H, opset = 3, 5, 5, 7, 14
    f = _keras_convert("keras_gru_unroll_resetafter",
                       lambda: tf.keras.layers.GRU(H, unroll=True, return_sequences=True, reset_after=True),
                       B, T, I, opset)
    return entry(
        f, opset,
        "Keras GRU(7, unroll=True, reset_after=True [TF2 default], return_sequences=True); zero initial state.",
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                             linear_before_reset=True)]),
        KERAS_GRU_ORDER_AFTER)


def keras_gru_unroll_resetbefore():
    B, T, I, H, opset = 2, 6, 3, 4, 12
    f = _keras_convert("keras_gru_unroll_resetbefore",
                       lambda: tf.keras.layers.GRU(H, unroll=True, return_sequences=False, reset_after=False),
                       B, T, I, opset)
    return entry(
        f, opset,
        "Keras GRU(4, unroll=True, reset_after=False), return_sequences=False (last state only); "
        "zero initial state.",
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                             linear_before_reset=False, outputs="last_h_only")]),
        KERAS_GRU_ORDER_BEFORE)


def keras_simplernn_unroll():
    B, T, I, H, opset = None, 7, 2, 5, 16
    f = _keras_convert("keras_simplernn_unroll",
                       lambda: tf.keras.layers.SimpleRNN(H, unroll=True, return_sequences=True),
                       B, T, I, opset)
    e = entry(
        f, opset,
        "Keras SimpleRNN(5, tanh, unroll=True, return_sequences=True) with a dynamic batch dimension "
        "(TensorSpec batch None -> symbolic dim named by tf2onnx); zero state built from the runtime batch size.",
        None, "single gate: h' = tanh(x W + h U + b)")
    batch = e["inputs"]["x"][0]
    e["expected"] = expect("rnn", [layer("rnn", T, H, I, batch=batch, time_major=False, initial_state="zeros",
                                         activation="tanh")])
    e["dynamic_dims"] = {batch: "batch (input x)"}
    for name, shape in e["outputs"].items():
        if isinstance(shape[0], str) and shape[0] != batch:
            e["dynamic_dims"][shape[0]] = "batch (output %s; tf2onnx gives it its own symbol)" % name
    return e


FIXTURES = [
    tf1_basiclstm_static_rnn,
    tf1_lstmcell_static_rnn,
    keras_lstm_unroll_seq,
    keras_lstm_unroll_last,
    keras_gru_unroll_resetafter,
    keras_gru_unroll_resetbefore,
    keras_simplernn_unroll,
]


def main(argv):
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    wanted = set(a[:-5] if a.endswith(".onnx") else a for a in argv)
    unknown = wanted - {fn.__name__ for fn in FIXTURES}
    if unknown:
        sys.exit("unknown fixture(s): %s" % ", ".join(sorted(unknown)))
    entries = []
    for fn in FIXTURES:
        if wanted and fn.__name__ not in wanted:
            continue
        e = fn()
        print("wrote %-40s opset %d" % (e["file"], e["opset"]))
        entries.append(e)
    if wanted:
        import json
        old = json.load(open(MANIFEST)) if os.path.exists(MANIFEST) else []
        done = {e["file"] for e in entries}
        entries += [e for e in old if e.get("generator") == GENERATOR and e["file"] not in done]
    update_manifest(GENERATOR, entries)


if __name__ == "__main__":
    main(sys.argv[1:])

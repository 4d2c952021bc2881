#!/usr/bin/env python3
"""Generate Keras 3 ONNX fixtures (converted with tf2onnx) for lstm-opt e2e tests.

Run with the Keras 3 venv described in README.md (see requirements-keras3.txt:
tensorflow-cpu 2.21.0 / keras 3.15.1, tf2onnx 1.17.0, onnx 1.23.2):

    /opt/keras3venv/bin/python test/e2e/models/gen_keras3.py            # all fixtures
    /opt/keras3venv/bin/python test/e2e/models/gen_keras3.py NAME ...   # only some

Same conventions as gen_tf.py (TF 2.15 / Keras 2): one function per fixture, each
builds a small Keras model, converts it and returns its manifest entry; entries are
merged into manifest.json (entries of other generators are kept).

Conversion: tf2onnx.convert.from_keras(model, input_signature=...) works with Keras 3
models: on TF >= 2.16 tf2onnx 1.17 no longer finds tf.keras' trace_model_call and falls
back to tracing `model(x, training=False)` in a tf.function, then freezes and converts
that concrete function (no SavedModel round trip needed).  All fixtures use opset 18.

Determinism: every fixture calls keras.backend.clear_session() (resets Keras' layer
name counters) and keras.utils.set_random_seed, then overwrites ALL variables (kernels,
recurrent kernels and biases) with values from numpy.random.default_rng(SEED), so the
weights do not depend on Keras' initialisers.  As in gen_tf.py the script re-executes
itself with PYTHONHASHSEED=0, resets tf2onnx's global node-name counter before each
conversion and makes tf2onnx's Node objects hash by creation order instead of id().

Gate orders (Keras 3, same as Keras 2):
  * LSTM: kernel [I,4H], recurrent_kernel [H,4H], bias [4H], columns i, f, c, o
  * GRU: columns z, r, h; Keras 3 default reset_after=True -> bias [2,3H] (input and
    recurrent bias), r applied after the recurrent matmul (ONNX linear_before_reset=1);
    h' = z*h + (1-z)*h~
  * SimpleRNN: h' = tanh(x W + h U + b)
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
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf2onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _manifest_util import HERE, MANIFEST, layer, update_manifest  # noqa: E402

GENERATOR = "gen_keras3.py"


def _mm(v):
    return ".".join(v.split(".")[:2])


EXPORTER = "tf2onnx %s + tensorflow %s (Keras %s)" % (
    _mm(tf2onnx.__version__), _mm(tf.__version__), _mm(keras.__version__))
SEED = 1234
OPSET = 18
# The sizes the brief asks for: batch 2, T 5, input 4, hidden 6.
B, T, I, H = 2, 5, 4, 6

KERAS_LSTM_ORDER = "i,f,c,o (Keras LSTM kernel/recurrent_kernel columns)"
KERAS_GRU_ORDER_AFTER = "z,r,h (Keras GRU, reset_after=True: bias[2,3H], r*(U_h h + b_rh), linear_before_reset=1)"
ONNX_LSTM_ORDER = "ONNX LSTM op order i,o,f,c (tf2onnx reorders Keras' i,f,c,o when it emits the LSTM op)"
RNN_ORDER = "single gate: h' = tanh(x W + h U + b)"

if not keras.__version__.startswith("3."):
    sys.exit("gen_keras3.py needs Keras 3 (found keras %s); see requirements-keras3.txt" % keras.__version__)


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


def entry(file, description, expected, gate_order, **extra):
    path = os.path.join(HERE, file)
    e = {
        "file": file,
        "generator": GENERATOR,
        "exporter": EXPORTER,
        "opset": OPSET,
        "description": description,
        "inputs": _io_shapes(path, "in"),
        "outputs": _io_shapes(path, "out"),
        "gate_order": gate_order,
        "expected": expected,
    }
    e.update(extra)
    return e


def expect(cells, layers, standard_rnn_ops=0):
    return {"cells": cells, "layers": layers, "standard_rnn_ops": standard_rnn_ops}


# ---------------------------------------------------------------------------
# tf2onnx determinism (same tricks as gen_tf.py)

_NODE_SERIAL = [0]


def _make_tf2onnx_deterministic():
    """tf2onnx keeps graph nodes in Python sets; Node objects hash by id() (memory address),
    so node order (and hence which of several identical constants survives de-duplication)
    can vary from run to run.  Give every Node a creation-order serial number as its hash:
    equality stays identity, only set iteration order becomes reproducible."""
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


# ---------------------------------------------------------------------------
# Keras 3 recurrent layers -> tf2onnx.convert.from_keras

def _keras_convert(name, make_layers, in_size, steps=T):
    """make_layers() -> list of Keras layers applied in sequence to x[B,steps,in_size]
    (steps None: a time axis of unknown length)."""
    _reset_name_counter()
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    inp = keras.Input(shape=(steps, in_size), batch_size=B, name="x")
    out = inp
    for lay in make_layers():
        out = lay(out)
    model = keras.Model(inp, out, name=name)
    # Overwrite every weight (kernel, recurrent_kernel, bias of each layer), in model order.
    # Keras 3 RNN layers also own a SeedGenerator state variable (for dropout, unused here:
    # dropout=0); it is not a weight, is seeded by set_random_seed and does not reach the graph.
    rng = np.random.default_rng(SEED)
    weights = list(model.weights)
    others = [v for v in model.variables if all(v is not w for w in weights)]
    assert all("seed_generator" in v.path for v in others), [v.path for v in others]
    for v in weights:
        v.assign(_rand_like(rng, tuple(v.shape)))
    path = os.path.join(HERE, name + ".onnx")
    spec = (tf.TensorSpec((B, steps, in_size), tf.float32, name="x"),)
    tf2onnx.convert.from_keras(model, input_signature=spec, opset=OPSET, output_path=path)
    # Sanity: ONNX Runtime agrees with Keras (only when onnxruntime is importable).
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    if ort is not None:
        x = np.random.default_rng(0).standard_normal((B, T, in_size)).astype(np.float32)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, {"x": x})[0]
        want = np.asarray(model(x, training=False))
        err = float(np.max(np.abs(got - want)))
        if err > 1e-5:
            raise RuntimeError("%s: ONNX Runtime differs from Keras by %g" % (name, err))
    return os.path.basename(path)


def keras3_lstm_unroll():
    f = _keras_convert("keras3_lstm_unroll",
                       lambda: [keras.layers.LSTM(H, unroll=True, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 LSTM(6, unroll=True, return_sequences=True), batch-major x[B,T,I]; zero initial state "
        "built inside the graph; output all hidden states [B,T,H]. Time steps taken by one Split of the "
        "transposed input (tf.unstack) + Squeeze per step.",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                              step_extraction="Split axis 0 of Transpose(x) + Squeeze")]),
        KERAS_LSTM_ORDER)


def keras3_gru_unroll():
    f = _keras_convert("keras3_gru_unroll",
                       lambda: [keras.layers.GRU(H, unroll=True, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 GRU(6, unroll=True, return_sequences=True), Keras 3 default reset_after=True; zero initial "
        "state. Keras 3 slices the recurrent projection with strided_slice (ONNX Slice), not split.",
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                             step0_recurrent_matmul_folded=True, linear_before_reset=True,
                             step_extraction="Split axis 0 of Transpose(x) + Squeeze")]),
        KERAS_GRU_ORDER_AFTER)


def keras3_simplernn_unroll():
    f = _keras_convert("keras3_simplernn_unroll",
                       lambda: [keras.layers.SimpleRNN(H, unroll=True, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 SimpleRNN(6, tanh, unroll=True, return_sequences=True), fixed batch; zero initial state.",
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=False, initial_state="zeros",
                             step0_recurrent_matmul_folded=True, activation="tanh",
                             step_extraction="Split axis 0 of Transpose(x) + Squeeze")]),
        RNN_ORDER)


def keras3_lstm_loop():
    f = _keras_convert("keras3_lstm_loop",
                       lambda: [keras.layers.LSTM(H, unroll=False, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 LSTM(6, unroll=False, return_sequences=True): the TF while loop is rewritten by tf2onnx "
        "(lstm_tf2_rewriter) into ONE standard ONNX LSTM op (time-major, via Transpose), zero initial "
        "h/c as an initializer; output all hidden states [B,T,H].",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros")],
               standard_rnn_ops=1),
        ONNX_LSTM_ORDER,
        time_loop="ONNX LSTM op (tf2onnx rewrote the TF while loop)")


def keras3_gru_loop():
    f = _keras_convert("keras3_gru_loop", lambda: [keras.layers.GRU(H, unroll=False)], I)
    return entry(
        f,
        "Keras 3 GRU(6, unroll=False), return_sequences=False (last state only), reset_after=True: tf2onnx "
        "does NOT rewrite this while loop into an ONNX GRU op (its Keras GRU pattern expects Keras 2's "
        "MatMul+BiasAdd+Split on the recurrent side; Keras 3 slices the recurrent projection with "
        "strided_slice), so the graph keeps an ONNX Loop whose body is one GRU step; the Loop collects "
        "every h as a scan output and the last one is Sliced out.",
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                             linear_before_reset=True, outputs="last_h_only")]),
        KERAS_GRU_ORDER_AFTER,
        time_loop="ONNX Loop (body: one GRU step; trip count and condition are constants): lstm-opt "
                  "unrolls it (rnn-unroll-recurrent-loops), then recognises and rolls the 5 steps")


def keras3_lstm_stacked_unroll():
    f = _keras_convert("keras3_lstm_stacked_unroll",
                       lambda: [keras.layers.LSTM(H, unroll=True, return_sequences=True),
                                keras.layers.LSTM(H, unroll=True, return_sequences=True)], H)
    return entry(
        f,
        "Two stacked Keras 3 LSTM(6, unroll=True, return_sequences=True) layers on x[B,T,6] (input size == "
        "hidden size == 6 in both layers, so both layers' weights have identical shapes); layer 2 eats "
        "layer 1's full output sequence (re-stacked, then unstacked again by layer 2); zero initial states.",
        expect("lstm", [layer("lstm", T, H, H, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                              step_extraction="Split axis 0 of Transpose(x) + Squeeze"),
                        layer("lstm", T, H, H, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True, input_from="layer 0 y")]),
        KERAS_LSTM_ORDER)


def keras3_bidir_lstm_unroll():
    f = _keras_convert("keras3_bidir_lstm_unroll",
                       lambda: [keras.layers.Bidirectional(
                           keras.layers.LSTM(H, unroll=True, return_sequences=True))], I)
    return entry(
        f,
        "Keras 3 Bidirectional(LSTM(6, unroll=True, return_sequences=True)): the backward layer runs "
        "over the reversed step list and its outputs are reversed back; both directions' h sequences "
        "concatenated on the feature axis; zero initial states.",
        expect("lstm", [layer("lstm", T, H, I, direction="bidirectional", batch=B, time_major=False,
                              initial_state="zeros", step0_recurrent_matmul_folded=True)]),
        KERAS_LSTM_ORDER)


def keras3_bidir_gru_unroll():
    f = _keras_convert("keras3_bidir_gru_unroll",
                       lambda: [keras.layers.Bidirectional(
                           keras.layers.GRU(H, unroll=True, return_sequences=True))], I)
    return entry(
        f,
        "Keras 3 Bidirectional(GRU(6, unroll=True, return_sequences=True)), reset_after=True; "
        "zero initial states.",
        expect("gru", [layer("gru", T, H, I, direction="bidirectional", batch=B, time_major=False,
                             initial_state="zeros", step0_recurrent_matmul_folded=True,
                             linear_before_reset=True)]),
        KERAS_GRU_ORDER_AFTER)


def keras3_gru_resetbefore_loop():
    f = _keras_convert("keras3_gru_resetbefore_loop",
                       lambda: [keras.layers.GRU(H, reset_after=False, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 GRU(6, reset_after=False, unroll=False): tf2onnx keeps an ONNX Loop whose weights "
        "are loop-carried values the body hands back unchanged; the body slices the recurrent kernel "
        "at every step (h @ U[:, :2H] for z and r, (r*h) @ U[:, 2H:] for the candidate).",
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                             linear_before_reset=False)]),
        "z,r,h (Keras GRU, reset_after=False: r applied to h before its matmul)",
        time_loop="ONNX Loop (weights loop-carried, passed through unchanged): lstm-opt unrolls it, "
                  "the per-step Slices of the kernel become one initializer each")


def keras3_lstm_hardsigmoid_loop():
    f = _keras_convert("keras3_lstm_hardsigmoid_loop",
                       lambda: [keras.layers.LSTM(H, recurrent_activation="hard_sigmoid",
                                                  return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 LSTM(6, recurrent_activation='hard_sigmoid', unroll=False): Keras 3's hard_sigmoid "
        "is relu6(x + 3) / 6, exported as Mul(Clip(x + 3, 0, 6), 1/6), i.e. HardSigmoid(alpha=1/6, "
        "beta=0.5); tf2onnx keeps an ONNX Loop (its LSTM rewriter wants sigmoid).",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              activations=["HardSigmoid", "Tanh", "Tanh"])]),
        KERAS_LSTM_ORDER,
        time_loop="ONNX Loop (body: one LSTM step): lstm-opt unrolls it")


def keras3_gru2_resetbefore_dyntime():
    f = _keras_convert("keras3_gru2_resetbefore_dyntime",
                       lambda: [keras.layers.GRU(H, reset_after=False, return_sequences=True),
                                keras.layers.GRU(H, reset_after=False, return_sequences=True)],
                       I, steps=None)
    return entry(
        f,
        "Two stacked Keras 3 GRU(6, reset_after=False, unroll=False) over x[B, T, I] with T unknown "
        "(None): two ONNX Loops whose trip counts are known only when the model runs (the second "
        "one's from the first one's output), weights loop-carried and passed through unchanged. "
        "The ONNX target makes each Loop one GRU layer over the whole sequence, its time axis "
        "left dynamic (rnn-loop-to-sequence); with T given (lstm-run), the first Loop unrolls, "
        "then, its output's shape known, the second.",
        expect("gru", [layer("gru", "T", H, I, batch=B, time_major=False, initial_state="zeros",
                             linear_before_reset=False),
                       layer("gru", "T", H, H, batch=B, time_major=False, initial_state="zeros",
                             linear_before_reset=False, input_from="layer 0 y")]),
        "z,r,h (Keras GRU, reset_after=False: r applied to h before its matmul)",
        time_loop="two ONNX Loops with run-time trip counts (weights loop-carried, passed through)")


def keras3_gru_into_lstm_unroll():
    f = _keras_convert("keras3_gru_into_lstm_unroll",
                       lambda: [keras.layers.GRU(H, unroll=True, return_sequences=True),
                                keras.layers.LSTM(9, unroll=True, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 GRU(6, unroll=True) then LSTM(9, unroll=True), both return_sequences: layers of "
        "different kinds and widths, the LSTM's steps read the GRU's per-step h.",
        expect("mixed", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                               step0_recurrent_matmul_folded=True, linear_before_reset=True),
                         layer("lstm", T, 9, H, batch=B, time_major=False, initial_state="zeros",
                               step0_recurrent_matmul_folded=True, input_from="layer 0 y")]),
        "GRU " + KERAS_GRU_ORDER_AFTER + "; LSTM " + KERAS_LSTM_ORDER)


def keras3_lstm_hardsigmoid_unroll():
    f = _keras_convert("keras3_lstm_hardsigmoid_unroll",
                       lambda: [keras.layers.LSTM(H, recurrent_activation="hard_sigmoid",
                                                  unroll=True, return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 LSTM(6, recurrent_activation='hard_sigmoid', unroll=True): the gates are "
        "Mul(Clip(L, 0, 6), 1/6) with the + 3 folded into the bias; at the first step tf2onnx "
        "moves the forget gate's / 6 onto the zero state (f * c0 = Clip(L, 0, 6) * (c0 / 6)).",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                              activations=["HardSigmoid", "Tanh", "Tanh"])]),
        KERAS_LSTM_ORDER)


def keras3_gru_hardsigmoid_resetbefore_unroll():
    f = _keras_convert("keras3_gru_hardsigmoid_resetbefore_unroll",
                       lambda: [keras.layers.GRU(H, recurrent_activation="hard_sigmoid",
                                                 reset_after=False, unroll=True,
                                                 return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 GRU(6, recurrent_activation='hard_sigmoid', reset_after=False, unroll=True), "
        "Keras 2's defaults: at the first step tf2onnx moves the reset gate's / 6 onto the zero "
        "state (r * h0 = Clip(L, 0, 6) * (h0 / 6)).",
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=False, initial_state="zeros",
                             linear_before_reset=False,
                             activations=["HardSigmoid", "Tanh"])]),
        "z,r,h (Keras GRU, reset_after=False: r applied to h before its matmul)")


def keras3_lstm_tanh_gates_unroll():
    f = _keras_convert("keras3_lstm_tanh_gates_unroll",
                       lambda: [keras.layers.LSTM(H, recurrent_activation="tanh", unroll=True,
                                                  return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 LSTM(6, recurrent_activation='tanh', unroll=True): gates and cell candidate "
        "share Tanh (ONNX LSTM activations [Tanh, Tanh, Tanh]).",
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step0_recurrent_matmul_folded=True,
                              activations=["Tanh", "Tanh", "Tanh"])]),
        KERAS_LSTM_ORDER)


def keras3_simplernn_softsign_unroll():
    f = _keras_convert("keras3_simplernn_softsign_unroll",
                       lambda: [keras.layers.SimpleRNN(H, activation="softsign", unroll=True,
                                                       return_sequences=True)], I)
    return entry(
        f,
        "Keras 3 SimpleRNN(6, activation='softsign', unroll=True): a Softsign node per step "
        "(ONNX RNN activations [Softsign]).",
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=False, initial_state="zeros",
                             step0_recurrent_matmul_folded=True, activation="softsign")]),
        RNN_ORDER)


def keras3_bidir_gru_loop():
    f = _keras_convert("keras3_bidir_gru_loop",
                       lambda: [keras.layers.Bidirectional(
                           keras.layers.GRU(H, return_sequences=True))], I)
    return entry(
        f,
        "Keras 3 Bidirectional(GRU(6, unroll=False, return_sequences=True)): tf2onnx keeps two ONNX "
        "Loops, the backward one over ReverseSequence(x) (its lengths computed from the shape) with "
        "its output reversed back; lstm-opt makes that a reverse layer and pairs the two.",
        expect("gru", [layer("gru", T, H, I, direction="bidirectional", batch=B, time_major=False,
                             initial_state="zeros", linear_before_reset=True)]),
        KERAS_GRU_ORDER_AFTER,
        time_loop="two ONNX Loops (one per direction), the backward one between ReverseSequence nodes")


def keras3_bidir_gru_loop_dyntime():
    f = _keras_convert("keras3_bidir_gru_loop_dyntime",
                       lambda: [keras.layers.Bidirectional(
                           keras.layers.GRU(H, return_sequences=True))], I, steps=None)
    return entry(
        f,
        "Keras 3 Bidirectional(GRU(6, unroll=False, return_sequences=True)) over x[B, T, I] with T "
        "unknown (None): two ONNX Loops whose trip counts are read from x's shape, the backward "
        "one over ReverseSequence(x) with lengths Expand(Shape(x)[t], Shape(x)[b]) and its output "
        "reversed back the same way. lstm-opt makes each Loop one layer over the whole sequence, "
        "the backward one a reverse layer, and pairs the two, the time axis left dynamic.",
        expect("gru", [layer("gru", "T", H, I, direction="bidirectional", batch=B,
                             time_major=False, initial_state="zeros", linear_before_reset=True)]),
        KERAS_GRU_ORDER_AFTER,
        time_loop="two ONNX Loops with run-time trip counts, the backward one between "
                  "ReverseSequence nodes")


def keras3_simplernn_loop_dyntime():
    f = _keras_convert("keras3_simplernn_loop_dyntime",
                       lambda: [keras.layers.SimpleRNN(H, return_sequences=True)], I, steps=None)
    return entry(
        f,
        "Keras 3 SimpleRNN(6, unroll=False, return_sequences=True) over x[B, T, I] with T unknown "
        "(None): an ONNX Loop whose trip count is read from x's shape, its body one tanh step "
        "(the hidden state a carried value). lstm-opt recognises the step as a simple RNN cell "
        "(the chain closes through the Loop's carried state) and makes the Loop one RNN layer.",
        expect("rnn", [layer("rnn", "T", H, I, batch=B, time_major=False, initial_state="zeros")]),
        RNN_ORDER,
        time_loop="an ONNX Loop with a run-time trip count")


FIXTURES = [
    keras3_lstm_unroll,
    keras3_gru_unroll,
    keras3_simplernn_unroll,
    keras3_lstm_loop,
    keras3_gru_loop,
    keras3_lstm_stacked_unroll,
    keras3_bidir_lstm_unroll,
    keras3_bidir_gru_unroll,
    keras3_gru_resetbefore_loop,
    keras3_lstm_hardsigmoid_loop,
    keras3_gru_into_lstm_unroll,
    keras3_gru2_resetbefore_dyntime,
    keras3_lstm_hardsigmoid_unroll,
    keras3_gru_hardsigmoid_resetbefore_unroll,
    keras3_lstm_tanh_gates_unroll,
    keras3_simplernn_softsign_unroll,
    keras3_bidir_gru_loop,
    keras3_bidir_gru_loop_dyntime,
    keras3_simplernn_loop_dyntime,
]


def _run_one(name, out_json):
    """Child mode: make one fixture in this (fresh) process, write its entry to out_json."""
    import json
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    e = {fn.__name__: fn for fn in FIXTURES}[name]()
    with open(out_json, "w") as f:
        json.dump(e, f)


def main(argv):
    import json
    import subprocess
    import tempfile
    if argv[:1] == ["--one"]:
        _run_one(argv[1], argv[2])
        return
    wanted = set(a[:-5] if a.endswith(".onnx") else a for a in argv)
    unknown = wanted - {fn.__name__ for fn in FIXTURES}
    if unknown:
        sys.exit("unknown fixture(s): %s" % ", ".join(sorted(unknown)))
    entries = []
    for fn in FIXTURES:
        if wanted and fn.__name__ not in wanted:
            continue
        # One fresh process per fixture: freezing renames the TF while-loop functions with TF's
        # process-global uid counter (e.g. "gru_1_while_cond_frozen_238"), which would otherwise
        # depend on which fixtures ran before in the same process.
        fd, tmp = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            subprocess.run([sys.executable, os.path.abspath(__file__), "--one", fn.__name__, tmp], check=True)
            with open(tmp) as f:
                e = json.load(f)
        finally:
            os.unlink(tmp)
        print("wrote %-40s opset %d" % (e["file"], e["opset"]))
        entries.append(e)
    if wanted:
        old = json.load(open(MANIFEST)) if os.path.exists(MANIFEST) else []
        done = {e["file"] for e in entries}
        entries += [e for e in old if e.get("generator") == GENERATOR and e["file"] not in done]
    update_manifest(GENERATOR, entries)


if __name__ == "__main__":
    main(sys.argv[1:])

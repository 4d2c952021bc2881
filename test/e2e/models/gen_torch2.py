#!/opt/torch2venv/bin/python
"""Generate PyTorch 2.x-exported ONNX fixtures for lstm-opt end-to-end tests.

Run with the torch 2.x venv (see requirements-torch2.txt and README.md):

    /opt/torch2venv/bin/python test/e2e/models/gen_torch2.py            # all fixtures
    /opt/torch2venv/bin/python test/e2e/models/gen_torch2.py NAME ...   # only some (by function/file stem)

Same conventions as gen_torch.py (torch 1.13): one function per fixture, each builds
a small module, exports it and returns its manifest entry; entries are merged into
manifest.json (entries of other generators are kept).  torch.manual_seed(SEED) is
called before each model is built.

Two exporters are used:
  * the TorchScript exporter (torch.onnx.export(..., dynamo=False)), at opsets 18..20,
    which the torch 1.13 exporter could not reach (opset 18 changes Split/Reduce*);
  * the dynamo exporter (torch.onnx.export(..., dynamo=True), torch.export + onnxscript),
    at its default opset.
Every file is written as one self-contained .onnx (external_data=False for the dynamo
exporter).  The dynamo exporter stores the Python source location of every node
(metadata_props "pkg.torch.onnx.stack_trace" etc., which contain absolute paths); those
strings are removed after export so the files do not depend on where the repository
or the venv lives.  Nothing else in the graph is touched.

Gate orders (torch): LSTMCell weights are i,f,g,o; GRUCell r,z,n with the reset gate
applied after the recurrent matmul (ONNX linear_before_reset=1).
"""
import os
import sys
import warnings
from typing import List

import onnx
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _manifest_util import HERE, layer, update_manifest  # noqa: E402

GENERATOR = "gen_torch2.py"
TORCH_VERSION = ".".join(torch.__version__.split("+")[0].split(".")[:2])  # "2.15"
EXPORTER_TS = "torch %s (TorchScript exporter)" % TORCH_VERSION
EXPORTER_DYNAMO = "torch %s (dynamo exporter)" % TORCH_VERSION
SEED = 1234

TORCH_LSTM_ORDER = "i,f,g,o (torch LSTMCell/nn.LSTM weight chunks; c' = f*c + i*g, h' = o*tanh(c'))"
TORCH_GRU_ORDER = "r,z,n (torch GRUCell/nn.GRU weight chunks; n = tanh(W_in x + b_in + r*(W_hn h + b_hn)), h' = (1-z)*n + z*h)"


def _path(name):
    return os.path.join(HERE, name + ".onnx")


def export_ts(name, model, args, input_names, output_names, opset, dynamic_axes=None):
    """TorchScript exporter (the one torch 1.13 had), constant folding on."""
    path = _path(name)
    model.eval()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # dynamo=False is deprecated in 2.x
        torch.onnx.export(
            model,
            args,
            path,
            input_names=input_names,
            output_names=output_names,
            opset_version=opset,
            do_constant_folding=True,
            dynamic_axes=dynamic_axes,
            dynamo=False,
        )
    m = onnx.load(path)
    return os.path.basename(path), _opset(m)


def _strip_source_locations(model):
    """Drops the dynamo exporter's per-node source metadata (absolute file paths, line numbers)."""
    def clean(props):
        keep = [p for p in props if not p.key.startswith("pkg.torch.onnx.")]
        del props[:]
        props.extend(keep)

    def walk(graph):
        for n in graph.node:
            clean(n.metadata_props)
            n.doc_string = ""
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            clean(vi.metadata_props)
        for t in graph.initializer:
            clean(t.metadata_props)
        clean(graph.metadata_props)

    walk(model.graph)
    for fn in model.functions:
        for n in fn.node:
            clean(n.metadata_props)
            n.doc_string = ""
    clean(model.metadata_props)


def export_dynamo(name, model, args, input_names, output_names, optimize=True):
    """Dynamo exporter (torch.export + onnxscript) at its default opset; opset 18 if that fails.
    optimize=False skips the exporter's graph optimizer (torch.onnx.export's own option).

    Returns (file, opset, note) where note says which opset request worked."""
    path = _path(name)
    model.eval()
    errors = []
    for opset in (None, 18):
        try:
            with torch.no_grad():
                torch.onnx.export(
                    model,
                    args,
                    path,
                    input_names=input_names,
                    output_names=output_names,
                    opset_version=opset,
                    dynamo=True,
                    external_data=False,
                    optimize=optimize,
                    verbose=False,
                )
        except Exception as ex:  # noqa: BLE001
            errors.append("opset_version=%s: %s: %s" % (opset, type(ex).__name__, str(ex).splitlines()[0]))
            continue
        m = onnx.load(path)
        _strip_source_locations(m)
        onnx.save(m, path, save_as_external_data=False)
        if opset is None:
            note = "its default opset %d" % _opset(m)
        else:
            note = "opset_version=18; the default opset failed: %s" % errors[0]
        return os.path.basename(path), _opset(m), note
    raise RuntimeError("dynamo export of %s failed: %s" % (name, " | ".join(errors)))


def _opset(m):
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def entry(file, exporter, opset, description, inputs, outputs, expected, gate_order, **extra):
    e = {
        "file": file,
        "generator": GENERATOR,
        "exporter": exporter,
        "opset": opset,
        "description": description,
        "inputs": inputs,
        "outputs": outputs,
        "gate_order": gate_order,
        "expected": expected,
    }
    e.update(extra)
    return e


def expect(cells, layers, standard_rnn_ops=0, kept_ops=None):
    e = {"cells": cells, "layers": layers, "standard_rnn_ops": standard_rnn_ops}
    if kept_ops:
        e["kept_ops"] = kept_ops  # the model's own activations outside its cells (fusion.py)
    return e


class LSTMCellLoop(nn.Module):
    """nn.LSTMCell over a time-major x[T,B,I] with x[t], h0/c0 inputs; returns stack(h), h, c."""

    def __init__(self, I, H):
        super().__init__()
        self.cell = nn.LSTMCell(I, H)

    def forward(self, x, h0, c0):
        h, c = h0, c0
        ys = []
        for t in range(x.shape[0]):
            h, c = self.cell(x[t], (h, c))
            ys.append(h)
        return torch.stack(ys), h, c


class GRUCellLoop(nn.Module):
    """nn.GRUCell over a time-major x[T,B,I] with x[t], h0 input; returns stack(h), h."""

    def __init__(self, I, H):
        super().__init__()
        self.cell = nn.GRUCell(I, H)

    def forward(self, x, h0):
        h = h0
        ys = []
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)
            ys.append(h)
        return torch.stack(ys), h


# ---------------------------------------------------------------------------
# TorchScript exporter (dynamo=False) at opsets the torch 1.13 exporter cannot reach.

def torch2_lstmcell_op18():
    T, B, I, H, opset = 5, 2, 4, 8, 18
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f, got = export_ts("torch2_lstmcell_op18", LSTMCellLoop(I, H), args, ["x", "h0", "c0"],
                       ["y", "h_n", "c_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "nn.LSTMCell in a Python loop, time-major x[T,B,I], step input x[t] (Gather on axis 0), "
        "h stacked with torch.stack -> y[T,B,H]; h0/c0 are graph inputs; TorchScript exporter at opset 18 "
        "(gate chunk is a Split with num_outputs=4).",
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


def torch2_grucell_op18():
    T, B, I, H, opset = 4, 3, 5, 6, 18
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, H))
    f, got = export_ts("torch2_grucell_op18", GRUCellLoop(I, H), args, ["x", "h0"], ["y", "h_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "nn.GRUCell loop, time-major, step x[t] (Gather); h0 is a graph input; TorchScript exporter at opset 18.",
        {"x": [T, B, I], "h0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=True, initial_state="inputs",
                             linear_before_reset=True, step_extraction="Gather axis 0")]),
        TORCH_GRU_ORDER)


def torch2_rnncell_op19():
    T, B, I, H, opset = 6, 2, 3, 5, 19
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.RNNCell(I, H, nonlinearity="tanh")

        def forward(self, x):
            h = None
            ys = []
            for t in range(x.shape[0]):
                h = self.cell(x[t], h)
                ys.append(h)
            return torch.stack(ys), h

    f, got = export_ts("torch2_rnncell_op19", M(), (torch.randn(T, B, I),), ["x"], ["y", "h_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "nn.RNNCell(nonlinearity='tanh') loop, time-major x[t]; zero state made by RNNCell (hx=None); "
        "TorchScript exporter at opset 19.",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=True, initial_state="zeros",
                             activation="tanh", step_extraction="Gather axis 0")]),
        "single gate: h' = tanh(W_ih x + b_ih + W_hh h + b_hh)")


def torch2_lstm_8linear_op18():
    T, B, I, H, opset = 4, 2, 5, 6, 18
    torch.manual_seed(SEED)

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            for g in "ifgo":
                setattr(self, "W_" + g, nn.Linear(I, H))  # input projections (with bias)
                setattr(self, "U_" + g, nn.Linear(H, H))  # recurrent projections (with bias)

        def forward(self, x, h, c):
            i = torch.sigmoid(self.W_i(x) + self.U_i(h))
            f = torch.sigmoid(self.W_f(x) + self.U_f(h))
            g = torch.tanh(self.W_g(x) + self.U_g(h))
            o = torch.sigmoid(self.W_o(x) + self.U_o(h))
            c = f * c + i * g
            h = o * torch.tanh(c)
            return h, c

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = Cell()

        def forward(self, x, h0, c0):
            h, c = h0, c0
            ys = []
            for t in range(x.shape[0]):
                h, c = self.cell(x[t], h, c)
                ys.append(h)
            return torch.stack(ys), h, c

    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f, got = export_ts("torch2_lstm_8linear_op18", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "Hand-written LSTM cell with 8 nn.Linear layers (W_i,U_i,W_f,U_f,W_g,U_g,W_o,U_o, each with bias; "
        "-> 8 Gemm per step), sigmoid/tanh gates written out, time-major loop with x[t]; h0/c0 inputs; "
        "TorchScript exporter at opset 18.",
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0", separate_gate_weights=True)]),
        "i,f,g,o as separate Linear layers per gate (no fused 4H weight); c' = f*c + i*g, h' = o*tanh(c')")


def torch2_lstmcell_stacked_equal_op18():
    T, B, H, opset = 4, 2, 8, 18
    I = H
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.LSTMCell(H, H)
            self.l2 = nn.LSTMCell(H, H)

        def forward(self, x):
            s1 = s2 = None
            ys = []
            for t in range(x.shape[0]):
                s1 = self.l1(x[t], s1)
                s2 = self.l2(s1[0], s2)
                ys.append(s2[0])
            return torch.stack(ys)

    f, got = export_ts("torch2_lstmcell_stacked_equal_op18", M(), (torch.randn(T, B, I),), ["x"], ["y"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "Two stacked nn.LSTMCell(8, 8) layers in one time loop (input size == hidden size == 8 for both, so the "
        "two layers' weights have identical shapes): layer 2 consumes layer 1's h at the same step; zero states "
        "from LSTMCell(hx=None); only the top layer's h is output (stacked); TorchScript exporter at opset 18.",
        {"x": [T, B, I]},
        {"y": [T, B, H]},
        expect("lstm", [
            layer("lstm", T, H, I, batch=B, time_major=True, initial_state="zeros", step_extraction="Gather axis 0"),
            layer("lstm", T, H, H, batch=B, time_major=True, initial_state="zeros", input_from="layer 0 h"),
        ]),
        TORCH_LSTM_ORDER)


def torch2_lstmcell_batchfirst_op20():
    B, T, I, H, opset = 2, 5, 4, 6, 20
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x, h0, c0):
            h, c = h0, c0
            ys = []
            for t in range(x.shape[1]):
                h, c = self.cell(x[:, t], (h, c))
                ys.append(h)
            return torch.stack(ys, dim=1), h, c

    args = (torch.randn(B, T, I), torch.randn(B, H), torch.randn(B, H))
    f, got = export_ts("torch2_lstmcell_batchfirst_op20", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "nn.LSTMCell loop, batch-first x[B,T,I], step input x[:, t] (Gather on axis 1), y = stack(dim=1); "
        "h0/c0 are graph inputs; TorchScript exporter at opset 20.",
        {"x": [B, T, I], "h0": [B, H], "c0": [B, H]},
        {"y": [B, T, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="inputs",
                              step_extraction="Gather axis 1")]),
        TORCH_LSTM_ORDER)


# ---------------------------------------------------------------------------
# Dynamo exporter (dynamo=True).

def torch2_lstmcell_dynamo():
    T, B, I, H = 4, 2, 5, 7
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f, got, note = export_dynamo("torch2_lstmcell_dynamo", LSTMCellLoop(I, H), args, ["x", "h0", "c0"],
                                 ["y", "h_n", "c_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.LSTMCell loop, time-major x[T,B,I], step input x[t], y = torch.stack(h); h0/c0 are graph inputs; "
        "dynamo exporter (torch.export + onnxscript, %s)." % note,
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


def torch2_grucell_dynamo():
    T, B, I, H = 4, 2, 5, 6
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, H))
    f, got, note = export_dynamo("torch2_grucell_dynamo", GRUCellLoop(I, H), args, ["x", "h0"], ["y", "h_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.GRUCell loop, time-major x[T,B,I], step input x[t], y = torch.stack(h); h0 is a graph input; "
        "dynamo exporter (torch.export + onnxscript, %s)." % note,
        {"x": [T, B, I], "h0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=True, initial_state="inputs",
                             linear_before_reset=True, step_extraction="Gather axis 0")]),
        TORCH_GRU_ORDER)


class GRUIntoLSTMLoops(nn.Module):
    """nn.GRUCell loop over x[t], then an nn.LSTMCell loop of another width over the GRU's h."""

    def __init__(self, I, H, H2):
        super().__init__()
        self.gru, self.lstm, self.H2 = nn.GRUCell(I, H), nn.LSTMCell(H, H2), H2

    def forward(self, x, h0):
        h, ys = h0, []
        for t in range(x.shape[0]):
            h = self.gru(x[t], h)
            ys.append(h)
        h2 = torch.zeros(x.shape[1], self.H2)
        c2 = torch.zeros(x.shape[1], self.H2)
        zs = []
        for t in range(x.shape[0]):
            h2, c2 = self.lstm(ys[t], (h2, c2))
            zs.append(h2)
        return torch.stack(zs)


def torch2_gru_into_lstm_dynamo():
    T, B, I, H, H2 = 5, 2, 4, 6, 9
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, H))
    f, got, note = export_dynamo("torch2_gru_into_lstm_dynamo", GRUIntoLSTMLoops(I, H, H2), args,
                                 ["x", "h0"], ["y"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "Chained layers of different kinds and widths: an nn.GRUCell loop (H 6, h0 input) over x[t], "
        "then an nn.LSTMCell loop (H 9, zero state) over the GRU's per-step h; dynamo exporter (%s)."
        % note,
        {"x": [T, B, I], "h0": [B, H]},
        {"y": [T, B, H2]},
        expect("mixed", [layer("gru", T, H, I, batch=B, time_major=True, initial_state="inputs",
                               linear_before_reset=True, step_extraction="Gather axis 0"),
                         layer("lstm", T, H2, H, batch=B, time_major=True, initial_state="zeros",
                               input_from="layer 0 y")]),
        TORCH_GRU_ORDER + "; " + TORCH_LSTM_ORDER)


class BiLSTMCellLoops(nn.Module):
    """Two nn.LSTMCell loops over x[t], t = 0..T-1 and T-1..0, from zero states; y = cat of both."""

    def __init__(self, I, H):
        super().__init__()
        self.fwd, self.bwd, self.H = nn.LSTMCell(I, H), nn.LSTMCell(I, H), H

    def forward(self, x):
        z = torch.zeros(x.shape[1], self.H)
        h, c, yf = z, z, []
        for t in range(x.shape[0]):
            h, c = self.fwd(x[t], (h, c))
            yf.append(h)
        h, c, yb = z, z, []
        for t in reversed(range(x.shape[0])):
            h, c = self.bwd(x[t], (h, c))
            yb.insert(0, h)
        return torch.cat([torch.stack(yf), torch.stack(yb)], -1)


def torch2_bilstmcell_dynamo():
    T, B, I, H = 5, 2, 4, 6
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I),)
    f, got, note = export_dynamo("torch2_bilstmcell_dynamo", BiLSTMCellLoops(I, H), args, ["x"], ["y"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "A bidirectional LSTM written by hand: two nn.LSTMCell loops over x[t] (forward, then "
        "t = T-1..0), zero states; y = cat of both h sequences on the feature axis; dynamo exporter (%s)."
        % note,
        {"x": [T, B, I]},
        {"y": [T, B, 2 * H]},
        expect("lstm", [layer("lstm", T, H, I, direction="bidirectional", batch=B, time_major=True,
                              initial_state="zeros", step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


class RNNModule(nn.Module):
    """nn.RNN called with or without h0; returns (y, h_n) or y."""

    def __init__(self, with_hn, **kw):
        super().__init__()
        self.rnn, self.with_hn = nn.RNN(**kw), with_hn

    def forward(self, x, *h0):
        y, hn = self.rnn(x, *h0)
        return (y, hn) if self.with_hn else y


def torch2_rnn_dynamo():
    T, B, I, H = 5, 2, 4, 6
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(1, B, H))
    f, got, note = export_dynamo("torch2_rnn_dynamo", RNNModule(True, input_size=I, hidden_size=H),
                                 args, ["x", "h0"], ["y", "h_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.RNN (tanh), time-major x[T,B,I], h0 a graph input; the dynamo exporter unrolls "
        "torch.export's decomposition: the input projection computed once for all steps "
        "(MatMul + Add, cut per step by Slice + Squeeze) and the state kept as [1, B, H] "
        "(%s)." % note,
        {"x": [T, B, I], "h0": [1, B, H]},
        {"y": [T, B, H], "h_n": [1, B, H]},
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=True, initial_state="inputs",
                             step_extraction="Slice + Squeeze of the hoisted projection")]),
        "one gate (h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh))")


def torch2_rnn_bidir2_relu_dynamo():
    T, B, I, H = 6, 3, 5, 4
    torch.manual_seed(SEED)
    args = (torch.randn(B, T, I),)
    f, got, note = export_dynamo(
        "torch2_rnn_bidir2_relu_dynamo",
        RNNModule(False, input_size=I, hidden_size=H, num_layers=2, nonlinearity="relu",
                  bidirectional=True, batch_first=True),
        args, ["x"], ["y"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.RNN (relu), two bidirectional layers, batch_first x[B,T,I], zero state; the dynamo "
        "exporter unrolls torch.export's decomposition: per direction an input projection "
        "computed once (the reverse one flipped by a Slice with step -1), the state kept as "
        "[1, B, H] (%s)." % note,
        {"x": [B, T, I]},
        {"y": [B, T, 2 * H]},
        expect("rnn", [layer("rnn", T, H, I, direction="bidirectional", batch=B, time_major=False,
                             initial_state="zeros", activation="Relu"),
                       layer("rnn", T, H, 2 * H, direction="bidirectional", batch=B,
                             time_major=False, initial_state="zeros", activation="Relu",
                             input_from="layer 0 y")]),
        "one gate (h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh))")


class HoistedLSTM(nn.Module):
    """An LSTM written as torch.export decomposes nn.LSTM: the input projection of all steps at
    once, the state kept as [1, B, H], the gates cut by chunk(4, -1); zero state; y = cat of h."""

    def __init__(self, I, H):
        super().__init__()
        self.H = H
        self.w_ih = nn.Parameter(torch.randn(4 * H, I) * 0.3)
        self.b_ih = nn.Parameter(torch.randn(4 * H) * 0.1)
        self.w_hh = nn.Parameter(torch.randn(4 * H, H) * 0.3)
        self.b_hh = nn.Parameter(torch.randn(4 * H) * 0.1)

    def forward(self, x):
        pre = nn.functional.linear(x, self.w_ih, self.b_ih)
        h = torch.zeros(1, x.shape[1], self.H)
        c = torch.zeros(1, x.shape[1], self.H)
        ys = []
        for t in range(x.shape[0]):
            g = pre[t] + nn.functional.linear(h, self.w_hh, self.b_hh)
            i, f, gg, o = g.chunk(4, -1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            h = torch.sigmoid(o) * torch.tanh(c)
            ys.append(h)
        return torch.cat(ys, 0)


def torch2_lstm_hoisted_dynamo():
    T, B, I, H = 4, 2, 3, 5
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I),)
    f, got, note = export_dynamo("torch2_lstm_hoisted_dynamo", HoistedLSTM(I, H), args, ["x"], ["y"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "An LSTM written as torch.export decomposes nn.LSTM: one input projection for all steps "
        "(MatMul + Add, a step cut by Gather), the state kept as [1, B, H], the gates cut by "
        "chunk(4, -1) (a Split on axis 2); zero state; dynamo exporter (%s)." % note,
        {"x": [T, B, I]},
        {"y": [T, B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="zeros",
                              step_extraction="Gather of the hoisted projection")]),
        TORCH_LSTM_ORDER)


class HoistedReverseGRU(nn.Module):
    """A GRU written as torch.export decomposes nn.GRU, run backwards in time: one input projection
    for all steps, h0 a graph input [1, B, H] (read by the recurrent product and by the update),
    gates cut by chunk(3, -1); returns the stack in time order and the last state."""

    def __init__(self, I, H):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(3 * H, I) * 0.3)
        self.b_ih = nn.Parameter(torch.randn(3 * H) * 0.1)
        self.w_hh = nn.Parameter(torch.randn(3 * H, H) * 0.3)
        self.b_hh = nn.Parameter(torch.randn(3 * H) * 0.1)

    def forward(self, x, h0):
        pre = nn.functional.linear(x, self.w_ih, self.b_ih)
        h, ys = h0, []
        for t in reversed(range(x.shape[0])):
            ir, iz, i_n = pre[t].chunk(3, -1)
            hr, hz, h_n = nn.functional.linear(h, self.w_hh, self.b_hh).chunk(3, -1)
            r = torch.sigmoid(ir + hr)
            z = torch.sigmoid(iz + hz)
            n = torch.tanh(i_n + r * h_n)
            h = (h - n) * z + n
            ys.insert(0, h)
        return torch.cat(ys, 0), h


def torch2_gru_hoisted_reverse_dynamo():
    T, B, I, H = 4, 2, 3, 5
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(1, B, H))
    f, got, note = export_dynamo("torch2_gru_hoisted_reverse_dynamo", HoistedReverseGRU(I, H), args,
                                 ["x", "h0"], ["y", "h_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "A reverse GRU written as torch.export decomposes nn.GRU: one input projection for all "
        "steps (a step cut by Gather), h0 a graph input [1, B, H] read by the recurrent product "
        "and by the update, the state kept as [1, B, H], gates by chunk(3, -1); dynamo exporter "
        "(%s)." % note,
        {"x": [T, B, I], "h0": [1, B, H]},
        {"y": [T, B, H], "h_n": [1, B, H]},
        expect("gru", [layer("gru", T, H, I, direction="reverse", batch=B, time_major=True,
                             initial_state="inputs", linear_before_reset=True,
                             step_extraction="Gather of the hoisted projection")]),
        TORCH_GRU_ORDER)


def torch2_lstmcell_dynamo_noopt():
    T, B, I, H = 4, 2, 5, 7
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f, got, note = export_dynamo("torch2_lstmcell_dynamo_noopt", LSTMCellLoop(I, H), args,
                                 ["x", "h0", "c0"], ["y", "h_n", "c_n"], optimize=False)
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.LSTMCell loop as torch2_lstmcell_dynamo, exported with optimize=False: the gates "
        "cut by SplitToSequence + SequenceAt (torch's chunk before the optimizer makes it a "
        "Split), Constant nodes, no constant folding (%s)." % note,
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


class Seq2SeqEncoder(nn.Module):
    """The encoder of PyTorch's seq2seq translation tutorial: an Embedding, then an nn.GRU (or
    nn.LSTM) called on one token at a time, its state passed from each call to the next."""

    def __init__(self, kind, V, H, layers=1):
        super().__init__()
        self.emb, self.lstm = nn.Embedding(V, H), kind == "LSTM"
        self.rnn = getattr(nn, kind)(H, H, num_layers=layers)

    def forward(self, tokens, *state):
        state = state if self.lstm else state[0]
        ys = []
        for t in range(tokens.shape[0]):
            y, state = self.rnn(self.emb(tokens[t]).view(1, 1, -1), state)
            ys.append(y)
        return (torch.cat(ys, 0),) + (tuple(state) if self.lstm else (state,))


def torch2_s2s_encoder_gru_op18():
    T, V, H, opset = 6, 20, 8, 18
    torch.manual_seed(SEED)
    args = (torch.randint(0, V, (T,)), torch.randn(1, 1, H))
    f, got = export_ts("torch2_s2s_encoder_gru_op18", Seq2SeqEncoder("GRU", V, H), args,
                       ["tokens", "h0"], ["y", "h_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "The seq2seq tutorial's encoder: Embedding of tokens[t] viewed as [1, 1, H], then nn.GRU "
        "called once per token; the graph is T one-step ONNX GRU nodes, each one's Y_h the "
        "next one's initial_h, the step inputs Gathers of the embedding table.",
        {"tokens": [T], "h0": [1, 1, H]},
        {"y": [T, 1, H], "h_n": [1, 1, H]},
        expect("gru", [layer("gru", T, H, H, batch=1, time_major=True, initial_state="inputs",
                             step_extraction="per-step Embedding (Gather), computed for all steps at once")],
               standard_rnn_ops=T),
        TORCH_GRU_ORDER)


def torch2_s2s_encoder_gru2_op18():
    T, V, H, L, opset = 5, 20, 8, 2, 18
    torch.manual_seed(SEED)
    args = (torch.randint(0, V, (T,)), torch.randn(L, 1, H))
    f, got = export_ts("torch2_s2s_encoder_gru2_op18", Seq2SeqEncoder("GRU", V, H, layers=L), args,
                       ["tokens", "h0"], ["y", "h_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "The seq2seq tutorial's encoder with nn.GRU(num_layers=2), called once per token: per call "
        "two one-step ONNX GRU nodes, the state [2, 1, H] the Concat of their Y_h and each "
        "layer's next initial_h a Slice of it; layer 2 reads layer 1's Y.",
        {"tokens": [T], "h0": [L, 1, H]},
        {"y": [T, 1, H], "h_n": [L, 1, H]},
        expect("gru", [layer("gru", T, H, H, batch=1, time_major=True, initial_state="inputs",
                             step_extraction="per-step Embedding (Gather), computed for all steps at once"),
                       layer("gru", T, H, H, batch=1, time_major=True, initial_state="inputs",
                             step_extraction="layer 1's Y")],
               standard_rnn_ops=2 * T),
        TORCH_GRU_ORDER)


def torch2_s2s_encoder_lstm_dynamo():
    T, V, H = 5, 20, 8
    torch.manual_seed(SEED)
    args = (torch.randint(0, V, (T,)), torch.randn(1, 1, H), torch.randn(1, 1, H))
    f, got, note = export_dynamo("torch2_s2s_encoder_lstm_dynamo", Seq2SeqEncoder("LSTM", V, H),
                                 args, ["tokens", "h0", "c0"], ["y", "h_n", "c_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "The seq2seq tutorial's encoder with nn.LSTM: T one-step ONNX LSTM nodes; the dynamo "
        "exporter passes each state through a Slice of its layer axis and reads Y through a "
        "Transpose and a Reshape (%s)." % note,
        {"tokens": [T], "h0": [1, 1, H], "c0": [1, 1, H]},
        {"y": [T, 1, H], "h_n": [1, 1, H], "c_n": [1, 1, H]},
        expect("lstm", [layer("lstm", T, H, H, batch=1, time_major=True, initial_state="inputs",
                              step_extraction="per-step Embedding (Gather), computed for all steps at once")],
               standard_rnn_ops=T),
        TORCH_LSTM_ORDER)


class ProjectedGRUCellLoop(nn.Module):
    """Linear + ReLU of x[t] inside the loop, then nn.GRUCell from a zero state."""

    def __init__(self, I, P, H):
        super().__init__()
        self.proj, self.cell, self.H = nn.Linear(I, P), nn.GRUCell(P, H), H

    def forward(self, x):
        h = torch.zeros(x.shape[1], self.H)
        ys = []
        for t in range(x.shape[0]):
            h = self.cell(torch.relu(self.proj(x[t])), h)
            ys.append(h)
        return torch.stack(ys)


def torch2_grucell_projected_op18():
    T, B, I, P, H, opset = 5, 2, 6, 4, 8, 18
    torch.manual_seed(SEED)
    f, got = export_ts("torch2_grucell_projected_op18", ProjectedGRUCellLoop(I, P, H),
                       (torch.randn(T, B, I),), ["x"], ["y"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "nn.GRUCell loop whose step input is relu(Linear(x[t])), computed inside the loop; zero "
        "initial state, which the exporter folds into two zero constants in the first step (one "
        "in the recurrent Gemm, one in the update). Fused, the projection runs once for all "
        "steps (one MatMul, Add and Relu: kept_ops).",
        {"x": [T, B, I]},
        {"y": [T, B, H]},
        expect("gru", [layer("gru", T, H, P, batch=B, time_major=True, initial_state="zero",
                             step_extraction="per-step Linear + ReLU, computed for all steps at once")],
               kept_ops={"Relu": 1}),
        TORCH_GRU_ORDER)


class EmbeddingLSTMCellLoop(nn.Module):
    """nn.LSTMCell over the embeddings of tokens[:, t] (batch-major tokens [B, T])."""

    def __init__(self, V, E, H):
        super().__init__()
        self.emb, self.cell, self.H = nn.Embedding(V, E), nn.LSTMCell(E, H), H

    def forward(self, tokens, h0, c0):
        h, c = h0, c0
        ys = []
        for t in range(tokens.shape[1]):
            h, c = self.cell(self.emb(tokens[:, t]), (h, c))
            ys.append(h)
        return torch.stack(ys, 1), h


def torch2_lstmcell_embedding_dynamo():
    T, B, V, E, H = 5, 3, 20, 6, 8
    torch.manual_seed(SEED)
    args = (torch.randint(0, V, (B, T)), torch.randn(B, H), torch.randn(B, H))
    f, got, note = export_dynamo("torch2_lstmcell_embedding_dynamo", EmbeddingLSTMCellLoop(V, E, H),
                                 args, ["tokens", "h0", "c0"], ["y", "h_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.LSTMCell loop over emb(tokens[:, t]), tokens batch-major [B, T], computed inside the "
        "loop; y = torch.stack(h, 1) (%s)." % note,
        {"tokens": [B, T], "h0": [B, H], "c0": [B, H]},
        {"y": [B, T, H], "h_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, E, batch=B, time_major=False, initial_state="inputs",
                              step_extraction="per-step Embedding (Gather), computed for all steps at once")]),
        TORCH_LSTM_ORDER)


class ConditionedCellLoop(nn.Module):
    """A cell over cat([step input, cond]) at every step: the step input a token's embedding
    (tokens batch-major [B, T]) or x[t] (time-major x); cond [B, C] the same at every step.
    Zero initial state."""

    def __init__(self, cell, I, C, H, V=None):
        super().__init__()
        self.emb = nn.Embedding(V, I) if V else None
        self.cell, self.H = cell(I + C, H), H
        self.lstm = isinstance(self.cell, nn.LSTMCell)

    def forward(self, x, cond):
        B = cond.shape[0]
        h = torch.zeros(B, self.H)
        c = torch.zeros(B, self.H)
        ys = []
        for t in range(x.shape[1] if self.emb is not None else x.shape[0]):
            xt = self.emb(x[:, t]) if self.emb is not None else x[t]
            xt = torch.cat([xt, cond], dim=1)
            if self.lstm:
                h, c = self.cell(xt, (h, c))
            else:
                h = self.cell(xt, h)
            ys.append(h)
        return torch.stack(ys, 1 if self.emb is not None else 0), h


def torch2_grucell_conditioned_op18():
    T, B, V, E, C, H, opset = 5, 3, 20, 6, 4, 8, 18
    torch.manual_seed(SEED)
    f, got = export_ts("torch2_grucell_conditioned_op18", ConditionedCellLoop(nn.GRUCell, E, C, H, V),
                       (torch.randint(0, V, (B, T)), torch.randn(B, C)), ["tokens", "cond"],
                       ["y", "h_n"], opset)
    return entry(
        f, EXPORTER_TS, got,
        "nn.GRUCell loop over torch.cat([emb(tokens[:, t]), cond], 1): each step's input joined "
        "from a token's embedding and a condition vector every step reads; zero initial state "
        "(two zero constants in the first step). Fused, the embeddings of all steps are joined "
        "with cond repeated T times (one Gather, Expand and Concat).",
        {"tokens": [B, T], "cond": [B, C]},
        {"y": [B, T, H], "h_n": [B, H]},
        expect("gru", [layer("gru", T, H, E + C, batch=B, time_major=False, initial_state="zero",
                             step_extraction="per-step Embedding joined with a shared vector "
                                             "(Concat), computed for all steps at once")]),
        TORCH_GRU_ORDER)


def torch2_lstmcell_conditioned_dynamo():
    T, B, I, C, H = 5, 2, 6, 4, 8
    torch.manual_seed(SEED)
    args = (torch.randn(T, B, I), torch.randn(B, C))
    f, got, note = export_dynamo("torch2_lstmcell_conditioned_dynamo",
                                 ConditionedCellLoop(nn.LSTMCell, I, C, H), args, ["x", "cond"],
                                 ["y", "h_n"])
    return entry(
        f, EXPORTER_DYNAMO, got,
        "nn.LSTMCell loop over torch.cat([x[t], cond], 1), zero initial state: the exporter folds "
        "the first step's state away, so that step's gates read only the Concat's two parts "
        "(%s)." % note,
        {"x": [T, B, I], "cond": [B, C]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I + C, batch=B, time_major=True, initial_state="zero",
                              step_extraction="per-step Concat with a shared vector, computed "
                                              "for all steps at once")]),
        TORCH_LSTM_ORDER)


class ScriptedLSTMCellLoop(nn.Module):
    """nn.LSTMCell over x[t] in a loop meant for torch.jit.script: outputs collected by
    `ys.append(h)`, zero initial state. `manual`: the cell written out as Linear(cat([x, h]))
    and chunk(4) instead."""

    def __init__(self, I, H, manual):
        super().__init__()
        self.H = H
        self.manual = manual
        self.cell = nn.LSTMCell(I, H)
        self.lin = nn.Linear(I + H, 4 * H)

    def forward(self, x):
        h = torch.zeros(x.size(1), self.H)
        c = torch.zeros(x.size(1), self.H)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            if self.manual:
                i, f, g, o = self.lin(torch.cat([x[t], h], 1)).chunk(4, 1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
            else:
                h, c = self.cell(x[t], (h, c))
            ys.append(h)
        return torch.stack(ys), h


def _scripted_lstm(name, manual):
    T, B, I, H, opset = 5, 2, 4, 6, 17
    torch.manual_seed(SEED)
    model = torch.jit.script(ScriptedLSTMCellLoop(I, H, manual).eval())
    f, got = export_ts(name, model, (torch.randn(T, B, I),), ["x"], ["y", "h_n"], opset)
    return f, got, T, B, I, H


def torch2_lstmcell_scripted_op17():
    f, got, T, B, I, H = _scripted_lstm("torch2_lstmcell_scripted_op17", False)
    return entry(
        f, EXPORTER_TS, got,
        "torch.jit.script of an nn.LSTMCell loop collecting h by ys.append(h): an ONNX Loop "
        "(trip count 5) whose body calls a one-step LSTM node, the list a SequenceInsert on a "
        "loop-carried sequence, then ConcatFromSequence; zero initial state.",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="zero",
                              step_extraction="ONNX Loop unrolled: one-step LSTM nodes chained")]),
        TORCH_LSTM_ORDER)


def torch2_lstmcell_scripted_dyntime_op17():
    T, B, I, H, opset = 5, 2, 4, 6, 17
    name = "torch2_lstmcell_scripted_dyntime_op17"
    torch.manual_seed(SEED)
    model = torch.jit.script(ScriptedLSTMCellLoop(I, H, False).eval())
    f, got = export_ts(name, model, (torch.randn(T, B, I),), ["x"], ["y", "h_n"], opset,
                       dynamic_axes={"x": {0: "T"}, "y": {0: "T"}})
    return entry(
        f, EXPORTER_TS, got,
        "torch.jit.script of an nn.LSTMCell loop collecting h by ys.append(h), exported with a "
        "dynamic time axis: an ONNX Loop whose trip count is x.size(0), read from x's shape when "
        "the model runs, its body a one-step LSTM node, the list a SequenceInsert on a "
        "loop-carried sequence, then ConcatFromSequence; zero initial state. lstm-opt makes the "
        "Loop one LSTM layer, its time axis left dynamic.",
        {"x": ["T", B, I]},
        {"y": ["T", B, H], "h_n": [B, H]},
        expect("lstm", [layer("lstm", "T", H, I, batch=B, time_major=True, initial_state="zero",
                              step_extraction="ONNX Loop over x.size(0) steps: one layer")]),
        TORCH_LSTM_ORDER)


class ScriptedBiLSTMCellFlip(nn.Module):
    """Two scripted nn.LSTMCell loops, the backward one over x.flip(0), its stacked outputs
    flipped back and concatenated with the forward one's (a hand-written bidirectional
    LSTM)."""

    def __init__(self, I, H):
        super().__init__()
        self.fwd = ScriptedLSTMCellLoop(I, H, False)
        self.bwd = ScriptedLSTMCellLoop(I, H, False)

    def forward(self, x):
        yf, _ = self.fwd(x)
        yb, _ = self.bwd(x.flip(0))
        return torch.cat([yf, yb.flip(0)], 2)


def torch2_bilstmcell_scripted_flip_dyntime_op18():
    T, B, I, H, opset = 5, 2, 4, 6, 18
    name = "torch2_bilstmcell_scripted_flip_dyntime_op18"
    torch.manual_seed(SEED)
    model = torch.jit.script(ScriptedBiLSTMCellFlip(I, H).eval())
    f, got = export_ts(name, model, (torch.randn(T, B, I),), ["x"], ["y"], opset,
                       dynamic_axes={"x": {0: "T"}, "y": {0: "T"}})
    return entry(
        f, EXPORTER_TS, got,
        "torch.jit.script of a hand-written bidirectional LSTM: two nn.LSTMCell loops collecting "
        "h by ys.append(h), the backward one over x.flip(0) with its stacked outputs flipped "
        "back (Slices of step -1), exported with a dynamic time axis: two ONNX Loops over "
        "x.size(0) steps. lstm-opt makes each Loop a layer, the backward one a reverse layer "
        "over x, and pairs them into one bidirectional LSTM.",
        {"x": ["T", B, I]},
        {"y": ["T", B, 2 * H]},
        expect("lstm", [layer("lstm", "T", H, I, direction="bidirectional", batch=B,
                              time_major=True, initial_state="zero",
                              step_extraction="two ONNX Loops over x.size(0) steps, one over "
                                              "x.flip(0)")]),
        TORCH_LSTM_ORDER)


def torch2_lstm_manual_scripted_op17():
    f, got, T, B, I, H = _scripted_lstm("torch2_lstm_manual_scripted_op17", True)
    return entry(
        f, EXPORTER_TS, got,
        "torch.jit.script of a written-out LSTM step (Linear(cat([x[t], h])), chunk(4)) collecting "
        "h by ys.append(h): an ONNX Loop (trip count 5), the list a SequenceInsert on a "
        "loop-carried sequence, then ConcatFromSequence; zero initial state.",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="zero",
                              step_extraction="ONNX Loop unrolled: per-step Gather")]),
        TORCH_LSTM_ORDER)


FIXTURES = [
    torch2_lstmcell_op18,
    torch2_grucell_op18,
    torch2_rnncell_op19,
    torch2_lstm_8linear_op18,
    torch2_lstmcell_stacked_equal_op18,
    torch2_lstmcell_batchfirst_op20,
    torch2_lstmcell_dynamo,
    torch2_grucell_dynamo,
    torch2_gru_into_lstm_dynamo,
    torch2_bilstmcell_dynamo,
    torch2_rnn_dynamo,
    torch2_rnn_bidir2_relu_dynamo,
    torch2_lstm_hoisted_dynamo,
    torch2_gru_hoisted_reverse_dynamo,
    torch2_lstmcell_dynamo_noopt,
    torch2_s2s_encoder_gru_op18,
    torch2_s2s_encoder_gru2_op18,
    torch2_s2s_encoder_lstm_dynamo,
    torch2_grucell_projected_op18,
    torch2_lstmcell_embedding_dynamo,
    torch2_grucell_conditioned_op18,
    torch2_lstmcell_conditioned_dynamo,
    torch2_lstmcell_scripted_op17,
    torch2_lstm_manual_scripted_op17,
    torch2_lstmcell_scripted_dyntime_op17,
    torch2_bilstmcell_scripted_flip_dyntime_op18,
]


def main(argv):
    torch.set_num_threads(1)
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
        # Partial run: keep this generator's other entries as they are.
        import json
        from _manifest_util import MANIFEST
        old = json.load(open(MANIFEST)) if os.path.exists(MANIFEST) else []
        done = {e["file"] for e in entries}
        entries += [e for e in old if e.get("generator") == GENERATOR and e["file"] not in done]
    update_manifest(GENERATOR, entries)


if __name__ == "__main__":
    main(sys.argv[1:])

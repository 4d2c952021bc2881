#!/usr/bin/python3
"""Generate PyTorch-exported ONNX fixtures for lstm-opt end-to-end tests.

Run with Debian's python3-torch (1.13, CPU):

    /usr/bin/python3 test/e2e/models/gen_torch.py            # all fixtures
    /usr/bin/python3 test/e2e/models/gen_torch.py NAME ...   # only some (by function/file stem)

Every fixture is produced by one function below; each function builds a small
module, exports it with torch.onnx.export and returns its manifest entry.  The
entries are merged into manifest.json (entries of other generators are kept).
Weights are deterministic: torch.manual_seed(SEED) is called before each model
is built, so a fixture does not change when another one is added or removed.

Gate orders (torch): LSTMCell / nn.LSTM weights are i,f,g,o; GRUCell / nn.GRU
are r,z,n with the reset gate applied after the recurrent matmul
(ONNX linear_before_reset=1).  When nn.LSTM/nn.GRU are exported as ONNX
LSTM/GRU ops the exporter reorders the weights to the ONNX order
(LSTM i,o,f,c; GRU z,r,h).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _manifest_util import HERE, layer, update_manifest  # noqa: E402

GENERATOR = "gen_torch.py"
EXPORTER = "torch %s" % ".".join(torch.__version__.split(".")[:2])  # "torch 1.13"
SEED = 1234

TORCH_LSTM_ORDER = "i,f,g,o (torch LSTMCell/nn.LSTM weight chunks; c' = f*c + i*g, h' = o*tanh(c'))"
TORCH_GRU_ORDER = "r,z,n (torch GRUCell/nn.GRU weight chunks; n = tanh(W_in x + b_in + r*(W_hn h + b_hn)), h' = (1-z)*n + z*h)"
ONNX_LSTM_ORDER = "ONNX LSTM op order i,o,f,c (exporter reorders torch's i,f,g,o)"
ONNX_GRU_ORDER = "ONNX GRU op order z,r,h (exporter reorders torch's r,z,n), linear_before_reset=1"


def export(name, model, args, input_names, output_names, opset, dynamic_axes=None):
    path = os.path.join(HERE, name + ".onnx")
    model.eval()
    with torch.no_grad():
        torch.onnx.export(
            model,
            args,
            path,
            input_names=input_names,
            output_names=output_names,
            opset_version=opset,
            dynamic_axes=dynamic_axes,
            do_constant_folding=True,
        )
    return os.path.basename(path)


def entry(file, opset, description, inputs, outputs, expected, gate_order, **extra):
    e = {
        "file": file,
        "generator": GENERATOR,
        "exporter": EXPORTER,
        "opset": opset,
        "description": description,
        "inputs": inputs,
        "outputs": outputs,
        "gate_order": gate_order,
        "expected": expected,
    }
    e.update(extra)
    return e


def expect(cells, layers, standard_rnn_ops=0):
    return {"cells": cells, "layers": layers, "standard_rnn_ops": standard_rnn_ops}


# ---------------------------------------------------------------------------
# 1a. LSTMCell loop, time-major, stepping with x[t] (Gather), h0/c0 inputs.
def torch_lstmcell_gather():
    T, B, I, H, opset = 5, 3, 5, 7, 14
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x, h0, c0):
            h, c = h0, c0
            ys = []
            for t in range(x.shape[0]):
                h, c = self.cell(x[t], (h, c))
                ys.append(h)
            return torch.stack(ys), h, c

    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f = export("torch_lstmcell_gather", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "nn.LSTMCell in a Python loop, time-major x[T,B,I], step input x[t] (Gather on axis 0), "
        "h stacked with torch.stack -> y[T,B,H]; h0/c0 are graph inputs.",
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


# 1b. batch-first, x[:, t] (select -> Gather axis 1), zero state created by LSTMCell (hx=None).
def torch_lstmcell_bf_select():
    B, T, I, H, opset = 1, 6, 4, 8, 12
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x):
            state = None
            ys = []
            for t in range(x.shape[1]):
                state = self.cell(x[:, t], state)
                ys.append(state[0])
            return torch.stack(ys, dim=1), state[0], state[1]

    args = (torch.randn(B, T, I),)
    f = export("torch_lstmcell_bf_select", M(), args, ["x"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "nn.LSTMCell loop, batch-first x[B,T,I] with B=1, step input x[:, t] (Gather on axis 1); "
        "first call with hx=None so LSTMCell makes the zero state inside the graph; y = stack(dim=1).",
        {"x": [B, T, I]},
        {"y": [B, T, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step_extraction="Gather axis 1")]),
        TORCH_LSTM_ORDER)


# 1b'. batch-first, x[:, t:t+1].squeeze(1) (Slice + Squeeze), H = 1, explicit torch.zeros state.
def torch_lstmcell_bf_slice():
    B, T, I, H, opset = 3, 4, 5, 1, 13
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x):
            h = torch.zeros(x.shape[0], H)
            c = torch.zeros(x.shape[0], H)
            ys = []
            for t in range(x.shape[1]):
                h, c = self.cell(x[:, t:t + 1].squeeze(1), (h, c))
                ys.append(h)
            return torch.stack(ys, dim=1), h, c

    args = (torch.randn(B, T, I),)
    f = export("torch_lstmcell_bf_slice", M(), args, ["x"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "nn.LSTMCell loop, batch-first x[B,T,I], step input x[:, t:t+1].squeeze(1) (Slice + Squeeze); "
        "hidden size 1; zero h/c made with torch.zeros (constant-folded).",
        {"x": [B, T, I]},
        {"y": [B, T, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=False, initial_state="zeros",
                              step_extraction="Slice axis 1 + Squeeze")]),
        TORCH_LSTM_ORDER)


# 1c. torch.unbind(x, 0) (Split + Squeeze), h0/c0 inputs.
def torch_lstmcell_unbind():
    T, B, I, H, opset = 3, 2, 6, 16, 15
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x, h0, c0):
            h, c = h0, c0
            ys = []
            for xt in torch.unbind(x, 0):
                h, c = self.cell(xt, (h, c))
                ys.append(h)
            return torch.stack(ys), h, c

    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f = export("torch_lstmcell_unbind", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "nn.LSTMCell loop over torch.unbind(x, 0) (Split + Squeeze), time-major; h0/c0 inputs.",
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Split axis 0 + Squeeze")]),
        TORCH_LSTM_ORDER)


# 1d. GRUCell loop.
def torch_grucell_loop():
    T, B, I, H, opset = 7, 2, 5, 7, 11
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(I, H)

        def forward(self, x, h0):
            h = h0
            ys = []
            for t in range(x.shape[0]):
                h = self.cell(x[t], h)
                ys.append(h)
            return torch.stack(ys), h

    args = (torch.randn(T, B, I), torch.randn(B, H))
    f = export("torch_grucell_loop", M(), args, ["x", "h0"], ["y", "h_n"], opset)
    return entry(
        f, opset,
        "nn.GRUCell loop, time-major, step x[t] (Gather); h0 is a graph input.",
        {"x": [T, B, I], "h0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("gru", [layer("gru", T, H, I, batch=B, time_major=True, initial_state="inputs",
                             linear_before_reset=True, step_extraction="Gather axis 0")]),
        TORCH_GRU_ORDER)


def _rnncell_model(I, H, nonlinearity, with_h0):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.RNNCell(I, H, nonlinearity=nonlinearity)

        def forward(self, x, *h0):
            h = h0[0] if h0 else None
            ys = []
            for t in range(x.shape[0]):
                h = self.cell(x[t], h)
                ys.append(h)
            return torch.stack(ys), h

    return M()


# 1d'. RNNCell loop, tanh, long sequence, B = 1, zero state from RNNCell(hx=None).
def torch_rnncell_tanh():
    T, B, I, H, opset = 12, 1, 3, 4, 16
    torch.manual_seed(SEED)
    m = _rnncell_model(I, H, "tanh", False)
    f = export("torch_rnncell_tanh", m, (torch.randn(T, B, I),), ["x"], ["y", "h_n"], opset)
    return entry(
        f, opset,
        "nn.RNNCell(nonlinearity='tanh') loop, time-major, T=12, B=1; zero state made by RNNCell (hx=None).",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=True, initial_state="zeros",
                             activation="tanh", step_extraction="Gather axis 0")]),
        "single gate: h' = tanh(W_ih x + b_ih + W_hh h + b_hh)")


# 1d''. RNNCell loop, relu, h0 input.
def torch_rnncell_relu():
    T, B, I, H, opset = 4, 3, 2, 5, 17
    torch.manual_seed(SEED)
    m = _rnncell_model(I, H, "relu", True)
    f = export("torch_rnncell_relu", m, (torch.randn(T, B, I), torch.randn(B, H)), ["x", "h0"],
               ["y", "h_n"], opset)
    return entry(
        f, opset,
        "nn.RNNCell(nonlinearity='relu') loop, time-major; h0 is a graph input.",
        {"x": [T, B, I], "h0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H]},
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=True, initial_state="inputs",
                             activation="relu", step_extraction="Gather axis 0")]),
        "single gate: h' = relu(W_ih x + b_ih + W_hh h + b_hh)")


# 1e. Hand-written LSTM cell, one nn.Linear per gate and per input (8 Linear layers).
def torch_lstm_manual_8linear():
    T, B, I, H, opset = 4, 2, 5, 6, 13
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
    f = export("torch_lstm_manual_8linear", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "Hand-written LSTM cell with 8 nn.Linear layers (W_i,U_i,W_f,U_f,W_g,U_g,W_o,U_o, each with bias; "
        "-> 8 Gemm per step), sigmoid/tanh gates written out, time-major loop with x[t]; h0/c0 inputs.",
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0", separate_gate_weights=True)]),
        "i,f,g,o as separate Linear layers per gate (no fused 4H weight); c' = f*c + i*g, h' = o*tanh(c')")


# 1e'. Hand-written LSTM cell whose single weight tensor W is used for BOTH the input
#      and the recurrent projection (I == H).  F.linear without bias lowers to
#      Transpose+MatMul; constant folding produces one transposed copy per use and the
#      exporter's initializer de-duplication turns the copies into Identity nodes.
def torch_lstm_manual_tiedweight():
    T, B, H, opset = 5, 3, 4, 14
    I = H
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Parameter(torch.randn(4 * H, H) * 0.4)  # shared by x- and h-projection
            self.b = nn.Parameter(torch.randn(4 * H) * 0.1)

        def forward(self, x):
            h = torch.zeros(x.shape[1], H)
            c = torch.zeros(x.shape[1], H)
            ys = []
            for t in range(x.shape[0]):
                gates = F.linear(x[t], self.W) + F.linear(h, self.W) + self.b
                i, f, g, o = gates.chunk(4, 1)
                i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
                c = f * c + i * g
                h = o * torch.tanh(c)
                ys.append(h)
            return torch.stack(ys), h, c

    args = (torch.randn(T, B, I),)
    f = export("torch_lstm_manual_tiedweight", M(), args, ["x"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "Hand-written LSTM cell, one weight tensor W[4H,H] used for both x- and h-projection (tied, I == H), "
        "F.linear without bias + separate bias, gates via chunk(4) (Split); the exporter shares W and "
        "emits Identity nodes for the de-duplicated transposed copies; zero state via torch.zeros.",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="zeros",
                              step_extraction="Gather axis 0", tied_input_recurrent_weight=True)]),
        "i,f,g,o (chunks of W and b)")


# 1f. Two LSTMCell layers interleaved in one Python loop.
def torch_lstmcell_2layer_interleaved():
    T, B, I, H1, H2, opset = 5, 2, 4, 6, 3, 16
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.LSTMCell(I, H1)
            self.l2 = nn.LSTMCell(H1, H2)

        def forward(self, x):
            s1 = s2 = None
            ys = []
            for t in range(x.shape[0]):
                s1 = self.l1(x[t], s1)
                s2 = self.l2(s1[0], s2)
                ys.append(s2[0])
            return torch.stack(ys), s1[0], s1[1], s2[0], s2[1]

    args = (torch.randn(T, B, I),)
    f = export("torch_lstmcell_2layer_interleaved", M(), args, ["x"],
               ["y", "h1_n", "c1_n", "h2_n", "c2_n"], opset)
    return entry(
        f, opset,
        "Two stacked nn.LSTMCell layers (H1=6, H2=3) interleaved in one time loop: layer 2 consumes layer 1's h "
        "at the same step; zero states from LSTMCell(hx=None); y = layer-2 h stacked.",
        {"x": [T, B, I]},
        {"y": [T, B, H2], "h1_n": [B, H1], "c1_n": [B, H1], "h2_n": [B, H2], "c2_n": [B, H2]},
        expect("lstm", [
            layer("lstm", T, H1, I, batch=B, time_major=True, initial_state="zeros", step_extraction="Gather axis 0"),
            layer("lstm", T, H2, H1, batch=B, time_major=True, initial_state="zeros", input_from="layer 0 h"),
        ]),
        TORCH_LSTM_ORDER)


# 1g. Reverse-time loop.
def torch_lstmcell_reverse():
    T, B, I, H, opset = 6, 2, 3, 5, 12
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x):
            state = None
            ys = [None] * x.shape[0]
            for t in range(x.shape[0] - 1, -1, -1):
                state = self.cell(x[t], state)
                ys[t] = state[0]
            return torch.stack(ys), state[0], state[1]

    args = (torch.randn(T, B, I),)
    f = export("torch_lstmcell_reverse", M(), args, ["x"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "nn.LSTMCell loop iterating t = T-1 .. 0 (reverse direction), time-major x[t]; y[t] is the h computed "
        "from x[t] (stacked in original time order, like an ONNX reverse LSTM); zero state (hx=None).",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, "reverse", batch=B, time_major=True, initial_state="zeros",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


# 1g'. Hand-made bidirectional layer: a forward and a backward LSTMCell loop
# over the same input, outputs concatenated on the feature axis.
def torch_lstmcell_bidir_manual():
    T, B, I, H, opset = 5, 2, 4, 3, 14
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fwd = nn.LSTMCell(I, H)
            self.bwd = nn.LSTMCell(I, H)

        def forward(self, x):
            sf, sb = None, None
            yf, yb = [None] * x.shape[0], [None] * x.shape[0]
            for t in range(x.shape[0]):
                sf = self.fwd(x[t], sf)
                yf[t] = sf[0]
            for t in range(x.shape[0] - 1, -1, -1):
                sb = self.bwd(x[t], sb)
                yb[t] = sb[0]
            return torch.cat([torch.stack(yf), torch.stack(yb)], dim=-1), sf[0], sb[0]

    args = (torch.randn(T, B, I),)
    f = export("torch_lstmcell_bidir_manual", M(), args, ["x"], ["y", "h_fwd", "h_bwd"], opset)
    return entry(
        f, opset,
        "Two nn.LSTMCell loops over the same time-major x, one forward and one backward (t = T-1 .. 0), "
        "outputs concatenated on the feature axis: a bidirectional layer written by hand.",
        {"x": [T, B, I]},
        {"y": [T, B, 2 * H], "h_fwd": [B, H], "h_bwd": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, "bidirectional", batch=B, time_major=True,
                              initial_state="zeros", step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


# 1h. Standard modules, exported as ONNX LSTM / GRU / RNN ops.
def torch_nn_lstm():
    T, B, I, H, opset = 5, 3, 5, 7, 14
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(I, H)

        def forward(self, x, h0, c0):
            y, (h, c) = self.rnn(x, (h0, c0))
            return y, h, c

    args = (torch.randn(T, B, I), torch.randn(1, B, H), torch.randn(1, B, H))
    f = export("torch_nn_lstm", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "Standard nn.LSTM (1 layer, unidirectional, time-major), exported as one ONNX LSTM op; h0/c0 inputs.",
        {"x": [T, B, I], "h0": [1, B, H], "c0": [1, B, H]},
        {"y": [T, B, H], "h_n": [1, B, H], "c_n": [1, B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs")], 1),
        ONNX_LSTM_ORDER)


def torch_nn_lstm_bidir():
    B, T, I, H, opset = 2, 4, 3, 5, 13
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(I, H, batch_first=True, bidirectional=True)

        def forward(self, x):
            y, (h, c) = self.rnn(x)
            return y, h, c

    f = export("torch_nn_lstm_bidir", M(), (torch.randn(B, T, I),), ["x"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "Standard nn.LSTM, bidirectional, batch_first=True (exporter adds Transposes), zero initial state; "
        "one ONNX LSTM op with direction=bidirectional.",
        {"x": [B, T, I]},
        {"y": [B, T, 2 * H], "h_n": [2, B, H], "c_n": [2, B, H]},
        expect("lstm", [layer("lstm", T, H, I, "bidirectional", batch=B, time_major=False,
                              initial_state="zeros")], 1),
        ONNX_LSTM_ORDER)


def torch_nn_gru_2layer():
    T, B, I, H, opset = 6, 1, 5, 4, 15
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(I, H, num_layers=2)

        def forward(self, x, h0):
            return self.rnn(x, h0)

    args = (torch.randn(T, B, I), torch.randn(2, B, H))
    f = export("torch_nn_gru_2layer", M(), args, ["x", "h0"], ["y", "h_n"], opset)
    return entry(
        f, opset,
        "Standard nn.GRU with num_layers=2 (time-major, B=1), exported as two chained ONNX GRU ops; "
        "h0[2,B,H] input sliced per layer.",
        {"x": [T, B, I], "h0": [2, B, H]},
        {"y": [T, B, H], "h_n": [2, B, H]},
        expect("gru", [
            layer("gru", T, H, I, batch=B, time_major=True, initial_state="inputs", linear_before_reset=True),
            layer("gru", T, H, H, batch=B, time_major=True, initial_state="inputs", linear_before_reset=True,
                  input_from="layer 0 y"),
        ], 2),
        ONNX_GRU_ORDER)


def torch_nn_rnn():
    T, B, I, H, opset = 3, 3, 2, 7, 11
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(I, H, nonlinearity="tanh")

        def forward(self, x):
            return self.rnn(x)

    f = export("torch_nn_rnn", M(), (torch.randn(T, B, I),), ["x"], ["y", "h_n"], opset)
    return entry(
        f, opset,
        "Standard nn.RNN (tanh, 1 layer), exported as one ONNX RNN op; zero initial state.",
        {"x": [T, B, I]},
        {"y": [T, B, H], "h_n": [1, B, H]},
        expect("rnn", [layer("rnn", T, H, I, batch=B, time_major=True, initial_state="zeros",
                             activation="tanh")], 1),
        "ONNX RNN op (single gate), activation Tanh")


# 1i. Dynamic batch axis "N".
def torch_lstmcell_dynbatch():
    T, B, I, H, opset = 4, 2, 5, 7, 17
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x):
            h = x.new_zeros((x.shape[1], H))
            c = x.new_zeros((x.shape[1], H))
            ys = []
            for t in range(x.shape[0]):
                h, c = self.cell(x[t], (h, c))
                ys.append(h)
            return torch.stack(ys), h, c

    f = export("torch_lstmcell_dynbatch", M(), (torch.randn(T, B, I),), ["x"], ["y", "h_n", "c_n"], opset,
               dynamic_axes={"x": {1: "N"}, "y": {1: "N"}, "h_n": {0: "N"}, "c_n": {0: "N"}})
    return entry(
        f, opset,
        "nn.LSTMCell loop, time-major, with a dynamic batch axis named 'N' (dynamic_axes); the zero state is "
        "built from the runtime batch size (Shape/Gather/... -> ConstantOfShape or Expand).",
        {"x": [T, "N", I]},
        {"y": [T, "N", H], "h_n": ["N", H], "c_n": ["N", H]},
        expect("lstm", [layer("lstm", T, H, I, batch="N", time_major=True, initial_state="zeros",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER,
        dynamic_dims={"N": "batch"},
        note="torch 1.13's shape inference declares the outputs' hidden dim with invented symbols "
             "(e.g. y: [4, N, 'Concaty_dim_2']); 'outputs' above gives the logical shapes.")


# 1j. Small "real model": Embedding -> unrolled LSTMCell -> Linear -> LogSoftmax.
def torch_lstm_lm():
    T, B, V, E, H, opset = 8, 2, 20, 8, 12, 15
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, E)
            self.cell = nn.LSTMCell(E, H)
            self.head = nn.Linear(H, V)

        def forward(self, tokens):
            e = self.emb(tokens)  # [T,B,E]
            state = None
            hs = []
            for t in range(e.shape[0]):
                state = self.cell(e[t], state)
                hs.append(state[0])
            y = torch.stack(hs)
            return F.log_softmax(self.head(y), dim=-1)

    tokens = torch.randint(0, V, (T, B), dtype=torch.int64)
    f = export("torch_lstm_lm", M(), (tokens,), ["tokens"], ["logprobs"], opset)
    return entry(
        f, opset,
        "Small language-model shape: Embedding(20,8) Gather -> unrolled nn.LSTMCell loop (H=12) -> "
        "Linear head (20) -> LogSoftmax; tokens int64 [T,B]; zero state (hx=None).",
        {"tokens": [T, B]},
        {"logprobs": [T, B, V]},
        expect("lstm", [layer("lstm", T, H, E, batch=B, time_major=True, initial_state="zeros",
                              step_extraction="Gather axis 0", input_from="embedding Gather")]),
        TORCH_LSTM_ORDER,
        input_dtypes={"tokens": "int64"},
        input_ranges={"tokens": [0, V]})


# Degenerate sizes: T = 1, B = 1, H = 1.
def torch_lstmcell_t1():
    T, B, I, H, opset = 1, 1, 2, 1, 11
    torch.manual_seed(SEED)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(I, H)

        def forward(self, x, h0, c0):
            h, c = h0, c0
            ys = []
            for t in range(x.shape[0]):
                h, c = self.cell(x[t], (h, c))
                ys.append(h)
            return torch.stack(ys), h, c

    args = (torch.randn(T, B, I), torch.randn(B, H), torch.randn(B, H))
    f = export("torch_lstmcell_t1", M(), args, ["x", "h0", "c0"], ["y", "h_n", "c_n"], opset)
    return entry(
        f, opset,
        "Degenerate loop: nn.LSTMCell applied for a single step (T=1, B=1, H=1), time-major, h0/c0 inputs.",
        {"x": [T, B, I], "h0": [B, H], "c0": [B, H]},
        {"y": [T, B, H], "h_n": [B, H], "c_n": [B, H]},
        expect("lstm", [layer("lstm", T, H, I, batch=B, time_major=True, initial_state="inputs",
                              step_extraction="Gather axis 0")]),
        TORCH_LSTM_ORDER)


FIXTURES = [
    torch_lstmcell_gather,
    torch_lstmcell_bf_select,
    torch_lstmcell_bf_slice,
    torch_lstmcell_unbind,
    torch_grucell_loop,
    torch_rnncell_tanh,
    torch_rnncell_relu,
    torch_lstm_manual_8linear,
    torch_lstm_manual_tiedweight,
    torch_lstmcell_2layer_interleaved,
    torch_lstmcell_reverse,
    torch_lstmcell_bidir_manual,
    torch_nn_lstm,
    torch_nn_lstm_bidir,
    torch_nn_gru_2layer,
    torch_nn_rnn,
    torch_lstmcell_dynbatch,
    torch_lstm_lm,
    torch_lstmcell_t1,
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

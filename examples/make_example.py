#!/usr/bin/python3
"""Make examples/lstmcell_unrolled.onnx, the lstm-opt quick-start example.

    /usr/bin/python3 examples/make_example.py      # Debian python3-torch 1.13 (CPU)

A PyTorch nn.LSTMCell applied in a Python loop over a time-major input
x[T=16, B=1, I=32] with hidden size H=32; h0/c0 are graph inputs.  Exported with
torch.onnx.export at opset 17, so the ONNX graph is 16 unrolled copies of the cell
(Gather x[t] -> 2x Gemm -> Add -> Split -> Sigmoid/Tanh -> Mul/Add ...).

Graph inputs : x [16,1,32], h0 [1,32], c0 [1,32]     (float32)
Graph outputs: y [16,1,32] (all h, torch.stack), h_n [1,32], c_n [1,32]
Gate order   : torch i,f,g,o (weight_ih [128,32], weight_hh [128,32])

What a perfect recogniser should find (same schema as test/e2e/models/manifest.json):
    {"cells": "lstm",
     "layers": [{"kind": "lstm", "steps": 16, "direction": "forward", "hidden": 32, "input": 32}],
     "standard_rnn_ops": 0}
"""
import os

import torch
import torch.nn as nn

T, B, I, H, OPSET = 16, 1, 32, 32, 17
SEED = 1234
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lstmcell_unrolled.onnx")


class UnrolledLSTM(nn.Module):
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


def main():
    torch.manual_seed(SEED)
    model = UnrolledLSTM().eval()
    args = (torch.randn(T, B, I), torch.zeros(B, H), torch.zeros(B, H))
    with torch.no_grad():
        torch.onnx.export(model, args, OUT, opset_version=OPSET,
                          input_names=["x", "h0", "c0"], output_names=["y", "h_n", "c_n"],
                          do_constant_folding=True)
    print("wrote %s (%d bytes)" % (OUT, os.path.getsize(OUT)))


if __name__ == "__main__":
    main()

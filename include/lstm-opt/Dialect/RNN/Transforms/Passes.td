//===- Passes.td - rnn dialect passes ----------------------*- tablegen -*-===//

#ifndef LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_TD
#define LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RNNRecognizeCellsPass : Pass<"rnn-recognize-cells", "mlir::ModuleOp"> {
  let summary = "Find recurrent cells in onnx IR by their equations";
  let description = [{
    Replaces the onnx ops of one step of an LSTM cell (c' = f*c + i*g,
    h' = o*tanh(c'), gate pre-activations linear in the step input and the
    hidden state) by `rnn.lstm_cell` with the weights in canonical order, and
    standard `onnx.LSTM`/`onnx.GRU`/`onnx.RNN` layers by `rnn.sequence`.
    Anything that does not match exactly is left alone with a remark naming
    the node and the reason. See docs/passes/rnn-recognize-cells.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numCells", "cells", "Number of cells recognised">,
    Statistic<"numLayers", "layers", "Number of ONNX layers imported">,
  ];
}

def RNNRollTimeLoopPass : Pass<"rnn-roll-time-loop", "mlir::ModuleOp"> {
  let summary = "Roll chains of equal cells over consecutive time steps into one layer";
  let description = [{
    A chain of `rnn.*_cell` ops with the same weights, whose state flows from
    each step to the next and whose inputs are consecutive slices of one
    tensor along its time axis (forward or backward), becomes one
    `rnn.sequence`; per-step outputs stacked by Unsqueeze + Concat become its
    `Y`. Chains whose intermediate cell state is read elsewhere are left alone
    with a remark. See docs/passes/rnn-roll-time-loop.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numLayers", "layers", "Number of layers formed">,
  ];
}

#endif // LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_TD

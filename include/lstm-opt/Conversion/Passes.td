//===- Passes.td - lstm-opt conversion passes --------------*- tablegen -*-===//

#ifndef LSTM_OPT_CONVERSION_PASSES_TD
#define LSTM_OPT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRNNToONNXPass : Pass<"convert-rnn-to-onnx", "mlir::ModuleOp"> {
  let summary = "Lower rnn layers and cells to standard ONNX LSTM/GRU/RNN ops";
  let description = [{
    `rnn.sequence` becomes `onnx.LSTM`/`onnx.GRU`/`onnx.RNN` (ONNX gate order
    i,o,f,c / z,r,h, bias [Wb, Rb], layout 0, direction, activations, clip),
    with the weights converted at compile time into new initializers; an
    `rnn.stack` becomes one such node per layer. A cell not rolled into a
    layer, or a hoisted projection/recurrence, is an error (ONNX has no such
    op). Everything else is untouched.
    See docs/passes/convert-rnn-to-onnx.md.
  }];
  let dependentDialects = ["lstm_opt::onnx::ONNXDialect"];
}

#endif // LSTM_OPT_CONVERSION_PASSES_TD

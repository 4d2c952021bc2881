//===- RNNToONNX.h - rnn -> standard ONNX recurrent ops ---------*- C++ -*-===//

#ifndef LSTM_OPT_CONVERSION_RNNTOONNX_RNNTOONNX_H
#define LSTM_OPT_CONVERSION_RNNTOONNX_RNNTOONNX_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace lstm_opt {

#define GEN_PASS_DECL_CONVERTRNNTOONNXPASS
#include "lstm-opt/Conversion/Passes.h.inc"

/// Lowers one rnn.sequence to onnx.LSTM/GRU/RNN; fails (with a diagnostic)
/// if its weights are not constants.
mlir::LogicalResult lowerSequenceToONNX(rnn::SequenceOp op);

/// Splits an rnn.stack into one rnn.sequence per level again, glued with
/// onnx Squeeze (or Transpose + Reshape for two directions) and Concat.
mlir::LogicalResult unstackLayers(rnn::StackOp op);

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_RNNTOONNX_RNNTOONNX_H

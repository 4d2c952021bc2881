//===- ONNXDialect.h - onnx dialect -----------------------------*- C++ -*-===//
//
// The onnx dialect: a faithful mirror of ONNX (see ONNXBase.td).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_ONNX_IR_ONNXDIALECT_H
#define LSTM_OPT_DIALECT_ONNX_IR_ONNXDIALECT_H

#include "mlir/IR/Dialect.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXDialect.h.inc"

#endif // LSTM_OPT_DIALECT_ONNX_IR_ONNXDIALECT_H

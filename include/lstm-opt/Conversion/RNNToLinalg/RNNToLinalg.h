//===- RNNToLinalg.h - rnn layers -> upstream MLIR on tensors ---*- C++ -*-===//
//
// The portable lowering of the rnn dialect: linalg, tensor, arith, math and
// scf on tensors, for compiler stacks that take upstream MLIR (IREE).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_CONVERSION_RNNTOLINALG_RNNTOLINALG_H
#define LSTM_OPT_CONVERSION_RNNTOLINALG_RNNTOLINALG_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace lstm_opt {

#define GEN_PASS_DECL_CONVERTRNNTOLINALGPASS
#define GEN_PASS_DECL_ONNXSTRIPATTRIBUTESPASS
#define GEN_PASS_DECL_LINALGSIGNLESSINTEGERSPASS
#include "lstm-opt/Conversion/Passes.h.inc"

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_RNNTOLINALG_RNNTOLINALG_H

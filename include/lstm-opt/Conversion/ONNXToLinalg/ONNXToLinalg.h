//===- ONNXToLinalg.h - onnx -> linalg on tensors ---------------*- C++ -*-===//
//
// Lowers the onnx ops that remain after recognition (data movement, shape
// arithmetic, elementwise math, MatMul/Gemm, Softmax) to upstream MLIR at the
// tensor level: linalg on tensors, tensor, arith and math. rnn ops are left
// alone. See docs/passes/convert-onnx-to-linalg.md.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_CONVERSION_ONNXTOLINALG_ONNXTOLINALG_H
#define LSTM_OPT_CONVERSION_ONNXTOLINALG_ONNXTOLINALG_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace lstm_opt {

#define GEN_PASS_DECL_CONVERTONNXTOLINALGPASS
#include "lstm-opt/Conversion/Passes.h.inc"

/// Lowers every onnx op in the body of `func` to linalg/tensor/arith/math.
/// Emits an error on each op it cannot lower (unsupported operator, dynamic
/// shape, shape operand not known at compile time) and returns failure if
/// there was any; the ops that could be lowered are lowered either way.
/// The function's signature, its return and rnn ops are not changed (an rnn
/// op may see a more static operand type than it had).
mlir::LogicalResult lowerONNXToLinalg(mlir::func::FuncOp func);

/// Whether lowerONNXToLinalg lowers the ONNX operator `opType` of the
/// default domain (for some of its arities and attributes; the operator
/// table of docs/generated/Operators.md).
bool isLoweredToLinalg(mlir::MLIRContext *ctx, llvm::StringRef opType);

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_ONNXTOLINALG_ONNXTOLINALG_H

//===- Passes.h - rnn dialect passes ----------------------------*- C++ -*-===//

#ifndef LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_H
#define LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace lstm_opt::rnn {

#define GEN_PASS_DECL
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"

/// Calls `fn` on every function of `module` that has a body (an ONNX graph).
inline void forEachGraph(mlir::ModuleOp module,
                         llvm::function_ref<void(mlir::func::FuncOp)> fn) {
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (!func.isExternal())
      fn(func);
}

} // namespace lstm_opt::rnn

#endif // LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_H

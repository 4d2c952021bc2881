//===- RNNToCUDNN.h - rnn -> cuDNN runtime calls ----------------*- C++ -*-===//

#ifndef LSTM_OPT_CONVERSION_RNNTOCUDNN_RNNTOCUDNN_H
#define LSTM_OPT_CONVERSION_RNNTOCUDNN_RNNTOCUDNN_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace lstm_opt {

#define GEN_PASS_DECL_CONVERTRNNTOCUDNNPASS
#include "lstm-opt/Conversion/Passes.h.inc"

namespace cudnn {
/// The values of convert-rnn-to-cudnn's `algo` option (and of
/// `--cudnn-algo`), each at the index that is its code in the runtime's
/// config: 0 standard, 1 persist-static, 2 persist-small-h, 3 auto.
llvm::ArrayRef<llvm::StringRef> algoNames();
/// The values of `data-type` (`--cudnn-data-type`): 0 f32, 1 f16.
llvm::ArrayRef<llvm::StringRef> dataTypeNames();
/// Whether cuDNN (f32, its persistent kernels) runs a layer of batch `b` and
/// hidden size `h` faster than the generated GPU kernels on `chip`, by the
/// table measured on that chip (docs/GPUKernels.md); std::nullopt for a
/// chip without a measured table. When it returns a value, `why` names the
/// measurement.
std::optional<bool> fasterThanGeneratedKernels(llvm::StringRef chip, int64_t b,
                                               int64_t h, std::string &why);
} // namespace cudnn

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_RNNTOCUDNN_RNNTOCUDNN_H

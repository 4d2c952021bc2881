//===- ONNXExport.h - onnx dialect -> ONNX model ----------------*- C++ -*-===//
//
// Writes a module of the onnx dialect (plus func.func/func.return) back to an
// ONNX ModelProto: names, opsets, metadata, doc strings, value_info and
// initializers are kept. Ops of other dialects cannot be exported and are
// reported as errors naming the op.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TARGET_ONNX_ONNXEXPORT_H
#define LSTM_OPT_TARGET_ONNX_ONNXEXPORT_H

#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace lstm_opt {

struct ONNXExportOptions {
  /// Write value_info for every intermediate value whose type is known.
  bool writeValueInfo = true;
  /// Run onnx's checker on the result and fail if it complains.
  bool runChecker = true;
  /// Where the checker fails: what it says of the input model ("" where it
  /// accepts it), so that the error can say whether the fault was there
  /// already. Optional; only called on failure.
  std::function<std::string()> inputCheckerError;
};

/// Serializes `module` to `os` in the given format.
mlir::LogicalResult exportONNX(mlir::ModuleOp module, llvm::raw_ostream &os,
                               ONNXFileFormat format,
                               const ONNXExportOptions &options = {});

} // namespace lstm_opt

#endif // LSTM_OPT_TARGET_ONNX_ONNXEXPORT_H

//===- InitAll.h - register everything lstm-opt provides --------*- C++ -*-===//
//
// The embedding API: a tool or another MLIR stack calls these to get the
// project's dialects, passes and pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_INITALL_H
#define LSTM_OPT_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace lstm_opt {

/// Adds the project's dialects and the upstream ones its IR uses.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers the project's own passes (rnn-*, convert-rnn-to-onnx).
/// Idempotent; what a plugin loaded into mlir-opt calls.
void registerPasses();

/// registerPasses() plus the upstream passes lstm-opt offers (canonicalize,
/// cse, ...). Idempotent.
void registerAllPasses();

/// Registers the named pipelines (lstm-opt-default, ...). Idempotent.
void registerAllPipelines();

} // namespace lstm_opt

#endif // LSTM_OPT_INITALL_H

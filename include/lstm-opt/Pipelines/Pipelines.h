//===- Pipelines.h - lstm-opt pass pipelines --------------------*- C++ -*-===//

#ifndef LSTM_OPT_PIPELINES_PIPELINES_H
#define LSTM_OPT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace lstm_opt {

/// The front half every target runs first, as pass-pipeline text: recurrent
/// loops unrolled, cells recognised, rolled into layers, bidirectional halves
/// paired. Each pass leaves what it cannot prove untouched, with a remark.
inline constexpr llvm::StringLiteral kRecognitionPipeline =
    "rnn-unroll-recurrent-loops,rnn-recognize-cells,rnn-roll-time-loop,"
    "rnn-pair-bidirectional";

struct DefaultPipelineOptions
    : public mlir::PassPipelineOptions<DefaultPipelineOptions> {};

/// The pipeline `lstm-opt model.onnx -o out.onnx` runs when no pass is named
/// (registered as `lstm-opt-default`). It only holds passes that keep the
/// model's numbers exactly.
void buildDefaultPipeline(mlir::OpPassManager &pm,
                          const DefaultPipelineOptions &options = {});

/// Registers the pipelines above under their names.
void registerPipelines();

} // namespace lstm_opt

#endif // LSTM_OPT_PIPELINES_PIPELINES_H

//===- Pipelines.h - lstm-opt pass pipelines --------------------*- C++ -*-===//

#ifndef LSTM_OPT_PIPELINES_PIPELINES_H
#define LSTM_OPT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace lstm_opt {

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

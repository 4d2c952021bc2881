//===- Pipelines.cpp - lstm-opt pass pipelines ----------------------------===//

#include "lstm-opt/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void lstm_opt::buildDefaultPipeline(OpPassManager &pm,
                                    const DefaultPipelineOptions &options) {
  // The recognition passes join here. Until then the default pipeline is
  // empty: the model is imported and written back unchanged.
  (void)pm;
  (void)options;
}

void lstm_opt::registerPipelines() {
  static bool once = [] {
    PassPipelineRegistration<DefaultPipelineOptions>(
        "lstm-opt-default",
        "The pipeline lstm-opt runs on an ONNX model when no pass is named",
        buildDefaultPipeline);
    return true;
  }();
  (void)once;
}

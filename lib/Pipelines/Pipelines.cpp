//===- Pipelines.cpp - lstm-opt pass pipelines ----------------------------===//

#include "lstm-opt/Pipelines/Pipelines.h"

#include "lstm-opt/Conversion/Passes.h"
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

void lstm_opt::buildDefaultPipeline(OpPassManager &pm,
                                    const DefaultPipelineOptions &options) {
  // Recognise the cells, roll them into layers, write standard ONNX layers.
  // Every pass leaves what it cannot prove untouched (with a remark).
  (void)options;
  // (rnn-fuse-gate-gemms is not here: it would also merge products outside
  // any recurrent cell, and recognition reads per-gate products anyway.)
  if (failed(parsePassPipeline(kRecognitionPipeline, pm)))
    llvm::report_fatal_error("lstm-opt: the recognition pipeline does not parse");
  pm.addPass(createConvertRNNToONNXPass());
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

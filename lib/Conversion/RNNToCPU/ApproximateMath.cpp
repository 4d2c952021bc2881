//===- ApproximateMath.cpp - vectorisable math for the CPU ----------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CPUAPPROXIMATEMATHPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;

namespace {
struct CPUApproximateMathPass
    : public lstm_opt::impl::CPUApproximateMathPassBase<CPUApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

//===- UnrollRecurrentLoops.cpp - rnn-unroll-recurrent-loops --------------===//
//
// The pass form of onnx::unrollRecurrentLoops (lib/Dialect/ONNX/Utils/
// UnrollLoops.cpp): recurrent ONNX Loop/Scan nodes with a trip count known
// at compile time become their unrolled steps.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNUNROLLRECURRENTLOOPSPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;

namespace {
struct UnrollRecurrentLoops
    : public rnn::impl::RNNUnrollRecurrentLoopsPassBase<UnrollRecurrentLoops> {
  using Base::Base;

  void runOnOperation() override {
    onnx::UnrollLimits limits{maxTrips, maxOps};
    getOperation().walk([&](func::FuncOp func) {
      // The copies' marks are for lstm-opt's driver, which unrolls before
      // this pass runs and asks afterwards (onnx::unfusedUnrolledLoops):
      // they stay where this pass unrolled nothing.
      if (int n = onnx::unrollRecurrentLoops(func, limits)) {
        numUnrolled += n;
        onnx::stripUnrolledMarks(func);
      }
    });
  }
};
} // namespace

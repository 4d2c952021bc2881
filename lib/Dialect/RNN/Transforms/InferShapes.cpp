//===- InferShapes.cpp - onnx-infer-shapes --------------------------------===//
//
// The pass form of onnx::refineShapes (lib/Dialect/ONNX/Utils/ONNXUtils.cpp):
// types that the model leaves unknown, filled in from the onnx ops' shape
// rules.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_ONNXINFERSHAPESPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;

namespace {
struct InferShapes : public rnn::impl::ONNXInferShapesPassBase<InferShapes> {
  using Base::Base;

  void runOnOperation() override {
    int64_t refined = 0;
    getOperation().walk(
        [&](func::FuncOp func) {
          refined += onnx::refineShapes(func, graphOutputs);
        });
    numRefined += refined;
  }
};
} // namespace

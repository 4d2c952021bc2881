//===- DistinctResults.cpp - one buffer per returned value ----------------===//
//
// A function that returns one tensor value in two result positions (a graph
// output and an Identity of it, or two equal outputs CSE merged) would
// return one buffer twice after bufferization, which
// buffer-results-to-out-params does not handle. Each repeat becomes a copy
// of the value (bufferization.alloc_tensor with `copy`), so that every
// out-parameter gets its own buffer with the value.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CPUDISTINCTRESULTSPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;

namespace {

struct CPUDistinctResults
    : public lstm_opt::impl::CPUDistinctResultsPassBase<CPUDistinctResults> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto t = dyn_cast<RankedTensorType>(v.getType());
        if (!t || seen.insert(v).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), t,
                                                         ValueRange{}, v));
      }
    });
  }
};

} // namespace

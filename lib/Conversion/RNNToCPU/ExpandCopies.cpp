//===- ExpandCopies.cpp - strided memref copies as loops ------------------===//
//
// A strided memref.copy lowers to a call into MLIR's C runner utilities
// (memrefCopy); as linalg.copy it becomes a loop nest in the model's own
// code, so that a compiled model needs no MLIR library where it runs.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CPUEXPANDCOPIESPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;

namespace {
bool identityLayout(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && m.getLayout().isIdentity();
}

struct CPUExpandCopiesPass
    : public lstm_opt::impl::CPUExpandCopiesPassBase<CPUExpandCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!identityLayout(copy.getSource().getType()) ||
          !identityLayout(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      // Unranked memrefs have no loop nest; they keep the library call.
      if (!isa<MemRefType>(copy.getSource().getType()) ||
          !isa<MemRefType>(copy.getTarget().getType()))
        continue;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace

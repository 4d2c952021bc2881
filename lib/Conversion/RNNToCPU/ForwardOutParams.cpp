//===- ForwardOutParams.cpp - results straight into the out-params --------===//
//
// After buffer-results-to-out-params, a result whose buffer is an
// allocation viewed through a reshape (a layer's [T, 1, B, H] output returned
// as ONNX's [T, B, H], a squeezed final state) is still computed into the
// allocation and then copied whole into the caller's buffer. Here the
// allocation becomes the inverse reshape of the out-parameter itself, so the
// kernels (or the cuDNN runtime) write the caller's buffer and the copy is
// gone: one pass over the output less per call.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CPUFORWARDOUTPARAMSPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;

namespace {

bool plainStatic(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && m.hasStaticShape() && m.getLayout().isIdentity();
}

/// Every use of `alloc`, and of every view of it (subview, cast, reshape:
/// ViewLikeOpInterface), other than `reshape` is a dealloc or sits (maybe
/// nested) in an op of `block` before `copy`: nothing reads or writes the
/// buffer after the copy, so it can be the out-parameter itself.
bool usedOnlyBefore(memref::AllocOp alloc, Operation *reshape,
                    memref::CopyOp copy) {
  Block *block = copy->getBlock();
  SmallVector<Value> buffers = {alloc.getResult()};
  while (!buffers.empty()) {
    Value buffer = buffers.pop_back_val();
    for (Operation *user : buffer.getUsers()) {
      if (user == reshape || isa<memref::DeallocOp>(user))
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || !inBlock->isBeforeInBlock(copy))
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == buffer)
          buffers.append(user->result_begin(), user->result_end());
    }
  }
  return true;
}

/// Rewrites `copy(reshape(alloc), out)` if it can; returns whether it did.
bool forward(memref::CopyOp copy) {
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!out || !out.hasOneUse() || !plainStatic(out.getType()) ||
      !isa<func::FuncOp>(out.getOwner()->getParentOp()))
    return false;
  Operation *reshape = copy.getSource().getDefiningOp();
  if (!reshape || !reshape->hasOneUse() ||
      !isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(reshape))
    return false;
  auto alloc = reshape->getOperand(0).getDefiningOp<memref::AllocOp>();
  if (!alloc || !plainStatic(alloc.getType()) ||
      !usedOnlyBefore(alloc, reshape, copy))
    return false;

  OpBuilder b(alloc);
  auto type = cast<MemRefType>(alloc.getType());
  Value view;
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(reshape))
    view = memref::ExpandShapeOp::create(b, alloc.getLoc(), type.getShape(),
                                         out,
                                         collapse.getReassociationIndices());
  else
    view = memref::CollapseShapeOp::create(
        b, alloc.getLoc(), out,
        cast<memref::ExpandShapeOp>(reshape).getReassociationIndices());
  if (view.getType() != alloc.getType()) {
    view.getDefiningOp()->erase();
    return false;
  }
  copy.erase();
  reshape->erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  alloc.replaceAllUsesWith(view);
  alloc.erase();
  return true;
}

struct CPUForwardOutParamsPass
    : public lstm_opt::impl::CPUForwardOutParamsPassBase<
          CPUForwardOutParamsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      forward(copy);
  }
};
} // namespace

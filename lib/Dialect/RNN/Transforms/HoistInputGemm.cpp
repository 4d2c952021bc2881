//===- HoistInputGemm.cpp - one input GEMM over all steps -----------------===//
//
// rnn.sequence(X, W, R, Bw, Br, ...) ->
//   P = rnn.input_projection(X, W, Bw)        // [D, T, B, G*H]
//   rnn.recurrence(P, R, Br, ...)
// Exact: the per-step pre-activation is P[d, t] + h R^T + Br either way.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNHOISTINPUTGEMMPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;

namespace {
struct HoistInputGemm
    : public rnn::impl::RNNHoistInputGemmPassBase<HoistInputGemm> {
  void runOnOperation() override {
    SmallVector<rnn::SequenceOp> seqs;
    getOperation().walk([&](rnn::SequenceOp op) { seqs.push_back(op); });
    for (rnn::SequenceOp op : seqs) {
      OpBuilder b(op);
      auto x = cast<RankedTensorType>(op.getX().getType());
      auto w = cast<RankedTensorType>(op.getW().getType());
      auto pType = RankedTensorType::get(
          {w.getDimSize(0), x.getDimSize(0), x.getDimSize(1), w.getDimSize(1)},
          x.getElementType());
      Value p = rnn::InputProjectionOp::create(b, op.getLoc(), pType, op.getX(),
                                               op.getW(), op.getBw());
      auto rec = rnn::RecurrenceOp::create(
          b, op.getLoc(), op->getResultTypes(), op.getCellAttr(),
          op.getDirectionAttr(), op.getHiddenSizeAttr(),
          op.getLinearBeforeResetAttr(), p, op.getR(), op.getBr(), op.getH0(),
          op.getC0(), op.getSequenceLens(), op.getPeephole(),
          op.getActivationsAttr(), op.getActivationAlphaAttr(),
          op.getActivationBetaAttr(), op.getClipAttr(),
          op.getInputForgetAttr());
      for (NamedAttribute a : op->getDiscardableAttrs())
        rec->setAttr(a.getName(), a.getValue());
      op->replaceAllUsesWith(rec->getResults());
      op->erase();
    }
  }
};
} // namespace

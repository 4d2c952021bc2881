//===- StackLayers.cpp - layers reading each other -> one rnn.stack -------===//
//
// rnn.sequence S1 .. SL (L >= 2) where layer k+1's X is layer k's Y (as
// [T, B, H]: Y squeezed on its direction axis) and nothing else reads the
// intermediate Ys become one rnn.stack; each former h_n / c_n is a slice of
// the stack's. Single-direction layers only (a bidirectional stack needs the
// directions concatenated on the feature axis, which rnn-roll-time-loop does
// not produce yet).
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/IR/Builders.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNSTACKLAYERSPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;

namespace {

bool compatible(rnn::SequenceOp a, rnn::SequenceOp b) {
  return rnn::haveSameCell(a, b) && a.getDirection() == b.getDirection() &&
         (bool)a.getH0() == (bool)b.getH0() &&
         (bool)a.getC0() == (bool)b.getC0() && a.getNumDirections() == 1 &&
         // rnn.stack (cuDNN's multi-layer call) has no LSTM variants.
         !a.getPeephole() && !b.getPeephole() && !a.getInputForget() &&
         // Nor a precision of its own (a layer's lstm_opt.precision).
         !a->hasAttr(rnn::kPrecisionAttr) && !b->hasAttr(rnn::kPrecisionAttr);
}

/// The layer that reads `s`'s Y as its whole input, if that is all Y feeds.
rnn::SequenceOp successor(rnn::SequenceOp s) {
  if (!s.getY().hasOneUse())
    return {};
  auto sq = dyn_cast<od::SqueezeOp>(*s.getY().getUsers().begin());
  if (!sq || !sq->hasOneUse())
    return {};
  auto axes = od::getSqueezeAxes(sq);
  if (!axes || axes->size() != 1 || (*axes)[0] != 1)
    return {};
  auto next = dyn_cast<rnn::SequenceOp>(*sq->getUsers().begin());
  if (!next || next.getX() != sq.getResult() || !compatible(s, next))
    return {};
  return next;
}

/// Stacks constants along a new leading axis; null if one is not constant.
Value stackConstants(Location loc, ArrayRef<Value> values, StringRef name,
                     od::ConstantBuilder &consts) {
  std::vector<float> data;
  SmallVector<int64_t> shape;
  for (Value v : values) {
    auto t = od::getConstantF32(v);
    if (!t || (!shape.empty() && ArrayRef<int64_t>(shape).drop_front() !=
                                     ArrayRef<int64_t>(t->shape)))
      return {};
    if (shape.empty()) {
      shape.push_back(0);
      shape.append(t->shape.begin(), t->shape.end());
    }
    data.insert(data.end(), t->values.begin(), t->values.end());
  }
  shape[0] = values.size();
  return consts.getF32(loc, name, shape, data);
}

struct StackLayers : public rnn::impl::RNNStackLayersPassBase<StackLayers> {
  void runOnOperation() override {
    rnn::forEachGraph(getOperation(),
                      [&](func::FuncOp func) { runOnFunction(func); });
  }

  void runOnFunction(func::FuncOp func) {
    od::ConstantBuilder consts(func);
    SmallVector<rnn::SequenceOp> seqs;
    func.walk([&](rnn::SequenceOp op) { seqs.push_back(op); });
    DenseSet<Operation *> taken;
    for (rnn::SequenceOp s : seqs) {
      if (taken.contains(s))
        continue;
      SmallVector<rnn::SequenceOp> chain = {s};
      while (rnn::SequenceOp next = successor(chain.back()))
        chain.push_back(next);
      for (rnn::SequenceOp op : chain)
        taken.insert(op);
      if (chain.size() >= 2)
        (void)stack(chain, consts);
    }
  }

  LogicalResult stack(SmallVector<rnn::SequenceOp> layers,
                      od::ConstantBuilder &consts) {
    rnn::SequenceOp first = layers.front(), top = layers.back();
    // The stack replaces the first layer: what the others read besides the
    // layer below must already be there.
    // A state computed later only from earlier values (a Slice of a graph
    // input, say) moves up.
    for (rnn::SequenceOp op : ArrayRef<rnn::SequenceOp>(layers).drop_front())
      for (Value v : {op.getH0(), op.getC0()})
        if (v && !od::hoistBefore(v, first)) {
          op.emitRemark() << "not stacked: its initial state depends on the "
                             "layers below";
          return failure();
        }
    SmallVector<Location> locs;
    SmallVector<Value> wn, r, bw, br, h0s, c0s;
    int64_t srcNodes = 0, srcGemms = 0;
    for (auto [k, opc] : llvm::enumerate(layers)) {
      rnn::SequenceOp op = opc;
      locs.push_back(op.getLoc());
      if (k)
        wn.push_back(op.getW());
      r.push_back(op.getR());
      bw.push_back(op.getBw());
      br.push_back(op.getBr());
      if (op.getH0())
        h0s.push_back(op.getH0());
      if (op.getC0())
        c0s.push_back(op.getC0());
      if (auto a = op->getAttrOfType<IntegerAttr>("rnn.source_nodes"))
        srcNodes += a.getInt();
      if (auto a = op->getAttrOfType<IntegerAttr>("rnn.source_gemms"))
        srcGemms += a.getInt();
    }
    Location loc = FusedLoc::get(first.getContext(), locs);
    Value Wn = stackConstants(loc, wn, "stack_Wn", consts);
    Value R = stackConstants(loc, r, "stack_R", consts);
    Value Bw = stackConstants(loc, bw, "stack_Bw", consts);
    Value Br = stackConstants(loc, br, "stack_Br", consts);
    if (!Wn || !R || !Bw || !Br) {
      first.emitRemark() << "not stacked: the layers' weights are not "
                            "constants of one shape";
      return failure();
    }
    OpBuilder b(first);
    int64_t l = layers.size();
    auto concat = [&](ArrayRef<Value> vs) -> Value {
      if (vs.empty())
        return {};
      auto t = cast<RankedTensorType>(vs[0].getType());
      SmallVector<int64_t> shape(t.getShape());
      shape[0] = ShapedType::isDynamic(shape[0]) ? shape[0] : shape[0] * l;
      return od::ConcatOp::create(
          b, loc, RankedTensorType::get(shape, t.getElementType()), vs, 0);
    };
    Value h0 = concat(h0s), c0 = concat(c0s);
    auto st = cast<RankedTensorType>(first.getHN().getType());
    auto sType = RankedTensorType::get(
        {l * st.getDimSize(0), st.getDimSize(1), st.getDimSize(2)},
        st.getElementType());
    SmallVector<Type> types = {top.getY().getType(), sType};
    if (first.getCN())
      types.push_back(sType);
    auto stackOp = rnn::StackOp::create(
        b, loc, types, first.getCellAttr(), first.getDirectionAttr(),
        first.getHiddenSizeAttr(), b.getI64IntegerAttr(l),
        first.getLinearBeforeResetAttr(), first.getX(), first.getW(), Wn, R,
        Bw, Br, h0, c0, first.getSequenceLens(), first.getActivationsAttr(),
        first.getActivationAlphaAttr(), first.getActivationBetaAttr(),
        first.getClipAttr());
    stackOp->setAttr("rnn.source_nodes", b.getI64IntegerAttr(srcNodes));
    stackOp->setAttr("rnn.source_gemms", b.getI64IntegerAttr(srcGemms));
    top.getY().replaceAllUsesWith(stackOp.getY());
    for (auto [index, opc] : llvm::enumerate(layers)) {
      rnn::SequenceOp op = opc;
      int64_t k = index; // (a lambda does not capture structured bindings)
      auto slice = [&](Value old, Value joint) {
        if (old && !old.use_empty())
          old.replaceAllUsesWith(
              od::createSliceAxis(b, loc, consts, joint, 0, k, k + 1));
      };
      slice(op.getHN(), stackOp.getHN());
      slice(op.getCN(), stackOp.getCN());
    }
    stackOp.emitRemark() << "stacked " << l << " "
                         << rnn::stringifyCellKind(first.getCell()).upper()
                         << " layers into one rnn.stack";
    SmallVector<Operation *> dead(layers.rbegin(), layers.rend());
    od::eraseDeadOps(dead, consts.forgetter());
    ++numStacks;
    return success();
  }
};

} // namespace

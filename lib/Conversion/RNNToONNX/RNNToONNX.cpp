//===- RNNToONNX.cpp - rnn -> standard ONNX LSTM/GRU/RNN ------------------===//
//
// Weights go from the canonical layout (RNNBase.td) to ONNX's at compile
// time: gate blocks are reordered (LSTM i,f,g,o -> i,o,f,c; GRU r,z,n ->
// z,r,h) into new initializers and the two biases are concatenated per
// direction into B [D, 2*G*H].
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToONNX/RNNToONNX.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/GateLayout.h"

#include "mlir/IR/Builders.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CONVERTRNNTOONNXPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;
using namespace lstm_opt;

namespace {

StringRef directionName(rnn::Direction d) {
  switch (d) {
  case rnn::Direction::Forward: return "forward";
  case rnn::Direction::Reverse: return "reverse";
  case rnn::Direction::Bidirectional: return "bidirectional";
  }
  return "forward";
}

std::string baseName(Location loc, StringRef fallback) {
  if (auto n = dyn_cast<NameLoc>(loc))
    return n.getName().str();
  if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (auto n = dyn_cast<NameLoc>(l))
        return n.getName().str();
  return fallback.str();
}

} // namespace

static LogicalResult lowerSequence(rnn::SequenceOp op,
                                   onnx::ConstantBuilder &consts) {
  rnn::CellKind kind = op.getCell();
  int64_t d = op.getNumDirections(), h = op.getHiddenSize();
  int64_t g = rnn::getNumGates(kind);
  auto w = onnx::getConstantF32(op.getW());
  auto r = onnx::getConstantF32(op.getR());
  auto bw = onnx::getConstantF32(op.getBw());
  auto br = onnx::getConstantF32(op.getBr());
  if (!w || !r || !bw || !br)
    return op.emitError() << "convert-rnn-to-onnx needs constant f32 weights";
  int64_t in = w->shape[2];
  std::vector<int> from =
      rnn::invertPermutation(rnn::canonicalToONNXGates(kind));
  std::vector<float> wOut, rOut, bOut;
  for (int64_t k = 0; k < d; ++k) {
    auto slice = [&](const onnx::F32Tensor &t, int64_t n) {
      return ArrayRef<float>(t.values).slice(k * n, n);
    };
    auto pw = rnn::permuteGateBlocks(slice(*w, g * h * in), g, h, in, from);
    auto pr = rnn::permuteGateBlocks(slice(*r, g * h * h), g, h, h, from);
    auto pbw = rnn::permuteGateBlocks(slice(*bw, g * h), g, h, 1, from);
    auto pbr = rnn::permuteGateBlocks(slice(*br, g * h), g, h, 1, from);
    wOut.insert(wOut.end(), pw.begin(), pw.end());
    rOut.insert(rOut.end(), pr.begin(), pr.end());
    bOut.insert(bOut.end(), pbw.begin(), pbw.end());
    bOut.insert(bOut.end(), pbr.begin(), pbr.end());
  }
  Location loc = op.getLoc();
  std::string name = baseName(loc, "rnn");
  Value W = consts.getF32(loc, name + "_W", {d, g * h, in}, wOut);
  Value R = consts.getF32(loc, name + "_R", {d, g * h, h}, rOut);
  Value B = consts.getF32(loc, name + "_B", {d, 2 * g * h}, bOut);

  OpBuilder b(op);
  Value none = onnx::NoneOp::create(b, loc);
  auto orNone = [&](Value v) { return v ? v : none; };
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(b.getNamedAttr("direction",
                                 b.getStringAttr(directionName(op.getDirection()))));
  attrs.push_back(b.getNamedAttr("hidden_size", b.getI64IntegerAttr(h)));
  if (auto a = op.getActivationsAttr())
    attrs.push_back(b.getNamedAttr("activations", a));
  if (auto a = op.getActivationAlphaAttr())
    attrs.push_back(b.getNamedAttr("activation_alpha", a));
  if (auto a = op.getActivationBetaAttr())
    attrs.push_back(b.getNamedAttr("activation_beta", a));
  if (auto a = op.getClipAttr())
    attrs.push_back(b.getNamedAttr("clip", a));
  if (op.getLinearBeforeReset())
    attrs.push_back(b.getNamedAttr("linear_before_reset", b.getI64IntegerAttr(1)));
  if (op.getInputForget())
    attrs.push_back(b.getNamedAttr("input_forget", b.getI64IntegerAttr(1)));
  // Peephole weights: canonical i, f, o -> ONNX's i, o, f.
  Value P;
  if (Value peep = op.getPeephole()) {
    auto p = onnx::getConstantF32(peep);
    if (!p)
      return op.emitError() << "convert-rnn-to-onnx needs constant f32 weights";
    std::vector<float> pOut;
    for (int64_t k = 0; k < d; ++k) {
      auto pk = rnn::permuteGateBlocks(ArrayRef<float>(p->values).slice(k * 3 * h, 3 * h),
                                       3, h, 1, {0, 2, 1});
      pOut.insert(pOut.end(), pk.begin(), pk.end());
    }
    P = consts.getF32(loc, name + "_P", {d, 3 * h}, pOut);
  }

  SmallVector<Value> operands = {op.getX(), W, R, B, orNone(op.getSequenceLens()),
                                 orNone(op.getH0())};
  SmallVector<Type> types = {op.getY().getType(), op.getHN().getType()};
  Operation *onnxOp;
  if (kind == rnn::CellKind::LSTM) {
    operands.push_back(orNone(op.getC0()));
    operands.push_back(orNone(P));
    types.push_back(op.getCN().getType());
    onnxOp = onnx::LSTMOp::create(b, loc, types, operands, attrs);
  } else if (kind == rnn::CellKind::GRU) {
    onnxOp = onnx::GRUOp::create(b, loc, types, operands, attrs);
  } else {
    onnxOp = onnx::RNNOp::create(b, loc, types, operands, attrs);
  }
  op->replaceAllUsesWith(onnxOp->getResults());
  SmallVector<Operation *> inputs;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      inputs.push_back(def);
  op->erase();
  onnx::eraseDeadOps(inputs, consts.forgetter()); // the canonical weights
  return success();
}

/// ONNX has no multi-layer op: a stack becomes one layer per level again,
/// each reading the Y of the one below (squeezed, or for two directions
/// transposed and reshaped to [T, B, 2H]).
static LogicalResult unstack(rnn::StackOp op, onnx::ConstantBuilder &consts) {
  auto slice = [&](Value v, int64_t k, StringRef name) -> Value {
    auto t = onnx::getConstantF32(v);
    if (!t)
      return {};
    int64_t n = t->numElements() / t->shape[0];
    SmallVector<int64_t> shape(t->shape.begin() + 1, t->shape.end());
    return consts.getF32(op.getLoc(), name, shape,
                         ArrayRef<float>(t->values).slice(k * n, n));
  };
  int64_t l = op.getNumLayers(), d = op.getNumDirections();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value x = op.getX();
  SmallVector<Value> hs, cs;
  rnn::SequenceOp last;
  for (int64_t k = 0; k < l; ++k) {
    Value w = k == 0 ? op.getW0() : slice(op.getWn(), k - 1, "layer_W");
    Value r = slice(op.getR(), k, "layer_R");
    Value bw = slice(op.getBw(), k, "layer_Bw");
    Value br = slice(op.getBr(), k, "layer_Br");
    if (!w || !r || !bw || !br)
      return op.emitError() << "convert-rnn-to-onnx needs constant f32 weights";
    auto part = [&](Value s) -> Value {
      return s ? onnx::createSliceAxis(b, loc, consts, s, 0, k * d, (k + 1) * d)
               : Value();
    };
    auto yt = cast<RankedTensorType>(op.getY().getType());
    auto xt = cast<RankedTensorType>(x.getType());
    auto yType = RankedTensorType::get(
        {xt.getDimSize(0), d, xt.getDimSize(1), (int64_t)op.getHiddenSize()},
        yt.getElementType());
    auto sType = RankedTensorType::get(
        {d, xt.getDimSize(1), (int64_t)op.getHiddenSize()}, yt.getElementType());
    SmallVector<Type> types = {yType, sType};
    if (op.getCN())
      types.push_back(sType);
    auto seq = rnn::SequenceOp::create(
        b, loc, types, op.getCellAttr(), op.getDirectionAttr(),
        op.getHiddenSizeAttr(), op.getLinearBeforeResetAttr(), x, w, r, bw, br,
        part(op.getH0()), part(op.getC0()), op.getSequenceLens(),
        /*peephole=*/Value(), op.getActivationsAttr(),
        op.getActivationAlphaAttr(), op.getActivationBetaAttr(),
        op.getClipAttr(), /*input_forget=*/nullptr);
    hs.push_back(seq.getHN());
    if (seq.getCN())
      cs.push_back(seq.getCN());
    last = seq;
    if (k + 1 == l)
      break;
    // The next layer's input: [T, B, D*H].
    if (d == 1) {
      x = onnx::createSqueeze(b, loc, consts, seq.getY(), {1});
    } else {
      Value t = onnx::createTranspose(b, loc, seq.getY(), {0, 2, 1, 3});
      auto tt = cast<RankedTensorType>(t.getType());
      auto xType = RankedTensorType::get(
          {tt.getDimSize(0), tt.getDimSize(1),
           d * (int64_t)op.getHiddenSize()},
          tt.getElementType());
      Value shape = consts.getI64(loc, "shape", {3},
                                  {0, 0, d * (int64_t)op.getHiddenSize()});
      x = onnx::ReshapeOp::create(b, loc, xType, t, shape, 0);
    }
  }
  auto concat = [&](ArrayRef<Value> vs, Type type) -> Value {
    return onnx::ConcatOp::create(b, loc, type, vs, 0);
  };
  op.getY().replaceAllUsesWith(last.getY());
  op.getHN().replaceAllUsesWith(concat(hs, op.getHN().getType()));
  if (op.getCN())
    op.getCN().replaceAllUsesWith(concat(cs, op.getCN().getType()));
  SmallVector<Operation *> inputs;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      inputs.push_back(def);
  op.erase();
  onnx::eraseDeadOps(inputs); // the stacked weights
  return success();
}

LogicalResult lstm_opt::unstackLayers(rnn::StackOp op) {
  onnx::ConstantBuilder consts(op->getParentOfType<func::FuncOp>());
  return unstack(op, consts);
}

LogicalResult lstm_opt::lowerSequenceToONNX(rnn::SequenceOp op) {
  onnx::ConstantBuilder consts(op->getParentOfType<func::FuncOp>());
  return lowerSequence(op, consts);
}

namespace {
struct ConvertRNNToONNXPass
    : public lstm_opt::impl::ConvertRNNToONNXPassBase<ConvertRNNToONNXPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(runOnFunction(func)))
        return signalPassFailure();
  }
  LogicalResult runOnFunction(func::FuncOp func) {
    onnx::ConstantBuilder consts(func);
    SmallVector<rnn::StackOp> stacks;
    func.walk([&](rnn::StackOp op) { stacks.push_back(op); });
    for (rnn::StackOp op : stacks)
      if (failed(unstack(op, consts)))
        return failure();
    SmallVector<rnn::SequenceOp> seqs;
    func.walk([&](rnn::SequenceOp op) { seqs.push_back(op); });
    for (rnn::SequenceOp op : seqs)
      if (failed(lowerSequence(op, consts)))
        return failure();
    // Cells left on their own (not rolled into a layer).
    WalkResult res = func.walk([&](Operation *op) {
      if (isa<rnn::RecurrenceOp, rnn::InputProjectionOp>(op)) {
        op->emitError() << "convert-rnn-to-onnx: ONNX has no hoisted input "
                           "projection; convert before rnn-hoist-input-gemm";
        return WalkResult::interrupt();
      }
      if (isa<rnn::LSTMCellOp, rnn::GRUCellOp, rnn::RNNCellOp>(op)) {
        op->emitError() << "convert-rnn-to-onnx: a single cell must be rolled "
                           "into a layer first (run rnn-roll-time-loop)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(res.wasInterrupted());
  }
};
} // namespace

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

  SmallVector<Value> operands = {op.getX(), W, R, B, orNone(op.getSequenceLens()),
                                 orNone(op.getH0())};
  SmallVector<Type> types = {op.getY().getType(), op.getHN().getType()};
  Operation *onnxOp;
  if (kind == rnn::CellKind::LSTM) {
    operands.push_back(orNone(op.getC0()));
    operands.push_back(none);
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
  onnx::eraseDeadOps(inputs); // the canonical weights
  return success();
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

//===- PairBidirectional.cpp - forward + reverse -> bidirectional ---------===//
//
// Two rnn.sequence ops over the same X, one forward and one reverse, with the
// same cell kind, hidden size and attributes, become one bidirectional layer
// (weights stacked along D, forward first). Each old result becomes a slice
// of the joint result along the direction axis. Exact: a bidirectional layer
// is defined as the two directions run independently. First, a forward layer
// over a time-reversed X (a whole-length ReverseSequence, or a Slice of step
// -1) whose Y is reversed back is made a reverse layer over X (Keras'
// Bidirectional backward layer through tf2onnx; x.flip(0) in PyTorch).
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNPAIRBIDIRECTIONALPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;

namespace {

bool sameConfig(rnn::SequenceOp a, rnn::SequenceOp b) {
  return rnn::haveSameCell(a, b) && (bool)a.getH0() == (bool)b.getH0() &&
         (bool)a.getC0() == (bool)b.getC0() &&
         (bool)a.getPeephole() == (bool)b.getPeephole() &&
         a->getAttr(rnn::kPrecisionAttr) == b->getAttr(rnn::kPrecisionAttr) &&
         a.getY().getType() == b.getY().getType();
}

/// The two layers read the same values: one value, or two results of
/// equal side-effect-free ops on the same operands (each direction's
/// own Transpose of x, as the roller builds it for a batch-major input).
bool sameInput(Value a, Value b, int depth = 0) {
  if (a == b)
    return true;
  Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
  if (!da || !db || depth > 4 || da->getNumRegions() || db->getNumRegions() ||
      !isMemoryEffectFree(da) || !isMemoryEffectFree(db) ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber() ||
      da->getNumOperands() != db->getNumOperands())
    return false;
  for (auto [x, y] : llvm::zip(da->getOperands(), db->getOperands()))
    if (!sameInput(x, y, depth + 1))
      return false;
  return OperationEquivalence::isEquivalentTo(
      da, db, OperationEquivalence::ignoreValueEquivalence, nullptr,
      OperationEquivalence::IgnoreLocations);
}

/// Whether a reversal's result type says what its data's does (or less: an
/// exporter may declare it unranked); a result read as a graph output must
/// have the data's very type, since the data takes its place there.
bool keepsShape(Value result, Value data) {
  if (result.getType() == data.getType())
    return true;
  if (getElementTypeOrSelf(result.getType()) !=
          getElementTypeOrSelf(data.getType()) ||
      failed(verifyCompatibleShape(result.getType(), data.getType())))
    return false;
  return llvm::none_of(result.getUsers(), [](Operation *user) {
    return user->hasTrait<OpTrait::IsTerminator>();
  });
}

/// A Slice that reverses one whole axis (0 or 1) of a tensor of rank >= 2
/// and keeps the rest: step -1 from the last element past the first (what
/// PyTorch exports for x.flip(dim)). Returns its data input and the axis.
std::optional<std::pair<Value, int64_t>> wholeReversingSlice(od::SliceOp slice) {
  if (slice.getStartsAttrAttr() || slice.getEndsAttrAttr() ||
      isa<NoneType>(slice.getAxes().getType()) ||
      isa<NoneType>(slice.getSteps().getType()))
    return std::nullopt;
  Value data = slice.getData();
  auto t = dyn_cast<RankedTensorType>(data.getType());
  auto starts = od::getConstantInts(slice.getStarts());
  auto ends = od::getConstantInts(slice.getEnds());
  auto axes = od::getConstantInts(slice.getAxes());
  auto steps = od::getConstantInts(slice.getSteps());
  if (!t || t.getRank() < 2 || !starts || !ends || !axes || !steps ||
      starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || steps->front() != -1 ||
      !keepsShape(slice.getResult(), data))
    return std::nullopt;
  int64_t axis = axes->front() < 0 ? axes->front() + t.getRank()
                                   : axes->front();
  if (axis != 0 && axis != 1)
    return std::nullopt;
  // With step -1 a start clamps to size - 1 and an end to -1 (before the
  // first element): the start must be -1 or past the end, the end before
  // -size (any size: below INT32_MIN where the size is not static).
  int64_t size = t.getDimSize(axis);
  int64_t start = starts->front(), end = ends->front();
  bool fromLast = start == -1 || (ShapedType::isDynamic(size)
                                      ? start >= INT32_MAX
                                      : start >= size - 1);
  bool toFirst = ShapedType::isDynamic(size) ? end <= INT32_MIN
                                             : end <= -size - 1;
  if (!fromLast || !toFirst)
    return std::nullopt;
  return std::make_pair(data, axis);
}

/// An ONNX ReverseSequence node over its whole time axis: every length is
/// the axis's size (a constant equal to its static size, or the shape
/// arithmetic exporters write for it: tf2onnx's ReverseV2, which reads the
/// size from the shape where it is dynamic). Returns its data input and time
/// axis.
std::optional<std::pair<Value, int64_t>> wholeReversal(Operation *op) {
  if (auto slice = dyn_cast_or_null<od::SliceOp>(op))
    return wholeReversingSlice(slice);
  auto node = dyn_cast_or_null<od::NodeOp>(op);
  if (!node || !(node.getDomain().empty() || node.getDomain() == "ai.onnx") ||
      node.getOpType() != "ReverseSequence" || node.getInputs().size() != 2 ||
      node->getNumResults() != 1 || !node.getGraphs().empty())
    return std::nullopt;
  std::optional<int64_t> time = od::getNodeIntAttr(node, "time_axis", 0);
  std::optional<int64_t> batch = od::getNodeIntAttr(node, "batch_axis", 1);
  if (!time || !batch)
    return std::nullopt;
  int64_t timeAxis = *time, batchAxis = *batch;
  Value data = node.getInputs()[0];
  auto t = dyn_cast<RankedTensorType>(data.getType());
  if (!t || t.getRank() < 2 || !llvm::is_contained({0, 1}, timeAxis) ||
      !llvm::is_contained({0, 1}, batchAxis) || timeAxis == batchAxis ||
      !keepsShape(op->getResult(0), data))
    return std::nullopt;
  Value lensValue = node.getInputs()[1];
  auto lens = od::getConstantInts(lensValue);
  if (lens) {
    int64_t T = t.getDimSize(timeAxis), B = t.getDimSize(batchAxis);
    if (t.isDynamicDim(timeAxis) || t.isDynamicDim(batchAxis) ||
        (int64_t)lens->size() != B ||
        llvm::any_of(*lens, [&](int64_t l) { return l != T; }))
      return std::nullopt;
    return std::make_pair(data, timeAxis);
  }
  // Dynamic sizes: every length is the time axis's size, read from a shape
  // (tf2onnx's ReverseV2: Expand(Shape(x)[t], Shape(x)[b])); ReverseSequence
  // itself checks that there is one per batch entry.
  while (auto cast = lensValue.getDefiningOp<od::CastOp>())
    lensValue = cast.getInput();
  auto expand = lensValue.getDefiningOp<od::ExpandOp>();
  if (!expand || !od::holdsDimSize(expand.getInput(), data, timeAxis))
    return std::nullopt;
  return std::make_pair(data, timeAxis);
}

/// Follows a forward layer's Y [T, 1, B, H] through the data movement that
/// keeps each time step whole (the Squeeze of the direction axis, Transposes,
/// Identity), each value read by one of them (and Shape nodes), to a whole
/// ReverseSequence over the time
/// axis. The nodes on the way are collected; the ReverseSequence is returned.
Operation *reversalOfY(Value y, SmallVectorImpl<Operation *> &path) {
  int64_t axis = 0; // where the time axis is
  Value v = y;
  for (int depth = 0; depth < 8; ++depth) {
    // One reader of the values, besides Shape nodes (tf2onnx computes the
    // lengths from the shapes on the way): reversing the time axis leaves
    // every shape as it was.
    Operation *user = nullptr;
    for (Operation *u : v.getUsers()) {
      if (isa<od::ShapeOp>(u))
        continue;
      if (user && user != u)
        return nullptr;
      user = u;
    }
    if (!user)
      return nullptr;
    if (auto rev = wholeReversal(user))
      return rev->first == v && rev->second == axis ? user : nullptr;
    if (auto sq = dyn_cast<od::SqueezeOp>(user)) {
      auto axes = od::getSqueezeAxes(sq);
      if (v != y || !axes || *axes != SmallVector<int64_t>{1})
        return nullptr;
    } else if (auto tr = dyn_cast<od::TransposeOp>(user)) {
      auto perm = tr.getPerm();
      if (!perm)
        return nullptr;
      auto it = llvm::find(*perm, axis);
      if (it == perm->end())
        return nullptr;
      axis = it - perm->begin();
    } else if (!isa<od::IdentityOp>(user)) {
      return nullptr;
    }
    path.push_back(user);
    v = user->getResult(0);
  }
  return nullptr;
}

struct PairBidirectional
    : public rnn::impl::RNNPairBidirectionalPassBase<PairBidirectional> {
  void runOnOperation() override {
    rnn::forEachGraph(getOperation(),
                      [&](func::FuncOp func) { runOnFunction(func); });
  }

  /// A forward layer over the time-reversed input whose output sequence is
  /// reversed back (Keras' Bidirectional backward layer as tf2onnx writes
  /// it, a Loop over ReverseSequence(x)) is a reverse layer over the input:
  /// the same steps in the same order, Y indexed by the input's time. Its
  /// final state is the same value. Exact.
  void flipReversedInputLayers(func::FuncOp func) {
    SmallVector<rnn::SequenceOp> layers;
    func.walk([&](rnn::SequenceOp op) {
      if (op.getDirection() == rnn::Direction::Forward && !op.getSequenceLens())
        layers.push_back(op);
    });
    for (rnn::SequenceOp op : layers) {
      Operation *inRev = op.getX().getDefiningOp();
      auto in = wholeReversal(inRev);
      if (!in || in->second != 0)
        continue;
      SmallVector<Operation *> path;
      Operation *outRev = nullptr;
      if (!op.getY().use_empty() && !(outRev = reversalOfY(op.getY(), path)))
        continue;
      op.getXMutable().assign(in->first);
      op.setDirectionAttr(
          rnn::DirectionAttr::get(op.getContext(), rnn::Direction::Reverse));
      if (outRev)
        outRev->getResult(0).replaceAllUsesWith(outRev->getOperand(0));
      op.emitRemark() << "a forward "
                      << rnn::stringifyCellKind(op.getCell()).upper()
                      << " layer over the time-reversed input"
                      << (outRev ? ", its output reversed back," : "")
                      << " is a reverse layer over the input";
      // The ReverseSequence nodes (of known semantics) go when dead.
      SmallVector<Operation *> dead = {inRev};
      if (outRev)
        dead.push_back(outRev);
      od::eraseDeadOps(dead, {}, [&](Operation *o) {
        return o == inRev || o == outRev;
      });
    }
  }

  void runOnFunction(func::FuncOp func) {
    flipReversedInputLayers(func);
    od::ConstantBuilder consts(func);
    SmallVector<rnn::SequenceOp> fwd, rev;
    func.walk([&](rnn::SequenceOp op) {
      if (op.getDirection() == rnn::Direction::Forward)
        fwd.push_back(op);
      else if (op.getDirection() == rnn::Direction::Reverse)
        rev.push_back(op);
    });
    DenseSet<Operation *> used;
    for (rnn::SequenceOp f : fwd)
      for (rnn::SequenceOp r : rev) {
        if (used.contains(r) || !sameInput(f.getX(), r.getX()) ||
            !sameConfig(f, r))
          continue;
        if (failed(pair(f, r, consts)))
          continue;
        used.insert(r);
        ++numPaired;
        break;
      }
  }

  /// Stacks two constants along a new leading axis (each already has D = 1).
  Value stack(Location loc, Value a, Value b, StringRef name,
              od::ConstantBuilder &consts) {
    auto ta = od::getConstantF32(a), tb = od::getConstantF32(b);
    if (!ta || !tb || ta->shape != tb->shape)
      return {};
    SmallVector<int64_t> shape(ta->shape);
    shape[0] = 2;
    std::vector<float> v(ta->values);
    v.insert(v.end(), tb->values.begin(), tb->values.end());
    return consts.getF32(loc, name, shape, v);
  }

  LogicalResult pair(rnn::SequenceOp f, rnn::SequenceOp r,
                     od::ConstantBuilder &consts) {
    // Build before the earlier op; the later one's operands must be defined
    // by then.
    rnn::SequenceOp early = f->isBeforeInBlock(r) ? f : r;
    rnn::SequenceOp late = early == f ? r : f;
    // Glue that only reads what is there already (an initial state's
    // Unsqueeze) moves up; an input that depends on the earlier layer
    // cannot.
    for (Value v : late->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->getBlock() == early->getBlock() &&
          !def->isBeforeInBlock(early) && !isa<od::InitializerOp>(def) &&
          !od::hoistBefore(v, early)) {
        late.emitRemark() << "not paired with the layer in the other "
                             "direction: an input is computed between them";
        return failure();
      }
    }
    Location loc = FusedLoc::get(f.getContext(), {f.getLoc(), r.getLoc()});
    Value W = stack(loc, f.getW(), r.getW(), "bidir_W", consts);
    Value R = stack(loc, f.getR(), r.getR(), "bidir_R", consts);
    Value Bw = stack(loc, f.getBw(), r.getBw(), "bidir_Bw", consts);
    Value Br = stack(loc, f.getBr(), r.getBr(), "bidir_Br", consts);
    if (!W || !R || !Bw || !Br)
      return failure();
    Value P;
    if (f.getPeephole() &&
        !(P = stack(loc, f.getPeephole(), r.getPeephole(), "bidir_P", consts)))
      return failure();
    // Initial states are only paired when constants or the two layers'
    // states can be concatenated: Concat on axis 0.
    OpBuilder b(early);
    auto concat = [&](Value a, Value c) -> Value {
      if (!a)
        return {};
      auto t = cast<RankedTensorType>(a.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape[0] = 2;
      return od::ConcatOp::create(b, loc, RankedTensorType::get(shape, t.getElementType()),
                                  ValueRange{a, c}, 0);
    };
    Value h0 = concat(f.getH0(), r.getH0());
    Value c0 = concat(f.getC0(), r.getC0());
    auto yt = cast<RankedTensorType>(f.getY().getType());
    auto st = cast<RankedTensorType>(f.getHN().getType());
    auto yType = RankedTensorType::get(
        {yt.getDimSize(0), 2, yt.getDimSize(2), yt.getDimSize(3)},
        yt.getElementType());
    auto sType = RankedTensorType::get({2, st.getDimSize(1), st.getDimSize(2)},
                                       st.getElementType());
    SmallVector<Type> types = {yType, sType};
    if (f.getCN())
      types.push_back(sType);
    auto bi = rnn::SequenceOp::create(
        b, loc, types, f.getCellAttr(),
        rnn::DirectionAttr::get(f.getContext(), rnn::Direction::Bidirectional),
        f.getHiddenSizeAttr(), f.getLinearBeforeResetAttr(), f.getX(), W, R, Bw,
        Br, h0, c0, f.getSequenceLens(), P, f.getActivationsAttr(),
        f.getActivationAlphaAttr(), f.getActivationBetaAttr(), f.getClipAttr(),
        f.getInputForgetAttr());
    // Activations are per direction in the joint layer: repeat them.
    if (auto acts = f.getActivationsAttr()) {
      SmallVector<Attribute> twice(acts.begin(), acts.end());
      twice.append(acts.begin(), acts.end());
      bi.setActivationsAttr(b.getArrayAttr(twice));
      if (auto a = f.getActivationAlphaAttr()) {
        SmallVector<float> v(a.asArrayRef());
        v.append(a.asArrayRef().begin(), a.asArrayRef().end());
        bi.setActivationAlphaAttr(b.getDenseF32ArrayAttr(v));
      }
      if (auto a = f.getActivationBetaAttr()) {
        SmallVector<float> v(a.asArrayRef());
        v.append(a.asArrayRef().begin(), a.asArrayRef().end());
        bi.setActivationBetaAttr(b.getDenseF32ArrayAttr(v));
      }
    }
    int64_t srcNodes = 0, srcGemms = 0;
    for (rnn::SequenceOp op : {f, r}) {
      if (auto a = op->getAttrOfType<IntegerAttr>("rnn.source_nodes"))
        srcNodes += a.getInt();
      if (auto a = op->getAttrOfType<IntegerAttr>("rnn.source_gemms"))
        srcGemms += a.getInt();
    }
    bi->setAttr("rnn.source_nodes", b.getI64IntegerAttr(srcNodes));
    if (Attribute p = f->getAttr(rnn::kPrecisionAttr))
      bi->setAttr(rnn::kPrecisionAttr, p);
    bi->setAttr("rnn.source_gemms", b.getI64IntegerAttr(srcGemms));
    // Old results: slice d of the joint ones (Y on axis 1, states on axis 0).
    auto replace = [&](Value old, Value joint, int64_t axis, int64_t d) {
      if (old && !old.use_empty())
        old.replaceAllUsesWith(
            od::createSliceAxis(b, loc, consts, joint, axis, d, d + 1));
    };
    for (auto [d, op] : llvm::enumerate(SmallVector<rnn::SequenceOp>{f, r})) {
      replace(op.getY(), bi.getY(), 1, d);
      replace(op.getHN(), bi.getHN(), 0, d);
      replace(op.getCN(), bi.getCN(), 0, d);
    }
    bi.emitRemark() << "paired a forward and a reverse "
                    << rnn::stringifyCellKind(f.getCell()).upper()
                    << " layer into one bidirectional layer";
    SmallVector<Operation *> dead = {f, r};
    od::eraseDeadOps(dead, consts.forgetter());
    return success();
  }
};

} // namespace

//===- StepValues.cpp - the values of one unrolled time step --------------===//

#include "lstm-opt/Dialect/RNN/Utils/StepValues.h"
#include "lstm-opt/Dialect/RNN/Utils/CellForms.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace lstm_opt;
using rnn::StepNormalizer;
using rnn::StepSlice;
namespace od = lstm_opt::onnx;

//===----------------------------------------------------------------------===//
// Step slices
//===----------------------------------------------------------------------===//

static int64_t rankOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

static std::optional<int64_t> single(std::optional<SmallVector<int64_t>> v) {
  if (!v || v->size() != 1)
    return std::nullopt;
  return (*v)[0];
}

/// The step a Slice keeps of `axis` when it keeps one step of that axis and
/// every other axis it names whole. jax2onnx writes x[:, t] as a Slice over
/// all axes (starts [0, t, 0], ends [B, t + 1, I]); PyTorch and tf2onnx name
/// one axis. A negative start counts from the end; an end past the dimension
/// is clamped, as ONNX clamps it.
std::optional<int64_t> rnn::oneStepOfSlice(od::SliceOp sl, int64_t axis) {
  if (sl.getStartsAttr())
    return std::nullopt; // opset 1's attribute form: not written by exporters
  auto t = dyn_cast<RankedTensorType>(sl.getData().getType());
  auto starts = od::getConstantInts(sl.getStarts());
  auto ends = od::getConstantInts(sl.getEnds());
  if (!t || !starts || !ends || starts->size() != ends->size() ||
      axis < 0 || axis >= t.getRank())
    return std::nullopt;
  int64_t rank = t.getRank();
  SmallVector<int64_t> axes;
  if (isa<NoneType>(sl.getAxes().getType())) {
    for (int64_t i = 0, e = starts->size(); i < e; ++i)
      axes.push_back(i);
  } else if (auto a = od::getConstantInts(sl.getAxes())) {
    axes = *a;
  } else {
    return std::nullopt;
  }
  if (axes.size() != starts->size())
    return std::nullopt;
  if (!isa<NoneType>(sl.getSteps().getType())) {
    auto steps = od::getConstantInts(sl.getSteps());
    if (!steps || steps->size() != starts->size() ||
        llvm::any_of(*steps, [](int64_t st) { return st != 1; }))
      return std::nullopt;
  }
  std::optional<int64_t> picked;
  SmallVector<bool> seen(rank, false);
  for (auto [a, st, en] : llvm::zip(axes, *starts, *ends)) {
    if (a < 0)
      a += rank;
    if (a < 0 || a >= rank || seen[a])
      return std::nullopt;
    seen[a] = true;
    bool known = !t.isDynamicDim(a);
    int64_t dim = t.getDimSize(a);
    if (a != axis) {
      // Every other axis whole: from 0 (or -dim) to its end or past it.
      bool fromStart = st == 0 || (known && st == -dim);
      bool toEnd = en == std::numeric_limits<int64_t>::max() ||
                   (known && en >= dim);
      if (!fromStart || !toEnd)
        return std::nullopt;
      continue;
    }
    // One step: [st, st + 1), st counted from the end when negative.
    if (st >= 0 && en == st + 1)
      picked = st;
    else if (st < 0 && known && st + dim >= 0 &&
             (en == st + 1 ||
              (st == -1 && en == std::numeric_limits<int64_t>::max())))
      picked = st + dim;
    else
      return std::nullopt;
  }
  return picked;
}

std::optional<StepSlice> rnn::getStepSlice(Value v) {
  StepSlice s;
  v = od::skipIdentities(v);
  Operation *def = v.getDefiningOp();
  if (auto g = dyn_cast_or_null<od::GatherOp>(def)) {
    auto idx = od::getConstantInts(g.getIndices());
    auto it = dyn_cast<RankedTensorType>(g.getIndices().getType());
    int64_t rank = rankOf(g.getData());
    if (!idx || idx->size() != 1 || !it || it.getRank() != 0 || rank < 1)
      return std::nullopt;
    s.seq = g.getData();
    s.axis = g.getAxis() < 0 ? g.getAxis() + rank : g.getAxis();
    s.index = (*idx)[0];
    s.ops.push_back(g);
  } else if (isa_and_nonnull<od::SqueezeOp, od::ReshapeOp>(def)) {
    // Squeeze(part, axis), or a Reshape that drops the part's unit axis
    // (jax2onnx and hand-written graphs: x[t:t+1].reshape(B, I)), of a
    // one-step Slice or Split part.
    std::optional<int64_t> axis;
    Value in;
    auto reshape = dyn_cast<od::ReshapeOp>(def);
    if (auto sq = dyn_cast<od::SqueezeOp>(def)) {
      axis = rnn::squeezeAxis(sq);
      if (!axis)
        return std::nullopt;
      in = od::skipIdentities(sq.getData());
    } else {
      in = od::skipIdentities(reshape.getData());
    }
    int64_t rank = rankOf(in);
    // With a Reshape: the part's own axis, if the Reshape only drops it.
    auto dropsOnly = [&](int64_t ax) {
      auto it = dyn_cast<RankedTensorType>(in.getType());
      auto rt = dyn_cast<RankedTensorType>(reshape.getResult().getType());
      if (!it || !rt || !it.hasStaticShape() || !rt.hasStaticShape() ||
          it.getRank() != 3 || ax < 0 || ax > 2 || it.getDimSize(ax) != 1)
        return false;
      SmallVector<int64_t> want(it.getShape());
      want.erase(want.begin() + ax);
      return rt.getShape() == ArrayRef<int64_t>(want);
    };
    s.ops.push_back(def);
    if (auto sl = in.getDefiningOp<od::SliceOp>()) {
      if (reshape) {
        // The Reshape drops one unit axis: the one the Slice cut to a step
        // (with several unit axes, the first that is a step of the Slice).
        for (int64_t ax = 0; ax < 3 && !axis; ++ax)
          if (dropsOnly(ax) && oneStepOfSlice(sl, ax))
            axis = ax;
        if (!axis)
          return std::nullopt;
      }
      auto st = oneStepOfSlice(sl, *axis);
      if (!st)
        return std::nullopt;
      s.seq = sl.getData();
      s.axis = *axis;
      s.index = *st;
      s.ops.push_back(sl);
    } else if (auto sp = in.getDefiningOp<od::SplitOp>()) {
      int64_t spAxis = sp.getAxis() < 0 ? sp.getAxis() + rank : sp.getAxis();
      if (reshape) {
        if (!dropsOnly(spAxis))
          return std::nullopt;
        axis = spAxis;
      }
      if (spAxis != *axis)
        return std::nullopt;
      auto t = dyn_cast<RankedTensorType>(sp.getInput().getType());
      if (!t || t.isDynamicDim(*axis) ||
          t.getDimSize(*axis) != (int64_t)sp.getNumResults())
        return std::nullopt; // every part one step long
      s.seq = sp.getInput();
      s.axis = *axis;
      s.index = cast<OpResult>(in).getResultNumber();
      s.ops.push_back(sp);
    } else {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  auto t = dyn_cast<RankedTensorType>(s.seq.getType());
  if (!t || t.getRank() != 3 || s.axis > 1)
    return std::nullopt;
  if (s.index < 0) {
    if (t.isDynamicDim(s.axis))
      return std::nullopt;
    s.index += t.getDimSize(s.axis);
  }
  // An index out of range makes the model invalid (ONNX Runtime refuses
  // it): not a step, so the graph stays as it is rather than becoming a
  // valid-looking layer.
  if (s.index < 0 ||
      (!t.isDynamicDim(s.axis) && s.index >= t.getDimSize(s.axis)))
    return std::nullopt;
  return s;
}

/// The single axis of a Squeeze or Unsqueeze (attribute or constant input),
/// non-negative for a value of rank `rank`.
template <typename OpT>
static std::optional<int64_t> singleAxis(OpT op, int64_t rank) {
  std::optional<int64_t> axis;
  if (auto a = op.getAxesAttr())
    axis = a->size() == 1 ? std::optional<int64_t>((*a)[0]) : std::nullopt;
  else if (!isa<NoneType>(op.getAxes().getType()))
    axis = single(od::getConstantInts(op.getAxes()));
  if (axis && *axis < 0) {
    if (rank < 0)
      return std::nullopt;
    *axis += rank;
  }
  return axis;
}

std::optional<int64_t> rnn::squeezeAxis(od::SqueezeOp sq) {
  return singleAxis(sq, rankOf(sq.getData()));
}

std::optional<int64_t> rnn::unsqueezeAxis(od::UnsqueezeOp un) {
  int64_t rank = rankOf(un.getData());
  return singleAxis(un, rank < 0 ? rank : rank + 1);
}


//===----------------------------------------------------------------------===//
// StepNormalizer
//===----------------------------------------------------------------------===//

/// Marks every op a rewrite made, and every node a rewrite replaced, until
/// settle: ops the recogniser makes in between never carry them, so their
/// presence after matching tells which rewrites no cell took.
static constexpr llvm::StringLiteral kMade = "lstm_opt.step_rewrite";
static constexpr llvm::StringLiteral kReplaced = "lstm_opt.step_replaced";
/// On the ops a projection's step becomes: the source nodes and GEMMs they
/// stand for (the step's slicing nodes, and the projection itself once).
static constexpr llvm::StringLiteral kSourceNodes = "lstm_opt.step_source_nodes";
static constexpr llvm::StringLiteral kSourceGemms = "lstm_opt.step_source_gemms";

/// The largest constant rewritten without its unit axis (elements).
static constexpr int64_t kMaxUnitConstant = int64_t(1) << 22;

namespace {
/// Collects the ops a builder inserts.
struct CollectInserted : public OpBuilder::Listener {
  explicit CollectInserted(SmallVectorImpl<Operation *> &out) : out(out) {}
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    out.push_back(op);
  }
  SmallVectorImpl<Operation *> &out;
};
} // namespace

bool StepNormalizer::isReplaced(Operation *op) {
  return op->hasAttr(kReplaced);
}

bool StepNormalizer::isMade(Operation *op) { return op->hasAttr(kMade); }

std::optional<std::pair<int64_t, int64_t>>
StepNormalizer::sourceCounts(Operation *op) {
  auto nodes = op->getAttrOfType<IntegerAttr>(kSourceNodes);
  auto gemms = op->getAttrOfType<IntegerAttr>(kSourceGemms);
  if (!nodes || !gemms)
    return std::nullopt;
  return std::make_pair(nodes.getInt(), gemms.getInt());
}

int64_t StepNormalizer::apply() {
  SmallVector<Operation *> ops;
  for (Operation &op : func.front())
    ops.push_back(&op);
  int64_t n = 0;
  for (Operation *op : ops)
    n += sliceSequenceAt(op);
  for (Operation *op : ops)
    n += readLerp(op);
  for (Operation *op : ops)
    n += readMovedClipScale(op);
  // Projections first: a step's sum then reads the step's own product.
  for (Operation *op : ops)
    n += pushStepIntoProjection(op);
  for (Operation *op : ops)
    n += sinkUnitAxis(op);
  for (Operation *op : created)
    op->setAttr(kMade, UnitAttr::get(op->getContext()));
  return n;
}

void StepNormalizer::record(Value orig, Value repl, Operation *key) {
  orig.replaceAllUsesWith(repl);
  orig.getDefiningOp()->setAttr(kReplaced, UnitAttr::get(orig.getContext()));
  rewrites.push_back({orig, repl, repl.getDefiningOp(), key});
}

/// A bias that is the same at every step: an f32 constant of rank 0 or 1.
static bool isStepInvariantBias(Value v) {
  auto t = dyn_cast<RankedTensorType>(od::skipIdentities(v).getType());
  return t && t.getRank() <= 1 && t.getElementType().isF32() &&
         od::getConstantAttr(v);
}

/// An ONNX node of the default domain of type `type`, else null.
static od::NodeOp defaultNode(Operation *op, StringRef type) {
  auto n = dyn_cast_or_null<od::NodeOp>(op);
  return n && (n.getDomain().empty() || n.getDomain() == "ai.onnx") &&
                 n.getOpType() == type
             ? n
             : od::NodeOp();
}

bool StepNormalizer::sliceSequenceAt(Operation *op) {
  // SequenceAt(SplitToSequence(x, split, axis), i), i constant: torch's
  // chunk without the exporter's optimizer (optimize=False).
  od::NodeOp at = defaultNode(op, "SequenceAt");
  if (!at || at.getInputs().size() != 2 || op->getNumResults() != 1 ||
      op->getResult(0).use_empty())
    return false;
  od::NodeOp split =
      defaultNode(at.getInputs()[0].getDefiningOp(), "SplitToSequence");
  auto pos = single(od::getConstantInts(at.getInputs()[1]));
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!split || !pos || !rt || split.getInputs().empty() ||
      split.getInputs().size() > 2)
    return false;
  Value x = split.getInputs()[0];
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto axisAttr = od::getNodeIntAttr(split, "axis", 0);
  auto keepdims = od::getNodeIntAttr(split, "keepdims", 1);
  if (!xt || !axisAttr || !keepdims)
    return false;
  int64_t rank = xt.getRank();
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis >= rank || xt.isDynamicDim(axis))
    return false;
  int64_t dim = xt.getDimSize(axis);
  // The parts' sizes: `split` as one size (the last part the rest) or one
  // size a part; without it, parts of one, the axis kept per `keepdims`.
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (split.getInputs().size() == 2 &&
      !isa<NoneType>(split.getInputs()[1].getType())) {
    auto given = od::getConstantInts(split.getInputs()[1]);
    auto gt = dyn_cast<RankedTensorType>(split.getInputs()[1].getType());
    if (!given || !gt || given->empty())
      return false;
    if (gt.getRank() == 0) {
      int64_t s = (*given)[0];
      if (s <= 0)
        return false;
      for (int64_t at = 0; at < dim; at += s)
        sizes.push_back(std::min(s, dim - at));
    } else {
      sizes.assign(given->begin(), given->end());
    }
  } else {
    sizes.assign(dim, 1);
    squeeze = *keepdims == 0;
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return false;
    total += s;
  }
  int64_t parts = sizes.size();
  int64_t i = *pos < 0 ? *pos + parts : *pos;
  if (total != dim || i < 0 || i >= parts)
    return false;
  int64_t start = 0;
  for (int64_t k = 0; k < i; ++k)
    start += sizes[k];
  OpBuilder b(op);
  CollectInserted listener(created);
  b.setListener(&listener);
  Location loc = op->getLoc();
  Value part = od::createSliceAxis(b, loc, consts, x, axis, start,
                                   start + sizes[i]);
  Operation *key = part.getDefiningOp();
  if (squeeze)
    part = od::createSqueeze(b, loc, consts, part, {axis});
  if (part.getType() != rt) {
    // The declared type must be the part's; otherwise leave the node.
    auto pt = cast<RankedTensorType>(part.getType());
    if (failed(verifyCompatibleShape(pt.getShape(), rt.getShape())) ||
        pt.getElementType() != rt.getElementType())
      return false; // (what was made is dead and erased at settle)
    part.setType(rt);
  }
  sequenceNodes.push_back(op);
  if (!llvm::is_contained(sequenceNodes, split.getOperation()))
    sequenceNodes.push_back(split);
  record(op->getResult(0), part, key);
  return true;
}

/// The length of `axis` when `flip` reverses its data along it and keeps
/// everything else: Slice(starts [-1], ends [<= -length-1], axes [axis],
/// steps [-1]) over a static length (starts [length - 1] too).
static std::optional<int64_t> reversedLength(od::SliceOp flip, int64_t axis) {
  auto t = dyn_cast<RankedTensorType>(flip.getData().getType());
  if (flip.getStartsAttr() || !t || t.getRank() <= axis ||
      t.isDynamicDim(axis) || isa<NoneType>(flip.getAxes().getType()) ||
      isa<NoneType>(flip.getSteps().getType()))
    return std::nullopt;
  int64_t len = t.getDimSize(axis);
  auto starts = single(od::getConstantInts(flip.getStarts()));
  auto ends = single(od::getConstantInts(flip.getEnds()));
  auto axes = single(od::getConstantInts(flip.getAxes()));
  auto steps = single(od::getConstantInts(flip.getSteps()));
  if (!starts || !ends || !axes || !steps || *steps != -1 ||
      (*axes != axis && *axes != axis - t.getRank()))
    return std::nullopt;
  if (*starts != -1 && *starts < len - 1)
    return std::nullopt; // (a start past the end is clamped to len - 1)
  if (*ends > -len - 1)
    return std::nullopt;
  return len;
}

bool StepNormalizer::pushStepIntoProjection(Operation *op) {
  if (!isa<od::SqueezeOp, od::GatherOp, od::ReshapeOp>(op) ||
      op->getNumResults() != 1 || op->getResult(0).use_empty())
    return false;
  Value v = op->getResult(0);
  auto vt = dyn_cast<RankedTensorType>(v.getType());
  auto s = getStepSlice(v);
  if (!vt || vt.getRank() != 2 || !s)
    return false;
  // The sequence, or the sequence reversed along the axis of time
  // (torch.export's reverse direction flips the projection).
  int64_t index = s->index;
  Value seq = od::skipIdentities(s->seq);
  if (auto flip = seq.getDefiningOp<od::SliceOp>()) {
    auto steps = reversedLength(flip, s->axis);
    if (!steps)
      return false;
    index = *steps - 1 - index;
    seq = od::skipIdentities(flip.getData());
  }
  // The sequence: MatMul(X, W), or MatMul(X, W) + b, b the same each step.
  Operation *def = seq.getDefiningOp();
  od::MatMulOp mm;
  Value bias;
  if (auto add = dyn_cast_or_null<od::AddOp>(def)) {
    for (unsigned i = 0; i < 2 && !mm; ++i) {
      auto m = od::skipIdentities(add->getOperand(i)).getDefiningOp<od::MatMulOp>();
      if (m && isStepInvariantBias(add->getOperand(1 - i))) {
        mm = m;
        bias = add->getOperand(1 - i);
      }
    }
  } else {
    mm = dyn_cast_or_null<od::MatMulOp>(def);
  }
  if (!mm)
    return false;
  Value x = mm.getA(), w = mm.getB();
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto wt = dyn_cast<RankedTensorType>(od::skipIdentities(w).getType());
  if (!xt || xt.getRank() != 3 || !wt || wt.getRank() != 2 ||
      !od::getConstantAttr(w))
    return false;
  OpBuilder b(op);
  CollectInserted listener(created);
  b.setListener(&listener);
  Location loc = op->getLoc();
  // The step of X, cut as the exporter cut the projection's (one node or
  // two: the report counts them).
  Value step =
      s->ops.size() == 1
          ? od::createGatherIndex(b, loc, consts, x, s->axis, index)
          : od::createSqueeze(
                b, loc, consts,
                od::createSliceAxis(b, loc, consts, x, s->axis, index,
                                    index + 1),
                {s->axis});
  Value p = od::MatMulOp::create(b, mm.getLoc(), vt, step, w);
  Operation *key = p.getDefiningOp();
  // What the step's nodes stand for: the projection (with its bias and
  // flip), for the first of its steps. (The step's own slicing nodes are
  // the new slice of X's.)
  bool first = projections.insert(mm).second;
  int64_t nodes = first ? 1 + (bias ? 1 : 0) + (index != s->index) : 0;
  key->setAttr(kSourceNodes, b.getI64IntegerAttr(nodes));
  key->setAttr(kSourceGemms, b.getI64IntegerAttr(first ? 1 : 0));
  if (bias) {
    p = od::AddOp::create(b, def->getLoc(), vt, p, bias);
    p.getDefiningOp()->setAttr(kSourceNodes, b.getI64IntegerAttr(0));
    p.getDefiningOp()->setAttr(kSourceGemms, b.getI64IntegerAttr(0));
  }
  record(v, p, key);
  return true;
}

/// How an operand of an op computed with a leading unit axis is had
/// without it.
enum class UnitForm {
  None,     // it cannot be
  AsIs,     // rank <= 2: broadcasting leaves it unchanged
  Inner,    // Unsqueeze(a) at axis 0: a
  Constant, // an f32 constant [1, ...]: reshaped
  Squeezed, // a graph input [1, ...]: Squeeze(input)
};

static UnitForm unitForm(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return UnitForm::None;
  if (t.getRank() <= 2)
    return UnitForm::AsIs;
  if (t.getRank() != 3 || t.getDimSize(0) != 1)
    return UnitForm::None;
  if (auto un = v.getDefiningOp<od::UnsqueezeOp>()) {
    auto dt = dyn_cast<RankedTensorType>(un.getData().getType());
    return dt && dt.getRank() == 2 && rnn::unsqueezeAxis(un) == 0 ? UnitForm::Inner
                                                              : UnitForm::None;
  }
  if (od::getConstantAttr(v))
    return t.hasStaticShape() && t.getNumElements() <= kMaxUnitConstant &&
                   t.getElementType().isF32() && od::getConstantF32(v)
               ? UnitForm::Constant
               : UnitForm::None;
  // A state given as [1, batch, hidden], ONNX's layout for one direction.
  return isa<BlockArgument>(v) ? UnitForm::Squeezed : UnitForm::None;
}

bool StepNormalizer::sinkUnitAxisOfSplit(od::SplitOp split) {
  // Gates cut from a [1, B, G*H] pre-activation (x.chunk(4, -1)).
  auto t = dyn_cast<RankedTensorType>(split.getInput().getType());
  if (isReplaced(split) || !t || t.getRank() != 3 ||
      unitForm(split.getInput()) != UnitForm::Inner)
    return false;
  int64_t axis = split.getAxis() < 0 ? split.getAxis() + 3 : split.getAxis();
  if (axis < 1 || axis > 2)
    return false;
  for (Value part : split.getResults()) {
    auto pt = dyn_cast<RankedTensorType>(part.getType());
    if (!pt || pt.getRank() != 3 || pt.getDimSize(0) != 1)
      return false;
  }
  OpBuilder b(split);
  CollectInserted listener(created);
  b.setListener(&listener);
  auto n = cast<od::SplitOp>(b.clone(*split));
  n->setOperand(0, split.getInput().getDefiningOp<od::UnsqueezeOp>().getData());
  n.setAxis(axis - 1);
  for (auto [part, newPart] : llvm::zip(split.getResults(), n.getResults())) {
    auto pt = cast<RankedTensorType>(part.getType());
    newPart.setType(
        RankedTensorType::get(pt.getShape().drop_front(), pt.getElementType()));
  }
  for (auto [part, newPart] : llvm::zip(split.getResults(), n.getResults())) {
    if (part.use_empty())
      continue;
    Value u = od::createUnsqueeze(b, split.getLoc(), consts, newPart, {0});
    u.setType(part.getType());
    record(part, u, n);
  }
  return true;
}

/// Whether `a` and `b` are the same value, or constants of equal values.
static bool sameValue(Value a, Value b) {
  a = od::skipIdentities(a);
  b = od::skipIdentities(b);
  if (a == b)
    return true;
  auto ca = od::getConstantAttr(a), cb = od::getConstantAttr(b);
  if (!ca || !cb || ca.getType() != cb.getType())
    return false;
  if (ca == cb)
    return true;
  // (An exporter writes the zero state once per use, as separate
  // resources.)
  if (ca.getNumElements() > (int64_t(1) << 20))
    return false;
  auto fa = od::getConstantF32(ca), fb = od::getConstantF32(cb);
  return fa && fb && fa->values == fb->values;
}

/// The other operand of `op` (two operands) than `v`, else null.
static Value otherOperand(Operation *op, Value v) {
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return Value();
}

bool StepNormalizer::readLerp(Operation *op) {
  // Where(Less(w, 0.5), s + w * (e - s), e - (e - s) * (1 - w)): PyTorch's
  // lerp(s, e, w), each branch the formula that rounds better on its side
  // of 0.5. Both are s + w * (e - s) up to rounding: the first branch
  // stands for the Where, so that the cell forms read the GRU update
  // h' = n + z * (h - n) that torch.lerp(n, h, z) writes. (Not exact,
  // unlike the rewrites above: where w >= 0.5 the value differs from the
  // Where's in the last bits; kept only where a cell takes it, whose own
  // products and sums round differently anyway.)
  auto where = defaultNode(op, "Where");
  if (!where || isReplaced(op) || where.getInputs().size() != 3 ||
      op->getNumResults() != 1)
    return false;
  Value cond = where.getInputs()[0], a = where.getInputs()[1],
        bv = where.getInputs()[2];
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt || !rt.getElementType().isF32() || a.getType() != rt ||
      bv.getType() != rt)
    return false;
  auto less = defaultNode(cond.getDefiningOp(), "Less");
  if (!less || less.getInputs().size() != 2 ||
      getScalarF32(less.getInputs()[1]) != 0.5f)
    return false;
  Value w = less.getInputs()[0];
  // a = s + w * d
  auto add = a.getDefiningOp<od::AddOp>();
  if (!add)
    return false;
  od::MulOp wd;
  Value s;
  for (int i = 0; i < 2 && !wd; ++i)
    if (auto m = add->getOperand(i).getDefiningOp<od::MulOp>();
        m && otherOperand(m, w)) {
      wd = m;
      s = add->getOperand(1 - i);
    }
  if (!wd)
    return false;
  Value d = otherOperand(wd, w);
  // d = e - s
  auto diff = d.getDefiningOp<od::SubOp>();
  if (!diff || diff.getB() != s)
    return false;
  Value e = diff.getA();
  // b = e - d * (1 - w)
  auto sub = bv.getDefiningOp<od::SubOp>();
  if (!sub || !sameValue(sub.getA(), e))
    return false;
  auto m = sub.getB().getDefiningOp<od::MulOp>();
  Value oneMinus = m ? otherOperand(m, d) : Value();
  auto om = oneMinus ? oneMinus.getDefiningOp<od::SubOp>() : od::SubOp();
  if (!om || om.getB() != w || getScalarF32(om.getA()) != 1.0f)
    return false;
  // A copy of the first branch's sum stands for the Where (settle undoes
  // the rewrite where no cell took the copy); the sum itself, read by the
  // Where alone now, is no cell's anchor.
  OpBuilder b(op);
  CollectInserted listener(created);
  b.setListener(&listener);
  Operation *copy = b.clone(*add);
  add->setAttr(kReplaced, UnitAttr::get(op->getContext()));
  record(op->getResult(0), copy->getResult(0), copy);
  genericNodes.push_back(op);
  genericNodes.push_back(less);
  return true;
}

bool StepNormalizer::readMovedClipScale(Operation *op) {
  // Mul(Clip(L, 0, u), K), K a constant: Keras' hard_sigmoid,
  // Clip(x + 3, 0, 6) / 6, where tf2onnx moved the / 6 onto a constant
  // factor (a bias or the zero state: r * b_hn / 6 at a GRU's first step,
  // f * c0 / 6 at an LSTM's). Clip(L, 0, u) * K = (Clip(L, 0, u) / u) *
  // (u * K): a HardSigmoid(1 / u, 0) times a constant. Exact where K is
  // zero; otherwise a rounding of the constant's product (kept only where
  // a cell takes it).
  auto mul = dyn_cast<od::MulOp>(op);
  if (!mul || isReplaced(op))
    return false;
  auto rt = dyn_cast<RankedTensorType>(mul.getType());
  if (!rt || !rt.getElementType().isF32())
    return false;
  // Already a HardSigmoid (Clip times its own scalar 1 / u): read as it is.
  if (auto a = getActivation(op->getResult(0)); a && a->op == op)
    return false;
  for (int i = 0; i < 2; ++i) {
    Value c = od::skipIdentities(op->getOperand(i));
    Value kv = op->getOperand(1 - i);
    auto bounds = getClipBounds(c.getDefiningOp());
    if (!bounds || bounds->first != 0.f || !(bounds->second > 0.f) ||
        !std::isfinite(bounds->second))
      continue;
    float u = bounds->second;
    auto kt = dyn_cast<RankedTensorType>(kv.getType());
    auto ka = od::getConstantAttr(od::skipIdentities(kv));
    if (!kt || !ka || ka.getNumElements() == 0 ||
        ka.getNumElements() > (int64_t(1) << 20))
      continue;
    auto k = od::getConstantF32(ka);
    if (!k)
      continue;
    std::vector<float> scaled(k->values.size());
    bool finite = true;
    for (size_t j = 0; j < scaled.size(); ++j) {
      scaled[j] = k->values[j] * u;
      finite &= std::isfinite(scaled[j]);
    }
    if (!finite)
      continue;
    // Zeros (the zero state) stay the very value a cell compares with.
    bool same = scaled == k->values;
    OpBuilder b(op);
    CollectInserted listener(created);
    b.setListener(&listener);
    Location loc = op->getLoc();
    Value inv = consts.getF32(loc, "hard_sigmoid_scale", {}, {1.f / u});
    Value hs = od::MulOp::create(b, loc, c.getType(), c, inv);
    Value uk = same ? kv
                    : consts.getF32(loc, "hard_sigmoid_factor", kt.getShape(),
                                    scaled);
    auto prod = od::MulOp::create(b, loc, rt, hs, uk);
    record(op->getResult(0), prod, prod);
    return true;
  }
  return false;
}

bool StepNormalizer::sinkUnitAxis(Operation *op) {
  if (auto split = dyn_cast<od::SplitOp>(op))
    return sinkUnitAxisOfSplit(split);
  if (isReplaced(op) || op->getNumResults() != 1 || op->getNumRegions())
    return false;
  Value r = op->getResult(0);
  auto rt = dyn_cast<RankedTensorType>(r.getType());
  if (r.use_empty() || !rt || rt.getRank() != 3 || rt.getDimSize(0) != 1)
    return false;
  bool unary = op->hasTrait<od::traits::ElementwiseUnary>();
  bool binary = op->hasTrait<od::traits::ElementwiseBroadcast>();
  bool matmul = isa<od::MatMulOp>(op);
  if ((!unary && !binary && !matmul) ||
      op->getNumOperands() != (unary ? 1u : 2u))
    return false;
  // A MatMul by a matrix: only its left operand has the unit axis.
  if (matmul &&
      (rankOf(op->getOperand(0)) != 3 || rankOf(op->getOperand(1)) != 2))
    return false;
  // Each operand without the unit axis. (All of them may be constants: an
  // exporter that stops folding at some size leaves the first step's
  // MatMul(zero state, R) [1, B, H] to run.)
  SmallVector<UnitForm> forms;
  for (Value v : op->getOperands()) {
    UnitForm f = unitForm(v);
    if (f == UnitForm::None)
      return false;
    forms.push_back(f);
  }
  OpBuilder b(op);
  CollectInserted listener(created);
  b.setListener(&listener);
  Location loc = op->getLoc();
  SmallVector<Value> ins;
  for (auto [v, f] : llvm::zip(op->getOperands(), forms)) {
    switch (f) {
    case UnitForm::Inner:
      ins.push_back(v.getDefiningOp<od::UnsqueezeOp>().getData());
      break;
    case UnitForm::Constant: {
      auto t = cast<RankedTensorType>(v.getType());
      ins.push_back(consts.getF32(loc, "unit_axis_dropped",
                                  t.getShape().drop_front(),
                                  od::getConstantF32(v)->values));
      break;
    }
    case UnitForm::Squeezed: {
      // One Squeeze per input, before its first reader (ops are rewritten
      // in program order): every reader of the state reads one value.
      Value &sq = squeezedInputs[v];
      if (!sq)
        sq = od::createSqueeze(b, loc, consts, v, {0});
      ins.push_back(sq);
      break;
    }
    default:
      ins.push_back(v);
    }
  }
  Operation *n = b.clone(*op);
  for (auto [i, in] : llvm::enumerate(ins))
    n->setOperand(i, in);
  n->getResult(0).setType(
      RankedTensorType::get(rt.getShape().drop_front(), rt.getElementType()));
  Value u = od::createUnsqueeze(b, loc, consts, n->getResult(0), {0});
  u.setType(rt);
  record(r, u, n);
  return true;
}

void StepNormalizer::settle(function_ref<void(Operation *)> onErase) {
  if (rewrites.empty())
    return;
  DenseSet<Operation *> made;
  SmallVector<Operation *> candidates;
  for (Operation &op : func.front()) {
    if (op.hasAttr(kMade)) {
      made.insert(&op);
      op.removeAttr(kMade);
      op.removeAttr(kSourceNodes);
      op.removeAttr(kSourceGemms);
      candidates.push_back(&op);
    }
    if (op.hasAttr(kReplaced)) {
      op.removeAttr(kReplaced);
      candidates.push_back(&op);
    }
  }
  // A rewrite whose marked op is still there: no cell took it. (Pointers
  // are compared, never followed: `made` holds only live ops.)
  for (Rewrite &r : llvm::reverse(rewrites))
    if (made.contains(r.key) && made.contains(r.replOp))
      r.repl.replaceAllUsesWith(r.orig);
  // (The Where and Less of a lerp are onnx.node, of unknown effects to
  // eraseDeadOps: those named here go when dead, and so does an activation
  // kept as onnx.node (Elu, Softsign, ...) that only a lerp's other branch
  // read, with what only it read.)
  od::eraseDeadOps(candidates, onErase, [&](Operation *op) {
    if (llvm::is_contained(genericNodes, op))
      return true;
    if (genericNodes.empty() || op->getNumResults() != 1)
      return false;
    auto act = getActivation(op->getResult(0));
    return act && act->op == op;
  });
  // Sequence nodes are onnx.node (unknown effects to eraseDeadOps): those
  // a kept rewrite left without a reader go here, SequenceAt first.
  for (StringRef type : {"SequenceAt", "SplitToSequence"}) {
    SmallVector<Operation *> dead;
    for (Operation &op : func.front())
      if (defaultNode(&op, type) && op.use_empty() &&
          llvm::is_contained(sequenceNodes, &op))
        dead.push_back(&op);
    for (Operation *op : dead) {
      SmallVector<Operation *> defs;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          defs.push_back(def);
      onErase(op);
      op->erase();
      od::eraseDeadOps(defs, onErase);
    }
  }
  rewrites.clear();
  sequenceNodes.clear();
  genericNodes.clear();
  created.clear();
  projections.clear();
  squeezedInputs.clear();
}

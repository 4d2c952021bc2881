//===- RollTimeLoop.cpp - chains of cells -> one layer --------------------===//
//
// A chain of cells with the same weights, whose state flows from each step
// to the next, and whose step inputs are consecutive slices of one tensor
// along its time axis, becomes one rnn.sequence. Per-step hidden outputs
// stacked with Unsqueeze + Concat become the layer's Y; other reads of an
// intermediate hidden state read Y; a read of an intermediate cell state
// cannot be expressed and stops the roll (with a remark). A cell that cannot
// be rolled with others becomes a one-step layer on its own.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/StepValues.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNROLLTIMELOOPPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;
using rnn::getStepSlice;
using rnn::StepSlice;
using rnn::unsqueezeAxis;

namespace {

/// One step of any cell kind, with the accessors the roller needs. Operand
/// order is shared: x = 0, h = 1 (and c = 2 for LSTM).
class Cell {
public:
  Cell() = default;
  Cell(Operation *op) : op(op) {}
  static Cell dyn(Operation *op) {
    return isa_and_nonnull<rnn::LSTMCellOp, rnn::GRUCellOp, rnn::RNNCellOp>(op)
               ? Cell(op)
               : Cell();
  }
  explicit operator bool() const { return op; }
  Operation *operator->() const { return op; }
  Operation *getOperation() const { return op; }
  operator Operation *() const { return op; }
  bool operator==(const Cell &o) const { return op == o.op; }
  rnn::CellKind kind() const {
    if (isa<rnn::LSTMCellOp>(op))
      return rnn::CellKind::LSTM;
    return isa<rnn::GRUCellOp>(op) ? rnn::CellKind::GRU : rnn::CellKind::RNN;
  }
  bool isLSTM() const { return kind() == rnn::CellKind::LSTM; }
  Value getX() const { return op->getOperand(0); }
  Value getH() const { return op->getOperand(1); }
  Value getC() const { return isLSTM() ? op->getOperand(2) : Value(); }
  Value getW() const { return op->getOperand(isLSTM() ? 3 : 2); }
  Value getR() const { return op->getOperand(isLSTM() ? 4 : 3); }
  Value getBw() const { return op->getOperand(isLSTM() ? 5 : 4); }
  Value getBr() const { return op->getOperand(isLSTM() ? 6 : 5); }
  /// An LSTM's peephole weights [3*H] (i, f, o), or null.
  Value getPeephole() const {
    return isLSTM() && op->getNumOperands() > 7 ? op->getOperand(7) : Value();
  }
  bool inputForget() const { return op->hasAttr("input_forget"); }
  Value getHOut() const { return op->getResult(0); }
  Value getCOut() const { return isLSTM() ? op->getResult(1) : Value(); }
  Attribute attr(StringRef name) const { return op->getAttr(name); }
  ArrayAttr getActivationsAttr() const {
    return op->getAttrOfType<ArrayAttr>("activations");
  }
  DenseF32ArrayAttr getActivationAlphaAttr() const {
    return op->getAttrOfType<DenseF32ArrayAttr>("activation_alpha");
  }
  DenseF32ArrayAttr getActivationBetaAttr() const {
    return op->getAttrOfType<DenseF32ArrayAttr>("activation_beta");
  }
  FloatAttr getClipAttr() const { return op->getAttrOfType<FloatAttr>("clip"); }
  bool linearBeforeReset() const { return op->hasAttr("linear_before_reset"); }
  Location getLoc() const { return op->getLoc(); }
  InFlightDiagnostic emitRemark() const { return op->emitRemark(); }

private:
  Operation *op = nullptr;
};

class Roller {
public:
  explicit Roller(func::FuncOp func)
      : func(func), consts(func) {}
  void run();
  int64_t numLayers = 0;

private:
  void rollChain(SmallVector<Cell> chain);
  void demoteOneStepChains();
  void demote(ArrayRef<rnn::SequenceOp> chain);
  bool sameWeights(Cell a, Cell b) {
    return a.getW() == b.getW() && a.getR() == b.getR() &&
           a.getBw() == b.getBw() && a.getBr() == b.getBr() &&
           a.getPeephole() == b.getPeephole() &&
           a.inputForget() == b.inputForget() && sameActivations(a, b);
  }
  bool sameActivations(Cell a, Cell b) {
    return a->getAttr(rnn::kPrecisionAttr) == b->getAttr(rnn::kPrecisionAttr) &&
           a.getActivationsAttr() == b.getActivationsAttr() &&
           a.getActivationAlphaAttr() == b.getActivationAlphaAttr() &&
           a.getActivationBetaAttr() == b.getActivationBetaAttr() &&
           a.getClipAttr() == b.getClipAttr() &&
           a.kind() == b.kind() &&
           a.linearBeforeReset() == b.linearBeforeReset();
  }
  /// `b` may follow `a` in one layer: same weights, or `a` is a first step
  /// whose zero state made some weights irrelevant (an exporter folded them):
  /// all of R when h is zero, the forget gate's rows when c is zero.
  bool linkable(Cell a, Cell b);
  Value withLeadingOne(Location loc, Value weight, StringRef name);

  func::FuncOp func;
  od::ConstantBuilder consts;
  DenseMap<Value, Value> leadingOne;
};

Value Roller::withLeadingOne(Location loc, Value weight, StringRef name) {
  auto it = leadingOne.find(weight);
  if (it != leadingOne.end())
    return it->second;
  auto t = od::getConstantF32(weight);
  SmallVector<int64_t> shape = {1};
  shape.append(t->shape.begin(), t->shape.end());
  Value v = consts.getF32(loc, name, shape, t->values);
  leadingOne[weight] = v;
  return v;
}

static bool isZeroConstant(Value v) {
  auto t = od::getConstantF32(v);
  return t && llvm::all_of(t->values, [](float f) { return f == 0.0f; });
}

/// Equal constants, except possibly the rows of gate `skipGate` (-1: none).
static bool equalExceptGate(Value a, Value b, int64_t gates, int64_t skipGate) {
  if (a == b)
    return true;
  auto ta = od::getConstantF32(a), tb = od::getConstantF32(b);
  if (!ta || !tb || ta->shape != tb->shape)
    return false;
  int64_t block = ta->numElements() / gates;
  for (int64_t i = 0; i < ta->numElements(); ++i)
    if (i / block != skipGate && ta->values[i] != tb->values[i])
      return false;
  return true;
}

/// Equal peephole weights ([3*H], i, f, o; absent reads as zeros), except
/// those of i and f when `skipIF`.
static bool equalPeepholes(Value a, Value b, bool skipIF) {
  if (a == b)
    return true;
  std::optional<od::F32Tensor> ta, tb;
  if ((a && !(ta = od::getConstantF32(a))) || (b && !(tb = od::getConstantF32(b))))
    return false;
  int64_t n = ta ? ta->numElements() : tb->numElements();
  if ((ta && ta->numElements() != n) || (tb && tb->numElements() != n))
    return false;
  for (int64_t i = skipIF ? 2 * n / 3 : 0; i < n; ++i)
    if ((ta ? ta->values[i] : 0.f) != (tb ? tb->values[i] : 0.f))
      return false;
  return true;
}

bool Roller::linkable(Cell a, Cell b) {
  if (sameWeights(a, b))
    return true;
  // A GRU first step with a folded zero state and no reset product: its
  // reset gate (and so linear_before_reset) does not matter.
  bool zeroReset = a->hasAttr("rnn.zero_reset");
  if (!sameActivations(a, b) &&
      !(zeroReset && a.kind() == b.kind() &&
        a.getActivationsAttr() == b.getActivationsAttr() &&
        a.getClipAttr() == b.getClipAttr()))
    return false;
  bool hZero = isZeroConstant(a.getH());
  bool cZero = a.isLSTM() && (a->hasAttr("rnn.zero_forget") ||
                              isZeroConstant(a.getC()));
  int64_t gates = rnn::getNumGates(a.kind());
  // f is the LSTM's canonical gate 1, r the GRU's gate 0.
  int64_t skip = cZero ? 1 : zeroReset ? 0 : -1;
  // With c zero, the forget gate (so input_forget) and the peepholes of i
  // and f (they multiply c) do not matter.
  if (a.inputForget() != b.inputForget() && !cZero)
    return false;
  if (!equalPeepholes(a.getPeephole(), b.getPeephole(), cZero))
    return false;
  return equalExceptGate(a.getW(), b.getW(), gates, skip) &&
         equalExceptGate(a.getBw(), b.getBw(), gates, skip) &&
         equalExceptGate(a.getBr(), b.getBr(), gates, skip) &&
         (hZero || equalExceptGate(a.getR(), b.getR(), gates, skip));
}

/// Never silent: the next step of `cur`'s layer (a cell with compatible
/// weights) reads a state computed from `cur`'s outputs by other ops, not
/// the outputs themselves (Keras' masking: h = mask ? h' : h; a clipped or
/// normalised state). No ONNX layer computes that, so the steps stay
/// layers of their own; the remark names the op in between.
template <typename Linkable>
static void remarkModifiedState(Cell cur, Linkable linkable) {
  SmallVector<std::pair<Value, int>> work;
  DenseSet<Value> seen;
  for (Value v : cur->getResults())
    work.push_back({v, 0});
  while (!work.empty()) {
    auto [v, depth] = work.pop_back_val();
    if (!seen.insert(v).second || seen.size() > 256)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (Cell c = Cell::dyn(user)) {
        // Through other ops into a state operand (h = 1, c = 2).
        if (depth > 0 && c != cur && use.getOperandNumber() >= 1 &&
            use.getOperandNumber() <= 2 && c.kind() == cur.kind() &&
            linkable(cur, c)) {
          Operation *def = v.getDefiningOp();
          c.emitRemark() << "not rolled into a layer with the step before: "
                            "its state is computed from that step's by '"
                         << (!def ? StringRef("?")
                             : !od::getOnnxOpType(def).empty()
                                 ? od::getOnnxOpType(def)
                                 : def->getName().getStringRef())
                         << "' and other ops, not passed on (a masked or "
                            "modified state; no ONNX layer computes it)";
          return;
        }
        continue;
      }
      if (depth < 6 && user->getNumRegions() == 0)
        for (Value r : user->getResults())
          work.push_back({r, depth + 1});
    }
  }
}

/// An op that may be computed earlier: a pure op, or an ONNX operator of the
/// default domain kept generically (every such operator is a function of its
/// inputs) without a subgraph and other than the random generators.
static bool isMovable(Operation *op) {
  if (op->getNumRegions())
    return false;
  if (isPure(op))
    return true;
  auto node = dyn_cast<od::NodeOp>(op);
  return node && (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
         !node.getOpType().starts_with("Random") &&
         !llvm::is_contained({"Multinomial", "Bernoulli"}, node.getOpType());
}

static bool keepsElementOrder(Operation *op);

/// Where the step input `x` of a later step of a chain starting at `head`
/// comes from: the ops after `head` in its block that compute it (pure, no
/// subgraph, at most `kMaxStepInputOps` in all), appended to `ops`.
enum class StepInputSource { Movable, FromChain, NotMovable };
static constexpr int64_t kMaxStepInputOps = 4096;

static StepInputSource
stepInputOps(Value x, Operation *head, const DenseSet<Operation *> &chainOps,
             llvm::SetVector<Operation *> &ops) {
  // The walk goes on past an op that cannot move: a dependence on the chain
  // behind it is the better reason to give.
  SmallVector<Value> work = {x};
  bool movable = true;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != head->getBlock() ||
        def->isBeforeInBlock(head) || ops.contains(def))
      continue;
    if (def == head || chainOps.contains(def))
      return StepInputSource::FromChain;
    if ((int64_t)ops.size() >= kMaxStepInputOps)
      return StepInputSource::NotMovable;
    if (!isMovable(def))
      movable = false;
    ops.insert(def);
    work.append(def->operand_begin(), def->operand_end());
  }
  return movable ? StepInputSource::Movable : StepInputSource::NotMovable;
}

/// Checks that every step input of the chain `steps` (their operand 0, one
/// op per step) can be computed before the first step, and moves what
/// computes them there (in block order). Emits a remark on the step whose
/// input cannot be and returns false, moving nothing.
static bool hoistStepInputs(ArrayRef<Operation *> steps) {
  Operation *head = steps.front();
  DenseSet<Operation *> chainOps(steps.begin(), steps.end());
  llvm::SetVector<Operation *> ops;
  for (auto [k, step] : llvm::enumerate(steps)) {
    switch (stepInputOps(step->getOperand(0), head, chainOps, ops)) {
    case StepInputSource::Movable:
      continue;
    case StepInputSource::FromChain:
      step->emitRemark() << "not rolled into a layer: the step input of step "
                         << k << " is computed from an earlier step's "
                                 "outputs (fed back, as a decoder does)";
      return false;
    case StepInputSource::NotMovable:
      step->emitRemark()
          << "not rolled into a layer: the step input of step " << k
          << " is computed by a subgraph or an op of unknown effects "
             "after the first step";
      return false;
    }
  }
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : sorted)
    op->moveBefore(head);
  return true;
}

/// `v` ([B, F]) with a leading unit axis: [1, B, F]. Where `v` is itself a
/// Squeeze of such a value (a state or step input the one-step layers of a
/// chain had), that value, with no new op.
static Value withUnitAxis(OpBuilder &b, Location loc,
                          od::ConstantBuilder &consts, Value v, int64_t &glue) {
  if (auto sq = v.getDefiningOp<od::SqueezeOp>()) {
    auto in = dyn_cast<RankedTensorType>(sq.getData().getType());
    auto vt = cast<RankedTensorType>(v.getType());
    if (in && in.getRank() == vt.getRank() + 1 && in.getDimSize(0) == 1 &&
        in.getShape().drop_front() == vt.getShape())
      return sq.getData();
  }
  ++glue;
  return od::createUnsqueeze(b, loc, consts, v, {0});
}

/// The step inputs `xs` ([B, I] each, all computed before `b`'s insertion
/// point) stacked along a new leading axis: [T, B, I] (withUnitAxis).
static Value stackStepInputs(OpBuilder &b, Location loc,
                             od::ConstantBuilder &consts, ArrayRef<Value> xs,
                             int64_t &glue) {
  SmallVector<Value> parts;
  SmallVector<int64_t> shape;
  for (Value x : xs) {
    Value part = withUnitAxis(b, loc, consts, x, glue);
    auto t = cast<RankedTensorType>(part.getType());
    if (shape.empty())
      shape.assign(t.getShape().begin(), t.getShape().end());
    for (int64_t d = 1; d < 3; ++d)
      if (shape[d] != t.getDimSize(d))
        shape[d] = ShapedType::kDynamic;
    parts.push_back(part);
  }
  shape[0] = (int64_t)xs.size();
  ++glue;
  return od::ConcatOp::create(
      b, loc,
      RankedTensorType::get(
          shape, cast<RankedTensorType>(parts[0].getType()).getElementType()),
      parts, 0);
}

/// Step inputs computed the same way at every step (an embedding of each
/// step's token, a projection of each step's frame, inside the loop),
/// computed for all steps at once: the stack of x_0 .. x_{T-1} as F(stack of
/// the leaves), where F is the steps' common computation and the leaves are
/// consecutive time slices of one tensor. Each op of F then runs once over
/// a leading step axis; a value every step reads alike (a weight) is read
/// as it was, broadcast from the right as before. Null where the steps'
/// computations differ, or use an op whose per-step application is not a
/// batch over a leading axis.
class StepBatcher {
public:
  StepBatcher(OpBuilder &b, Location loc, od::ConstantBuilder &consts,
              int64_t steps)
      : b(b), loc(loc), consts(consts), steps(steps) {}

  /// [T, ...] for T values of one per-step shape, or null.
  Value batch(ArrayRef<Value> vals) {
    auto r = visit(vals, 0);
    if (r && !r->shared)
      return r->value; // (eraseBypassed once it is used)
    // Nothing made is used.
    od::eraseDeadOps(created, consts.forgetter());
    created.clear();
    numMade = 0;
    return Value();
  }
  int64_t numMade = 0;
  /// Erases what was made and then bypassed (a Squeeze(Unsqueeze) folded),
  /// once the caller uses the result (before, it would look dead too).
  void eraseBypassed() { od::eraseDeadOps(created, consts.forgetter()); }

private:
  struct Batched {
    Value value;
    bool shared; // the same value at every step, read as it is
  };
  static constexpr int64_t kMaxOps = 64;
  std::optional<Batched> visit(ArrayRef<Value> vals, int depth);
  std::optional<Batched> slices(ArrayRef<Value> vals);
  std::optional<Batched> ops(ArrayRef<Value> vals, int depth);
  /// [T] + the per-step shape (dims that differ between steps dynamic).
  RankedTensorType stepType(ArrayRef<Value> vals) {
    auto t0 = dyn_cast<RankedTensorType>(vals[0].getType());
    if (!t0)
      return {};
    SmallVector<int64_t> shape = {steps};
    shape.append(t0.getShape().begin(), t0.getShape().end());
    for (Value v : vals) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() != t0.getRank() ||
          t.getElementType() != t0.getElementType())
        return {};
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.getDimSize(d) != shape[d + 1])
          shape[d + 1] = ShapedType::kDynamic;
    }
    return RankedTensorType::get(shape, t0.getElementType());
  }
  Value made(Value v) {
    ++numMade;
    if (Operation *op = v.getDefiningOp()) {
      op->removeAttr(od::attrs::kOutputNames);
      created.push_back(op);
    }
    return v;
  }
  Value constant(Value v) {
    created.push_back(v.getDefiningOp());
    return v;
  }

  OpBuilder &b;
  Location loc;
  od::ConstantBuilder &consts;
  int64_t steps;
  std::map<std::vector<void *>, std::optional<Batched>> memo;
  SmallVector<Operation *> created;
};

std::optional<StepBatcher::Batched>
StepBatcher::visit(ArrayRef<Value> vals, int depth) {
  if (llvm::all_equal(vals) ||
      llvm::all_of(vals, [](Value v) { return isa<NoneType>(v.getType()); }))
    return Batched{vals[0], true};
  // Constants of equal content (an exporter writes a shape constant per
  // step): one value every step reads alike.
  if (ElementsAttr c0 = od::getConstantAttr(vals[0]))
    if (llvm::all_of(vals, [&](Value v) {
          ElementsAttr c = od::getConstantAttr(v);
          return c && c.getType() == c0.getType() && c == c0;
        }))
      return Batched{vals[0], true};
  if (depth > 16 || numMade >= kMaxOps)
    return std::nullopt;
  std::vector<void *> key;
  for (Value v : vals)
    key.push_back(v.getAsOpaquePointer());
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  std::optional<Batched> r = slices(vals);
  if (!r)
    r = ops(vals, depth);
  memo[key] = r;
  return r;
}

/// Consecutive time slices of one tensor, in step order: that range of it,
/// its time axis first.
std::optional<StepBatcher::Batched>
StepBatcher::slices(ArrayRef<Value> vals) {
  SmallVector<StepSlice> ss;
  bool keptAxis = false;
  for (auto [k, v] : llvm::enumerate(vals)) {
    bool kept = false;
    auto s = getStepSlice(v);
    // Also an element of a tensor of any rank: Gather at a constant scalar
    // index (a token of a [T] or [B, T] sequence).
    auto g = v.getDefiningOp<od::GatherOp>();
    auto dt = g ? dyn_cast<RankedTensorType>(g.getData().getType())
                : RankedTensorType();
    auto it = g ? dyn_cast<RankedTensorType>(g.getIndices().getType())
                : RankedTensorType();
    auto idx = g ? od::getConstantInts(g.getIndices()) : std::nullopt;
    if (!s && dt && it && it.getRank() == 0 && idx && idx->size() == 1) {
      StepSlice e;
      e.seq = g.getData();
      e.axis = g.getAxis() < 0 ? g.getAxis() + dt.getRank() : g.getAxis();
      e.index = (*idx)[0];
      if (e.axis < 0 || e.axis >= dt.getRank())
        return std::nullopt;
      if (e.index < 0 && !dt.isDynamicDim(e.axis))
        e.index += dt.getDimSize(e.axis);
      s = e;
    }
    // Or one step kept with its axis (x[t:t+1]).
    auto sl = v.getDefiningOp<od::SliceOp>();
    auto slt = sl ? dyn_cast<RankedTensorType>(sl.getData().getType())
                  : RankedTensorType();
    for (int64_t a = 0; !s && slt && a < slt.getRank(); ++a)
      if (auto t = rnn::oneStepOfSlice(sl, a)) {
        StepSlice e;
        e.seq = sl.getData();
        e.axis = a;
        e.index = *t;
        s = e;
        kept = true;
      }
    if (!s || (k > 0 && kept != keptAxis))
      return std::nullopt;
    keptAxis = kept;
    ss.push_back(*s);
  }
  // Increasing indices, or decreasing ones (a loop over reversed(range(T))).
  int64_t dir = steps > 1 && ss[1].index < ss[0].index ? -1 : 1;
  for (int64_t k = 0; k < steps; ++k)
    if (ss[k].seq != ss[0].seq || ss[k].axis != ss[0].axis ||
        ss[k].index != ss[0].index + dir * k)
      return std::nullopt;
  Value seq = ss[0].seq;
  auto st = dyn_cast<RankedTensorType>(seq.getType());
  int64_t axis = ss[0].axis;
  int64_t lo = dir > 0 ? ss[0].index : ss[steps - 1].index;
  // The steps must lie inside the axis (a Gather past it fails when the
  // model runs, a Slice past it clamps): known statically.
  if (!st || lo < 0 || axis < 0 || axis >= st.getRank() ||
      st.isDynamicDim(axis) || lo + steps > st.getDimSize(axis))
    return std::nullopt;
  if (lo != 0 || st.getDimSize(axis) != steps)
    seq = made(od::createSliceAxis(b, loc, consts, seq, axis, lo, lo + steps));
  if (dir < 0) {
    // In step order: the range backwards.
    Value s = constant(consts.getI64(loc, "starts", {1}, {-1}));
    Value e = constant(consts.getI64(loc, "ends", {1}, {INT64_MIN}));
    Value a = constant(consts.getI64(loc, "axes", {1}, {axis}));
    Value st1 = constant(consts.getI64(loc, "steps", {1}, {-1}));
    seq = made(od::SliceOp::create(b, loc, seq.getType(), seq, s, e, a, st1,
                                   nullptr, nullptr, nullptr));
  }
  if (axis != 0) {
    SmallVector<int64_t> perm = {axis};
    for (int64_t d = 0; d < st.getRank(); ++d)
      if (d != axis)
        perm.push_back(d);
    seq = made(od::createTranspose(b, loc, seq, perm));
  }
  if (keptAxis)
    seq = made(od::createUnsqueeze(b, loc, consts, seq, {axis + 1}));
  return Batched{seq, false};
}

/// The ONNX operator types (default domain) computed element by element
/// from one input, kept as `onnx.node`.
static bool isGenericUnary(Operation *op) {
  auto node = dyn_cast<od::NodeOp>(op);
  if (!node || !(node.getDomain().empty() || node.getDomain() == "ai.onnx") ||
      node.getNumRegions() ||
      node->getNumOperands() != 1 || node->getNumResults() != 1)
    return false;
  return llvm::is_contained(
      {"Abs", "Ceil", "Celu", "Cos", "Elu", "Erf", "Exp", "Floor", "Gelu",
       "HardSwish", "LeakyRelu", "Log", "Mish", "Reciprocal", "Round", "Selu",
       "Sign", "Sin", "Softplus", "Softsign", "Sqrt", "ThresholdedRelu"},
      node.getOpType());
}

std::optional<StepBatcher::Batched>
StepBatcher::ops(ArrayRef<Value> vals, int depth) {
  Operation *op0 = vals[0].getDefiningOp();
  if (!op0 || op0->getNumResults() != 1 || op0->getNumRegions() ||
      op0->getNumOperands() == 0)
    return std::nullopt;
  // The same operator with the same attributes at every step.
  for (Value v : vals) {
    Operation *op = v.getDefiningOp();
    if (!op || op->getName() != op0->getName() ||
        op->getNumOperands() != op0->getNumOperands() ||
        op->getPropertiesAsAttribute() != op0->getPropertiesAsAttribute())
      return std::nullopt;
  }
  RankedTensorType type = stepType(vals);
  if (!type)
    return std::nullopt;
  int64_t rank = type.getRank() - 1; // per step
  SmallVector<Batched> in;
  for (unsigned i = 0; i < op0->getNumOperands(); ++i) {
    SmallVector<Value> column;
    for (Value v : vals)
      column.push_back(v.getDefiningOp()->getOperand(i));
    auto r = visit(column, depth + 1);
    if (!r)
      return std::nullopt;
    in.push_back(*r);
  }
  // The same pure op of the same values at every step (a weight transposed
  // or cast again at each step): one value every step reads alike.
  if (isPure(op0) && llvm::all_of(in, [](const Batched &x) { return x.shared; }))
    return Batched{vals[0], true};
  auto perStepRank = [](const Batched &x) {
    auto t = dyn_cast<RankedTensorType>(x.value.getType());
    return t ? t.getRank() - (x.shared ? 0 : 1) : -1;
  };
  // A copy of step 0's op over the batched operands.
  auto same = [&]() {
    Operation *c = b.clone(*op0);
    for (auto [i, x] : llvm::enumerate(in))
      c->setOperand(i, x.value);
    c->getResult(0).setType(type);
    return Batched{made(c->getResult(0)), false};
  };
  // Elementwise on one input (its other inputs, if any, shared).
  if (op0->hasTrait<od::traits::ElementwiseUnary>() || isGenericUnary(op0) ||
      isa<od::IdentityOp, od::CastOp, od::ClipOp>(op0)) {
    if (in[0].shared || perStepRank(in[0]) != rank)
      return std::nullopt;
    for (unsigned i = 1; i < in.size(); ++i)
      if (!in[i].shared)
        return std::nullopt;
    return same();
  }
  // Elementwise after broadcasting: every per-step input that differs has
  // the result's rank (then a leading step axis lines up); shared inputs
  // broadcast from the right as before.
  if (op0->hasTrait<od::traits::ElementwiseBroadcast>()) {
    for (const Batched &x : in)
      if (!x.shared && perStepRank(x) != rank)
        return std::nullopt;
    return same();
  }
  if (auto mm = dyn_cast<od::MatMulOp>(op0)) {
    // x_t [.., K] times a shared matrix [K, N].
    if (in[0].shared || !in[1].shared || perStepRank(in[1]) != 2 ||
        perStepRank(in[0]) < 1)
      return std::nullopt;
    return same();
  }
  if (auto gemm = dyn_cast<od::GemmOp>(op0)) {
    // alpha * x_t B' + beta * C, x_t [M, K]: MatMul over [T, M, K] by B'
    // (a shared constant), plus the shared C.
    if (in[0].shared || !in[1].shared || !in[2].shared || gemm.getTransA())
      return std::nullopt;
    Value B = in[1].value;
    auto bt = dyn_cast<RankedTensorType>(B.getType());
    if (!bt || bt.getRank() != 2)
      return std::nullopt;
    if (gemm.getTransB()) {
      auto w = od::getConstantF32(B);
      if (!w)
        return std::nullopt;
      int64_t r = w->shape[0], c = w->shape[1];
      std::vector<float> t(r * c);
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j)
          t[j * r + i] = w->values[i * c + j];
      B = constant(consts.getF32(loc, "batched_gemm_B", {c, r}, t));
    }
    Value y = made(od::MatMulOp::create(b, loc, type, in[0].value, B));
    auto scalar = [&](float f) {
      return constant(consts.getF32(loc, "batched_gemm_scale", {}, {f}));
    };
    if (gemm.getAlpha().convertToFloat() != 1.0f)
      y = made(od::MulOp::create(b, loc, type, y,
                                 scalar(gemm.getAlpha().convertToFloat())));
    Value C = in[2].value;
    if (!isa<NoneType>(C.getType())) {
      if (gemm.getBeta().convertToFloat() != 1.0f)
        C = made(od::MulOp::create(b, loc, C.getType(), C,
                                   scalar(gemm.getBeta().convertToFloat())));
      y = made(od::AddOp::create(b, loc, type, y, C));
    }
    return Batched{y, false};
  }
  if (auto g = dyn_cast<od::GatherOp>(op0)) {
    // A shared table read at each step's indices (an embedding), axis 0.
    int64_t dataRank = perStepRank(in[0]);
    int64_t axis = g.getAxis() < 0 ? g.getAxis() + dataRank : g.getAxis();
    if (!in[0].shared || in[1].shared || axis != 0)
      return std::nullopt;
    return same();
  }
  if (auto r = dyn_cast<od::ReshapeOp>(op0)) {
    auto shape = od::getConstantInts(in[1].value);
    auto it = dyn_cast<RankedTensorType>(vals[0].getDefiningOp()->getOperand(0).getType());
    if (in[0].shared || !in[1].shared || !shape || !it)
      return std::nullopt;
    SmallVector<int64_t> to = {steps};
    for (auto [d, e] : llvm::enumerate(*shape)) {
      if (e == 0 && !r.getAllowzero()) {
        // 0 copies the input's dimension at that index.
        if ((int64_t)d >= it.getRank() || it.isDynamicDim(d))
          return std::nullopt;
        e = it.getDimSize(d);
      }
      to.push_back(e);
    }
    Value s = constant(
        consts.getI64(loc, "batched_shape", {(int64_t)to.size()}, to));
    return Batched{made(od::ReshapeOp::create(b, loc, type, in[0].value, s,
                                              r.getAllowzeroAttr())),
                   false};
  }
  if (auto sq = dyn_cast<od::SqueezeOp>(op0)) {
    auto axis = rnn::squeezeAxis(sq);
    if (in[0].shared || !axis)
      return std::nullopt;
    // Squeeze(Unsqueeze(v)) of the same axis (a one-step layer's Y read
    // back as a step input): v.
    if (auto un = in[0].value.getDefiningOp<od::UnsqueezeOp>();
        un && unsqueezeAxis(un) == *axis + 1 &&
        llvm::is_contained(created, un.getOperation()))
      return Batched{un.getData(), false};
    return Batched{made(od::createSqueeze(b, loc, consts, in[0].value,
                                          {*axis + 1})),
                   false};
  }
  if (auto un = dyn_cast<od::UnsqueezeOp>(op0)) {
    auto axis = unsqueezeAxis(un);
    if (in[0].shared || !axis)
      return std::nullopt;
    return Batched{made(od::createUnsqueeze(b, loc, consts, in[0].value,
                                            {*axis + 1})),
                   false};
  }
  if (auto cat = dyn_cast<od::ConcatOp>(op0)) {
    // Parts joined per step (a token's embedding and a vector every step
    // reads, such as a condition or a context): the parts over all steps,
    // the shared ones repeated T times (Expand to [T, part shape]).
    int64_t axis = cat.getAxis() < 0 ? cat.getAxis() + rank : cat.getAxis();
    if (axis < 0 || axis >= rank ||
        llvm::all_of(in, [](const Batched &x) { return x.shared; }))
      return std::nullopt;
    SmallVector<Value> parts;
    for (auto [i, x] : llvm::enumerate(in)) {
      if (perStepRank(x) != rank)
        return std::nullopt;
      if (!x.shared) {
        parts.push_back(x.value);
        continue;
      }
      auto pt = cast<RankedTensorType>(x.value.getType());
      SmallVector<int64_t> shape = {steps};
      shape.append(pt.getShape().begin(), pt.getShape().end());
      SmallVector<int64_t> to(rank + 1, 1);
      to[0] = steps;
      Value s = constant(consts.getI64(loc, "batched_expand_shape",
                                       {rank + 1}, to));
      parts.push_back(made(od::ExpandOp::create(
          b, loc, RankedTensorType::get(shape, pt.getElementType()), x.value,
          s)));
    }
    return Batched{made(od::ConcatOp::create(b, loc, type, parts, axis + 1)),
                   false};
  }
  if (auto tr = dyn_cast<od::TransposeOp>(op0)) {
    if (in[0].shared)
      return std::nullopt;
    auto perm = od::TransposeOp::getPermutation(od::TransposeOp::Adaptor(tr),
                                                rank);
    if ((int64_t)perm.size() != rank)
      return std::nullopt;
    SmallVector<int64_t> p = {0};
    for (int64_t d : perm)
      p.push_back(d + 1);
    return Batched{made(od::createTranspose(b, loc, in[0].value, p)), false};
  }
  return std::nullopt;
}

void Roller::rollChain(SmallVector<Cell> chain) {
  // Step inputs: consecutive slices of one tensor, forward or backward;
  // else computed per step (an embedding or a projection inside the loop)
  // and stacked, where none of them depends on the chain.
  SmallVector<StepSlice> slices;
  bool sliced = true;
  for (Cell cell : chain) {
    auto s = getStepSlice(cell.getX());
    if (!s) {
      sliced = false;
      break;
    }
    slices.push_back(*s);
  }
  int64_t n = chain.size();
  int dirStep = 1;
  if (sliced && n > 1) {
    dirStep = slices[1].index > slices[0].index ? 1 : -1;
    for (int64_t k = 0; k < n; ++k)
      if (slices[k].seq != slices[0].seq || slices[k].axis != slices[0].axis ||
          slices[k].index != slices[0].index + dirStep * k)
        sliced = false;
  }
  bool stacked = false;
  if (!sliced && n > 1) {
    slices.clear();
    dirStep = 1;
    SmallVector<Operation *> steps(chain.begin(), chain.end());
    if (!hoistStepInputs(steps)) {
      for (Cell cell : chain)
        rollChain({cell});
      return;
    }
    stacked = true;
  }
  // An intermediate cell state read outside the chain cannot be expressed.
  for (int64_t k = 0; k + 1 < n && chain[k].isLSTM(); ++k)
    for (OpOperand &use : chain[k].getCOut().getUses())
      if (use.getOwner() != chain[k + 1].getOperation() ||
          use.getOperandNumber() != 2) {
        chain[k].emitRemark()
            << "not rolled into a layer: the cell state of step " << k
            << " is also read by '" << use.getOwner()->getName() << "'";
        // Roll the two halves separately.
        SmallVector<Cell> head(chain.begin(), chain.begin() + k + 1);
        SmallVector<Cell> tail(chain.begin() + k + 1, chain.end());
        rollChain(head);
        rollChain(tail);
        return;
      }

  Cell first = chain.front(), last = chain.back();
  SmallVector<Location> locs;
  int64_t srcNodes = 0, srcGemms = 0;
  for (Cell cell : chain) {
    locs.push_back(cell.getLoc());
    if (auto a = cell->getAttrOfType<IntegerAttr>("rnn.source_nodes"))
      srcNodes += a.getInt();
    if (auto a = cell->getAttrOfType<IntegerAttr>("rnn.source_gemms"))
      srcGemms += a.getInt();
  }
  Location loc = FusedLoc::get(func.getContext(), locs);
  // Everything the layer reads is defined before its first step, and every
  // read of its outputs comes after it: build the layer there.
  OpBuilder b(first);
  int64_t hidden = cast<RankedTensorType>(first.getR().getType()).getDimSize(1);
  int64_t batch = ShapedType::kDynamic;
  for (Value v : {first.getH(), first.getC(), first.getX(), last.getHOut()})
    if (v && !cast<RankedTensorType>(v.getType()).isDynamicDim(0)) {
      batch = cast<RankedTensorType>(v.getType()).getDimSize(0);
      break;
    }
  Type f = cast<RankedTensorType>(first.getH().getType()).getElementType();

  // X: [T, B, I], time-major.
  Value X;
  std::optional<StepBatcher> batcher;
  int64_t lo = 0;
  int64_t glue = 0;
  if (sliced) {
    lo = dirStep > 0 ? slices.front().index : slices.back().index;
    X = slices.front().seq;
    auto st = cast<RankedTensorType>(X.getType());
    int64_t axis = slices.front().axis;
    if (st.isDynamicDim(axis) || lo != 0 || st.getDimSize(axis) != n) {
      X = od::createSliceAxis(b, loc, consts, X, axis, lo, lo + n);
      ++glue;
    }
    if (axis == 1) {
      X = od::createTranspose(b, loc, X, {1, 0, 2});
      ++glue;
    }
  } else if (stacked) {
    SmallVector<Value> xs;
    for (Cell cell : chain)
      xs.push_back(cell.getX());
    batcher.emplace(b, loc, consts, n);
    X = batcher->batch(xs);
    glue += batcher->numMade;
    if (!X)
      X = stackStepInputs(b, loc, consts, xs, glue);
  } else {
    X = od::createUnsqueeze(b, loc, consts, first.getX(), {0});
    ++glue;
  }
  // Zero initial states are the layer's default: not passed.
  Value h0 = isZeroConstant(first.getH())
                 ? Value()
                 : withUnitAxis(b, loc, consts, first.getH(), glue);
  Value c0 = !first.isLSTM() || isZeroConstant(first.getC())
                 ? Value()
                 : withUnitAxis(b, loc, consts, first.getC(), glue);
  // The head may have don't-care weights (linkable): take the next step's.
  Cell ref = n > 1 ? chain[1] : first;
  std::string kindName = rnn::stringifyCellKind(first.kind()).str();
  Value W = withLeadingOne(loc, ref.getW(), kindName + "_W");
  Value R = withLeadingOne(loc, ref.getR(), kindName + "_R");
  Value Bw = withLeadingOne(loc, ref.getBw(), kindName + "_Bw");
  Value Br = withLeadingOne(loc, ref.getBr(), kindName + "_Br");
  Value P = ref.getPeephole()
                ? withLeadingOne(loc, ref.getPeephole(), kindName + "_P")
                : Value();
  auto yType = RankedTensorType::get({n, 1, batch, hidden}, f);
  auto sType = RankedTensorType::get({1, batch, hidden}, f);
  rnn::CellKind kind = first.kind();
  SmallVector<Type> types = {yType, sType};
  if (kind == rnn::CellKind::LSTM)
    types.push_back(sType);
  auto seq = rnn::SequenceOp::create(
      b, loc, types, rnn::CellKindAttr::get(b.getContext(), kind),
      rnn::DirectionAttr::get(b.getContext(), dirStep > 0
                                                  ? rnn::Direction::Forward
                                                  : rnn::Direction::Reverse),
      b.getI64IntegerAttr(hidden),
      ref.linearBeforeReset() ? b.getUnitAttr() : nullptr, X, W, R, Bw, Br,
      h0, c0, Value(), P, ref.getActivationsAttr(),
      ref.getActivationAlphaAttr(), ref.getActivationBetaAttr(),
      ref.getClipAttr(), ref.inputForget() ? b.getUnitAttr() : nullptr);
  if (batcher)
    batcher->eraseBypassed();
  if (Attribute p = ref->getAttr(rnn::kPrecisionAttr))
    seq->setAttr(rnn::kPrecisionAttr, p);

  // Outputs. Y as [T, B, H] in time order.
  Value yTBH;
  auto getY = [&]() {
    if (!yTBH) {
      yTBH = od::createSqueeze(b, loc, consts, seq.getY(), {1});
      ++glue;
    }
    return yTBH;
  };
  // Time index of step k within X.
  auto timeOf = [&](int64_t k) { return dirStep > 0 ? k : n - 1 - k; };

  // A Concat stacking Unsqueeze(h_k) for every step in time order. (An
  // Unsqueeze may have other readers too: torch.export's RNN reads the last
  // one for h_n. They keep it, reading Y's row.)
  SmallVector<std::pair<Operation *, od::ConcatOp>> catUses;
  for (Operation *user : chain[0].getHOut().getUsers())
    if (auto un = dyn_cast<od::UnsqueezeOp>(user))
      for (Operation *unUser : un->getUsers())
        if (auto cat = dyn_cast<od::ConcatOp>(unUser))
          catUses.push_back({un, cat});
  SmallVector<Operation *> stacks;
  for (auto [unOp, cat] : catUses) {
    auto un = cast<od::UnsqueezeOp>(unOp);
    if (llvm::is_contained(stacks, cat.getOperation()) ||
        cat.getInputs().size() != (size_t)n)
      continue;
    std::optional<int64_t> axis = unsqueezeAxis(un);
    int64_t catAxis = cat.getAxis() < 0 ? cat.getAxis() + 3 : cat.getAxis();
    if (!axis || (*axis != 0 && *axis != 1) || catAxis != *axis)
      continue;
    // In time order or in processing order?
    bool timeOrder = true, procOrder = true;
    for (int64_t j = 0; j < n; ++j) {
      auto u = cat.getInputs()[j].getDefiningOp<od::UnsqueezeOp>();
      if (!u || unsqueezeAxis(u) != axis) {
        timeOrder = procOrder = false;
        break;
      }
      int64_t kTime = dirStep > 0 ? j : n - 1 - j; // step whose time is j
      if (u.getData() != chain[kTime].getHOut())
        timeOrder = false;
      if (u.getData() != chain[j].getHOut())
        procOrder = false;
    }
    if (!timeOrder && !procOrder)
      continue;
    // The stack's declared type must agree with [T, B, H] (or [B, T, H]).
    auto catType = dyn_cast<RankedTensorType>(cat.getType());
    SmallVector<int64_t> want = {n, batch, hidden};
    if (*axis == 1)
      std::swap(want[0], want[1]);
    if (!catType ||
        failed(verifyCompatibleShape(catType.getShape(), ArrayRef<int64_t>(want))))
      continue;
    OpBuilder cb(cat);
    Value stacked = getY();
    if (!timeOrder) {
      // Processing order of a reverse layer: time reversed.
      Value s = consts.getI64(loc, "starts", {1}, {-1});
      Value e = consts.getI64(loc, "ends", {1}, {INT64_MIN});
      Value a = consts.getI64(loc, "axes", {1}, {0});
      Value st = consts.getI64(loc, "steps", {1}, {-1});
      stacked = od::SliceOp::create(cb, loc, stacked.getType(), stacked, s, e,
                                    a, st, nullptr, nullptr, nullptr);
      ++glue;
    }
    if (*axis == 1) {
      stacked = od::createTranspose(cb, loc, stacked, {1, 0, 2});
      ++glue;
    }
    cat.getResult().replaceAllUsesWith(stacked);
    stacks.push_back(cat);
  }
  // Other reads of intermediate hidden states read Y.
  for (int64_t k = 0; k < n; ++k) {
    Value hk = chain[k].getHOut();
    if (k == n - 1)
      break;
    for (OpOperand &use : llvm::make_early_inc_range(hk.getUses())) {
      Operation *owner = use.getOwner();
      if (owner == chain[k + 1].getOperation() && use.getOperandNumber() == 1)
        continue;
      if (isa<od::UnsqueezeOp>(owner) && owner->hasOneUse() &&
          llvm::is_contained(stacks, *owner->getUsers().begin()))
        continue;
      OpBuilder ub(owner);
      Value g = od::createGatherIndex(ub, loc, consts, getY(), 0, timeOf(k));
      use.set(g);
    }
  }
  Value hn = od::createSqueeze(b, loc, consts, seq.getHN(), {0});
  Value cn = first.isLSTM() && !last.getCOut().use_empty()
                 ? od::createSqueeze(b, loc, consts, seq.getCN(), {0})
                 : Value();
  glue += cn ? 2 : 1;
  // The last hidden state: as h_n, except as the step input of another
  // layer's cell (directly, or only reshaped on the way: a chain of one-step
  // layers), which reads it as the last row of Y (a step slice, so that
  // layer rolls too).
  auto feedsStepInput = [](OpOperand &use) {
    Operation *op = use.getOwner();
    unsigned no = use.getOperandNumber();
    for (int depth = 0; depth < 4; ++depth) {
      if (Cell::dyn(op))
        return no == 0;
      if (!keepsElementOrder(op) || no != 0 || op->getNumResults() != 1 ||
          !op->getResult(0).hasOneUse())
        return false;
      OpOperand &next = *op->getResult(0).getUses().begin();
      op = next.getOwner();
      no = next.getOperandNumber();
    }
    return false;
  };
  for (OpOperand &use : llvm::make_early_inc_range(last.getHOut().getUses())) {
    if (feedsStepInput(use)) {
      OpBuilder ub(use.getOwner());
      use.set(od::createGatherIndex(ub, loc, consts, getY(), 0, timeOf(n - 1)));
    }
  }
  last.getHOut().replaceAllUsesWith(hn);
  if (cn)
    last.getCOut().replaceAllUsesWith(cn);
  // Where the final states get their unit axis back (the one-step layers a
  // chain was made of returned them so), they are h_n and c_n themselves.
  for (auto [squeezed, state] :
       {std::pair(hn, seq.getHN()), std::pair(cn, seq.getCN())}) {
    if (!squeezed)
      continue;
    SmallVector<Operation *> gone;
    for (Operation *user : squeezed.getUsers())
      if (auto un = dyn_cast<od::UnsqueezeOp>(user);
          un && unsqueezeAxis(un) == 0 && un.getType() == state.getType() &&
          // (not one of a replaced stack's, dead)
          !llvm::all_of(un->getUsers(), [&](Operation *u) {
            return llvm::is_contained(stacks, u);
          })) {
        un.getResult().replaceAllUsesWith(state);
        gone.push_back(un);
        --glue;
      }
    if (gone.empty())
      continue;
    if (llvm::all_of(squeezed.getUsers(), [&](Operation *u) {
          return llvm::is_contained(gone, u);
        }))
      --glue; // the Squeeze goes too
    gone.push_back(squeezed.getDefiningOp());
    od::eraseDeadOps(gone, consts.forgetter());
  }
  // The layer also replaces the step slicing and the output stacking: they
  // join its location (so a report can name every node it replaced).
  SmallVector<Location> replaced = {seq.getLoc()};
  for (auto &sl : slices) {
    srcNodes += sl.ops.size();
    for (Operation *op : sl.ops)
      replaced.push_back(op->getLoc());
  }
  srcNodes += stacks.size() * (n + 1);
  for (Operation *cat : stacks) {
    replaced.push_back(cat->getLoc());
    for (Value in : cat->getOperands())
      if (Operation *un = in.getDefiningOp())
        replaced.push_back(un->getLoc());
  }
  seq->setLoc(FusedLoc::get(func.getContext(), replaced));
  seq->setAttr("rnn.source_nodes", b.getI64IntegerAttr(srcNodes));
  seq->setAttr("rnn.source_gemms", b.getI64IntegerAttr(srcGemms));

  // Erase the chain and what only it used.
  SmallVector<Operation *> dead(stacks.begin(), stacks.end());
  for (Cell cell : llvm::reverse(chain))
    dead.push_back(cell);
  for (auto &s : slices)
    dead.append(s.ops.begin(), s.ops.end());
  if (stacked)
    for (Cell cell : chain)
      if (Operation *def = cell.getX().getDefiningOp())
        dead.push_back(def);
  // (A generic activation that computed a step's input, movable, goes too.)
  od::eraseDeadOps(dead, consts.forgetter(), [](Operation *op) {
    return isa<od::NodeOp>(op) && isMovable(op);
  });
  seq.emitRemark() << "fused " << rnn::stringifyCellKind(kind).upper()
                   << " layer: " << n << " steps, "
                   << (dirStep > 0 ? "forward" : "reverse") << ", hidden "
                   << hidden << ": " << srcNodes << " nodes -> 1 layer + "
                   << glue << " glue; " << srcGemms
                   << " GEMMs -> 1 input GEMM + " << n << " recurrent";
  ++numLayers;
}

//===----------------------------------------------------------------------===//
// Chains of one-step layers
//===----------------------------------------------------------------------===//

/// The part of a Concat that a Slice of it cuts out exactly: one axis, the
/// Concat's, from the part's first row to its last (steps 1, static sizes).
static Value sliceOfConcatPart(od::SliceOp sl) {
  auto cat = sl.getData().getDefiningOp<od::ConcatOp>();
  auto ct = cat ? dyn_cast<RankedTensorType>(cat.getType()) : RankedTensorType();
  if (!ct || sl.getStartsAttr() ||
      (!isa<NoneType>(sl.getSteps().getType()) &&
       od::getConstantInts(sl.getSteps()) != SmallVector<int64_t>{1}))
    return {};
  auto starts = od::getConstantInts(sl.getStarts());
  auto ends = od::getConstantInts(sl.getEnds());
  std::optional<SmallVector<int64_t>> axes =
      isa<NoneType>(sl.getAxes().getType())
          ? std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{0})
          : od::getConstantInts(sl.getAxes());
  if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 ||
      axes->size() != 1)
    return {};
  int64_t rank = ct.getRank();
  int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
  int64_t catAxis = cat.getAxis() < 0 ? cat.getAxis() + rank : cat.getAxis();
  if (axis != catAxis || ct.isDynamicDim(axis))
    return {};
  int64_t total = ct.getDimSize(axis);
  int64_t lo = (*starts)[0] < 0 ? (*starts)[0] + total : (*starts)[0];
  int64_t hi = std::min((*ends)[0] < 0 ? (*ends)[0] + total : (*ends)[0], total);
  int64_t offset = 0;
  for (Value part : cat.getInputs()) {
    auto pt = dyn_cast<RankedTensorType>(part.getType());
    if (!pt || pt.getRank() != rank || pt.isDynamicDim(axis))
      return {};
    int64_t size = pt.getDimSize(axis);
    if (offset == lo && offset + size == hi)
      return part;
    offset += size;
  }
  return {};
}

/// The part of a Concat that output `r` of a Split of it is exactly (the
/// same axis, the same static sizes): ONNX Runtime's optimizer writes the
/// Slices that cut a multi-layer state apart as one Split.
static Value splitOfConcatPart(od::SplitOp sp, OpResult r) {
  auto cat = sp.getInput().getDefiningOp<od::ConcatOp>();
  auto ct = cat ? dyn_cast<RankedTensorType>(cat.getType()) : RankedTensorType();
  if (!ct)
    return {};
  int64_t rank = ct.getRank();
  int64_t axis = sp.getAxis() < 0 ? sp.getAxis() + rank : sp.getAxis();
  int64_t catAxis = cat.getAxis() < 0 ? cat.getAxis() + rank : cat.getAxis();
  if (axis != catAxis || axis < 0 || axis >= rank)
    return {};
  // Where output r starts, from the outputs' static sizes.
  int64_t lo = 0, size = -1;
  for (OpResult o : sp->getResults()) {
    auto t = dyn_cast<RankedTensorType>(o.getType());
    if (!t || t.getRank() != rank || t.isDynamicDim(axis))
      return {};
    if (o == r) {
      size = t.getDimSize(axis);
      break;
    }
    lo += t.getDimSize(axis);
  }
  int64_t offset = 0;
  for (Value part : cat.getInputs()) {
    auto pt = dyn_cast<RankedTensorType>(part.getType());
    if (!pt || pt.getRank() != rank || pt.isDynamicDim(axis))
      return {};
    if (offset == lo && pt.getDimSize(axis) == size &&
        pt == cast<RankedTensorType>(r.getType()))
      return part;
    offset += pt.getDimSize(axis);
  }
  return {};
}

/// A value's elements in the same order, only its shape different: through
/// Identity, a Reshape with equal static shapes, a Slice over unit axes that
/// keeps every element, a Slice that cuts one part out of a Concat, and a
/// Transpose of two transposes undoing each other. (How exporters pass a
/// layer's h_n to the next call's initial_h.)
static bool keepsElementOrder(Operation *op);

static Value skipSameState(Value v) {
  for (int depth = 0; depth < 8; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return v;
    auto in = def->getNumOperands()
                  ? dyn_cast<RankedTensorType>(def->getOperand(0).getType())
                  : RankedTensorType();
    auto out = dyn_cast<RankedTensorType>(def->getResult(0).getType());
    bool same = in && out && in.hasStaticShape() && in == out;
    if (isa<od::IdentityOp>(def)) {
      v = def->getOperand(0);
    } else if (auto r = dyn_cast<od::ReshapeOp>(def); r && same) {
      v = r.getData();
    } else if (auto sl = dyn_cast<od::SliceOp>(def);
               sl && !same && sliceOfConcatPart(sl)) {
      // A multi-layer state [L, B, H] (Concat of the layers' h_n) cut back
      // into one layer's [1, B, H].
      v = sliceOfConcatPart(sl);
    } else if (auto sp = dyn_cast<od::SplitOp>(def);
               sp && splitOfConcatPart(sp, cast<OpResult>(v))) {
      v = splitOfConcatPart(sp, cast<OpResult>(v));
    } else if (auto sl = dyn_cast<od::SliceOp>(def); sl && same) {
      // Every axis the Slice names has size 1: it keeps everything.
      auto starts = od::getConstantInts(sl.getStarts());
      std::optional<SmallVector<int64_t>> axes;
      if (isa<NoneType>(sl.getAxes().getType()) && starts)
        axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
      else
        axes = od::getConstantInts(sl.getAxes());
      if (!axes || !starts)
        return v;
      for (int64_t a : *axes) {
        if (a < 0)
          a += in.getRank();
        if (a < 0 || a >= in.getRank() || in.getDimSize(a) != 1)
          return v;
      }
      v = sl.getData();
    } else if (auto t2 = dyn_cast<od::TransposeOp>(def)) {
      auto t1 = t2.getData().getDefiningOp<od::TransposeOp>();
      if (!t1 || !in)
        return v;
      int64_t rank = in.getRank();
      auto p2 = od::TransposeOp::getPermutation(od::TransposeOp::Adaptor(t2),
                                                rank);
      auto inner = dyn_cast<RankedTensorType>(t1.getData().getType());
      if (!inner || inner.getRank() != rank)
        return v;
      auto p1 = od::TransposeOp::getPermutation(od::TransposeOp::Adaptor(t1),
                                                rank);
      if ((int64_t)p1.size() != rank || (int64_t)p2.size() != rank)
        return v;
      for (int64_t i = 0; i < rank; ++i)
        if (p1[p2[i]] != i)
          return v;
      v = t1.getData();
    } else if (keepsElementOrder(def) && out && out.hasStaticShape()) {
      // Shape-only ops that come back to the shape they started from
      // (Unsqueeze(Squeeze(h_n)), as a scripted loop's body writes it).
      Value w = def->getOperand(0);
      for (int d = 0; d < 4 && w.getType() != out; ++d) {
        Operation *wd = w.getDefiningOp();
        if (!wd || !keepsElementOrder(wd) || wd->getNumOperands() == 0)
          break;
        w = wd->getOperand(0);
      }
      if (w.getType() != out)
        return v;
      v = w;
    } else {
      return v;
    }
  }
  return v;
}

/// `op` keeps the elements of its first operand in order and only changes
/// the shape: Identity, Reshape, Squeeze, Unsqueeze, Flatten, and a
/// Transpose that keeps the order of the axes longer than 1.
static bool keepsElementOrder(Operation *op) {
  if (isa<od::IdentityOp, od::ReshapeOp, od::SqueezeOp, od::UnsqueezeOp>(op))
    return true;
  if (auto node = dyn_cast<od::NodeOp>(op))
    return node.getOpType() == "Flatten" &&
           (node.getDomain().empty() || node.getDomain() == "ai.onnx");
  auto tr = dyn_cast<od::TransposeOp>(op);
  auto in = tr ? dyn_cast<RankedTensorType>(tr.getData().getType())
               : RankedTensorType();
  if (!in)
    return false;
  auto perm = od::TransposeOp::getPermutation(od::TransposeOp::Adaptor(tr),
                                              in.getRank());
  if ((int64_t)perm.size() != in.getRank())
    return false;
  int64_t last = -1;
  for (int64_t p : perm) {
    if (in.getDimSize(p) == 1)
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

/// The largest zero initial state made as a constant (elements).
static constexpr int64_t kMaxZeroState = int64_t(1) << 24;

/// A layer of one step that a chain of them may be made of: static T = 1,
/// one direction, no sequence_lens, constant weights.
static bool isOneStepLayer(rnn::SequenceOp seq) {
  auto xt = dyn_cast<RankedTensorType>(seq.getX().getType());
  auto wt = dyn_cast<RankedTensorType>(seq.getW().getType());
  return xt && xt.getRank() == 3 && xt.getDimSize(0) == 1 && wt &&
         wt.getRank() == 3 && wt.getDimSize(0) == 1 &&
         seq.getDirection() != rnn::Direction::Bidirectional &&
         !seq.getSequenceLens() && od::getConstantAttr(seq.getW()) &&
         od::getConstantAttr(seq.getR()) && od::getConstantAttr(seq.getBw()) &&
         od::getConstantAttr(seq.getBr()) &&
         (!seq.getPeephole() || od::getConstantAttr(seq.getPeephole()));
}

/// The same layer: kind, attributes and weights (by value or content).
static bool sameLayer(rnn::SequenceOp a, rnn::SequenceOp b) {
  if (a.getCell() != b.getCell() ||
      a.getLinearBeforeReset() != b.getLinearBeforeReset() ||
      a.getHiddenSize() != b.getHiddenSize() ||
      a.getActivationsAttr() != b.getActivationsAttr() ||
      a.getActivationAlphaAttr() != b.getActivationAlphaAttr() ||
      a.getActivationBetaAttr() != b.getActivationBetaAttr() ||
      a.getClipAttr() != b.getClipAttr() ||
      a.getInputForget() != b.getInputForget() ||
      a->getAttr(rnn::kPrecisionAttr) != b->getAttr(rnn::kPrecisionAttr) ||
      !a.getPeephole() != !b.getPeephole())
    return false;
  auto equal = [](Value x, Value y) {
    ElementsAttr cx = od::getConstantAttr(x);
    if (x == y || (cx && cx == od::getConstantAttr(y)))
      return true;
    auto tx = od::getConstantF32(x), ty = od::getConstantF32(y);
    return tx && ty && tx->shape == ty->shape && tx->values == ty->values;
  };
  return equal(a.getW(), b.getW()) && equal(a.getR(), b.getR()) &&
         equal(a.getBw(), b.getBw()) && equal(a.getBr(), b.getBr()) &&
         (!a.getPeephole() || equal(a.getPeephole(), b.getPeephole()));
}

/// A loop calling a one-step layer per step (PyTorch's nn.GRU/nn.LSTM called
/// on one token at a time, the state passed from each call to the next:
/// the encoder of PyTorch's seq2seq tutorial) exports as a chain of one-step
/// ONNX layers. Where the chain's layers are the same layer and no step's
/// input depends on the chain, its steps become cells, which roll into one
/// layer like any chain.
void Roller::demoteOneStepChains() {
  SmallVector<rnn::SequenceOp> seqs;
  func.walk([&](rnn::SequenceOp seq) {
    if (isOneStepLayer(seq))
      seqs.push_back(seq);
  });
  // next[a] = the layer whose initial state is a's final state.
  DenseMap<Operation *, rnn::SequenceOp> next;
  DenseSet<Operation *> hasPrev;
  DenseMap<Value, rnn::SequenceOp> byHN;
  for (rnn::SequenceOp seq : seqs)
    byHN[seq.getHN()] = seq;
  for (rnn::SequenceOp b : seqs) {
    if (!b.getH0())
      continue;
    auto it = byHN.find(skipSameState(b.getH0()));
    if (it == byHN.end())
      continue;
    rnn::SequenceOp a = it->second;
    bool lstm = a.getCell() == rnn::CellKind::LSTM;
    if (a->getBlock() != b->getBlock() || next.count(a) ||
        (lstm && (!b.getC0() || skipSameState(b.getC0()) != a.getCN())) ||
        !sameLayer(a, b))
      continue;
    next[a] = b;
    hasPrev.insert(b);
  }
  for (rnn::SequenceOp head : seqs) {
    if (hasPrev.contains(head) || !next.count(head))
      continue;
    SmallVector<rnn::SequenceOp> chain = {head};
    while (next.count(chain.back()))
      chain.push_back(next[chain.back()]);
    // A zero initial state needs a static batch to be a constant.
    auto xt = cast<RankedTensorType>(head.getX().getType());
    bool lstm = head.getCell() == rnn::CellKind::LSTM;
    if ((!head.getH0() || (lstm && !head.getC0())) &&
        (xt.isDynamicDim(1) ||
         xt.getDimSize(1) * head.getHiddenSize() > kMaxZeroState)) {
      head.emitRemark() << "one-step layers chained by their state are not "
                           "rolled: the first has no initial state, and its "
                           "zero state needs a static batch size (and at "
                           "most 2^24 elements)";
      continue;
    }
    SmallVector<Operation *> steps(chain.begin(), chain.end());
    if (!hoistStepInputs(steps))
      continue;
    demote(chain);
  }
}

void Roller::demote(ArrayRef<rnn::SequenceOp> chain) {
  rnn::SequenceOp head = chain.front();
  bool lstm = head.getCell() == rnn::CellKind::LSTM;
  int64_t hidden = head.getHiddenSize();
  auto xt = cast<RankedTensorType>(head.getX().getType());
  Type f = xt.getElementType();
  std::string kind = rnn::stringifyCellKind(head.getCell()).str();
  // The weights without their direction axis (once per distinct value).
  DenseMap<Value, Value> dropped;
  auto drop = [&](Location loc, Value w, StringRef name) {
    Value &d = dropped[w];
    if (!d) {
      auto t = od::getConstantF32(w);
      SmallVector<int64_t> shape(t->shape.begin() + 1, t->shape.end());
      d = consts.getF32(loc, kind + "_" + name.str(), shape, t->values);
    }
    return d;
  };
  Value h, c;
  SmallVector<Operation *> dead;
  for (rnn::SequenceOp seq : chain) {
    OpBuilder b(seq);
    Location loc = seq.getLoc();
    int64_t batch = cast<RankedTensorType>(seq.getX().getType()).getDimSize(1);
    auto stateType = RankedTensorType::get({batch, hidden}, f);
    auto initial = [&](Value s) {
      if (s)
        return od::createSqueeze(b, loc, consts, s, {0});
      return consts.getF32(loc, kind + "_zero_state", {batch, hidden},
                           std::vector<float>(batch * hidden, 0.f));
    };
    if (!h) {
      h = initial(seq.getH0());
      if (lstm)
        c = initial(seq.getC0());
    }
    Value x = od::createSqueeze(b, loc, consts, seq.getX(), {0});
    Value W = drop(loc, seq.getW(), "W"), R = drop(loc, seq.getR(), "R");
    Value Bw = drop(loc, seq.getBw(), "Bw"), Br = drop(loc, seq.getBr(), "Br");
    Operation *cell;
    if (lstm) {
      Value P = seq.getPeephole() ? drop(loc, seq.getPeephole(), "P") : Value();
      cell = rnn::LSTMCellOp::create(
          b, loc, TypeRange{stateType, stateType}, x, h, c, W, R, Bw, Br, P,
          seq.getActivationsAttr(), seq.getActivationAlphaAttr(),
          seq.getActivationBetaAttr(), seq.getClipAttr(),
          seq.getInputForgetAttr());
    } else if (seq.getCell() == rnn::CellKind::GRU) {
      cell = rnn::GRUCellOp::create(
          b, loc, stateType, x, h, W, R, Bw, Br,
          seq.getLinearBeforeResetAttr(), seq.getActivationsAttr(),
          seq.getActivationAlphaAttr(), seq.getActivationBetaAttr(),
          seq.getClipAttr());
    } else {
      cell = rnn::RNNCellOp::create(
          b, loc, stateType, x, h, W, R, Bw, Br, seq.getActivationsAttr(),
          seq.getActivationAlphaAttr(), seq.getActivationBetaAttr(),
          seq.getClipAttr());
    }
    if (Attribute p = seq->getAttr(rnn::kPrecisionAttr))
      cell->setAttr(rnn::kPrecisionAttr, p);
    cell->setAttr("rnn.source_nodes", b.getI64IntegerAttr(1));
    cell->setAttr("rnn.source_gemms", b.getI64IntegerAttr(2));
    h = cell->getResult(0);
    c = lstm ? cell->getResult(1) : Value();
    // Y [1, 1, B, H]: where it is only reshaped to [1, B, H] or [B, H]
    // (Squeeze of the direction axis, or torch.export's Transpose and
    // Reshape), that value is the step's state itself.
    for (OpOperand &use : llvm::make_early_inc_range(seq.getY().getUses())) {
      Value v = seq.getY(), found;
      int64_t rank = 0;
      Operation *user = use.getOwner();
      for (int depth = 0; depth < 4 && keepsElementOrder(user) &&
                          user->getOperand(0) == v;
           ++depth) {
        v = user->getResult(0);
        auto t = dyn_cast<RankedTensorType>(v.getType());
        if (t && t.getRank() >= 2 &&
            t.getDimSize(t.getRank() - 1) == hidden &&
            (t.getRank() == 2 || (t.getRank() == 3 && t.getDimSize(0) == 1))) {
          found = v;
          rank = t.getRank();
        }
        if (!v.hasOneUse())
          break;
        user = *v.getUsers().begin();
      }
      OpBuilder ub(use.getOwner());
      if (found) {
        Operation *def = found.getDefiningOp();
        OpBuilder fb(def);
        found.replaceAllUsesWith(
            rank == 2 ? h : od::createUnsqueeze(fb, loc, consts, h, {0}));
        dead.push_back(def);
      } else {
        use.set(od::createUnsqueeze(ub, loc, consts, h, {0, 1}));
      }
    }
    // h_n [1, B, H]: the state with a unit axis again, except where it is
    // squeezed right back (a scripted loop's body), which reads the state.
    auto replaceState = [&](Value old, Value state) {
      Value unsqueezed;
      for (OpOperand &use : llvm::make_early_inc_range(old.getUses())) {
        auto sq = dyn_cast<od::SqueezeOp>(use.getOwner());
        // (The squeezed type may say less: a scripted loop's body declares
        // its values [?, ?].)
        if (sq &&
            getElementTypeOrSelf(sq.getResult().getType()) ==
                getElementTypeOrSelf(state.getType()) &&
            succeeded(verifyCompatibleShape(sq.getResult().getType(),
                                            state.getType())) &&
            rnn::squeezeAxis(sq) == 0) {
          sq.getResult().replaceAllUsesWith(state);
          dead.push_back(sq);
          continue;
        }
        if (!unsqueezed)
          unsqueezed = od::createUnsqueeze(b, loc, consts, state, {0});
        use.set(unsqueezed);
      }
    };
    replaceState(seq.getHN(), h);
    if (lstm)
      replaceState(seq.getCN(), c);
    dead.push_back(seq);
  }
  od::eraseDeadOps(dead, consts.forgetter());
}

void Roller::run() {
  demoteOneStepChains();
  SmallVector<Cell> cells;
  func.walk([&](Operation *op) {
    if (Cell c = Cell::dyn(op))
      cells.push_back(c);
  });
  DenseSet<Operation *> done;
  // `next` continues `cur`'s layer: same kind, its states, compatible weights.
  auto follows = [&](Cell cur, Cell next) {
    return next.getH() == cur.getHOut() &&
           (!cur.isLSTM() || next.getC() == cur.getCOut()) &&
           linkable(cur, next);
  };
  for (Cell cell : cells) {
    if (done.contains(cell))
      continue;
    // Only start at the head of a chain.
    Cell prev = Cell::dyn(cell.getH().getDefiningOp());
    if (prev && follows(prev, cell))
      continue;
    SmallVector<Cell> chain = {cell};
    done.insert(cell);
    while (true) {
      Cell cur = chain.back(), next;
      for (Operation *user : cur.getHOut().getUsers()) {
        Cell c = Cell::dyn(user);
        if (c && follows(cur, c)) {
          next = c;
          break;
        }
      }
      if (!next) {
        for (Operation *user : cur.getHOut().getUsers())
          if (Cell c = Cell::dyn(user))
            if (c.getH() == cur.getHOut() && c.kind() == cur.kind() &&
                !linkable(cur, c))
              c.emitRemark() << "starts a new layer: its weights differ from "
                                "the previous step's";
        remarkModifiedState(cur, [&](Cell a, Cell b) { return linkable(a, b); });
        break;
      }
      chain.push_back(next);
      done.insert(next);
    }
    rollChain(chain);
  }
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
}

struct RollTimeLoop
    : public rnn::impl::RNNRollTimeLoopPassBase<RollTimeLoop> {
  void runOnOperation() override {
    rnn::forEachGraph(getOperation(), [&](func::FuncOp func) {
      Roller roller(func);
      roller.run();
      numLayers += roller.numLayers;
    });
  }
};

} // namespace

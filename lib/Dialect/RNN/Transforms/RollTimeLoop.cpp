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
                         << (def ? def->getName().getStringRef() : "?")
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

void Roller::rollChain(SmallVector<Cell> chain) {
  // Step inputs: consecutive slices of one tensor, forward or backward.
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
  if (!sliced && n > 1) {
    chain.front().emitRemark()
        << "not rolled into a layer: the step inputs are not consecutive "
           "slices of one tensor";
    for (Cell cell : chain)
      rollChain({cell});
    return;
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
  } else {
    X = od::createUnsqueeze(b, loc, consts, first.getX(), {0});
    ++glue;
  }
  glue += (isZeroConstant(first.getH()) ? 0 : 1) +
          (!first.isLSTM() || isZeroConstant(first.getC()) ? 0 : 1);
  // Zero initial states are the layer's default: not passed.
  Value h0 = isZeroConstant(first.getH())
                 ? Value()
                 : od::createUnsqueeze(b, loc, consts, first.getH(), {0});
  Value c0 = !first.isLSTM() || isZeroConstant(first.getC())
                 ? Value()
                 : od::createUnsqueeze(b, loc, consts, first.getC(), {0});
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
  // layer's cell, which reads it as the last row of Y (a step slice, so that
  // layer rolls too).
  for (OpOperand &use : llvm::make_early_inc_range(last.getHOut().getUses())) {
    Cell cellUser = Cell::dyn(use.getOwner());
    if (cellUser && use.getOperandNumber() == 0) {
      OpBuilder ub(cellUser);
      use.set(od::createGatherIndex(ub, loc, consts, getY(), 0, timeOf(n - 1)));
    }
  }
  last.getHOut().replaceAllUsesWith(hn);
  if (cn)
    last.getCOut().replaceAllUsesWith(cn);
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
  od::eraseDeadOps(dead, consts.forgetter());
  seq.emitRemark() << "fused " << rnn::stringifyCellKind(kind).upper()
                   << " layer: " << n << " steps, "
                   << (dirStep > 0 ? "forward" : "reverse") << ", hidden "
                   << hidden << ": " << srcNodes << " nodes -> 1 layer + "
                   << glue << " glue; " << srcGemms
                   << " GEMMs -> 1 input GEMM + " << n << " recurrent";
  ++numLayers;
}

void Roller::run() {
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

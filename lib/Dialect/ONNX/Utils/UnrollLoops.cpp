//===- UnrollLoops.cpp - recurrent Loop/Scan nodes made explicit ----------===//
//
// An ONNX Loop or Scan whose body is one step of a recurrence (a MatMul/Gemm
// of a value the loop carries from one iteration to the next, feeding a
// Sigmoid/Tanh/Relu) and whose number of iterations is known when the model
// is compiled becomes that many copies of its body, chained through the
// carried values; per-iteration (scan) outputs are stacked with Unsqueeze +
// Concat. That is the graph an exporter writes for an unrolled loop, which
// rnn-recognize-cells and rnn-roll-time-loop then turn into one sequence op.
// The copies compute exactly what the loop computes, op for op.
//
// The number of iterations comes from a constant trip count, from a loop
// condition that folds to a constant at every iteration (tf2onnx's while
// loops compare counters with the sequence length), or, for Scan, from the
// static length of the scanned axis. Anything else is left alone with a
// remark naming the node.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;

namespace {

/// Whether `body` is a recurrent step: some value carried across iterations
/// (and changed by the body, unlike weights handed through unchanged)
/// reaches a MatMul/Gemm whose result reaches a Sigmoid/Tanh/Relu, or an
/// LSTM/GRU/RNN node.
bool isRecurrentStep(Block &body, ArrayRef<BlockArgument> carried,
                     ArrayRef<Value> carriedOut) {
  llvm::SetVector<Value> fromState, fromProduct;
  for (auto [arg, out] : llvm::zip(carried, carriedOut))
    if (arg != od::skipIdentities(out) &&
        isa<FloatType>(getElementTypeOrSelf(arg.getType())))
      fromState.insert(arg);
  bool recurrent = false;
  for (Operation &op : body.without_terminator()) {
    // A use inside a nested region (an If in the body) counts as a use by
    // the op that holds the region.
    bool reads = false, readsProduct = false;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        reads |= fromState.contains(v);
        readsProduct |= fromProduct.contains(v);
      }
    });
    if (reads)
      fromState.insert(op.result_begin(), op.result_end());
    // A recurrent layer the body calls with the carried state (a scripted
    // loop calling nn.LSTMCell exports one-step LSTM nodes).
    if (reads && isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op))
      recurrent = true;
    if (reads && isa<od::MatMulOp, od::GemmOp>(op))
      readsProduct = true;
    if (readsProduct) {
      fromProduct.insert(op.result_begin(), op.result_end());
      if (isa<od::SigmoidOp, od::TanhOp, od::ReluOp>(op))
        recurrent = true;
    }
  }
  return recurrent;
}

/// The mark of a copy: [the loop's ordinal, the iteration], kept in the
/// node's metadata_props (`onnx.metadata`) so that it survives the export
/// and import that refine the copies' types.
constexpr llvm::StringLiteral kMarkKey = "lstm_opt.unrolled";
/// On a loop left alone because its steps do not fuse: later runs of the
/// pass leave it alone too (not written to ONNX: an `onnx.` attribute).
constexpr llvm::StringLiteral kKeepLoop = "onnx.keep_loop";

void markCopy(Operation *op, int64_t ordinal, int64_t iteration) {
  Builder b(op->getContext());
  SmallVector<Attribute> pairs;
  if (auto old = op->getAttrOfType<ArrayAttr>(od::attrs::kProps))
    pairs.append(old.begin(), old.end());
  pairs.push_back(b.getStrArrayAttr(
      {kMarkKey, std::to_string(ordinal) + "," + std::to_string(iteration)}));
  op->setAttr(od::attrs::kProps, b.getArrayAttr(pairs));
}

std::optional<std::pair<int64_t, int64_t>> markOf(Operation *op) {
  auto props = op->getAttrOfType<ArrayAttr>(od::attrs::kProps);
  if (!props)
    return std::nullopt;
  for (Attribute a : props) {
    auto pair = dyn_cast<ArrayAttr>(a);
    if (!pair || pair.size() != 2)
      continue;
    auto key = dyn_cast<StringAttr>(pair[0]);
    auto value = dyn_cast<StringAttr>(pair[1]);
    if (!key || !value || key.getValue() != kMarkKey)
      continue;
    auto [l, r] = value.getValue().split(',');
    int64_t o, i;
    if (l.getAsInteger(10, o) || r.getAsInteger(10, i))
      return std::nullopt;
    return std::make_pair(o, i);
  }
  return std::nullopt;
}

/// Identity, or a Cast to the element type its input already has.
bool isNoOp(Operation &op) {
  if (isa<od::IdentityOp>(op))
    return true;
  auto cast = dyn_cast<od::CastOp>(op);
  if (!cast)
    return false;
  Type in = getElementTypeOrSelf(cast.getInput().getType());
  Type out = getElementTypeOrSelf(cast.getResult().getType());
  return in == out && isa<FloatType>(in);
}

/// The more precise of two compatible tensor types (each static dimension
/// of either), or null.
Type join(Type a, Type b) {
  if (a == b)
    return a;
  if (getElementTypeOrSelf(a) != getElementTypeOrSelf(b) ||
      failed(verifyCompatibleShape(a, b)))
    return {};
  auto ra = dyn_cast<RankedTensorType>(a), rb = dyn_cast<RankedTensorType>(b);
  if (!ra || !rb)
    return ra ? a : b;
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(ra.getShape(), rb.getShape()))
    shape.push_back(ShapedType::isDynamic(x) ? y : x);
  return RankedTensorType::get(shape, ra.getElementType());
}

/// Replaces the loop's results by `values`. Both the loop's result types
/// and the body's value types are the exporter's claims about the same
/// values: a replacement value gets the join of the two (so a graph output
/// keeps its declared static size), and the function's result types follow.
/// Fails, changing nothing, where two types contradict each other.
LogicalResult replaceResults(Operation *loop, ArrayRef<Value> values) {
  auto func = loop->getParentOfType<func::FuncOp>();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Type> joined;
  for (auto [r, v] : llvm::zip(loop->getResults(), values)) {
    Type t = join(r.getType(), v.getType());
    if (!t || (isa<BlockArgument>(v) && t != v.getType()))
      return failure();
    joined.push_back(t);
  }
  for (auto [i, t] : llvm::enumerate(joined)) {
    Value v = values[i];
    v.setType(t);
  }
  loop->replaceAllUsesWith(values);
  func.setType(FunctionType::get(func.getContext(),
                                 func.getFunctionType().getInputs(),
                                 ret.getOperandTypes()));
  return success();
}

struct Unroller {
  Operation *loop;
  od::ConstantBuilder &consts;
  int64_t maxTrips, maxOps;
  OpBuilder b;
  IRMapping invariant; // body constants, copied once
  llvm::SetVector<Operation *> created;
  int64_t numTrips = 0;  // iterations unrolled
  int64_t ordinal = 0;   // the loop's place among the graph's Loop/Scan nodes
  int64_t stepsMade = 0; // copies of the body made so far
  int64_t perTrip = -1;  // ops copied per iteration (checkBudget)
  /// Carried lists a Loop appends one value to per iteration (TorchScript's
  /// `ys.append(h)` in a scripted loop): carried index -> the values.
  DenseMap<unsigned, SmallVector<Value>> lists;

  Unroller(Operation *loop, od::ConstantBuilder &consts, int64_t maxTrips,
           int64_t maxOps)
      : loop(loop), consts(consts), maxTrips(maxTrips), maxOps(maxOps),
        b(loop) {}

  Block &body() { return loop->getRegion(0).front(); }
  od::YieldOp yield() { return cast<od::YieldOp>(body().getTerminator()); }

  /// Copies the body's operand-free constants (initializers, Constant,
  /// none) once, in front of the loop.
  void copyInvariants() {
    for (Operation &op : body().without_terminator())
      if (op.getNumOperands() == 0 && op.getNumRegions() == 0 &&
          isa<od::InitializerOp, od::ConstantOp, od::NoneOp>(op)) {
        Operation *copy = b.clone(op);
        created.insert(copy);
        invariant.map(op.getResults(), copy->getResults());
      }
  }

  /// One copy of the body with its block arguments bound to `args`; returns
  /// the yielded values. Integer results that fold (counters, conditions)
  /// become constants at once, so the next copy's arithmetic stays shallow.
  SmallVector<Value> step(ArrayRef<Value> args) {
    IRMapping map = invariant;
    map.map(body().getArguments(), args);
    for (Operation &op : body().without_terminator()) {
      if (op.getNumResults() == 1 && invariant.contains(op.getResult(0)))
        continue;
      // Identities (and Casts to the type a value already has) are not
      // copied: the next step reads the value itself, as in an unrolled
      // graph.
      if (isNoOp(op)) {
        map.map(op.getResult(0), map.lookupOrDefault(op.getOperand(0)));
        continue;
      }
      Operation *copy = b.clone(op, map);
      created.insert(copy);
      markCopy(copy, ordinal, stepsMade);
      if (copy->getNumResults() != 1 || copy->getNumRegions() ||
          isa<od::InitializerOp, od::ConstantOp, od::NoneOp>(copy))
        continue;
      auto t = dyn_cast<RankedTensorType>(copy->getResult(0).getType());
      if (!t || !t.hasStaticShape() || t.getNumElements() > 64 ||
          !isa<IntegerType>(t.getElementType()))
        continue;
      if (auto v = od::getConstantInts(copy->getResult(0));
          v && (int64_t)v->size() == t.getNumElements()) {
        Value c = consts.getInts(copy->getLoc(), "unrolled", t, *v);
        created.insert(c.getDefiningOp());
        copy->getResult(0).replaceAllUsesWith(c);
        map.map(op.getResult(0), c);
      }
    }
    SmallVector<Value> out;
    for (Value v : yield().getValues())
      out.push_back(map.lookupOrDefault(v));
    ++stepsMade;
    return out;
  }

  Value scalar(Type like, int64_t v) {
    auto t = dyn_cast<RankedTensorType>(like);
    if (!t || !t.hasStaticShape() || t.getNumElements() != 1 ||
        !isa<IntegerType>(t.getElementType()))
      t = RankedTensorType::get({}, b.getI64Type());
    Value c = consts.getInts(loop->getLoc(), "iteration", t, {v});
    created.insert(c.getDefiningOp());
    return c;
  }

  /// Stacks per-iteration values along `axis` (of the stacked result).
  FailureOr<Value> stack(ArrayRef<Value> parts, int64_t axis) {
    auto t = dyn_cast<RankedTensorType>(parts.front().getType());
    if (!t)
      return failure();
    if (axis < 0)
      axis += t.getRank() + 1;
    if (axis < 0 || axis > t.getRank())
      return failure();
    SmallVector<Value> rows;
    for (Value p : parts) {
      if (p.getType() != t)
        return failure();
      Value u = od::createUnsqueeze(b, loop->getLoc(), consts, p, {axis});
      created.insert(u.getDefiningOp());
      rows.push_back(u);
    }
    SmallVector<int64_t> shape(t.getShape());
    shape.insert(shape.begin() + axis, (int64_t)parts.size());
    auto type = RankedTensorType::get(shape, t.getElementType());
    Value cat = od::ConcatOp::create(b, loop->getLoc(), type, rows, axis);
    created.insert(cat.getDefiningOp());
    return cat;
  }

  /// Erases the copies nobody reads (a condition's arithmetic, once folded;
  /// the steps after the last one whose results are used).
  void eraseDead() {
    for (Operation *op : llvm::reverse(created))
      if (op->use_empty() && !op->hasTrait<OpTrait::IsTerminator>() &&
          (isMemoryEffectFree(op) || isa<od::NodeOp>(op))) {
        consts.forget(op);
        op->erase();
      }
    created.clear();
  }

  /// Removes everything made so far (the loop stays as it was): with the
  /// loop's results not replaced, no copy is read.
  void undo() { eraseDead(); }

  bool checkBudget(int64_t trips) {
    if (perTrip < 0) { // the body's ops, nested ones included: counted once
      perTrip = 0;
      for (Operation &op : body().without_terminator())
        op.walk([&](Operation *) { ++perTrip; });
    }
    std::optional<int64_t> ops = checkedMul(perTrip, trips);
    return trips >= 0 && trips <= maxTrips && ops && *ops <= maxOps;
  }

  std::string tooLong(int64_t trips) const {
    return "more iterations (" + std::to_string(trips) +
           ") or copied ops than the limits allow (max-trips=" +
           std::to_string(maxTrips) + ", max-ops=" + std::to_string(maxOps) +
           ")";
  }

  /// Replaces the loop's results by the final carried values and, per scan
  /// output j, its per-iteration values stacked along `axes[j]` (in reverse
  /// order where `reversed[j]`).
  LogicalResult finish(ArrayRef<Value> carried,
                       ArrayRef<SmallVector<Value>> scans,
                       ArrayRef<int64_t> axes, ArrayRef<int64_t> reversed,
                       std::string &why) {
    SmallVector<Value> results(carried);
    for (auto [j, values] : llvm::enumerate(scans)) {
      SmallVector<Value> parts(values);
      if (reversed[j])
        std::reverse(parts.begin(), parts.end());
      auto s = stack(parts, axes[j]);
      if (failed(s)) {
        why = "a scan output is not a ranked tensor of the same type at every "
              "iteration";
        return failure();
      }
      results.push_back(*s);
    }
    if (failed(replaceResults(loop, results))) {
      why = "a result of the unrolled steps has a type incompatible with the "
            "loop's";
      return failure();
    }
    return success();
  }

  /// Whether carried value `j` of a Loop is a list the body appends to: it
  /// starts as `SequenceEmpty`, the body's only use of it is a
  /// `SequenceInsert` without a position (an append) whose result is
  /// yielded back and read by nothing else, and the loop's result is read
  /// only by `ConcatFromSequence`.
  bool isAppendedList(unsigned j) {
    auto node = cast<od::NodeOp>(loop);
    auto isNode = [](Operation *op, StringRef type) {
      auto n = dyn_cast_or_null<od::NodeOp>(op);
      return n && n.getDomain().empty() && n.getOpType() == type;
    };
    Value init = node.getInputs()[2 + j];
    BlockArgument arg = body().getArgument(2 + j);
    Value out = yield().getValues()[1 + j];
    if (!isNode(init.getDefiningOp(), "SequenceEmpty") || !arg.hasOneUse())
      return false;
    Operation *ins = *arg.getUsers().begin();
    if (!isNode(ins, "SequenceInsert") || ins->getNumOperands() != 2 ||
        ins->getOperand(0) != arg || ins->getResult(0) != out ||
        !out.hasOneUse() || ins->getParentRegion() != &loop->getRegion(0))
      return false;
    return llvm::all_of(loop->getResult(j).getUsers(), [&](Operation *u) {
      return isNode(u, "ConcatFromSequence") && u->getNumOperands() == 1;
    });
  }

  /// ConcatFromSequence of the appended `values`: along `axis`, with a new
  /// axis there when `newAxis`.
  FailureOr<Value> concatList(ArrayRef<Value> values, int64_t axis,
                              bool newAxis) {
    if (values.empty())
      return failure();
    if (newAxis)
      return stack(values, axis);
    auto t = dyn_cast<RankedTensorType>(values.front().getType());
    if (!t || t.getRank() == 0)
      return failure();
    if (axis < 0)
      axis += t.getRank();
    if (axis < 0 || axis >= t.getRank())
      return failure();
    SmallVector<int64_t> shape(t.getShape());
    shape[axis] = 0;
    for (Value v : values) {
      auto vt = dyn_cast<RankedTensorType>(v.getType());
      if (!vt || vt.getRank() != t.getRank() ||
          vt.getElementType() != t.getElementType())
        return failure();
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (d != axis && vt.getDimSize(d) != t.getDimSize(d))
          return failure();
      shape[axis] = ShapedType::isDynamic(vt.getDimSize(axis)) ||
                            ShapedType::isDynamic(shape[axis])
                        ? ShapedType::kDynamic
                        : shape[axis] + vt.getDimSize(axis);
    }
    Value cat = od::ConcatOp::create(
        b, loop->getLoc(), RankedTensorType::get(shape, t.getElementType()),
        values, axis);
    created.insert(cat.getDefiningOp());
    return cat;
  }

  /// Replaces each ConcatFromSequence of an appended list by the
  /// concatenation of the list's values (made before the loop's results are
  /// replaced, so that a failure leaves the graph as it was).
  LogicalResult concatLists(
      SmallVectorImpl<std::pair<Operation *, Value>> &done, std::string &why) {
    for (auto &[j, values] : lists)
      for (Operation *u : loop->getResult(j).getUsers()) {
        auto attrs = cast<od::NodeOp>(u).getAttrsAttr();
        auto intAttr = [&](StringRef name, int64_t dflt) {
          auto a = attrs ? attrs.getAs<IntegerAttr>(name) : nullptr;
          return a ? a.getInt() : dflt;
        };
        auto cat = concatList(values, intAttr("axis", 0),
                              intAttr("new_axis", 0) != 0);
        if (failed(cat) ||
            !join(u->getResult(0).getType(), cat->getType())) {
          why = "the values it appends to a list are not tensors that "
                "ConcatFromSequence joins";
          return failure();
        }
        done.push_back({u, *cat});
      }
    return success();
  }

  /// ONNX Loop: inputs (M, cond, v...), body (i, cond, v...) ->
  /// (cond, v..., scan...), results (v..., scan...).
  LogicalResult unrollLoop(std::string &why) {
    auto node = cast<od::NodeOp>(loop);
    auto ins = node.getInputs();
    unsigned n = ins.size() - 2;
    unsigned k = yield().getValues().size() - 1 - n;
    std::optional<int64_t> trips;
    if (!isa<NoneType>(ins[0].getType())) {
      auto m = od::getConstantInts(ins[0]);
      if (m && m->size() == 1)
        trips = (*m)[0];
    }
    auto condOf = [](Value c) -> std::optional<bool> {
      auto v = od::getConstantInts(c);
      if (!v || v->size() != 1)
        return std::nullopt;
      return (*v)[0] != 0;
    };
    bool hasCond = !isa<NoneType>(ins[1].getType());
    Value condValue = hasCond ? ins[1] : Value();
    std::optional<bool> cond = hasCond ? condOf(ins[1]) : std::optional(true);
    if (!trips && !hasCond) {
      why = isa<NoneType>(ins[0].getType())
                ? "it has neither a trip count nor a condition"
                : "its trip count is not known when the model is compiled";
      return failure();
    }
    if (trips && *trips < 0) {
      why = "its trip count is negative";
      return failure();
    }
    if (trips && !checkBudget(*trips)) {
      why = tooLong(*trips);
      return failure();
    }
    // A trip count computed when the model runs, and a condition the body
    // always yields true: the count is M's, unknown here.
    if (!trips && !isa<NoneType>(ins[0].getType())) {
      std::optional<bool> bodyCond = condOf(yield().getValues()[0]);
      if (bodyCond && *bodyCond) {
        why = "its trip count is not known when the model is compiled";
        return failure();
      }
    }
    for (unsigned j = 0; j < n; ++j)
      if (isAppendedList(j))
        lists[j];
    copyInvariants();
    SmallVector<Value> carried(ins.begin() + 2, ins.end());
    SmallVector<SmallVector<Value>> scans(k);
    int64_t i = 0;
    for (;; ++i) {
      if (trips && i >= *trips)
        break;
      if (!cond) {
        why = "its condition is not known when the model is compiled "
              "(iteration " + std::to_string(i) + ")";
        return failure();
      }
      if (!*cond)
        break;
      if (!checkBudget(i + 1)) {
        why = tooLong(i + 1);
        return failure();
      }
      SmallVector<Value> args;
      args.push_back(scalar(body().getArgument(0).getType(), i));
      args.push_back(condValue ? condValue
                               : scalar(body().getArgument(1).getType(), 1));
      args.append(carried);
      SmallVector<Value> out = step(args);
      condValue = out[0];
      cond = condOf(condValue);
      // An appended list: this iteration's value; the copied append goes
      // (the list stays the empty one the loop starts with).
      for (auto &[j, values] : lists) {
        Operation *append = out[1 + j].getDefiningOp();
        values.push_back(append->getOperand(1));
        out[1 + j] = ins[2 + j];
        created.remove(append);
        append->erase();
      }
      carried.assign(out.begin() + 1, out.begin() + 1 + n);
      for (unsigned j = 0; j < k; ++j)
        scans[j].push_back(out[1 + n + j]);
    }
    numTrips = i;
    if (i == 0 && (k || !lists.empty())) {
      why = "it runs no iteration (its scan outputs would be empty)";
      return failure();
    }
    SmallVector<std::pair<Operation *, Value>> concats;
    if (failed(concatLists(concats, why)) ||
        failed(finish(carried, scans, SmallVector<int64_t>(k, 0),
                      SmallVector<int64_t>(k, 0), why)))
      return failure();
    if (concats.empty())
      return success();
    auto func = loop->getParentOfType<func::FuncOp>();
    for (auto [u, cat] : concats) {
      cat.setType(join(u->getResult(0).getType(), cat.getType()));
      u->getResult(0).replaceAllUsesWith(cat);
      u->erase();
    }
    func.setType(FunctionType::get(
        func.getContext(), func.getFunctionType().getInputs(),
        func.getBody().front().getTerminator()->getOperandTypes()));
    return success();
  }

  /// ONNX Scan (opset 9+): inputs (state..., scan inputs...), body
  /// (state..., slices...) -> (state..., scan slices...), results
  /// (state..., scan outputs...).
  LogicalResult unrollScan(std::string &why) {
    auto node = cast<od::NodeOp>(loop);
    if (od::getDefaultOpset(loop) < 9) {
      why = "Scan before opset 9 (with a batch axis) is not unrolled";
      return failure();
    }
    DictionaryAttr attrs = node.getAttrsAttr();
    auto intAttr = [&](StringRef name) -> std::optional<int64_t> {
      if (auto a = attrs ? attrs.getAs<IntegerAttr>(name) : nullptr)
        return a.getInt();
      return std::nullopt;
    };
    auto intsAttr = [&](StringRef name, size_t count) -> SmallVector<int64_t> {
      SmallVector<int64_t> out(count, 0);
      if (auto a = attrs ? attrs.getAs<DenseI64ArrayAttr>(name) : nullptr)
        out.assign(a.asArrayRef().begin(), a.asArrayRef().end());
      return out;
    };
    auto ins = node.getInputs();
    auto m = intAttr("num_scan_inputs");
    if (!m || *m < 1 || *m > (int64_t)ins.size()) {
      why = "'num_scan_inputs' is missing or out of range";
      return failure();
    }
    unsigned n = ins.size() - *m;
    unsigned k = yield().getValues().size() - n;
    auto inAxes = intsAttr("scan_input_axes", *m);
    auto inDirs = intsAttr("scan_input_directions", *m);
    auto outAxes = intsAttr("scan_output_axes", k);
    auto outDirs = intsAttr("scan_output_directions", k);
    if (inAxes.size() != (size_t)*m || inDirs.size() != (size_t)*m ||
        outAxes.size() != k || outDirs.size() != k) {
      why = "its axis or direction lists do not match its inputs and outputs";
      return failure();
    }
    int64_t trips = -1;
    for (int64_t j = 0; j < *m; ++j) {
      auto t = dyn_cast<RankedTensorType>(ins[n + j].getType());
      int64_t axis = t ? inAxes[j] + (inAxes[j] < 0 ? t.getRank() : 0) : -1;
      if (!t || axis < 0 || axis >= t.getRank() || t.isDynamicDim(axis)) {
        why = "the length of a scanned axis is not known statically";
        return failure();
      }
      inAxes[j] = axis;
      if (trips >= 0 && trips != t.getDimSize(axis)) {
        why = "its scan inputs have different lengths";
        return failure();
      }
      trips = t.getDimSize(axis);
    }
    if (trips == 0 || !checkBudget(trips)) {
      why = trips == 0 ? "it scans an empty axis" : tooLong(trips);
      return failure();
    }
    numTrips = trips;
    copyInvariants();
    SmallVector<Value> state(ins.begin(), ins.begin() + n);
    SmallVector<SmallVector<Value>> scans(k);
    for (int64_t t = 0; t < trips; ++t) {
      SmallVector<Value> args(state);
      for (int64_t j = 0; j < *m; ++j) {
        int64_t idx = inDirs[j] ? trips - 1 - t : t;
        Value g = od::createGatherIndex(b, loop->getLoc(), consts, ins[n + j],
                                        inAxes[j], idx);
        created.insert(g.getDefiningOp());
        args.push_back(g);
      }
      SmallVector<Value> out = step(args);
      state.assign(out.begin(), out.begin() + n);
      for (unsigned j = 0; j < k; ++j)
        scans[j].push_back(out[n + j]);
    }
    return finish(state, scans, outAxes, outDirs, why);
  }
};

/// Unrolls one Loop/Scan node if it is a recurrent step; true if it did.
bool unrollNode(od::NodeOp node, int64_t ordinal, bool skip,
                od::ConstantBuilder &consts, const od::UnrollLimits &limits) {
  bool isLoop = node.getOpType() == "Loop";
  Block &body = node->getRegion(0).front();
  auto yield = cast<od::YieldOp>(body.getTerminator());
  unsigned nIn = node.getInputs().size();
  // The carried values' block arguments and what the body yields for them.
  unsigned first = isLoop ? 2 : 0;
  unsigned numCarried = 0;
  if (isLoop) {
    if (nIn < 2 || body.getNumArguments() != nIn ||
        yield.getValues().size() < nIn - 1 ||
        node.getNumResults() != yield.getValues().size() - 1)
      return false; // malformed: the verifier's business, not ours
    numCarried = nIn - 2;
  } else {
    auto attrs = node.getAttrsAttr();
    auto m = attrs ? attrs.getAs<IntegerAttr>("num_scan_inputs") : nullptr;
    if (!m || m.getInt() < 0 || m.getInt() > nIn ||
        body.getNumArguments() != nIn ||
        node.getNumResults() != yield.getValues().size())
      return false;
    numCarried = nIn - m.getInt();
    if (yield.getValues().size() < numCarried)
      return false;
  }
  SmallVector<BlockArgument> carried(body.getArguments().slice(first, numCarried));
  SmallVector<Value> carriedOut(
      yield.getValues().slice(isLoop ? 1 : 0, numCarried));
  if (!isRecurrentStep(body, carried, carriedOut))
    return false; // not a recurrence: nothing for this pipeline to do
  if (node->hasAttr(kKeepLoop))
    return false; // decided before, with its remark
  if (skip) {
    node->setAttr(kKeepLoop, UnitAttr::get(node.getContext()));
    node->emitRemark() << "the recurrent " << node.getOpType()
                       << " is not unrolled: its unrolled steps do not form "
                          "a cell that the recogniser fuses";
    return false;
  }
  Unroller u(node, consts, limits.maxTrips, limits.maxOps);
  u.ordinal = ordinal;
  std::string why;
  LogicalResult done = isLoop ? u.unrollLoop(why) : u.unrollScan(why);
  if (failed(done)) {
    u.undo();
    node->setAttr(kKeepLoop, UnitAttr::get(node.getContext()));
    node->emitRemark() << "the recurrent " << node.getOpType()
                       << " is not unrolled: " << why;
    return false;
  }
  u.eraseDead();
  node->emitRemark() << "recurrent " << node.getOpType() << " unrolled: "
                     << u.numTrips << " iterations of its body";
  node->erase();
  return true;
}

} // namespace

/// The graph's top-level Loop/Scan nodes, in order (their ordinals).
static SmallVector<od::NodeOp> loopsOf(func::FuncOp func) {
  SmallVector<od::NodeOp> loops;
  for (Operation &op : func.getBody().front())
    if (auto node = dyn_cast<od::NodeOp>(op);
        node && node.getDomain().empty() && node.getNumRegions() == 1 &&
        (node.getOpType() == "Loop" || node.getOpType() == "Scan"))
      loops.push_back(node);
  return loops;
}

int od::unrollRecurrentLoops(func::FuncOp func, const UnrollLimits &limits,
                             ArrayRef<int64_t> skip, int64_t ordinalBase) {
  od::ConstantBuilder consts(func);
  int n = 0;
  for (auto [i, node] : llvm::enumerate(loopsOf(func))) {
    int64_t ordinal = ordinalBase + (int64_t)i;
    n += unrollNode(node, ordinal, llvm::is_contained(skip, ordinal), consts,
                    limits);
  }
  return n;
}

LogicalResult od::replaceLoopResults(Operation *loop, ArrayRef<Value> values) {
  return replaceResults(loop, values);
}

bool od::hasLoopNodes(func::FuncOp func) { return !loopsOf(func).empty(); }

int64_t od::countLoopNodes(func::FuncOp func) { return loopsOf(func).size(); }

SmallVector<int64_t> od::unfusedUnrolledLoops(func::FuncOp func) {
  // A recurrence left as copies: a copy of iteration i reads a value a
  // copy of iteration i - 1 of the same loop computed. Once the cell is
  // fused the steps are one layer, and what is left of the copies (a
  // per-step output projection) reads the layer's outputs instead.
  llvm::SetVector<int64_t> unfused;
  for (Operation &op : func.getBody().front()) {
    auto mine = markOf(&op);
    if (!mine)
      continue;
    for (Value v : op.getOperands()) {
      Operation *def = v.getDefiningOp();
      auto theirs = def ? markOf(def) : std::nullopt;
      if (theirs && theirs->first == mine->first &&
          theirs->second == mine->second - 1)
        unfused.insert(mine->first);
    }
  }
  return SmallVector<int64_t>(unfused.begin(), unfused.end());
}

void od::stripUnrolledMarks(func::FuncOp func) {
  func.walk([](Operation *op) {
    auto props = op->getAttrOfType<ArrayAttr>(attrs::kProps);
    if (!props || !markOf(op))
      return;
    SmallVector<Attribute> kept;
    for (Attribute a : props) {
      auto pair = dyn_cast<ArrayAttr>(a);
      auto key = pair && pair.size() == 2 ? dyn_cast<StringAttr>(pair[0]) : nullptr;
      if (!key || key.getValue() != kMarkKey)
        kept.push_back(a);
    }
    if (kept.empty())
      op->removeAttr(attrs::kProps);
    else
      op->setAttr(attrs::kProps, ArrayAttr::get(op->getContext(), kept));
  });
}

//===- LoopToSequence.cpp - rnn-loop-to-sequence -------------------------===//
//
// An ONNX Loop over a whole sequence whose body is one step of a fused layer
// becomes that layer over the whole sequence. This is what an exporter
// writes for a recurrence over a time axis of unknown length (a Keras RNN
// with unroll=False and a dynamic time axis, through tf2onnx; a scripted
// loop over x.size(0)): rnn-unroll-recurrent-loops cannot unroll it, and
// rnn-recognize-cells and rnn-roll-time-loop make its body one one-step
// rnn.sequence.
//
// The Loop is replaced only when it provably runs that step over every step
// of one tensor X, in order, and nothing else:
//   * the step reads Gather(X, k) at iteration k, X defined outside the loop
//     (k: the iteration number, or a carried counter that starts at 0 and
//     gains 1 per iteration);
//   * it runs exactly T iterations, T the size of X's axis 0 at run time: the
//     trip count is T (read from X's shape), or the condition is a
//     conjunction of comparisons `k + d < T` (d <= 1, and some d = 1 when no
//     trip count bounds it) and the initial condition `c < T` (c <= 0);
//   * every carried value is the step's state (the layer's initial state in,
//     its final state out), a counter, or handed through unchanged; every
//     per-iteration output is the step's new hidden state.
// The layer then runs over X from the carried initial states; the Loop's
// final states are the layer's, its stacked outputs the layer's Y. Exact:
// the layer computes the same step at every iteration, in the same order.
// With zero steps the Loop returns the initial state; ONNX Runtime's
// LSTM/GRU/RNN nodes refuse a sequence of zero steps.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNLOOPTOSEQUENCEPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;

namespace {

/// The data `v` is a Squeeze/Unsqueeze (OpT) of, over exactly `axes`, or
/// null.
template <typename OpT>
Value axesOp(Value v, ArrayRef<int64_t> axes) {
  if (!v)
    return {};
  auto op = od::skipIdentities(v).template getDefiningOp<OpT>();
  auto got = op ? od::getSqueezeAxes(op) : std::nullopt;
  if (!got || ArrayRef<int64_t>(*got) != axes)
    return {};
  return op.getData();
}

/// One scalar constant as a double (integer or float), or std::nullopt.
std::optional<double> scalarConstant(Value v) {
  if (auto ints = od::getConstantInts(v); ints && ints->size() == 1)
    return (double)ints->front();
  if (auto f = od::getConstantF32(v); f && f->values.size() == 1)
    return (double)f->values.front();
  return std::nullopt;
}

/// How a carried value of the loop is used.
enum class Slot { Through, Counter, H, C, List };

/// A generic ONNX node of the default domain with this op type.
od::NodeOp nodeOfType(Value v, StringRef type) {
  auto node = v ? v.getDefiningOp<od::NodeOp>() : od::NodeOp();
  if (!node || node.getOpType() != type || !node.getGraphs().empty() ||
      !(node.getDomain().empty() || node.getDomain() == "ai.onnx"))
    return {};
  return node;
}

/// A ConcatFromSequence that stacks a sequence's tensors along a new
/// leading axis (torch.stack of a list).
bool isStackOfSequence(Operation *op) {
  auto node = dyn_cast<od::NodeOp>(op);
  if (!node || node.getOpType() != "ConcatFromSequence" ||
      !node.getGraphs().empty() || node.getInputs().size() != 1 ||
      node->getNumResults() != 1)
    return false;
  return od::getNodeIntAttr(node, "axis", -1) == 0 &&
         od::getNodeIntAttr(node, "new_axis", 0) == 1;
}

struct LoopToSequence
    : public rnn::impl::RNNLoopToSequencePassBase<LoopToSequence> {
  void runOnOperation() override {
    rnn::forEachGraph(getOperation(), [&](func::FuncOp func) {
      SmallVector<od::NodeOp> loops;
      for (Operation &op : func.getBody().front())
        if (auto node = dyn_cast<od::NodeOp>(op))
          if (node.getOpType() == "Loop" &&
              (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
              node.getGraphs().size() == 1)
            loops.push_back(node);
      od::ConstantBuilder consts(func);
      for (od::NodeOp loop : loops)
        if (succeeded(rollLoop(loop, consts)))
          ++numRolled;
    });
  }

  /// The loop's parts.
  struct Parts {
    od::NodeOp loop;
    Block *body;
    od::YieldOp yield;
    int64_t numCarried, numScan;
    rnn::SequenceOp step;
    SmallVector<Slot> slots;
  };

  static bool isOutside(Parts &p, Value v) {
    Operation *owner = isa<BlockArgument>(v)
                           ? cast<BlockArgument>(v).getOwner()->getParentOp()
                           : v.getDefiningOp();
    return owner && !p.loop->isAncestor(owner);
  }

  /// The offset d of a value that holds k + d at iteration k (the iteration
  /// number, a counter, either plus a constant; through Casts and
  /// Identity), or std::nullopt.
  static std::optional<int64_t> offsetOf(Parts &p, Value v,
                                         int depth = 0) {
    if (depth > 8)
      return std::nullopt;
    v = od::skipIdentities(v);
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != p.body)
        return std::nullopt;
      unsigned i = arg.getArgNumber();
      if (i == 0)
        return 0;
      if (i >= 2 && p.slots[i - 2] == Slot::Counter)
        return 0;
      return std::nullopt;
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto cast = dyn_cast<od::CastOp>(def)) {
      Type to = getElementTypeOrSelf(cast.getResult().getType());
      if (!(to.isInteger(32) || to.isInteger(64) || to.isF32() || to.isF64()))
        return std::nullopt;
      return offsetOf(p, cast.getInput(), depth + 1);
    }
    if (auto add = dyn_cast<od::AddOp>(def)) {
      for (int side = 0; side < 2; ++side) {
        auto c = scalarConstant(def->getOperand(1 - side));
        if (!c || *c != std::floor(*c) || std::fabs(*c) > 16)
          continue;
        if (auto o = offsetOf(p, def->getOperand(side), depth + 1))
          return *o + (int64_t)*c;
      }
    }
    return std::nullopt;
  }

  /// A condition as a conjunction of `a < T` terms: for each, the offset d
  /// of `a` (k + d at iteration k; for the initial condition, a constant c
  /// as d = c), appended to `offsets`. `T` is X's axis 0. A pass-through of
  /// the incoming condition adds no term. False for anything else.
  static bool conditionTerms(Parts &p, Value cond, Value X, bool initial,
                             SmallVectorImpl<int64_t> &offsets,
                             int depth = 0) {
    if (depth > 8)
      return false;
    cond = od::skipIdentities(cond);
    if (auto c = scalarConstant(cond))
      return *c != 0;
    if (auto arg = dyn_cast<BlockArgument>(cond))
      return !initial && arg.getOwner() == p.body && arg.getArgNumber() == 1;
    auto node = cond.getDefiningOp<od::NodeOp>();
    if (!node || !(node.getDomain().empty() || node.getDomain() == "ai.onnx") ||
        node.getInputs().size() != 2 || node->getNumResults() != 1)
      return false;
    StringRef type = node.getOpType();
    Value a = node.getInputs()[0], b = node.getInputs()[1];
    if (type == "And")
      return conditionTerms(p, a, X, initial, offsets, depth + 1) &&
             conditionTerms(p, b, X, initial, offsets, depth + 1);
    if (type == "Greater")
      std::swap(a, b);
    else if (type != "Less")
      return false;
    if (!od::holdsDimSize(b, X, 0))
      return false;
    std::optional<int64_t> d;
    if (initial) {
      auto c = scalarConstant(a);
      if (c && *c == std::floor(*c) && std::fabs(*c) <= 16)
        d = (int64_t)*c;
    } else {
      d = offsetOf(p, a);
    }
    if (!d)
      return false;
    offsets.push_back(*d);
    return true;
  }

  /// Which state of the step `v` (a value the body yields) is: its new h or
  /// c, as Squeeze(h_n / c_n, [0]) or, for h, Squeeze(Y, [0, 1]).
  static std::optional<Slot> stateOut(Parts &p, Value v) {
    if (Value s = axesOp<od::SqueezeOp>(v, {0})) {
      if (s == p.step.getHN())
        return Slot::H;
      if (p.step.getCN() && s == p.step.getCN())
        return Slot::C;
    }
    if (axesOp<od::SqueezeOp>(v, {0, 1}) == p.step.getY())
      return Slot::H;
    return std::nullopt;
  }

  LogicalResult refuse(od::NodeOp loop, const Twine &why) {
    loop.emitRemark() << "the recurrent Loop is not made one layer: " << why;
    return failure();
  }

  LogicalResult rollLoop(od::NodeOp loop, od::ConstantBuilder &consts) {
    Parts p;
    p.loop = loop;
    Region &region = loop.getGraphs().front();
    if (!region.hasOneBlock())
      return failure();
    p.body = &region.front();
    p.yield = dyn_cast<od::YieldOp>(p.body->getTerminator());
    int64_t numInputs = loop.getInputs().size();
    p.numCarried = numInputs - 2;
    if (!p.yield || p.numCarried < 1 ||
        (int64_t)p.body->getNumArguments() != numInputs ||
        (int64_t)p.yield->getNumOperands() < 1 + p.numCarried)
      return failure();
    p.numScan = p.yield->getNumOperands() - 1 - p.numCarried;
    if ((int64_t)loop->getNumResults() != p.numCarried + p.numScan)
      return failure();
    // One one-step layer, directly in the body: the loop's step.
    for (Operation &op : *p.body)
      if (auto seq = dyn_cast<rnn::SequenceOp>(op)) {
        if (p.step)
          return refuse(loop, "its body holds more than one layer");
        p.step = seq;
      }
    if (!p.step)
      return failure();
    rnn::SequenceOp step = p.step;
    auto xt = dyn_cast<RankedTensorType>(step.getX().getType());
    if (!xt || xt.getRank() != 3 || xt.getDimSize(0) != 1 ||
        step.getNumDirections() != 1 || step.getSequenceLens())
      return refuse(loop, "its layer is not one step of one direction");
    if (!step.getH0())
      return refuse(loop, "its layer does not read a carried state");

    // The carried values.
    ValueRange inputs = loop.getInputs();
    for (int64_t j = 0; j < p.numCarried; ++j) {
      Value arg = p.body->getArgument(2 + j);
      Value out = p.yield->getOperand(1 + j);
      if (od::skipIdentities(out) == arg) {
        p.slots.push_back(Slot::Through);
        continue;
      }
      if (auto s = stateOut(p, out)) {
        Value start = *s == Slot::H ? step.getH0() : step.getC0();
        Value in = start ? axesOp<od::UnsqueezeOp>(start, {0}) : Value();
        if (!in || in != arg)
          return refuse(loop, "carried value " + Twine(j) +
                                  " is the layer's new state, but the layer "
                                  "does not start from it");
        p.slots.push_back(*s);
        continue;
      }
      // A list the body appends the new h to (TorchScript's ys.append(h)),
      // empty at first and read only stacked after the loop (torch.stack).
      if (auto insert = nodeOfType(od::skipIdentities(out), "SequenceInsert")) {
        auto st = insert.getInputs().size() == 2
                      ? stateOut(p, insert.getInputs()[1])
                      : std::nullopt;
        if (!st || *st != Slot::H || insert.getInputs()[0] != arg ||
            !nodeOfType(inputs[2 + j], "SequenceEmpty") ||
            !llvm::all_of(loop->getResult(j).getUsers(), isStackOfSequence))
          return refuse(loop, "carried list " + Twine(j) +
                                  " is not the new hidden states, appended "
                                  "one per iteration and stacked after the "
                                  "loop");
        p.slots.push_back(Slot::List);
        continue;
      }
      auto add = od::skipIdentities(out).getDefiningOp<od::AddOp>();
      auto init = scalarConstant(inputs[2 + j]);
      bool counter = false;
      if (add && init && *init == 0)
        for (int side = 0; side < 2; ++side) {
          auto c = scalarConstant(add->getOperand(1 - side));
          if (c && *c == 1 && od::skipIdentities(add->getOperand(side)) == arg)
            counter = true;
        }
      if (!counter)
        return refuse(loop, "carried value " + Twine(j) +
                                " is neither the layer's state, a step "
                                "counter, nor handed through");
      if (!loop->getResult(j).use_empty())
        return refuse(loop, "the final value of its step counter is read");
      p.slots.push_back(Slot::Counter);
    }
    auto slotOf = [&](Slot s) -> int64_t {
      auto it = llvm::find(p.slots, s);
      return it == p.slots.end() ? -1 : it - p.slots.begin();
    };
    int64_t hSlot = slotOf(Slot::H), cSlot = slotOf(Slot::C);
    if (hSlot < 0 || (step.getC0() && cSlot < 0) ||
        (!step.getC0() && step.getCN() && cSlot >= 0))
      return refuse(loop, "its layer's state is not carried from one "
                          "iteration to the next");
    if (llvm::count(p.slots, Slot::H) > 1 || llvm::count(p.slots, Slot::C) > 1)
      return refuse(loop, "its layer's state is carried twice");

    // The step's input: Unsqueeze(Gather(X, k), [0]), X outside the loop.
    Value gathered = axesOp<od::UnsqueezeOp>(step.getX(), {0});
    auto gather =
        gathered ? od::skipIdentities(gathered).getDefiningOp<od::GatherOp>()
                 : nullptr;
    if (!gather || gather.getAxis() != 0 || !isOutside(p, gather.getData()))
      return refuse(loop, "its layer does not read step k of a sequence "
                          "at iteration k");
    Value X = gather.getData();
    auto seqType = dyn_cast<RankedTensorType>(X.getType());
    auto off = offsetOf(p, gather.getIndices());
    if (!seqType || seqType.getRank() != 3 || !off || *off != 0 ||
        failed(verifyCompatibleShape(seqType.getShape().drop_front(),
                                     xt.getShape().drop_front())))
      return refuse(loop, "its layer does not read step k of a sequence "
                          "at iteration k");

    // Exactly T iterations, T = X's axis 0.
    Value M = inputs[0];
    bool tripIsT = !isa<NoneType>(M.getType());
    if (tripIsT && !od::holdsDimSize(M, X, 0))
      return refuse(loop, "its trip count is not the sequence's length");
    SmallVector<int64_t> initTerms, bodyTerms;
    if (!isa<NoneType>(inputs[1].getType()) &&
        !conditionTerms(p, inputs[1], X, /*initial=*/true, initTerms))
      return refuse(loop, "its initial condition is not a comparison with "
                          "the sequence's length");
    if (!conditionTerms(p, p.yield->getOperand(0), X, /*initial=*/false,
                        bodyTerms))
      return refuse(loop, "its condition is not a comparison of the "
                          "iteration with the sequence's length");
    if (llvm::any_of(initTerms, [](int64_t c) { return c > 0; }) ||
        llvm::any_of(bodyTerms, [](int64_t d) { return d > 1; }))
      return refuse(loop, "its condition may stop it before the sequence's "
                          "end");
    if (!tripIsT && !llvm::is_contained(bodyTerms, 1))
      return refuse(loop, "nothing stops it at the sequence's end");

    // Per-iteration outputs: the new hidden state.
    for (int64_t s = 0; s < p.numScan; ++s) {
      auto st = stateOut(p, p.yield->getOperand(1 + p.numCarried + s));
      if (!st || *st != Slot::H)
        return refuse(loop, "per-iteration output " + Twine(s) +
                                " is not the layer's hidden state");
    }

    // The layer's other operands must be available before the loop:
    // defined outside, or body constants (copied out).
    OpBuilder b(loop);
    IRMapping map;
    for (Value v : step->getOperands()) {
      if (v == step.getX() || v == step.getH0() || v == step.getC0() ||
          isOutside(p, v) || map.contains(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || def->getNumOperands() || def->getNumRegions() ||
          !isa<od::InitializerOp, od::ConstantOp, od::NoneOp>(def))
        return refuse(loop, "its layer's weights are computed in the body");
      map.map(v, b.clone(*def)->getResult(0));
    }

    Location loc = step.getLoc();
    Value h0 = od::createUnsqueeze(b, loc, consts, inputs[2 + hSlot], {0});
    map.map(step.getH0(), h0);
    if (step.getC0())
      map.map(step.getC0(),
              od::createUnsqueeze(b, loc, consts, inputs[2 + cSlot], {0}));
    map.map(step.getX(), X);
    auto layer = cast<rnn::SequenceOp>(b.clone(*step, map));
    auto yt = cast<RankedTensorType>(step.getY().getType());
    layer.getY().setType(RankedTensorType::get(
        {seqType.getDimSize(0), 1, yt.getDimSize(2), yt.getDimSize(3)},
        yt.getElementType()));

    SmallVector<Value> results;
    for (int64_t j = 0; j < p.numCarried; ++j)
      switch (p.slots[j]) {
      case Slot::Through:
      case Slot::List:    // its stacks are replaced below
      case Slot::Counter: // unread
        results.push_back(inputs[2 + j]);
        break;
      case Slot::H:
        results.push_back(
            od::createSqueeze(b, loc, consts, layer.getHN(), {0}));
        break;
      case Slot::C:
        results.push_back(
            od::createSqueeze(b, loc, consts, layer.getCN(), {0}));
        break;
      }
    for (int64_t s = 0; s < p.numScan; ++s)
      results.push_back(od::createSqueeze(b, loc, consts, layer.getY(), {1}));
    // The stacks of the lists, found before the lists' results go.
    SmallVector<Operation *> stacks;
    for (int64_t j = 0; j < p.numCarried; ++j)
      if (p.slots[j] == Slot::List)
        llvm::append_range(stacks, loop->getResult(j).getUsers());
    std::string name = od::getNodeName(loop);
    if (failed(od::replaceLoopResults(loop, results))) {
      SmallVector<Operation *> dead;
      for (Value v : results)
        if (Operation *def = v.getDefiningOp())
          dead.push_back(def);
      dead.push_back(layer);
      od::eraseDeadOps(dead, consts.forgetter(),
                       [&](Operation *op) { return op == layer; });
      return refuse(loop, "its results' types contradict the layer's");
    }
    // The stacked lists: the layer's Y too.
    {
      for (Operation *stack : stacks) {
        Value y = od::createSqueeze(b, loc, consts, layer.getY(), {1});
        auto want = dyn_cast<RankedTensorType>(stack->getResult(0).getType());
        auto got = cast<RankedTensorType>(y.getType());
        if (want && want.getRank() == got.getRank()) {
          SmallVector<int64_t> shape;
          for (auto [a, c] : llvm::zip(want.getShape(), got.getShape()))
            shape.push_back(ShapedType::isDynamic(c) ? a : c);
          y.setType(RankedTensorType::get(shape, got.getElementType()));
        }
        stack->getResult(0).replaceAllUsesWith(y);
        stack->erase();
      }
    }
    auto func = layer->getParentOfType<func::FuncOp>();
    func.setType(FunctionType::get(
        func.getContext(), func.getFunctionType().getInputs(),
        func.getBody().front().getTerminator()->getOperandTypes()));
    layer.emitRemark() << "recurrent Loop '" << name << "' over all "
                       << (seqType.isDynamicDim(0)
                               ? std::string("the")
                               : std::to_string(seqType.getDimSize(0)))
                       << " steps of its sequence: one "
                       << rnn::stringifyCellKind(layer.getCell()).upper()
                       << " layer";
    SmallVector<Operation *> dead = {loop};
    for (Value v : inputs)
      if (Operation *def = v.getDefiningOp())
        dead.push_back(def);
    loop->dropAllUses();
    // The loop, the comparisons that computed its condition and an empty
    // list it started from go.
    od::eraseDeadOps(dead, consts.forgetter(), [&](Operation *op) {
      if (op == loop.getOperation())
        return true;
      auto node = dyn_cast<od::NodeOp>(op);
      return node && node.getGraphs().empty() &&
             (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
             llvm::is_contained({"Less", "Greater", "And", "Or", "Not", "Equal",
                                 "LessOrEqual", "GreaterOrEqual",
                                 "SequenceEmpty"},
                                node.getOpType());
    });
    return success();
  }
};

} // namespace

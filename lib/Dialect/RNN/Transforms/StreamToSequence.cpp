//===- StreamToSequence.cpp - onnx-stream-to-sequence ---------------------===//
//
// A model called once per chunk with its state passed in and out, rewritten
// into one that takes N chunks in one call: the graph's body inside an ONNX
// Loop of N iterations, the states loop-carried, the other outputs stacked
// as scan outputs. See docs/passes/onnx-stream-to-sequence.md.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/StateSlots.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_ONNXSTREAMTOSEQUENCEPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;

namespace {

namespace od = lstm_opt::onnx;

constexpr llvm::StringLiteral kPass = "onnx-stream-to-sequence";

using onnx::StateSlot;
using onnx::StateSlots;

/// The initial-state slot `use` is, if it is one of a recurrent onnx op.
std::optional<StateSlot> initialSlot(OpOperand &use) {
  Operation *op = use.getOwner();
  if (!isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op))
    return std::nullopt;
  if (use.getOperandNumber() == 5)
    return StateSlot(op, 0);
  if (isa<od::LSTMOp>(op) && use.getOperandNumber() == 6)
    return StateSlot(op, 1);
  return std::nullopt;
}

/// The final-state slot `r` is, if it is a recurrent onnx op's Y_h or Y_c.
std::optional<StateSlot> finalSlot(OpResult r) {
  Operation *op = r.getOwner();
  if (!isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op))
    return std::nullopt;
  if (r.getResultNumber() == 1)
    return StateSlot(op, 0);
  if (isa<od::LSTMOp>(op) && r.getResultNumber() == 2)
    return StateSlot(op, 1);
  return std::nullopt;
}

/// A state input and output may differ in how much of their shape the model
/// declares (silero-vad: [2, 1, 128] in, [2, batch, 128] out).
bool compatible(Type a, Type b) {
  return getElementTypeOrSelf(a) == getElementTypeOrSelf(b) &&
         succeeded(verifyCompatibleShape(a, b));
}

StringRef argName(func::FuncOp f, unsigned i) {
  if (auto s = f.getArgAttrOfType<StringAttr>(i, od::attrs::kName))
    return s.getValue();
  return {};
}
StringRef resultName(func::FuncOp f, unsigned i) {
  if (auto s = f.getResultAttrOfType<StringAttr>(i, od::attrs::kName))
    return s.getValue();
  return {};
}

struct StreamToSequence
    : public rnn::impl::ONNXStreamToSequencePassBase<StreamToSequence> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp graph;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isDeclaration()) {
        if (graph) {
          module.emitError() << kPass << ": the module has more than one graph";
          return signalPassFailure();
        }
        graph = f;
      }
    if (!graph) {
      module.emitError() << kPass << ": the module has no graph";
      return signalPassFailure();
    }
    if (failed(rewrite(graph)))
      signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp f) {
    auto fail = [&]() { return f.emitError() << kPass << ": "; };
    if (chunks < 1 || chunks > (int64_t(1) << 31))
      return fail() << "chunks must be in [1, 2^31], not " << int64_t(chunks);
    if (!f.getBody().hasOneBlock())
      return fail() << "the graph must be one block";
    auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
    unsigned nIn = f.getNumArguments(), nOut = f.getNumResults();

    // The state pairs.
    SmallVector<std::pair<unsigned, unsigned>> pairs;
    auto typeOf = [&](unsigned i) { return f.getArgument(i).getType(); };
    if (state != "auto") {
      SmallVector<StringRef> items;
      StringRef(state).split(items, ',', -1, /*KeepEmpty=*/false);
      if (items.empty())
        return fail() << "no state pairs given (IN=OUT[,IN=OUT...] or auto)";
      for (StringRef item : items) {
        auto [in, out] = item.trim().split('=');
        std::optional<unsigned> i, o;
        for (unsigned k = 0; k < nIn; ++k)
          if (argName(f, k) == in.trim())
            i = k;
        for (unsigned k = 0; k < nOut; ++k)
          if (resultName(f, k) == out.trim())
            o = k;
        if (!i)
          return fail() << "'" << in.trim() << "' is not a graph input";
        if (!o)
          return fail() << "'" << out.trim() << "' is not a graph output";
        if (!compatible(typeOf(*i), f.getResultTypes()[*o]))
          return fail() << "state pair " << in.trim() << "=" << out.trim()
                        << " has different types (" << typeOf(*i) << " and "
                        << f.getResultTypes()[*o] << ")";
        for (auto [pi, po] : pairs)
          if (pi == *i || po == *o)
            return fail() << "'" << (pi == *i ? in : out).trim()
                          << "' is in two state pairs";
        pairs.push_back({*i, *o});
      }
    } else {
      SmallVector<StateSlots> read;
      for (unsigned o = 0; o < nOut; ++o)
        read.push_back(onnx::stateSlotsRead(ret.getOperand(o), finalSlot));
      llvm::DenseSet<unsigned> taken;
      for (unsigned i = 0; i < nIn; ++i) {
        StateSlots fed = onnx::stateSlotsFed(f.getArgument(i), initialSlot);
        if (fed.empty())
          continue;
        SmallVector<unsigned> match;
        for (unsigned o = 0; o < nOut; ++o) {
          if (taken.count(o) || !compatible(typeOf(i), f.getResultTypes()[o]))
            continue;
          if (llvm::any_of(fed, [&](auto s) { return read[o].count(s); }))
            match.push_back(o);
        }
        if (match.size() > 1)
          return fail() << "state=auto: input '" << argName(f, i)
                        << "' could pair with outputs '"
                        << resultName(f, match[0]) << "' and '"
                        << resultName(f, match[1]) << "'; name the pairs";
        if (match.size() == 1) {
          pairs.push_back({i, match[0]});
          taken.insert(match[0]);
        }
      }
      if (pairs.empty())
        return fail() << "state=auto found no graph input that is a "
                         "recurrent layer's initial state with an output "
                         "of the same type computed from its final state; "
                         "name the pairs (IN=OUT)";
      std::string list;
      for (auto [i, o] : pairs)
        list += (list.empty() ? "" : ", ") + argName(f, i).str() + "=" +
                resultName(f, o).str();
      f.emitRemark() << kPass << ": state pairs " << list;
    }
    auto isStateIn = [&](unsigned i) {
      return llvm::any_of(pairs, [&](auto p) { return p.first == i; });
    };
    auto isStateOut = [&](unsigned o) {
      return llvm::any_of(pairs, [&](auto p) { return p.second == o; });
    };
    auto stacked = [&](Type t) -> FailureOr<Type> {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt)
        return failure();
      SmallVector<int64_t> shape = {chunks};
      shape.append(rt.getShape().begin(), rt.getShape().end());
      return Type(RankedTensorType::get(shape, rt.getElementType()));
    };

    // The new signature: chunk inputs and outputs with a leading axis.
    SmallVector<Type> inTypes, outTypes;
    for (unsigned i = 0; i < nIn; ++i) {
      if (isStateIn(i)) {
        inTypes.push_back(typeOf(i));
        continue;
      }
      auto t = stacked(typeOf(i));
      if (failed(t))
        return fail() << "input '" << argName(f, i)
                      << "' has no known rank (give --input-shape)";
      inTypes.push_back(*t);
    }
    for (unsigned o = 0; o < nOut; ++o) {
      Type t = f.getResultTypes()[o];
      if (isStateOut(o)) {
        outTypes.push_back(t);
        continue;
      }
      auto s = stacked(t);
      if (failed(s))
        return fail() << "output '" << resultName(f, o)
                      << "' has no known rank";
      outTypes.push_back(*s);
    }

    Block &body = f.getBody().front();
    OpBuilder b(f.getContext());
    Location loc = f.getLoc();
    // The old body moves into the Loop; the function gets a new block.
    Block *top = new Block();
    for (Type t : inTypes)
      top->addArgument(t, loc);
    b.setInsertionPointToStart(top);
    // Initializers stay in the outer graph.
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      if (isa<od::InitializerOp>(op))
        op.moveBefore(top, top->end());
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    auto i1 = RankedTensorType::get({}, b.getI1Type());
    Value trip = od::ConstantOp::create(
        b, loc, i64, DenseElementsAttr::get(i64, ArrayRef<int64_t>{chunks}),
        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    Value cond = od::ConstantOp::create(
        b, loc, i1, DenseElementsAttr::get(i1, ArrayRef<bool>{true}), nullptr,
        nullptr, nullptr, nullptr, nullptr, nullptr);
    SmallVector<Value> loopIns = {trip, cond};
    SmallVector<Type> loopTypes;
    for (auto [i, o] : pairs) {
      loopIns.push_back(top->getArgument(i));
      loopTypes.push_back(f.getResultTypes()[o]);
    }
    SmallVector<unsigned> scanOuts;
    for (unsigned o = 0; o < nOut; ++o)
      if (!isStateOut(o)) {
        scanOuts.push_back(o);
        loopTypes.push_back(outTypes[o]);
      }
    auto loop = od::NodeOp::create(b, loc, loopTypes, loopIns,
                                   b.getStringAttr("Loop"), b.getStringAttr(""),
                                   DictionaryAttr(),
                                   b.getStrArrayAttr({"body"}),
                                   /*graphsCount=*/1);
    Block *lb = new Block();
    loop.getGraphs()[0].push_back(lb);
    Value iter = lb->addArgument(i64, loc);
    Value condIn = lb->addArgument(i1, loc);
    SmallVector<std::string> inNames = {"stream_iteration", "stream_condition"};
    // The old body's arguments: a state from the carried value, a chunk
    // input from Gather(stacked input, iteration).
    b.setInsertionPointToStart(lb);
    SmallVector<Value> mapped(nIn);
    for (auto [i, o] : pairs) {
      mapped[i] = lb->addArgument(typeOf(i), loc);
      inNames.push_back(argName(f, i).str() + "_carried");
    }
    for (unsigned i = 0; i < nIn; ++i)
      if (!isStateIn(i))
        mapped[i] = od::GatherOp::create(b, loc, typeOf(i),
                                         top->getArgument(i), iter,
                                         b.getI64IntegerAttr(0));
    for (unsigned i = 0; i < nIn; ++i)
      body.getArgument(i).replaceAllUsesWith(mapped[i]);
    // Move the ops.
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      op.moveBefore(lb, lb->end());
    SmallVector<Value> yields = {condIn};
    SmallVector<std::string> outNames = {"stream_condition_next"};
    for (auto [i, o] : pairs) {
      yields.push_back(ret.getOperand(o));
      outNames.push_back(resultName(f, o).str() + "_next");
    }
    for (unsigned o : scanOuts) {
      yields.push_back(ret.getOperand(o));
      outNames.push_back(resultName(f, o).str() + "_chunk");
    }
    b.setInsertionPointToEnd(lb);
    SmallVector<StringRef> inRefs(inNames.begin(), inNames.end()),
        outRefs(outNames.begin(), outNames.end());
    od::YieldOp::create(b, loc, yields, b.getStringAttr("stream_body"),
                        b.getStrArrayAttr(inRefs), b.getStrArrayAttr(outRefs));
    // The function's results in their order.
    b.setInsertionPointToEnd(top);
    SmallVector<Value> results(nOut);
    for (auto [k, p] : llvm::enumerate(pairs))
      results[p.second] = loop.getResult(k);
    for (auto [k, o] : llvm::enumerate(scanOuts))
      results[o] = loop.getResult(pairs.size() + k);
    func::ReturnOp::create(b, loc, results);
    ret.erase();
    body.erase();
    f.getBody().push_back(top);
    f.setType(FunctionType::get(f.getContext(), inTypes, outTypes));
    return success();
  }
};
} // namespace

//===- Specialize.cpp - a model specialised to concrete inputs -------------===//
//
// What the CPU backend needs before it compiles a whole real model: the graph
// specialised to the values of small integer inputs (a sample rate that
// selects an If branch), shape arithmetic turned into constants, If nodes
// with a constant condition replaced by the branch taken, and the ONNX
// library's shape inference run again over the result so that every value
// downstream gets a static type.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Target/ONNX/ONNXExport.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallString.h"

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;

func::FuncOp lstm_opt::graphFunction(ModuleOp m) {
  for (auto f : m.getOps<func::FuncOp>())
    if (!f.isExternal() && !f.isPrivate())
      return f;
  return {};
}

namespace {

/// Integer values computable at compile time become initializers, so that
/// shape inference sees them as constants.
int foldIntegerValues(func::FuncOp func, od::ConstantBuilder &consts) {
  int n = 0;
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    if (op->getNumResults() != 1 ||
        isa<od::InitializerOp, od::ConstantOp, od::NoneOp>(op) ||
        op->getNumRegions() || op->use_empty())
      continue;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isInteger(64) ||
        type.getNumElements() > 4096)
      continue;
    auto values = od::getConstantInts(op->getResult(0));
    if (!values || (int64_t)values->size() != type.getNumElements())
      continue;
    Value c = consts.getI64(op->getLoc(), "folded", type.getShape(), *values);
    op->getResult(0).replaceAllUsesWith(c);
    ++n;
  }
  return n;
}

/// Replaces each If whose condition is a compile-time constant by the ops of
/// the branch it takes (with a remark on the If if `remark`). Returns the
/// number replaced.
int inlineConstantIfs(func::FuncOp func, bool remark = false) {
  int n = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<od::NodeOp> ifs;
    func.walk([&](od::NodeOp node) {
      if (node.getOpType() == "If" && node.getDomain().empty() &&
          node.getNumRegions() == 2 && node.getInputs().size() == 1)
        ifs.push_back(node);
    });
    for (od::NodeOp node : ifs) {
      auto cond = od::getConstantInts(node.getInputs()[0]);
      auto names = node.getGraphAttrs();
      if (!cond || cond->size() != 1 || !names || names->size() != 2)
        continue;
      StringRef want = (*cond)[0] ? "then_branch" : "else_branch";
      if (remark)
        node.emitRemark() << "If decided at compile time: its "
                          << (want == "then_branch" ? "then" : "else")
                          << " branch inlined";
      int index = -1;
      for (auto [i, name] : llvm::enumerate(*names))
        if (cast<StringAttr>(name).getValue() == want)
          index = i;
      if (index < 0)
        continue;
      Block &body = node->getRegion(index).front();
      if (body.getNumArguments())
        continue;
      auto yield = cast<od::YieldOp>(body.getTerminator());
      if (yield.getValues().size() != node.getNumResults())
        continue;
      for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
        op.moveBefore(node);
      for (auto [res, v] : llvm::zip(node.getResults(), yield.getValues()))
        res.replaceAllUsesWith(v);
      node.erase();
      ++n;
      changed = true;
      break; // the walk's list is stale now
    }
  }
  return n;
}

/// Erases onnx ops whose results nobody reads (the comparisons that fed an
/// inlined If, the shape arithmetic replaced by constants). Graph-input
/// initializers stay: they are part of the signature.
void eraseDeadOps(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (!isa<od::ONNXDialect>(op->getDialect()) ||
          op->hasTrait<OpTrait::IsTerminator>() || op->getNumResults() == 0)
        return;
      if (auto init = dyn_cast<od::InitializerOp>(op); init && init.getGraphInput())
        return;
      if (llvm::all_of(op->getResults(), [](Value v) { return v.use_empty(); }))
        dead.push_back(op);
    });
    // Innermost first is not needed: a dead op's region holds only its own
    // ops. Skip ops nested in one being erased.
    for (Operation *op : dead) {
      bool nested = llvm::any_of(dead, [&](Operation *o) {
        return o != op && o->isProperAncestor(op);
      });
      if (nested)
        continue;
      op->erase();
      changed = true;
    }
  }
}

/// Runs the ONNX library's shape inference over `module` (an export and
/// import in memory, without value_info so that nothing stale is kept) and
/// replaces it by the result.
LogicalResult reinferShapes(OwningOpRef<ModuleOp> &module,
                            const ONNXImportOptions &options) {
  ModuleOp m = *module;
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  ONNXExportOptions exportOptions;
  exportOptions.writeValueInfo = false;
  exportOptions.runChecker = false;
  if (failed(exportONNX(m, os, ONNXFileFormat::Binary, exportOptions)))
    return failure();
  auto source = m->getAttrOfType<StringAttr>(od::attrs::kSourceFile);
  SmallString<64> name(source ? source.getValue() : "model");
  OwningOpRef<ModuleOp> refined =
      importONNXBuffer(bytes, ONNXFileFormat::Binary, name, /*baseDir=*/"",
                       m.getContext(), options);
  if (!refined)
    return failure();
  module = std::move(refined);
  return success();
}

} // namespace

LogicalResult lstm_opt::inlineShapeDecidedIfs(OwningOpRef<ModuleOp> &module,
                                              const ONNXImportOptions &options,
                                              int &inlined) {
  // Bounded: each round that continues inlines at least one If.
  for (int round = 0; round < 8; ++round) {
    func::FuncOp func = graphFunction(*module);
    if (!func)
      return success();
    // The ONNX library leaves a shape symbolic where it depends on values
    // (silero-vad's reflect padding, sized by shape arithmetic); the
    // dialect's rules, which evaluate that arithmetic, may know it.
    if (options.shapeInference)
      od::refineShapes(func);
    int n = inlineConstantIfs(func, /*remark=*/true);
    if (!n)
      return success();
    inlined += n;
    eraseDeadOps(func);
    if (failed(reinferShapes(module, options)))
      return failure();
  }
  return success();
}

LogicalResult lstm_opt::unrollRecurrentLoops(OwningOpRef<ModuleOp> &module,
                                             const ONNXImportOptions &options,
                                             ArrayRef<int64_t> skip,
                                             bool keepMarks) {
  // A loop whose trip count follows from an earlier loop's results (a
  // second Keras layer, sized by the first's output) is known only once the
  // earlier one is unrolled and the types re-inferred: rounds until none
  // unrolls (bounded, as the If inlining is).
  // "Not known when the model is compiled" may be known a round later: those
  // remarks are held back and only the last round's are emitted.
  MLIRContext *ctx = module->getContext();
  SmallVector<std::pair<Location, std::string>> unknown;
  bool any = false;
  int64_t ordinalBase = 0;
  for (int round = 0; round < 8; ++round) {
    func::FuncOp func = graphFunction(*module);
    int64_t loops = func ? od::countLoopNodes(func) : 0;
    if (!loops)
      break;
    unknown.clear();
    int n;
    {
      ScopedDiagnosticHandler hold(ctx, [&](Diagnostic &d) {
        std::string msg = d.str();
        if (d.getSeverity() != DiagnosticSeverity::Remark ||
            !StringRef(msg).contains("not known when the model is compiled"))
          return failure(); // passed on
        unknown.push_back({d.getLocation(), std::move(msg)});
        return success();
      });
      n = od::unrollRecurrentLoops(func, {}, skip, ordinalBase);
    }
    if (!n)
      break;
    ordinalBase += loops;
    any = true;
    eraseDeadOps(func);
    if (failed(reinferShapes(module, options)))
      return failure();
  }
  for (auto &[loc, msg] : unknown)
    emitRemark(loc) << msg;
  if (any && !keepMarks)
    od::stripUnrolledMarks(graphFunction(*module));
  return success();
}

bool lstm_opt::parseInputBinding(StringRef spec, std::string &name,
                                 std::vector<int64_t> &values) {
  auto [n, list] = spec.split('=');
  if (n.empty() || spec.find('=') == StringRef::npos)
    return false;
  SmallVector<StringRef> parts;
  list.split(parts, ',', -1, /*KeepEmpty=*/false);
  values.clear();
  for (StringRef part : parts) {
    int64_t x;
    if (part.trim().getAsInteger(10, x))
      return false;
    values.push_back(x);
  }
  name = n.str();
  return !values.empty();
}

/// The graph function of a module (its one public function), or null.

LogicalResult lstm_opt::specializeModel(
    OwningOpRef<ModuleOp> &module,
    const std::map<std::string, std::vector<int64_t>> &values,
    const ONNXImportOptions &options) {
  func::FuncOp func = graphFunction(*module);
  if (!func)
    return success();
  // Bind the inputs: their uses read constants; the argument stays, so the
  // signature (and the compiled code's ABI) does not change.
  {
    od::ConstantBuilder consts(func);
    std::set<std::string> bound;
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto name = func.getArgAttrOfType<StringAttr>(i, od::attrs::kName);
      if (!name)
        continue;
      auto it = values.find(name.str());
      if (it == values.end())
        continue;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() ||
          !type.getElementType().isInteger(64) ||
          type.getNumElements() != (int64_t)it->second.size())
        return func.emitError() << "cannot bind graph input '" << name.getValue()
                                << "' of type " << arg.getType() << " to "
                                << it->second.size() << " int64 values";
      Value c = consts.getI64(arg.getLoc(), name.getValue(), type.getShape(),
                              it->second);
      arg.replaceAllUsesWith(c);
      bound.insert(name.str());
    }
    for (const auto &[name, v] : values)
      if (!bound.count(name))
        return func.emitError() << "the model has no graph input named '"
                                << name << "' to bind";
  }
  // The bound inputs are marked on the arguments (`onnx.bound`): the
  // compiled model's signature records them, and runners refuse other
  // values.
  auto markBound = [&](func::FuncOp f) {
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (auto name = f.getArgAttrOfType<StringAttr>(i, od::attrs::kName))
        if (auto it = values.find(name.str()); it != values.end())
          f.setArgAttr(i, "onnx.bound",
                       DenseI64ArrayAttr::get(f.getContext(), it->second));
  };
  markBound(func);
  // Rounds of: integer values to constants, Ifs with constant conditions
  // inlined, dead ops erased, then the ONNX library's shape inference over
  // the result (an export and import in memory, without value_info so that
  // nothing stale is kept), whose static types let the next round evaluate
  // more (an If whose condition reads a shape computed after another If).
  // Bounded: each round that continues inlines at least one If.
  for (int round = 0; round < 8; ++round) {
    od::ConstantBuilder consts(func);
    int folded = foldIntegerValues(func, consts);
    int inlined = inlineConstantIfs(func);
    if (inlined)
      folded += foldIntegerValues(func, consts);
    eraseDeadOps(func);
    bool allStatic = true;
    func.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (auto r = dyn_cast<RankedTensorType>(t);
            !isa<NoneType>(t) && (!r || !r.hasStaticShape()))
          allStatic = false;
    });
    // Nothing new to infer from: inference already ran over this graph.
    if ((allStatic && !inlined) || (!inlined && !folded))
      return success();
    if (failed(reinferShapes(module, options)))
      return failure();
    func = graphFunction(*module);
    if (func)
      markBound(func);
    if (!inlined)
      return success();
  }
  return success();
}

LogicalResult lstm_opt::dropBoundInputs(
    ModuleOp module, const std::map<std::string, std::vector<int64_t>> &values) {
  func::FuncOp func = graphFunction(module);
  if (!func || values.empty())
    return success();
  llvm::BitVector drop(func.getNumArguments());
  std::string record;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, od::attrs::kName);
    if (!name || !values.count(name.str()))
      continue;
    if (!func.getArgument(i).use_empty())
      return func.emitError() << "graph input '" << name.getValue()
                              << "' is still read after binding it";
    drop.set(i);
    if (!record.empty())
      record += ";";
    record += name.str() + "=";
    for (auto [k, v] : llvm::enumerate(values.at(name.str())))
      record += (k ? "," : "") + std::to_string(v);
  }
  if (failed(func.eraseArguments(drop)))
    return failure();
  Builder b(module.getContext());
  SmallVector<Attribute> props;
  if (auto old = module->getAttrOfType<ArrayAttr>(od::attrs::kMetadataProps))
    props.append(old.begin(), old.end());
  props.push_back(b.getStrArrayAttr({"lstm_opt.bound", record}));
  module->setAttr(od::attrs::kMetadataProps, b.getArrayAttr(props));
  return success();
}

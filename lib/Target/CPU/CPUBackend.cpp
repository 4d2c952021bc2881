//===- CPUBackend.cpp - compile a model for this CPU ----------------------===//

#include "lstm-opt/Target/CPU/CPUBackend.h"

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/ONNX/Utils/StateSlots.h"
#include "lstm-opt/Pipelines/Pipelines.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

#include <dlfcn.h>
#include <set>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::cpu;

#ifndef LSTM_OPT_LLVM_LIBDIR
#define LSTM_OPT_LLVM_LIBDIR "/usr/lib/llvm-22/lib"
#endif

namespace {

/// Where a runtime library of the project is: next to the library this code
/// is in (an installed tree, a pip-installed package), else where the build
/// put it (`built`, the build tree's path).
[[maybe_unused]] std::string projectLibrary(const char *built) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&projectLibrary), &info) && info.dli_fname) {
    SmallString<256> p(llvm::sys::path::parent_path(info.dli_fname));
    llvm::sys::path::append(p, llvm::sys::path::filename(built));
    if (llvm::sys::fs::exists(p))
      return std::string(p);
  }
  return built;
}

/// Runtime libraries the generated code may call: libomp when threads > 1
/// (and the project's GPU/cuDNN runtimes). Nothing of MLIR's: strided
/// copies are loops (cpu-expand-copies), so a model needs no MLIR library
/// where it runs.
std::vector<std::string> runtimeLibraries(const CPUOptions &options) {
  std::vector<std::string> libs;
  if (options.threads > 1)
    libs.push_back(std::string(LSTM_OPT_LLVM_LIBDIR) + "/libomp.so");
#ifdef LSTM_OPT_CUDNN_RUNTIME
  if (options.cuda)
    libs.push_back(projectLibrary(LSTM_OPT_CUDNN_RUNTIME));
#endif
#ifdef LSTM_OPT_GPU_RUNTIME
  if (options.gpuKernels)
    libs.push_back(projectLibrary(LSTM_OPT_GPU_RUNTIME));
#endif
  return libs;
}

std::string dtypeOf(Type t) {
  if (t.isF32()) return "float32";
  if (t.isF64()) return "float64";
  if (t.isF16()) return "float16";
  if (t.isInteger(64)) return "int64";
  if (t.isInteger(32)) return "int32";
  if (t.isInteger(16)) return "int16";
  // A uint8 graph input (a quantized model's) keeps its signedness.
  if (t.isUnsignedInteger(8)) return "uint8";
  if (t.isInteger(8)) return "int8";
  if (t.isInteger(1)) return "bool";
  return "";
}

void initNativeTarget() {
  static bool once = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)once;
}

/// True if `triple` names another machine than this one.
bool isForeignTriple(StringRef triple) {
  if (triple.empty())
    return false;
  llvm::Triple t(llvm::Triple::normalize(triple));
  llvm::Triple host(llvm::sys::getProcessTriple());
  return t.getArch() != host.getArch() || t.getOS() != host.getOS();
}

/// The target machine builder for `cpu` and `triple`: this host with its
/// features for "" or "host", else this host's architecture with the named
/// CPU's features; for a foreign triple, that triple with the named CPU
/// ("generic" when none).
llvm::Expected<llvm::orc::JITTargetMachineBuilder>
targetMachineBuilder(StringRef cpu, StringRef triple, bool pic) {
  initNativeTarget();
  bool foreign = isForeignTriple(triple);
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> jtmb =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (foreign) {
    static bool once = [] {
      llvm::InitializeAllTargetInfos();
      llvm::InitializeAllTargets();
      llvm::InitializeAllTargetMCs();
      llvm::InitializeAllAsmPrinters();
      return true;
    }();
    (void)once;
    llvm::consumeError(jtmb.takeError());
    llvm::Triple t(llvm::Triple::normalize(triple));
    std::string error;
    if (!llvm::TargetRegistry::lookupTarget(t, error))
      return llvm::createStringError("unknown --target-triple '" +
                                     triple.str() + "': " + error);
    jtmb = llvm::orc::JITTargetMachineBuilder(t);
    if (cpu.empty() || cpu == "host") {
      if (cpu == "host")
        return llvm::createStringError(
            "--target-cpu=host names this machine's CPU; for --target-triple=" +
            triple.str() + " name one of that architecture (e.g. generic, "
            "neoverse-n1, cortex-a76) or leave --target-cpu out");
      cpu = "generic";
    }
  }
  if (!jtmb)
    return jtmb.takeError();
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (pic)
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
  if (!cpu.empty() && cpu != "host") {
    std::string error;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(jtmb->getTargetTriple(), error);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target ? target->createMCSubtargetInfo(jtmb->getTargetTriple(), "", "")
               : nullptr);
    if (!sti || !sti->isCPUStringValid(cpu))
      return llvm::createStringError(
          "unknown --target-cpu '" + cpu.str() + "' for " +
          jtmb->getTargetTriple().str() +
          (jtmb->getTargetTriple().isX86()
               ? " (e.g. host, x86-64-v3 for AVX2, x86-64-v4 for AVX-512, "
                 "znver3, znver4, sapphirerapids)"
               : " (e.g. generic, neoverse-n1, cortex-a76)"));
    jtmb->setCPU(cpu.str());
    jtmb->getFeatures() = llvm::SubtargetFeatures();
  }
  return *jtmb;
}

/// The features a target machine builder's CPU has, as its subtarget sees
/// them.
std::unique_ptr<llvm::MCSubtargetInfo>
subtargetOf(const llvm::orc::JITTargetMachineBuilder &jtmb) {
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(jtmb.getTargetTriple(), error);
  if (!target)
    return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(target->createMCSubtargetInfo(
      jtmb.getTargetTriple(), jtmb.getCPU(), jtmb.getFeatures().getString()));
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
targetMachine(const CPUOptions &options, bool pic) {
  auto jtmb = targetMachineBuilder(options.targetCPU, options.targetTriple, pic);
  if (!jtmb)
    return jtmb.takeError();
  return jtmb->createTargetMachine();
}

std::string signatureJSON(const ModelSignature &sig) {
  llvm::json::Object o;
  auto list = [](const std::vector<TensorSig> &ts) {
    llvm::json::Array a;
    for (const TensorSig &t : ts) {
      llvm::json::Object e{{"name", t.name}, {"dtype", t.dtype},
                           {"shape", llvm::json::Array(t.shape)}};
      if (!t.bound.empty())
        e["bound"] = llvm::json::Array(t.bound);
      a.push_back(std::move(e));
    }
    return a;
  };
  o["inputs"] = list(sig.inputs);
  o["outputs"] = list(sig.outputs);
  if (!sig.state.empty()) {
    llvm::json::Array pairs;
    for (auto [i, o2] : sig.state)
      pairs.push_back(llvm::json::Object{{"input", sig.inputs[i].name},
                                         {"output", sig.outputs[o2].name}});
    o["state"] = std::move(pairs);
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(o));
  return out;
}

/// `lstm_opt_model_packed(void **descs)`: calls the C interface with one
/// descriptor pointer per argument (what lstm-run uses for JIT and .so
/// models alike), and `lstm_opt_model_signature`, the signature as a JSON
/// C string.
void addPackedEntryAndSignature(ModuleOp module, const ModelSignature &sig) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  std::string json = signatureJSON(sig);
  json.push_back('\0');
  auto strType = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), json.size());
  LLVM::GlobalOp::create(b, loc, strType, /*isConstant=*/true,
                         LLVM::Linkage::External, kSignatureSymbol,
                         b.getStringAttr(json));
  size_t n = sig.inputs.size() + sig.outputs.size();
  auto i64 = IntegerType::get(ctx, 64);
  // The C interface honours each descriptor's offset: the generated code
  // reads its buffers at `aligned` (static offset 0), so MLIR's wrapper
  // becomes an internal function, called with a copy of each descriptor
  // whose aligned pointer is moved by the offset (and the offset 0).
  auto dense = module.lookupSymbol<LLVM::LLVMFuncOp>(
      (std::string("_mlir_ciface_") + kEntryName));
  std::string denseName = std::string("_mlir_ciface_") + kEntryName + "_dense";
  dense.setSymName(denseName);
  dense.setLinkage(LLVM::Linkage::Internal);
  {
    auto wrapper = LLVM::LLVMFuncOp::create(
        b, loc, std::string("_mlir_ciface_") + kEntryName,
        dense.getFunctionType());
    Block *body = wrapper.addEntryBlock(b);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    Value zero = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
    SmallVector<Value> args;
    size_t i = 0;
    for (const auto *list : {&sig.inputs, &sig.outputs})
      for (const TensorSig &t : *list) {
        int64_t rank = t.shape.size();
        SmallVector<Type> fields{ptr, ptr, i64};
        if (rank) {
          fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
          fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
        }
        auto descType = LLVM::LLVMStructType::getLiteral(ctx, fields);
        Value in = body->getArgument(i++);
        Value d = LLVM::LoadOp::create(b, loc, descType, in);
        Value aligned = LLVM::ExtractValueOp::create(b, loc, d, 1);
        Value offset = LLVM::ExtractValueOp::create(b, loc, d, 2);
        Value bytes = LLVM::MulOp::create(
            b, loc, offset,
            LLVM::ConstantOp::create(
                b, loc, i64, b.getI64IntegerAttr((int64_t)t.elementSize())));
        Value moved = LLVM::GEPOp::create(b, loc, ptr, IntegerType::get(ctx, 8),
                                          aligned, ValueRange{bytes});
        d = LLVM::InsertValueOp::create(b, loc, d, moved, 1);
        d = LLVM::InsertValueOp::create(b, loc, d, zero, 2);
        Value copy = LLVM::AllocaOp::create(b, loc, ptr, descType, one);
        LLVM::StoreOp::create(b, loc, d, copy);
        args.push_back(copy);
      }
    LLVM::CallOp::create(b, loc, dense, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto fn = LLVM::LLVMFuncOp::create(b, loc, kPackedEntryName, fnType);
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  SmallVector<Value> args;
  for (size_t i = 0; i < n; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, entry->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{(int32_t)i});
    args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  LLVM::CallOp::create(b, loc, dense, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

/// The most threads `team` can use: what convert-rnn-to-cpu states on a
/// layer's team (`lstm_opt.max_threads`: its hidden blocks), else the largest
/// iteration count of its work-sharing loops when their bounds are constants
/// (those of the hidden-block loops are).
std::optional<int64_t> teamTripCount(omp::ParallelOp team) {
  if (auto cap = team->getAttrOfType<IntegerAttr>(kTeamMaxThreadsAttr))
    return cap.getInt() >= 1 ? std::optional<int64_t>(cap.getInt()) : std::nullopt;
  std::optional<int64_t> most;
  bool known = true;
  auto constant = [](Value v) -> std::optional<int64_t> {
    if (auto c = v.getDefiningOp<LLVM::ConstantOp>())
      if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
        return i.getInt();
    return std::nullopt;
  };
  team.walk([&](omp::LoopNestOp nest) {
    int64_t trips = 1;
    for (auto [lb, ub, step] : llvm::zip(nest.getLoopLowerBounds(),
                                         nest.getLoopUpperBounds(),
                                         nest.getLoopSteps())) {
      auto l = constant(lb), u = constant(ub), st = constant(step);
      if (!l || !u || !st || *st <= 0) {
        known = false;
        return;
      }
      int64_t span = *u - *l + (nest.getLoopInclusive() ? 1 : 0);
      trips *= std::max<int64_t>(0, llvm::divideCeil(span, *st));
    }
    most = std::max(most.value_or(0), trips);
  });
  if (!known || !most || *most < 1)
    return std::nullopt;
  return most;
}

/// The thread count as a setting of the compiled model rather than a
/// constant: every OpenMP team (`omp.parallel`, one per parallel hidden-block
/// loop) takes its size from the exported global kThreadsSymbol, which
/// starts at the count the model was compiled with and
/// `int32_t lstm_opt_model_set_threads(int32_t n)` changes (n < 1 counts as
/// 1; a model with no parallel loop stays at 1 and says so by returning 1).
/// `int32_t lstm_opt_model_threads(void)` reads it. A team is capped at its
/// loop's iteration count (teamTripCount). Loads and stores are
/// atomic (monotonic): a call may change it while another thread runs the
/// model; a run in progress sees either count, step by step. `otherTeams`:
/// code linked beside the model (a stream's block entry) has teams that
/// read the same global, so the setting is live even without teams here.
void addThreadSetting(ModuleOp module, unsigned compiledThreads,
                      bool otherTeams) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = module.getLoc();
  auto i32 = IntegerType::get(ctx, 32);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<omp::ParallelOp> teams;
  module.walk([&](omp::ParallelOp op) { teams.push_back(op); });
  bool live = !teams.empty() || otherTeams;
  int32_t initial = live ? (int32_t)std::max(1u, compiledThreads) : 1;
  b.setInsertionPointToEnd(module.getBody());
  LLVM::GlobalOp::create(b, loc, i32, /*isConstant=*/false,
                         LLVM::Linkage::External, kThreadsSymbol,
                         b.getI32IntegerAttr(initial), /*alignment=*/4);
  auto load = [&](OpBuilder &at) -> Value {
    Value addr = LLVM::AddressOfOp::create(at, loc, ptr, kThreadsSymbol);
    return LLVM::LoadOp::create(at, loc, i32, addr, /*alignment=*/4,
                                /*isVolatile=*/false, /*isNonTemporal=*/false,
                                /*isInvariant=*/false,
                                /*isInvariantGroup=*/false,
                                LLVM::AtomicOrdering::monotonic);
  };
  for (omp::ParallelOp team : teams) {
    if (!team.getNumThreads())
      continue;
    OpBuilder at(team);
    Value n = load(at);
    // A team never larger than the loop it shares: threads beyond its
    // iteration count (the layer's hidden blocks) would only wait at the
    // barrier every step.
    if (std::optional<int64_t> trips = teamTripCount(team)) {
      Value cap = LLVM::ConstantOp::create(
          at, loc, i32,
          at.getI32IntegerAttr((int32_t)std::min<int64_t>(*trips, INT32_MAX)));
      Value above = LLVM::ICmpOp::create(at, loc, LLVM::ICmpPredicate::sgt, n, cap);
      n = LLVM::SelectOp::create(at, loc, above, cap, n);
    }
    team.getNumThreadsMutable().assign(n);
  }
  // int32_t lstm_opt_model_threads(void)
  b.setInsertionPointToEnd(module.getBody());
  auto getter = LLVM::LLVMFuncOp::create(
      b, loc, kThreadsGetterName, LLVM::LLVMFunctionType::get(i32, {}));
  b.setInsertionPointToStart(getter.addEntryBlock(b));
  LLVM::ReturnOp::create(b, loc, load(b));
  // int32_t lstm_opt_model_set_threads(int32_t n)
  b.setInsertionPointToEnd(module.getBody());
  auto setter = LLVM::LLVMFuncOp::create(
      b, loc, kThreadsSetterName, LLVM::LLVMFunctionType::get(i32, {i32}));
  Block *entry = setter.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value one = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(1));
  Value n = one;
  if (live) {
    Value arg = entry->getArgument(0);
    Value below = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, arg, one);
    n = LLVM::SelectOp::create(b, loc, below, one, arg);
  }
  Value addr = LLVM::AddressOfOp::create(b, loc, ptr, kThreadsSymbol);
  LLVM::StoreOp::create(b, loc, n, addr, /*alignment=*/4, /*isVolatile=*/false,
                        /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                        LLVM::AtomicOrdering::monotonic);
  LLVM::ReturnOp::create(b, loc, n);
}

} // namespace

llvm::Expected<ModelSignature>
lstm_opt::cpu::parseSignatureJSON(llvm::StringRef text) {
  auto v = llvm::json::parse(text);
  if (!v)
    return v.takeError();
  ModelSignature sig;
  auto *o = v->getAsObject();
  if (!o)
    return llvm::createStringError("the signature is not a JSON object");
  for (auto [key, list] : {std::pair{"inputs", &sig.inputs}, std::pair{"outputs", &sig.outputs}}) {
    auto *a = o->getArray(key);
    if (!a)
      return llvm::createStringError("the signature has no '%s'", key);
    for (const llvm::json::Value &e : *a) {
      auto *t = e.getAsObject();
      if (!t || !t->getString("name") || !t->getString("dtype") || !t->getArray("shape"))
        return llvm::createStringError("a malformed tensor in the signature");
      TensorSig ts;
      ts.name = t->getString("name")->str();
      ts.dtype = t->getString("dtype")->str();
      for (const llvm::json::Value &d : *t->getArray("shape"))
        ts.shape.push_back(d.getAsInteger().value_or(0));
      if (auto *b = t->getArray("bound"))
        for (const llvm::json::Value &d : *b)
          ts.bound.push_back(d.getAsInteger().value_or(0));
      list->push_back(std::move(ts));
    }
  }
  if (auto *pairs = o->getArray("state")) {
    auto find = [](const std::vector<TensorSig> &ts, std::optional<StringRef> n)
        -> std::optional<unsigned> {
      for (unsigned i = 0; n && i < ts.size(); ++i)
        if (ts[i].name == *n)
          return i;
      return std::nullopt;
    };
    for (const llvm::json::Value &e : *pairs) {
      auto *p = e.getAsObject();
      auto in = p ? find(sig.inputs, p->getString("input")) : std::nullopt;
      auto out = p ? find(sig.outputs, p->getString("output")) : std::nullopt;
      if (!in || !out)
        return llvm::createStringError("a malformed state pair in the signature");
      sig.state.push_back({*in, *out});
    }
  }
  return sig;
}

bool ModelSignature::isStateInput(unsigned i) const {
  return llvm::any_of(state, [&](auto p) { return p.first == i; });
}
bool ModelSignature::isStateOutput(unsigned o) const {
  return llvm::any_of(state, [&](auto p) { return p.second == o; });
}

using onnx::StateSlots;

/// A recurrent layer's initial state (h0: slot 0, c0: slot 1) that `use`
/// is, or its final state (h_n: 0, c_n: 1) that `r` is.
static std::optional<onnx::StateSlot> initialSlot(OpOperand &use) {
  auto slot = [&](auto layer) -> std::optional<onnx::StateSlot> {
    MutableOperandRange h0 = layer.getH0Mutable(), c0 = layer.getC0Mutable();
    if (h0.size() && &h0[0] == &use)
      return onnx::StateSlot(layer.getOperation(), 0);
    if (c0.size() && &c0[0] == &use)
      return onnx::StateSlot(layer.getOperation(), 1);
    return std::nullopt;
  };
  if (auto seq = dyn_cast<rnn::SequenceOp>(use.getOwner()))
    return slot(seq);
  if (auto rec = dyn_cast<rnn::RecurrenceOp>(use.getOwner()))
    return slot(rec);
  return std::nullopt;
}
static std::optional<onnx::StateSlot> finalSlot(OpResult r) {
  if (!isa<rnn::SequenceOp, rnn::RecurrenceOp>(r.getOwner()))
    return std::nullopt;
  return onnx::StateSlot(r.getOwner(), r.getResultNumber() == 2 ? 1 : 0);
}

/// Resolves `spec` (CPUOptions::statePairs) into `sig.state`.
static LogicalResult resolveStatePairs(func::FuncOp graph, StringRef spec,
                                       ModelSignature &sig) {
  if (spec.empty())
    return success();
  auto sameType = [&](unsigned i, unsigned o) {
    return sig.inputs[i].dtype == sig.outputs[o].dtype &&
           sig.inputs[i].shape == sig.outputs[o].shape;
  };
  auto describe = [](const TensorSig &t) {
    std::string s = t.dtype + "[";
    for (size_t k = 0; k < t.shape.size(); ++k)
      s += (k ? ", " : "") + std::to_string(t.shape[k]);
    return s + "]";
  };
  if (spec != "auto") {
    SmallVector<StringRef> items;
    spec.split(items, ',');
    for (StringRef item : items) {
      auto [in, out] = item.trim().split('=');
      auto find = [](const std::vector<TensorSig> &ts, StringRef n) {
        for (unsigned i = 0; i < ts.size(); ++i)
          if (ts[i].name == n)
            return (int)i;
        return -1;
      };
      int i = find(sig.inputs, in.trim()), o = find(sig.outputs, out.trim());
      if (!item.contains('=') || in.trim().empty() || out.trim().empty())
        return graph.emitError() << "--state takes IN=OUT[,IN=OUT...] or auto, "
                                    "not '" << spec << "'";
      if (i < 0)
        return graph.emitError() << "--state: the model has no input '"
                                 << in.trim() << "'";
      if (o < 0)
        return graph.emitError() << "--state: the model has no output '"
                                 << out.trim() << "'";
      if (!sameType(i, o))
        return graph.emitError()
               << "--state: input '" << in.trim() << "' is "
               << describe(sig.inputs[i]) << " but output '" << out.trim()
               << "' is " << describe(sig.outputs[o])
               << "; a state pair needs one type";
      if (!sig.inputs[i].bound.empty())
        return graph.emitError() << "--state: input '" << in.trim()
                                 << "' is bound (--bind); it cannot be a state";
      if (sig.isStateInput(i) || sig.isStateOutput(o))
        return graph.emitError() << "--state: '" << item.trim()
                                 << "' pairs a tensor that is already paired";
      sig.state.push_back({(unsigned)i, (unsigned)o});
    }
    return success();
  }
  // auto: an input and an output of one type, the input feeding exactly the
  // recurrent state slots the output is computed from.
  Block &top = graph.front();
  auto ret = top.getTerminator();
  std::vector<StateSlots> fed(sig.inputs.size()), read(sig.outputs.size());
  for (unsigned i = 0; i < sig.inputs.size(); ++i)
    fed[i] = onnx::stateSlotsFed(graph.getArgument(i), initialSlot);
  for (unsigned o = 0; o < sig.outputs.size(); ++o)
    read[o] = onnx::stateSlotsRead(ret->getOperand(o), finalSlot);
  std::string list;
  for (unsigned i = 0; i < sig.inputs.size(); ++i) {
    if (fed[i].empty() || !sig.inputs[i].bound.empty())
      continue;
    SmallVector<unsigned> matches;
    for (unsigned o = 0; o < sig.outputs.size(); ++o)
      if (sameType(i, o) && read[o] == fed[i])
        matches.push_back(o);
    if (matches.size() != 1) {
      graph.emitRemark() << "--state=auto: input '" << sig.inputs[i].name
                         << "' feeds a recurrent state but "
                         << (matches.empty() ? "no output of its type"
                                             : "several outputs of its type")
                         << " is computed from that state alone; not paired";
      continue;
    }
    if (sig.isStateOutput(matches[0]))
      continue;
    sig.state.push_back({i, matches[0]});
    list += (list.empty() ? "" : ", ") + sig.inputs[i].name + "=" +
            sig.outputs[matches[0]].name;
  }
  if (sig.state.empty())
    return graph.emitError()
           << "--state=auto: no graph input becomes a recurrent layer's "
              "initial state with an output of its type computed from that "
              "layer's final state; name the pairs (--state IN=OUT)";
  graph.emitRemark() << "state pairs (--state=auto): " << list;
  return success();
}

size_t TensorSig::elementSize() const {
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float16" || dtype == "int16") return 2;
  return 1;
}

int64_t TensorSig::numElements() const {
  // -1 for a shape a (corrupt) signature gives that no tensor can have;
  // lstm-run checks every signature's byte sizes before allocating.
  return checkedNumElements(shape).value_or(-1);
}

void lstm_opt::cpu::setPipelineOptions(const CPUOptions &options,
                                       CPUPipelineOptions &p) {
  p.recognize = options.recognize;
  p.threads = options.threads;
  p.batchTile = options.batchTile;
  p.gemmChunkSteps = options.gemmChunkSteps;
  p.precision = options.precision;
  p.layerPrecisions = options.layerPrecisions;
  // The kernels' vector shape from the target (the defaults, AVX-512's, if
  // the target cannot be described: compiling then fails with that error).
  TargetVector tv;
  if (auto v = targetVector(options))
    tv = *v;
  else
    llvm::consumeError(v.takeError());
  p.vectorWidth = tv.lanes;
  p.vectorRegisters = tv.registers;
  p.cacheBytes = tv.cacheBytes;
  p.l1CacheBytes = tv.l1CacheBytes;
  p.bf16Dot = tv.bf16Dot;
  p.int8Dot = tv.int8Dot;
  p.int8PairDot = tv.int8PairDot;
  p.dotIsa = tv.arm ? "aarch64" : "x86";
  p.cudnn = options.cuda;
  p.cudnnDataType = options.cudnnDataType;
  p.cudnnAlgo = options.cudnnAlgo;
  p.gpuKernelsOnCPU = options.gpuKernelsOnCPU;
  p.gpuKernels = options.gpuKernels;
  p.gpuDesign = options.gpuKernelsDesign;
  p.gpuUnitsPerBlock = options.gpuUnitsPerBlock;
  p.gpuLayerChoice = options.gpuLayerChoice;
  p.gpuGridSync = options.gpuGridSync;
  p.gpuWeights = options.gpuWeights;
  p.gpuChip = options.gpuChip;
  p.gpuBinaryFormat = options.gpuBinaryFormat;
}

void lstm_opt::cpu::buildCPUPipeline(OpPassManager &pm,
                                     const CPUOptions &options) {
  CPUPipelineOptions p;
  setPipelineOptions(options, p);
  lstm_opt::buildCPUPipeline(pm, p);
}

bool lstm_opt::cpu::haveCUDNNRuntime() {
#ifdef LSTM_OPT_CUDNN_RUNTIME
  return true;
#else
  return false;
#endif
}

bool lstm_opt::cpu::cudaDeviceAvailable() {
#ifdef LSTM_OPT_CUDNN_RUNTIME
  // The runtime is loaded, not linked (no CUDA dependency for the library).
  std::string err;
  auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(
      projectLibrary(LSTM_OPT_CUDNN_RUNTIME).c_str(), &err);
  if (!lib.isValid())
    return false;
  auto probe = reinterpret_cast<int (*)()>(
      lib.getAddressOfSymbol("lstm_opt_cuda_device_available"));
  return probe && probe() != 0;
#else
  return false;
#endif
}

bool lstm_opt::cpu::haveGPURuntime() {
#ifdef LSTM_OPT_GPU_RUNTIME
  return true;
#else
  return false;
#endif
}

bool lstm_opt::cpu::gpuDeviceAvailable() {
#ifdef LSTM_OPT_GPU_RUNTIME
  // Loaded, not linked: it needs the CUDA driver (libcuda.so.1), so without
  // one the load itself fails, cleanly.
  std::string err;
  auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(
      projectLibrary(LSTM_OPT_GPU_RUNTIME).c_str(), &err);
  if (!lib.isValid())
    return false;
  auto probe = reinterpret_cast<int (*)()>(
      lib.getAddressOfSymbol("lstm_opt_gpu_device_available"));
  return probe && probe() != 0;
#else
  return false;
#endif
}

namespace {

/// True if `f` holds an op of the gpu dialect (a host function of
/// convert-rnn-to-gpu{mapping=gpu}).
bool usesGPUOps(func::FuncOp f) {
  return f
      .walk([](Operation *op) {
        return isa<gpu::GPUDialect>(op->getDialect()) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Runs the CPU pipeline with the GPU host functions' bodies set aside while
/// buffers are bufferized and deallocated (ownership-based deallocation
/// rejects gpu.launch_func, an op with unknown memory effects, and the
/// functions free their device buffers themselves): they are private
/// declarations meanwhile, and get their bodies back for the lowering.
LogicalResult runGPUKernelsPipeline(ModuleOp module, const CPUOptions &options) {
  MLIRContext *ctx = module.getContext();
  CPUPipelineOptions p;
  setPipelineOptions(options, p);
  auto run = [&](void (*build)(OpPassManager &, const CPUPipelineOptions &))
      -> LogicalResult {
    PassManager pm(ctx);
    build(pm, p);
    return pm.run(module);
  };
  if (failed(run(buildCPULayerPipeline)))
    return failure();
  // (Layers sent to cuDNN by gpuLayerChoice run on the GPU too.)
  if (module.getOps<gpu::BinaryOp>().empty() &&
      !module.lookupSymbol("lstm_opt_rnn_forward_memref"))
    module.emitWarning() << "no recurrent layer runs on the GPU (no "
                            "rnn.sequence after recognition); the model is "
                            "compiled for the CPU only";
  std::vector<std::pair<func::FuncOp, OwningOpRef<func::FuncOp>>> aside;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal() || !f.isPrivate() || !usesGPUOps(f))
      continue;
    OwningOpRef<func::FuncOp> holder = cast<func::FuncOp>(f->cloneWithoutRegions());
    holder->getBody().takeBody(f.getBody());
    aside.emplace_back(f, std::move(holder));
  }
  if (failed(run(buildCPUBufferPipeline)))
    return failure();
  for (auto &[f, holder] : aside)
    f.getBody().takeBody(holder->getBody());
  return run(buildCPULLVMPipeline);
}

} // namespace

FailureOr<ModelSignature>
lstm_opt::cpu::lowerToLLVMDialect(ModuleOp module, const CPUOptions &options) {
  if (options.cuda && !haveCUDNNRuntime()) {
    module.emitError() << "this build has no cuDNN runtime (configure with "
                          "CUDA and cuDNN found and LSTM_OPT_ENABLE_CUDNN=ON)";
    return failure();
  }
  if (options.gpuKernels) {
    if (!haveGPURuntime()) {
      module.emitError() << "this build has no GPU runtime "
                            "(libLstmOptGPURuntime is built when the CUDA "
                            "toolkit is found)";
      return failure();
    }
    if (options.gpuChip != "sm_80" && options.gpuChip != "sm_90") {
      module.emitError() << "--gpu-chip takes sm_80 or sm_90, not '"
                         << options.gpuChip << "'";
      return failure();
    }
    if (options.gpuBinaryFormat != "fatbin" && options.gpuBinaryFormat != "bin" &&
        options.gpuBinaryFormat != "isa") {
      module.emitError() << "the GPU binary format is fatbin, bin or isa, not '"
                         << options.gpuBinaryFormat << "'";
      return failure();
    }
  }
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  // gpu-module-to-binary serialises through the #nvvm.target's interface.
  if (options.gpuKernels)
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ctx->appendDialectRegistry(registry);

  // Recognition first: a layer it imports (a DynamicQuantizeLSTM, whose
  // shapes the importer cannot infer) can make the graph's results static.
  CPUOptions opts = options;
  if (opts.recognize) {
    PassManager pm(ctx);
    buildRecognitionPipeline(pm, /*importQuantized=*/true,
                             opts.quantizedInt8 ? "int8" : "f32");
    if (failed(pm.run(module)))
      return failure();
    opts.recognize = false;
  }

  func::FuncOp graph;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal() || f.isPrivate())
      continue;
    if (graph) {
      f.emitError() << "the CPU backend compiles one graph function; found '"
                    << graph.getSymName() << "' and '" << f.getSymName() << "'";
      return failure();
    }
    graph = f;
  }
  if (!graph) {
    module.emitError() << "no graph function to compile";
    return failure();
  }
  ModelSignature sig;
  auto record = [&](Type t, DictionaryAttr attrs, unsigned i, bool input,
                    std::vector<TensorSig> &out) -> LogicalResult {
    TensorSig s;
    auto name = attrs ? attrs.getAs<StringAttr>("onnx.name") : StringAttr();
    s.name = name ? name.str()
                  : (input ? "input" : "output") + std::to_string(i);
    auto tt = dyn_cast<RankedTensorType>(t);
    if (!tt || !tt.hasStaticShape()) {
      if (input)
        graph.emitError() << "graph input '" << s.name << "' has type " << t
                          << "; the CPU backend needs static shapes: give "
                             "it with --input-shape="
                          << s.name
                          << "=D0xD1x... (lstm_opt.compile: input_shapes=; "
                             "lstm-run takes the shapes of the inputs it is "
                             "given)";
      else
        graph.emitError()
            << "graph output '" << s.name << "' has type " << t
            << ": its shape is not known when the model is compiled, even "
               "with the inputs' shapes given (a Loop that stays a loop, or "
               "a size computed from input values: the remarks name the "
               "node); the CPU backend needs static shapes";
      return failure();
    }
    s.dtype = dtypeOf(tt.getElementType());
    if (s.dtype.empty()) {
      graph.emitError() << "graph " << (input ? "input" : "output") << " '"
                        << s.name << "' has unsupported element type "
                        << tt.getElementType();
      return failure();
    }
    s.shape.assign(tt.getShape().begin(), tt.getShape().end());
    if (auto b = attrs ? attrs.getAs<DenseI64ArrayAttr>("onnx.bound") : nullptr)
      s.bound.assign(b.asArrayRef().begin(), b.asArrayRef().end());
    out.push_back(std::move(s));
    return success();
  };
  FunctionType ft = graph.getFunctionType();
  for (unsigned i = 0; i < ft.getNumInputs(); ++i)
    if (failed(record(ft.getInput(i), graph.getArgAttrDict(i), i, true, sig.inputs)))
      return failure();
  for (unsigned i = 0; i < ft.getNumResults(); ++i)
    if (failed(record(ft.getResult(i), graph.getResultAttrDict(i), i, false,
                      sig.outputs)))
      return failure();
  if (failed(resolveStatePairs(graph, options.statePairs, sig)))
    return failure();
  if (module.lookupSymbol(kEntryName) && module.lookupSymbol(kEntryName) != graph) {
    module.emitError() << "symbol '" << kEntryName << "' is already taken";
    return failure();
  }
  if (failed(SymbolTable::replaceAllSymbolUses(graph, StringAttr::get(ctx, kEntryName), module)))
    return failure();
  SymbolTable::setSymbolName(graph, kEntryName);
  graph->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(ctx));
  for (unsigned i = 0; i < ft.getNumInputs(); ++i)
    graph.setArgAttrs(i, ArrayRef<NamedAttribute>{});
  for (unsigned i = 0; i < ft.getNumResults(); ++i)
    graph.setResultAttrs(i, ArrayRef<NamedAttribute>{});

  if (opts.gpuKernels) {
    if (failed(runGPUKernelsPipeline(module, opts)))
      return failure();
  } else {
    PassManager pm(ctx);
    buildCPUPipeline(pm, opts);
    if (failed(pm.run(module)))
      return failure();
  }
  module.walk([](Operation *op) { onnx::stripONNXAttrs(op); });
  addPackedEntryAndSignature(module, sig);
  addThreadSetting(module, options.threads, options.otherTeams);
  return sig;
}

bool lstm_opt::cpu::hasOpenMPTeams(ModuleOp module) {
  return module
      .walk([](omp::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

namespace {
/// This machine's caches per core, from sysfs (0 where unknown).
struct HostCaches {
  /// The largest private cache (L2, else L1).
  int64_t privateBytes = 0;
  /// The level-1 data cache.
  int64_t l1DataBytes = 0;
};
} // namespace

static HostCaches readHostCaches() {
  HostCaches caches;
  int64_t bestLevel = 0;
  for (int i = 0; i < 16; ++i) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    auto read = [&](const char *name) -> std::string {
      // sysfs files claim a size they do not have: read to the end.
      auto buf = llvm::MemoryBuffer::getFileAsStream(dir + name);
      return buf ? (*buf)->getBuffer().trim().str() : std::string();
    };
    std::string level = read("level"), type = read("type"), size = read("size");
    if (level.empty() || size.empty())
      break;
    if (type != "Data" && type != "Unified")
      continue;
    // Shared caches (L3) are not private to a core.
    if (level != "1" && level != "2")
      continue;
    StringRef digits = StringRef(size).take_while(llvm::isDigit);
    uint64_t n = 0;
    if (digits.empty() || digits.size() > 9 || digits.getAsInteger(10, n))
      continue;
    StringRef unit = StringRef(size).drop_front(digits.size());
    int64_t bytes = unit == "K"   ? (int64_t)n << 10
                    : unit == "M" ? (int64_t)n << 20
                    : unit.empty() ? (int64_t)n
                                   : 0;
    int64_t lv = level == "2" ? 2 : 1;
    if (bytes > 0 && lv >= bestLevel) {
      caches.privateBytes = bytes;
      bestLevel = lv;
    }
    if (bytes > 0 && lv == 1 && type == "Data")
      caches.l1DataBytes = bytes;
  }
  return caches;
}

/// Read once per process.
static const HostCaches &hostCaches() {
  static const HostCaches caches = readHostCaches();
  return caches;
}

llvm::Expected<cpu::TargetVector>
lstm_opt::cpu::targetVector(const CPUOptions &options) {
  auto jtmb = targetMachineBuilder(options.targetCPU, options.targetTriple,
                                   /*pic=*/false);
  if (!jtmb)
    return jtmb.takeError();
  auto sti = subtargetOf(*jtmb);
  if (!sti)
    return llvm::createStringError("no LLVM target for " +
                                   jtmb->getTargetTriple().str());
  const llvm::Triple &triple = jtmb->getTargetTriple();
  TargetVector v;
  if (triple.isX86()) {
    if (sti->checkFeatures("+avx512f")) {
      v = {16, 32, 1 << 20, sti->checkFeatures("+avx512bf16"),
           sti->checkFeatures("+avx512vnni")};
      v.int8PairDot = sti->checkFeatures("+avx512bw");
    } else if (sti->checkFeatures("+avx")) { // AVX, or AVX2 with FMA
      v = {8, 16, 1 << 20, false, sti->checkFeatures("+avxvnni")};
      v.int8PairDot = sti->checkFeatures("+avx2");
    } else {
      v = {4, 16}; // SSE
      v.int8PairDot = sti->checkFeatures("+sse2");
    }
  } else if (triple.isAArch64()) {
    // NEON; BF16's bfdot and DotProd's sdot where the CPU has them.
    v = {4, 32, 1 << 20, sti->checkFeatures("+bf16"),
         sti->checkFeatures("+dotprod"), /*arm=*/true};
    v.int8PairDot = true; // NEON's smull and saddlp
  } else {
    v = {4, 16}; // generic 128-bit vectors
  }
  bool host = !isForeignTriple(options.targetTriple) &&
              (options.targetCPU.empty() || options.targetCPU == "host");
  if (host) {
    if (int64_t bytes = hostCaches().privateBytes)
      v.cacheBytes = bytes;
    // (A level-1 cache smaller than 8 KiB or larger than 1 MiB is taken
    // for a misreading.)
    if (int64_t bytes = hostCaches().l1DataBytes;
        bytes >= (8 << 10) && bytes <= (1 << 20))
      v.l1CacheBytes = bytes;
  }
  return v;
}

/// The x86 extensions that compiled f32 code may use, by the names both
/// LLVM's subtarget features and GCC's __builtin_cpu_supports know.
static const char *const kX86Features[] = {
    "sse3",     "ssse3",    "sse4.1",   "sse4.2",   "sse4a",    "popcnt",
    "avx",      "avx2",     "fma",      "fma4",     "xop",      "f16c",
    "bmi",      "bmi2",     "avx512f",  "avx512vl", "avx512bw", "avx512dq",
    "avx512cd", "avx512vbmi", "avx512ifma", "avx512vnni", "avx512bf16",
    "avxvnni"};

/// The AArch64 extensions that compiled code may use beyond the base
/// (Armv8-A with NEON), by LLVM's feature names, with the Linux hardware
/// capability that says a CPU has each: auxiliary vector entry (16:
/// AT_HWCAP, 26: AT_HWCAP2) and bit.
struct AArch64Feature {
  const char *name;
  int auxv, bit;
};
static const AArch64Feature kAArch64Features[] = {
    {"lse", 16, 8},       // HWCAP_ATOMICS
    {"fullfp16", 16, 10}, // HWCAP_ASIMDHP
    {"dotprod", 16, 20},  // HWCAP_ASIMDDP
    {"sve", 16, 22},      // HWCAP_SVE
    {"sve2", 26, 1},      // HWCAP2_SVE2
    {"i8mm", 26, 13},     // HWCAP2_I8MM
    {"bf16", 26, 14},     // HWCAP2_BF16
};

/// The extensions of kX86Features (x86) or kAArch64Features (AArch64) that
/// the code for `options`' target uses (none elsewhere, or when the target
/// cannot be described).
static SmallVector<const char *> targetCheckedFeatures(const CPUOptions &options) {
  SmallVector<const char *> needed;
  auto jtmb = targetMachineBuilder(options.targetCPU, options.targetTriple,
                                   /*pic=*/false);
  if (!jtmb) {
    llvm::consumeError(jtmb.takeError());
    return needed;
  }
  auto sti = subtargetOf(*jtmb);
  if (!sti)
    return needed;
  if (jtmb->getTargetTriple().isX86())
    for (const char *f : kX86Features)
      if (sti->checkFeatures(std::string("+") + f))
        needed.push_back(f);
  if (jtmb->getTargetTriple().isAArch64())
    for (const AArch64Feature &f : kAArch64Features)
      if (sti->checkFeatures(std::string("+") + f.name))
        needed.push_back(f.name);
  return needed;
}

std::string lstm_opt::cpu::streamSource(const ModelSignature &sig,
                                        const StreamBlock *block) {
  if (sig.state.empty())
    return "";
  std::string src;
  llvm::raw_string_ostream os(src);
  size_t nIn = sig.inputs.size(), nOut = sig.outputs.size(), nState = sig.state.size();
  size_t maxRank = 0;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const TensorSig &t : *list)
      maxRank = std::max(maxRank, t.shape.size());
  if (block)
    for (const auto *list : {&block->sig.inputs, &block->sig.outputs})
      for (const TensorSig &t : *list)
        maxRank = std::max(maxRank, t.shape.size());
  auto ints = [&](auto &&values) {
    os << "{";
    bool first = true;
    for (auto v : values) {
      os << (first ? "" : ", ") << v;
      first = false;
    }
    if (first)
      os << "0";
    os << "}";
  };
  std::vector<int64_t> rank, bytes, shape, shapeAt, inSlot(nIn, -1), outSlot(nOut, -1);
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const TensorSig &t : *list) {
      rank.push_back(t.shape.size());
      bytes.push_back(t.numElements() * (int64_t)t.elementSize());
      shapeAt.push_back(shape.size());
      shape.insert(shape.end(), t.shape.begin(), t.shape.end());
    }
  // Bound inputs (--bind) are the stream's own too: their values are
  // constants here (slot -2), not arguments of the calls.
  for (size_t i = 0; i < nIn; ++i)
    if (!sig.inputs[i].bound.empty())
      inSlot[i] = -2;
  std::vector<int64_t> stateIn, stateOut;
  for (size_t k = 0; k < nState; ++k) {
    inSlot[sig.state[k].first] = k;
    outSlot[sig.state[k].second] = k;
    stateIn.push_back(sig.state[k].first);
    stateOut.push_back(sig.state[k].second);
  }
  os << "\n/* Generated by lstm-opt: the stream API of a model with state\n"
        "   (--state); see docs/RuntimeABI.md. */\n"
        "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
        "void lstm_opt_model_packed(void **descs);\n\n";
  os << "#define LSTM_OPT_NIN " << nIn << "\n#define LSTM_OPT_NOUT " << nOut
     << "\n#define LSTM_OPT_NSTATE " << nState << "\n#define LSTM_OPT_MAXRANK "
     << maxRank << "\n";
  os << "static const int64_t kRank[] = ";
  ints(rank);
  os << ";\nstatic const int64_t kBytes[] = ";
  ints(bytes);
  os << ";\nstatic const int64_t kShape[] = ";
  ints(shape);
  os << ";\nstatic const int64_t kShapeAt[] = ";
  ints(shapeAt);
  os << ";\n/* Per input / output: its state slot, or -1. */\n"
        "static const int64_t kInSlot[] = ";
  ints(inSlot);
  os << ";\nstatic const int64_t kOutSlot[] = ";
  ints(outSlot);
  os << ";\nstatic const int64_t kStateIn[] = ";
  ints(stateIn);
  os << ";\n";
  for (size_t i = 0; i < nIn; ++i)
    if (!sig.inputs[i].bound.empty()) {
      os << "static const int64_t kBound" << i << "[] = ";
      ints(sig.inputs[i].bound);
      os << ";\n";
    }
  if (block) {
    // The block entry's shapes (the chunk inputs and outputs with a leading
    // axis of LSTM_OPT_BLOCK; the state and bound inputs as they are).
    std::vector<int64_t> bRank, bShape, bShapeAt;
    for (const auto *list : {&block->sig.inputs, &block->sig.outputs})
      for (const TensorSig &t : *list) {
        bRank.push_back(t.shape.size());
        bShapeAt.push_back(bShape.size());
        bShape.insert(bShape.end(), t.shape.begin(), t.shape.end());
      }
    os << "#define LSTM_OPT_BLOCK " << block->chunks << "\n"
       << "void lstm_opt_block_packed(void **descs);\n"
       << "static const int64_t kBlockRank[] = ";
    ints(bRank);
    os << ";\nstatic const int64_t kBlockShape[] = ";
    ints(bShape);
    os << ";\nstatic const int64_t kBlockShapeAt[] = ";
    ints(bShapeAt);
    os << ";\n";
  }
  os << "static const void *const kBound[] = {";
  for (size_t i = 0; i < nIn; ++i)
    os << (i ? ", " : "")
       << (sig.inputs[i].bound.empty() ? std::string("0")
                                       : "kBound" + std::to_string(i));
  os << "};\n\n";
  os << R"C(struct lstm_opt_stream {
  void *cur[LSTM_OPT_NSTATE];  /* the state the next call reads */
  void *next[LSTM_OPT_NSTATE]; /* where it writes the new one */
};
typedef struct lstm_opt_stream lstm_opt_stream;

static void *lstm_opt_alloc64(int64_t n) {
  void *p = NULL;
  return posix_memalign(&p, 64, n > 0 ? (size_t)n : 64) ? NULL : p;
}

void lstm_opt_stream_destroy(lstm_opt_stream *s) {
  if (!s)
    return;
  for (int k = 0; k < LSTM_OPT_NSTATE; ++k) {
    free(s->cur[k]);
    free(s->next[k]);
  }
  free(s);
}

void lstm_opt_stream_reset(lstm_opt_stream *s) {
  for (int k = 0; k < LSTM_OPT_NSTATE; ++k)
    memset(s->cur[k], 0, (size_t)kBytes[kStateIn[k]]);
}

lstm_opt_stream *lstm_opt_stream_create(void) {
  lstm_opt_stream *s = (lstm_opt_stream *)calloc(1, sizeof *s);
  if (!s)
    return NULL;
  for (int k = 0; k < LSTM_OPT_NSTATE; ++k) {
    s->cur[k] = lstm_opt_alloc64(kBytes[kStateIn[k]]);
    s->next[k] = lstm_opt_alloc64(kBytes[kStateIn[k]]);
    if (!s->cur[k] || !s->next[k]) {
      lstm_opt_stream_destroy(s);
      return NULL;
    }
  }
  lstm_opt_stream_reset(s);
  return s;
}

int32_t lstm_opt_stream_num_states(void) { return LSTM_OPT_NSTATE; }

int64_t lstm_opt_stream_state_bytes(int32_t k) {
  return k < 0 || k >= LSTM_OPT_NSTATE ? -1 : kBytes[kStateIn[k]];
}

int32_t lstm_opt_stream_get_state(const lstm_opt_stream *s, int32_t k, void *dst) {
  if (!s || k < 0 || k >= LSTM_OPT_NSTATE)
    return -1;
  memcpy(dst, s->cur[k], (size_t)kBytes[kStateIn[k]]);
  return 0;
}

int32_t lstm_opt_stream_set_state(lstm_opt_stream *s, int32_t k, const void *src) {
  if (!s || k < 0 || k >= LSTM_OPT_NSTATE)
    return -1;
  memcpy(s->cur[k], src, (size_t)kBytes[kStateIn[k]]);
  return 0;
}

/* A memref descriptor: two pointers, the offset, sizes, strides (8 bytes
   each on the 64-bit targets lstm-opt compiles for). */
static void lstm_opt_describe_as(int64_t *d, const void *data, int64_t r,
                                 const int64_t *shape) {
  void *p = (void *)data;
  memcpy(&d[0], &p, sizeof p);
  memcpy(&d[1], &p, sizeof p);
  d[2] = 0;
  int64_t stride = 1;
  for (int64_t j = r; j-- > 0;) {
    d[3 + j] = shape[j];
    d[3 + r + j] = stride;
    stride *= shape[j];
  }
}

static void lstm_opt_describe(int64_t *d, int a, const void *data) {
  lstm_opt_describe_as(d, data, kRank[a], &kShape[kShapeAt[a]]);
}

/* The state a call wrote becomes the one the next call reads. */
static void lstm_opt_swap_states(lstm_opt_stream *s) {
  for (int k = 0; k < LSTM_OPT_NSTATE; ++k) {
    void *t = s->cur[k];
    s->cur[k] = s->next[k];
    s->next[k] = t;
  }
}

void lstm_opt_stream_run(lstm_opt_stream *s, const void *const *inputs,
                         void *const *outputs) {
  int64_t d[LSTM_OPT_NIN + LSTM_OPT_NOUT][3 + 2 * LSTM_OPT_MAXRANK];
  void *descs[LSTM_OPT_NIN + LSTM_OPT_NOUT];
  int in = 0, out = 0;
  for (int a = 0; a < LSTM_OPT_NIN; ++a) {
    lstm_opt_describe(d[a], a,
                      kInSlot[a] >= 0    ? s->cur[kInSlot[a]]
                      : kInSlot[a] == -2 ? kBound[a]
                                         : inputs[in++]);
    descs[a] = d[a];
  }
  for (int o = 0; o < LSTM_OPT_NOUT; ++o) {
    int a = LSTM_OPT_NIN + o;
    lstm_opt_describe(d[a], a, kOutSlot[o] >= 0 ? s->next[kOutSlot[o]] : outputs[out++]);
    descs[a] = d[a];
  }
  lstm_opt_model_packed(descs);
  lstm_opt_swap_states(s);
}

void lstm_opt_stream_run_chunks(lstm_opt_stream *s, int64_t n,
                                const void *const *inputs, void *const *outputs) {
  const void *in[LSTM_OPT_NIN + 1];
  void *out[LSTM_OPT_NOUT + 1];
  int64_t c = 0;
#ifdef LSTM_OPT_BLOCK
  /* Whole blocks through the batched entry: what does not read the state
     once over the block's chunks, each recurrent layer over their steps. */
  for (; n - c >= LSTM_OPT_BLOCK; c += LSTM_OPT_BLOCK) {
    int64_t d[LSTM_OPT_NIN + LSTM_OPT_NOUT][3 + 2 * LSTM_OPT_MAXRANK];
    void *descs[LSTM_OPT_NIN + LSTM_OPT_NOUT];
    int i = 0, o = 0;
    for (int a = 0; a < LSTM_OPT_NIN; ++a) {
      const void *p = kInSlot[a] >= 0    ? s->cur[kInSlot[a]]
                      : kInSlot[a] == -2 ? kBound[a]
                                         : (const char *)inputs[i++] + c * kBytes[a];
      lstm_opt_describe_as(d[a], p, kBlockRank[a], &kBlockShape[kBlockShapeAt[a]]);
      descs[a] = d[a];
    }
    for (int b = 0; b < LSTM_OPT_NOUT; ++b) {
      int a = LSTM_OPT_NIN + b;
      void *p = kOutSlot[b] >= 0 ? s->next[kOutSlot[b]]
                                 : (char *)outputs[o++] + c * kBytes[a];
      lstm_opt_describe_as(d[a], p, kBlockRank[a], &kBlockShape[kBlockShapeAt[a]]);
      descs[a] = d[a];
    }
    lstm_opt_block_packed(descs);
    lstm_opt_swap_states(s);
  }
#endif
  for (; c < n; ++c) {
    int i = 0, o = 0;
    for (int a = 0; a < LSTM_OPT_NIN; ++a)
      if (kInSlot[a] == -1) {
        in[i] = (const char *)inputs[i] + c * kBytes[a];
        ++i;
      }
    for (int b = 0; b < LSTM_OPT_NOUT; ++b)
      if (kOutSlot[b] < 0) {
        out[o] = (char *)outputs[o] + c * kBytes[LSTM_OPT_NIN + b];
        ++o;
      }
    lstm_opt_stream_run(s, in, out);
  }
}
)C";
  return src;
}

/// Whether this machine has the feature `name` of kX86Features or
/// kAArch64Features. On AArch64 Linux from the hardware capabilities, as
/// the compiled check reads them: LLVM's host features do not list
/// dotprod, bf16, i8mm or fullfp16 there.
static bool hostHasFeature(StringRef name) {
#if defined(__aarch64__) && defined(__linux__)
  for (const AArch64Feature &f : kAArch64Features)
    if (name == f.name)
      return (getauxval(f.auxv) >> f.bit) & 1;
  return true;
#else
  static const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  return host.lookup(name);
#endif
}

std::string lstm_opt::cpu::cpuCheckSource(const CPUOptions &options) {
  std::string cpu = options.targetCPU.empty() ? "host" : options.targetCPU;
  std::string src;
  llvm::raw_string_ostream os(src);
  os << "/* Generated by lstm-opt: which instruction-set features this CPU\n"
        "   lacks among those the model was compiled for. */\n"
        "#include <stddef.h>\n#include <string.h>\n";
  SmallVector<const char *> needed = targetCheckedFeatures(options);
  bool aarch64 = false;
  if (auto jtmb = targetMachineBuilder(options.targetCPU, options.targetTriple,
                                       /*pic=*/false))
    aarch64 = jtmb->getTargetTriple().isAArch64();
  else
    llvm::consumeError(jtmb.takeError());
  if (aarch64 && !needed.empty())
    os << "#include <sys/auxv.h>\n";
  os << "\nconst char *lstm_opt_model_cpu_check(void) {\n";
  if (needed.empty()) {
    os << "  return NULL;\n}\n";
    return src;
  }
  std::string prefix = "this CPU lacks instruction-set features the model "
                       "was compiled for (--target-cpu=" + cpu + "):";
  os << "  static char msg[" << 16 * needed.size() + 8 << "];\n"
     << "  static char out[" << prefix.size() + 16 * needed.size() + 8
     << "];\n  msg[0] = 0;\n";
  if (aarch64) {
    // Linux's hardware capabilities (getauxval; bits of <asm/hwcap.h>).
    os << "  unsigned long cap = getauxval(16), cap2 = getauxval(26);\n";
    for (const char *f : needed)
      for (const AArch64Feature &af : kAArch64Features)
        if (StringRef(af.name) == f)
          os << "  if (!((" << (af.auxv == 16 ? "cap" : "cap2") << " >> "
             << af.bit << ") & 1)) strcat(msg, \" " << f << "\");\n";
  } else {
    os << "  __builtin_cpu_init();\n";
    for (const char *f : needed)
      os << "  if (!__builtin_cpu_supports(\"" << f << "\")) strcat(msg, \" "
         << f << "\");\n";
  }
  os << "  if (!msg[0]) return NULL;\n"
     << "  strcpy(out, \"" << prefix << "\");\n"
     << "  strcat(out, msg);\n  return out;\n}\n";
  return src;
}

LogicalResult lstm_opt::cpu::emitObjectFile(ModuleOp module, StringRef path,
                                            const CPUOptions &options,
                                            bool blockEntry,
                                            StringRef onlyExport) {
  auto tm = targetMachine(options, /*pic=*/true);
  if (!tm) {
    module.emitError() << "no target machine: "
                       << llvm::toString(tm.takeError());
    return failure();
  }
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmCtx);
  if (!llvmModule) {
    module.emitError() << "translation to LLVM IR failed";
    return failure();
  }
  llvmModule->setDataLayout((*tm)->createDataLayout());
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  if (blockEntry) {
    // One entry, renamed; everything else it defines stays inside.
    auto hide = [](llvm::GlobalValue &g) {
      if (!g.isDeclaration() && !g.hasLocalLinkage())
        g.setLinkage(llvm::GlobalValue::InternalLinkage);
    };
    for (llvm::Function &fn : *llvmModule)
      if (fn.getName() == "lstm_opt_model_packed")
        fn.setName("lstm_opt_block_packed");
      else
        hide(fn);
    // The thread setting is the model's own (it is linked beside it): the
    // block's teams read that global, and lstm_opt_model_set_threads
    // reaches them too.
    for (llvm::GlobalVariable &g : llvmModule->globals())
      if (g.getName() == kThreadsSymbol) {
        g.setInitializer(nullptr);
        g.setLinkage(llvm::GlobalValue::ExternalLinkage);
      } else {
        hide(g);
      }
    for (llvm::GlobalAlias &g : llvmModule->aliases())
      hide(g);
  }
  if (!onlyExport.empty()) {
    for (llvm::Function &fn : *llvmModule) {
      if (fn.isDeclaration())
        continue;
      fn.addFnAttr("no-builtins");
      if (fn.getName() != onlyExport)
        fn.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    for (llvm::GlobalVariable &g : llvmModule->globals())
      if (!g.isDeclaration())
        g.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  if (llvm::Error e = makeOptimizingTransformer(3, 0, tm->get())(llvmModule.get())) {
    module.emitError() << "LLVM optimisation failed: " << llvm::toString(std::move(e));
    return failure();
  }
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    module.emitError() << "cannot write '" << path << "': " << ec.message();
    return failure();
  }
  llvm::legacy::PassManager codegen;
  bool assembly = llvm::sys::path::extension(path) == ".s";
  // Assembly with the code generator's comments: a register spilled to the
  // stack shows as "# 32-byte Spill" / "Folded Reload".
  if (assembly)
    (*tm)->Options.MCOptions.AsmVerbose = true;
  if ((*tm)->addPassesToEmitFile(codegen, out.os(), nullptr,
                                 assembly ? llvm::CodeGenFileType::AssemblyFile
                                          : llvm::CodeGenFileType::ObjectFile)) {
    module.emitError() << "this target cannot emit object files";
    return failure();
  }
  codegen.run(*llvmModule);
  out.keep();
  return success();
}

std::string lstm_opt::cpu::cHeader(const ModelSignature &sig) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto ctype = [](const std::string &d) -> std::string {
    if (d == "float32") return "float";
    if (d == "float64") return "double";
    if (d == "int64") return "int64_t";
    if (d == "int32") return "int32_t";
    if (d == "int16") return "int16_t";
    if (d == "float16") return "uint16_t";
    return d == "int8" ? "int8_t" : "uint8_t";
  };
  std::set<std::pair<std::string, size_t>> descs;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const TensorSig &t : *list)
      descs.insert({ctype(t.dtype), t.shape.size()});
  auto descName = [&](const TensorSig &t) {
    std::string c = ctype(t.dtype);
    if (c.size() > 2 && c.substr(c.size() - 2) == "_t")
      c = c.substr(0, c.size() - 2);
    return "lstm_opt_memref_" + c + "_" + std::to_string(t.shape.size()) + "d";
  };
  os << "/* Generated by lstm-opt --target=cpu: the C interface of a compiled "
        "model.\n   See docs/RuntimeABI.md. All shapes are fixed at compile "
        "time. */\n#ifndef LSTM_OPT_MODEL_H\n#define LSTM_OPT_MODEL_H\n\n"
        "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
        "/* Null when this CPU has the instruction-set features the model was\n"
        "   compiled for (--target-cpu), else a message naming those it lacks.\n"
        "   Call it before _mlir_ciface_lstm_opt_model (lstm_opt_model_run\n"
        "   does, and aborts with the message). */\n"
        "const char *lstm_opt_model_cpu_check(void);\n\n"
        "/* Threads of the model's parallel loops (an OpenMP team per loop):\n"
        "   the --threads it was compiled with until set; n < 1 counts as 1.\n"
        "   Returns the count in effect (always 1 for a model without\n"
        "   parallel loops). Safe to call while another thread runs it. */\n"
        "int32_t lstm_opt_model_set_threads(int32_t n);\n"
        "int32_t lstm_opt_model_threads(void);\n\n";
  os << "/* MLIR's strided memref descriptor, one per element type and rank. */\n";
  for (const auto &[c, rank] : descs) {
    std::string base = c.size() > 2 && c.substr(c.size() - 2) == "_t"
                           ? c.substr(0, c.size() - 2) : c;
    os << "typedef struct {\n  " << c << " *allocated;\n  " << c
       << " *aligned;\n  int64_t offset;\n";
    if (rank)
      os << "  int64_t sizes[" << rank << "];\n  int64_t strides[" << rank << "];\n";
    os << "} lstm_opt_memref_" << base << "_" << rank << "d;\n\n";
  }
  auto comment = [&](const TensorSig &t) {
    os << "/* " << t.name << ": " << t.dtype << "[";
    llvm::interleaveComma(t.shape, os);
    os << "]";
    if (!t.bound.empty()) {
      os << ", compiled for the value ";
      llvm::interleaveComma(t.bound, os);
      os << " only (--bind)";
    }
    os << " */";
  };
  os << "/* Inputs, then outputs (written by the call). */\n";
  os << "void _mlir_ciface_" << kEntryName << "(";
  bool first = true;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const TensorSig &t : *list) {
      os << (first ? "\n    " : ",\n    ") << descName(t) << " * ";
      comment(t);
      first = false;
    }
  os << ");\n\n";
  os << "/* Contiguous buffers in the same order; a convenience wrapper. */\n"
     << "static inline void " << kEntryName << "_run(";
  first = true;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const TensorSig &t : *list) {
      os << (first ? "" : ", ") << (list == &sig.inputs ? "const " : "")
         << ctype(t.dtype) << " *arg" << (&t - list->data()) + (list == &sig.outputs ? sig.inputs.size() : 0);
      first = false;
    }
  os << ") {\n";
  os << "  const char *cpu = lstm_opt_model_cpu_check();\n"
        "  if (cpu) {\n    fprintf(stderr, \"lstm_opt_model: %s\\n\", cpu);\n"
        "    abort();\n  }\n";
  size_t k = 0;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const TensorSig &t : *list) {
      os << "  " << descName(t) << " d" << k << " = {(" << ctype(t.dtype)
         << " *)arg" << k << ", (" << ctype(t.dtype) << " *)arg" << k << ", 0";
      if (!t.shape.empty()) {
        os << ", {";
        llvm::interleaveComma(t.shape, os);
        os << "}, {";
        int64_t stride = 1;
        std::vector<int64_t> strides(t.shape.size());
        for (size_t j = t.shape.size(); j-- > 0;) {
          strides[j] = stride;
          stride *= t.shape[j];
        }
        llvm::interleaveComma(strides, os);
        os << "}";
      }
      os << "};\n";
      ++k;
    }
  os << "  _mlir_ciface_" << kEntryName << "(";
  for (size_t j = 0; j < k; ++j)
    os << (j ? ", " : "") << "&d" << j;
  os << ");\n}\n\n";
  if (!sig.state.empty()) {
    os << "/* The model's state (--state) lives in a stream: ";
    for (size_t j = 0; j < sig.state.size(); ++j)
      os << (j ? ", " : "") << "state " << j << " = input '"
         << sig.inputs[sig.state[j].first].name << "' -> output '"
         << sig.outputs[sig.state[j].second].name << "'";
    os << ".\n   A stream starts at zeros; each run reads its state and writes the\n"
          "   new one in place. Streams are independent (one per thread at a time;\n"
          "   many at once share the weights). */\n"
          "typedef struct lstm_opt_stream lstm_opt_stream;\n"
          "lstm_opt_stream *lstm_opt_stream_create(void); /* NULL: out of memory */\n"
          "void lstm_opt_stream_destroy(lstm_opt_stream *s);\n"
          "void lstm_opt_stream_reset(lstm_opt_stream *s); /* state to zeros */\n"
          "int32_t lstm_opt_stream_num_states(void);\n"
          "int64_t lstm_opt_stream_state_bytes(int32_t k);\n"
          "/* Copy state k out or in (its bytes, contiguous); -1: no such state. */\n"
          "int32_t lstm_opt_stream_get_state(const lstm_opt_stream *s, int32_t k, void *dst);\n"
          "int32_t lstm_opt_stream_set_state(lstm_opt_stream *s, int32_t k, const void *src);\n"
          "/* One call: contiguous buffers of the other inputs (not the bound\n"
          "   ones, --bind: the stream passes their values), then outputs, in\n"
          "   graph order:";
    for (const auto *list : {&sig.inputs, &sig.outputs})
      for (size_t j = 0; j < list->size(); ++j) {
        bool isState = list == &sig.inputs
                           ? sig.isStateInput(j) || !(*list)[j].bound.empty()
                           : sig.isStateOutput(j);
        if (!isState)
          os << " " << (*list)[j].name;
      }
    os << ". */\n"
          "void lstm_opt_stream_run(lstm_opt_stream *s, const void *const *inputs,\n"
          "                         void *const *outputs);\n"
          "/* n successive runs: each buffer holds n chunks back to back. */\n"
          "void lstm_opt_stream_run_chunks(lstm_opt_stream *s, int64_t n,\n"
          "                                const void *const *inputs, void *const *outputs);\n\n";
  }
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* LSTM_OPT_MODEL_H */\n";
  return s;
}

LogicalResult lstm_opt::cpu::emitSharedLibrary(ModuleOp module,
                                               const ModelSignature &sig,
                                               const CPUOptions &options,
                                               StringRef path,
                                               ModuleOp blockModule,
                                               const StreamBlock *block) {
  SmallString<128> obj, blockObj;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("lstm-opt", "o", obj)) {
    module.emitError() << "cannot create a temporary file: " << ec.message();
    return failure();
  }
  llvm::scope_exit removeObj([&] { llvm::sys::fs::remove(obj); });
  if (failed(emitObjectFile(module, obj, options)))
    return failure();
  if (blockModule && block) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("lstm-opt-block", "o", blockObj)) {
      module.emitError() << "cannot create a temporary file: " << ec.message();
      return failure();
    }
  }
  llvm::scope_exit removeBlockObj([&] {
    if (!blockObj.empty())
      llvm::sys::fs::remove(blockObj);
  });
  if (!blockObj.empty() &&
      failed(emitObjectFile(blockModule, blockObj, options, /*blockEntry=*/true)))
    return failure();
  // A foreign triple links with that triple's C compiler driver, and only
  // the C library: this machine has no OpenMP runtime built for it.
  bool foreign = isForeignTriple(options.targetTriple);
  std::string ccName =
      foreign ? options.targetTriple + "-gcc" : std::string("cc");
  auto cc = llvm::sys::findProgramByName(ccName);
  if (!cc) {
    module.emitError() << "no C compiler driver ('" << ccName << "') to link "
                       << path
                       << (foreign ? "; write an object file (-o x.o) and "
                                     "link it on the target, or install a "
                                     "cross compiler (Debian: gcc-" +
                                         llvm::Triple(options.targetTriple)
                                             .getArchName()
                                             .str() +
                                         "-linux-gnu)"
                                   : std::string());
    return failure();
  }
  if (foreign && !runtimeLibraries(options).empty()) {
    module.emitError() << "a " << options.targetTriple
                       << " library with --threads=" << options.threads
                       << " needs an OpenMP runtime built for that target, "
                          "which this machine lacks; use --threads=1, or -o "
                          "x.o and link on the target";
    return failure();
  }
  // Link next to the target and rename, so a failed link leaves nothing.
  SmallString<128> tmp(path);
  tmp += ".tmp";
  // The CPU check, compiled in with the same driver.
  SmallString<128> check;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("lstm-opt-cpu-check", "c", check)) {
    module.emitError() << "cannot create a temporary file: " << ec.message();
    return failure();
  }
  llvm::scope_exit removeCheck([&] { llvm::sys::fs::remove(check); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(check, ec);
    if (ec) {
      module.emitError() << "cannot write " << check << ": " << ec.message();
      return failure();
    }
    out << cpuCheckSource(options)
        << streamSource(sig, blockObj.empty() ? nullptr : block);
  }
  // -z defs: a symbol nothing provides is a link error here, not a load
  // error where the model is deployed.
  std::vector<std::string> args = {*cc,  "-shared", "-fPIC", "-O1",
                                   "-Wl,-z,defs", "-o", tmp.str().str(),
                                   obj.str().str(), check.str().str()};
  if (!blockObj.empty())
    args.push_back(blockObj.str().str());
  // Its file name as its SONAME: a program linked against it records that
  // name, not the path it was linked from, and finds it wherever it is
  // deployed (an rpath such as $ORIGIN, or the library path).
  args.push_back(("-Wl,-soname," + llvm::sys::path::filename(path)).str());
  // The model's own folder first ($ORIGIN: a runtime library copied next to
  // it, or bundled with --bundle-runtime), then where the library is here.
  args.push_back("-Wl,-rpath,$ORIGIN");
  SmallString<256> outDir(llvm::sys::path::parent_path(path));
  if (outDir.empty())
    outDir = ".";
  for (const std::string &lib : runtimeLibraries(options)) {
    StringRef dir = llvm::sys::path::parent_path(lib);
    StringRef file = llvm::sys::path::filename(lib);
    bool project = file.starts_with("libLstmOpt");
    if (options.bundleRuntime && project) {
      SmallString<256> dest(outDir);
      llvm::sys::path::append(dest, file);
      if (std::error_code ec = llvm::sys::fs::copy_file(lib, dest)) {
        module.emitError() << "cannot copy " << lib << " to " << dest << ": "
                           << ec.message();
        return failure();
      }
    } else {
      args.push_back(("-Wl,-rpath," + dir).str());
    }
    args.push_back(("-L" + dir).str());
    args.push_back("-l:" + file.str());
  }
  args.push_back("-lm");
  std::vector<StringRef> argRefs(args.begin(), args.end());
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(*cc, argRefs, std::nullopt, {}, 0, 0, &err);
  if (rc != 0) {
    llvm::sys::fs::remove(tmp);
    module.emitError() << "linking " << path << " failed (" << *cc << " exit "
                       << rc << ") " << err;
    return failure();
  }
  SmallString<128> header(path);
  llvm::sys::path::replace_extension(header, "h");
  std::error_code ec;
  {
    llvm::ToolOutputFile h(header, ec, llvm::sys::fs::OF_Text);
    if (!ec) {
      h.os() << cHeader(sig);
      h.keep();
    }
  }
  if (ec || llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    module.emitError() << "cannot write " << (ec ? header : SmallString<128>(path));
    return failure();
  }
  return success();
}

JITModel::~JITModel() = default;

llvm::Expected<std::unique_ptr<JITModel>>
JITModel::create(ModuleOp module, ModelSignature sig, const CPUOptions &options) {
  if (isForeignTriple(options.targetTriple))
    return llvm::createStringError("code for " + options.targetTriple +
                                   " cannot run on this machine (" +
                                   llvm::sys::getProcessTriple() + ")");
  // Code for a CPU with extensions this one lacks would die of SIGILL.
  if (!options.targetCPU.empty() && options.targetCPU != "host") {
    if (auto jtmb = targetMachineBuilder(options.targetCPU, "", false); !jtmb)
      return jtmb.takeError();
    std::string missing;
    for (const char *f : targetCheckedFeatures(options))
      if (!hostHasFeature(f))
        missing += std::string(" ") + f;
    if (!missing.empty())
      return llvm::createStringError(
          "this CPU lacks instruction-set features of --target-cpu=" +
          options.targetCPU + ":" + missing);
  }
  auto tm = targetMachine(options, /*pic=*/false);
  if (!tm)
    return tm.takeError();
  auto transformer = makeOptimizingTransformer(3, 0, tm->get());
  std::vector<std::string> libs = runtimeLibraries(options);
  std::vector<StringRef> libRefs(libs.begin(), libs.end());
  ExecutionEngineOptions eo;
  eo.transformer = transformer;
  eo.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  eo.sharedLibPaths = libRefs;
  eo.enableGDBNotificationListener = false;
  eo.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(module, eo, std::move(*tm));
  if (!engine)
    return engine.takeError();
  std::unique_ptr<JITModel> m(new JITModel());
  m->engine = std::move(*engine);
  m->sig = std::move(sig);
  auto fn = m->engine->lookup(kPackedEntryName);
  if (!fn)
    return fn.takeError();
  m->entry = reinterpret_cast<void (*)(void **)>(*fn);
  if (auto setter = m->engine->lookup(kThreadsSetterName))
    m->threadSetter = reinterpret_cast<int32_t (*)(int32_t)>(*setter);
  else
    llvm::consumeError(setter.takeError());
  if (auto getter = m->engine->lookup(kThreadsGetterName))
    m->threadGetter = reinterpret_cast<int32_t (*)()>(*getter);
  else
    llvm::consumeError(getter.takeError());
  return m;
}

llvm::Expected<std::unique_ptr<JITModel>>
JITModel::load(llvm::StringRef path) {
  std::string err;
  // dlopen searches the library path for a name without a slash.
  SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(abs.c_str(), &err);
  if (!lib.isValid())
    return llvm::createStringError("cannot load %s: %s", path.str().c_str(), err.c_str());
  auto *entry = lib.getAddressOfSymbol(kPackedEntryName);
  auto *text = static_cast<const char *>(lib.getAddressOfSymbol(kSignatureSymbol));
  if (!entry || !text)
    return llvm::createStringError(
        "%s is not a model compiled by lstm-opt --target=cpu (no %s / %s)",
        path.str().c_str(), kPackedEntryName, kSignatureSymbol);
  if (auto *check = reinterpret_cast<const char *(*)()>(
          lib.getAddressOfSymbol(kCPUCheckSymbol)))
    if (const char *missing = check())
      return llvm::createStringError("%s: %s", path.str().c_str(), missing);
  auto sig = parseSignatureJSON(text);
  if (!sig)
    return sig.takeError();
  std::unique_ptr<JITModel> m(new JITModel());
  m->sig = std::move(*sig);
  m->entry = reinterpret_cast<void (*)(void **)>(entry);
  m->threadSetter = reinterpret_cast<int32_t (*)(int32_t)>(
      lib.getAddressOfSymbol(kThreadsSetterName));
  m->threadGetter = reinterpret_cast<int32_t (*)()>(
      lib.getAddressOfSymbol(kThreadsGetterName));
  return m;
}

unsigned JITModel::setThreads(unsigned n) {
  if (!threadSetter)
    return 1;
  return (unsigned)threadSetter((int32_t)std::min<unsigned>(n, INT32_MAX));
}

unsigned JITModel::threads() const {
  return threadGetter ? (unsigned)threadGetter() : 1;
}

llvm::Error JITModel::run(ArrayRef<const void *> inputs, ArrayRef<void *> outputs) {
  if (inputs.size() != sig.inputs.size() || outputs.size() != sig.outputs.size())
    return llvm::createStringError("expected %zu inputs and %zu outputs",
                                   sig.inputs.size(), sig.outputs.size());
  // One strided descriptor per argument: {ptr, ptr, offset, sizes, strides}.
  std::vector<std::vector<int64_t>> descs;
  auto describe = [&](const TensorSig &t, const void *data) {
    std::vector<int64_t> d = {(int64_t)(intptr_t)data, (int64_t)(intptr_t)data, 0};
    d.insert(d.end(), t.shape.begin(), t.shape.end());
    std::vector<int64_t> strides(t.shape.size());
    int64_t stride = 1;
    for (size_t j = t.shape.size(); j-- > 0;) {
      strides[j] = stride;
      stride *= t.shape[j];
    }
    d.insert(d.end(), strides.begin(), strides.end());
    descs.push_back(std::move(d));
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    describe(sig.inputs[i], inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i)
    describe(sig.outputs[i], outputs[i]);
  std::vector<void *> descPtrs;
  descPtrs.reserve(descs.size());
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  entry(descPtrs.data());
  return llvm::Error::success();
}

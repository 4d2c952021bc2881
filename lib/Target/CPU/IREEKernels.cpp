//===- IREEKernels.cpp - recurrent layers as lstm-opt kernels in IREE ----===//
//
// convert-rnn-to-iree-kernels: each recurrent layer of the graph becomes one
// IREE dispatch whose body is the CPU backend's own kernel for it (the
// hoisted input GEMM and the fused step loop of convert-rnn-to-cpu), linked
// into IREE's executable as an object file:
//
//   %y, %hn, %cn, %ws = flow.dispatch @lstm_opt_layer0::@lstm_opt_layer0_run(%x, %h0, %c0)
//   stream.executable private @lstm_opt_layer0
//       attributes {hal.executable.objects = <the kernel's object file>} {
//     stream.executable.export public @lstm_opt_layer0_run workgroups() -> 1, 1, 1
//     builtin.module {
//       func.func private @lstm_opt_layer0_<hash>(i64, ...)
//           attributes {hal.import.static}
//       func.func @lstm_opt_layer0_run(%b0: !stream.binding, ...) {
//         <each binding's address>; call @lstm_opt_layer0_<hash>(...)
//       }
//     }
//   }
//
// The object is what IREE's embedded ELF executables link: freestanding
// (no libc, no OpenMP: one thread, no memset/memcpy calls, weights as
// constants), one global symbol (named after a hash of what it computes)
// taking the buffers' addresses (bare
// pointers), its scratch buffers carved from one workspace buffer that the
// dispatch returns as an extra result (IREE allocates it with the others).
// The IREE ops are built unregistered, in generic form.
//
// A layer the kernels cannot take (weights that are not constants, a shape
// convert-rnn-to-cpu refuses) stays for convert-rnn-to-linalg, with a
// remark naming the reason.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Target/CPU/CPUBackend.h"

#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"
#include "lstm-opt/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/MD5.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace lstm_opt;

namespace {

constexpr int64_t kWorkspaceAlign = 64;

/// The ops outside the layer that its weight operands are computed from
/// (constants and what folds them), in block order; failure, with the
/// reason, if one depends on a runtime value.
FailureOr<SmallVector<Operation *>>
weightSlice(ArrayRef<Operation *> roots, const llvm::SmallPtrSetImpl<Value> &dynamic,
            std::string &why) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work;
  for (Operation *root : roots)
    for (Value v : root->getOperands())
      if (!dynamic.contains(v) && !llvm::is_contained(roots, v.getDefiningOp()))
        work.push_back(v);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (dynamic.contains(v)) {
      why = "its weights depend on an input of the layer";
      return failure();
    }
    Operation *def = v.getDefiningOp();
    if (!def) {
      why = "its weights are not constants (a graph input or a block "
            "argument)";
      return failure();
    }
    if (!slice.insert(def))
      continue;
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def)) {
      why = "its weights come from '" + def->getName().getStringRef().str() +
            "', which is not a constant computation";
      return failure();
    }
    for (Value o : def->getOperands())
      work.push_back(o);
  }
  Block *block = roots.back()->getBlock();
  SmallVector<Operation *> ops(slice.begin(), slice.end());
  for (Operation *op : ops)
    if (op->getBlock() != block) {
      why = "its weights are computed in another block";
      return failure();
    }
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// The kernel module's graph argument that `v` (an operand of the call to
/// the layer's kernel) was made from, through the call site's casts.
std::optional<unsigned> graphArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (def->getNumOperands() != 1)
      return std::nullopt;
    v = def->getOperand(0);
  }
  return cast<BlockArgument>(v).getArgNumber();
}

/// A stream that hashes what is written to it (MD5, the low 64 bits), so
/// that printing a layer's weights to hash them holds no copy of them.
class HashStream : public llvm::raw_ostream {
public:
  HashStream() { SetUnbuffered(); }
  uint64_t digest() {
    flush();
    llvm::MD5::MD5Result r;
    md5.final(r);
    return r.low();
  }

private:
  void write_impl(const char *p, size_t n) override {
    md5.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(p), n));
    pos += n;
  }
  uint64_t current_pos() const override { return pos; }
  llvm::MD5 md5;
  uint64_t pos = 0;
};

/// Bytes of one element of a memref the kernels allocate (f32, i32, i8).
int64_t elementBytes(MemRefType t) {
  return std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

struct CompiledLayer {
  std::string symbol, objectPath;
  /// The kernel's arguments: for each layer input used, the index into
  /// the layer's dynamic operands; then the outputs; then the workspace.
  SmallVector<unsigned> inputs;
  SmallVector<MemRefType> outputs;
  int64_t workspaceBytes = 0;
};

/// Compiles `layer` (and `proj`, its input projection, if any) with the
/// constants they read into a freestanding object at `objectPath`.
/// Errors are returned in `why`, not emitted.
FailureOr<CompiledLayer> compileLayer(Operation *layer, Operation *proj,
                                      ArrayRef<Value> dynamic,
                                      ArrayRef<Operation *> constants,
                                      const cpu::CPUOptions &options,
                                      StringRef symbol, StringRef objectPath,
                                      std::string &why) {
  MLIRContext *ctx = layer->getContext();
  Location loc = layer->getLoc();
  OwningOpRef<ModuleOp> km = ModuleOp::create(loc);
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(km->getBody());
  SmallVector<Type> argTypes;
  for (Value v : dynamic)
    argTypes.push_back(v.getType());
  auto graph = func::FuncOp::create(
      b, loc, "lstm_opt_layer_graph",
      FunctionType::get(ctx, argTypes, layer->getResultTypes()));
  Block *entry = graph.addEntryBlock();
  IRMapping map;
  for (auto [v, a] : llvm::zip(dynamic, entry->getArguments()))
    map.map(v, a);
  b.setInsertionPointToStart(entry);
  for (Operation *op : constants)
    b.clone(*op, map);
  if (proj)
    b.clone(*proj, map);
  Operation *copy = b.clone(*layer, map);
  func::ReturnOp::create(b, loc, copy->getResults());

  // Errors of the kernel compile come back as the reason; remarks (the
  // kernel's shape and precision) reach the user as for --target=cpu.
  std::string errors;
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) -> LogicalResult {
    if (d.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    errors += (errors.empty() ? "" : "; ") + d.str();
    return success();
  });
  auto failWith = [&](StringRef fallback) -> FailureOr<CompiledLayer> {
    why = errors.empty() ? fallback.str() : errors;
    return failure();
  };

  cpu::CPUOptions opts = options;
  opts.threads = 1; // an IREE executable has no OpenMP runtime
  CPUPipelineOptions p;
  cpu::setPipelineOptions(opts, p);
  {
    PassManager pm(ctx);
    pm.addPass(createConvertRNNToCPUPass(cpuKernelOptions(p)));
    if (failed(pm.run(*km)))
      return failWith("convert-rnn-to-cpu failed");
  }
  func::CallOp call;
  graph.walk([&](func::CallOp c) { call = c; });
  auto kernel = call ? km->lookupSymbol<func::FuncOp>(call.getCallee())
                     : func::FuncOp();
  if (!kernel)
    return failWith("convert-rnn-to-cpu made no kernel call");
  CompiledLayer out;
  out.symbol = symbol.str();
  out.objectPath = objectPath.str();
  unsigned numOutputs = layer->getNumResults();
  if (call.getNumOperands() < numOutputs)
    return failWith("the kernel call has too few operands");
  for (Value v : call.getOperands().drop_back(numOutputs)) {
    auto arg = graphArgument(v);
    if (!arg)
      return failWith("a kernel input is not one of the layer's inputs");
    out.inputs.push_back(*arg);
  }
  graph.erase();

  // The scratch buffers, one workspace: every allocation is in the
  // kernel's entry block with a static shape (convert-rnn-to-cpu's are).
  SmallVector<memref::AllocOp> allocs;
  bool movable = true;
  kernel.walk([&](memref::AllocOp a) {
    if (a->getParentOp() != kernel || !a.getType().hasStaticShape() ||
        !a.getType().getLayout().isIdentity())
      movable = false;
    allocs.push_back(a);
  });
  if (!movable)
    return failWith("the kernel allocates inside a loop or with a dynamic "
                    "shape");
  SmallVector<int64_t> offsets;
  int64_t bytes = 0;
  for (memref::AllocOp a : allocs) {
    bytes = llvm::alignTo(bytes, kWorkspaceAlign);
    offsets.push_back(bytes);
    bytes += a.getType().getNumElements() * elementBytes(a.getType());
  }
  out.workspaceBytes = std::max<int64_t>(llvm::alignTo(bytes, kWorkspaceAlign),
                                         kWorkspaceAlign);
  auto wsType = MemRefType::get({out.workspaceBytes}, b.getI8Type());
  unsigned wsIndex = kernel.getNumArguments();
  (void)kernel.insertArgument(wsIndex, wsType, {}, loc);
  Value ws = kernel.getArgument(wsIndex);
  for (auto [a, off] : llvm::zip(allocs, offsets)) {
    OpBuilder ab(a);
    for (Operation *user : llvm::make_early_inc_range(a->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    Value shift = arith::ConstantIndexOp::create(ab, a.getLoc(), off);
    auto view = memref::ViewOp::create(ab, a.getLoc(), a.getType(), ws, shift,
                                       ValueRange{});
    a.replaceAllUsesWith(view.getResult());
    a.erase();
  }
  for (unsigned i = wsIndex - numOutputs; i < wsIndex; ++i)
    out.outputs.push_back(cast<MemRefType>(kernel.getArgument(i).getType()));
  // Bare pointers: the kernel's arguments are the buffers' addresses.
  for (Type t : kernel.getArgumentTypes()) {
    auto m = dyn_cast<MemRefType>(t);
    if (!m || !m.hasStaticShape() || !m.getLayout().isIdentity())
      return failWith("a kernel argument is not a static memref");
  }
  SymbolTable::setSymbolName(kernel, symbol);
  kernel.setPublic();
  kernel->setAttr("llvm.bareptr", UnitAttr::get(ctx));

  {
    PassManager pm(ctx);
    buildCPULLVMPipeline(pm, p);
    if (failed(pm.run(*km)))
      return failWith("lowering the kernel to LLVM failed");
  }
  if (failed(cpu::emitObjectFile(*km, objectPath, opts, /*blockEntry=*/false,
                                 symbol)))
    return failWith("emitting the kernel's object file failed");

  // What the object needs from outside: nothing, or IREE cannot link it.
  auto buffer = llvm::MemoryBuffer::getFile(objectPath);
  if (!buffer)
    return failWith("cannot read back '" + objectPath.str() + "'");
  auto object = llvm::object::ObjectFile::createObjectFile(
      (*buffer)->getMemBufferRef());
  if (!object) {
    llvm::consumeError(object.takeError());
    return failWith("'" + objectPath.str() + "' is no object file");
  }
  std::string undefined;
  for (const llvm::object::SymbolRef &sym : (*object)->symbols()) {
    auto flags = sym.getFlags();
    auto name = sym.getName();
    if (!flags || !name) {
      if (!flags)
        llvm::consumeError(flags.takeError());
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    // (The GOT's symbol is the linker's own.)
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty() &&
        *name != "_GLOBAL_OFFSET_TABLE_")
      undefined += (undefined.empty() ? "'" : ", '") + name->str() + "'";
  }
  if (!undefined.empty()) {
    llvm::sys::fs::remove(objectPath);
    return failWith("the kernel's object needs " + undefined +
                    ", which an IREE executable cannot link");
  }
  return out;
}

/// An opaque attribute of an unregistered dialect (`#dialect.text`).
Attribute opaque(MLIRContext *ctx, StringRef dialect, StringRef text) {
  return OpaqueAttr::get(StringAttr::get(ctx, dialect), text,
                         NoneType::get(ctx));
}

/// Creates the (unregistered) op `state` describes with one region of one
/// block, which it returns.
Block *createWithBody(OpBuilder &b, OperationState &state) {
  state.addRegion();
  Operation *op = b.create(state);
  Block *block = new Block();
  op->getRegion(0).push_back(block);
  return block;
}

/// IREE's embedded-ELF format name for the object's architecture.
std::string ireeFormat(const cpu::CPUOptions &options) {
  llvm::Triple t(options.targetTriple.empty() ? llvm::sys::getProcessTriple()
                                              : options.targetTriple);
  switch (t.getArch()) {
  case llvm::Triple::x86_64:
    return "embedded-elf-x86_64";
  case llvm::Triple::aarch64:
    return "embedded-elf-arm_64";
  default:
    return "";
  }
}

/// The stream.executable `name` whose export `<name>_run` calls the compiled
/// layer: bindings in the dispatch's order (inputs, then outputs, then the
/// workspace), each passed as its address.
void buildExecutable(OpBuilder &b, Location loc, StringRef name,
                     const CompiledLayer &layer, TypeRange bindingTypes,
                     StringRef format) {
  MLIRContext *ctx = b.getContext();
  OperationState ex(loc, "stream.executable");
  ex.addAttribute("sym_name", b.getStringAttr(name));
  ex.addAttribute("sym_visibility", b.getStringAttr("private"));
  // The path as an MLIR string (quotes, backslashes and unprintable bytes
  // escaped).
  std::string path;
  llvm::raw_string_ostream ps(path);
  llvm::printEscapedString(layer.objectPath, ps);
  std::string objects =
      ("executable.objects<{#hal.executable.target<\"llvm-cpu\", \"" + format +
       "\"> = [#hal.executable.object<{path = \"" + path + "\"}>]}>")
          .str();
  ex.addAttribute("hal.executable.objects", opaque(ctx, "hal", objects));
  Block *block = createWithBody(b, ex);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);

  // One workgroup: the kernel is the whole layer.
  OperationState exp(loc, "stream.executable.export");
  // IREE links the executables of a module together: the entry's name is
  // unique, as the kernel's is.
  std::string entry = (name + "_run").str();
  exp.addAttribute("function_ref", FlatSymbolRefAttr::get(ctx, entry));
  exp.addAttribute("sym_name", b.getStringAttr(entry));
  exp.addAttribute("sym_visibility", b.getStringAttr("public"));
  {
    Block *cb = createWithBody(b, exp);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(cb);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    OperationState ret(loc, "stream.return");
    ret.addOperands({one, one, one});
    b.create(ret);
  }

  auto inner = ModuleOp::create(b, loc);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(inner.getBody());
    Type i64 = b.getI64Type();
    SmallVector<Type> ptrs(bindingTypes.size(), i64);
    auto decl = func::FuncOp::create(b, loc, layer.symbol,
                                     FunctionType::get(ctx, ptrs, {}));
    decl.setPrivate();
    decl->setAttr("hal.import.static", UnitAttr::get(ctx));
    Type binding = OpaqueType::get(StringAttr::get(ctx, "stream"), "binding");
    SmallVector<Type> bindings(bindingTypes.size(), binding);
    auto run = func::FuncOp::create(b, loc, entry,
                                    FunctionType::get(ctx, bindings, {}));
    Block *rb = run.addEntryBlock();
    b.setInsertionPointToStart(rb);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> addresses;
    for (auto [arg, t] : llvm::zip(rb->getArguments(), bindingTypes)) {
      auto tt = cast<RankedTensorType>(t);
      auto mt = MemRefType::get(tt.getShape(), tt.getElementType());
      OperationState sub(loc, "stream.binding.subspan");
      sub.addOperands({arg, zero});
      sub.addTypes(mt);
      Value m = b.create(sub)->getResult(0);
      // The address of element 0: the aligned pointer plus the offset.
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
      Value base =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
      Value eltBytes = arith::ConstantIndexOp::create(
          b, loc, std::max<int64_t>(1, mt.getElementTypeBitWidth() / 8));
      Value shift = arith::MulIOp::create(b, loc, meta.getOffset(), eltBytes);
      Value addr = arith::AddIOp::create(b, loc, base, shift);
      addresses.push_back(arith::IndexCastOp::create(b, loc, i64, addr));
    }
    func::CallOp::create(b, loc, decl, addresses);
    func::ReturnOp::create(b, loc);
  }
  OperationState end(loc, "stream.executable.end");
  b.create(end);
}

} // namespace

LogicalResult cpu::lowerLayersToIREEKernels(ModuleOp module,
                                            const CPUOptions &options,
                                            StringRef objectDir,
                                            StringRef stem) {
  MLIRContext *ctx = module.getContext();
  if (!ctx->allowsUnregisteredDialects())
    return module.emitError()
           << "convert-rnn-to-iree-kernels writes IREE's flow and stream ops, "
              "which needs unregistered dialects allowed";
  {
    DialectRegistry registry;
    registerAllToLLVMIRTranslations(registry);
    ctx->appendDialectRegistry(registry);
  }
  std::string format = ireeFormat(options);
  if (format.empty())
    return module.emitError() << "convert-rnn-to-iree-kernels: IREE's "
                                 "embedded executables take x86-64 and "
                                 "AArch64 objects; the target is '"
                              << options.targetTriple << "'";
  if (objectDir.empty())
    return module.emitError()
           << "convert-rnn-to-iree-kernels: object-dir is required (where the "
              "layers' object files are written)";
  SmallString<256> dir(objectDir);
  if (std::error_code ec = llvm::sys::fs::make_absolute(dir))
    return module.emitError() << "cannot make '" << objectDir
                              << "' absolute: " << ec.message();

  // IREE hands the objects to its linker through a shell command line,
  // unquoted: a path with a space, a quote or another shell character does
  // not link there (and would be read by the shell).
  std::string where = (dir + "/" + stem).str();
  if (llvm::any_of(where, [](char c) {
        return !llvm::isAlnum(c) && !StringRef("._+-/").contains(c);
      }))
    return module.emitError()
           << "convert-rnn-to-iree-kernels: the object files' path '" << where
           << "' holds a character other than letters, digits and ._+-/; "
              "IREE passes it to its linker through a shell, unquoted: write "
              "the output (or object-dir) elsewhere";
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError() << "cannot create '" << dir
                              << "': " << ec.message();

  unsigned index = 0;
  return rnn::forEachLayer(
      module, "convert-rnn-to-iree-kernels",
      [&](Operation *op, const rnn::LayerOperands &in) -> LogicalResult {
        Operation *proj = nullptr;
        if (auto rec = dyn_cast<rnn::RecurrenceOp>(op))
          proj = rec.getP().getDefiningOp();
        SmallVector<Value> dynamic;
        for (Value v : {in.x, in.h0, in.c0, in.lens})
          if (v)
            dynamic.push_back(v);
        llvm::SmallPtrSet<Value, 4> dynSet(dynamic.begin(), dynamic.end());
        SmallVector<Operation *> roots;
        if (proj)
          roots.push_back(proj);
        roots.push_back(op);
        std::string why;
        auto keep = [&]() {
          op->emitRemark() << "convert-rnn-to-iree-kernels: kept for IREE's "
                              "own code generation: "
                           << why;
          return success();
        };
        auto xt = dyn_cast<RankedTensorType>(in.x.getType());
        if (!xt || !xt.hasStaticShape()) {
          why = "its input has no static shape";
          return keep();
        }
        auto constants = weightSlice(roots, dynSet, why);
        if (failed(constants))
          return keep();
        unsigned n = index++;
        // The kernel's name hashes what it computes (the layer, its
        // weights, the options): IREE links every executable of a program
        // into one library and keeps one of two equal names, so equal
        // names must mean equal kernels.
        HashStream cs;
        {
          OpPrintingFlags flags;
          flags.printGenericOpForm().enableDebugInfo(false);
          for (Operation *c : *constants)
            c->print(cs, flags);
          if (proj)
            proj->print(cs, flags);
          op->print(cs, flags);
          cs << options.precision << options.targetCPU << options.targetTriple;
          for (const std::string &lp : options.layerPrecisions)
            cs << lp;
        }
        uint64_t hash = cs.digest();
        std::string symbol = llvm::formatv("lstm_opt_layer{0}_{1:x-}", n,
                                           hash & 0xffffffffffffull)
                                 .str();
        SmallString<256> path(dir);
        llvm::sys::path::append(path, (stem + ".layer" + Twine(n) + ".o").str());
        auto compiled = compileLayer(op, proj, dynamic, *constants, options,
                                     symbol, path, why);
        if (failed(compiled))
          return keep();

        // The dispatch: the layer's inputs (cast to the kernel's static
        // types), its outputs and the workspace.
        OpBuilder b(op);
        Location l = op->getLoc();
        SmallVector<Value> operands;
        SmallVector<Type> types;
        for (unsigned i : compiled->inputs) {
          Value v = dynamic[i];
          auto t = cast<RankedTensorType>(v.getType());
          if (!t.hasStaticShape()) {
            why = "an initial state or sequence_lens has no static shape";
            llvm::sys::fs::remove(compiled->objectPath);
            return keep();
          }
          operands.push_back(v);
          types.push_back(t);
        }
        SmallVector<Type> resultTypes;
        for (MemRefType m : compiled->outputs)
          resultTypes.push_back(
              RankedTensorType::get(m.getShape(), m.getElementType()));
        resultTypes.push_back(RankedTensorType::get(
            {compiled->workspaceBytes}, b.getI8Type()));
        std::string exName = rnn::uniqueSymbol(module, "lstm_opt_layer" + std::to_string(n));
        OperationState st(l, "flow.dispatch");
        st.addOperands(operands);
        st.addTypes(resultTypes);
        st.addAttribute("entry_points",
                        b.getArrayAttr({SymbolRefAttr::get(
                            ctx, exName,
                            {FlatSymbolRefAttr::get(ctx, exName + "_run")})}));
        st.addAttribute("operandSegmentSizes",
                        b.getDenseI32ArrayAttr(
                            {0, static_cast<int32_t>(operands.size()), 0, 0}));
        SmallVector<Attribute> untied(resultTypes.size(), b.getIndexAttr(-1));
        st.addAttribute("tied_operands", b.getArrayAttr(untied));
        Operation *dispatch = b.create(st);
        for (auto [res, out] : llvm::zip(op->getResults(), dispatch->getResults())) {
          Value v = out;
          if (res.getType() != v.getType())
            v = tensor::CastOp::create(b, l, res.getType(), v);
          res.replaceAllUsesWith(v);
        }
        op->erase();
        if (proj && proj->use_empty())
          proj->erase();

        for (Type t : resultTypes)
          types.push_back(t);
        OpBuilder mb(ctx);
        mb.setInsertionPointToEnd(module.getBody());
        buildExecutable(mb, l, exName, *compiled, types, format);
        return success();
      });
}

namespace {

struct ConvertRNNToIREEKernelsPass
    : public PassWrapper<ConvertRNNToIREEKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertRNNToIREEKernelsPass)
  ConvertRNNToIREEKernelsPass() = default;
  ConvertRNNToIREEKernelsPass(const ConvertRNNToIREEKernelsPass &other)
      : PassWrapper(other) {}
  StringRef getArgument() const override { return "convert-rnn-to-iree-kernels"; }
  StringRef getDescription() const override {
    return "Each recurrent layer as one IREE dispatch calling the CPU "
           "backend's kernel for it, linked as an object file (needs "
           "unregistered dialects allowed)";
  }
  Option<std::string> objectDir{*this, "object-dir",
                                llvm::cl::desc("Where the layers' object "
                                               "files are written")};
  Option<std::string> stem{*this, "stem",
                           llvm::cl::desc("The object files' name: "
                                          "<stem>.layer<N>.o"),
                           llvm::cl::init("model")};
  Option<std::string> targetCPU{
      *this, "target-cpu",
      llvm::cl::desc("The CPU the kernels are compiled for (host: this one)"),
      llvm::cl::init("host")};
  Option<std::string> targetTriple{
      *this, "target-triple",
      llvm::cl::desc("Another architecture's triple (AArch64)"),
      llvm::cl::init("")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("The layers' weight precision: f32, bf16 or int8"),
      llvm::cl::init("f32")};

  void runOnOperation() override {
    cpu::CPUOptions options;
    options.targetCPU = targetCPU == "host" ? std::string() : std::string(targetCPU);
    options.targetTriple = targetTriple;
    options.precision = precision;
    if (precision != "f32" && precision != "bf16" && precision != "int8") {
      getOperation().emitError() << "convert-rnn-to-iree-kernels: precision "
                                    "must be f32, bf16 or int8, not '"
                                 << precision << "'";
      return signalPassFailure();
    }
    if (auto tv = cpu::targetVector(options); !tv) {
      getOperation().emitError() << "convert-rnn-to-iree-kernels: "
                                 << llvm::toString(tv.takeError());
      return signalPassFailure();
    }
    if (failed(cpu::lowerLayersToIREEKernels(getOperation(), options,
                                             objectDir, stem)))
      signalPassFailure();
  }
};

} // namespace

void cpu::registerIREEKernelsPass() {
  PassRegistration<ConvertRNNToIREEKernelsPass>();
}

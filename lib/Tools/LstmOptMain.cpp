//===- LstmOptMain.cpp - the lstm-opt driver ------------------------------===//

#include "lstm-opt/Conversion/RNNToCUDNN/RNNToCUDNN.h"
#include "lstm-opt/Tools/LstmOptMain.h"
#include "lstm-opt/Tools/OperatorTable.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"
#include "lstm-opt/InitAll.h"
#include "lstm-opt/Pipelines/Pipelines.h"
#include "lstm-opt/Support/Diagnostics.h"
#include "lstm-opt/Target/CPU/CPUBackend.h"
#include "lstm-opt/Target/GPU/GPUBackend.h"
#include "lstm-opt/Target/ONNX/ONNXExport.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"
#include "lstm-opt/Tools/CompileOptions.h"
#include "lstm-opt/Tools/IREECompile.h"
#include "lstm-opt/Tools/Report.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <unistd.h>

using namespace mlir;
using namespace lstm_opt;

namespace {

llvm::cl::OptionCategory lstmOptCategory("lstm-opt options");

llvm::cl::opt<std::string> emitFormat(
    "emit", llvm::cl::desc("Output format: onnx, onnxtext or mlir (default: "
                           "from the output file's extension, else mlir)"),
    llvm::cl::value_desc("format"), llvm::cl::init(""),
    llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> reportKind(
    "report",
    llvm::cl::desc("Print a summary: --report (text) or --report=json"),
    llvm::cl::ValueOptional, llvm::cl::init("none"),
    llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> reportFile(
    "report-file",
    llvm::cl::desc("Write the --report summary to this file instead of "
                   "stdout/stderr"),
    llvm::cl::value_desc("path"), llvm::cl::init(""),
    llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> target(
    "target",
    llvm::cl::desc("What to produce: onnx (fused standard ONNX; default), "
                   "cpu (compiled code), cudnn (compiled code calling cuDNN "
                   "for the recurrent layers), gpu (compiled code, the "
                   "recurrent layers as generated GPU kernels; .ptx/.cubin: "
                   "the kernels alone), linalg (upstream MLIR on tensors: "
                   "linalg, tensor, arith, math, scf; for IREE and other "
                   "stacks), iree (linalg with each recurrence in one IREE "
                   "flow.dispatch.region, for iree-compile "
                   "--iree-input-type=none)"),
    llvm::cl::init("onnx"), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<int64_t> linalgUnrollSteps(
    "linalg-unroll-steps",
    llvm::cl::desc("--target=linalg: write a layer of at most N steps as a "
                   "straight line of steps instead of an scf.for (default 0: "
                   "always a loop; a stack such as IREE runs a host loop's "
                   "iterations as separate dispatches)"),
    llvm::cl::value_desc("N"), llvm::cl::init(0), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> ireeCompilerLib(
    "iree-compiler-lib",
    llvm::cl::desc("--target=iree -o m.vmfb: the IREE compiler library "
                   "(libIREECompiler.so) to compile with (default: "
                   "$IREE_COMPILER_LIB, else the one beside the iree-compile "
                   "on PATH, else the project's .venv)"),
    llvm::cl::value_desc("path"), llvm::cl::init(""),
    llvm::cl::cat(lstmOptCategory));

llvm::cl::list<std::string> ireeFlags(
    "iree-flag",
    llvm::cl::desc("--target=iree -o m.vmfb: one more iree-compile flag "
                   "(repeatable), e.g. --iree-flag=--iree-llvmcpu-target-cpu=znver4"),
    llvm::cl::value_desc("flag"), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> ireeKernels(
    "iree-kernels",
    llvm::cl::desc("--target=iree: what runs each recurrent layer: lstm-opt "
                   "(default: the CPU backend's kernel for the layer, one "
                   "thread, compiled for --target-cpu at --precision into an "
                   "object file IREE links into its executable) or iree "
                   "(IREE's own code generation of the time loop, one "
                   "flow.dispatch.region per layer, portable to any IREE "
                   "target)"),
    llvm::cl::value_desc("lstm-opt|iree"), llvm::cl::init("lstm-opt"),
    llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<int64_t> streamToSequence(
    "stream-to-sequence",
    llvm::cl::desc("--target=onnx: write a streaming model that takes N "
                   "chunks in one call (batched, or an ONNX Loop over the "
                   "chunks: --stream-form; the state pairs of --state, "
                   "default auto, carried; the other inputs and outputs "
                   "with a leading axis of N)"),
    llvm::cl::value_desc("N"), llvm::cl::init(0), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> streamForm(
    "stream-form",
    llvm::cl::desc("--stream-to-sequence: auto (default: the chunks batched "
                   "where that computes exactly what N calls do: the ops "
                   "that do not read the state run once over all chunks, "
                   "each recurrent layer once over all their steps; else "
                   "an ONNX Loop over the chunks, with a remark saying "
                   "why), batched (an error where they cannot be) or loop"),
    llvm::cl::value_desc("auto|batched|loop"), llvm::cl::init("auto"),
    llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<int64_t> streamBlock(
    "stream-block",
    llvm::cl::desc("--target=cpu --state ... -o m.so: also compile the "
                   "model's batched form for K chunks (as --stream-to-"
                   "sequence=K), which the stream's run_chunks runs for each "
                   "whole block of K chunks (the rest one by one): what does "
                   "not read the state once per block, each recurrent layer "
                   "over the block's steps. An error where the chunks cannot "
                   "be batched"),
    llvm::cl::value_desc("K"), llvm::cl::init(0), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<bool> bundleRuntime(
    "bundle-runtime",
    llvm::cl::desc("--target=cudnn|gpu -o m.so: copy the project's runtime "
                   "library the model needs next to it (found through the "
                   "model's $ORIGIN rpath), so that the folder deploys alone"),
    llvm::cl::init(false), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<std::string> gpuBinaryFormat(
    "gpu-binary",
    llvm::cl::desc("--target=gpu -o x.so/.o/.mlir: how the kernels are "
                   "embedded: fatbin (default; cubin + PTX), bin (cubin) or "
                   "isa (PTX, compiled by the driver at load)"),
    llvm::cl::init("fatbin"), llvm::cl::cat(lstmOptCategory));

/// The options lstm-opt shares with lstm-run (made in lstmOptMain).
CompileOptions *compileOptions = nullptr;

llvm::cl::opt<std::string> targetTriple(
    "target-triple",
    llvm::cl::desc("--target=cpu: the machine the code is for, when it is not "
                   "this one, e.g. aarch64-linux-gnu (with --target-cpu of "
                   "that architecture: generic, neoverse-n1, ...). Writes "
                   "object files and assembly; a .so needs <triple>-gcc"),
    llvm::cl::value_desc("triple"), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<bool> noShapeInference(
    "no-shape-inference",
    llvm::cl::desc("Do not run ONNX shape inference when importing"),
    llvm::cl::init(false), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<bool> printOperators(
    "print-operator-table",
    llvm::cl::desc("Print, as Markdown, every operator of ONNX's default "
                   "domain and what lstm-opt does with it (import, shape "
                   "rule, CPU backend), then exit"),
    llvm::cl::init(false), llvm::cl::cat(lstmOptCategory));

llvm::cl::opt<bool> noOnnxCheck(
    "no-onnx-check",
    llvm::cl::desc("Do not run onnx's checker on the exported model"),
    llvm::cl::init(false), llvm::cl::cat(lstmOptCategory));

enum class Format { MLIR, ONNX, ONNXText, Object };

/// True if the command line names a pass or a pipeline: then the default
/// pipeline is not run.
bool hasExplicitPasses(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    StringRef name = arg.split('=').first;
    if (name == "pass-pipeline" || name == "p")
      return true;
    if (PassInfo::lookup(name) || PassPipelineInfo::lookup(name))
      return true;
  }
  return false;
}

/// Prints diagnostics as `file: severity: node 'x': message` (file:line:col
/// for textual input) and keeps remarks and warnings for the report.
class DriverDiagnostics {
public:
  DriverDiagnostics(MLIRContext &ctx, RunReport &report)
      : handler(&ctx, [this, &report](Diagnostic &diag) {
          print(diag, report);
          return success();
        }) {}

private:
  void print(Diagnostic &diag, RunReport &report) {
    std::string file, node;
    unsigned line = 0, col = 0;
    describeLocation(diag.getLocation(), file, line, col, node);
    std::string message = diag.str();
    StringRef severity =
        diag.getSeverity() == DiagnosticSeverity::Remark ? "remark" : "warning";
    if (diag.getSeverity() == DiagnosticSeverity::Remark ||
        diag.getSeverity() == DiagnosticSeverity::Warning) {
      std::vector<std::string> sources;
      llvm::StringSet<> seen;
      diag.getLocation()->walk([&](Location l) {
        if (auto n = dyn_cast<NameLoc>(l))
          if (seen.insert(n.getName().getValue()).second)
            sources.push_back(n.getName().str());
        return WalkResult::advance();
      });
      report.remarks.push_back({severity.str(), node, message, sources});
    }
    printToolDiagnostic(diag);
  }

  ScopedDiagnosticHandler handler;
};

/// Times each pass for the report.
class PassTimer : public PassInstrumentation {
public:
  explicit PassTimer(RunReport &report) : report(report) {}
  void runBeforePass(Pass *pass, Operation *) override {
    starts.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPass(Pass *pass, Operation *) override { record(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { record(pass); }

private:
  void record(Pass *pass) {
    auto start = starts.pop_back_val();
    if (pass->getArgument().empty())
      return; // pass-manager adaptors
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    report.phases.push_back({("pass " + pass->getArgument()).str(), ms});
  }
  RunReport &report;
  SmallVector<std::chrono::steady_clock::time_point> starts;
};

/// Writes `data` to `path` through a temporary file in the same folder and a
/// rename, so a failed run never leaves a partial file behind.
/// writeAtomically's Linux path: fails (writing nothing visible) where
/// unnamed files are not available, so that the caller can fall back.
LogicalResult writeUnnamedThenLink(StringRef target, StringRef data) {
#if defined(__linux__) && defined(O_TMPFILE)
  SmallString<256> dir(target);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0)
    return failure();
  llvm::scope_exit closeFd([&] { ::close(fd); });
  const char *p = data.data();
  size_t left = data.size();
  while (left) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return failure();
    p += n;
    left -= size_t(n);
  }
  // Named now, complete; then renamed over the target.
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 16; ++attempt) {
    SmallString<256> named;
    llvm::sys::fs::createUniquePath(target + ".tmp-%%%%%%%%", named,
                                    /*MakeAbsolute=*/false);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, named.c_str(),
                 AT_SYMLINK_FOLLOW) != 0) {
      if (errno == EEXIST)
        continue;
      return failure();
    }
    if (::rename(named.c_str(), target.str().c_str()) != 0) {
      ::unlink(named.c_str());
      return failure();
    }
    return success();
  }
#endif
  (void)target;
  (void)data;
  return failure();
}

LogicalResult writeAtomically(StringRef path, StringRef data) {
  if (path == "-") {
    llvm::outs() << data;
    llvm::outs().flush();
    return success();
  }
  // A device, FIFO or other non-regular file (e.g. /dev/null) is written in
  // place; a symlink is followed so the rename replaces its target.
  SmallString<256> target(path);
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      llvm::sys::fs::exists(status)) {
    if (!llvm::sys::fs::is_regular_file(status)) {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      if (!ec) {
        os << data;
        os.flush();
      }
      if (ec || os.has_error()) {
        llvm::errs() << path << ": error: cannot write the output: "
                     << (ec ? ec.message() : os.error().message()) << "\n";
        os.clear_error();
        return failure();
      }
      return success();
    }
    llvm::sys::fs::real_path(path, target);
  }
  // On Linux the data goes to an unnamed file in the destination folder
  // (O_TMPFILE), which gets a name only once it is complete and is renamed
  // over the target at once: a run killed while writing (SIGKILL) leaves no
  // temporary file behind. Elsewhere, or where the file system cannot make
  // unnamed files, a named temporary file as below.
  if (succeeded(writeUnnamedThenLink(target, data)))
    return success();
  auto temp = llvm::sys::fs::TempFile::create(target + ".tmp-%%%%%%%%");
  if (!temp) {
    llvm::errs() << path << ": error: cannot create the output file: "
                 << llvm::toString(temp.takeError()) << "\n";
    return failure();
  }
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << data;
    os.flush();
    if (os.has_error()) {
      llvm::errs() << path << ": error: cannot write the output file: "
                   << os.error().message() << "\n";
      os.clear_error();
      llvm::consumeError(temp->discard());
      return failure();
    }
  }
  if (llvm::Error e = temp->keep(target)) {
    llvm::errs() << path << ": error: cannot write the output file: "
                 << llvm::toString(std::move(e)) << "\n";
    return failure();
  }
  return success();
}

/// Unrolls the model's recurrent Loop/Scan nodes (unrollRecurrentLoops).
/// With `onlyIfFused` (the ONNX target, where a Loop runs as it is) a loop
/// stays a loop unless its unrolled steps fuse into a layer: that is tried
/// first on a copy, silently, with the recognition passes; the compiled
/// targets take the unrolled steps either way (they do not run Loop).
LogicalResult unrollLoopsThatFuse(OwningOpRef<ModuleOp> &module,
                                  const ONNXImportOptions &options,
                                  bool onlyIfFused) {
  func::FuncOp func = graphFunction(*module);
  if (!func || !onnx::hasLoopNodes(func))
    return success();
  SmallVector<int64_t> skip;
  if (onlyIfFused) {
    OwningOpRef<ModuleOp> trial = module->clone();
    MLIRContext *ctx = module->getContext();
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    PassManager pm(ctx, ModuleOp::getOperationName());
    buildRecognitionPipeline(pm);
    if (succeeded(unrollRecurrentLoops(trial, options, {}, /*keepMarks=*/true)) &&
        succeeded(pm.run(*trial)))
      if (func::FuncOp f = graphFunction(*trial))
        skip = onnx::unfusedUnrolledLoops(f);
  }
  return unrollRecurrentLoops(module, options, skip);
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t)
      .count();
}

/// The ONNX-aware path: import or parse, run passes, export or print.
int runDriver(int argc, char **argv, StringRef inputPath, StringRef outputPath,
              Format outFormat, DialectRegistry &registry) {
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the node; printing the op (possibly the whole module)
  // along with them drowns the message.
  context.printOpOnDiagnostic(false);
  RunReport report;
  report.input = inputPath.str();
  report.output = outputPath.str();
  DriverDiagnostics diagnostics(context, report);
  // --target=iree's layer objects: a temporary folder's go when the driver
  // returns; those written beside the output stay only with it.
  SmallString<128> ireeObjectDir;
  std::string ireeStem;
  bool ireeObjectsTemporary = false, outputWritten = false;
  llvm::scope_exit removeObjects([&] {
    if (ireeObjectDir.empty())
      return;
    if (ireeObjectsTemporary) {
      llvm::sys::fs::remove_directories(ireeObjectDir);
      return;
    }
    if (outputWritten)
      return;
    std::error_code ec;
    std::string prefix = ireeStem + ".layer";
    std::vector<std::string> written;
    for (llvm::sys::fs::directory_iterator it(ireeObjectDir, ec), end;
         it != end && !ec; it.increment(ec)) {
      StringRef name = llvm::sys::path::filename(it->path());
      if (name.starts_with(prefix) && name.ends_with(".o"))
        written.push_back(it->path());
    }
    for (const std::string &path : written)
      llvm::sys::fs::remove(path);
  });

  // Parse/import.
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module;
  bool onnxInput = isONNXFile(inputPath);
  if (onnxInput) {
    ONNXImportOptions options;
    options.shapeInference = !noShapeInference;
    auto shapes = compileOptions->inputShapes();
    if (!shapes) {
      llvm::errs() << "lstm-opt: error: " << llvm::toString(shapes.takeError())
                   << "\n";
      return 1;
    }
    options.inputShapes = std::move(*shapes);
    module = importONNXFile(inputPath, &context, options);
    // If nodes that the declared shapes decide ("is the input 2-D?"):
    // replaced by the branch taken, so that what follows sees static types.
    // (Compiled targets do this and more in specializeModel below.)
    int inlinedIfs = 0;
    if (module && target == "onnx" && !hasExplicitPasses(argc, argv) &&
        failed(inlineShapeDecidedIfs(module, options, inlinedIfs)))
      return 1;
    // Recurrent Loop/Scan nodes with a known trip count: unrolled, with
    // types refined, so that the pipeline can recognise and roll their steps.
    if (module && !hasExplicitPasses(argc, argv) &&
        failed(unrollLoopsThatFuse(module, options, target == "onnx")))
      return 1;
    // Compiled targets: specialised to the bound inputs, with types refined
    // by shape inference over the result (specializeModel).
    // The ONNX target with --bind: the same specialisation, and the bound
    // inputs leave the written model (ONNX Runtime then refuses a value
    // for them instead of computing for the bound one), recorded in its
    // metadata.
    if (module && (target != "onnx" || compileOptions->hasBindings())) {
      auto bound = compileOptions->boundInputs();
      if (!bound) {
        llvm::errs() << "lstm-opt: error: " << llvm::toString(bound.takeError())
                     << "\n";
        return 1;
      }
      if (failed(specializeModel(module, *bound, options)))
        return 1;
      if (target == "onnx" && failed(dropBoundInputs(*module, *bound)))
        return 1;
    }
  } else {
    std::string errorMessage;
    auto file = openInputFile(inputPath, &errorMessage);
    if (!file) {
      llvm::errs() << inputPath << ": error: " << errorMessage << "\n";
      return 1;
    }
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    ParserConfig config(&context);
    module = parseSourceFile<ModuleOp>(sourceMgr, config);
  }
  if (!module)
    return 1;
  report.phases.push_back({onnxInput ? "import" : "parse", msSince(start)});
  report.opsBefore = RunReport::countOps(*module);

  // Passes: the named ones, else the default pipeline for ONNX input.
  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  pm.addInstrumentation(std::make_unique<PassTimer>(report));
  bool explicitPasses = hasExplicitPasses(argc, argv);
  if (explicitPasses) {
    MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
    if (failed(config.setupPassPipeline(pm)))
      return 1;
  } else if (onnxInput &&
             (target == "onnx" || (target == "cpu" && streamToSequence != 0))) {
    // (--target=cpu --stream-to-sequence: the layers fused first, then the
    // chunks batched, then compiled.)
    buildDefaultPipeline(pm);
  }
  start = std::chrono::steady_clock::now();
  if (failed(pm.run(*module)))
    return 1;
  cpu::ModelSignature signature;
  cpu::CPUOptions cpuOptions;
  if (llvm::Error e = compileOptions->fill(cpuOptions)) {
    llvm::errs() << "lstm-opt: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  cpuOptions.threads = std::max(1u, cpuOptions.threads);
  cpuOptions.targetTriple = targetTriple;
  cpuOptions.bundleRuntime = bundleRuntime;
  if (ireeKernels != "lstm-opt" && ireeKernels != "iree") {
    llvm::errs() << "lstm-opt: error: --iree-kernels takes lstm-opt or iree, "
                    "not '"
                 << ireeKernels << "'\n";
    return 1;
  }
  // --target=iree with lstm-opt's kernels compiles them as --target=cpu
  // does: for --target-cpu, at --precision.
  bool ireeCPUKernels = target == "iree" && ireeKernels == "lstm-opt";
  if (!targetTriple.empty() && target != "cpu" && !ireeCPUKernels) {
    llvm::errs() << "lstm-opt: error: --target-triple is for --target=cpu "
                    "and --target=iree (lstm-opt's kernels)\n";
    return 1;
  }
  if (!cpuOptions.layerPrecisions.empty() && target != "cpu" && !ireeCPUKernels) {
    llvm::errs() << "lstm-opt: error: --precision's NODE=PRECISION items are "
                    "for --target=cpu (the CPU kernels)\n";
    return 1;
  }
  if (cpuOptions.precision != "f32" && target != "cpu" && !ireeCPUKernels &&
      !(target == "gpu" && cpuOptions.precision == "bf16")) {
    llvm::errs() << "lstm-opt: error: --precision is for --target=cpu and "
                    "--target=iree (with lstm-opt's kernels), and bf16 for "
                    "--target=gpu too (the ONNX target keeps the model's "
                    "numbers; the cuDNN layers take --cudnn-data-type)\n";
    return 1;
  }
  // A foreign triple's CPU defaults to its generic one, not this host.
  if (!targetTriple.empty() && !compileOptions->targetCPUGiven())
    cpuOptions.targetCPU = "";
  if (target != "onnx") {
    // An unknown CPU name is an error before anything is compiled.
    auto tv = cpu::targetVector(cpuOptions);
    if (!tv) {
      llvm::errs() << "lstm-opt: error: " << llvm::toString(tv.takeError())
                   << "\n";
      return 1;
    }
  } else if (compileOptions->targetCPUName() != "host") {
    llvm::errs() << "lstm-opt: error: --target-cpu is for --target=cpu, "
                    "cudnn or gpu\n";
    return 1;
  }
  // Named passes replace recognition; the CPU lowering runs after them.
  cpuOptions.recognize = !explicitPasses;
  cpuOptions.cuda = target == "cudnn";
  // --target=gpu -o x.ptx / x.cubin: the kernels alone; otherwise (.so, .o,
  // .mlir) the whole model, its recurrent layers as GPU kernels.
  StringRef outExt = llvm::sys::path::extension(outputPath);
  bool gpuKernelsOnly = target == "gpu" && (outExt == ".ptx" || outExt == ".cubin");
  if (target == "gpu" && !gpuKernelsOnly) {
    cpuOptions.gpuKernels = true;
    cpuOptions.gpuBinaryFormat = gpuBinaryFormat;
    // --gpu-design=auto on a chip with a measured table: each layer through
    // whichever of cuDNN and the generated kernels is faster there (needs a
    // build with the cuDNN runtime). The table is f32's: with bf16 every
    // layer it fits runs the generated kernels' bf16 design.
    std::string why;
    cpuOptions.gpuLayerChoice =
        cpuOptions.gpuKernelsDesign == "auto" && cpuOptions.precision == "f32" &&
        cpu::haveCUDNNRuntime() &&
        cudnn::fasterThanGeneratedKernels(cpuOptions.gpuChip, 1, 1, why).has_value();
  }
  if (streamToSequence != 0) {
    if (target != "onnx" && target != "cpu") {
      llvm::errs() << "lstm-opt: error: --stream-to-sequence is for "
                      "--target=onnx or cpu\n";
      return 1;
    }
    if (target == "cpu" && explicitPasses) {
      llvm::errs() << "lstm-opt: error: --stream-to-sequence with "
                      "--target=cpu runs the default pipeline; it takes no "
                      "named passes\n";
      return 1;
    }
    if (target == "cpu" && streamForm == "loop") {
      llvm::errs() << "lstm-opt: error: --target=cpu --stream-to-sequence "
                      "compiles the batched form (a compiled library runs "
                      "its chunks one by one with --state and run_chunks)\n";
      return 1;
    }
    PassManager spm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(spm)))
      return 1;
    spm.addInstrumentation(std::make_unique<PassTimer>(report));
    rnn::ONNXStreamToSequencePassOptions stream;
    stream.chunks = streamToSequence;
    stream.state = cpuOptions.statePairs.empty() ? "auto" : cpuOptions.statePairs;
    // A compiled library takes the batched form or nothing (a Loop would be
    // unrolled chunk by chunk).
    stream.form = target == "cpu" ? std::string("batched") : streamForm;
    spm.addPass(rnn::createONNXStreamToSequencePass(stream));
    if (failed(spm.run(*module)))
      return 1;
    // --target=cpu keeps the pairs: a stream whose calls take N chunks each.
    if (target == "onnx")
      cpuOptions.statePairs.clear();
  }
  if (!cpuOptions.statePairs.empty() && target != "cpu") {
    llvm::errs() << "lstm-opt: error: --state is for --target=cpu (a compiled "
                    "library's streams)\n";
    return 1;
  }
  if (target == "linalg" || target == "iree") {
    // --target=iree: IREE's flow ops and attributes, not linked here, are
    // built and printed as unregistered ones.
    if (target == "iree")
      context.allowUnregisteredDialects();
    PassManager lpm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(lpm)))
      return 1;
    lpm.addInstrumentation(std::make_unique<PassTimer>(report));
    LinalgPipelineOptions linalgOptions;
    linalgOptions.recognize = !explicitPasses;
    if (ireeCPUKernels) {
      // The layers first: recognised, then each compiled to an object file
      // (-o m.vmfb: a temporary folder; otherwise beside the output, named
      // after it) and called from an IREE dispatch.
      if (!explicitPasses) {
        PassManager rpm(&context, ModuleOp::getOperationName());
        if (failed(applyPassManagerCLOptions(rpm)))
          return 1;
        rpm.addInstrumentation(std::make_unique<PassTimer>(report));
        buildRecognitionPipeline(rpm, /*importQuantized=*/true,
                                 cpuOptions.quantizedInt8 ? "int8" : "f32");
        if (failed(rpm.run(*module)))
          return 1;
        linalgOptions.recognize = false;
      }
      if (llvm::sys::path::extension(outputPath) == ".vmfb") {
        if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
                "lstm-opt-iree", ireeObjectDir)) {
          llvm::errs() << "lstm-opt: error: cannot create a temporary folder: "
                       << ec.message() << "\n";
          return 1;
        }
        ireeObjectsTemporary = true;
        ireeStem = "model";
      } else {
        ireeObjectDir = outputPath == "-" ? "." : llvm::sys::path::parent_path(outputPath).str();
        if (ireeObjectDir.empty())
          ireeObjectDir = ".";
        ireeStem = outputPath == "-" ? "lstm_opt" : llvm::sys::path::stem(outputPath).str();
      }
      auto kernelsStart = std::chrono::steady_clock::now();
      if (failed(cpu::lowerLayersToIREEKernels(*module, cpuOptions,
                                               ireeObjectDir, ireeStem)))
        return 1;
      report.phases.push_back({"layer kernels", msSince(kernelsStart)});
    }
    linalgOptions.unrollSteps = linalgUnrollSteps;
    linalgOptions.ireeDispatch = target == "iree";
    buildLinalgPipeline(lpm, linalgOptions);
    if (failed(lpm.run(*module)))
      return 1;
  }
  // --stream-block: the batched form, compiled beside the model.
  OwningOpRef<ModuleOp> blockModule;
  cpu::StreamBlock block;
  if (streamBlock != 0) {
    if (target != "cpu" || cpuOptions.statePairs.empty() ||
        (llvm::sys::path::extension(outputPath) != ".so" &&
         llvm::sys::path::extension(outputPath) != ".o") ||
        explicitPasses ||
        streamToSequence != 0 || streamBlock < 1 || streamBlock > (1 << 20)) {
      llvm::errs() << "lstm-opt: error: --stream-block=K (1 to 2^20) is for "
                      "--target=cpu --state ... -o x.so or x.o, without "
                      "--stream-to-sequence or named passes\n";
      return 1;
    }
    blockModule = OwningOpRef<ModuleOp>(module->clone());
    PassManager bpm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(bpm)))
      return 1;
    if (onnxInput)
      buildDefaultPipeline(bpm);
    rnn::ONNXStreamToSequencePassOptions stream;
    stream.chunks = streamBlock;
    stream.state = cpuOptions.statePairs;
    stream.form = "batched";
    bpm.addPass(rnn::createONNXStreamToSequencePass(stream));
    if (failed(bpm.run(*blockModule)))
      return 1;
  }
  if (target == "cpu" || target == "cudnn" || cpuOptions.gpuKernels) {
    // The block form first: where it has OpenMP teams, the model's thread
    // setting (which the block's teams read) must take any count.
    FailureOr<cpu::ModelSignature> bsig;
    if (blockModule) {
      bsig = cpu::lowerToLLVMDialect(*blockModule, cpuOptions);
      if (failed(bsig))
        return 1;
      cpuOptions.otherTeams = cpu::hasOpenMPTeams(*blockModule);
    }
    auto sig = cpu::lowerToLLVMDialect(*module, cpuOptions);
    cpuOptions.otherTeams = false;
    if (failed(sig))
      return 1;
    signature = *sig;
    if (blockModule) {
      // The block entry takes what run_chunks hands it: each chunk input
      // and output with a leading axis of K, the state and bound inputs as
      // they are, in the same order.
      auto same = [&](const std::vector<cpu::TensorSig> &a,
                      const std::vector<cpu::TensorSig> &b, bool inputs) {
        if (a.size() != b.size())
          return false;
        for (size_t i = 0; i < a.size(); ++i) {
          bool asIs = inputs ? (sig->isStateInput(i) || !a[i].bound.empty())
                             : sig->isStateOutput(i);
          std::vector<int64_t> want = a[i].shape;
          if (!asIs)
            want.insert(want.begin(), streamBlock);
          if (a[i].name != b[i].name || a[i].dtype != b[i].dtype ||
              b[i].shape != want)
            return false;
        }
        return true;
      };
      if (!same(sig->inputs, bsig->inputs, true) ||
          !same(sig->outputs, bsig->outputs, false) || bsig->state != sig->state) {
        llvm::errs() << inputPath << ": error: --stream-block: the batched "
                        "form's inputs and outputs do not line up with the "
                        "model's\n";
        return 1;
      }
      block.chunks = streamBlock;
      block.sig = *bsig;
    }
    // A layer that went to cuDNN: the library links the cuDNN runtime too.
    if (cpuOptions.gpuLayerChoice &&
        (module->lookupSymbol("lstm_opt_rnn_forward_memref") ||
         module->lookupSymbol("_mlir_ciface_lstm_opt_rnn_forward_memref")))
      cpuOptions.cuda = true;
  }
  // --target=gpu: the kernels' PTX (or a cubin from it by ptxas); .mlir
  // output prints the host side with its gpu.module.
  std::string ptx;
  if (gpuKernelsOnly) {
    gpu_backend::GPUOptions gpuOptions;
    gpuOptions.chip = cpuOptions.gpuChip;
    gpuOptions.design = cpuOptions.gpuKernelsDesign;
    gpuOptions.unitsPerBlock = cpuOptions.gpuUnitsPerBlock;
    gpuOptions.gridSync = cpuOptions.gpuGridSync;
    gpuOptions.weights = cpuOptions.gpuWeights;
    gpuOptions.precision = cpuOptions.precision;
    gpuOptions.recognize = !explicitPasses;
    auto compiled = gpu_backend::compileToPTX(*module, gpuOptions);
    if (failed(compiled))
      return 1;
    ptx = std::move(*compiled);
  }
  report.phases.push_back({"passes", msSince(start)});
  report.opsAfter = RunReport::countOps(*module);
  // The report (--report, --report-file), once the output is written;
  // returns the exit status.
  auto finishReport = [&]() -> int {
    outputWritten = true;
    if (reportKind == "none")
      return 0;
    std::string text;
    llvm::raw_string_ostream ros(text);
    if (reportKind == "json")
      report.printJSON(ros);
    else
      report.printText(ros);
    if (!reportFile.empty())
      return failed(writeAtomically(reportFile, text)) ? 1 : 0;
    if (outputPath == "-")
      llvm::errs() << text;
    else
      llvm::outs() << text;
    return 0;
  };
  if (gpuKernelsOnly && outFormat == Format::Object) {
    if (llvm::sys::path::extension(outputPath) == ".cubin") {
      if (failed(gpu_backend::ptxToCubin(ptx, cpuOptions.gpuChip, outputPath)))
        return 1;
    } else if (failed(writeAtomically(outputPath, ptx))) {
      return 1;
    }
    return finishReport();
  }

  if ((target == "cpu" || target == "cudnn" || cpuOptions.gpuKernels) &&
      outFormat != Format::MLIR) {
    StringRef ext = llvm::sys::path::extension(outputPath);
    if (ext == ".so" || ext == ".o" || ext == ".s") {
      // Object code goes through a temporary file renamed at the end.
      SmallString<256> tmp(outputPath);
      tmp += ".tmp-obj";
      if (ext == ".s")
        tmp += ".s";
      LogicalResult ok = ext == ".so"
          ? cpu::emitSharedLibrary(*module, signature, cpuOptions, outputPath,
                                   blockModule ? *blockModule : ModuleOp(),
                                   blockModule ? &block : nullptr)
          : cpu::emitObjectFile(*module, tmp, cpuOptions);
      if (failed(ok)) {
        llvm::sys::fs::remove(tmp);
        return 1;
      }
      // An object file comes with what a library links in beside the
      // model's code: `<stem>.h` (the C interface), `<stem>.runtime.c` (the
      // CPU check and, with --state, the stream API; compiled with the
      // program, on the target for a cross-compiled model) and, with
      // --stream-block, `<stem>.block.o` (the block entry run_chunks calls).
      SmallVector<SmallString<256>, 3> written;
      auto undo = [&] {
        llvm::sys::fs::remove(tmp);
        for (auto &w : written)
          llvm::sys::fs::remove(w);
      };
      if (ext == ".o") {
        auto beside = [&](StringRef suffix) {
          SmallString<256> p(outputPath);
          llvm::sys::path::replace_extension(p, suffix);
          return p;
        };
        if (blockModule) {
          SmallString<256> blockObj = beside("block.o");
          SmallString<256> blockTmp(blockObj);
          blockTmp += ".tmp-obj";
          if (failed(cpu::emitObjectFile(*blockModule, blockTmp, cpuOptions,
                                         /*blockEntry=*/true)) ||
              llvm::sys::fs::rename(blockTmp, blockObj)) {
            llvm::sys::fs::remove(blockTmp);
            undo();
            return 1;
          }
          written.push_back(blockObj);
        }
        for (auto [suffix, text] :
             {std::pair<StringRef, std::string>{"h", cpu::cHeader(signature)},
              {"runtime.c",
               "/* Generated by lstm-opt --target=cpu -o " +
                   llvm::sys::path::filename(outputPath).str() +
                   ": compile and link it with the object (docs/RuntimeABI.md). "
                   "*/\n" +
                   cpu::cpuCheckSource(cpuOptions) +
                   cpu::streamSource(signature,
                                     blockModule ? &block : nullptr)}}) {
          SmallString<256> path = beside(suffix);
          if (failed(writeAtomically(path, text))) {
            undo();
            return 1;
          }
          written.push_back(path);
        }
      }
      if (ext != ".so" && llvm::sys::fs::rename(tmp, outputPath)) {
        undo();
        llvm::errs() << outputPath << ": error: cannot write the output file\n";
        return 1;
      }
      return finishReport();
    }
  }

  // --target=iree -o m.vmfb: the module compiled by IREE in this process.
  if (target == "iree" && llvm::sys::path::extension(outputPath) == ".vmfb") {
    start = std::chrono::steady_clock::now();
    std::string text;
    llvm::raw_string_ostream ts(text);
    module->print(ts);
    std::vector<std::string> extra;
    // IREE's own code for the CPU lstm-opt's kernels are compiled for.
    if (ireeCPUKernels && compileOptions->targetCPUGiven())
      extra.push_back("--iree-llvmcpu-target-cpu=" +
                      compileOptions->targetCPUName().str());
    extra.insert(extra.end(), ireeFlags.begin(), ireeFlags.end());
    if (failed(compileWithIREE(text, inputPath, outputPath,
                               findIREECompilerLibrary(ireeCompilerLib, argv[0]),
                               extra)))
      return 1;
    report.phases.push_back({"iree-compile", msSince(start)});
    return finishReport();
  }

  // Output.
  start = std::chrono::steady_clock::now();
  std::string data;
  llvm::raw_string_ostream os(data);
  if (outFormat == Format::MLIR) {
    module->print(os);
  } else {
    ONNXExportOptions options;
    options.runChecker = !noOnnxCheck;
    if (isONNXFile(inputPath))
      options.inputCheckerError = [&] { return checkONNXFile(inputPath); };
    if (failed(exportONNX(*module, os,
                          outFormat == Format::ONNX ? ONNXFileFormat::Binary
                                                    : ONNXFileFormat::Text,
                          options)))
      return 1;
  }
  if (failed(writeAtomically(outputPath, data)))
    return 1;
  report.phases.push_back({"export", msSince(start)});
  return finishReport();
}

} // namespace

int lstm_opt::lstmOptMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  registerAllPipelines();
  cpu::registerIREEKernelsPass();
  static CompileOptions shared(lstmOptCategory, 1, "1, sequential code");
  compileOptions = &shared;

  auto [inputPath, outputPath] =
      registerAndParseCLIOptions(argc, argv, "lstm-opt: recurrent-network "
                                             "optimiser for ONNX models\n",
                                 registry);

  if (printOperators) {
    printOperatorTable(llvm::outs());
    return 0;
  }
  // Bad compile options are refused before anything is read or run.
  {
    cpu::CPUOptions probe;
    if (llvm::Error e = shared.fill(probe)) {
      llvm::errs() << "lstm-opt: error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
  }
  if (reportKind != "none" && reportKind != "" && reportKind != "text" &&
      reportKind != "json") {
    llvm::errs() << "lstm-opt: error: --report takes 'text' or 'json', not '"
                 << reportKind << "'\n";
    return 1;
  }
  if (reportKind == "")
    reportKind = "text";
  if (reportKind == "none" && !reportFile.empty())
    reportKind = "text"; // --report-file alone asks for the text report
  if (target != "onnx" && target != "cpu" && target != "cudnn" &&
      target != "gpu" && target != "linalg" && target != "iree") {
    llvm::errs() << "lstm-opt: error: unknown --target '" << target
                 << "' (onnx, cpu, cudnn, gpu, linalg, iree)\n";
    return 1;
  }

  Format outFormat = Format::MLIR;
  if (!emitFormat.empty()) {
    if (emitFormat == "onnx")
      outFormat = Format::ONNX;
    else if (emitFormat == "onnxtext")
      outFormat = Format::ONNXText;
    else if (emitFormat != "mlir") {
      llvm::errs() << "lstm-opt: error: --emit takes onnx, onnxtext or mlir, "
                      "not '"
                   << emitFormat << "'\n";
      return 1;
    }
  } else if (target == "cpu" || target == "cudnn") {
    StringRef ext = llvm::sys::path::extension(outputPath);
    if (ext == ".so" || ext == ".o" || ext == ".s")
      outFormat = Format::Object;
    else if (outputPath != "-" && ext != ".mlir") {
      llvm::errs() << "lstm-opt: error: --target=" << target
                   << " writes .mlir (LLVM dialect), .o (object file), .s "
                      "(assembly) or .so (shared library + .h), not '"
                   << outputPath << "'\n";
      return 1;
    }
  } else if (target == "linalg" || target == "iree") {
    StringRef ext = llvm::sys::path::extension(outputPath);
    if (target == "iree" && ext == ".vmfb") {
      // Compiled by IREE in this process (runDriver).
    } else if (outputPath != "-" && ext != ".mlir") {
      llvm::errs() << "lstm-opt: error: --target=" << target
                   << " writes .mlir (linalg, tensor, arith, math and scf on "
                      "tensors"
                   << (target == "iree" ? ", the recurrences in IREE dispatch "
                                          "regions) or .vmfb (compiled by the "
                                          "IREE compiler library"
                                        : "")
                   << "), not '" << outputPath << "'\n";
      return 1;
    }
  } else if (target == "gpu") {
    StringRef ext = llvm::sys::path::extension(outputPath);
    if (ext == ".ptx" || ext == ".cubin" || ext == ".so" || ext == ".o")
      outFormat = Format::Object;
    else if (outputPath != "-" && ext != ".mlir") {
      llvm::errs() << "lstm-opt: error: --target=gpu writes .ptx (PTX of the "
                      "generated kernels), .cubin (ptxas), .so (shared "
                      "library + .h: the model, its recurrent layers as GPU "
                      "kernels), .o or .mlir (LLVM dialect), not '"
                   << outputPath << "'\n";
      return 1;
    }
  } else if (outputPath != "-" && isONNXFile(outputPath)) {
    outFormat = getONNXFileFormat(outputPath) == ONNXFileFormat::Text
                    ? Format::ONNXText
                    : Format::ONNX;
  }

  bool onnxSide = isONNXFile(inputPath) || outFormat != Format::MLIR ||
                  reportKind != "none" || target != "onnx";
  if (!onnxSide)
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputPath, outputPath, registry));
  return runDriver(argc, argv, inputPath, outputPath, outFormat, registry);
}

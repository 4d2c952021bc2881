//===- FuzzCommon.h - shared set-up of the libFuzzer targets -----*- C++ -*-===//
//
// One MLIR context for the whole run (made once: a fresh one per input would
// cost more than the input), diagnostics swallowed, and the path lstm-opt
// takes on a model: import, recurrent loops unrolled, the default pipeline,
// export to bytes. An input may fail anywhere with a diagnostic; it must not
// crash, hang, leak or trip a sanitizer.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TEST_FUZZ_FUZZCOMMON_H
#define LSTM_OPT_TEST_FUZZ_FUZZCOMMON_H

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"
#include "lstm-opt/InitAll.h"
#include "lstm-opt/Pipelines/Pipelines.h"
#include "lstm-opt/Target/ONNX/ONNXExport.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lstm_opt::fuzz {

/// The context for the next input. A context keeps every attribute, type and
/// resource blob it ever made (lstm-opt makes one per run), so the fuzzers
/// start a fresh one every kInputsPerContext inputs to bound their memory.
inline mlir::MLIRContext &context() {
  constexpr int kInputsPerContext = 500;
  static std::unique_ptr<mlir::MLIRContext> ctx;
  static int inputs = 0;
  if (!ctx || ++inputs % kInputsPerContext == 0) {
    static bool registered = [] {
      registerAllPasses();
      return true;
    }();
    (void)registered;
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    ctx.reset(); // the old one first: its memory is what we want back
    ctx = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    ctx->printOpOnDiagnostic(false);
    // Diagnostics are the expected outcome for most inputs: not printed.
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
  }
  return *ctx;
}

/// What lstm-opt does with an imported model (ONNX target): inline the Ifs
/// that shapes decide, unroll recurrent loops, run the default pipeline,
/// export; then the streaming rewrite (--stream-to-sequence=3, the state
/// found by auto, batched where it can be) on the result, exported too. Any
/// step may fail cleanly.
inline void optimiseAndExport(mlir::OwningOpRef<mlir::ModuleOp> module,
                              const ONNXImportOptions &options) {
  int inlined = 0;
  if (!module || mlir::failed(inlineShapeDecidedIfs(module, options, inlined)) ||
      mlir::failed(unrollRecurrentLoops(module, options)))
    return;
  mlir::PassManager pm(module->getContext(), mlir::ModuleOp::getOperationName());
  buildDefaultPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return;
  auto exportIt = [](mlir::ModuleOp m) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    ONNXExportOptions exportOptions;
    exportOptions.runChecker = false; // the checker is libonnx's, fuzzed upstream
    (void)exportONNX(m, os, ONNXFileFormat::Binary, exportOptions);
  };
  exportIt(*module);
  mlir::PassManager spm(module->getContext(), mlir::ModuleOp::getOperationName());
  rnn::ONNXStreamToSequencePassOptions stream;
  stream.chunks = 3;
  spm.addPass(rnn::createONNXStreamToSequencePass(stream));
  if (mlir::succeeded(spm.run(*module)))
    exportIt(*module);
}

/// One fuzz input: a model in `format`, through import, the pipeline and
/// export.
inline int fuzzModel(const uint8_t *data, size_t size, ONNXFileFormat format,
                     llvm::StringRef name) {
  ONNXImportOptions options;
  mlir::MLIRContext &ctx = context();
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  optimiseAndExport(
      importONNXBuffer(bytes, format, name, /*baseDir=*/"", &ctx, options),
      options);
  return 0;
}

} // namespace lstm_opt::fuzz

#endif // LSTM_OPT_TEST_FUZZ_FUZZCOMMON_H

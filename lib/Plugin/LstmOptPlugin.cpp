//===- LstmOptPlugin.cpp - lstm-opt as an mlir-opt plugin -----------------===//
//
//   mlir-opt --load-dialect-plugin=lib/LstmOptPlugin.so \
//            --load-pass-plugin=lib/LstmOptPlugin.so \
//            --pass-pipeline='builtin.module(lstm-opt-default)' in.mlir
//
// The dialect hook adds the onnx and rnn dialects; the pass hook registers
// lstm-opt's own passes and pipelines (mlir-opt has the upstream ones).
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LstmOpt", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            lstm_opt::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LstmOptPasses", LLVM_VERSION_STRING, []() {
            lstm_opt::registerPasses();
            lstm_opt::registerAllPipelines();
          }};
}

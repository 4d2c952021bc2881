//===- embed.cpp - lstm-opt used as a library -----------------------------===//
//
// Imports an ONNX model, runs lstm-opt's default pipeline through the
// public builder function, and prints the ONNX ops left in the graph; with
// --linalg, the portable lowering (lstm_opt::buildLinalgPipeline) instead,
// and the number of ops of each dialect left.
// Usage: embed MODEL.onnx [--linalg]
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/InitAll.h"
#include "lstm-opt/Pipelines/Pipelines.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

int main(int argc, char **argv) {
  bool linalg = argc == 3 && llvm::StringRef(argv[2]) == "--linalg";
  if (argc != 2 && !linalg) {
    llvm::errs() << "usage: embed MODEL.onnx [--linalg]\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  lstm_opt::registerAllDialects(registry);
  lstm_opt::registerAllPasses();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  auto module = lstm_opt::importONNXFile(argv[1], &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  if (linalg)
    lstm_opt::buildLinalgPipeline(pm);
  else
    lstm_opt::buildDefaultPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return 1;
  if (linalg) {
    std::map<std::string, int> dialects;
    module->walk([&](mlir::Operation *op) {
      ++dialects[op->getName().getDialectNamespace().str()];
    });
    for (auto &[dialect, n] : dialects)
      llvm::outs() << "dialect " << dialect << " " << n << "\n";
    return 0;
  }

  std::map<std::string, int> counts;
  module->walk([&](mlir::Operation *op) {
    llvm::StringRef type = lstm_opt::onnx::getOnnxOpType(op);
    if (!type.empty())
      ++counts[type.str()];
  });
  for (auto &[type, n] : counts)
    llvm::outs() << type << " " << n << "\n";
  return 0;
}

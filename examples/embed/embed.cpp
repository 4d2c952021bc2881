//===- embed.cpp - lstm-opt used as a library -----------------------------===//
//
// Imports an ONNX model, runs lstm-opt's default pipeline through the
// public builder function, and prints the ONNX ops left in the graph.
// Usage: embed MODEL.onnx
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
  if (argc != 2) {
    llvm::errs() << "usage: embed MODEL.onnx\n";
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
  lstm_opt::buildDefaultPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return 1;

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

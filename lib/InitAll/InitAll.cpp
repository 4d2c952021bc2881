//===- InitAll.cpp - register everything lstm-opt provides ----------------===//

#include "lstm-opt/InitAll.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Conversion/Passes.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"
#include "lstm-opt/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Transforms/Passes.h"

void lstm_opt::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<lstm_opt::onnx::ONNXDialect, lstm_opt::rnn::RNNDialect,
                  mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect>();
  // The CPU backend lowers through upstream dialects (linalg, bufferization,
  // vector, scf, memref, LLVM, OpenMP), with their interface models.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
}

void lstm_opt::registerPasses() {
  static bool once = [] {
    lstm_opt::rnn::registerRNNPasses();
    lstm_opt::registerLstmOptConversionPasses();
    return true;
  }();
  (void)once;
}

void lstm_opt::registerAllPasses() {
  static bool once = [] {
    mlir::registerAllPasses();
    return true;
  }();
  (void)once;
  registerPasses();
}

void lstm_opt::registerAllPipelines() { lstm_opt::registerPipelines(); }

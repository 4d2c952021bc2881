//===- ONNXDialect.cpp - onnx dialect registration ------------------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace lstm_opt::onnx;

#include "lstm-opt/Dialect/ONNX/IR/ONNXDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "lstm-opt/Dialect/ONNX/IR/ONNXTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "lstm-opt/Dialect/ONNX/IR/ONNXAttrs.cpp.inc"

void ONNXDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "lstm-opt/Dialect/ONNX/IR/ONNXTypes.cpp.inc"
      >();
}

void ONNXDialect::initialize() {
  registerTypes();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "lstm-opt/Dialect/ONNX/IR/ONNXAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.cpp.inc"
      >();
}

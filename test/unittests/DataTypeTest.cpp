//===- DataTypeTest.cpp - ONNX data type <-> MLIR element type ------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace lstm_opt::onnx;

TEST(DataType, EveryOnnxTypeRoundTrips) {
  MLIRContext ctx;
  ctx.loadDialect<ONNXDialect>();
  for (int64_t dt = 1; dt <= 23; ++dt) {
    Type t = getElementTypeForOnnxDataType(&ctx, dt);
    ASSERT_TRUE(t) << "data type " << dt;
    EXPECT_EQ(getOnnxDataTypeForElementType(t), dt) << "data type " << dt;
  }
}

TEST(DataType, SignednessIsKept) {
  MLIRContext ctx;
  ctx.loadDialect<ONNXDialect>();
  // INT8 is signless i8 (MLIR's convention for signed), UINT8 is ui8.
  EXPECT_TRUE(getElementTypeForOnnxDataType(&ctx, 3).isSignlessInteger(8));
  EXPECT_TRUE(getElementTypeForOnnxDataType(&ctx, 2).isUnsignedInteger(8));
  EXPECT_TRUE(getElementTypeForOnnxDataType(&ctx, 9).isInteger(1));
  Builder b(&ctx);
  // Signed si8 (not produced by the importer) is written as INT8 too.
  EXPECT_EQ(getOnnxDataTypeForElementType(b.getIntegerType(8, /*isSigned=*/true)), 3);
  EXPECT_EQ(getOnnxDataTypeForElementType(b.getIntegerType(7)), 0);
}

TEST(DataType, UnknownNumbersAreRejected) {
  MLIRContext ctx;
  EXPECT_FALSE(getElementTypeForOnnxDataType(&ctx, 0));
  EXPECT_FALSE(getElementTypeForOnnxDataType(&ctx, 99));
  EXPECT_FALSE(getElementTypeForOnnxDataType(&ctx, -1));
}

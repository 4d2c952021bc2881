//===- FoldConstantTest.cpp - onnx::foldConstantF32 ------------------------===//
//
// The evaluator that reads weights through the data movement exporters leave
// unfolded: each op against values worked out by hand from ONNX's semantics.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
namespace od = lstm_opt::onnx;

namespace {

/// Parses `body` as the body of a function and folds its returned value.
std::optional<od::F32Tensor> foldReturned(StringRef body,
                                          int64_t maxElements = 1 << 20) {
  static MLIRContext ctx;
  ctx.loadDialect<od::ONNXDialect, func::FuncDialect>();
  std::string text = "func.func @f() -> tensor<*xf32> {\n  %none = onnx.none\n" +
                     body.str() + "\n}\n";
  static std::vector<OwningOpRef<ModuleOp>> keep;
  keep.push_back(parseSourceString<ModuleOp>(text, &ctx));
  EXPECT_TRUE(keep.back()) << text;
  if (!keep.back())
    return std::nullopt;
  auto f = cast<func::FuncOp>(keep.back()->getBody()->front());
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  return od::foldConstantF32(ret.getOperand(0), maxElements);
}

const char *k23 =
    "  %w = onnx.initializer \"w\" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> "
    ": tensor<2x3xf32>\n";

TEST(FoldConstant, SliceWithNegativeStepReverses) {
  auto t = foldReturned(std::string(k23) + R"(
  %s = onnx.initializer "s" dense<-1> : tensor<1xi64>
  %e = onnx.initializer "e" dense<-9223372036854775807> : tensor<1xi64>
  %a = onnx.initializer "a" dense<1> : tensor<1xi64>
  %st = onnx.initializer "st" dense<-1> : tensor<1xi64>
  %y = onnx.Slice(%w, %s, %e, %a, %st) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape, (SmallVector<int64_t>{2, 3}));
  EXPECT_EQ(t->values, (std::vector<float>{3, 2, 1, 6, 5, 4}));
}

TEST(FoldConstant, SliceWithStepTwoAndClampedEnd) {
  auto t = foldReturned(std::string(k23) + R"(
  %s = onnx.initializer "s" dense<0> : tensor<1xi64>
  %e = onnx.initializer "e" dense<100> : tensor<1xi64>
  %a = onnx.initializer "a" dense<-1> : tensor<1xi64>
  %st = onnx.initializer "st" dense<2> : tensor<1xi64>
  %y = onnx.Slice(%w, %s, %e, %a, %st) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape, (SmallVector<int64_t>{2, 2}));
  EXPECT_EQ(t->values, (std::vector<float>{1, 3, 4, 6}));
}

TEST(FoldConstant, TransposeReshapeSqueezeUnsqueeze) {
  auto t = foldReturned(std::string(k23) + R"(
  %t = onnx.Transpose(%w) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<*xf32>
  %shape = onnx.initializer "shape" dense<[0, -1, 1]> : tensor<3xi64>
  %r = onnx.Reshape(%t, %shape) : (tensor<*xf32>, tensor<3xi64>) -> tensor<*xf32>
  %ax = onnx.initializer "ax" dense<[2]> : tensor<1xi64>
  %q = onnx.Squeeze(%r, %ax) : (tensor<*xf32>, tensor<1xi64>) -> tensor<*xf32>
  %ax0 = onnx.initializer "ax0" dense<[0]> : tensor<1xi64>
  %u = onnx.Unsqueeze(%q, %ax0) : (tensor<*xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %u : tensor<*xf32>)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape, (SmallVector<int64_t>{1, 3, 2}));
  EXPECT_EQ(t->values, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(FoldConstant, ConcatAlongInnerAxisAndCastFromF16) {
  auto t = foldReturned(std::string(k23) + R"(
  %h = onnx.initializer "h" dense<[[0.5], [-2.0]]> : tensor<2x1xf16>
  %c = onnx.Cast(%h) {to = 1 : i64} : (tensor<2x1xf16>) -> tensor<*xf32>
  %y = onnx.Concat(%w, %c) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape, (SmallVector<int64_t>{2, 4}));
  EXPECT_EQ(t->values, (std::vector<float>{1, 2, 3, 0.5, 4, 5, 6, -2}));
}

TEST(FoldConstant, RefusesWhatItCannotProve) {
  // A cast to f16 would round: not folded.
  EXPECT_FALSE(foldReturned(std::string(k23) + R"(
  %c = onnx.Cast(%w) {to = 10 : i64} : (tensor<2x3xf32>) -> tensor<*xf16>
  %d = onnx.Cast(%c) {to = 1 : i64} : (tensor<*xf16>) -> tensor<*xf32>
  return %d : tensor<*xf32>)"));
  // A reshape to the wrong element count, its shape computed (the verifier
  // reads constant shapes only, so this one reaches the folder).
  EXPECT_FALSE(foldReturned(std::string(k23) + R"(
  %a = onnx.initializer "a" dense<[4]> : tensor<1xi64>
  %b = onnx.initializer "b" dense<[2]> : tensor<1xi64>
  %shape = onnx.Concat(%a, %b) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = onnx.Reshape(%w, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>)"));
  // The verifier refuses it where the shape is a constant.
  {
    MLIRContext ctx;
    ctx.loadDialect<od::ONNXDialect, func::FuncDialect>();
    ctx.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
    EXPECT_FALSE(parseSourceString<ModuleOp>(std::string(R"(
func.func @f() -> tensor<*xf32> {
)") + k23 + R"(
  %shape = onnx.initializer "shape" dense<[4, 2]> : tensor<2xi64>
  %r = onnx.Reshape(%w, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
})", &ctx));
  }
  // More elements than allowed.
  EXPECT_FALSE(foldReturned(std::string(k23) + R"(
  %t = onnx.Transpose(%w) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %t : tensor<*xf32>)", /*maxElements=*/5));
}

} // namespace

//===- ShapeRulesTest.cpp - the onnx ops' shape rules ----------------------===//
//
// The three ways into one rule (ONNXShapeRules.h): InferShapedTypeOpInterface
// with a ValueShapeRange, the graph-level inference the recogniser uses, and
// the shared pieces (slice windows, split sizes, broadcasting) at their
// edges, against values worked out by hand from the ONNX operator spec.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <limits>

using namespace mlir;
namespace od = lstm_opt::onnx;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

class ShapeRules : public ::testing::Test {
protected:
  ShapeRules() { ctx.loadDialect<od::ONNXDialect, func::FuncDialect>(); }

  /// Parses a function body; returns the value it returns.
  Value parse(StringRef body) {
    std::string text = "func.func @f(%x: tensor<2x8xf32>) -> tensor<*xf32> {\n"
                       "  %none = onnx.none\n" +
                       body.str() + "\n}\n";
    module = parseSourceString<ModuleOp>(text, &ctx);
    EXPECT_TRUE(module) << text;
    if (!module)
      return {};
    auto f = cast<func::FuncOp>(module->getBody()->front());
    return f.front().getTerminator()->getOperand(0);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

SmallVector<int64_t> dimsOf(const ShapedTypeComponents &c) {
  EXPECT_TRUE(c.hasRank());
  return SmallVector<int64_t>(c.getDims());
}

TEST_F(ShapeRules, GraphInferenceSeesThroughUnrankedValues) {
  // Every intermediate declared unranked, the reshape target computed:
  // [2, 8] -T-> [8, 2] -Reshape(Concat([4], [-1]))-> [4, 4] -MatMul W[4, 5]
  // -> [4, 5] -Slice(axis -1, 1:100:2)-> [4, 2].
  Value v = parse(R"(
  %t = onnx.Transpose(%x) : (tensor<2x8xf32>) -> tensor<*xf32>
  %a = onnx.initializer "a" dense<[4]> : tensor<1xi64>
  %b = onnx.initializer "b" dense<[-1]> : tensor<1xi64>
  %s = onnx.Concat(%a, %b) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<*xi64>
  %r = onnx.Reshape(%t, %s) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %w = onnx.initializer "w" dense<1.0> : tensor<4x5xf32>
  %m = onnx.MatMul(%r, %w) : (tensor<*xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  %st = onnx.initializer "st" dense<[1]> : tensor<1xi64>
  %en = onnx.initializer "en" dense<[100]> : tensor<1xi64>
  %ax = onnx.initializer "ax" dense<[-1]> : tensor<1xi64>
  %sp = onnx.initializer "sp" dense<[2]> : tensor<1xi64>
  %y = onnx.Slice(%m, %st, %en, %ax, %sp) : (tensor<*xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>)");
  ASSERT_TRUE(v);
  EXPECT_EQ(dimsOf(od::inferShape(v)), (SmallVector<int64_t>{4, 2}));
  EXPECT_EQ(od::inferLastDim(v), 2);
  EXPECT_EQ(od::inferRank(v), 2);
}

TEST_F(ShapeRules, GraphInferenceKeepsWhatIsUnknown) {
  // A dynamic batch (from an op without a rule) stays unknown; the feature
  // size is found.
  Value v = parse(R"(
  %d = onnx.node "Foo"(%x) {domain = "custom"} : (tensor<2x8xf32>) -> tensor<?x8xf32>
  %w = onnx.initializer "w" dense<1.0> : tensor<8x3xf32>
  %m = onnx.MatMul(%d, %w) : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<*xf32>
  %e = onnx.Sigmoid(%m) : (tensor<*xf32>) -> tensor<*xf32>
  return %e : tensor<*xf32>)");
  ASSERT_TRUE(v);
  EXPECT_EQ(dimsOf(od::inferShape(v)), (SmallVector<int64_t>{kDyn, 3}));
}

TEST_F(ShapeRules, InferShapedTypeOpInterfaceUsesTheRangeMappings) {
  Value v = parse(R"(
  %s = onnx.node "Foo"(%x) {domain = "custom"} : (tensor<2x8xf32>) -> tensor<2xi64>
  %r = onnx.Reshape(%x, %s) : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>)");
  ASSERT_TRUE(v);
  Operation *reshape = v.getDefiningOp();
  auto iface = cast<InferShapedTypeOpInterface>(reshape);
  auto infer = [&](ValueShapeRange range) {
    SmallVector<ShapedTypeComponents> shapes;
    EXPECT_TRUE(succeeded(iface.inferReturnTypeComponents(
        &ctx, reshape->getLoc(), range, reshape->getAttrDictionary(),
        reshape->getPropertiesStorage(), reshape->getRegions(), shapes)));
    return shapes;
  };
  // Without a mapping the target is unknown: rank 2 from its type.
  auto shapes = infer(ValueShapeRange(reshape->getOperands()));
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(dimsOf(shapes[0]), (SmallVector<int64_t>{kDyn, kDyn}));
  // A value-to-shape mapping that knows it: [-1, 4] -> [4, 4].
  Builder b(&ctx);
  auto target = DenseIntElementsAttr::get(
      RankedTensorType::get({2}, b.getI64Type()), ArrayRef<int64_t>{-1, 4});
  Value shapeOperand = reshape->getOperand(1);
  auto asShape = [&](Value x) -> ShapeAdaptor {
    return x == shapeOperand ? ShapeAdaptor(target) : ShapeAdaptor(static_cast<ShapedTypeComponents *>(nullptr));
  };
  shapes = infer(ValueShapeRange(reshape->getOperands(), nullptr, asShape));
  EXPECT_EQ(dimsOf(shapes[0]), (SmallVector<int64_t>{4, 4}));
  // The refusal is reported at the location given.
  auto bad = DenseIntElementsAttr::get(
      RankedTensorType::get({2}, b.getI64Type()), ArrayRef<int64_t>{-1, 3});
  auto asBadShape = [&](Value x) -> ShapeAdaptor {
    return x == shapeOperand ? ShapeAdaptor(bad) : ShapeAdaptor(static_cast<ShapedTypeComponents *>(nullptr));
  };
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  SmallVector<ShapedTypeComponents> none;
  EXPECT_TRUE(failed(iface.inferReturnTypeComponents(
      &ctx, reshape->getLoc(),
      ValueShapeRange(reshape->getOperands(), nullptr, asBadShape),
      reshape->getAttrDictionary(), reshape->getPropertiesStorage(),
      reshape->getRegions(), none)));
  EXPECT_EQ(message, "cannot infer the -1 dimension reshaping 'tensor<2x8xf32>'");
}

TEST(ShapeRulePieces, SliceWindowFollowsTheSpec) {
  std::string why;
  // Negative step from the end past the start: all 6, reversed.
  auto w = od::computeSliceWindow({6}, {-1}, {std::numeric_limits<int64_t>::min()},
                                  {}, {-1}, why);
  ASSERT_TRUE(succeeded(w));
  EXPECT_EQ(w->first[0], 5);
  EXPECT_EQ(w->size[0], 6);
  // Step 3 over [1, 6): 1, 4.
  w = od::computeSliceWindow({6}, {1}, {100}, {0}, {3}, why);
  ASSERT_TRUE(succeeded(w));
  EXPECT_EQ(w->size[0], 2);
  // An empty axis with a negative step: empty, no clamp to [0, -1].
  w = od::computeSliceWindow({0, 4}, {-1}, {-100}, {0}, {-1}, why);
  ASSERT_TRUE(succeeded(w));
  EXPECT_EQ(w->size[0], 0);
  // An axis of unknown size: unknown count; other axes kept.
  w = od::computeSliceWindow({kDyn, 4}, {0}, {2}, {0}, {}, why);
  ASSERT_TRUE(succeeded(w));
  EXPECT_EQ(w->size[0], kDyn);
  EXPECT_EQ(w->size[1], 4);
  // Refusals.
  EXPECT_TRUE(failed(od::computeSliceWindow({4}, {0}, {1}, {0}, {0}, why)));
  EXPECT_EQ(why, "step 0");
  EXPECT_TRUE(failed(od::computeSliceWindow(
      {4}, {0}, {1}, {0}, {std::numeric_limits<int64_t>::min()}, why)));
  EXPECT_TRUE(failed(od::computeSliceWindow({4, 4}, {0, 0}, {1, 1}, {1, -1},
                                            {}, why)));
  EXPECT_EQ(why, "invalid or repeated axis -1");
  EXPECT_TRUE(failed(od::computeSliceWindow({4}, {0}, {1, 2}, {}, {}, why)));
}

TEST(ShapeRulePieces, SplitSizes) {
  std::string why;
  // Opset 18's num_outputs: ceil(7 / 3) = 3 each, the last smaller.
  auto s = od::computeSplitSizes(std::nullopt, 3, true, 7, why);
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(*s, (od::Dims{3, 3, 1}));
  EXPECT_TRUE(failed(od::computeSplitSizes(std::nullopt, 3, false, 7, why)));
  EXPECT_EQ(why, "dimension 7 does not split into 3 equal parts");
  // Explicit sizes must add up, without overflowing.
  int64_t big = std::numeric_limits<int64_t>::max();
  od::Dims over = {big, big};
  EXPECT_TRUE(failed(od::computeSplitSizes(ArrayRef<int64_t>(over), 2, false,
                                           kDyn, why)));
  od::Dims parts = {2, 5};
  s = od::computeSplitSizes(ArrayRef<int64_t>(parts), 2, false, kDyn, why);
  EXPECT_TRUE(succeeded(s));
  EXPECT_TRUE(failed(od::computeSplitSizes(ArrayRef<int64_t>(parts), 2, false,
                                           8, why)));
  EXPECT_EQ(why, "'split' sizes add up to 7 but the axis has 8");
}

TEST(ShapeRulePieces, BroadcastWithUnknownDimensions) {
  auto b = od::broadcastShapes({{kDyn, 1, 4}, {3, 1}});
  ASSERT_TRUE(succeeded(b));
  EXPECT_EQ(*b, (od::Dims{kDyn, 3, 4}));
  // An unknown dimension against a static one other than 1: that one.
  b = od::broadcastShapes({{kDyn}, {5}});
  ASSERT_TRUE(succeeded(b));
  EXPECT_EQ(*b, (od::Dims{5}));
  // Against 1: still unknown.
  b = od::broadcastShapes({{kDyn}, {1}});
  ASSERT_TRUE(succeeded(b));
  EXPECT_EQ(*b, (od::Dims{kDyn}));
  EXPECT_TRUE(failed(od::broadcastShapes({{2, 3}, {4, 3}})));
}

} // namespace

//===- ONNXToLinalg.cpp - onnx -> linalg on tensors -----------------------===//
//
// Lowers the onnx ops that surround the recognised layers to upstream MLIR at
// the tensor level, for the CPU backend (which then bufferizes and lowers to
// LLVM):
//
//  * constants (initializers, Constant, ConstantOfShape, Shape) become
//    arith.constant;
//  * reshapes (Reshape, Squeeze, Unsqueeze, Flatten) become
//    tensor.collapse_shape / tensor.expand_shape;
//  * Slice/Split become tensor.extract_slice (a negative step a linalg.generic
//    with a decreasing affine index), Concat tensor.concat, Transpose
//    linalg.transpose;
//  * elementwise ops, Cast, Expand, Gather and Softmax become linalg.generic
//    (numpy broadcasting through the indexing maps; Gather reads the data
//    with tensor.extract at a normalised and clamped index);
//  * MatMul/Gemm become linalg.matmul / linalg.batch_matmul, or a
//    linalg.generic contraction for broadcast batches.
//
// The ops are lowered one at a time in block order. Each lowering computes
// its result shape from its (static) operands, so a result the importer's
// shape inference left dynamic comes out static; uses by onnx and rnn ops
// take the static value, other uses (func.return) a tensor.cast back to the
// declared type. Integer results that are compile-time constants (the shape
// arithmetic exporters emit: Shape -> Gather -> Concat -> Reshape) are
// folded to arith.constant, so the ops that need a constant shape read one.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/ONNXToLinalg/ONNXToLinalg.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"
#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSwitch.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

namespace lstm_opt {
#define GEN_PASS_DEF_CONVERTONNXTOLINALGPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;
using namespace lstm_opt;

namespace {

using Shape = SmallVector<int64_t>;
/// The longest Range materialised as a constant.
constexpr int64_t kMaxRangeElements = int64_t(1) << 24;
/// Lowered values for an op's results, one per result (null: a `none`
/// result, which must be unused).
using Results = SmallVector<Value>;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Integer results with at most this many elements are folded to constants
/// when their values are known at compile time.
constexpr int64_t kMaxFoldedElements = 4096;

int64_t getNumElements(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

bool isSignlessInt(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  return i && i.isSignless();
}

using onnx::getNodeName;

/// A scalar constant of a float or signless integer type.
Value createScalar(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  return arith::ConstantOp::create(b, loc,
                                   b.getIntegerAttr(type, (int64_t)value));
}

/// An integer tensor constant; i1 values are x != 0.
Value createIntTensor(OpBuilder &b, Location loc, RankedTensorType type,
                      ArrayRef<int64_t> values) {
  unsigned width = type.getElementTypeBitWidth();
  SmallVector<APInt> ints;
  for (int64_t v : values)
    ints.push_back(width == 1 ? APInt(1, v != 0)
                              : APInt(width, (uint64_t)v, /*isSigned=*/true,
                                      /*implicitTrunc=*/true));
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, ints));
}

/// Maps the loops of a `rank`-d iteration space to the dimensions of an
/// operand of shape `shape`, aligned to the right (numpy): a size-1 dimension
/// where the loop is longer reads index 0.
AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> loopShape,
                          ArrayRef<int64_t> shape) {
  int64_t rank = loopShape.size(), off = rank - shape.size();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0, e = shape.size(); i < e; ++i)
    exprs.push_back(shape[i] == 1 && loopShape[off + i] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(off + i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// The map from a `rank`-d iteration space to the loops not in `reduced`.
AffineMap getProjectionMap(MLIRContext *ctx, ArrayRef<bool> reduced) {
  SmallVector<AffineExpr> exprs;
  for (auto [i, r] : llvm::enumerate(reduced))
    if (!r)
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(reduced.size(), 0, exprs, ctx);
}

/// One dimension of an ONNX Slice after clamping: elements
/// start, start + step, ... (size of them).
struct SliceDim {
  int64_t start = 0, size = 0, step = 1;
};

/// Converts scalar `x` of type `from` to `to` (ONNX Cast semantics for
/// float and signless integer types; bool is i1).
/// An ONNX index (any integer type) into a dimension of `dim`: a negative
/// one counts from the end; then clamped to [0, dim), so that a bad index
/// reads (or writes) an element of the tensor, never outside it.
Value normalizedIndex(OpBuilder &b, Location loc, Value idx, int64_t dim) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), idx);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = arith::ConstantIndexOp::create(b, loc, dim);
  Value last = arith::ConstantIndexOp::create(b, loc, dim - 1);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::AddIOp::create(b, loc, i, size);
  i = arith::SelectOp::create(b, loc, negative, wrapped, i);
  i = arith::MaxSIOp::create(b, loc, i, zero);
  return arith::MinSIOp::create(b, loc, i, last);
}

Value convertScalar(OpBuilder &b, Location loc, Value x, Type from, Type to) {
  if (from == to)
    return x;
  auto fi = dyn_cast<IntegerType>(from), ti = dyn_cast<IntegerType>(to);
  auto ff = dyn_cast<FloatType>(from), tf = dyn_cast<FloatType>(to);
  if (ff && tf) {
    if (ff.getWidth() < tf.getWidth())
      return arith::ExtFOp::create(b, loc, tf, x);
    if (ff.getWidth() > tf.getWidth())
      return arith::TruncFOp::create(b, loc, tf, x);
    // Same width (f16 <-> bf16): through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return arith::TruncFOp::create(b, loc, tf, wide);
  }
  if (fi && ti) {
    if (ti.getWidth() == 1)
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                   createScalar(b, loc, from, 0));
    if (fi.getWidth() < ti.getWidth())
      return fi.getWidth() == 1 ? (Value)arith::ExtUIOp::create(b, loc, ti, x)
                                : (Value)arith::ExtSIOp::create(b, loc, ti, x);
    return arith::TruncIOp::create(b, loc, ti, x);
  }
  if (fi && tf)
    return fi.getWidth() == 1 ? (Value)arith::UIToFPOp::create(b, loc, tf, x)
                              : (Value)arith::SIToFPOp::create(b, loc, tf, x);
  // float -> int
  if (ti.getWidth() == 1)
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                 createScalar(b, loc, from, 0));
  return arith::FPToSIOp::create(b, loc, ti, x);
}

//===----------------------------------------------------------------------===//
// The lowering of one function
//===----------------------------------------------------------------------===//

class FunctionLowering {
public:
  explicit FunctionLowering(func::FuncOp func)
      : func(func), ctx(func.getContext()), b(func.getContext()),
        opset(onnx::getDefaultOpset(func)) {}

  LogicalResult run();

private:
  /// "convert-onnx-to-linalg: node 'NAME' (OpType): " on `op`.
  InFlightDiagnostic error(Operation *op);
  StringRef opTypeOf(Operation *op);

  LogicalResult lowerOp(Operation *op);
  FailureOr<Results> lowerResults(Operation *op);
  LogicalResult replaceResult(Operation *op, Value oldValue, Value newValue);
  Value foldIntResult(Operation *op, Value result, Value lowered);

  // Building blocks.
  Value empty(Location loc, ArrayRef<int64_t> shape, Type elemType) {
    return tensor::EmptyOp::create(b, loc, shape, elemType);
  }
  Value filled(Location loc, ArrayRef<int64_t> shape, Type elemType,
               Value scalar);
  Value elementwise(Location loc, ArrayRef<int64_t> shape, Type elemType,
                    ValueRange inputs, BodyFn body);
  Value reduce(Location loc, Value input, ArrayRef<bool> reduced, Value init,
               BodyFn combine);
  Value reshape(Location loc, Value input, ArrayRef<int64_t> shape);
  Value matmul2D(Location loc, Value lhs, Value rhs, Value init, bool transA,
                 bool transB);
  /// MatMul (numpy) of `lhs` and `rhs` into a result of `shape`, float or
  /// signless integer.
  Value matmul(Location loc, Value lhs, Value rhs, ArrayRef<int64_t> shape);
  /// A quantization parameter (scale or zero point) of `x`: a scalar, or
  /// with `axis` >= 0 a 1-D tensor along it, reshaped to broadcast over x.
  FailureOr<Value> quantParam(Operation *op, Value p, ArrayRef<int64_t> xs,
                              int64_t axis, StringRef what);
  /// `x` (8/16/32-bit integers) as i32 minus the zero point `zp` (if any;
  /// already shaped to broadcast over x).
  Value minusZeroPoint(Location loc, Value x, Value zp);
  /// QuantizeLinear's and DequantizeLinear's scale and zero point (if any)
  /// along their `axis` of x, shaped to broadcast over it.
  FailureOr<std::pair<Value, Value>> scaleAndZeroPoint(onnx::NodeOp op, Value x,
                                                       Value scale, Value zp);
  FailureOr<Results> lowerDequantizeLinear(onnx::NodeOp op);
  FailureOr<Results> lowerDynamicQuantizeLinear(onnx::NodeOp op);
  FailureOr<Results> lowerQuantizeLinear(onnx::NodeOp op);
  FailureOr<Results> lowerMatMulInteger(onnx::NodeOp op);
  /// MatMulInteger's and ConvInteger's two 8-bit operands, each minus its
  /// zero point (inputs 2 and 3, optional) in i32; `names`: the operands'
  /// and the zero points' names; a zero point may run along `axis0` /
  /// `axis1` of its operand (-1: a scalar only).
  FailureOr<std::pair<Value, Value>> integerOperands(onnx::NodeOp op,
                                                     ArrayRef<StringRef> names,
                                                     int64_t axis0, int64_t axis1);

  FailureOr<SmallVector<int64_t>> constantInts(Operation *op, Value v,
                                               StringRef what);
  FailureOr<SmallVector<int64_t>>
  readAxes(Operation *op, Value input, std::optional<ArrayRef<int64_t>> attr,
           StringRef what);
  LogicalResult requireArithmetic(Operation *op, Type elemType,
                                  bool floatOnly = false);

  // Op lowerings: each returns the new value of every result.
  FailureOr<Results> lower(onnx::InitializerOp op);
  FailureOr<Results> lower(onnx::ConstantOp op);
  FailureOr<Results> lower(onnx::ConstantOfShapeOp op);
  FailureOr<Results> lower(onnx::ShapeOp op);
  FailureOr<Results> lower(onnx::CastOp op);
  FailureOr<Results> lowerReshapeLike(Operation *op, Value data,
                                      ArrayRef<int64_t> shape);
  FailureOr<Results> lowerReshapeByRule(Operation *op, Value data, Value ints,
                                        std::optional<ArrayRef<int64_t>> attr,
                                        StringRef what);
  FailureOr<Results> lowerFlatten(onnx::NodeOp op);
  FailureOr<Results> lowerPad(onnx::NodeOp op);
  FailureOr<Results> lowerConv(onnx::NodeOp op);
  /// ConvInteger: both operands minus their zero points in i32, then Conv.
  FailureOr<Results> lowerConvInteger(onnx::NodeOp op);
  /// Conv of `x` and `w` (float, or i32 for ConvInteger) with its
  /// attributes from `op`.
  FailureOr<Results> lowerConvOn(onnx::NodeOp op, Value x, Value w, Value bias);
  FailureOr<int64_t> slidingWindow(Operation *op, StringRef autoPad,
                                   int64_t in, int64_t kernel, int64_t stride,
                                   int64_t dilation, bool ceil,
                                   int64_t &padLow, int64_t &padHigh);
  Value convInit(Location loc, Value bias, ArrayRef<int64_t> shape,
                 int64_t channelDim, Type elemType);
  FailureOr<Results> lowerConvChannelsLast(onnx::NodeOp op, Value xp, Value w,
                                           Value bias, ArrayRef<int64_t> outShape,
                                           ArrayRef<int64_t> strides,
                                           ArrayRef<int64_t> dil);
  FailureOr<Results> lowerPow(onnx::NodeOp op);
  /// ArgMax / ArgMin: the index (i64) of the first (or, with
  /// select_last_index, the last) extreme element along `axis`.
  FailureOr<Results> lowerArgMax(onnx::NodeOp op);
  /// Tile with constant repeats: out[i] = x[i mod in_dim] per dimension.
  FailureOr<Results> lowerTile(onnx::NodeOp op);
  /// CumSum along a constant axis (exclusive, reverse): a reduction over the
  /// axis of the elements on the summed side.
  FailureOr<Results> lowerCumSum(onnx::NodeOp op);
  /// PRelu, Max, Min (any number of inputs) and Where: elementwise over
  /// broadcast operands.
  FailureOr<Results> lowerNaryElementwise(onnx::NodeOp op);
  FailureOr<Results> lowerReduceMean(onnx::NodeOp op);
  FailureOr<Results> lowerLayerNorm(onnx::NodeOp op);
  FailureOr<Results> lowerBatchNorm(onnx::NodeOp op);
  FailureOr<Results> lowerInstanceNorm(onnx::NodeOp op);
  FailureOr<Results> normalizeFrom(Operation *op, Value x, int64_t axis,
                                   double epsilon, Value scale, Value bias);
  FailureOr<Results> lowerReverseSequence(onnx::NodeOp op);
  /// MaxPool, or with `average` AveragePool.
  FailureOr<Results> lowerPool(onnx::NodeOp op, bool average);
  FailureOr<Results> lowerRange(onnx::NodeOp op);
  /// GatherElements: out[i] = data[i with axis replaced by indices[i]].
  FailureOr<Results> lowerGatherElements(onnx::NodeOp op);
  /// ScatterND (reduction none/add/mul/max/min): data with each index
  /// tuple's slice replaced (or combined) by its update, in order.
  FailureOr<Results> lowerScatterND(onnx::NodeOp op);
  /// What both scatters require: a reduction they know (arithmetic data
  /// for one) and integer indices.
  LogicalResult checkScatter(onnx::NodeOp op, StringRef reduction,
                             Type elemType, Value indices);
  /// ScatterElements (and opset 9's Scatter; reduction none/add/mul/max/
  /// min): data with updates[i] at i with the axis coordinate replaced by
  /// indices[i].
  FailureOr<Results> lowerScatterElements(onnx::NodeOp op);
  /// Dropout at inference: its input, and a mask of all true.
  FailureOr<Results> lowerDropout(onnx::NodeOp op);
  /// Einsum with an explicit or implicit output (no ellipsis): one
  /// linalg.generic, the letters not in the output as reductions.
  FailureOr<Results> lowerEinsum(onnx::NodeOp op);
  /// ConvTranspose with explicit pads (or VALID): the gather form, each
  /// output position summing the input positions and taps that reach it.
  FailureOr<Results> lowerConvTranspose(onnx::NodeOp op);
  /// Resize (opset 10-19), modes nearest and linear: constant scales or
  /// sizes, one linalg.generic over the output reading the input at the
  /// transformed coordinates.
  FailureOr<Results> lowerResize(onnx::NodeOp op);
  /// TopK with a constant K: each element's rank along the axis (the
  /// elements before it in the order, ties by index), then output k takes
  /// the element of rank k.
  FailureOr<Results> lowerTopK(onnx::NodeOp op);
  /// The one value of a constant integer input (CumSum's axis, TopK's K).
  FailureOr<int64_t> constantInt(Operation *op, Value v, StringRef what);
  FailureOr<Results> lower(onnx::TransposeOp op);
  /// The result shapes the op's shape rule gives over the lowered operands;
  /// its refusal, or a shape not known at compile time, is an error.
  FailureOr<SmallVector<Shape>> ruleShapes(Operation *op);
  FailureOr<Shape> ruleShape(Operation *op) {
    auto shapes = ruleShapes(op);
    if (failed(shapes))
      return failure();
    return (*shapes)[0];
  }
  FailureOr<Results> lower(onnx::SliceOp op);
  FailureOr<Results> lower(onnx::ConcatOp op);
  FailureOr<Results> lower(onnx::SplitOp op);
  FailureOr<Results> lower(onnx::GatherOp op);
  FailureOr<Results> lower(onnx::ExpandOp op);
  FailureOr<Results> lower(onnx::MatMulOp op);
  FailureOr<Results> lower(onnx::GemmOp op);
  FailureOr<Results> lowerBinary(Operation *op);
  FailureOr<Results> lowerUnary(Operation *op, StringRef opType);
  FailureOr<Results> lower(onnx::ClipOp op);
  FailureOr<Results> lowerSoftmax(Operation *op, std::optional<int64_t> axis,
                                  bool log);

  func::FuncOp func;
  MLIRContext *ctx;
  OpBuilder b;
  int64_t opset;
  /// Ops that failed to lower; their users are skipped without a second
  /// error.
  llvm::DenseSet<Operation *> failedOps;
};

InFlightDiagnostic FunctionLowering::error(Operation *op) {
  std::string name = getNodeName(op);
  return op->emitError() << "convert-onnx-to-linalg: node '" << name << "' ("
                         << opTypeOf(op) << "): ";
}

StringRef FunctionLowering::opTypeOf(Operation *op) {
  StringRef type = onnx::getOnnxOpType(op);
  return type.empty() ? op->getName().getStringRef() : type;
}

FailureOr<SmallVector<int64_t>>
FunctionLowering::constantInts(Operation *op, Value v, StringRef what) {
  if (auto values = onnx::getConstantInts(v))
    return *values;
  return error(op) << "'" << what
                   << "' is not a compile-time constant (the CPU backend "
                      "needs static shapes)";
}

FailureOr<int64_t> FunctionLowering::constantInt(Operation *op, Value v,
                                                StringRef what) {
  auto values = constantInts(op, v, what);
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return error(op) << what << " must hold one value, not " << values->size();
  return (*values)[0];
}

FailureOr<SmallVector<Shape>> FunctionLowering::ruleShapes(Operation *op) {
  auto intsOf = [](Value v) { return onnx::getConstantInts(v); };
  onnx::ShapeQuery query(nullptr, intsOf);
  SmallVector<ShapedTypeComponents> shapes;
  if (failed(onnx::inferResultShapes(op, query, shapes)))
    return error(op) << query.getReason();
  SmallVector<Shape> out;
  for (const ShapedTypeComponents &s : shapes) {
    if (!s.hasRank() || llvm::any_of(s.getDims(), ShapedType::isDynamic))
      return error(op) << "the result shape is not known at compile time";
    out.emplace_back(s.getDims());
  }
  return out;
}

/// Axes from an attribute or an input (none: absent, an empty list).
FailureOr<SmallVector<int64_t>>
FunctionLowering::readAxes(Operation *op, Value input,
                           std::optional<ArrayRef<int64_t>> attr,
                           StringRef what) {
  if (attr)
    return SmallVector<int64_t>(attr->begin(), attr->end());
  if (isa<NoneType>(input.getType()))
    return SmallVector<int64_t>();
  return constantInts(op, input, what);
}

LogicalResult FunctionLowering::requireArithmetic(Operation *op, Type elemType,
                                                  bool floatOnly) {
  if (isa<FloatType>(elemType) || (!floatOnly && isSignlessInt(elemType)))
    return success();
  return error(op) << "element type " << elemType
                   << " is not supported (expected "
                   << (floatOnly ? "a float type"
                                 : "a float or signless integer type")
                   << ")";
}

Value FunctionLowering::filled(Location loc, ArrayRef<int64_t> shape,
                               Type elemType, Value scalar) {
  Value init = empty(loc, shape, elemType);
  return linalg::FillOp::create(b, loc, scalar, init).getResult(0);
}

Value FunctionLowering::elementwise(Location loc, ArrayRef<int64_t> shape,
                                    Type elemType, ValueRange inputs,
                                    BodyFn body) {
  Value init = empty(loc, shape, elemType);
  if (getNumElements(shape) == 0)
    return init;
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(getBroadcastMap(ctx, shape, shapeOf(in)));
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// Reduces `input` over the dimensions marked in `reduced` into `init`
/// (shaped like the kept dimensions); `combine(element, accumulator)`.
Value FunctionLowering::reduce(Location loc, Value input,
                               ArrayRef<bool> reduced, Value init,
                               BodyFn combine) {
  int64_t rank = reduced.size();
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 getProjectionMap(ctx, reduced)};
  SmallVector<utils::IteratorType> iterators;
  for (bool r : reduced)
    iterators.push_back(r ? utils::IteratorType::reduction
                          : utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args));
      });
  return generic.getResult(0);
}

/// Reshapes a static tensor (same number of elements) with
/// collapse_shape/expand_shape: directly when one shape refines the other,
/// else through a 1-D tensor.
Value FunctionLowering::reshape(Location loc, Value input,
                                ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> from = type.getShape();
  if (from == shape)
    return input;
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (shape.size() < from.size())
    if (auto re = getReassociationIndicesForCollapse(from, shape))
      return tensor::CollapseShapeOp::create(b, loc, target, input, *re);
  if (shape.size() > from.size())
    if (auto re = getReassociationIndicesForCollapse(shape, from))
      return tensor::ExpandShapeOp::create(b, loc, target, input, *re);
  int64_t n = getNumElements(from);
  auto flatType = RankedTensorType::get({n}, type.getElementType());
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return group;
  };
  SmallVector<ReassociationIndices> toFlat, fromFlat;
  if (!from.empty())
    toFlat.push_back(all(from.size()));
  if (!shape.empty())
    fromFlat.push_back(all(shape.size()));
  Value flat = from.empty()
                   ? (Value)tensor::ExpandShapeOp::create(b, loc, flatType,
                                                          input, toFlat)
                   : (Value)tensor::CollapseShapeOp::create(b, loc, flatType,
                                                            input, toFlat);
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, target, flat, fromFlat);
  return tensor::ExpandShapeOp::create(b, loc, target, flat, fromFlat);
}

/// linalg.matmul accumulating lhs * rhs into `init` ([M, N]); transposed
/// operands through the op's indexing maps.
Value FunctionLowering::matmul2D(Location loc, Value lhs, Value rhs, Value init,
                                 bool transA, bool transB) {
  // A constant B^T (a Linear layer's Gemm with transB = 1): transposed at
  // compile time, so that the matmul reads B's rows contiguously (what
  // cpu-vectorize-contractions tiles).
  if (transB)
    if (auto c = onnx::getConstantF32(rhs);
        c && c->shape.size() == 2 && getElementTypeOrSelf(rhs.getType()).isF32()) {
      int64_t n = c->shape[0], k = c->shape[1];
      std::vector<float> t(c->values.size());
      for (int64_t r = 0; r < n; ++r)
        for (int64_t q = 0; q < k; ++q)
          t[q * n + r] = c->values[r * k + q];
      auto type = RankedTensorType::get({k, n}, b.getF32Type());
      rhs = arith::ConstantOp::create(b, loc,
                                      DenseElementsAttr::get(type, ArrayRef<float>(t)));
      transB = false;
    }
  auto mm = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                     ValueRange{lhs, rhs}, ValueRange{init});
  if (transA || transB) {
    AffineExpr m = b.getAffineDimExpr(0), n = b.getAffineDimExpr(1),
               k = b.getAffineDimExpr(2);
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0,
                       transA ? ArrayRef<AffineExpr>{k, m}
                              : ArrayRef<AffineExpr>{m, k},
                       ctx),
        AffineMap::get(3, 0,
                       transB ? ArrayRef<AffineExpr>{n, k}
                              : ArrayRef<AffineExpr>{k, n},
                       ctx),
        AffineMap::get(3, 0, {m, n}, ctx)};
    mm.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  }
  return mm.getResult(0);
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

/// A rank-0 dense_resource constant as a plain dense attribute:
/// finalize-memref-to-llvm cannot lower a rank-0 memref.global holding a
/// dense_resource (LLVM 22 aborts). Other attributes are returned unchanged.
ElementsAttr inlineScalarResource(ElementsAttr attr) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!resource || !type || type.getRank() != 0)
    return attr;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return attr;
  ArrayRef<char> data = blob->getData();
  if (type.getElementType().isInteger(1))
    return data.size() == 1 ? DenseElementsAttr::get(type, data[0] != 0) : attr;
  if (data.size() * 8 != type.getElementTypeBitWidth())
    return attr;
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

FailureOr<Results> FunctionLowering::lower(onnx::InitializerOp op) {
  if (!isa<FloatType, IntegerType>(op.getValue().getElementType()))
    return error(op) << "element type " << op.getValue().getElementType()
                     << " cannot be a constant of the CPU backend";
  auto value = cast<TypedAttr>(inlineScalarResource(op.getValue()));
  return Results{arith::ConstantOp::create(b, op.getLoc(), value)};
}

FailureOr<Results> FunctionLowering::lower(onnx::ConstantOp op) {
  Location loc = op.getLoc();
  Attribute value;
  if (auto v = op.getValue())
    value = *v;
  else if (auto f = op.getValueFloat())
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   b.getF32FloatAttr(f->convertToFloat()));
  else if (auto fs = op.getValueFloats())
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)fs->size()}, b.getF32Type()), *fs);
  else if (auto i = op.getValueInt())
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   b.getI64IntegerAttr(*i));
  else if (auto is = op.getValueInts())
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()), *is);
  auto elements = dyn_cast_or_null<ElementsAttr>(value);
  if (!elements || !isa<FloatType, IntegerType>(elements.getElementType()))
    return error(op) << "only numeric constants are supported";
  return Results{arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(inlineScalarResource(elements)))};
}

FailureOr<Results> FunctionLowering::lower(onnx::ConstantOfShapeOp op) {
  auto dims = constantInts(op, op.getInput(), "input");
  if (failed(dims))
    return failure();
  if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
    return error(op) << "negative dimension in the shape";
  Attribute scalar = b.getF32FloatAttr(0.0f);
  Type elemType = b.getF32Type();
  if (auto value = op.getValue()) {
    elemType = value->getElementType();
    if (auto dense = dyn_cast<DenseElementsAttr>(*value)) {
      scalar = *dense.value_begin<Attribute>();
    } else if (auto f = onnx::getConstantF32(*value)) {
      scalar = b.getF32FloatAttr(f->values[0]);
    } else if (auto i = onnx::getConstantInts(*value)) {
      scalar = b.getIntegerAttr(elemType, (*i)[0]);
    } else {
      return error(op) << "cannot read 'value'";
    }
  }
  if (!isa<FloatType, IntegerType>(elemType))
    return error(op) << "element type " << elemType << " is not supported";
  auto type = RankedTensorType::get(*dims, elemType);
  return Results{arith::ConstantOp::create(
      b, op.getLoc(), DenseElementsAttr::get(type, scalar))};
}

FailureOr<Results> FunctionLowering::lower(onnx::ShapeOp op) {
  ArrayRef<int64_t> shape = shapeOf(op.getData());
  int64_t rank = shape.size();
  int64_t start = op.getStart() ? *op.getStart() : 0;
  int64_t end = op.getEnd() ? *op.getEnd() : rank;
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SmallVector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  auto type = RankedTensorType::get({(int64_t)dims.size()}, b.getI64Type());
  return Results{createIntTensor(b, op.getLoc(), type, dims)};
}

//===----------------------------------------------------------------------===//
// Reshapes and data movement
//===----------------------------------------------------------------------===//

FailureOr<Results> FunctionLowering::lowerReshapeLike(Operation *op, Value data,
                                                      ArrayRef<int64_t> shape) {
  if (getNumElements(shape) != getNumElements(shapeOf(data)))
    return error(op) << "cannot reshape " << data.getType() << " to "
                     << RankedTensorType::get(shape, elementTypeOf(data));
  // Integer shape arithmetic stays a constant.
  if (isSignlessInt(elementTypeOf(data)) &&
      getNumElements(shape) <= kMaxFoldedElements)
    if (auto values = onnx::getConstantInts(data))
      if ((int64_t)values->size() == getNumElements(shape))
        return Results{createIntTensor(
            b, op->getLoc(), RankedTensorType::get(shape, elementTypeOf(data)),
            *values)};
  return Results{reshape(op->getLoc(), data, shape)};
}

/// Reshape, Squeeze, Unsqueeze: the data reshaped to what the op's rule
/// gives; its integer operand (`shape`, `axes`) must be a compile-time
/// constant.
FailureOr<Results>
FunctionLowering::lowerReshapeByRule(Operation *op, Value data, Value ints,
                                     std::optional<ArrayRef<int64_t>> attr,
                                     StringRef what) {
  if (failed(readAxes(op, ints, attr, what)))
    return failure();
  auto shape = ruleShape(op);
  if (failed(shape))
    return failure();
  return lowerReshapeLike(op, data, *shape);
}

FailureOr<Results> FunctionLowering::lowerFlatten(onnx::NodeOp op) {
  Value data = op.getInputs()[0];
  ArrayRef<int64_t> in = shapeOf(data);
  int64_t rank = in.size(), axis = 1;
  if (auto attrs = op.getAttrs())
    if (auto a = attrs->getAs<IntegerAttr>("axis"))
      axis = a.getInt();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return error(op) << "axis is out of range for rank " << rank;
  Shape shape = {getNumElements(in.take_front(axis)),
                 getNumElements(in.drop_front(axis))};
  return lowerReshapeLike(op, data, shape);
}

FailureOr<Results> FunctionLowering::lower(onnx::TransposeOp op) {
  auto shape = ruleShape(op);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  SmallVector<int64_t> perm =
      onnx::TransposeOp::getPermutation(onnx::TransposeOp::Adaptor(op), rank);
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    return Results{op.getData()};
  Location loc = op.getLoc();
  Value init = empty(loc, *shape, elementTypeOf(op.getData()));
  if (getNumElements(*shape) == 0)
    return Results{init};
  auto t = linalg::TransposeOp::create(b, loc, op.getData(), init, perm);
  return Results{t.getResult()[0]};
}

FailureOr<Results> FunctionLowering::lower(onnx::SliceOp op) {
  // The bounds must be constants; the window is the shape rule's.
  if (!op.getStartsAttr())
    if (failed(constantInts(op, op.getStarts(), "starts")) ||
        failed(constantInts(op, op.getEnds(), "ends")))
      return failure();
  if (failed(readAxes(op, op.getAxes(), op.getAxesAttr(), "axes")) ||
      failed(readAxes(op, op.getSteps(), std::nullopt, "steps")))
    return failure();
  Location loc = op.getLoc();
  Value data = op.getData();
  Type elemType = elementTypeOf(data);
  ArrayRef<int64_t> in = shapeOf(data);
  auto intsOf = [](Value v) { return onnx::getConstantInts(v); };
  onnx::ShapeQuery query(nullptr, intsOf);
  bool known;
  auto window = onnx::SliceOp::getWindow(query, onnx::SliceOp::Adaptor(op),
                                         in, known);
  if (failed(window))
    return error(op) << query.getReason();
  if (!known)
    return error(op) << "the bounds are not known at compile time";
  SmallVector<SliceDim> dims;
  for (auto [first, size, step] :
       llvm::zip(window->first, window->size, window->step))
    dims.push_back({first, size, step});
  Shape shape(window->size);
  if (getNumElements(shape) == 0)
    return Results{empty(loc, shape, elemType)};

  // Integer shape arithmetic stays a constant.
  if (isSignlessInt(elemType) && getNumElements(shape) <= kMaxFoldedElements)
    if (auto values = onnx::getConstantInts(data);
        values && (int64_t)values->size() == getNumElements(in)) {
      SmallVector<int64_t> out, index(shape.size(), 0);
      for (int64_t n = 0, e = getNumElements(shape); n < e; ++n) {
        int64_t linear = 0;
        for (size_t k = 0; k < shape.size(); ++k)
          linear =
              linear * in[k] + dims[k].start + index[k] * dims[k].step;
        out.push_back((*values)[linear]);
        for (int64_t k = shape.size() - 1; k >= 0; --k) {
          if (++index[k] < shape[k])
            break;
          index[k] = 0;
        }
      }
      return Results{
          createIntTensor(b, loc, RankedTensorType::get(shape, elemType), out)};
    }

  if (llvm::all_of(dims, [](const SliceDim &d) { return d.step > 0; })) {
    if (shape == in)
      return Results{data};
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (const SliceDim &d : dims) {
      offsets.push_back(b.getIndexAttr(d.start));
      sizes.push_back(b.getIndexAttr(d.size));
      strides.push_back(b.getIndexAttr(d.step));
    }
    return Results{
        tensor::ExtractSliceOp::create(b, loc, data, offsets, sizes, strides)};
  }
  // A negative step reads start + step * i, a decreasing index: gathered
  // with tensor.extract at the output's linalg.index (an indexing map with
  // a decreasing expression is valid linalg, but IREE 3.13 cannot tile it:
  // "inferred input/output operand #0 has shape's dimension #0 to be
  // greater than or equal to T").
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(shape.size())};
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  Value init = empty(loc, shape, elemType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> coords;
        for (auto [i, d] : llvm::enumerate(dims)) {
          Value at = linalg::IndexOp::create(nb, nloc, i);
          if (d.step != 1)
            at = arith::MulIOp::create(
                nb, nloc, at, arith::ConstantIndexOp::create(nb, nloc, d.step));
          if (d.start != 0)
            at = arith::AddIOp::create(
                nb, nloc, at, arith::ConstantIndexOp::create(nb, nloc, d.start));
          coords.push_back(at);
        }
        linalg::YieldOp::create(
            nb, nloc, tensor::ExtractOp::create(nb, nloc, data, coords).getResult());
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lower(onnx::ConcatOp op) {
  auto shape = ruleShape(op);
  if (failed(shape))
    return failure();
  ValueRange inputs = op.getInputs();
  int64_t axis = *onnx::normalizeAxis(op.getAxis(), shape->size());
  SmallVector<Value> parts;
  for (Value in : inputs)
    if (shapeOf(in)[axis] != 0)
      parts.push_back(in);
  Location loc = op.getLoc();
  if (parts.empty())
    return Results{empty(loc, *shape, elementTypeOf(inputs[0]))};
  if (parts.size() == 1)
    return Results{parts[0]};
  return Results{tensor::ConcatOp::create(b, loc, axis, parts)};
}

FailureOr<Results> FunctionLowering::lower(onnx::SplitOp op) {
  Value data = op.getInput();
  ArrayRef<int64_t> in = shapeOf(data);
  int64_t rank = in.size();
  if (!op.getSplitAttr() && !isa<NoneType>(op.getSplit().getType()) &&
      failed(constantInts(op, op.getSplit(), "split")))
    return failure();
  auto shapes = ruleShapes(op);
  if (failed(shapes))
    return failure();
  auto axis = onnx::normalizeAxis(op.getAxis(), rank);
  Results results;
  int64_t offset = 0;
  for (const Shape &part : *shapes) {
    int64_t size = part[*axis];
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), lens,
        strides(rank, b.getIndexAttr(1));
    offsets[*axis] = b.getIndexAttr(offset);
    for (int64_t d = 0; d < rank; ++d)
      lens.push_back(b.getIndexAttr(d == *axis ? size : in[d]));
    results.push_back(tensor::ExtractSliceOp::create(b, op.getLoc(), data,
                                                     offsets, lens, strides));
    offset += size;
  }
  return results;
}

FailureOr<Results> FunctionLowering::lower(onnx::GatherOp op) {
  Value data = op.getData(), indices = op.getIndices();
  auto shapeOr = ruleShape(op);
  if (failed(shapeOr))
    return failure();
  Shape shape = std::move(*shapeOr);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t rank = ds.size(), q = is.size();
  int64_t axis = *onnx::normalizeAxis(op.getAxis(), rank), dim = ds[axis];
  Location loc = op.getLoc();
  Type elemType = elementTypeOf(data);
  if (getNumElements(shape) == 0)
    return Results{empty(loc, shape, elemType)};

  // One constant index: a slice.
  if (q == 0)
    if (auto idx = onnx::getConstantInts(indices)) {
      int64_t i = (*idx)[0];
      if (i < -dim || i >= dim)
        return error(op) << "index " << i << " is out of range for dimension "
                         << axis << " of size " << dim;
      if (i < 0)
        i += dim;
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
          strides(rank, b.getIndexAttr(1));
      offsets[axis] = b.getIndexAttr(i);
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(b.getIndexAttr(d == axis ? 1 : ds[d]));
      auto type = RankedTensorType::get(shape, elemType);
      return Results{tensor::ExtractSliceOp::create(b, loc, type, data, offsets,
                                                    sizes, strides)};
    }

  // out[i..., j..., k...] = data[i..., norm(indices[j...]), k...], where
  // norm adds the dimension to a negative index and clamps to [0, dim).
  int64_t outRank = shape.size();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t j = 0; j < q; ++j)
    idxExprs.push_back(b.getAffineDimExpr(axis + j));
  SmallVector<AffineMap> maps = {AffineMap::get(outRank, 0, idxExprs, ctx),
                                 b.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iterators(outRank,
                                             utils::IteratorType::parallel);
  Value init = empty(loc, shape, elemType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{indices}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value i = normalizedIndex(nb, nloc, args[0], dim);
        SmallVector<Value> coords;
        for (int64_t d = 0; d < axis; ++d)
          coords.push_back(linalg::IndexOp::create(nb, nloc, d));
        coords.push_back(i);
        for (int64_t d = axis + 1; d < rank; ++d)
          coords.push_back(linalg::IndexOp::create(nb, nloc, d + q - 1));
        Value v = tensor::ExtractOp::create(nb, nloc, data, coords);
        linalg::YieldOp::create(nb, nloc, v);
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lower(onnx::ExpandOp op) {
  if (failed(constantInts(op, op.getShape(), "shape")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  auto shape = ruleShape(op);
  if (failed(shape))
    return failure();
  if (*shape == in)
    return Results{op.getInput()};
  // A one-element constant (a zero state, say) becomes a splat constant.
  Type elemType = elementTypeOf(op.getInput());
  auto type = RankedTensorType::get(*shape, elemType);
  if (getNumElements(in) == 1) {
    if (auto f = onnx::getConstantF32(op.getInput()))
      return Results{arith::ConstantOp::create(
          b, op.getLoc(), DenseElementsAttr::get(type, f->values[0]))};
    if (isSignlessInt(elemType))
      if (auto i = onnx::getConstantInts(op.getInput()))
        return Results{arith::ConstantOp::create(
            b, op.getLoc(),
            DenseElementsAttr::get(
                type,
                b.getIntegerAttr(elemType, elemType.isInteger(1) ? (*i)[0] != 0
                                                                 : (*i)[0])))};
  }
  return Results{elementwise(
      op.getLoc(), *shape, elementTypeOf(op.getInput()), op.getInput(),
      [](OpBuilder &, Location, ValueRange args) { return args[0]; })};
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

FailureOr<Results> FunctionLowering::lower(onnx::MatMulOp op) {
  Value lhs = op.getA(), rhs = op.getB();
  if (failed(requireArithmetic(op, elementTypeOf(lhs))))
    return failure();
  auto shapeOr = ruleShape(op);
  if (failed(shapeOr))
    return failure();
  return Results{matmul(op.getLoc(), lhs, rhs, *shapeOr)};
}

Value FunctionLowering::matmul(Location loc, Value lhs, Value rhs,
                               ArrayRef<int64_t> shape) {
  Type elemType = elementTypeOf(lhs);
  ArrayRef<int64_t> sa = shapeOf(lhs), sb = shapeOf(rhs);
  int64_t ra = sa.size(), rb = sb.size();
  int64_t k = sa.back(), n = rb > 1 ? sb.back() : 1;
  ArrayRef<int64_t> batchA = ra > 2 ? sa.drop_back(2) : ArrayRef<int64_t>();
  ArrayRef<int64_t> batchB = rb > 2 ? sb.drop_back(2) : ArrayRef<int64_t>();
  // The broadcast batch: the result's leading dimensions.
  ArrayRef<int64_t> batch =
      ArrayRef<int64_t>(shape).drop_back((ra > 1) + (rb > 1));
  Value zero = createScalar(b, loc, elemType, 0);
  if (getNumElements(shape) == 0)
    return empty(loc, shape, elemType);

  // [..., M, K] x [K, N]: one [P, K] x [K, N] matmul over the rows.
  if (ra >= 2 && rb == 2) {
    int64_t rows = getNumElements(sa.drop_back());
    Value a2 = reshape(loc, lhs, {rows, k});
    Value init = filled(loc, {rows, n}, elemType, zero);
    Value r = matmul2D(loc, a2, rhs, init, false, false);
    return reshape(loc, r, shape);
  }
  // Equal batches of rank 3: batch_matmul.
  if (ra == 3 && rb == 3 && sa[0] == sb[0]) {
    Value init = filled(loc, shape, elemType, zero);
    auto bmm =
        linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                      ValueRange{lhs, rhs}, ValueRange{init});
    return bmm.getResult(0);
  }
  // Everything else (1-D operands, broadcast batches): a contraction over
  // the loops (batch..., [m], [n], k).
  int64_t nb = batch.size();
  int64_t loops = shape.size() + 1;
  int64_t mLoop = nb, nLoop = nb + (ra > 1 ? 1 : 0), kLoop = loops - 1;
  Shape loopShape(shape);
  loopShape.push_back(k);
  auto operandMap = [&](ArrayRef<int64_t> s, ArrayRef<int64_t> batchS,
                        bool isLhs) {
    SmallVector<AffineExpr> exprs;
    int64_t off = nb - batchS.size();
    for (auto [i, d] : llvm::enumerate(batchS))
      exprs.push_back(d == 1 && batch[off + i] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(off + i));
    if (isLhs) {
      if (s.size() > 1)
        exprs.push_back(b.getAffineDimExpr(mLoop));
      exprs.push_back(b.getAffineDimExpr(kLoop));
    } else {
      exprs.push_back(b.getAffineDimExpr(kLoop));
      if (s.size() > 1)
        exprs.push_back(b.getAffineDimExpr(nLoop));
    }
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < loops - 1; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  SmallVector<AffineMap> maps = {operandMap(sa, batchA, true),
                                 operandMap(sb, batchB, false),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(loops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = filled(loc, shape, elemType, zero);
  bool isFloat = isa<FloatType>(elemType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value p =
            isFloat ? (Value)arith::MulFOp::create(nb, nloc, args[0], args[1])
                    : (Value)arith::MulIOp::create(nb, nloc, args[0], args[1]);
        Value s = isFloat ? (Value)arith::AddFOp::create(nb, nloc, args[2], p)
                          : (Value)arith::AddIOp::create(nb, nloc, args[2], p);
        linalg::YieldOp::create(nb, nloc, s);
      });
  return generic.getResult(0);
}

FailureOr<Results> FunctionLowering::lower(onnx::GemmOp op) {
  Location loc = op.getLoc();
  Value lhs = op.getA(), rhs = op.getB(), c = op.getC();
  Type elemType = elementTypeOf(lhs);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  auto shapeOr = ruleShape(op);
  if (failed(shapeOr))
    return failure();
  Shape shape = std::move(*shapeOr);
  bool transA = op.getTransA(), transB = op.getTransB();
  float alpha = op.getAlpha().convertToFloat();
  float beta = op.getBeta().convertToFloat();
  bool isFloat = isa<FloatType>(elemType);
  if (!isFloat && (alpha != 1.0f || beta != 1.0f))
    return error(op) << "integer Gemm needs alpha = beta = 1";
  bool hasC = !isa<NoneType>(c.getType()) && beta != 0.0f;
  if (getNumElements(shape) == 0)
    return Results{empty(loc, shape, elemType)};
  Value zero = createScalar(b, loc, elemType, 0);
  // beta * C, broadcast to [M, N].
  auto scaledC = [&]() {
    return elementwise(loc, shape, elemType, c,
                       [&](OpBuilder &nb, Location nloc, ValueRange args) {
                         if (beta == 1.0f)
                           return args[0];
                         Value s = createScalar(nb, nloc, elemType, beta);
                         return (Value)arith::MulFOp::create(nb, nloc, s,
                                                             args[0]);
                       });
  };
  if (alpha == 1.0f) {
    // The product accumulates into beta * C.
    Value init = hasC ? scaledC() : filled(loc, shape, elemType, zero);
    return Results{matmul2D(loc, lhs, rhs, init, transA, transB)};
  }
  Value product = matmul2D(loc, lhs, rhs, filled(loc, shape, elemType, zero),
                           transA, transB);
  SmallVector<Value> inputs = {product};
  if (hasC)
    inputs.push_back(c);
  return Results{
      elementwise(loc, shape, elemType, inputs,
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    Value a = createScalar(nb, nloc, elemType, alpha);
                    Value r = arith::MulFOp::create(nb, nloc, a, args[0]);
                    if (args.size() > 1) {
                      Value bc = createScalar(nb, nloc, elemType, beta);
                      Value t = arith::MulFOp::create(nb, nloc, bc, args[1]);
                      r = arith::AddFOp::create(nb, nloc, r, t);
                    }
                    return r;
                  })};
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static Value castSignedness(OpBuilder &b, Location loc, Value v, Type to);

FailureOr<Results> FunctionLowering::lower(onnx::CastOp op) {
  Type from = elementTypeOf(op.getInput());
  Type to = onnx::getElementTypeForOnnxDataType(ctx, op.getTo());
  if (failed(requireArithmetic(op, from)))
    return failure();
  // To uint8 (a class index a model hands out as bytes): the value as
  // unsigned 8 bits, as ONNX Runtime's static_cast gives it (a float
  // truncated, an integer's low byte), typed ui8 for the graph's signature.
  if (to && to.isUnsignedInteger(8) && !from.isUnsignedInteger(8)) {
    Type i8 = IntegerType::get(ctx, 8);
    return Results{elementwise(
        op.getLoc(), shapeOf(op.getInput()), to, op.getInput(),
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value v = args[0];
          unsigned bits = isa<FloatType>(from) ? 0 : from.getIntOrFloatBitWidth();
          if (isa<FloatType>(from))
            v = arith::FPToUIOp::create(nb, nloc, i8, v);
          else if (bits > 8)
            v = arith::TruncIOp::create(nb, nloc, i8, v);
          else if (bits < 8)
            v = arith::ExtUIOp::create(nb, nloc, i8, v);
          return castSignedness(nb, nloc, v, to);
        })};
  }
  if (!to || !(isa<FloatType>(to) || isSignlessInt(to)))
    return error(op) << "cast to ONNX type " << op.getTo()
                     << " is not supported";
  if (from == to)
    return Results{op.getInput()};
  return Results{
      elementwise(op.getLoc(), shapeOf(op.getInput()), to, op.getInput(),
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    return convertScalar(nb, nloc, args[0], from, to);
                  })};
}

FailureOr<Results> FunctionLowering::lowerBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type elemType = elementTypeOf(lhs);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  auto shape = onnx::broadcastShapes({shapeOf(lhs), shapeOf(rhs)});
  if (failed(shape))
    return error(op) << "operands do not broadcast: " << lhs.getType()
                     << " and " << rhs.getType();
  bool isFloat = isa<FloatType>(elemType);
  return Results{elementwise(
      op->getLoc(), *shape, elemType, {lhs, rhs},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value x = args[0], y = args[1];
        if (isa<onnx::AddOp>(op))
          return isFloat ? (Value)arith::AddFOp::create(nb, nloc, x, y)
                         : (Value)arith::AddIOp::create(nb, nloc, x, y);
        if (isa<onnx::SubOp>(op))
          return isFloat ? (Value)arith::SubFOp::create(nb, nloc, x, y)
                         : (Value)arith::SubIOp::create(nb, nloc, x, y);
        if (isa<onnx::MulOp>(op))
          return isFloat ? (Value)arith::MulFOp::create(nb, nloc, x, y)
                         : (Value)arith::MulIOp::create(nb, nloc, x, y);
        // Div: integer division truncates toward zero.
        return isFloat ? (Value)arith::DivFOp::create(nb, nloc, x, y)
                       : (Value)arith::DivSIOp::create(nb, nloc, x, y);
      })};
}

FailureOr<Results> FunctionLowering::lowerUnary(Operation *op,
                                                StringRef opType) {
  Value x = op->getOperand(0);
  Type elemType = elementTypeOf(x);
  bool floatOnly = opType != "Neg" && opType != "Relu" && opType != "Abs";
  if (failed(requireArithmetic(op, elemType, floatOnly)))
    return failure();
  bool isFloat = isa<FloatType>(elemType);
  float alpha = 0.2f, beta = 0.5f;
  if (auto hs = dyn_cast<onnx::HardSigmoidOp>(op)) {
    alpha = hs.getAlpha().convertToFloat();
    beta = hs.getBeta().convertToFloat();
  }
  // A generic node's float attribute, with the ONNX default.
  auto fAttr = [&](StringRef name, float dflt) -> double {
    if (auto node = dyn_cast<onnx::NodeOp>(op))
      if (auto attrs = node.getAttrs())
        if (auto a = attrs->getAs<FloatAttr>(name))
          return a.getValueAsDouble();
    return dflt;
  };
  auto sAttr = [&](StringRef name, StringRef dflt) -> StringRef {
    if (auto node = dyn_cast<onnx::NodeOp>(op))
      if (auto attrs = node.getAttrs())
        if (auto a = attrs->getAs<StringAttr>(name))
          return a.getValue();
    return dflt;
  };
  if (opType == "Gelu" && sAttr("approximate", "none") != "none" &&
      sAttr("approximate", "none") != "tanh")
    return error(op) << "Gelu's approximate is none or tanh, not '"
                     << sAttr("approximate", "none") << "'";
  return Results{elementwise(
      op->getLoc(), shapeOf(x), elemType, x,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value v = args[0];
        auto scalar = [&](double c) {
          return createScalar(nb, nloc, elemType, c);
        };
        if (opType == "Neg")
          return isFloat ? (Value)arith::NegFOp::create(nb, nloc, v)
                         : (Value)arith::SubIOp::create(nb, nloc, scalar(0), v);
        if (opType == "Relu")
          return isFloat
                     ? (Value)arith::MaximumFOp::create(nb, nloc, v, scalar(0))
                     : (Value)arith::MaxSIOp::create(nb, nloc, v, scalar(0));
        if (opType == "Abs")
          return isFloat ? (Value)math::AbsFOp::create(nb, nloc, v)
                         : (Value)math::AbsIOp::create(nb, nloc, v);
        // The activations' math is the recurrent kernels' (one helper), in
        // its reference form: a Sigmoid node keeps relative accuracy.
        if (opType == "Sigmoid" || opType == "HardSigmoid" ||
            opType == "Tanh") {
          ImplicitLocOpBuilder ib(nloc, nb);
          return rnn::emitActivation(ib, {opType.lower(), alpha, beta}, v,
                                     rnn::ActivationForm::Reference);
        }
        // The other activations (float only), as ONNX defines them.
        auto mul = [&](Value a, Value b) -> Value {
          return arith::MulFOp::create(nb, nloc, a, b);
        };
        auto add = [&](Value a, Value b) -> Value {
          return arith::AddFOp::create(nb, nloc, a, b);
        };
        auto select = [&](arith::CmpFPredicate p, Value a, Value b, Value t,
                          Value f) -> Value {
          return arith::SelectOp::create(
              nb, nloc, arith::CmpFOp::create(nb, nloc, p, a, b), t, f);
        };
        auto expm1 = [&](Value a) -> Value {
          return math::ExpM1Op::create(nb, nloc, a);
        };
        if (opType == "Erf")
          return math::ErfOp::create(nb, nloc, v);
        if (opType == "Gelu") {
          if (sAttr("approximate", "none") == "tanh") {
            // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            Value x3 = mul(mul(v, v), v);
            Value in = mul(scalar(0.7978845608028654),
                           add(v, mul(scalar(0.044715), x3)));
            return mul(mul(scalar(0.5), v),
                       add(scalar(1), math::TanhOp::create(nb, nloc, in)));
          }
          Value e = math::ErfOp::create(nb, nloc,
                                        mul(v, scalar(0.7071067811865476)));
          return mul(mul(scalar(0.5), v), add(scalar(1), e));
        }
        if (opType == "Softplus") {
          // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow.
          Value m = arith::MaximumFOp::create(nb, nloc, v, scalar(0));
          Value na = arith::NegFOp::create(nb, nloc,
                                           math::AbsFOp::create(nb, nloc, v));
          return add(m, math::Log1pOp::create(
                            nb, nloc, math::ExpOp::create(nb, nloc, na)));
        }
        if (opType == "Softsign")
          return arith::DivFOp::create(
              nb, nloc, v, add(scalar(1), math::AbsFOp::create(nb, nloc, v)));
        if (opType == "LeakyRelu")
          return select(arith::CmpFPredicate::OLT, v, scalar(0),
                        mul(scalar(fAttr("alpha", 0.01f)), v), v);
        if (opType == "ThresholdedRelu")
          return select(arith::CmpFPredicate::OGT, v,
                        scalar(fAttr("alpha", 1.0f)), v, scalar(0));
        if (opType == "Elu")
          return select(arith::CmpFPredicate::OLT, v, scalar(0),
                        mul(scalar(fAttr("alpha", 1.0f)), expm1(v)), v);
        if (opType == "Celu") {
          // max(0, x) + min(0, alpha (e^(x/alpha) - 1))
          double a = fAttr("alpha", 1.0f);
          Value neg = mul(scalar(a), expm1(arith::DivFOp::create(
                                         nb, nloc, v, scalar(a))));
          return add(arith::MaximumFOp::create(nb, nloc, v, scalar(0)),
                     arith::MinimumFOp::create(nb, nloc, neg, scalar(0)));
        }
        if (opType == "Selu") {
          double a = fAttr("alpha", 1.67326319217681884765625f);
          double g = fAttr("gamma", 1.05070102214813232421875f);
          return select(arith::CmpFPredicate::OLE, v, scalar(0),
                        mul(scalar(g * a), expm1(v)), mul(scalar(g), v));
        }
        if (opType == "HardSwish") {
          // x * max(0, min(1, x/6 + 1/2))
          Value h = add(mul(v, scalar(1.0 / 6.0)), scalar(0.5));
          h = arith::MinimumFOp::create(
              nb, nloc, arith::MaximumFOp::create(nb, nloc, h, scalar(0)),
              scalar(1));
          return mul(v, h);
        }
        if (opType == "Floor")
          return math::FloorOp::create(nb, nloc, v);
        if (opType == "Ceil")
          return math::CeilOp::create(nb, nloc, v);
        if (opType == "Round") // half to even
          return math::RoundEvenOp::create(nb, nloc, v);
        if (opType == "Reciprocal")
          return arith::DivFOp::create(nb, nloc, scalar(1), v);
        if (opType == "Sin")
          return math::SinOp::create(nb, nloc, v);
        if (opType == "Cos")
          return math::CosOp::create(nb, nloc, v);
        if (opType == "Sign")
          return select(arith::CmpFPredicate::OGT, v, scalar(0), scalar(1),
                        select(arith::CmpFPredicate::OLT, v, scalar(0),
                               scalar(-1), scalar(0)));
        if (opType == "Exp")
          return math::ExpOp::create(nb, nloc, v);
        if (opType == "Log")
          return math::LogOp::create(nb, nloc, v);
        assert(opType == "Sqrt" && "unexpected unary op");
        return math::SqrtOp::create(nb, nloc, v);
      })};
}

FailureOr<Results> FunctionLowering::lower(onnx::ClipOp op) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  bool isFloat = isa<FloatType>(elemType);
  // Bounds as rank-0 tensors (operands) or scalars (opset-6 attributes).
  SmallVector<Value> inputs = {x};
  auto bound = [&](Value v, StringRef what) -> FailureOr<int> {
    if (isa<NoneType>(v.getType()))
      return -1;
    if (getNumElements(shapeOf(v)) != 1)
      return error(op) << "'" << what << "' must hold one value";
    inputs.push_back(reshape(loc, v, {}));
    return (int)inputs.size() - 1;
  };
  auto minIdx = bound(op.getMin(), "min");
  if (failed(minIdx))
    return failure();
  auto maxIdx = bound(op.getMax(), "max");
  if (failed(maxIdx))
    return failure();
  std::optional<float> minAttr, maxAttr;
  if (auto a = op.getMinAttr())
    minAttr = a->convertToFloat();
  if (auto a = op.getMaxAttr())
    maxAttr = a->convertToFloat();
  return Results{elementwise(
      loc, shapeOf(x), elemType, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = args[0];
        Value lo = *minIdx >= 0 ? args[*minIdx]
                   : minAttr    ? createScalar(nb, nloc, elemType, *minAttr)
                                : Value();
        Value hi = *maxIdx >= 0 ? args[*maxIdx]
                   : maxAttr    ? createScalar(nb, nloc, elemType, *maxAttr)
                                : Value();
        if (lo)
          v = isFloat ? (Value)arith::MaximumFOp::create(nb, nloc, v, lo)
                      : (Value)arith::MaxSIOp::create(nb, nloc, v, lo);
        if (hi)
          v = isFloat ? (Value)arith::MinimumFOp::create(nb, nloc, v, hi)
                      : (Value)arith::MinSIOp::create(nb, nloc, v, hi);
        return v;
      })};
}

/// softmax(x) = exp(x - max) / sum(exp(x - max)), log-softmax
/// (x - max) - log(sum(exp(x - max))), reduced over `axis` (opset >= 13) or
/// over all dimensions from `axis` on (opset < 13: the input coerced to 2-D).
FailureOr<Results>
FunctionLowering::lowerSoftmax(Operation *op, std::optional<int64_t> axisAttr,
                               bool log) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType, /*floatOnly=*/true)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  // Opset 0: the module does not say; use the current definition.
  bool coerce2D = opset != 0 && opset < 13;
  int64_t axisValue = axisAttr ? *axisAttr : (coerce2D ? 1 : -1);
  if (rank == 0)
    return error(op) << "input must have rank >= 1";
  auto axis = onnx::normalizeAxis(axisValue, rank);
  if (!axis)
    return error(op) << "axis " << axisValue << " is out of range for rank "
                     << rank;
  if (getNumElements(shape) == 0)
    return Results{empty(loc, shape, elemType)};
  SmallVector<bool> reduced(rank, false);
  for (int64_t d = *axis; d < (coerce2D ? rank : *axis + 1); ++d)
    reduced[d] = true;
  Shape keptShape;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d])
      keptShape.push_back(shape[d]);

  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap projection = getProjectionMap(ctx, reduced);
  auto pointwise = [&](ValueRange inputs, BodyFn body) {
    SmallVector<AffineMap> maps = {identity};
    for (size_t i = 1; i < inputs.size(); ++i)
      maps.push_back(projection);
    maps.push_back(identity);
    Value init = empty(loc, shape, elemType);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
               maps, parallel,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 linalg::YieldOp::create(nb, nloc,
                                         body(nb, nloc, args.drop_back()));
               })
        .getResult(0);
  };

  auto negInf = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(
          elemType,
          APFloat::getInf(cast<FloatType>(elemType).getFloatSemantics(),
                          /*Negative=*/true)));
  Value max = reduce(loc, x, reduced, filled(loc, keptShape, elemType, negInf),
                     [](OpBuilder &nb, Location nloc, ValueRange args) {
                       return (Value)arith::MaximumFOp::create(
                           nb, nloc, args[0], args[1]);
                     });
  Value exps =
      pointwise({x, max}, [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value d = arith::SubFOp::create(nb, nloc, args[0], args[1]);
        return (Value)math::ExpOp::create(nb, nloc, d);
      });
  Value zero = createScalar(b, loc, elemType, 0);
  Value sum =
      reduce(loc, exps, reduced, filled(loc, keptShape, elemType, zero),
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               return (Value)arith::AddFOp::create(nb, nloc, args[0], args[1]);
             });
  if (!log)
    return Results{pointwise(
        {exps, sum}, [](OpBuilder &nb, Location nloc, ValueRange args) {
          return (Value)arith::DivFOp::create(nb, nloc, args[0], args[1]);
        })};
  return Results{pointwise(
      {x, max, sum}, [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value d = arith::SubFOp::create(nb, nloc, args[0], args[1]);
        Value l = math::LogOp::create(nb, nloc, args[2]);
        return (Value)arith::SubFOp::create(nb, nloc, d, l);
      })};
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Elementwise float operators of the default domain lowered by lowerUnary
/// besides the typed ones (activations models use around their layers).
static bool isExtraUnary(StringRef type) {
  return llvm::is_contained({"Erf", "Gelu", "Softplus", "Softsign", "LeakyRelu",
                             "Elu", "Selu", "Celu", "ThresholdedRelu",
                             "HardSwish", "Floor", "Ceil", "Round",
                             "Reciprocal", "Sin", "Cos", "Sign"},
                            type);
}

static bool isComparison(StringRef type) {
  return llvm::is_contained(
      {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}, type);
}

/// Typed onnx ops lowered besides the elementwise ones (their ONNX names).
static constexpr StringLiteral kLoweredTyped[] = {
    "Constant", "ConstantOfShape", "Shape",   "Cast",     "Reshape",
    "Squeeze",  "Unsqueeze",       "Transpose", "Slice",  "Concat",
    "Split",    "Gather",          "Expand",  "MatMul",   "Gemm",
    "Clip",     "Identity",        "Softmax", "LogSoftmax"};

/// Whether a generic node of the default domain of type `type` with `n`
/// inputs is lowered; with `anyArity`, whether it is for some arity.
static bool isLoweredGenericType(StringRef type, size_t n, bool anyArity) {
  auto arity = [&](bool ok) { return anyArity || ok; };
  if (llvm::is_contained({"Flatten", "Exp", "Log", "Sqrt", "Abs"}, type) ||
      isExtraUnary(type))
    return arity(n == 1);
  if (type == "PRelu")
    return arity(n == 2);
  if (type == "Max" || type == "Min")
    return arity(n >= 1);
  if (type == "Where")
    return arity(n == 3);
  if (isComparison(type) || llvm::is_contained({"And", "Or", "Xor"}, type))
    return arity(n == 2);
  if (type == "Not")
    return arity(n == 1);
  if (type == "Pad")
    return arity(n >= 1 && n <= 4);
  if (type == "Conv")
    return arity(n == 2 || n == 3);
  if (type == "Pow")
    return arity(n == 2);
  if (llvm::is_contained({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                          "ReduceProd"},
                         type))
    return arity(n == 1 || n == 2);
  if (type == "ArgMax" || type == "ArgMin")
    return arity(n == 1);
  if (type == "Tile" || type == "CumSum")
    return arity(n == 2);
  if (type == "LayerNormalization") // Y only: Mean and InvStdDev unused
    return arity(n == 2 || n == 3);
  if (type == "BatchNormalization") // inference: Y only
    return arity(n == 5);
  if (type == "InstanceNormalization")
    return arity(n == 3);
  if (type == "ReverseSequence")
    return arity(n == 2);
  if (type == "MaxPool" || type == "AveragePool" || type == "GlobalMaxPool" ||
      type == "GlobalAveragePool") // Y only: no Indices output
    return arity(n == 1);
  if (type == "Range")
    return arity(n == 3);
  if (type == "Dropout") // inference: the identity (training_mode false)
    return arity(n >= 1 && n <= 3);
  if (type == "GatherElements")
    return arity(n == 2);
  if (type == "ScatterND" || type == "ScatterElements" || type == "Scatter")
    return arity(n == 3);
  if (type == "Einsum")
    return arity(n >= 1);
  if (type == "ConvTranspose")
    return arity(n == 2 || n == 3);
  if (type == "Resize")
    return arity(n >= 2 && n <= 4);
  if (type == "TopK")
    return arity(n == 2);
  if (type == "DequantizeLinear" || type == "QuantizeLinear")
    return arity(n == 2 || n == 3);
  if (type == "DynamicQuantizeLinear")
    return arity(n == 1);
  if (type == "MatMulInteger" || type == "ConvInteger")
    return arity(n >= 2 && n <= 4);
  return false;
}

/// Generic onnx.node operators of the default domain that are lowered.
bool isSupportedGenericNode(onnx::NodeOp node) {
  if (!node.getDomain().empty() && node.getDomain() != "ai.onnx")
    return false;
  StringRef type = node.getOpType();
  unsigned results = node.getNumResults();
  if (!node.getGraphs().empty() ||
      !(type == "Dropout" ? results == 1 || results == 2 // Y [, mask]
                          : results == (type == "TopK"                    ? 2u
                                        : type == "DynamicQuantizeLinear" ? 3u
                                                                          : 1u)))
    return false;
  return isLoweredGenericType(node.getOpType(), node.getInputs().size(),
                              /*anyArity=*/false);
}

/// Whether the typed onnx op `name` is lowered.
static bool isLoweredTyped(OperationName name) {
  if (auto reg = name.getRegisteredInfo())
    if (reg->hasTrait<onnx::traits::ElementwiseUnary>() ||
        reg->hasTrait<onnx::traits::ElementwiseBroadcast>())
      return true;
  return llvm::is_contained(kLoweredTyped, name.stripDialect());
}


namespace {
/// An integer list attribute of a generic node; `dflt` when absent.
SmallVector<int64_t> intsAttr(onnx::NodeOp op, StringRef name,
                              ArrayRef<int64_t> dflt = {}) {
  if (auto attrs = op.getAttrs())
    if (auto a = attrs->getAs<DenseI64ArrayAttr>(name))
      return SmallVector<int64_t>(a.asArrayRef());
  return SmallVector<int64_t>(dflt);
}
int64_t intAttr(onnx::NodeOp op, StringRef name, int64_t dflt) {
  if (auto attrs = op.getAttrs())
    if (auto a = attrs->getAs<IntegerAttr>(name))
      return a.getInt();
  return dflt;
}
StringRef strAttr(onnx::NodeOp op, StringRef name, StringRef dflt) {
  if (auto attrs = op.getAttrs())
    if (auto a = attrs->getAs<StringAttr>(name))
      return a.getValue();
  return dflt;
}
} // namespace

FailureOr<Results> FunctionLowering::lowerPad(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value data = ins[0];
  ArrayRef<int64_t> in = shapeOf(data);
  int64_t rank = in.size();
  Type elemType = elementTypeOf(data);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  // Pads: an input from opset 11, an attribute before; `axes` from opset 18.
  SmallVector<int64_t> pads;
  if (ins.size() > 1 && !isa<NoneType>(ins[1].getType())) {
    auto p = constantInts(op, ins[1], "pads");
    if (failed(p))
      return failure();
    pads = *p;
  } else {
    pads = intsAttr(op, "pads");
  }
  SmallVector<int64_t> axes;
  if (ins.size() > 3 && !isa<NoneType>(ins[3].getType())) {
    auto a = constantInts(op, ins[3], "axes");
    if (failed(a))
      return failure();
    for (int64_t x : *a) {
      auto n = onnx::normalizeAxis(x, rank);
      if (!n)
        return error(op) << "axis " << x << " is out of range for rank " << rank;
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size())
    return error(op) << "'pads' has " << pads.size() << " values for "
                     << axes.size() << " axes";
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [i, ax] : llvm::enumerate(axes)) {
    low[ax] = pads[i];
    high[ax] = pads[i + axes.size()];
  }
  Shape shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0 || low[d] > (int64_t(1) << 40) ||
        high[d] > (int64_t(1) << 40))
      return error(op) << "negative or huge pads are not supported";
    shape.push_back(in[d] + low[d] + high[d]);
  }
  StringRef mode = strAttr(op, "mode", "constant");
  if (mode == "constant") {
    double value = 0;
    if (ins.size() > 2 && !isa<NoneType>(ins[2].getType())) {
      auto c = onnx::getConstantF32(ins[2]);
      auto ci = onnx::getConstantInts(ins[2]);
      if (c && c->numElements() == 1)
        value = c->values[0];
      else if (ci && ci->size() == 1)
        value = (double)(*ci)[0];
      else
        return error(op) << "'constant_value' is not a compile-time scalar";
    }
    Value pad = createScalar(b, loc, elemType, value);
    auto type = RankedTensorType::get(shape, elemType);
    return Results{tensor::PadOp::create(b, loc, type, data,
                                         getAsIndexOpFoldResult(ctx, low),
                                         getAsIndexOpFoldResult(ctx, high), pad)
                       .getResult()};
  }
  if (mode != "reflect" && mode != "edge")
    return error(op) << "mode '" << mode << "' is not supported";
  for (int64_t d = 0; d < rank; ++d)
    if ((low[d] || high[d]) &&
        (in[d] == 0 || (mode == "reflect" && (low[d] >= in[d] || high[d] >= in[d]))))
      return error(op) << "dimension " << d << " of size " << in[d]
                       << " cannot be padded by " << low[d] << "/" << high[d]
                       << " in mode '" << mode << "'";
  // Each output element reads data at its index mirrored (reflect) or
  // clamped (edge) into range.
  Value init = empty(loc, shape, elemType);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(nb, nloc, d);
          auto c = [&](int64_t v) {
            return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
          };
          Value src = arith::SubIOp::create(nb, nloc, i, c(low[d]));
          if (mode == "reflect") {
            // |src|, then n-1 - |n-1 - |src||.
            Value neg = arith::SubIOp::create(nb, nloc, c(0), src);
            Value a = arith::MaxSIOp::create(nb, nloc, src, neg);
            Value r = arith::SubIOp::create(nb, nloc, c(in[d] - 1), a);
            Value rn = arith::SubIOp::create(nb, nloc, c(0), r);
            Value ar = arith::MaxSIOp::create(nb, nloc, r, rn);
            src = arith::SubIOp::create(nb, nloc, c(in[d] - 1), ar);
          } else {
            src = arith::MaxSIOp::create(nb, nloc, src, c(0));
            src = arith::MinSIOp::create(nb, nloc, src, c(in[d] - 1));
          }
          idx.push_back(src);
        }
        Value v = tensor::ExtractOp::create(nb, nloc, data, idx);
        linalg::YieldOp::create(nb, nloc, v);
      });
  return Results{generic.getResult(0)};
}

/// A Conv's accumulator: the bias [M] broadcast along every dimension of
/// `shape` but `channelDim`, or zeros without a bias.
Value FunctionLowering::convInit(Location loc, Value bias, ArrayRef<int64_t> shape,
                                 int64_t channelDim, Type elemType) {
  if (!bias)
    return filled(loc, shape, elemType, createScalar(b, loc, elemType, 0));
  int64_t rank = shape.size();
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, {b.getAffineDimExpr(channelDim)}, ctx),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{RankedTensorType::get(shape, elemType)},
             ValueRange{bias}, ValueRange{empty(loc, shape, elemType)}, maps, it,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, args[0]);
             })
      .getResult(0);
}

/// One spatial dimension of a sliding window (Conv, MaxPool): the output
/// size, with `padLow`/`padHigh` set from auto_pad (SAME_UPPER/LOWER,
/// VALID) or checked (NOTSET). With `ceil` (MaxPool's ceil_mode) the last
/// partial window counts, unless it would start in the end padding.
FailureOr<int64_t> FunctionLowering::slidingWindow(
    Operation *op, StringRef autoPad, int64_t in, int64_t kernel,
    int64_t stride, int64_t dilation, bool ceil, int64_t &padLow,
    int64_t &padHigh) {
  constexpr int64_t kMax = int64_t(1) << 20;
  if (kernel < 1 || stride < 1 || dilation < 1 || padLow < 0 || padHigh < 0 ||
      kernel > kMax || dilation > kMax || stride > kMax || padLow > kMax ||
      padHigh > kMax)
    return error(op) << "kernel sizes, strides and dilations must be in [1, "
                        "2^20], pads in [0, 2^20]";
  int64_t eff = dilation * (kernel - 1) + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + eff - in);
    padLow = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    padHigh = total - padLow;
    return out;
  }
  if (autoPad == "VALID")
    padLow = padHigh = 0;
  else if (autoPad != "NOTSET")
    return error(op) << "auto_pad '" << autoPad << "' is not supported";
  int64_t span = in + padLow + padHigh - eff;
  if (span < 0)
    return error(op) << "the kernel is larger than the padded input";
  int64_t out = (ceil ? llvm::divideCeil(span, stride) : span / stride) + 1;
  if (ceil && (out - 1) * stride >= in + padLow)
    --out;
  return out;
}

/// Scalar `v` as the integer type of the same width and other signedness:
/// arith takes only signless integers, and the LLVM lowering makes both the
/// same type, where the cast folds away. (A tensor.bitcast instead would not
/// bufferize.)
static Value castSignedness(OpBuilder &b, Location loc, Value v, Type to) {
  return UnrealizedConversionCastOp::create(b, loc, to, v).getResult(0);
}

FailureOr<Value> FunctionLowering::quantParam(Operation *op, Value p,
                                              ArrayRef<int64_t> xs,
                                              int64_t axis, StringRef what) {
  ArrayRef<int64_t> ps = shapeOf(p);
  int64_t n = getNumElements(ps);
  if (ps.size() <= 1 && n == 1)
    return reshape(op->getLoc(), p, {});
  int64_t rank = xs.size();
  if (axis < 0 || axis >= rank || ps.size() != 1 || ps[0] != xs[axis])
    return error(op) << what << " of shape [" << ps
                     << "] is neither a scalar nor one value per element of "
                        "the axis (blocked quantization is not supported)";
  // [C] -> [C, 1, ...]: broadcasts over the dimensions after the axis.
  Shape shaped(rank - axis, 1);
  shaped[0] = ps[0];
  return reshape(op->getLoc(), p, shaped);
}

Value FunctionLowering::minusZeroPoint(Location loc, Value x, Value zp) {
  Type i32 = b.getI32Type();
  auto widen = [&](OpBuilder &nb, Location nloc, Value v, Type from) -> Value {
    auto it = cast<IntegerType>(from);
    if (it.getWidth() >= 32)
      return v;
    Value sv = it.isSignless()
                   ? v
                   : castSignedness(nb, nloc, v, IntegerType::get(ctx, it.getWidth()));
    return it.isUnsigned()
               ? (Value)arith::ExtUIOp::create(nb, nloc, i32, sv)
               : (Value)arith::ExtSIOp::create(nb, nloc, i32, sv);
  };
  Type xt = elementTypeOf(x), zt = zp ? elementTypeOf(zp) : Type();
  SmallVector<Value> ins = {x};
  if (zp)
    ins.push_back(zp);
  return elementwise(loc, shapeOf(x), i32, ins,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                       Value v = widen(nb, nloc, args[0], xt);
                       if (!zp)
                         return v;
                       return arith::SubIOp::create(nb, nloc, v,
                                                    widen(nb, nloc, args[1], zt));
                     });
}

/// acc + a * b, float or integer.
static Value mulAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, acc, arith::MulFOp::create(b, loc, x, y));
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, x, y));
}

/// Whether `t` is an integer type of 8, 16 or 32 bits, signed or not.
static bool isQuantizedInt(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && (it.getWidth() == 8 || it.getWidth() == 16 || it.getWidth() == 32);
}

FailureOr<std::pair<Value, Value>>
FunctionLowering::scaleAndZeroPoint(onnx::NodeOp op, Value x, Value scale,
                                    Value zp) {
  if (intAttr(op, "block_size", 0) != 0)
    return error(op) << "blocked quantization (block_size) is not supported";
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = intAttr(op, "axis", 1);
  if (axis < 0)
    axis += xs.size();
  auto s = quantParam(op, scale, xs, axis, "the scale");
  if (failed(s))
    return failure();
  Value z;
  if (zp) {
    auto zr = quantParam(op, zp, xs, axis, "the zero point");
    if (failed(zr))
      return failure();
    z = *zr;
  }
  return std::make_pair(*s, z);
}

FailureOr<Results> FunctionLowering::lowerDequantizeLinear(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value x = ins[0], scale = ins[1];
  Value zp = ins.size() > 2 && !isa<NoneType>(ins[2].getType()) ? ins[2] : Value();
  if (!isQuantizedInt(elementTypeOf(x)) || (zp && elementTypeOf(zp) != elementTypeOf(x)))
    return error(op) << "x must be an 8, 16 or 32-bit integer tensor, and the "
                        "zero point of its type";
  Type ft = elementTypeOf(scale);
  if (!ft.isF32())
    return error(op) << "the scale must be f32, not " << ft;
  auto sz = scaleAndZeroPoint(op, x, scale, zp);
  if (failed(sz))
    return failure();
  // (x - zp) in i32, then times the scale in f32, as ONNX Runtime does.
  Value diff = minusZeroPoint(loc, x, sz->second);
  return Results{elementwise(
      loc, shapeOf(x), ft, {diff, sz->first}, [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value f = arith::SIToFPOp::create(nb, nloc, ft, a[0]);
        return arith::MulFOp::create(nb, nloc, f, a[1]).getResult();
      })};
}

FailureOr<Results> FunctionLowering::lowerQuantizeLinear(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value x = ins[0], scale = ins[1];
  Value zp = ins.size() > 2 && !isa<NoneType>(ins[2].getType()) ? ins[2] : Value();
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  if (elementTypeOf(x) != f32 || elementTypeOf(scale) != f32)
    return error(op) << "x and the scale must be f32";
  // The result's type is the zero point's (uint8 without one).
  auto outType = dyn_cast<IntegerType>(
      zp ? elementTypeOf(zp) : cast<ShapedType>(op->getResult(0).getType()).getElementType());
  if (!outType || outType.getWidth() != 8)
    return error(op) << "only 8-bit results (int8, uint8) are supported";
  ArrayRef<int64_t> xs = shapeOf(x);
  auto sz = scaleAndZeroPoint(op, x, scale, zp);
  if (failed(sz))
    return failure();
  SmallVector<Value> inputs = {x, sz->first};
  // The zero point as i32 (a tensor of one value, or one per channel).
  if (zp)
    inputs.push_back(minusZeroPoint(loc, sz->second, Value()));
  bool isUnsigned = outType.isUnsigned();
  double lo = isUnsigned ? 0 : -128, hi = isUnsigned ? 255 : 127;
  // y = saturate(round_half_even(x / scale) + zero_point), as ONNX Runtime.
  return Results{elementwise(
      loc, xs, outType, inputs, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value q = math::RoundEvenOp::create(nb, nloc, arith::DivFOp::create(nb, nloc, a[0], a[1]));
        if (zp)
          q = arith::AddFOp::create(nb, nloc, q, arith::SIToFPOp::create(nb, nloc, f32, a[2]));
        q = arith::MaximumFOp::create(nb, nloc, q, createScalar(nb, nloc, f32, lo));
        q = arith::MinimumFOp::create(nb, nloc, q, createScalar(nb, nloc, f32, hi));
        Value v = arith::TruncIOp::create(nb, nloc, nb.getI8Type(),
                                          arith::FPToSIOp::create(nb, nloc, i32, q));
        return isUnsigned ? castSignedness(nb, nloc, v, outType) : v;
      })};
}

FailureOr<Results> FunctionLowering::lowerDynamicQuantizeLinear(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value x = op.getInputs()[0];
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
  if (elementTypeOf(x) != f32)
    return error(op) << "x must be f32";
  ArrayRef<int64_t> xs = shapeOf(x);
  // The range of x and 0: min(0, min x), max(0, max x).
  Value zero = createScalar(b, loc, f32, 0);
  SmallVector<bool> all(xs.size(), true);
  auto extreme = [&](bool isMax) {
    Value r = reduce(loc, x, all, filled(loc, {}, f32, zero),
                     [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                       return isMax ? (Value)arith::MaximumFOp::create(nb, nloc, a[0], a[1])
                                    : (Value)arith::MinimumFOp::create(nb, nloc, a[0], a[1]);
                     });
    return tensor::ExtractOp::create(b, loc, r, ValueRange{}).getResult();
  };
  Value lo = extreme(false), hi = extreme(true);
  // scale = (max - min) / 255 (1 when the range is empty, as ONNX Runtime);
  // zero point = round_half_even(clamp(0 - min / scale, 0, 255)).
  Value range = arith::SubFOp::create(b, loc, hi, lo);
  Value empty0 = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, range, zero);
  Value scale = arith::SelectOp::create(
      b, loc, empty0, createScalar(b, loc, f32, 1),
      arith::DivFOp::create(b, loc, range, createScalar(b, loc, f32, 255)));
  auto clamp255 = [&](OpBuilder &nb, Location nloc, Value v) -> Value {
    v = arith::MaximumFOp::create(nb, nloc, v, createScalar(nb, nloc, f32, 0));
    return arith::MinimumFOp::create(nb, nloc, v, createScalar(nb, nloc, f32, 255));
  };
  Value zpf = math::RoundEvenOp::create(
      b, loc, clamp255(b, loc, arith::SubFOp::create(b, loc, zero,
                                                     arith::DivFOp::create(b, loc, lo, scale))));
  // y = clamp(round_half_even(x / scale) + zp, 0, 255).
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  auto toU8 = [&](OpBuilder &nb, Location nloc, Value f) {
    Value q = arith::TruncIOp::create(nb, nloc, i8, arith::FPToSIOp::create(nb, nloc, i32, f));
    return castSignedness(nb, nloc, q, u8);
  };
  Value y = elementwise(loc, xs, u8, {x}, [&](OpBuilder &nb, Location nloc, ValueRange a) {
    Value q = math::RoundEvenOp::create(nb, nloc, arith::DivFOp::create(nb, nloc, a[0], scale));
    return toU8(nb, nloc, clamp255(nb, nloc, arith::AddFOp::create(nb, nloc, q, zpf)));
  });
  Value zpT = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, u8),
                                             toU8(b, loc, zpf));
  Value scaleT = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, f32), scale);
  return Results{y, scaleT, zpT};
}

FailureOr<std::pair<Value, Value>>
FunctionLowering::integerOperands(onnx::NodeOp op, ArrayRef<StringRef> names,
                                  int64_t axis0, int64_t axis1) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value v[2] = {ins[0], ins[1]}, zp[2];
  for (int i = 0; i < 2; ++i) {
    if (ins.size() > size_t(2 + i) && !isa<NoneType>(ins[2 + i].getType()))
      zp[i] = ins[2 + i];
    Type t = elementTypeOf(v[i]);
    if (!isQuantizedInt(t) || t.getIntOrFloatBitWidth() != 8)
      return error(op) << names[0] << " and " << names[1]
                       << " must be 8-bit integer tensors";
    if (zp[i] && elementTypeOf(zp[i]) != t)
      return error(op) << names[2 + i] << "'s type differs from " << names[i] << "'s";
  }
  int64_t axes[2] = {axis0, axis1};
  Value out[2];
  for (int i = 0; i < 2; ++i) {
    Value z;
    if (zp[i]) {
      auto r = quantParam(op, zp[i], shapeOf(v[i]), axes[i], names[2 + i]);
      if (failed(r))
        return failure();
      z = *r;
    }
    out[i] = minusZeroPoint(loc, v[i], z);
  }
  return std::make_pair(out[0], out[1]);
}

FailureOr<Results> FunctionLowering::lowerMatMulInteger(onnx::NodeOp op) {
  ArrayRef<int64_t> sa = shapeOf(op.getInputs()[0]), sb = shapeOf(op.getInputs()[1]);
  // numpy matmul of operands of rank >= 2: broadcast batches, [M, K] x [K, N].
  if (sa.size() < 2 || sb.size() < 2 || sa.back() != sb[sb.size() - 2])
    return error(op) << "A and B must be [..., M, K] and [..., K, N]";
  auto batch = onnx::broadcastShapes({sa.drop_back(2), sb.drop_back(2)});
  if (failed(batch))
    return error(op) << "the batch dimensions of A and B do not broadcast";
  Shape shape(*batch);
  shape.push_back(sa[sa.size() - 2]);
  shape.push_back(sb.back());
  // A's zero point: a scalar, or one per row of A ([M], along its dimension
  // -2); B's: a scalar, or one per column ([N], its last dimension).
  auto ab = integerOperands(op, {"A", "B", "a_zero_point", "b_zero_point"},
                            sa.size() - 2, sb.size() - 1);
  if (failed(ab))
    return failure();
  return Results{matmul(op.getLoc(), ab->first, ab->second, shape)};
}

FailureOr<Results> FunctionLowering::lowerConv(onnx::NodeOp op) {
  auto ins = op.getInputs();
  Value bias = ins.size() > 2 && !isa<NoneType>(ins[2].getType()) ? ins[2] : Value();
  if (failed(requireArithmetic(op, elementTypeOf(ins[0]), /*floatOnly=*/true)))
    return failure();
  return lowerConvOn(op, ins[0], ins[1], bias);
}

FailureOr<Results> FunctionLowering::lowerConvInteger(onnx::NodeOp op) {
  // x's zero point: a scalar; w's: a scalar or one per output channel.
  // Both minus their zero points in i32 (so padding with 0 is padding with
  // the zero point, as ONNX Runtime does), then Conv's contraction in i32.
  auto xw = integerOperands(op, {"x", "w", "x_zero_point", "w_zero_point"}, -1, 0);
  if (failed(xw))
    return failure();
  return lowerConvOn(op, xw->first, xw->second, Value());
}

FailureOr<Results> FunctionLowering::lowerConvOn(onnx::NodeOp op, Value x,
                                                 Value w, Value bias) {
  Location loc = op.getLoc();
  Type elemType = elementTypeOf(x);
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  int64_t rank = xs.size(), sp = rank - 2;
  if (rank < 3 || (int64_t)ws.size() != rank)
    return error(op) << "input and weight must be [N, C, spatial...] and "
                        "[M, C/group, kernel...] of the same rank";
  int64_t group = intAttr(op, "group", 1);
  int64_t N = xs[0], C = xs[1], M = ws[0], Cg = ws[1];
  if (group < 1 || C % group || M % group || C / group != Cg)
    return error(op) << "channels " << C << " (weight " << M << "x" << Cg
                     << ") do not split into " << group << " groups";
  if (bias && (shapeOf(bias).size() != 1 || shapeOf(bias)[0] != M))
    return error(op) << "the bias is not [M]";
  SmallVector<int64_t> kernel(ws.begin() + 2, ws.end());
  SmallVector<int64_t> strides = intsAttr(op, "strides", SmallVector<int64_t>(sp, 1));
  SmallVector<int64_t> dil = intsAttr(op, "dilations", SmallVector<int64_t>(sp, 1));
  SmallVector<int64_t> pads = intsAttr(op, "pads", SmallVector<int64_t>(2 * sp, 0));
  if (auto ks = intsAttr(op, "kernel_shape"); !ks.empty() && ks != kernel)
    return error(op) << "kernel_shape disagrees with the weight";
  if ((int64_t)strides.size() != sp || (int64_t)dil.size() != sp ||
      (int64_t)pads.size() != 2 * sp)
    return error(op) << "strides/dilations/pads do not match the rank";
  StringRef autoPad = strAttr(op, "auto_pad", "NOTSET");
  Shape outShape = {N, M};
  for (int64_t i = 0; i < sp; ++i) {
    auto out = slidingWindow(op, autoPad, xs[2 + i], kernel[i], strides[i],
                             dil[i], /*ceil=*/false, pads[i], pads[i + sp]);
    if (failed(out))
      return failure();
    outShape.push_back(*out);
  }
  // Zero padding first, then one contraction over (n, m, o..., c, k...).
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  Shape paddedShape(xs);
  for (int64_t i = 0; i < sp; ++i) {
    low[2 + i] = pads[i];
    high[2 + i] = pads[i + sp];
    paddedShape[2 + i] += pads[i] + pads[i + sp];
  }
  Value zero = createScalar(b, loc, elemType, 0);
  Value xp = x;
  bool anyPad = llvm::any_of(pads, [](int64_t p) { return p != 0; });
  if (anyPad)
    xp = tensor::PadOp::create(b, loc, RankedTensorType::get(paddedShape, elemType),
                               x, getAsIndexOpFoldResult(ctx, low),
                               getAsIndexOpFoldResult(ctx, high), zero)
             .getResult();
  if (group == 1)
    return lowerConvChannelsLast(op, xp, w, bias, outShape, strides, dil);
  Value init = convInit(loc, bias, outShape, /*channelDim=*/1, elemType);
  int64_t loops = 3 + 2 * sp; // n, m, o..., c, k...
  AffineExpr n = b.getAffineDimExpr(0), m = b.getAffineDimExpr(1),
             c = b.getAffineDimExpr(2 + sp);
  SmallVector<AffineExpr> xExprs = {n, m.floorDiv(M / group) * Cg + c},
                          wExprs = {m, c}, oExprs = {n, m};
  for (int64_t i = 0; i < sp; ++i) {
    AffineExpr o = b.getAffineDimExpr(2 + i), k = b.getAffineDimExpr(3 + sp + i);
    xExprs.push_back(o * strides[i] + k * dil[i]);
    wExprs.push_back(k);
    oExprs.push_back(o);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xExprs, ctx),
                                 AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, oExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(2 + sp, utils::IteratorType::parallel);
  iterators.append(1 + sp, utils::IteratorType::reduction);
  auto conv = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{xp, w}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, mulAdd(nb, nloc, args[0], args[1], args[2]));
      });
  return Results{conv.getResult(0)};
}

/// Conv with one group, for speed: the output channel is the innermost loop,
/// a parallel one over contiguous memory (weights as [C, k..., M], the result
/// as [N, o..., M]), so LLVM vectorises it as broadcast-multiply-adds; a
/// reduction innermost (kernel taps) would stay scalar without
/// reassociation. Constant weights are transposed at compile time. The
/// result is transposed back to [N, M, o...].
FailureOr<Results> FunctionLowering::lowerConvChannelsLast(
    onnx::NodeOp op, Value xp, Value w, Value bias, ArrayRef<int64_t> outShape,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dil) {
  Location loc = op.getLoc();
  Type elemType = elementTypeOf(xp);
  ArrayRef<int64_t> ws = shapeOf(w);
  int64_t rank = ws.size(), sp = rank - 2, M = ws[0];
  SmallVector<int64_t> wPerm; // [M, C, k...] -> [C, k..., M]
  for (int64_t d = 1; d < rank; ++d)
    wPerm.push_back(d);
  wPerm.push_back(0);
  Shape wtShape;
  for (int64_t d : wPerm)
    wtShape.push_back(ws[d]);
  Value wt;
  auto wc = onnx::getConstantF32(w);
  if (wc && elemType.isF32() && wc->numElements() == getNumElements(ws)) {
    int64_t inner = wc->numElements() / M;
    std::vector<float> t(wc->values.size());
    for (int64_t m = 0; m < M; ++m)
      for (int64_t j = 0; j < inner; ++j)
        t[j * M + m] = wc->values[m * inner + j];
    auto type = RankedTensorType::get(wtShape, elemType);
    wt = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, ArrayRef<float>(t)));
  } else {
    wt = linalg::TransposeOp::create(b, loc, w, empty(loc, wtShape, elemType),
                                     wPerm)
             ->getResult(0);
  }
  // Result [N, o..., M], starting from the bias (or zeros).
  Shape tShape = {outShape[0]};
  for (int64_t i = 0; i < sp; ++i)
    tShape.push_back(outShape[2 + i]);
  tShape.push_back(M);
  Value init = convInit(loc, bias, tShape, /*channelDim=*/rank - 1, elemType);
  // Loops (n, o..., c, k..., m). The input first gathered into patches
  // [N, o..., C, k...] (im2col: the window positions written out, a copy of
  // O*C*K elements against O*C*K*M multiply-adds), so that the contraction
  // reads every operand through a projected permutation: a plain
  // contraction the CPU pipeline tiles and vectorises (cpu-vectorize-
  // contractions) like a matmul.
  int64_t loops = 3 + 2 * sp;
  AffineExpr n = b.getAffineDimExpr(0), c = b.getAffineDimExpr(1 + sp),
             m = b.getAffineDimExpr(loops - 1);
  ArrayRef<int64_t> xps = shapeOf(xp);
  Shape patchShape = {xps[0]};
  for (int64_t i = 0; i < sp; ++i)
    patchShape.push_back(tShape[1 + i]);
  patchShape.push_back(xps[1]);
  for (int64_t i = 0; i < sp; ++i)
    patchShape.push_back(ws[2 + i]);
  Value patches;
  {
    int64_t pr = patchShape.size(); // n, o..., c, k...
    SmallVector<utils::IteratorType> its(pr, utils::IteratorType::parallel);
    SmallVector<AffineMap> pmaps = {b.getMultiDimIdentityMap(pr)};
    patches =
        linalg::GenericOp::create(
            b, loc, TypeRange{RankedTensorType::get(patchShape, elemType)},
            ValueRange{}, ValueRange{empty(loc, patchShape, elemType)}, pmaps,
            its,
            [&](OpBuilder &nb, Location nloc, ValueRange) {
              auto idx = [&](int64_t d) -> Value {
                return linalg::IndexOp::create(nb, nloc, d);
              };
              SmallVector<Value> coords = {idx(0), idx(1 + sp)};
              for (int64_t i = 0; i < sp; ++i) {
                Value o = arith::MulIOp::create(
                    nb, nloc, idx(1 + i),
                    arith::ConstantIndexOp::create(nb, nloc, strides[i]));
                Value k = arith::MulIOp::create(
                    nb, nloc, idx(2 + sp + i),
                    arith::ConstantIndexOp::create(nb, nloc, dil[i]));
                coords.push_back(arith::AddIOp::create(nb, nloc, o, k));
              }
              linalg::YieldOp::create(
                  nb, nloc,
                  tensor::ExtractOp::create(nb, nloc, xp, coords).getResult());
            })
            .getResult(0);
  }
  SmallVector<AffineExpr> xExprs = {n}, wExprs = {c}, oExprs = {n};
  for (int64_t i = 0; i < sp; ++i)
    xExprs.push_back(b.getAffineDimExpr(1 + i));
  xExprs.push_back(c);
  for (int64_t i = 0; i < sp; ++i) {
    AffineExpr o = b.getAffineDimExpr(1 + i), k = b.getAffineDimExpr(2 + sp + i);
    xExprs.push_back(k);
    wExprs.push_back(k);
    oExprs.push_back(o);
  }
  wExprs.push_back(m);
  oExprs.push_back(m);
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xExprs, ctx),
                                 AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, oExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(1 + sp, utils::IteratorType::parallel);
  iterators.append(1 + sp, utils::IteratorType::reduction);
  iterators.push_back(utils::IteratorType::parallel);
  auto conv = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{patches, wt}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, mulAdd(nb, nloc, args[0], args[1], args[2]));
      });
  // Back to [N, M, o...].
  SmallVector<int64_t> back = {0, sp + 1};
  for (int64_t i = 0; i < sp; ++i)
    back.push_back(1 + i);
  Value out = linalg::TransposeOp::create(b, loc, conv.getResult(0),
                                          empty(loc, outShape, elemType), back)
                  ->getResult(0);
  return Results{out};
}

FailureOr<Results> FunctionLowering::lowerNaryElementwise(onnx::NodeOp op) {
  StringRef type = op.getOpType();
  SmallVector<Value> ins(op.getInputs().begin(), op.getInputs().end());
  // Where(cond, x, y): the result has x's type; cond is bool (i1).
  Value first = type == "Where" ? ins[1] : ins[0];
  Type elemType = elementTypeOf(first);
  bool logical = llvm::is_contained({"And", "Or", "Xor", "Not"}, type);
  if (logical ? !elemType.isInteger(1)
              : failed(requireArithmetic(op, elemType,
                                         /*floatOnly=*/type == "PRelu")))
    return logical ? error(op) << "takes bool (i1) inputs, not " << elemType
                   : failure();
  for (auto [i, v] : llvm::enumerate(ins)) {
    Type t = elementTypeOf(v);
    bool isCond = type == "Where" && i == 0;
    if (isCond ? !t.isInteger(1) : t != elemType)
      return error(op) << "input #" << i << " has element type " << t
                       << ", expected " << (isCond ? "i1" : "the others'");
  }
  // Comparisons give bool.
  Type resultType = isComparison(type) ? IntegerType::get(op.getContext(), 1)
                                       : elemType;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : ins)
    shapes.push_back(shapeOf(v));
  auto shape = onnx::broadcastShapes(shapes);
  if (failed(shape))
    return error(op) << "operands do not broadcast";
  bool isFloat = isa<FloatType>(elemType);
  return Results{elementwise(
      op.getLoc(), *shape, resultType, ins,
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        if (isComparison(type)) {
          // Ordered float predicates: a NaN compares false, as in C++.
          auto [fp, ip] =
              llvm::StringSwitch<std::pair<arith::CmpFPredicate,
                                           arith::CmpIPredicate>>(type)
                  .Case("Equal", {arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq})
                  .Case("Greater", {arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt})
                  .Case("Less", {arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt})
                  .Case("GreaterOrEqual",
                        {arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge})
                  .Default({arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle});
          return isFloat ? (Value)arith::CmpFOp::create(nb, nloc, fp, a[0], a[1])
                         : (Value)arith::CmpIOp::create(nb, nloc, ip, a[0], a[1]);
        }
        if (type == "Not")
          return arith::XOrIOp::create(nb, nloc, a[0],
                                       createScalar(nb, nloc, elemType, 1));
        if (type == "And")
          return arith::AndIOp::create(nb, nloc, a[0], a[1]);
        if (type == "Or")
          return arith::OrIOp::create(nb, nloc, a[0], a[1]);
        if (type == "Xor")
          return arith::XOrIOp::create(nb, nloc, a[0], a[1]);
        if (type == "Where")
          return arith::SelectOp::create(nb, nloc, a[0], a[1], a[2]);
        if (type == "PRelu") {
          Value zero = createScalar(nb, nloc, elemType, 0);
          Value neg = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OLT,
                                            a[0], zero);
          return arith::SelectOp::create(
              nb, nloc, neg, arith::MulFOp::create(nb, nloc, a[1], a[0]), a[0]);
        }
        // Max/Min: NaN propagates (ONNX Runtime's std::max/min on floats
        // differ only for NaN operands).
        Value r = a[0];
        for (Value v : a.drop_front()) {
          if (type == "Max")
            r = isFloat ? (Value)arith::MaximumFOp::create(nb, nloc, r, v)
                        : (Value)arith::MaxSIOp::create(nb, nloc, r, v);
          else
            r = isFloat ? (Value)arith::MinimumFOp::create(nb, nloc, r, v)
                        : (Value)arith::MinSIOp::create(nb, nloc, r, v);
        }
        return r;
      })};
}

FailureOr<Results> FunctionLowering::lowerTile(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value x = op.getInputs()[0];
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  auto reps = constantInts(op, op.getInputs()[1], "repeats");
  if (failed(reps))
    return failure();
  if ((int64_t)reps->size() != rank)
    return error(op) << "repeats has " << reps->size()
                     << " values for an input of rank " << rank;
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    auto n = checkedMul(in[d], (*reps)[d]);
    if ((*reps)[d] < 0 || !n)
      return error(op) << "repeats[" << d << "] = " << (*reps)[d]
                       << " is negative or makes the output too large";
    out.push_back(*n);
  }
  if (!checkedNumElements(out))
    return error(op) << "the output has more than 2^63 elements";
  Type elemType = elementTypeOf(x);
  Value init = empty(loc, out, elemType);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(nb, nloc, d);
          if ((*reps)[d] != 1)
            i = arith::RemUIOp::create(
                nb, nloc, i, arith::ConstantIndexOp::create(nb, nloc, in[d]));
          coords.push_back(i);
        }
        linalg::YieldOp::create(nb, nloc,
                                tensor::ExtractOp::create(nb, nloc, x, coords)
                                    .getResult());
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerCumSum(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value x = op.getInputs()[0];
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  bool isFloat = isa<FloatType>(elemType);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  auto axisVal = constantInt(op, op.getInputs()[1], "axis");
  if (failed(axisVal))
    return failure();
  auto axis = onnx::normalizeAxis(*axisVal, rank);
  if (!axis)
    return error(op) << "axis " << *axisVal << " is out of range for rank "
                     << rank;
  bool exclusive = intAttr(op, "exclusive", 0) != 0;
  bool reverse = intAttr(op, "reverse", 0) != 0;
  // out[.., k, ..] = sum over j of x[.., j, ..] where j is on k's summed
  // side: j <= k (j < k exclusive), or j >= k (j > k) in reverse. A
  // reduction over j (loop dimension `rank`); the others contribute 0.
  int64_t n = in[*axis];
  if (n > (int64_t(1) << 16))
    return error(op) << "CumSum over " << n
                     << " elements along its axis (at most 65536)";
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank; ++d)
    inExprs.push_back(d == *axis ? b.getAffineDimExpr(rank)
                                 : b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, inExprs, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank + 1, ctx)
                                     .getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value zero = createScalar(b, loc, elemType, 0);
  Value init = filled(loc, in, elemType, zero);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value k = linalg::IndexOp::create(nb, nloc, *axis);
        Value j = linalg::IndexOp::create(nb, nloc, rank);
        arith::CmpIPredicate p =
            reverse ? (exclusive ? arith::CmpIPredicate::ugt
                                 : arith::CmpIPredicate::uge)
                    : (exclusive ? arith::CmpIPredicate::ult
                                 : arith::CmpIPredicate::ule);
        Value take = arith::CmpIOp::create(nb, nloc, p, j, k);
        Value v = arith::SelectOp::create(nb, nloc, take, a[0],
                                          createScalar(nb, nloc, elemType, 0));
        Value sum = isFloat ? (Value)arith::AddFOp::create(nb, nloc, a[1], v)
                            : (Value)arith::AddIOp::create(nb, nloc, a[1], v);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerArgMax(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value data = op.getInputs()[0];
  Type elemType = elementTypeOf(data);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  bool isFloat = isa<FloatType>(elemType);
  bool isMax = op.getOpType() == "ArgMax";
  ArrayRef<int64_t> in = shapeOf(data);
  int64_t rank = in.size();
  auto axis = onnx::normalizeAxis(intAttr(op, "axis", 0), rank);
  if (!axis)
    return error(op) << "axis " << intAttr(op, "axis", 0)
                     << " is out of range for rank " << rank;
  if (in[*axis] == 0)
    return error(op) << "the reduced dimension is empty";
  bool keep = intAttr(op, "keepdims", 1) != 0;
  bool last = intAttr(op, "select_last_index", 0) != 0;
  Shape kept, outShape;
  SmallVector<bool> reduced(rank, false);
  reduced[*axis] = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != *axis)
      kept.push_back(in[d]);
    outShape.push_back(d == *axis ? 1 : in[d]);
  }
  if (!keep)
    outShape = kept;
  // Two accumulators: the extreme value so far (starting at element 0 of
  // the axis) and its index. A strictly better element (or, with
  // select_last_index, an equal one) takes over; a NaN never does.
  Type i64 = b.getI64Type();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(d == *axis ? 1 : in[d]));
  Value first = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(kept, elemType), data, offsets, sizes,
      strides);
  Value firstInit = tensor::EmptyOp::create(b, loc, kept, elemType);
  first = linalg::CopyOp::create(b, loc, first, firstInit).getResult(0);
  Value idxInit = filled(loc, kept, i64, createScalar(b, loc, i64, 0));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 getProjectionMap(ctx, reduced),
                                 getProjectionMap(ctx, reduced)};
  SmallVector<utils::IteratorType> iterators;
  for (bool r : reduced)
    iterators.push_back(r ? utils::IteratorType::reduction
                          : utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{first.getType(), idxInit.getType()}, ValueRange{data},
      ValueRange{first, idxInit}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value x = a[0], best = a[1], bestIdx = a[2];
        Value k = arith::IndexCastOp::create(
            nb, nloc, i64, linalg::IndexOp::create(nb, nloc, *axis));
        Value better;
        if (isFloat)
          better = arith::CmpFOp::create(
              nb, nloc,
              isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                    : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT),
              x, best);
        else
          better = arith::CmpIOp::create(
              nb, nloc,
              isMax ? (last ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sgt)
                    : (last ? arith::CmpIPredicate::sle : arith::CmpIPredicate::slt),
              x, best);
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{arith::SelectOp::create(nb, nloc, better, x, best),
                       arith::SelectOp::create(nb, nloc, better, k, bestIdx)});
      });
  return Results{reshape(loc, generic.getResult(1), outShape)};
}

FailureOr<Results> FunctionLowering::lowerPow(onnx::NodeOp op) {
  Value x = op.getInputs()[0], y = op.getInputs()[1];
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType, /*floatOnly=*/true)) ||
      failed(requireArithmetic(op, elementTypeOf(y), /*floatOnly=*/true)))
    return failure();
  // x^2 as x*x (what exporters emit for squares): exact, like ONNX Runtime.
  auto e = onnx::getConstantF32(y);
  bool square = e && e->numElements() == 1 && e->values[0] == 2.0f;
  auto shape = onnx::broadcastShapes({shapeOf(x), shapeOf(y)});
  if (failed(shape))
    return error(op) << "operands do not broadcast: " << x.getType() << " and "
                     << y.getType();
  if (square)
    return Results{elementwise(op.getLoc(), *shape, elemType, {x},
                               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                 return arith::MulFOp::create(nb, nloc, a[0], a[0])
                                     .getResult();
                               })};
  return Results{elementwise(
      op.getLoc(), *shape, elemType, {x, y},
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value yy = a[1];
        if (yy.getType() != elemType)
          yy = arith::TruncFOp::create(nb, nloc, elemType, yy);
        return math::PowFOp::create(nb, nloc, a[0], yy);
      })};
}

/// `cur` combined with `upd` by `how` (add, mul, max or min; signed for
/// integers): a reduction's step and a scatter's reduction.
static Value combineScalars(OpBuilder &b, Location loc, StringRef how,
                            bool isFloat, Value cur, Value upd) {
  if (how == "add")
    return isFloat ? (Value)arith::AddFOp::create(b, loc, cur, upd)
                   : (Value)arith::AddIOp::create(b, loc, cur, upd);
  if (how == "mul")
    return isFloat ? (Value)arith::MulFOp::create(b, loc, cur, upd)
                   : (Value)arith::MulIOp::create(b, loc, cur, upd);
  if (how == "max")
    return isFloat ? (Value)arith::MaximumFOp::create(b, loc, cur, upd)
                   : (Value)arith::MaxSIOp::create(b, loc, cur, upd);
  return isFloat ? (Value)arith::MinimumFOp::create(b, loc, cur, upd)
                 : (Value)arith::MinSIOp::create(b, loc, cur, upd);
}

FailureOr<Results> FunctionLowering::lowerReduceMean(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value data = ins[0];
  Type elemType = elementTypeOf(data);
  StringRef kind = op.getOpType();
  bool isMean = kind == "ReduceMean";
  if (failed(requireArithmetic(op, elemType, /*floatOnly=*/isMean)))
    return failure();
  bool isFloat = isa<FloatType>(elemType);
  ArrayRef<int64_t> in = shapeOf(data);
  int64_t rank = in.size();
  // Axes: an attribute before opset 18 (ReduceSum: 13), an input from then.
  SmallVector<int64_t> axes = intsAttr(op, "axes");
  if (ins.size() > 1 && !isa<NoneType>(ins[1].getType())) {
    auto a = constantInts(op, ins[1], "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  bool keep = intAttr(op, "keepdims", 1) != 0;
  SmallVector<bool> reduced(rank, axes.empty() && !intAttr(op, "noop_with_empty_axes", 0));
  for (int64_t a : axes) {
    auto n = onnx::normalizeAxis(a, rank);
    if (!n)
      return error(op) << "axis " << a << " is out of range for rank " << rank;
    reduced[*n] = true;
  }
  Shape kept, outShape;
  SmallVector<int64_t> reducedDims;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reducedDims.push_back(in[d]);
      if (keep)
        outShape.push_back(1);
    } else {
      kept.push_back(in[d]);
      outShape.push_back(in[d]);
    }
  }
  std::optional<int64_t> count = checkedNumElements(reducedDims);
  if (!count)
    return error(op) << "the reduced dimensions hold more than 2^63 elements";
  if (kind != "ReduceMean" && kind != "ReduceSum" && kind != "ReduceProd" &&
      *count == 0)
    return error(op) << kind << " over an empty dimension has no value";
  // The neutral element: 0 for a sum, 1 for a product, the reduced
  // dimensions' first element for Max/Min (then every element is combined).
  Value init;
  if (kind == "ReduceProd")
    init = filled(loc, kept, elemType, createScalar(b, loc, elemType, 1));
  else if (kind == "ReduceMax" || kind == "ReduceMin") {
    // The identity of max / min: -inf / +inf, or the type's extreme integer.
    bool isMax = kind == "ReduceMax";
    Value id;
    if (isFloat) {
      id = createScalar(b, loc, elemType,
                        isMax ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity());
    } else {
      unsigned w = elemType.getIntOrFloatBitWidth();
      id = arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(elemType, isMax ? APInt::getSignedMinValue(w)
                                                   : APInt::getSignedMaxValue(w)));
    }
    init = filled(loc, kept, elemType, id);
  } else
    init = filled(loc, kept, elemType, createScalar(b, loc, elemType, 0));
  StringRef how = kind == "ReduceProd"  ? "mul"
                  : kind == "ReduceMax" ? "max"
                  : kind == "ReduceMin" ? "min"
                                        : "add";
  Value sum = reduce(loc, data, reduced, init,
                     [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                       return combineScalars(nb, nloc, how, isFloat, a[1], a[0]);
                     });
  if (!isMean)
    return Results{reshape(loc, sum, outShape)};
  Value scale = createScalar(b, loc, elemType, *count ? 1.0 / *count : 0.0);
  Value mean = elementwise(loc, kept, elemType, {sum},
                           [&](OpBuilder &nb, Location nloc, ValueRange a) {
                             return arith::MulFOp::create(nb, nloc, a[0], scale)
                                 .getResult();
                           });
  return Results{reshape(loc, mean, outShape)};
}

/// LayerNormalization (opset 17), Y only: over the dimensions from `axis`
/// on, Y = (X - mean) / sqrt(var + epsilon) * Scale + B, with the mean and
/// the (biased) variance computed in two passes, in f32 (stash_type 1).
/// InstanceNormalization: per batch entry and channel of X [N, C, ...], the
/// normalisation over the spatial dimensions (LayerNormalization from axis
/// 2), scale and B [C] viewed as [C, 1, ...].
FailureOr<Results> FunctionLowering::lowerInstanceNorm(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value x = ins[0];
  Type elemType = elementTypeOf(x);
  if (!elemType.isF32())
    return error(op) << "only f32 is supported, not " << elemType;
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 3)
    return error(op) << "X must be [N, C, D1, ...]";
  Shape channel(xs.size() - 1, 1);
  channel[0] = xs[1];
  SmallVector<Value, 2> params;
  for (unsigned i = 1; i < 3; ++i) {
    ArrayRef<int64_t> s = shapeOf(ins[i]);
    if (s.size() != 1 || s[0] != xs[1] || elementTypeOf(ins[i]) != elemType)
      return error(op) << "scale and B must be [C] of X's type";
    params.push_back(reshape(loc, ins[i], channel));
  }
  double epsilon = 1e-5;
  if (auto attrs = op.getAttrs())
    if (auto e = attrs->getAs<FloatAttr>("epsilon"))
      epsilon = e.getValueAsDouble();
  return normalizeFrom(op, x, 2, epsilon, params[0], params[1]);
}

/// BatchNormalization for inference (training_mode 0, Y only):
/// Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1 of
/// X [N, C, ...]), one linalg.generic.
FailureOr<Results> FunctionLowering::lowerBatchNorm(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value x = ins[0];
  Type elemType = elementTypeOf(x);
  if (!isa<FloatType>(elemType))
    return error(op) << "only float inputs are supported, not " << elemType;
  if (intAttr(op, "training_mode", 0) != 0)
    return error(op) << "training_mode 1 is not supported (inference only)";
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return error(op) << "X must be [N, C, ...]";
  for (unsigned i = 1; i < 5; ++i) {
    ArrayRef<int64_t> s = shapeOf(ins[i]);
    if (s.size() != 1 || s[0] != xs[1] || elementTypeOf(ins[i]) != elemType)
      return error(op) << "scale, B, mean and var must be [C] of X's type";
  }
  double epsilon = 1e-5;
  if (auto attrs = op.getAttrs())
    if (auto e = attrs->getAs<FloatAttr>("epsilon"))
      epsilon = e.getValueAsDouble();
  int64_t rank = xs.size();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap chan = AffineMap::get(rank, 0, {b.getAffineDimExpr(1)}, ctx);
  Value out = empty(loc, xs, elemType);
  auto bn = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()},
      ValueRange{x, ins[1], ins[2], ins[3], ins[4]}, ValueRange{out},
      ArrayRef<AffineMap>{id, chan, chan, chan, chan, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        ImplicitLocOpBuilder ib(nloc, nb);
        Value eps = createScalar(ib, nloc, elemType, epsilon);
        Value sd = math::SqrtOp::create(ib, arith::AddFOp::create(ib, a[4], eps));
        Value norm = arith::DivFOp::create(ib, arith::SubFOp::create(ib, a[0], a[3]), sd);
        Value y = arith::AddFOp::create(ib, arith::MulFOp::create(ib, norm, a[1]), a[2]);
        linalg::YieldOp::create(ib, y);
      });
  return Results{bn.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerLayerNorm(onnx::NodeOp op) {
  auto ins = op.getInputs();
  Value x = ins[0], scale = ins[1];
  Value bias = ins.size() > 2 && !isa<NoneType>(ins[2].getType()) ? ins[2]
                                                                    : Value();
  Type elemType = elementTypeOf(x);
  if (!elemType.isF32())
    return error(op) << "only f32 is supported, not " << elemType;
  if (elementTypeOf(scale) != elemType ||
      (bias && elementTypeOf(bias) != elemType))
    return error(op) << "Scale and B must be " << elemType;
  if (intAttr(op, "stash_type", 1) != 1)
    return error(op) << "stash_type " << intAttr(op, "stash_type", 1)
                     << " is not supported (only 1, float32)";
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  auto axis = onnx::normalizeAxis(intAttr(op, "axis", -1), rank);
  if (!axis)
    return error(op) << "axis " << intAttr(op, "axis", -1)
                     << " is out of range for rank " << rank;
  // Scale and B broadcast to the normalised dimensions (unidirectionally).
  Shape normShape(in.begin() + *axis, in.end());
  for (Value v : {scale, bias})
    if (v) {
      auto bc = onnx::broadcastShapes({normShape, shapeOf(v)});
      if (failed(bc) || Shape(*bc) != normShape)
        return error(op) << "Scale/B of type " << v.getType()
                         << " do not broadcast to the normalised shape";
    }
  double epsilon = 1e-5;
  if (auto attrs = op.getAttrs())
    if (auto e = attrs->getAs<FloatAttr>("epsilon"))
      epsilon = e.getValueAsDouble();
  return normalizeFrom(op, x, *axis, epsilon, scale, bias);
}

/// (X - mean) / sqrt(var + epsilon) * scale (+ bias), the mean and the
/// (biased) variance over the dimensions from `axis` on, two passes;
/// `scale` and `bias` broadcast to X (numpy rules).
FailureOr<Results> FunctionLowering::normalizeFrom(Operation *op, Value x,
                                                   int64_t axis, double epsilon,
                                                   Value scale, Value bias) {
  Location loc = op->getLoc();
  Type elemType = elementTypeOf(x);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  Shape normShape(in.begin() + axis, in.end());
  SmallVector<bool> reduced(rank, false);
  Shape kept, keptOnes;
  for (int64_t d = 0; d < rank; ++d) {
    reduced[d] = d >= axis;
    if (!reduced[d])
      kept.push_back(in[d]);
    keptOnes.push_back(reduced[d] ? 1 : in[d]);
  }
  std::optional<int64_t> count = checkedNumElements(normShape);
  if (!count)
    return error(op) << "the normalised dimensions hold more than 2^63 "
                        "elements";
  Value zero = createScalar(b, loc, elemType, 0);
  Value invCount =
      createScalar(b, loc, elemType, *count ? 1.0 / double(*count) : 0.0);
  auto add = [](OpBuilder &nb, Location nloc, ValueRange a) {
    return arith::AddFOp::create(nb, nloc, a[0], a[1]).getResult();
  };
  auto mul = [&](Value v) {
    return [v](OpBuilder &nb, Location nloc, ValueRange a) {
      return arith::MulFOp::create(nb, nloc, a[0], v).getResult();
    };
  };
  Value sum = reduce(loc, x, reduced, filled(loc, kept, elemType, zero), add);
  Value mean = reshape(loc, elementwise(loc, kept, elemType, {sum},
                                        mul(invCount)),
                       keptOnes);
  Value centred = elementwise(loc, in, elemType, {x, mean},
                              [](OpBuilder &nb, Location nloc, ValueRange a) {
                                return arith::SubFOp::create(nb, nloc, a[0], a[1])
                                    .getResult();
                              });
  Value sq = reduce(loc, centred, reduced, filled(loc, kept, elemType, zero),
                    [](OpBuilder &nb, Location nloc, ValueRange a) {
                      Value p = arith::MulFOp::create(nb, nloc, a[0], a[0]);
                      return arith::AddFOp::create(nb, nloc, p, a[1]).getResult();
                    });
  Value eps = createScalar(b, loc, elemType, epsilon);
  Value one = createScalar(b, loc, elemType, 1.0);
  Value invStd = reshape(
      loc,
      elementwise(loc, kept, elemType, {sq},
                  [&](OpBuilder &nb, Location nloc, ValueRange a) {
                    Value var = arith::MulFOp::create(nb, nloc, a[0], invCount);
                    Value ve = arith::AddFOp::create(nb, nloc, var, eps);
                    Value sd = math::SqrtOp::create(nb, nloc, ve);
                    return arith::DivFOp::create(nb, nloc, one, sd).getResult();
                  }),
      keptOnes);
  SmallVector<Value> operands = {centred, invStd, scale};
  if (bias)
    operands.push_back(bias);
  Value y = elementwise(loc, in, elemType, operands,
                        [&](OpBuilder &nb, Location nloc, ValueRange a) {
                          Value n = arith::MulFOp::create(nb, nloc, a[0], a[1]);
                          Value r = arith::MulFOp::create(nb, nloc, n, a[2]);
                          if (a.size() > 3)
                            r = arith::AddFOp::create(nb, nloc, r, a[3]);
                          return r;
                        });
  return Results{y};
}

/// ReverseSequence: for each batch entry b, the first sequence_lens[b]
/// elements along the time axis in reverse order, the rest as they are. One
/// linalg.generic over the output that reads the input with tensor.extract
/// at the mirrored time index; a length outside [0, T] is clamped into it
/// (ONNX Runtime refuses such a length; nothing is read out of range here).
FailureOr<Results> FunctionLowering::lowerReverseSequence(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value x = op.getInputs()[0], lens = op.getInputs()[1];
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  int64_t batchAxis = intAttr(op, "batch_axis", 1);
  int64_t timeAxis = intAttr(op, "time_axis", 0);
  if (rank < 2 || (batchAxis != 0 && batchAxis != 1) ||
      (timeAxis != 0 && timeAxis != 1) || batchAxis == timeAxis)
    return error(op) << "batch_axis " << batchAxis << " and time_axis "
                     << timeAxis << " must be 0 and 1 in some order, on a "
                     << "tensor of rank >= 2 (rank " << rank << ")";
  auto lensType = cast<RankedTensorType>(lens.getType());
  if (!lensType.getElementType().isInteger(64) || lensType.getRank() != 1 ||
      lensType.getDimSize(0) != in[batchAxis])
    return error(op) << "sequence_lens must be int64 of shape ["
                     << in[batchAxis] << "], not " << lens.getType();
  Type elemType = elementTypeOf(x);
  int64_t steps = in[timeAxis];
  Value init = empty(loc, in, elemType);
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, b.getAffineDimExpr(batchAxis)),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{lens}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto c = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
        };
        Value len =
            arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), args[0]);
        len = arith::MaxSIOp::create(nb, nloc, len, c(0));
        len = arith::MinSIOp::create(nb, nloc, len, c(steps));
        Value t = linalg::IndexOp::create(nb, nloc, timeAxis);
        Value inside =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, t, len);
        Value last = arith::SubIOp::create(nb, nloc, len, c(1));
        Value mirrored = arith::SubIOp::create(nb, nloc, last, t);
        Value src = arith::SelectOp::create(nb, nloc, inside, mirrored, t);
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(d == timeAxis
                               ? src
                               : linalg::IndexOp::create(nb, nloc, d).getResult());
        Value v = tensor::ExtractOp::create(nb, nloc, x, coords);
        linalg::YieldOp::create(nb, nloc, v);
      });
  return Results{generic.getResult(0)};
}

/// MaxPool, float, Y only: the input padded with -inf (pads, auto_pad, and
/// for ceil_mode the tail the last window reaches past), then one
/// linalg.generic over (n, c, o..., k...) taking the maximum of
/// x[n, c, o*stride + k*dilation]; the kernel loops get their extent from
/// an unused kernel-shaped operand (as upstream's pooling ops do).
/// GlobalMaxPool and GlobalAveragePool are the same with one window over
/// all spatial dimensions.
/// AveragePool: padded with zeros, the generic sums the window, then a
/// second divides by the window's count of positions, known at compile
/// time (inside the input, or with count_include_pad inside the input and
/// its explicit pads, as ONNX Runtime counts them; never the tail ceil_mode
/// adds).
FailureOr<Results> FunctionLowering::lowerPool(onnx::NodeOp op, bool average) {
  Location loc = op.getLoc();
  Value x = op.getInputs()[0];
  Type elemType = elementTypeOf(x);
  if (!isa<FloatType>(elemType))
    return error(op) << "only float inputs are supported, not " << elemType;
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size(), sp = rank - 2;
  // GlobalMaxPool / GlobalAveragePool: one window over every spatial
  // dimension (their attributes do not exist, so the defaults below hold).
  bool global = op.getOpType().starts_with("Global");
  SmallVector<int64_t> kernel =
      global && rank >= 3 ? SmallVector<int64_t>(xs.drop_front(2))
                          : intsAttr(op, "kernel_shape");
  if (rank < 3 || (int64_t)kernel.size() != sp)
    return error(op) << "the input must be [N, C, spatial...] and "
                        "kernel_shape give one size per spatial dimension";
  if (!average && intAttr(op, "storage_order", 0) != 0)
    return error(op) << "storage_order 1 is not supported";
  bool includePad = average && intAttr(op, "count_include_pad", 0) != 0;
  SmallVector<int64_t> strides = intsAttr(op, "strides", SmallVector<int64_t>(sp, 1));
  SmallVector<int64_t> dil = intsAttr(op, "dilations", SmallVector<int64_t>(sp, 1));
  SmallVector<int64_t> pads = intsAttr(op, "pads", SmallVector<int64_t>(2 * sp, 0));
  if ((int64_t)strides.size() != sp || (int64_t)dil.size() != sp ||
      (int64_t)pads.size() != 2 * sp)
    return error(op) << "strides/dilations/pads do not match the rank";
  bool ceil = intAttr(op, "ceil_mode", 0) != 0;
  StringRef autoPad = strAttr(op, "auto_pad", "NOTSET");
  Shape outShape = {xs[0], xs[1]};
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  Shape paddedShape(xs);
  for (int64_t i = 0; i < sp; ++i) {
    int64_t in = xs[2 + i];
    auto out = slidingWindow(op, autoPad, in, kernel[i], strides[i], dil[i],
                             ceil, pads[i], pads[i + sp]);
    if (failed(out))
      return failure();
    outShape.push_back(*out);
    low[2 + i] = pads[i];
    // Room for the last window (ceil_mode can reach past the end padding).
    int64_t needed = (*out - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1;
    high[2 + i] = std::max(pads[i + sp], needed - in - pads[i]);
    paddedShape[2 + i] = in + low[2 + i] + high[2 + i];
  }
  Value lowest =
      average ? createScalar(b, loc, elemType, 0)
              : arith::ConstantOp::create(
                    b, loc,
                    b.getFloatAttr(elemType,
                                   APFloat::getInf(cast<FloatType>(elemType)
                                                       .getFloatSemantics(),
                                                   /*Negative=*/true)));
  Value xp = x;
  if (llvm::any_of(low, [](int64_t v) { return v; }) ||
      llvm::any_of(high, [](int64_t v) { return v; }))
    xp = tensor::PadOp::create(b, loc,
                               RankedTensorType::get(paddedShape, elemType), x,
                               getAsIndexOpFoldResult(ctx, low),
                               getAsIndexOpFoldResult(ctx, high), lowest)
             .getResult();
  int64_t loops = 2 + 2 * sp; // n, c, o..., k...
  SmallVector<AffineExpr> xExprs = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)},
                          kExprs, oExprs = xExprs;
  for (int64_t i = 0; i < sp; ++i) {
    AffineExpr o = b.getAffineDimExpr(2 + i), k = b.getAffineDimExpr(2 + sp + i);
    xExprs.push_back(o * strides[i] + k * dil[i]);
    kExprs.push_back(k);
    oExprs.push_back(o);
  }
  Value window = empty(loc, kernel, elemType);
  Value init = filled(loc, outShape, elemType, lowest);
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xExprs, ctx),
                                 AffineMap::get(loops, 0, kExprs, ctx),
                                 AffineMap::get(loops, 0, oExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(2 + sp, utils::IteratorType::parallel);
  iterators.append(sp, utils::IteratorType::reduction);
  if (average) {
    // The window sums, then each divided by its count. The count is known
    // at compile time, per spatial dimension: how many of the window's
    // positions along it fall inside the input (and, with
    // count_include_pad, its explicit pads); a window's count is their
    // product (one small constant per dimension, read at the output
    // position). One result per generic: IREE's vectorizer does not take
    // a reduction with two.
    auto pool = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{xp, window},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          linalg::YieldOp::create(
              nb, nloc,
              arith::AddFOp::create(nb, nloc, args[2], args[0]).getResult());
        });
    AffineMap id = AffineMap::getMultiDimIdentityMap(outShape.size(), ctx);
    SmallVector<Value> inputs = {pool.getResult(0)};
    SmallVector<AffineMap> divMaps = {id};
    const auto &semantics = cast<FloatType>(elemType).getFloatSemantics();
    for (int64_t i = 0; i < sp; ++i) {
      int64_t lo = includePad ? 0 : pads[i];
      int64_t hi = includePad ? xs[2 + i] + pads[i] + pads[i + sp]
                              : pads[i] + xs[2 + i];
      SmallVector<APFloat> counts;
      for (int64_t o = 0; o < outShape[2 + i]; ++o) {
        int64_t n = 0;
        for (int64_t k = 0; k < kernel[i]; ++k) {
          int64_t pos = o * strides[i] + k * dil[i];
          n += pos >= lo && pos < hi;
        }
        APFloat c(static_cast<double>(n));
        bool lost;
        c.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
        counts.push_back(c);
      }
      auto countType = RankedTensorType::get({outShape[2 + i]}, elemType);
      inputs.push_back(arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(countType, counts)));
      divMaps.push_back(AffineMap::get(outShape.size(), 0,
                                       b.getAffineDimExpr(2 + i), ctx));
    }
    divMaps.push_back(id);
    Value out = empty(loc, outShape, elemType);
    auto div = linalg::GenericOp::create(
        b, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, divMaps,
        SmallVector<utils::IteratorType>(outShape.size(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value count = args[1];
          for (int64_t i = 1; i < sp; ++i)
            count = arith::MulFOp::create(nb, nloc, count, args[1 + i]);
          linalg::YieldOp::create(
              nb, nloc,
              arith::DivFOp::create(nb, nloc, args[0], count).getResult());
        });
    return Results{div.getResult(0)};
  }
  auto pool = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{xp, window},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // maxnumf: a NaN input loses to a number, as in ONNX Runtime's
        // comparison-based max over the window.
        linalg::YieldOp::create(
            nb, nloc,
            arith::MaxNumFOp::create(nb, nloc, args[0], args[2]).getResult());
      });
  return Results{pool.getResult(0)};
}

/// Range: the CPU backend needs its length at compile time, so start, limit
/// and delta must be constants; the values are computed here as ONNX
/// Runtime computes them (integers exactly, floats by repeated addition of
/// delta from start), and the result is a constant.
FailureOr<Results> FunctionLowering::lowerRange(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  Type elemType = elementTypeOf(ins[0]);
  if (!type || !type.hasStaticShape() || type.getRank() != 1)
    return error(op) << "the result's length must be known at compile time";
  int64_t n = type.getDimSize(0);
  if (n > kMaxRangeElements)
    return error(op) << "a range of " << n << " elements is above "
                     << kMaxRangeElements;
  if (isSignlessInt(elemType)) {
    auto start = onnx::getConstantInts(ins[0]);
    auto delta = onnx::getConstantInts(ins[2]);
    if (!start || !delta || start->size() != 1 || delta->size() != 1)
      return error(op) << "start and delta must be constants";
    SmallVector<int64_t> values;
    int64_t v = (*start)[0];
    for (int64_t i = 0; i < n; ++i, v = int64_t(uint64_t(v) + uint64_t((*delta)[0])))
      values.push_back(v);
    return Results{createIntTensor(b, loc, type, values)};
  }
  if (!elemType.isF32())
    return error(op) << "only integer and f32 ranges are supported, not "
                     << elemType;
  auto start = onnx::getConstantF32(ins[0]);
  auto delta = onnx::getConstantF32(ins[2]);
  if (!start || !delta || start->numElements() != 1 ||
      delta->numElements() != 1)
    return error(op) << "start and delta must be constants";
  SmallVector<float> values;
  float v = start->values[0];
  for (int64_t i = 0; i < n; ++i, v += delta->values[0])
    values.push_back(v);
  return Results{arith::ConstantOp::create(
                     b, loc, DenseElementsAttr::get(type, ArrayRef(values)))
                     .getResult()};
}

FailureOr<Results> FunctionLowering::lowerDropout(onnx::NodeOp op) {
  auto ins = op.getInputs();
  // training_mode (opset 12+, input 2) must be absent or a constant false:
  // a model run for inference never drops.
  if (ins.size() == 3 && !isa<NoneType>(ins[2].getType())) {
    auto mode = onnx::getConstantInts(ins[2]);
    if (!mode || mode->size() != 1 || (*mode)[0] != 0)
      return error(op) << "training_mode must be a constant false (the CPU "
                          "backend runs inference)";
  }
  if (auto attrs = op.getAttrs())
    if (auto t = attrs->getAs<IntegerAttr>("is_test"); t && t.getInt() == 0)
      return error(op) << "is_test = 0 (training) is not supported";
  Results out{ins[0]};
  if (op->getNumResults() > 1) {
    auto maskType = RankedTensorType::get(shapeOf(ins[0]), b.getI1Type());
    out.push_back(arith::ConstantOp::create(
                      b, op.getLoc(),
                      DenseElementsAttr::get(maskType,
                                             b.getIntegerAttr(maskType.getElementType(), 1)))
                      .getResult());
  }
  return out;
}

LogicalResult FunctionLowering::checkScatter(onnx::NodeOp op,
                                             StringRef reduction,
                                             Type elemType, Value indices) {
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min")
    return error(op) << "reduction '" << reduction << "' is not supported";
  if (reduction != "none" && failed(requireArithmetic(op, elemType)))
    return failure();
  if (!isa<IntegerType>(elementTypeOf(indices)))
    return error(op) << "indices must be integers";
  return success();
}

FailureOr<Results> FunctionLowering::lowerScatterElements(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value data = ins[0], indices = ins[1], updates = ins[2];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices),
                    us = shapeOf(updates);
  int64_t rank = ds.size();
  Type elemType = elementTypeOf(data);
  StringRef reduction = strAttr(op, "reduction", "none");
  bool isFloat = isa<FloatType>(elemType);
  if (failed(checkScatter(op, reduction, elemType, indices)))
    return failure();
  if (elementTypeOf(updates) != elemType)
    return error(op) << "updates must have the data's element type";
  if (rank < 1 || (int64_t)is.size() != rank || Shape(is) != Shape(us))
    return error(op) << "indices and updates must have one shape, of the "
                        "data's rank (" << rank << ")";
  auto axis = onnx::normalizeAxis(intAttr(op, "axis", 0), rank);
  if (!axis)
    return error(op) << "axis " << intAttr(op, "axis", 0)
                     << " is out of range for rank " << rank;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return error(op) << "indices dimension " << d << " (" << is[d]
                       << ") is larger than the data's (" << ds[d] << ")";
  int64_t n = getNumElements(is);
  if (n == 0 || ds[*axis] == 0)
    return Results{data};
  if (n > (int64_t(1) << 24))
    return error(op) << n << " indices (at most 2^24)";
  // One element at a time, in index order (so that with reduction none a
  // later duplicate wins, as ONNX Runtime's loop does).
  auto c = [&](OpBuilder &nb, Location nloc, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, nloc, v);
  };
  auto loop = scf::ForOp::create(
      b, loc, c(b, loc, 0), c(b, loc, n), c(b, loc, 1), ValueRange{data},
      [&](OpBuilder &nb, Location nloc, Value t, ValueRange iter) {
        // t's coordinates in indices' shape, row-major.
        SmallVector<Value> at(rank);
        Value rest = t;
        for (int64_t d = rank - 1; d >= 0; --d) {
          Value dim = c(nb, nloc, is[d]);
          at[d] = arith::RemUIOp::create(nb, nloc, rest, dim);
          rest = arith::DivUIOp::create(nb, nloc, rest, dim);
        }
        Value raw = tensor::ExtractOp::create(nb, nloc, indices, at);
        Value upd = tensor::ExtractOp::create(nb, nloc, updates, at);
        SmallVector<Value> dst(at);
        dst[*axis] = normalizedIndex(nb, nloc, raw, ds[*axis]);
        if (reduction != "none") {
          Value cur = tensor::ExtractOp::create(nb, nloc, iter[0], dst);
          upd = combineScalars(nb, nloc, reduction, isFloat, cur, upd);
        }
        Value next = tensor::InsertOp::create(nb, nloc, upd, iter[0], dst);
        scf::YieldOp::create(nb, nloc, next);
      });
  return Results{loop.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerGatherElements(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value data = op.getInputs()[0], indices = op.getInputs()[1];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t rank = ds.size();
  if (rank < 1 || (int64_t)is.size() != rank)
    return error(op) << "indices must have the data's rank (" << rank
                     << "), not " << is.size();
  auto axis = onnx::normalizeAxis(intAttr(op, "axis", 0), rank);
  if (!axis)
    return error(op) << "axis " << intAttr(op, "axis", 0)
                     << " is out of range for rank " << rank;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return error(op) << "indices dimension " << d << " (" << is[d]
                       << ") is larger than the data's (" << ds[d] << ")";
  if (!isa<IntegerType>(elementTypeOf(indices)))
    return error(op) << "indices must be integers";
  Type elemType = elementTypeOf(data);
  if (getNumElements(is) == 0 || ds[*axis] == 0)
    return Results{empty(loc, is, elemType)};
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value init = empty(loc, is, elemType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{indices}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(
              d == *axis ? normalizedIndex(nb, nloc, args[0], ds[d])
                         : linalg::IndexOp::create(nb, nloc, d).getResult());
        linalg::YieldOp::create(
            nb, nloc, tensor::ExtractOp::create(nb, nloc, data, coords).getResult());
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerScatterND(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value data = ins[0], indices = ins[1], updates = ins[2];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices),
                    us = shapeOf(updates);
  int64_t r = ds.size(), q = is.size();
  Type elemType = elementTypeOf(data);
  StringRef reduction = strAttr(op, "reduction", "none");
  bool isFloat = isa<FloatType>(elemType);
  if (failed(checkScatter(op, reduction, elemType, indices)))
    return failure();
  if (r < 1 || q < 1 || is[q - 1] < 1 || is[q - 1] > r)
    return error(op) << "indices' last dimension must be in [1, " << r
                     << "] (the data's rank)";
  int64_t k = is[q - 1];
  // updates' shape = indices.shape[:-1] + data.shape[k:].
  Shape want(is.begin(), is.end() - 1);
  want.append(ds.begin() + k, ds.end());
  if (Shape(us) != want)
    return error(op) << "updates must have the shape indices[:-1] + data[k:]";
  int64_t n = getNumElements(ArrayRef<int64_t>(is).drop_back());
  if (n == 0)
    return Results{data};
  if (n > (int64_t(1) << 24))
    return error(op) << n << " index tuples (at most 2^24)";
  // indices as [n, k], updates as [n, data[k:]...].
  Shape rest(ds.begin() + k, ds.end());
  Value idx2 = reshape(loc, indices, {n, k});
  Shape u2 = {n};
  u2.append(rest.begin(), rest.end());
  Value upd2 = reshape(loc, updates, u2);
  Type idxType = b.getIndexType();
  auto c = [&](OpBuilder &nb, Location nloc, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, nloc, v);
  };
  auto loop = scf::ForOp::create(
      b, loc, c(b, loc, 0), c(b, loc, n), c(b, loc, 1), ValueRange{data},
      [&](OpBuilder &nb, Location nloc, Value t, ValueRange iter) {
        SmallVector<OpFoldResult> offsets, sizes, strides(r, nb.getIndexAttr(1));
        for (int64_t j = 0; j < k; ++j) {
          Value raw = tensor::ExtractOp::create(nb, nloc, idx2,
                                                ValueRange{t, c(nb, nloc, j)});
          offsets.push_back(normalizedIndex(nb, nloc, raw, ds[j]));
          sizes.push_back(nb.getIndexAttr(1));
        }
        for (int64_t d = k; d < r; ++d) {
          offsets.push_back(nb.getIndexAttr(0));
          sizes.push_back(nb.getIndexAttr(ds[d]));
        }
        // The update (rank r - k) of tuple t.
        SmallVector<OpFoldResult> uOff(u2.size(), nb.getIndexAttr(0)), uSizes,
            uStrides(u2.size(), nb.getIndexAttr(1));
        uOff[0] = t;
        uSizes.push_back(nb.getIndexAttr(1));
        for (int64_t v : rest)
          uSizes.push_back(nb.getIndexAttr(v));
        auto restType = RankedTensorType::get(rest, elemType);
        Value u = tensor::ExtractSliceOp::create(nb, nloc, restType, upd2, uOff,
                                                 uSizes, uStrides);
        if (reduction != "none") {
          Value cur = tensor::ExtractSliceOp::create(nb, nloc, restType, iter[0],
                                                     offsets, sizes, strides);
          int64_t rr = rest.size();
          SmallVector<AffineMap> maps(3, nb.getMultiDimIdentityMap(rr));
          SmallVector<utils::IteratorType> its(rr, utils::IteratorType::parallel);
          Value out = tensor::EmptyOp::create(nb, nloc, rest, elemType);
          u = linalg::GenericOp::create(
                  nb, nloc, TypeRange{restType}, ValueRange{cur, u},
                  ValueRange{out}, maps, its,
                  [&](OpBuilder &bb, Location bl, ValueRange a) {
                    linalg::YieldOp::create(
                        bb, bl,
                        combineScalars(bb, bl, reduction, isFloat, a[0], a[1]));
                  })
                  .getResult(0);
        }
        Value next = tensor::InsertSliceOp::create(nb, nloc, u, iter[0], offsets,
                                                   sizes, strides);
        scf::YieldOp::create(nb, nloc, next);
      });
  (void)idxType;
  return Results{loop.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerEinsum(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Type elemType = elementTypeOf(ins[0]);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  for (Value v : ins)
    if (elementTypeOf(v) != elemType)
      return error(op) << "the inputs' element types differ";
  std::string eq;
  for (char ch : strAttr(op, "equation", ""))
    if (ch != ' ')
      eq.push_back(ch);
  if (eq.find("...") != std::string::npos)
    return error(op) << "an equation with an ellipsis ('...') is not supported";
  StringRef lhs = eq, out;
  bool explicitOut = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = StringRef(eq).take_front(arrow);
    out = StringRef(eq).drop_front(arrow + 2);
    explicitOut = true;
  }
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ins.size())
    return error(op) << "the equation '" << eq << "' has " << terms.size()
                     << " operands, the node " << ins.size();
  // Every letter a loop dimension: its size from the operands (equal
  // wherever it appears), the output's letters first.
  llvm::MapVector<char, int64_t> sizes;
  llvm::DenseMap<char, int> count;
  for (auto [term, v] : llvm::zip(terms, ins)) {
    ArrayRef<int64_t> shape = shapeOf(v);
    if (term.size() != shape.size())
      return error(op) << "term '" << term << "' has " << term.size()
                       << " letters for an operand of rank " << shape.size();
    for (auto [ch, dim] : llvm::zip(term, shape)) {
      if (!llvm::isAlpha(ch))
        return error(op) << "'" << ch << "' in the equation is not a letter";
      auto [it, inserted] = sizes.insert({ch, dim});
      if (!inserted && it->second != dim)
        return error(op) << "letter '" << ch << "' has sizes " << it->second
                         << " and " << dim;
      ++count[ch];
    }
  }
  std::string outLetters;
  if (explicitOut) {
    outLetters = out.str();
  } else {
    for (auto &[ch, n] : sizes)
      if (count[ch] == 1)
        outLetters.push_back(ch);
    llvm::sort(outLetters);
  }
  llvm::DenseMap<char, unsigned> dimOf;
  Shape outShape;
  for (char ch : outLetters) {
    if (!sizes.count(ch) || dimOf.count(ch))
      return error(op) << "output letter '" << ch
                       << "' is repeated or in no input";
    dimOf[ch] = dimOf.size();
    outShape.push_back(sizes.lookup(ch));
  }
  if (!checkedNumElements(outShape))
    return error(op) << "the output is too large";
  unsigned numLoops = dimOf.size();
  for (auto &[ch, n] : sizes)
    if (!dimOf.count(ch))
      dimOf[ch] = numLoops++;
  SmallVector<AffineMap> maps;
  for (StringRef term : terms) {
    SmallVector<AffineExpr> exprs;
    for (char ch : term)
      exprs.push_back(b.getAffineDimExpr(dimOf[ch]));
    maps.push_back(AffineMap::get(numLoops, 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outExprs;
  for (unsigned d = 0; d < outShape.size(); ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  for (unsigned d = 0; d < outShape.size(); ++d)
    iterators[d] = utils::IteratorType::parallel;
  bool isFloat = isa<FloatType>(elemType);
  Value init = filled(loc, outShape, elemType, createScalar(b, loc, elemType, 0));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange(ins), ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value prod = a[0];
        for (size_t i = 1; i < ins.size(); ++i)
          prod = isFloat ? (Value)arith::MulFOp::create(nb, nloc, prod, a[i])
                         : (Value)arith::MulIOp::create(nb, nloc, prod, a[i]);
        Value acc = a[ins.size()];
        Value sum = isFloat ? (Value)arith::AddFOp::create(nb, nloc, acc, prod)
                            : (Value)arith::AddIOp::create(nb, nloc, acc, prod);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerConvTranspose(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value x = ins[0], w = ins[1];
  Value bias = ins.size() > 2 && !isa<NoneType>(ins[2].getType()) ? ins[2] : Value();
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType, /*floatOnly=*/true)))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  int64_t rank = xs.size(), sp = rank - 2;
  if (rank < 3 || (int64_t)ws.size() != rank)
    return error(op) << "input and weight must be [N, C, spatial...] and "
                        "[C, M/group, kernel...] of the same rank";
  int64_t group = intAttr(op, "group", 1);
  int64_t N = xs[0], C = xs[1], Mg = ws[1];
  if (group < 1 || C % group || ws[0] != C)
    return error(op) << "channels " << C << " (weight " << ws[0] << "x" << Mg
                     << ") do not split into " << group << " groups";
  int64_t Cg = C / group, M = Mg * group;
  if (bias && (shapeOf(bias).size() != 1 || shapeOf(bias)[0] != M))
    return error(op) << "the bias is not [M]";
  SmallVector<int64_t> kernel(ws.begin() + 2, ws.end());
  SmallVector<int64_t> strides = intsAttr(op, "strides", SmallVector<int64_t>(sp, 1));
  SmallVector<int64_t> dil = intsAttr(op, "dilations", SmallVector<int64_t>(sp, 1));
  SmallVector<int64_t> pads = intsAttr(op, "pads", SmallVector<int64_t>(2 * sp, 0));
  SmallVector<int64_t> outPad =
      intsAttr(op, "output_padding", SmallVector<int64_t>(sp, 0));
  if (auto ks = intsAttr(op, "kernel_shape"); !ks.empty() && ks != kernel)
    return error(op) << "kernel_shape disagrees with the weight";
  if ((int64_t)strides.size() != sp || (int64_t)dil.size() != sp ||
      (int64_t)pads.size() != 2 * sp || (int64_t)outPad.size() != sp)
    return error(op)
           << "strides/dilations/pads/output_padding do not match the rank";
  StringRef autoPad = strAttr(op, "auto_pad", "NOTSET");
  if (!intsAttr(op, "output_shape").empty() ||
      (autoPad != "NOTSET" && autoPad != "VALID"))
    return error(op) << "output_shape and auto_pad SAME_* are not supported; "
                        "give explicit pads";
  if (autoPad == "VALID")
    pads.assign(2 * sp, 0);
  constexpr int64_t kMax = int64_t(1) << 20;
  Shape outShape = {N, M};
  for (int64_t i = 0; i < sp; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1 || kernel[i] > kMax ||
        strides[i] > kMax || dil[i] > kMax || pads[i] < 0 || pads[i + sp] < 0 ||
        pads[i] > kMax || pads[i + sp] > kMax || outPad[i] < 0 ||
        outPad[i] >= std::max(strides[i], dil[i]))
      return error(op) << "kernel sizes, strides and dilations must be in [1, "
                          "2^20], pads in [0, 2^20], output_padding below the "
                          "stride or dilation";
    int64_t o = strides[i] * (xs[2 + i] - 1) + outPad[i] +
                (kernel[i] - 1) * dil[i] + 1 - pads[i] - pads[i + sp];
    if (o < 1 || o > kMax * 16)
      return error(op) << "the output's spatial dimension " << i << " would be "
                       << o;
    outShape.push_back(o);
  }
  if (!checkedNumElements(outShape))
    return error(op) << "the output is too large";
  // out[n, mo, o...] = bias[mo] + sum over (c, k...) of
  //   x[n, g*Cg + c, i...] * w[g*Cg + c, mo mod Mg, k...], g = mo / Mg,
  // where o + pad - k*dil = i*stride with 0 <= i < in (else no term).
  // Loops (n, mo, o..., c, k...); the (c, k...) extents from an unused
  // [Cg, k...] operand.
  int64_t loops = rank + 1 + sp;
  Shape extent = {Cg};
  extent.append(kernel.begin(), kernel.end());
  SmallVector<AffineExpr> extentExprs;
  for (int64_t d = rank; d < loops; ++d)
    extentExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {
      AffineMap::get(loops, 0, extentExprs, ctx),
      AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.append(1 + sp, utils::IteratorType::reduction);
  Value init = convInit(loc, bias, outShape, 1, elemType);
  Value extentT = empty(loc, extent, elemType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{extentT}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange a) {
        auto c = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nloc, v);
        };
        auto idx = [&](int64_t d) -> Value {
          return linalg::IndexOp::create(nb, nloc, d);
        };
        Value mo = idx(1), ch = idx(rank);
        Value g = arith::DivUIOp::create(nb, nloc, mo, c(Mg));
        Value m = arith::RemUIOp::create(nb, nloc, mo, c(Mg));
        Value ci = arith::AddIOp::create(
            nb, nloc, arith::MulIOp::create(nb, nloc, g, c(Cg)), ch);
        Value valid = arith::ConstantIntOp::create(nb, nloc, 1, 1);
        SmallVector<Value> xCoords = {idx(0), ci}, wCoords = {ci, m};
        for (int64_t i = 0; i < sp; ++i) {
          Value k = idx(rank + 1 + i);
          // t = o + pad - k*dil, in signed index arithmetic.
          Value t = arith::SubIOp::create(
              nb, nloc, arith::AddIOp::create(nb, nloc, idx(2 + i), c(pads[i])),
              arith::MulIOp::create(nb, nloc, k, c(dil[i])));
          Value q = arith::DivSIOp::create(nb, nloc, t, c(strides[i]));
          Value exact = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::eq,
              arith::RemSIOp::create(nb, nloc, t, c(strides[i])), c(0));
          Value inside = arith::AndIOp::create(
              nb, nloc,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, t, c(0)),
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, q,
                                    c(xs[2 + i])));
          valid = arith::AndIOp::create(
              nb, nloc, valid, arith::AndIOp::create(nb, nloc, exact, inside));
          // A clamped position, read only to be discarded when not valid.
          q = arith::MaxSIOp::create(nb, nloc, q, c(0));
          q = arith::MinSIOp::create(nb, nloc, q, c(xs[2 + i] - 1));
          xCoords.push_back(q);
          wCoords.push_back(k);
        }
        Value xv = tensor::ExtractOp::create(nb, nloc, x, xCoords);
        Value wv = tensor::ExtractOp::create(nb, nloc, w, wCoords);
        Value prod = arith::MulFOp::create(nb, nloc, xv, wv);
        Value term = arith::SelectOp::create(nb, nloc, valid, prod,
                                             createScalar(nb, nloc, elemType, 0));
        linalg::YieldOp::create(nb, nloc,
                                arith::AddFOp::create(nb, nloc, a[1], term).getResult());
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerResize(onnx::NodeOp op) {
  Location loc = op.getLoc();
  auto ins = op.getInputs();
  Value x = ins[0];
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType, /*floatOnly=*/true)))
    return failure();
  auto fail = [&]() { return error(op); };
  if (elemType.getIntOrFloatBitWidth() > 32)
    return fail() << "Resize of " << elemType << " is not supported";
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  StringRef mode = strAttr(op, "mode", "nearest");
  // Opset 10: (X, scales) and asymmetric coordinates; from 11: (X, roi,
  // scales, sizes).
  bool v10 = opset < 11;
  StringRef coordMode =
      v10 ? "asymmetric" : strAttr(op, "coordinate_transformation_mode", "half_pixel");
  StringRef nearestMode = v10 ? "floor" : strAttr(op, "nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    return fail() << "mode '" << mode << "' is not supported (nearest, linear)";
  if (coordMode != "half_pixel" && coordMode != "asymmetric" &&
      coordMode != "align_corners" && coordMode != "pytorch_half_pixel" &&
      coordMode != "half_pixel_symmetric")
    return fail() << "coordinate_transformation_mode '" << coordMode
                  << "' is not supported";
  if (nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" &&
      nearestMode != "floor" && nearestMode != "ceil")
    return fail() << "nearest_mode '" << nearestMode << "' is not supported";
  if (intAttr(op, "antialias", 0) != 0 || intAttr(op, "exclude_outside", 0) != 0 ||
      !intsAttr(op, "axes").empty() ||
      strAttr(op, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return fail() << "antialias, exclude_outside, axes and "
                     "keep_aspect_ratio_policy are not supported";
  Value scalesV = v10 ? ins[1] : (ins.size() > 2 ? ins[2] : Value());
  Value sizesV = !v10 && ins.size() > 3 ? ins[3] : Value();
  auto present = [](Value v) {
    if (!v || isa<NoneType>(v.getType()))
      return false;
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getNumElements() > 0;
  };
  SmallVector<double> scales;
  Shape outShape;
  if (present(sizesV)) {
    auto sz = constantInts(op, sizesV, "sizes");
    if (failed(sz))
      return failure();
    if ((int64_t)sz->size() != rank)
      return fail() << "sizes has " << sz->size() << " values for rank " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      if ((*sz)[d] < 1 || (*sz)[d] > (int64_t(1) << 24) || in[d] < 1)
        return fail() << "sizes[" << d << "] = " << (*sz)[d]
                      << " is not in [1, 2^24]";
      outShape.push_back((*sz)[d]);
      scales.push_back(double(float((*sz)[d]) / float(in[d])));
    }
  } else if (present(scalesV)) {
    auto sc = onnx::getConstantF32(scalesV);
    if (!sc)
      return fail() << "scales must be a compile-time constant";
    if ((int64_t)sc->values.size() != rank)
      return fail() << "scales has " << sc->values.size() << " values for rank "
                    << rank;
    for (int64_t d = 0; d < rank; ++d) {
      float f = sc->values[d];
      double o = std::floor(double(in[d]) * double(f));
      if (!(f > 0) || !(o >= 1) || o > double(int64_t(1) << 24))
        return fail() << "scales[" << d << "] = " << f
                      << " gives an empty or too large dimension";
      outShape.push_back((int64_t)o);
      scales.push_back(double(f));
    }
  } else {
    return fail() << "neither scales nor sizes is given";
  }
  if (!checkedNumElements(outShape))
    return fail() << "the output is too large";
  // The resized axes; the others are read at the output's index.
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (outShape[d] != in[d] || scales[d] != 1.0)
      axes.push_back(d);
  if (mode == "linear" && axes.size() > 3)
    return fail() << "linear resize over " << axes.size()
                  << " axes (at most 3)";
  Value init = empty(loc, outShape, elemType);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange) {
        Type f32 = nb.getF32Type();
        auto cf = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(float(v)));
        };
        auto ci = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nloc, v);
        };
        auto toIndex = [&](Value f) -> Value {
          Value i = arith::FPToSIOp::create(nb, nloc, nb.getI64Type(), f);
          return arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), i);
        };
        auto clampIdx = [&](Value i, int64_t dim) -> Value {
          i = arith::MaxSIOp::create(nb, nloc, i, ci(0));
          return arith::MinSIOp::create(nb, nloc, i, ci(dim - 1));
        };
        SmallVector<Value> base;
        for (int64_t d = 0; d < rank; ++d)
          base.push_back(linalg::IndexOp::create(nb, nloc, d));
        // The input coordinate (f32, as ONNX Runtime computes it) of
        // output index o along axis d.
        auto coordinate = [&](int64_t d) -> Value {
          Value o = arith::UIToFPOp::create(
              nb, nloc, f32,
              arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), base[d]));
          double s = scales[d];
          int64_t lin = in[d], lout = outShape[d];
          if (coordMode == "asymmetric")
            return arith::DivFOp::create(nb, nloc, o, cf(s));
          if (coordMode == "align_corners") {
            if (lout == 1)
              return cf(0);
            return arith::MulFOp::create(
                nb, nloc, o, cf(double(float(lin - 1) / float(lout - 1))));
          }
          Value half = arith::SubFOp::create(
              nb, nloc,
              arith::DivFOp::create(nb, nloc,
                                    arith::AddFOp::create(nb, nloc, o, cf(0.5)),
                                    cf(s)),
              cf(0.5));
          if (coordMode == "pytorch_half_pixel")
            return lout > 1 ? half : cf(0);
          if (coordMode == "half_pixel_symmetric") {
            double adj = double(lout) / (s * double(lin));
            double center = double(lin) / 2 * (1 - adj);
            return arith::AddFOp::create(nb, nloc, half, cf(center));
          }
          return half; // half_pixel
        };
        if (mode == "nearest") {
          SmallVector<Value> coords(base);
          for (int64_t d : axes) {
            Value c = coordinate(d);
            Value r;
            if (nearestMode == "floor") {
              r = math::FloorOp::create(nb, nloc, c);
            } else if (nearestMode == "ceil") {
              r = math::CeilOp::create(nb, nloc, c);
            } else {
              // Round half down (prefer floor) or up (prefer ceil).
              Value fl = math::FloorOp::create(nb, nloc, c);
              Value frac = arith::SubFOp::create(nb, nloc, c, fl);
              Value up = arith::CmpFOp::create(
                  nb, nloc,
                  nearestMode == "round_prefer_floor" ? arith::CmpFPredicate::OGT
                                                      : arith::CmpFPredicate::OGE,
                  frac, cf(0.5));
              r = arith::SelectOp::create(
                  nb, nloc, up, arith::AddFOp::create(nb, nloc, fl, cf(1)), fl);
            }
            coords[d] = clampIdx(toIndex(r), in[d]);
          }
          linalg::YieldOp::create(
              nb, nloc, tensor::ExtractOp::create(nb, nloc, x, coords).getResult());
          return;
        }
        // Linear: per resized axis the two neighbours and the weight of the
        // upper one, the coordinate clamped into [0, in - 1].
        SmallVector<Value> lo, hi, w;
        for (int64_t d : axes) {
          Value c = coordinate(d);
          c = arith::MaximumFOp::create(nb, nloc, c, cf(0));
          c = arith::MinimumFOp::create(nb, nloc, c, cf(double(in[d] - 1)));
          Value fl = math::FloorOp::create(nb, nloc, c);
          Value i0 = toIndex(fl);
          lo.push_back(i0);
          hi.push_back(arith::MinSIOp::create(
              nb, nloc, arith::AddIOp::create(nb, nloc, i0, ci(1)), ci(in[d] - 1)));
          w.push_back(arith::SubFOp::create(nb, nloc, c, fl));
        }
        Value sum = cf(0);
        for (unsigned corner = 0; corner < (1u << axes.size()); ++corner) {
          SmallVector<Value> coords(base);
          Value weight = cf(1);
          for (size_t a = 0; a < axes.size(); ++a) {
            bool upper = corner & (1u << a);
            coords[axes[a]] = upper ? hi[a] : lo[a];
            Value wa = upper ? w[a] : arith::SubFOp::create(nb, nloc, cf(1), w[a]);
            weight = arith::MulFOp::create(nb, nloc, weight, wa);
          }
          Value v = tensor::ExtractOp::create(nb, nloc, x, coords);
          if (v.getType() != f32)
            v = arith::ExtFOp::create(nb, nloc, f32, v);
          sum = arith::AddFOp::create(nb, nloc, sum,
                                      arith::MulFOp::create(nb, nloc, weight, v));
        }
        if (sum.getType() != elemType)
          sum = arith::TruncFOp::create(nb, nloc, elemType, sum);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return Results{generic.getResult(0)};
}

FailureOr<Results> FunctionLowering::lowerTopK(onnx::NodeOp op) {
  Location loc = op.getLoc();
  Value x = op.getInputs()[0];
  Type elemType = elementTypeOf(x);
  if (failed(requireArithmetic(op, elemType)))
    return failure();
  bool isFloat = isa<FloatType>(elemType);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  auto kVal = constantInt(op, op.getInputs()[1], "K");
  if (failed(kVal))
    return failure();
  auto axis = onnx::normalizeAxis(intAttr(op, "axis", -1), rank);
  if (!axis)
    return error(op) << "axis " << intAttr(op, "axis", -1)
                     << " is out of range for rank " << rank;
  int64_t n = in[*axis], K = *kVal;
  if (K < 0 || K > n)
    return error(op) << "K = " << K << " is not in [0, " << n << "]";
  if (n > (int64_t(1) << 16))
    return error(op) << "TopK over " << n
                     << " elements along its axis (at most 65536)";
  bool largest = intAttr(op, "largest", 1) != 0;
  Shape outShape(in);
  outShape[*axis] = K;
  Type i64 = b.getI64Type();
  if (K == 0)
    return Results{empty(loc, outShape, elemType), empty(loc, outShape, i64)};
  // 1. rank[.., j, ..] = #{i : x_i before x_j}: x_i strictly better, or
  // equal with i < j. Loops (dims..., i) with i a reduction.
  SmallVector<AffineExpr> otherExprs;
  for (int64_t d = 0; d < rank; ++d)
    otherExprs.push_back(d == *axis ? b.getAffineDimExpr(rank)
                                    : b.getAffineDimExpr(d));
  AffineMap idRank = AffineMap::getMultiDimIdentityMap(rank + 1, ctx)
                         .getMajorSubMap(rank);
  SmallVector<AffineMap> maps = {idRank, AffineMap::get(rank + 1, 0, otherExprs, ctx),
                                 idRank};
  SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
  its.push_back(utils::IteratorType::reduction);
  Value ranks = filled(loc, in, i64, createScalar(b, loc, i64, 0));
  ranks = linalg::GenericOp::create(
              b, loc, TypeRange{ranks.getType()}, ValueRange{x, x},
              ValueRange{ranks}, maps, its,
              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                Value xj = a[0], xi = a[1];
                Value better, equal;
                if (isFloat) {
                  better = arith::CmpFOp::create(
                      nb, nloc,
                      largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                      xi, xj);
                  equal = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                                xi, xj);
                } else {
                  better = arith::CmpIOp::create(
                      nb, nloc,
                      largest ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt,
                      xi, xj);
                  equal = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                                xi, xj);
                }
                Value earlier = arith::CmpIOp::create(
                    nb, nloc, arith::CmpIPredicate::ult,
                    linalg::IndexOp::create(nb, nloc, rank),
                    linalg::IndexOp::create(nb, nloc, *axis));
                Value before = arith::OrIOp::create(
                    nb, nloc, better, arith::AndIOp::create(nb, nloc, equal, earlier));
                Value one = arith::ExtUIOp::create(nb, nloc, nb.getI64Type(), before);
                linalg::YieldOp::create(nb, nloc,
                                        arith::AddIOp::create(nb, nloc, a[2], one)
                                            .getResult());
              })
              .getResult(0);
  // 2. out[.., k, ..] = the element j whose rank is k (exactly one for each
  // k < n): loops (dims with the axis as k..., j) with j a reduction.
  Value values = filled(loc, outShape, elemType, createScalar(b, loc, elemType, 0));
  Value indices = filled(loc, outShape, i64, createScalar(b, loc, i64, 0));
  SmallVector<AffineMap> pick = {AffineMap::get(rank + 1, 0, otherExprs, ctx),
                                 AffineMap::get(rank + 1, 0, otherExprs, ctx),
                                 idRank, idRank};
  auto gather = linalg::GenericOp::create(
      b, loc, TypeRange{values.getType(), indices.getType()}, ValueRange{x, ranks},
      ValueRange{values, indices}, pick, its,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value k = arith::IndexCastOp::create(
            nb, nloc, nb.getI64Type(), linalg::IndexOp::create(nb, nloc, *axis));
        Value j = arith::IndexCastOp::create(
            nb, nloc, nb.getI64Type(), linalg::IndexOp::create(nb, nloc, rank));
        Value hit = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, a[1], k);
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{arith::SelectOp::create(nb, nloc, hit, a[0], a[2]),
                       arith::SelectOp::create(nb, nloc, hit, j, a[3])});
      });
  return Results{gather.getResult(0), gather.getResult(1)};
}

FailureOr<Results> FunctionLowering::lowerResults(Operation *op) {
  // The elementwise families, by their trait: one linalg.generic each, the
  // scalar formula chosen by the op type.
  if (op->hasTrait<onnx::traits::ElementwiseBroadcast>())
    return lowerBinary(op);
  if (op->hasTrait<onnx::traits::ElementwiseUnary>())
    return lowerUnary(op, opTypeOf(op));
  return llvm::TypeSwitch<Operation *, FailureOr<Results>>(op)
      .Case([&](onnx::ReshapeOp r) {
        return lowerReshapeByRule(r, r.getData(), r.getShape(), std::nullopt,
                                  "shape");
      })
      .Case([&](onnx::SqueezeOp sq) {
        return lowerReshapeByRule(sq, sq.getData(), sq.getAxes(),
                                  sq.getAxesAttr(), "axes");
      })
      .Case([&](onnx::UnsqueezeOp uq) {
        return lowerReshapeByRule(uq, uq.getData(), uq.getAxes(),
                                  uq.getAxesAttr(), "axes");
      })
      .Case<onnx::InitializerOp, onnx::ConstantOp, onnx::ConstantOfShapeOp,
            onnx::ShapeOp, onnx::CastOp, onnx::TransposeOp, onnx::SliceOp, onnx::ConcatOp,
            onnx::SplitOp, onnx::GatherOp, onnx::ExpandOp, onnx::MatMulOp,
            onnx::GemmOp, onnx::ClipOp>(
          [&](auto typed) { return lower(typed); })
      .Case([&](onnx::IdentityOp id) { return Results{id.getInput()}; })
      .Case([&](onnx::SoftmaxOp s) {
        return lowerSoftmax(s, s.getAxis(), /*log=*/false);
      })
      .Case([&](onnx::LogSoftmaxOp s) {
        return lowerSoftmax(s, s.getAxis(), /*log=*/true);
      })
      .Case([&](onnx::NodeOp node) -> FailureOr<Results> {
        StringRef type = node.getOpType();
        if (type == "Flatten")
          return lowerFlatten(node);
        if (type == "Pad")
          return lowerPad(node);
        if (type == "Conv")
          return lowerConv(node);
        if (type == "ConvInteger")
          return lowerConvInteger(node);
        if (type == "Pow")
          return lowerPow(node);
        if (type.starts_with("Reduce"))
          return lowerReduceMean(node);
        if (type == "ArgMax" || type == "ArgMin")
          return lowerArgMax(node);
        if (type == "Tile")
          return lowerTile(node);
        if (type == "CumSum")
          return lowerCumSum(node);
        if (type == "LayerNormalization")
          return lowerLayerNorm(node);
        if (type == "BatchNormalization")
          return lowerBatchNorm(node);
        if (type == "InstanceNormalization")
          return lowerInstanceNorm(node);
        if (type == "ReverseSequence")
          return lowerReverseSequence(node);
        if (type == "MaxPool" || type == "AveragePool" ||
            type == "GlobalMaxPool" || type == "GlobalAveragePool")
          return lowerPool(node, type.ends_with("AveragePool"));
        if (type == "Range")
          return lowerRange(node);
        if (type == "Dropout")
          return lowerDropout(node);
        if (type == "GatherElements")
          return lowerGatherElements(node);
        if (type == "ScatterND")
          return lowerScatterND(node);
        if (type == "ScatterElements" || type == "Scatter")
          return lowerScatterElements(node);
        if (type == "Einsum")
          return lowerEinsum(node);
        if (type == "ConvTranspose")
          return lowerConvTranspose(node);
        if (type == "Resize")
          return lowerResize(node);
        if (type == "TopK")
          return lowerTopK(node);
        if (type == "DequantizeLinear")
          return lowerDequantizeLinear(node);
        if (type == "DynamicQuantizeLinear")
          return lowerDynamicQuantizeLinear(node);
        if (type == "QuantizeLinear")
          return lowerQuantizeLinear(node);
        if (type == "MatMulInteger")
          return lowerMatMulInteger(node);
        if (type == "PRelu" || type == "Max" || type == "Min" ||
            type == "Where" || isComparison(type) || type == "And" ||
            type == "Or" || type == "Xor" || type == "Not")
          return lowerNaryElementwise(node);
        return lowerUnary(node, node.getOpType());
      })
      .Default([&](Operation *o) -> FailureOr<Results> {
        llvm_unreachable("unsupported ops are rejected before");
      });
}

/// Replaces `oldValue` by `newValue`. Where the declared type is less static,
/// onnx and rnn users take the static value and other users (func.return) a
/// tensor.cast back to the declared type.
LogicalResult FunctionLowering::replaceResult(Operation *op, Value oldValue,
                                              Value newValue) {
  if (oldValue.getType() == newValue.getType()) {
    oldValue.replaceAllUsesWith(newValue);
    return success();
  }
  // A declared !onnx.unknown is fine as long as only onnx/rnn ops read it.
  auto declared = dyn_cast<TensorType>(oldValue.getType());
  if (declared &&
      !tensor::CastOp::areCastCompatible(declared, newValue.getType()))
    return error(op) << "the computed result type " << newValue.getType()
                     << " contradicts the declared type " << oldValue.getType();
  Value cast;
  for (OpOperand &use : llvm::make_early_inc_range(oldValue.getUses())) {
    Operation *user = use.getOwner();
    if (isa_and_nonnull<onnx::ONNXDialect, rnn::RNNDialect>(
            user->getDialect())) {
      use.set(newValue);
      continue;
    }
    if (!declared)
      return error(op) << "result #"
                       << cast_if_present<OpResult>(oldValue).getResultNumber()
                       << " has the type " << oldValue.getType() << ", which '"
                       << user->getName() << "' cannot read";
    if (!cast)
      cast = tensor::CastOp::create(b, op->getLoc(), declared, newValue);
    use.set(cast);
  }
  return success();
}

/// A small integer scalar or vector whose values are known at compile time
/// (shape arithmetic) becomes a constant, so that Reshape, Expand, ... can
/// read it; else `lowered`. getConstantInts evaluates one op on constant
/// operands flattened, which is only exact for results of rank <= 1.
Value FunctionLowering::foldIntResult(Operation *op, Value result,
                                      Value lowered) {
  auto type = dyn_cast<RankedTensorType>(lowered.getType());
  if (!type || type.getRank() > 1 || !isSignlessInt(type.getElementType()) ||
      type.getNumElements() > kMaxFoldedElements ||
      lowered.getDefiningOp<arith::ConstantOp>())
    return lowered;
  auto values = onnx::getConstantInts(result);
  if (!values || (int64_t)values->size() != type.getNumElements())
    return lowered;
  return createIntTensor(b, op->getLoc(), type, *values);
}

LogicalResult FunctionLowering::lowerOp(Operation *op) {
  bool supported = isa<onnx::InitializerOp>(op) ||
                   (isa<onnx::ONNXDialect>(op->getDialect()) &&
                    isLoweredTyped(op->getName()));
  if (auto node = dyn_cast<onnx::NodeOp>(op))
    supported = isSupportedGenericNode(node);
  if (!supported) {
    StringRef type = opTypeOf(op);
    bool layer = llvm::is_contained(
        {"LSTM", "GRU", "RNN", "DynamicQuantizeLSTM"}, type);
    bool loop = llvm::is_contained({"Loop", "Scan"}, type);
    return op->emitError() << "convert-onnx-to-linalg: node '"
                           << getNodeName(op) << "' (" << type
                           << ") is not supported by the CPU backend"
                           << (layer ? ": a recurrent layer runs there once "
                                       "imported into the rnn dialect, and "
                                       "this one was not (its remark says "
                                       "why)"
                               : loop
                                   ? ": a Loop or Scan runs there once "
                                     "unrolled, which lstm-opt does for one "
                                     "whose body is a recurrent step (a "
                                     "carried state through MatMul/Gemm "
                                     "into an activation, or an LSTM/GRU/"
                                     "RNN node) with a trip count known from "
                                     "the shapes; this one was not unrolled "
                                     "(a remark says why where it is such a "
                                     "step: a ConvLSTM's Conv is not)"
                                   : "");
  }
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    if (isa<NoneType>(v.getType()))
      continue;
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return error(op) << "operand #" << i << " has the type " << v.getType()
                       << "; the CPU backend needs static shapes (specialise "
                          "the graph inputs first)";
  }

  b.setInsertionPoint(op);
  FailureOr<Results> results = lowerResults(op);
  if (failed(results))
    return failure();
  assert(results->size() == op->getNumResults() && "one value per result");
  for (auto [result, lowered] : llvm::zip(op->getResults(), *results)) {
    if (!lowered) {
      if (!result.use_empty())
        return error(op) << "result #" << result.getResultNumber()
                         << " cannot be lowered";
      continue;
    }
    lowered = foldIntResult(op, result, lowered);
    if (failed(replaceResult(op, result, lowered)))
      return failure();
  }
  op->erase();
  return success();
}

LogicalResult FunctionLowering::run() {
  // Ops nobody reads (shape arithmetic left over from recognition) need no
  // lowering: erase them first, users before producers.
  for (Block &block : func.getBody())
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(block.getOperations())))
      if (isa_and_nonnull<onnx::ONNXDialect>(op.getDialect()) &&
          isOpTriviallyDead(&op))
        op.erase();

  SmallVector<Operation *> ops;
  for (Block &block : func.getBody())
    for (Operation &op : block)
      if (isa_and_nonnull<onnx::ONNXDialect>(op.getDialect()) &&
          !isa<onnx::NoneOp>(op))
        ops.push_back(&op);

  bool ok = true;
  for (Operation *op : ops) {
    // Errors on an op's producers are not repeated on the op.
    if (llvm::any_of(op->getOperands(), [&](Value v) {
          return failedOps.contains(v.getDefiningOp());
        })) {
      failedOps.insert(op);
      continue;
    }
    if (failed(lowerOp(op))) {
      failedOps.insert(op);
      ok = false;
    }
  }

  // What the lowering left unused: none values, replaced constants, the IR
  // of integer results that were folded.
  for (Block &block : func.getBody())
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(block.getOperations())))
      if (isa_and_nonnull<onnx::ONNXDialect, arith::ArithDialect,
                          tensor::TensorDialect, linalg::LinalgDialect,
                          math::MathDialect>(op.getDialect()) &&
          isOpTriviallyDead(&op))
        op.erase();
  return success(ok);
}

struct ConvertONNXToLinalgPass
    : public lstm_opt::impl::ConvertONNXToLinalgPassBase<
          ConvertONNXToLinalgPass> {
  void runOnOperation() override {
    bool ok = true;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(lowerONNXToLinalg(func)))
        ok = false;
    if (!ok)
      signalPassFailure();
  }
};

} // namespace

LogicalResult lstm_opt::lowerONNXToLinalg(func::FuncOp func) {
  return FunctionLowering(func).run();
}

bool lstm_opt::isLoweredToLinalg(MLIRContext *ctx, StringRef opType) {
  ctx->getOrLoadDialect<onnx::ONNXDialect>();
  if (auto typed = RegisteredOperationName::lookup(("onnx." + opType).str(), ctx))
    return isLoweredTyped(*typed);
  return isLoweredGenericType(opType, 0, /*anyArity=*/true);
}

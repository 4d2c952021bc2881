//===- ONNXOps.cpp - onnx dialect ops: verifiers and helpers --------------===//
//
// Verifiers check the ONNX shape and attribute rules wherever the types are
// static. They never reject a valid ONNX model: unranked or dynamic dimensions
// are always accepted.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace lstm_opt::onnx;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Type lstm_opt::onnx::getElementTypeForOnnxDataType(MLIRContext *ctx,
                                                    int64_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case 1: return b.getF32Type();
  case 2: return b.getIntegerType(8, /*isSigned=*/false);
  case 3: return b.getIntegerType(8);
  case 4: return b.getIntegerType(16, false);
  case 5: return b.getIntegerType(16);
  case 6: return b.getI32Type();
  case 7: return b.getI64Type();
  case 8: return StringType::get(ctx);
  case 9: return b.getI1Type();
  case 10: return b.getF16Type();
  case 11: return b.getF64Type();
  case 12: return b.getIntegerType(32, false);
  case 13: return b.getIntegerType(64, false);
  case 14: return ComplexType::get(b.getF32Type());
  case 15: return ComplexType::get(b.getF64Type());
  case 16: return b.getBF16Type();
  case 17: return Float8E4M3FNType::get(ctx);
  case 18: return Float8E4M3FNUZType::get(ctx);
  case 19: return Float8E5M2Type::get(ctx);
  case 20: return Float8E5M2FNUZType::get(ctx);
  case 21: return b.getIntegerType(4, false);
  case 22: return b.getIntegerType(4);
  case 23: return Float4E2M1FNType::get(ctx);
  case 24: return Float8E8M0FNUType::get(ctx);
  // 25/26 (UINT2/INT2) and 27/28 (FLOAT6E2M3/FLOAT6E3M2) are sub-byte packed
  // types with no MLIR storage here: refused with the data type named.
  default: return {};
  }
}

int64_t lstm_opt::onnx::getOnnxDataTypeForElementType(Type type) {
  if (type.isF32()) return 1;
  if (type.isF64()) return 11;
  if (type.isF16()) return 10;
  if (type.isBF16()) return 16;
  if (isa<Float8E4M3FNType>(type)) return 17;
  if (isa<Float8E4M3FNUZType>(type)) return 18;
  if (isa<Float8E5M2Type>(type)) return 19;
  if (isa<Float8E5M2FNUZType>(type)) return 20;
  if (isa<Float4E2M1FNType>(type)) return 23;
  if (isa<Float8E8M0FNUType>(type)) return 24;
  if (isa<StringType>(type)) return 8;
  if (auto c = dyn_cast<ComplexType>(type)) {
    if (c.getElementType().isF32()) return 14;
    if (c.getElementType().isF64()) return 15;
    return 0;
  }
  if (auto i = dyn_cast<IntegerType>(type)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 1: return i.isSignless() ? 9 : 0;
    case 4: return u ? 21 : 22;
    case 8: return u ? 2 : 3;
    case 16: return u ? 4 : 5;
    case 32: return u ? 12 : 6;
    case 64: return u ? 13 : 7;
    default: return 0;
    }
  }
  return 0;
}

StringRef lstm_opt::onnx::getOnnxOpType(Operation *op) {
  if (auto node = dyn_cast<NodeOp>(op))
    return node.getOpType();
  if (!isa_and_nonnull<ONNXDialect>(op->getDialect()))
    return {};
  StringRef name = op->getName().stripDialect();
  if (name.empty() || !llvm::isUpper(name.front()))
    return {};
  return name;
}

int64_t lstm_opt::onnx::getDefaultOpset(Operation *op) {
  ModuleOp module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                      : op->getParentOfType<ModuleOp>();
  if (!module)
    return 0;
  auto opsets = module->getAttrOfType<ArrayAttr>(attrs::kOpsetImport);
  if (!opsets)
    return 0;
  for (Attribute a : opsets)
    if (auto o = dyn_cast<OpsetAttr>(a))
      if (o.getDomain().empty() || o.getDomain() == "ai.onnx")
        return o.getVersion();
  return 0;
}

namespace {
/// The static shape of `v`, if ranked.
std::optional<ArrayRef<int64_t>> getShape(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return t.getShape();
  return std::nullopt;
}

std::optional<int64_t> getRank(Value v) {
  if (auto s = getShape(v))
    return (int64_t)s->size();
  return std::nullopt;
}

bool isNone(Value v) { return isa<NoneType>(v.getType()); }

/// Element type of a tensor value; null if not a tensor.
Type getElemType(Value v) {
  if (auto t = dyn_cast<TensorType>(v.getType()))
    return t.getElementType();
  return {};
}

LogicalResult verifySameElementType(Operation *op, ValueRange values) {
  Type first;
  for (Value v : values) {
    Type e = getElemType(v);
    if (!e)
      continue;
    if (!first)
      first = e;
    else if (e != first)
      return op->emitOpError() << "element types differ: " << first << " and "
                               << e;
  }
  return success();
}

bool isStaticDim(int64_t d) { return !ShapedType::isDynamic(d); }

/// Checks a dimension of `v` against an expected value when both are static.
LogicalResult expectDim(Operation *op, Value v, StringRef what, int64_t dim,
                        std::optional<int64_t> expected) {
  auto s = getShape(v);
  if (!s || !expected || dim >= (int64_t)s->size() || !isStaticDim((*s)[dim]) ||
      !isStaticDim(*expected))
    return success();
  if ((*s)[dim] != *expected)
    return op->emitOpError() << what << " dimension " << dim << " is "
                             << (*s)[dim] << ", expected " << *expected;
  return success();
}

LogicalResult expectRank(Operation *op, Value v, StringRef what, int64_t rank) {
  if (auto r = getRank(v); r && *r != rank)
    return op->emitOpError() << what << " must have rank " << rank
                             << ", got " << v.getType();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

OpFoldResult NoneOp::fold(FoldAdaptor) { return UnitAttr::get(getContext()); }

LogicalResult InitializerOp::verify() {
  if (getValue().getType() != getResult().getType())
    return emitOpError() << "value type " << getValue().getType()
                         << " differs from result type "
                         << getResult().getType();
  if (getName().empty())
    return emitOpError() << "initializer needs a name";
  return success();
}

void InitializerOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getGraphInput())
    effects.emplace_back(MemoryEffects::Write::get());
}

LogicalResult NodeOp::verify() {
  if (getOpType().empty())
    return emitOpError() << "needs a non-empty op_type";
  size_t numGraphAttrs = getGraphAttrs() ? getGraphAttrs()->size() : 0;
  if (numGraphAttrs != getGraphs().size())
    return emitOpError() << "has " << getGraphs().size()
                         << " subgraph regions but " << numGraphAttrs
                         << " graph_attrs names";
  for (Region &r : getGraphs())
    if (r.empty() || r.front().empty() || !isa<YieldOp>(r.front().back()))
      return emitOpError() << "subgraph regions must end in onnx.yield";
  return success();
}

void NodeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  auto names = (*this)->getAttrOfType<ArrayAttr>(attrs::kOutputNames);
  if (!names)
    return;
  for (auto [res, name] : llvm::zip(getResults(), names))
    if (auto s = dyn_cast<StringAttr>(name); s && !s.getValue().empty())
      setNameFn(res, s.getValue());
}

LogicalResult YieldOp::verify() {
  Block *block = (*this)->getBlock();
  if (getInputNames().size() != block->getNumArguments())
    return emitOpError() << "names " << getInputNames().size()
                         << " subgraph inputs but the region has "
                         << block->getNumArguments() << " arguments";
  if (getOutputNames().size() != getValues().size())
    return emitOpError() << "names " << getOutputNames().size()
                         << " subgraph outputs but yields "
                         << getValues().size() << " values";
  return success();
}

//===----------------------------------------------------------------------===//
// Typed ops
//===----------------------------------------------------------------------===//

LogicalResult lstm_opt::onnx::traits::impl::verifyElementwiseBroadcast(Operation *op) {
  Value a = op->getOperand(0), b = op->getOperand(1);
  return verifySameElementType(op, {a, b, op->getResult(0)});
}

LogicalResult lstm_opt::onnx::traits::impl::verifyElementwiseUnary(Operation *op) {
  return verifySameElementType(op, {op->getOperand(0), op->getResult(0)});
}

// Ops whose result has the element type of their (first) input.
#define DEFINE_SAME_ELEMENT_VERIFIER(OP, IN, OUT)                              \
  LogicalResult OP::verify() {                                                 \
    return verifySameElementType(*this, {get##IN(), get##OUT()});              \
  }
DEFINE_SAME_ELEMENT_VERIFIER(IdentityOp, Input, Output)
DEFINE_SAME_ELEMENT_VERIFIER(SoftmaxOp, Input, Output)
DEFINE_SAME_ELEMENT_VERIFIER(LogSoftmaxOp, Input, Output)
#undef DEFINE_SAME_ELEMENT_VERIFIER

// Gemm's and MatMul's shapes: their rules (ONNXShapeRules.cpp).
LogicalResult GemmOp::verify() {
  return verifySameElementType(*this, {getA(), getB(), getY()});
}

LogicalResult MatMulOp::verify() {
  return verifySameElementType(*this, {getA(), getB(), getY()});
}

LogicalResult ClipOp::verify() {
  bool inputForm = !isNone(getMin()) || !isNone(getMax());
  bool attrForm = getMinAttr() || getMaxAttr();
  if (inputForm && attrForm)
    return emitOpError() << "takes bounds either as inputs (opset 11+) or as "
                            "attributes (opset 6), not both";
  return verifySameElementType(*this, {getInput(), getOutput()});
}

LogicalResult CastOp::verify() {
  Type target = getElementTypeForOnnxDataType(getContext(), getTo());
  if (!target)
    return emitOpError() << "'to' = " << getTo()
                         << " is not an ONNX data type";
  return success();
}

LogicalResult SplitOp::verify() {
  if (!isNone(getSplit()) && getSplitAttr())
    return emitOpError() << "takes 'split' either as input or as attribute";
  if (getNumOutputs() && *getNumOutputs() != (int64_t)getNumResults())
    return emitOpError() << "num_outputs = " << *getNumOutputs() << " but has "
                         << getNumResults() << " results";
  if (getNumResults() == 0)
    return emitOpError() << "needs at least one output";
  return success();
}

LogicalResult SliceOp::verify() {
  bool inputForm = !isNone(getStarts()) || !isNone(getEnds());
  bool attrForm = getStartsAttr() || getEndsAttr();
  if (inputForm && attrForm)
    return emitOpError() << "takes starts/ends either as inputs (opset 10+) or "
                            "as attributes (opset 1), not both";
  if (inputForm && (isNone(getStarts()) || isNone(getEnds())))
    return emitOpError() << "needs both 'starts' and 'ends'";
  if (attrForm && (!getStartsAttr() || !getEndsAttr()))
    return emitOpError() << "needs both 'starts' and 'ends' attributes";
  if (!inputForm && !attrForm)
    return emitOpError() << "needs 'starts' and 'ends'";
  if (attrForm && getStartsAttr()->size() != getEndsAttr()->size())
    return emitOpError() << "'starts' and 'ends' differ in length";
  return verifySameElementType(*this, {getData(), getOutput()});
}

LogicalResult GatherOp::verify() {
  Type idx = getElemType(getIndices());
  if (idx && !idx.isInteger(32) && !idx.isInteger(64))
    return emitOpError() << "indices must be int32 or int64, got " << idx;
  if (failed(verifySameElementType(*this, {getData(), getOutput()})))
    return failure();
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  return verifySameElementType(*this, getOperands());
}

LogicalResult SqueezeOp::verify() {
  if (!isNone(getAxes()) && getAxesAttr())
    return emitOpError() << "takes 'axes' either as input or as attribute";
  return verifySameElementType(*this, {getData(), getSqueezed()});
}

LogicalResult UnsqueezeOp::verify() {
  if (!isNone(getAxes()) && getAxesAttr())
    return emitOpError() << "takes 'axes' either as input or as attribute";
  if (isNone(getAxes()) && !getAxesAttr())
    return emitOpError() << "needs 'axes'";
  return verifySameElementType(*this, {getData(), getExpanded()});
}

LogicalResult ReshapeOp::verify() {
  if (failed(expectRank(*this, getShape(), "shape", 1)))
    return failure();
  Type e = getElemType(getShape());
  if (e && !e.isInteger(64))
    return emitOpError() << "shape must be int64";
  return verifySameElementType(*this, {getData(), getReshaped()});
}

LogicalResult TransposeOp::verify() {
  return verifySameElementType(*this, {getData(), getTransposed()});
}

LogicalResult ConstantOp::verify() {
  int n = (getValue() ? 1 : 0) + (getValueFloat() ? 1 : 0) +
          (getValueFloats() ? 1 : 0) + (getValueInt() ? 1 : 0) +
          (getValueInts() ? 1 : 0) + (getValueString() ? 1 : 0) +
          (getValueStrings() ? 1 : 0);
  if (n != 1)
    return emitOpError() << "needs exactly one value attribute, has " << n;
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  if (auto v = getValue()) {
    if (v->getNumElements() != 1)
      return emitOpError() << "'value' must hold one element";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Recurrent ops
//===----------------------------------------------------------------------===//

namespace {
/// Checks the shared shape rules of LSTM/GRU/RNN. `gates` is G, `numActs` the
/// activations per direction.
template <typename OpTy>
LogicalResult verifyRecurrent(OpTy op, int64_t gates, int64_t numActs) {
  StringRef dir = op.getDirection();
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return op.emitOpError() << "direction must be forward, reverse or "
                               "bidirectional, got '" << dir << "'";
  if (op.getLayout() != 0 && op.getLayout() != 1)
    return op.emitOpError() << "layout must be 0 or 1";
  int64_t d = op.getNumDirections();
  Operation *o = op.getOperation();
  if (failed(expectRank(o, op.getX(), "X", 3)) ||
      failed(expectRank(o, op.getW(), "W", 3)) ||
      failed(expectRank(o, op.getR(), "R", 3)))
    return failure();
  if (failed(verifySameElementType(o, {op.getX(), op.getW(), op.getR()})))
    return failure();

  std::optional<int64_t> hidden;
  if (op.getHiddenSize())
    hidden = *op.getHiddenSize();
  else if (auto r = getShape(op.getR()); r && isStaticDim((*r)[2]))
    hidden = (*r)[2];
  if (hidden && *hidden <= 0)
    return op.emitOpError() << "hidden_size must be positive";
  // 2*G*H (B's width) must be a size: a hidden_size of 2^62 is refused here,
  // not multiplied.
  std::optional<int64_t> gh, twoGH, threeH;
  if (hidden) {
    gh = lstm_opt::checkedMul(gates, *hidden);
    twoGH = gh ? lstm_opt::checkedMul(2, *gh) : std::nullopt;
    threeH = lstm_opt::checkedMul(3, *hidden);
    if (!twoGH || !threeH)
      return op.emitOpError() << "hidden_size " << *hidden << " is too large";
  }
  std::optional<int64_t> inputSize;
  if (auto x = getShape(op.getX()); x && isStaticDim((*x)[2]))
    inputSize = (*x)[2];

  if (failed(expectDim(o, op.getW(), "W", 0, d)) ||
      failed(expectDim(o, op.getW(), "W", 1, gh)) ||
      failed(expectDim(o, op.getW(), "W", 2, inputSize)) ||
      failed(expectDim(o, op.getR(), "R", 0, d)) ||
      failed(expectDim(o, op.getR(), "R", 1, gh)) ||
      failed(expectDim(o, op.getR(), "R", 2, hidden)))
    return failure();
  if (!isNone(op.getB())) {
    if (failed(expectRank(o, op.getB(), "B", 2)) ||
        failed(expectDim(o, op.getB(), "B", 0, d)) ||
        failed(expectDim(o, op.getB(), "B", 1, twoGH)))
      return failure();
  }
  std::optional<int64_t> batch;
  if (auto x = getShape(op.getX())) {
    int64_t b = (*x)[op.getLayout() == 0 ? 1 : 0];
    if (isStaticDim(b))
      batch = b;
  }
  if (!isNone(op.getSequenceLens()))
    if (failed(expectRank(o, op.getSequenceLens(), "sequence_lens", 1)) ||
        failed(expectDim(o, op.getSequenceLens(), "sequence_lens", 0, batch)))
      return failure();
  auto checkState = [&](Value v, StringRef what) -> LogicalResult {
    if (isNone(v))
      return success();
    int64_t dAxis = op.getLayout() == 0 ? 0 : 1;
    if (failed(expectRank(o, v, what, 3)) ||
        failed(expectDim(o, v, what, dAxis, d)) ||
        failed(expectDim(o, v, what, 1 - dAxis, batch)) ||
        failed(expectDim(o, v, what, 2, hidden)))
      return failure();
    return success();
  };
  if (failed(checkState(op.getInitialH(), "initial_h")))
    return failure();
  if constexpr (std::is_same_v<OpTy, LSTMOp>) {
    if (failed(checkState(op.getInitialC(), "initial_c")))
      return failure();
    if (!isNone(op.getP())) {
      if (failed(expectRank(o, op.getP(), "P", 2)) ||
          failed(expectDim(o, op.getP(), "P", 0, d)) ||
          failed(expectDim(o, op.getP(), "P", 1, threeH)))
        return failure();
    }
    if (op.getInputForget() != 0 && op.getInputForget() != 1)
      return op.emitOpError() << "input_forget must be 0 or 1";
  }
  if constexpr (std::is_same_v<OpTy, GRUOp>) {
    if (op.getLinearBeforeReset() != 0 && op.getLinearBeforeReset() != 1)
      return op.emitOpError() << "linear_before_reset must be 0 or 1";
  }
  if (auto acts = op.getActivations()) {
    if ((int64_t)acts->size() != numActs * d)
      return op.emitOpError() << "needs " << numActs * d
                              << " activations, got " << acts->size();
    static const llvm::StringRef known[] = {
        "Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu",
        "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"};
    for (Attribute a : *acts) {
      StringRef name = cast<StringAttr>(a).getValue();
      if (!llvm::is_contained(known, name))
        return op.emitOpError() << "unknown activation '" << name << "'";
    }
  }
  if (op.getClip() && op.getClip()->convertToFloat() <= 0.0f)
    return op.emitOpError() << "clip must be positive";
  // The outputs' shapes: the rule (ONNXShapeRules.cpp).
  return success();
}
} // namespace

LogicalResult LSTMOp::verify() { return verifyRecurrent(*this, 4, 3); }
LogicalResult GRUOp::verify() { return verifyRecurrent(*this, 3, 2); }
LogicalResult RNNOp::verify() { return verifyRecurrent(*this, 1, 1); }

#define GET_OP_CLASSES
#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.cpp.inc"

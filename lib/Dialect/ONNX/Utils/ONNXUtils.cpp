//===- ONNXUtils.cpp - reading and making onnx constants and glue ---------===//

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"


#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::onnx;

std::optional<F32Tensor> onnx::getConstantF32(ElementsAttr attr) {
  if (!attr || !attr.getElementType().isF32())
    return std::nullopt;
  auto bytes = getRawBytes(attr, 4);
  if (!bytes)
    return std::nullopt;
  F32Tensor t;
  auto shape = cast<ShapedType>(attr.getType()).getShape();
  t.shape.assign(shape.begin(), shape.end());
  t.values.resize(bytes->size() / 4);
  std::memcpy(t.values.data(), bytes->data(), bytes->size());
  return t;
}

void onnx::stripONNXAttrs(Operation *op) {
  SmallVector<StringAttr> drop;
  for (NamedAttribute a : op->getDiscardableAttrs())
    if (a.getName().getValue().starts_with("onnx."))
      drop.push_back(a.getName());
  for (StringAttr n : drop)
    op->removeAttr(n);
}

std::optional<F32Tensor> onnx::getConstantF32(Value v) {
  return getConstantF32(getConstantAttr(v));
}

namespace {
/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> st(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    st[i] = st[i + 1] * shape[i + 1];
  return st;
}

/// Element count, or -1 on overflow past `limit`.
int64_t countOf(ArrayRef<int64_t> shape, int64_t limit) {
  return checkedNumElements(shape, limit).value_or(-1);
}

/// The elements of `values` (shape `in`) in the window, row-major.
template <typename T>
std::vector<T> takeWindow(const std::vector<T> &values, ArrayRef<int64_t> in,
                          const onnx::SliceWindow &w, int64_t count) {
  int64_t rank = in.size();
  SmallVector<int64_t> inSt = stridesOf(in);
  std::vector<T> out(count);
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < count; ++o) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (w.first[d] + idx[d] * w.step[d]) * inSt[d];
    out[o] = values[src];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < w.size[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

/// The permutation of a Transpose of rank `rank`, checked.
std::optional<SmallVector<int64_t>> permOf(onnx::TransposeOp tr, int64_t rank) {
  SmallVector<int64_t> perm =
      onnx::TransposeOp::getPermutation(onnx::TransposeOp::Adaptor(tr), rank);
  if ((int64_t)perm.size() != rank)
    return std::nullopt;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return std::nullopt;
    seen[p] = true;
  }
  return perm;
}

template <typename T>
std::vector<T> transposeValues(const std::vector<T> &values,
                               ArrayRef<int64_t> in, ArrayRef<int64_t> perm) {
  int64_t rank = in.size();
  SmallVector<int64_t> inSt = stridesOf(in), outShape;
  for (int64_t p : perm)
    outShape.push_back(in[p]);
  std::vector<T> out(values.size());
  SmallVector<int64_t> idx(rank, 0);
  for (size_t o = 0; o < values.size(); ++o) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += idx[d] * inSt[perm[d]];
    out[o] = values[src];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

/// `v` folded to f32 values. A constant of another float type only below a
/// Cast to f32 (`castToF32`): the values are what the graph computes in f32
/// there, where a bare f16 or f64 constant is a tensor of that type.
std::optional<F32Tensor> fold(Value v, int64_t limit, int depth,
                              bool castToF32) {
  if (depth > 32)
    return std::nullopt;
  v = onnx::skipIdentities(v);
  if (ElementsAttr attr = onnx::getConstantAttr(v)) {
    if (countOf(cast<ShapedType>(attr.getType()).getShape(), limit) < 0)
      return std::nullopt;
    Type et = attr.getElementType();
    if (et.isF32())
      return onnx::getConstantF32(attr);
    auto dense = dyn_cast<DenseElementsAttr>(attr);
    if (!castToF32 || !dense || !isa<FloatType>(et))
      return std::nullopt;
    F32Tensor t;
    auto shape = cast<ShapedType>(attr.getType()).getShape();
    t.shape.assign(shape.begin(), shape.end());
    for (APFloat f : dense.getValues<APFloat>()) {
      bool lost;
      f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      t.values.push_back(f.convertToFloat());
    }
    return t;
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumOperands() == 0)
    return std::nullopt;
  if (auto cast = dyn_cast<onnx::CastOp>(def)) {
    // Only to f32; the source element type is checked at the leaf.
    if (cast.getTo() != 1)
      return std::nullopt;
    return fold(cast.getInput(), limit, depth + 1, /*castToF32=*/true);
  }
  if (!isa<onnx::SliceOp, onnx::SplitOp, onnx::ConcatOp, onnx::SqueezeOp,
           onnx::UnsqueezeOp, onnx::ReshapeOp, onnx::TransposeOp>(def))
    return std::nullopt;
  SmallVector<F32Tensor, 4> ins;
  unsigned dataOperands = isa<onnx::ConcatOp>(def) ? def->getNumOperands() : 1;
  for (unsigned i = 0; i < dataOperands; ++i) {
    auto t = fold(def->getOperand(i), limit, depth + 1, castToF32);
    if (!t)
      return std::nullopt;
    ins.push_back(std::move(*t));
  }
  F32Tensor &in = ins[0];
  int64_t rank = in.shape.size();
  // The result's shape: the op's shape rule over the folded operands.
  auto shapeOf = [&](Value x) {
    for (unsigned i = 0; i < dataOperands; ++i)
      if (def->getOperand(i) == x)
        return ShapedTypeComponents(ins[i].shape,
                                    Float32Type::get(x.getContext()));
    auto t = dyn_cast<ShapedType>(x.getType());
    return t ? ShapedTypeComponents(t) : ShapedTypeComponents();
  };
  auto intsOf = [](Value x) { return onnx::getConstantInts(x); };
  onnx::ShapeQuery query(shapeOf, intsOf);
  SmallVector<ShapedTypeComponents> shapes;
  if (failed(onnx::inferResultShapes(def, query, shapes)))
    return std::nullopt;
  unsigned k = cast<OpResult>(v).getResultNumber();
  if (k >= shapes.size() || !shapes[k].hasRank())
    return std::nullopt;
  F32Tensor out;
  out.shape.assign(shapes[k].getDims().begin(), shapes[k].getDims().end());
  int64_t n = countOf(out.shape, limit);
  if (n < 0)
    return std::nullopt;
  if (isa<onnx::SqueezeOp, onnx::UnsqueezeOp, onnx::ReshapeOp>(def)) {
    if (n != in.numElements())
      return std::nullopt;
    out.values = std::move(in.values);
    return out;
  }
  if (auto tr = dyn_cast<onnx::TransposeOp>(def)) {
    auto perm = permOf(tr, rank);
    if (!perm)
      return std::nullopt;
    out.values = transposeValues(in.values, in.shape, *perm);
    return out;
  }
  if (auto cat = dyn_cast<onnx::ConcatOp>(def)) {
    int64_t axis = *onnx::normalizeAxis(cat.getAxis(), rank);
    // The leading dims of a constant whose values are held: no overflow.
    int64_t outer = checkedNumElements(ArrayRef(in.shape).take_front(axis))
                        .value_or(0);
    for (int64_t o = 0; o < outer; ++o)
      for (const F32Tensor &t : ins) {
        int64_t chunk = t.numElements() / std::max<int64_t>(outer, 1);
        out.values.insert(out.values.end(), t.values.begin() + o * chunk,
                          t.values.begin() + (o + 1) * chunk);
      }
    return out;
  }
  onnx::SliceWindow w;
  if (auto split = dyn_cast<onnx::SplitOp>(def)) {
    // Result k of a Split: the window of its part along the axis.
    int64_t axis = *onnx::normalizeAxis(split.getAxis(), rank);
    w = {SmallVector<int64_t>(rank, 0), SmallVector<int64_t>(rank, 1),
         out.shape};
    for (unsigned j = 0; j < k; ++j)
      w.first[axis] += shapes[j].getDims()[axis];
  } else {
    bool known;
    auto window = onnx::SliceOp::getWindow(
        query, onnx::SliceOp::Adaptor(cast<onnx::SliceOp>(def)), in.shape,
        known);
    if (failed(window) || !known)
      return std::nullopt;
    w = *window;
  }
  out.values = takeWindow(in.values, in.shape, w, n);
  return out;
}
} // namespace

std::optional<F32Tensor> onnx::foldConstantF32(Value v, int64_t maxElements) {
  return fold(v, maxElements, 0, /*castToF32=*/false);
}

FailureOr<F32Tensor> onnx::dequantizeConstant(Value q, Value scale,
                                              Value zeroPoint, int64_t axis,
                                              std::string &why,
                                              int64_t maxElements,
                                              std::vector<float> *elementScales) {
  auto fail = [&](const char *msg) -> FailureOr<F32Tensor> {
    why = msg;
    return failure();
  };
  if (zeroPoint && isa<NoneType>(zeroPoint.getType()))
    zeroPoint = Value();
  if (!q || !scale || isa<NoneType>(q.getType()) ||
      isa<NoneType>(scale.getType()))
    return fail("its quantized weight or scale is missing");
  ElementsAttr qa = getConstantAttr(skipIdentities(q));
  ElementsAttr za = zeroPoint ? getConstantAttr(skipIdentities(zeroPoint))
                              : ElementsAttr();
  auto sc = getConstantF32(skipIdentities(scale));
  if (!qa || (zeroPoint && !za) || !sc)
    return fail("its quantized weight, scale or zero point is not a constant");
  Type et = qa.getElementType();
  if (!(et.isInteger(8) || et.isSignlessInteger(32) ||
        et.isSignedInteger(32)) ||
      (za && za.getElementType() != et))
    return fail("its quantized weight is not int8/uint8 (or an int32 bias) "
                "with a zero point of its type");
  const int64_t width = et.isInteger(8) ? 1 : 4;
  auto shape = cast<ShapedType>(qa.getType()).getShape();
  int64_t n = qa.getNumElements();
  if (n > maxElements)
    return fail("its quantized weight is too large to dequantize");
  auto qb = getRawBytes(qa, width);
  std::optional<std::vector<char>> zb;
  if (za)
    zb = getRawBytes(za, width);
  if (!qb || (za && !zb) || (int64_t)qb->size() != n * width ||
      (zb && zb->size() % width != 0))
    return fail("its quantized weight cannot be read");
  int64_t sn = sc->numElements(), zn = zb ? (int64_t)zb->size() / width : 1;
  std::optional<int64_t> ax = normalizeAxis(axis, (int64_t)shape.size());
  int64_t len = ax ? shape[*ax] : 1;
  if ((sn != 1 && (!ax || sn != len)) || (zn != 1 && (!ax || zn != len)))
    return fail("its scale or zero point is neither per tensor nor per index "
                "of its axis");
  // Elements between consecutive indices of the axis.
  int64_t inner = 1;
  if (ax)
    for (size_t i = *ax + 1; i < shape.size(); ++i)
      inner *= shape[i];
  bool isUnsigned = et.isUnsignedInteger();
  auto val = [&](const std::vector<char> &bytes, int64_t i) -> int64_t {
    if (width == 4) {
      int32_t v;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      return v;
    }
    return isUnsigned ? (int64_t)(uint8_t)bytes[i] : (int64_t)(int8_t)bytes[i];
  };
  F32Tensor out;
  out.shape.assign(shape.begin(), shape.end());
  out.values.resize(n);
  if (elementScales)
    elementScales->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = ax ? (i / inner) % len : 0;
    if (elementScales)
      (*elementScales)[i] = sc->values[sn == 1 ? 0 : k];
    int64_t z = zb ? val(*zb, zn == 1 ? 0 : k) : 0;
    // (x - zp) in 32 bits, as ONNX Runtime (an int32 bias has zero point 0).
    out.values[i] = (float)(int32_t)(val(*qb, i) - z) * sc->values[sn == 1 ? 0 : k];
  }
  return out;
}

/// The ONNX node an op comes from: the first NameLoc of its location (as
/// the importer sets it), else its first output name, else "<unnamed>".
std::optional<int64_t> onnx::getNodeIntAttr(NodeOp node, StringRef name,
                                            int64_t dflt) {
  auto attrs = node.getAttrs();
  if (!attrs || !attrs->get(name))
    return dflt;
  auto a = dyn_cast<IntegerAttr>(attrs->get(name));
  return a ? std::optional<int64_t>(a.getInt()) : std::nullopt;
}

std::string onnx::getNodeName(Operation *op) {
  std::string name;
  op->getLoc()->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!name.empty())
    return name;
  if (auto names = op->getAttrOfType<ArrayAttr>(attrs::kOutputNames))
    for (Attribute a : names)
      if (auto s = dyn_cast<StringAttr>(a); s && !s.getValue().empty())
        return s.str();
  return "<unnamed>";
}

/// The rules one inferShape query may run, nested queries included.
static constexpr int kRuleBudget = 256;
static thread_local int ruleBudget = kRuleBudget;

/// The result shape of an operator of the default domain that the typed ops
/// do not model, where shape arithmetic reads it (PyTorch's topk or arange
/// over a length; a quantized model's reshapes): TopK (the input's shape with
/// `k` on the axis), Range (its length, from integer operands known at
/// compile time), the quantization operators and MatMulInteger.
static std::optional<SmallVector<int64_t>>
nodeResultShape(NodeOp node, unsigned k,
                function_ref<ShapedTypeComponents(Value)> shapeOf) {
  StringRef domain = node.getDomain();
  if ((!domain.empty() && domain != "ai.onnx") || !node.getGraphs().empty())
    return std::nullopt;
  auto ins = node.getInputs();
  StringRef type = node.getOpType();
  if (type == "TopK" && ins.size() == 2 && k < 2) {
    ShapedTypeComponents in = shapeOf(ins[0]);
    auto kv = onnx::getConstantInts(ins[1]);
    if (!in.hasRank() || !kv || kv->size() != 1 || (*kv)[0] < 0)
      return std::nullopt;
    int64_t rank = in.getDims().size();
    int64_t axis = -1;
    if (auto attrs = node.getAttrs())
      if (auto a = attrs->getAs<IntegerAttr>("axis"))
        axis = a.getInt();
    auto ax = normalizeAxis(axis, rank);
    if (!ax)
      return std::nullopt;
    SmallVector<int64_t> out(in.getDims());
    if (!ShapedType::isDynamic(out[*ax]) && (*kv)[0] > out[*ax])
      return std::nullopt; // invalid: ONNX Runtime refuses it
    out[*ax] = (*kv)[0];
    return out;
  }
  // The quantization operators of quantize_dynamic'd models: their results
  // have x's shape (the scale and zero point of DynamicQuantizeLinear are
  // scalars); MatMulInteger is a matmul.
  if ((type == "DynamicQuantizeLinear" || type == "QuantizeLinear" ||
       type == "DequantizeLinear") &&
      !ins.empty()) {
    if (type == "DynamicQuantizeLinear" && k > 0)
      return SmallVector<int64_t>{};
    ShapedTypeComponents in = shapeOf(ins[0]);
    if (!in.hasRank() || k > 0)
      return std::nullopt;
    return SmallVector<int64_t>(in.getDims());
  }
  if (type == "MatMulInteger" && ins.size() >= 2 && k == 0) {
    ShapedTypeComponents a = shapeOf(ins[0]), bt = shapeOf(ins[1]);
    if (!a.hasRank() || !bt.hasRank() || a.getDims().size() < 2 ||
        bt.getDims().size() < 2)
      return std::nullopt;
    ArrayRef<int64_t> x = a.getDims(), y = bt.getDims();
    // Batch dimensions broadcast (numpy): equal, or one of them 1.
    size_t batch = std::max(x.size(), y.size()) - 2;
    SmallVector<int64_t> out;
    for (size_t i = 0; i < batch; ++i) {
      auto dim = [&](ArrayRef<int64_t> d) -> int64_t {
        // d's batch dimensions, right-aligned to the output's.
        int64_t at = (int64_t)i - (int64_t)(batch - (d.size() - 2));
        return at >= 0 ? d[at] : 1;
      };
      int64_t p = dim(x), q = dim(y);
      if (p == 1)
        out.push_back(q);
      else if (q == 1 || p == q)
        out.push_back(p);
      else if (ShapedType::isDynamic(p) || ShapedType::isDynamic(q))
        out.push_back(ShapedType::kDynamic);
      else
        return std::nullopt; // not broadcastable: ONNX Runtime refuses it
    }
    out.push_back(x[x.size() - 2]);
    out.push_back(y[y.size() - 1]);
    return out;
  }
  auto attrInts = [&](StringRef name) -> std::optional<SmallVector<int64_t>> {
    auto attrs = node.getAttrs();
    Attribute a = attrs ? attrs->get(name) : Attribute();
    if (auto d = dyn_cast_or_null<DenseI64ArrayAttr>(a))
      return SmallVector<int64_t>(d.asArrayRef());
    return std::nullopt;
  };
  // Integers from input `i` (newer opsets: null when not constant) or, when
  // the input is absent, attribute `name` (older ones).
  auto inputOrAttr = [&](unsigned i, StringRef name)
      -> std::pair<bool, std::optional<SmallVector<int64_t>>> {
    if (ins.size() > i && !isa<NoneType>(ins[i].getType()))
      return {true, onnx::getConstantInts(ins[i])};
    return {false, attrInts(name)};
  };
  // Elementwise operators without a typed op: the input's shape, or the
  // two inputs' broadcast.
  static const llvm::StringSet<> unary = {
      "Sqrt", "Exp", "Log", "Abs", "Erf", "Softplus", "Softsign", "Elu",
      "Selu", "LeakyRelu", "HardSwish", "Reciprocal", "Floor", "Ceil",
      "Round", "Sin", "Cos", "Sign", "Gelu", "Mish", "Celu",
      "ThresholdedRelu"};
  if (unary.contains(type) && ins.size() == 1 && k == 0) {
    ShapedTypeComponents in = shapeOf(ins[0]);
    if (!in.hasRank())
      return std::nullopt;
    return SmallVector<int64_t>(in.getDims());
  }
  if ((type == "Pow" || type == "Mod" || type == "PRelu") && ins.size() == 2 &&
      k == 0) {
    ShapedTypeComponents x = shapeOf(ins[0]), y = shapeOf(ins[1]);
    if (!x.hasRank() || !y.hasRank())
      return std::nullopt;
    ArrayRef<int64_t> p = x.getDims(), q = y.getDims();
    size_t rank = std::max(p.size(), q.size());
    SmallVector<int64_t> out;
    for (size_t i = 0; i < rank; ++i) {
      int64_t a = i + p.size() >= rank ? p[i + p.size() - rank] : 1;
      int64_t c = i + q.size() >= rank ? q[i + q.size() - rank] : 1;
      if (a == 1)
        out.push_back(c);
      else if (c == 1 || a == c)
        out.push_back(a);
      else if (ShapedType::isDynamic(a) || ShapedType::isDynamic(c))
        out.push_back(ShapedType::kDynamic);
      else
        return std::nullopt;
    }
    return out;
  }
  // Reductions: the axes (attribute, or input from opset 18 on; none: all
  // of them unless noop_with_empty_axes) kept as 1 or dropped.
  if (type.starts_with("Reduce") && !ins.empty() && k == 0) {
    ShapedTypeComponents in = shapeOf(ins[0]);
    if (!in.hasRank())
      return std::nullopt;
    int64_t rank = in.getDims().size();
    auto [fromInput, axes] = inputOrAttr(1, "axes");
    if (!axes && fromInput)
      return std::nullopt;
    int64_t keep = 1, noop = 0;
    if (auto attrs = node.getAttrs()) {
      if (auto a = attrs->getAs<IntegerAttr>("keepdims"))
        keep = a.getInt();
      if (auto a = attrs->getAs<IntegerAttr>("noop_with_empty_axes"))
        noop = a.getInt();
    }
    SmallVector<bool> reduced(rank, !axes || axes->empty());
    if (axes && axes->empty() && noop)
      return SmallVector<int64_t>(in.getDims());
    if (axes)
      for (int64_t a : *axes) {
        auto na = normalizeAxis(a, rank);
        if (!na)
          return std::nullopt;
        reduced[*na] = true;
      }
    SmallVector<int64_t> out;
    for (int64_t i = 0; i < rank; ++i) {
      if (!reduced[i])
        out.push_back(in.getDims()[i]);
      else if (keep)
        out.push_back(1);
    }
    return out;
  }
  // Pad: each padded axis grows by its two pads (pads from the input, opset
  // 11 on, or the attribute; the axes input, opset 18 on).
  if (type == "Pad" && !ins.empty() && k == 0) {
    ShapedTypeComponents in = shapeOf(ins[0]);
    if (!in.hasRank())
      return std::nullopt;
    int64_t rank = in.getDims().size();
    std::optional<SmallVector<int64_t>> pads = inputOrAttr(1, "pads").second;
    SmallVector<int64_t> axes;
    if (ins.size() > 3 && !isa<NoneType>(ins[3].getType())) {
      auto ax = onnx::getConstantInts(ins[3]);
      if (!ax)
        return std::nullopt;
      for (int64_t a : *ax) {
        auto na = normalizeAxis(a, rank);
        if (!na)
          return std::nullopt;
        axes.push_back(*na);
      }
    } else {
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    }
    if (!pads || pads->size() != 2 * axes.size())
      return std::nullopt;
    SmallVector<int64_t> out(in.getDims());
    for (auto [i, a] : llvm::enumerate(axes)) {
      if (ShapedType::isDynamic(out[a]))
        continue;
      int64_t d = out[a] + (*pads)[i] + (*pads)[i + axes.size()];
      if (d < 0)
        return std::nullopt;
      out[a] = d;
    }
    return out;
  }
  // Conv: [N, M, spatial...] from the kernel, strides, dilations and pads.
  if (type == "Conv" && ins.size() >= 2 && k == 0) {
    ShapedTypeComponents x = shapeOf(ins[0]), w = shapeOf(ins[1]);
    if (!x.hasRank() || !w.hasRank() || x.getDims().size() < 3 ||
        w.getDims().size() != x.getDims().size())
      return std::nullopt;
    ArrayRef<int64_t> xd = x.getDims(), wd = w.getDims();
    size_t sp = xd.size() - 2;
    SmallVector<int64_t> kernel(wd.begin() + 2, wd.end());
    if (auto ks = attrInts("kernel_shape")) {
      if (ks->size() != sp)
        return std::nullopt;
      kernel = *ks;
    }
    SmallVector<int64_t> strides(sp, 1), dil(sp, 1), pads(2 * sp, 0);
    if (auto v = attrInts("strides"); v && v->size() == sp)
      strides = *v;
    if (auto v = attrInts("dilations"); v && v->size() == sp)
      dil = *v;
    if (auto v = attrInts("pads"); v && v->size() == 2 * sp)
      pads = *v;
    StringRef autoPad = "NOTSET";
    if (auto attrs = node.getAttrs())
      if (auto a = attrs->getAs<StringAttr>("auto_pad"))
        autoPad = a.getValue();
    SmallVector<int64_t> out = {xd[0], wd[0]};
    for (size_t i = 0; i < sp; ++i) {
      int64_t in = xd[2 + i], kk = kernel[i], s = strides[i], d = dil[i];
      if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kk) || s <= 0 ||
          d <= 0 || kk <= 0) {
        out.push_back(ShapedType::kDynamic);
        continue;
      }
      int64_t span = d * (kk - 1) + 1, o;
      if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
        o = (in + s - 1) / s;
      else if (autoPad == "VALID")
        o = in >= span ? (in - span) / s + 1 : -1;
      else if (autoPad == "NOTSET")
        o = in + pads[i] + pads[i + sp] >= span
                ? (in + pads[i] + pads[i + sp] - span) / s + 1
                : -1;
      else
        return std::nullopt;
      if (o < 0)
        return std::nullopt;
      out.push_back(o);
    }
    return out;
  }
  if (type == "Range" && ins.size() == 3 && k == 0) {
    auto start = onnx::getConstantInts(ins[0]);
    auto limit = onnx::getConstantInts(ins[1]);
    auto delta = onnx::getConstantInts(ins[2]);
    if (!start || !limit || !delta || start->size() != 1 ||
        limit->size() != 1 || delta->size() != 1 || (*delta)[0] == 0)
      return std::nullopt;
    int64_t diff;
    if (llvm::SubOverflow((*limit)[0], (*start)[0], diff))
      return std::nullopt;
    int64_t d = (*delta)[0];
    // ceil(diff / d), at least 0.
    int64_t n = diff / d + ((diff % d != 0) && ((diff < 0) == (d < 0)));
    return SmallVector<int64_t>{std::max<int64_t>(n, 0)};
  }
  return std::nullopt;
}

/// The shape of `v`: its type, refined by the shape rule of the op that
/// computes it, run over operands refined in turn (at most `depth` ops up;
/// each value once per query, in `memo`).
static ShapedTypeComponents
inferShapeImpl(Value v, int depth,
               DenseMap<Value, ShapedTypeComponents> &memo) {
  auto declared = [&] {
    auto t = dyn_cast<ShapedType>(v.getType());
    return t ? ShapedTypeComponents(t) : ShapedTypeComponents();
  };
  auto t = dyn_cast<ShapedType>(v.getType());
  Operation *def = v.getDefiningOp();
  if ((t && t.hasStaticShape()) || !def || depth > 8)
    return declared();
  if (auto node = dyn_cast<NodeOp>(def)) {
    if (auto shape = nodeResultShape(node, cast<OpResult>(v).getResultNumber(),
                                     [&](Value x) {
                                       return inferShapeImpl(x, depth + 1, memo);
                                     }))
      if (Type refined = refineType(v.getType(), ShapedTypeComponents(*shape)))
        if (auto r = dyn_cast<ShapedType>(refined))
          return ShapedTypeComponents(r);
    return declared();
  }
  if (!isa<ShapeRuleOpInterface>(def))
    return declared();
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  if (ruleBudget <= 0)
    return declared();
  --ruleBudget;
  memo[v] = declared(); // a cycle (graph regions) reads the declared type
  auto shapeOf = [&](Value x) { return inferShapeImpl(x, depth + 1, memo); };
  auto intsOf = [](Value x) { return onnx::getConstantInts(x); };
  ShapeQuery query(shapeOf, intsOf);
  SmallVector<ShapedTypeComponents> shapes;
  unsigned k = cast<OpResult>(v).getResultNumber();
  ShapedTypeComponents result = declared();
  if (succeeded(inferResultShapes(def, query, shapes)) && k < shapes.size())
    if (Type refined = refineType(v.getType(), shapes[k]))
      if (auto r = dyn_cast<ShapedType>(refined))
        result = ShapedTypeComponents(r);
  memo[v] = result;
  return result;
}

ShapedTypeComponents onnx::inferShape(Value v) {
  // A rule's integer operand may be shape arithmetic over another inferred
  // shape (Reshape(x, Gather(Shape(y)))), which starts another inference.
  // One query, nested ones included, runs at most kRuleBudget rules and
  // nests at most 4 deep, so that a hostile chain of them costs neither the
  // stack nor more than constant time (what lies beyond stays as declared).
  static thread_local int nesting = 0;
  if (nesting == 0)
    ruleBudget = kRuleBudget;
  if (nesting >= 4 || ruleBudget <= 0) {
    auto t = dyn_cast<ShapedType>(v.getType());
    return t ? ShapedTypeComponents(t) : ShapedTypeComponents();
  }
  ++nesting;
  llvm::scope_exit leave([] { --nesting; });
  DenseMap<Value, ShapedTypeComponents> memo;
  return inferShapeImpl(v, 0, memo);
}

int64_t onnx::refineShapes(func::FuncOp func, bool graphOutputs) {
  if (func.isExternal())
    return 0;
  // What is known of each value: its type, or what a rule inferred for it.
  DenseMap<Value, ShapedTypeComponents> known;
  auto shapeOf = [&](Value x) {
    if (auto it = known.find(x); it != known.end())
      return it->second;
    auto t = dyn_cast<ShapedType>(x.getType());
    return t ? ShapedTypeComponents(t) : ShapedTypeComponents();
  };
  auto intsOf = [](Value x) { return onnx::getConstantInts(x); };
  int64_t refined = 0;
  for (Operation &op : func.front()) {
    SmallVector<ShapedTypeComponents> shapes;
    if (auto node = dyn_cast<NodeOp>(op)) {
      // The few generic operators whose result shapes shape arithmetic
      // needs (nodeResultShape); the others stay as declared.
      for (unsigned k = 0; k < node->getNumResults(); ++k) {
        auto s = nodeResultShape(node, k, shapeOf);
        if (!s) {
          shapes.clear();
          break;
        }
        shapes.push_back(ShapedTypeComponents(*s));
      }
      if (shapes.empty())
        continue;
    } else {
      if (!isa<ShapeRuleOpInterface>(op))
        continue;
      ShapeQuery query(shapeOf, intsOf);
      if (failed(inferResultShapes(&op, query, shapes)))
        continue;
    }
    for (auto [result, shape] : llvm::zip(op.getResults(), shapes)) {
      Type type = refineType(result.getType(), shape);
      if (!type || type == result.getType())
        continue;
      known[result] = ShapedTypeComponents(cast<ShapedType>(type));
      // With graphOutputs, graph outputs too: the function's type follows
      // its return below.
      bool onnxUsers = llvm::all_of(result.getUsers(), [&](Operation *user) {
        return (isa<ONNXDialect>(user->getDialect()) && !isa<YieldOp>(user)) ||
               (graphOutputs && isa<func::ReturnOp>(user) &&
                user->getParentOp() == func);
      });
      if (!onnxUsers)
        continue;
      result.setType(type);
      ++refined;
    }
  }
  if (refined && graphOutputs)
    if (auto ret = dyn_cast<func::ReturnOp>(func.front().getTerminator()))
      func.setFunctionType(FunctionType::get(func.getContext(),
                                             func.getArgumentTypes(),
                                             ret.getOperandTypes()));
  return refined;
}

int64_t onnx::inferLastDim(Value v) {
  ShapedTypeComponents s = inferShape(v);
  if (!s.hasRank() || s.getDims().empty())
    return ShapedType::kDynamic;
  return s.getDims().back();
}

int64_t onnx::inferRank(Value v) {
  ShapedTypeComponents s = inferShape(v);
  return s.hasRank() ? (int64_t)s.getDims().size() : -1;
}

/// Integer values computed from constants and static shapes (the shape
/// arithmetic exporters emit, e.g. PyTorch's chunk: Shape -> Gather -> Add ->
/// Div -> Mul -> Slice bounds).
static std::optional<SmallVector<int64_t>> evaluateInts(Value v, int depth);

/// A float value known exactly as integers: a float constant whose elements
/// are integers of magnitude <= 2^24, or such an integer value cast to
/// float. Both are exact in f32, so comparisons of them are exact.
static std::optional<SmallVector<int64_t>> integralFloat(Value v, int depth) {
  constexpr int64_t kExact = int64_t(1) << 24;
  v = skipIdentities(v);
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !isa<FloatType>(t.getElementType()) || !t.hasStaticShape() ||
      t.getNumElements() > 64)
    return std::nullopt;
  if (auto c = v.getDefiningOp<CastOp>()) {
    auto in = dyn_cast<TensorType>(c.getInput().getType());
    if (!in || !isa<IntegerType>(in.getElementType()))
      return std::nullopt;
    auto x = evaluateInts(c.getInput(), depth + 1);
    if (!x || llvm::any_of(*x, [&](int64_t e) { return e > kExact || e < -kExact; }))
      return std::nullopt;
    return x;
  }
  auto f = onnx::getConstantF32(v);
  if (!f)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (float e : f->values) {
    if (!(std::fabs(e) <= (float)kExact) || e != std::trunc(e))
      return std::nullopt;
    out.push_back((int64_t)e);
  }
  return out;
}

static std::optional<SmallVector<int64_t>> evaluateOp(Operation *op,
                                                      int depth) {
  auto eval = [&](Value x) { return evaluateInts(x, depth + 1); };
  if (auto shape = dyn_cast<ShapeOp>(op)) {
    ShapedTypeComponents in = inferShape(shape.getData());
    if (!in.hasRank())
      return std::nullopt;
    auto [start, end] =
        ShapeOp::getRange(ShapeOp::Adaptor(shape), in.getDims().size());
    SmallVector<int64_t> out(in.getDims().slice(start, end - start));
    if (llvm::any_of(out, ShapedType::isDynamic))
      return std::nullopt;
    return out;
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    // Known dimensions of a value, whatever the others are.
    if (auto shape = g.getData().getDefiningOp<ShapeOp>()) {
      ShapedTypeComponents in = inferShape(shape.getData());
      auto idx = eval(g.getIndices());
      if (in.hasRank() && idx && g.getAxis() == 0) {
        auto [start, end] =
            ShapeOp::getRange(ShapeOp::Adaptor(shape), in.getDims().size());
        int64_t n = end - start;
        SmallVector<int64_t> out;
        for (int64_t i : *idx) {
          if (i < 0)
            i += n;
          if (i < 0 || i >= n || ShapedType::isDynamic(in.getDims()[start + i]))
            break;
          out.push_back(in.getDims()[start + i]);
        }
        if (out.size() == idx->size())
          return out;
      }
    }
    // Values are flattened: only a gather from 1-D data is exact.
    if (auto t = dyn_cast<RankedTensorType>(g.getData().getType());
        t && t.getRank() > 1)
      return std::nullopt;
    auto data = eval(g.getData()), idx = eval(g.getIndices());
    if (!data || !idx || g.getAxis() != 0)
      return std::nullopt;
    SmallVector<int64_t> out;
    for (int64_t i : *idx) {
      if (i < 0)
        i += data->size();
      if (i < 0 || i >= (int64_t)data->size())
        return std::nullopt;
      out.push_back((*data)[i]);
    }
    return out;
  }
  auto binary = [&](Value a, Value b,
                    function_ref<std::optional<int64_t>(int64_t, int64_t)> fn)
      -> std::optional<SmallVector<int64_t>> {
    auto x = eval(a), y = eval(b);
    if (!x || !y)
      return std::nullopt;
    size_t n = std::max(x->size(), y->size());
    if ((x->size() != n && x->size() != 1) || (y->size() != n && y->size() != 1))
      return std::nullopt;
    SmallVector<int64_t> out;
    for (size_t i = 0; i < n; ++i) {
      auto r = fn((*x)[x->size() == 1 ? 0 : i], (*y)[y->size() == 1 ? 0 : i]);
      if (!r)
        return std::nullopt;
      out.push_back(*r);
    }
    return out;
  };
  auto elemInt = [](Operation *op) {
    auto t = dyn_cast<TensorType>(op->getResult(0).getType());
    return t && isa<IntegerType>(t.getElementType());
  };
  if (isa<AddOp, SubOp, MulOp, DivOp>(op) && !elemInt(op))
    return std::nullopt;
  if (auto a = dyn_cast<AddOp>(op))
    return binary(a.getA(), a.getB(), [](int64_t x, int64_t y) {
      int64_t r;
      return llvm::AddOverflow(x, y, r) ? std::nullopt : std::optional(r);
    });
  if (auto a = dyn_cast<SubOp>(op))
    return binary(a.getA(), a.getB(), [](int64_t x, int64_t y) {
      int64_t r;
      return llvm::SubOverflow(x, y, r) ? std::nullopt : std::optional(r);
    });
  if (auto a = dyn_cast<MulOp>(op))
    return binary(a.getA(), a.getB(), [](int64_t x, int64_t y) {
      return checkedMul(x, y);
    });
  if (auto a = dyn_cast<DivOp>(op))
    return binary(a.getA(), a.getB(), [](int64_t x, int64_t y) {
      // ONNX integer Div truncates toward zero, as C++ does.
      if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1))
        return std::optional<int64_t>();
      return std::optional<int64_t>(x / y);
    });
  if (auto neg = dyn_cast<NegOp>(op)) {
    auto x = elemInt(op) ? eval(neg.getX())
                         : std::optional<SmallVector<int64_t>>();
    if (!x || llvm::is_contained(*x, std::numeric_limits<int64_t>::min()))
      return std::nullopt;
    for (int64_t &e : *x)
      e = -e;
    return x;
  }
  if (auto e = dyn_cast<ExpandOp>(op)) {
    // One value broadcast to a shape (a length per batch row, as tf2onnx
    // writes ReverseV2's sequence lengths); at most 2^20 of them.
    auto x = elemInt(op) ? eval(e.getInput())
                         : std::optional<SmallVector<int64_t>>();
    auto shape = eval(e.getShape());
    auto xt = dyn_cast<RankedTensorType>(e.getInput().getType());
    if (!x || x->size() != 1 || !shape || !xt ||
        xt.getRank() > (int64_t)shape->size())
      return std::nullopt;
    int64_t n = 1;
    for (int64_t d : *shape) {
      if (d < 0 || (d > 0 && n > (int64_t(1) << 20) / d))
        return std::nullopt;
      n *= d;
    }
    return SmallVector<int64_t>(n, (*x)[0]);
  }
  if (auto c = dyn_cast<ConcatOp>(op)) {
    // Flattened values concatenate exactly only along the first axis.
    if (c.getAxis() != 0)
      for (Value in : c.getInputs())
        if (auto t = dyn_cast<RankedTensorType>(in.getType()); !t || t.getRank() > 1)
          return std::nullopt;
    SmallVector<int64_t> out;
    for (Value in : c.getInputs()) {
      auto x = eval(in);
      // Shape arithmetic is small: a concatenation past 2^20 values (a
      // hostile graph that doubles a list at every step) is not evaluated.
      if (!x || out.size() + x->size() > (size_t(1) << 20))
        return std::nullopt;
      out.append(x->begin(), x->end());
    }
    return out;
  }
  // Comparisons and logic (an If's condition computed from an input value).
  if (auto node = dyn_cast<NodeOp>(op);
      node && (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
      node.getGraphs().empty() && node.getNumResults() == 1) {
    StringRef type = node.getOpType();
    auto ins = node.getInputs();
    using Fn = std::optional<int64_t> (*)(int64_t, int64_t);
    Fn fn = llvm::StringSwitch<Fn>(type)
                .Case("Equal", [](int64_t x, int64_t y) { return std::optional<int64_t>(x == y); })
                .Case("Less", [](int64_t x, int64_t y) { return std::optional<int64_t>(x < y); })
                .Case("Greater", [](int64_t x, int64_t y) { return std::optional<int64_t>(x > y); })
                .Case("LessOrEqual", [](int64_t x, int64_t y) { return std::optional<int64_t>(x <= y); })
                .Case("GreaterOrEqual", [](int64_t x, int64_t y) { return std::optional<int64_t>(x >= y); })
                .Case("And", [](int64_t x, int64_t y) { return std::optional<int64_t>(x && y); })
                .Case("Or", [](int64_t x, int64_t y) { return std::optional<int64_t>(x || y); })
                .Case("Min", [](int64_t x, int64_t y) { return std::optional<int64_t>(std::min(x, y)); })
                .Case("Max", [](int64_t x, int64_t y) { return std::optional<int64_t>(std::max(x, y)); })
                .Default(nullptr);
    auto intOperands = [&] {
      return llvm::all_of(ins, [](Value v) {
        auto t = dyn_cast<TensorType>(v.getType());
        return t && isa<IntegerType>(t.getElementType());
      });
    };
    if (fn && ins.size() == 2 && intOperands())
      return binary(ins[0], ins[1], fn);
    // A loop condition written in floats (tf2onnx casts TF's counters):
    // compared exactly when both sides are integers that f32 holds exactly.
    if (fn && ins.size() == 2 && type != "And" && type != "Or" &&
        type != "Min" && type != "Max") {
      auto x = integralFloat(ins[0], depth + 1);
      auto y = integralFloat(ins[1], depth + 1);
      if (!x || !y || (x->size() != y->size() && x->size() != 1 && y->size() != 1))
        return std::nullopt;
      size_t n = std::max(x->size(), y->size());
      SmallVector<int64_t> out;
      for (size_t i = 0; i < n; ++i)
        out.push_back(*fn((*x)[x->size() == 1 ? 0 : i], (*y)[y->size() == 1 ? 0 : i]));
      return out;
    }
    // Where(cond, x, y) over integers: jax2onnx clamps a dynamic index with
    // Where(i < 0, i + n, i), the index itself a constant.
    if (type == "Where" && ins.size() == 3 && intOperands()) {
      auto c = eval(ins[0]), x = eval(ins[1]), y = eval(ins[2]);
      if (!c || !x || !y)
        return std::nullopt;
      size_t n = std::max({c->size(), x->size(), y->size()});
      for (auto *v : {&*c, &*x, &*y})
        if (v->size() != n && v->size() != 1)
          return std::nullopt;
      auto at = [](const SmallVector<int64_t> &v, size_t i) {
        return v[v.size() == 1 ? 0 : i];
      };
      SmallVector<int64_t> out;
      for (size_t i = 0; i < n; ++i)
        out.push_back(at(*c, i) ? at(*x, i) : at(*y, i));
      return out;
    }
    // A reduction of all of an integer value to one number (PyTorch's
    // numel: ReduceProd(Shape(x))), the axes absent.
    if ((type == "ReduceProd" || type == "ReduceSum" || type == "ReduceMin" ||
         type == "ReduceMax") &&
        ins.size() == 1 && intOperands()) {
      auto x = eval(ins[0]);
      if (!x || x->empty())
        return std::nullopt;
      // Axes absent, or [0] of a 1-D value (TensorFlow's Prod over a shape).
      auto t = dyn_cast<RankedTensorType>(ins[0].getType());
      if (auto attrs = node.getAttrs()) {
        if (auto noop = attrs->getAs<IntegerAttr>("noop_with_empty_axes");
            noop && noop.getInt() != 0)
          return std::nullopt;
        if (auto axes = attrs->getAs<ArrayAttr>("axes")) {
          auto a = axes.size() == 1 ? dyn_cast<IntegerAttr>(axes[0]) : nullptr;
          if (!a || !t || t.getRank() != 1 ||
              (a.getInt() != 0 && a.getInt() != -1))
            return std::nullopt;
        }
      }
      int64_t acc = type == "ReduceSum" ? 0 : type == "ReduceProd" ? 1 : (*x)[0];
      for (int64_t e : *x) {
        if (type == "ReduceProd") {
          auto p = checkedMul(acc, e);
          if (!p)
            return std::nullopt;
          acc = *p;
        } else if (type == "ReduceSum") {
          if (llvm::AddOverflow(acc, e, acc))
            return std::nullopt;
        } else {
          acc = type == "ReduceMin" ? std::min(acc, e) : std::max(acc, e);
        }
      }
      return SmallVector<int64_t>{acc};
    }
    if (type == "Abs" && ins.size() == 1 && intOperands()) {
      auto x = eval(ins[0]);
      if (!x || llvm::is_contained(*x, std::numeric_limits<int64_t>::min()))
        return std::nullopt;
      for (int64_t &e : *x)
        e = e < 0 ? -e : e;
      return x;
    }
    if (type == "Size" && ins.size() == 1) {
      auto t = dyn_cast<RankedTensorType>(ins[0].getType());
      if (!t || !t.hasStaticShape())
        return std::nullopt;
      return SmallVector<int64_t>{t.getNumElements()};
    }
    if (type == "Not" && ins.size() == 1 && intOperands()) {
      auto x = eval(ins[0]);
      if (!x)
        return std::nullopt;
      SmallVector<int64_t> out;
      for (int64_t v : *x)
        out.push_back(v == 0);
      return out;
    }
    return std::nullopt;
  }
  // Data movement over integer tensors of static shape.
  auto staticShape = [](Value v) -> std::optional<SmallVector<int64_t>> {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    return SmallVector<int64_t>(t.getShape());
  };
  if (auto rs = dyn_cast<ReshapeOp>(op))
    return elemInt(op) ? eval(rs.getData()) : std::nullopt;
  if (auto sl = dyn_cast<SliceOp>(op)) {
    auto shape = staticShape(sl.getData());
    auto data = eval(sl.getData());
    if (!elemInt(op) || !shape || !data ||
        (int64_t)data->size() != countOf(*shape, int64_t(1) << 20))
      return std::nullopt;
    auto intsOf = [](Value x) { return onnx::getConstantInts(x); };
    ShapeQuery query(nullptr, intsOf);
    bool known;
    auto w = SliceOp::getWindow(query, SliceOp::Adaptor(sl), *shape, known);
    int64_t n = succeeded(w) && known ? countOf(w->size, int64_t(1) << 20) : -1;
    if (n < 0)
      return std::nullopt;
    std::vector<int64_t> vals(data->begin(), data->end());
    auto out = takeWindow(vals, *shape, *w, n);
    return SmallVector<int64_t>(out.begin(), out.end());
  }
  if (auto tr = dyn_cast<TransposeOp>(op)) {
    auto shape = staticShape(tr.getData());
    auto data = eval(tr.getData());
    if (!elemInt(op) || !shape || !data ||
        (int64_t)data->size() != countOf(*shape, int64_t(1) << 20))
      return std::nullopt;
    auto perm = permOf(tr, shape->size());
    if (!perm)
      return std::nullopt;
    std::vector<int64_t> vals(data->begin(), data->end());
    auto out = transposeValues(vals, *shape, *perm);
    return SmallVector<int64_t>(out.begin(), out.end());
  }
  if (auto cs = dyn_cast<ConstantOfShapeOp>(op)) {
    auto shape = eval(cs.getInput());
    int64_t n = shape ? countOf(*shape, int64_t(1) << 16) : -1;
    if (!elemInt(op) || n < 0)
      return std::nullopt;
    int64_t fill = 0;
    if (auto v = cs.getValue()) {
      auto ints = onnx::getConstantInts(*v);
      if (!ints || ints->size() != 1)
        return std::nullopt;
      fill = (*ints)[0];
    }
    return SmallVector<int64_t>(n, fill);
  }
  if (auto u = dyn_cast<UnsqueezeOp>(op))
    return eval(u.getData());
  if (auto sq = dyn_cast<SqueezeOp>(op))
    return eval(sq.getData());
  if (auto c = dyn_cast<CastOp>(op)) {
    auto in = dyn_cast<TensorType>(c.getInput().getType());
    auto out = dyn_cast<TensorType>(op->getResult(0).getType());
    if (!in || !out || !isa<IntegerType>(in.getElementType()) ||
        !isa<IntegerType>(out.getElementType()))
      return std::nullopt;
    auto x = eval(c.getInput());
    if (!x)
      return std::nullopt;
    unsigned bits = out.getElementType().getIntOrFloatBitWidth();
    if (bits == 1) // to bool: nonzero is true
      for (int64_t &e : *x)
        e = e != 0;
    else if (bits < 64 && llvm::any_of(*x, [&](int64_t e) {
               return !llvm::isIntN(bits, e);
             }))
      return std::nullopt; // would wrap
    return x;
  }
  return std::nullopt;
}

/// The values one getConstantInts query has computed (each value is
/// evaluated once however many ways the graph reaches it; a value that
/// could not be evaluated is not kept, since a deeper query may succeed).
static thread_local DenseMap<Value, SmallVector<int64_t>> *evaluated = nullptr;

static std::optional<SmallVector<int64_t>> evaluateInts(Value v, int depth) {
  if (depth > 16)
    return std::nullopt;
  if (auto literal = getLiteralInts(v))
    return literal;
  v = skipIdentities(v);
  Operation *def = v.getDefiningOp();
  if (!def || getConstantAttr(v)) // an argument, a constant of another type
    return std::nullopt;
  if (evaluated)
    if (auto it = evaluated->find(v); it != evaluated->end())
      return it->second;
  auto out = evaluateOp(def, depth);
  if (out && evaluated)
    (*evaluated)[v] = *out;
  return out;
}

FailureOr<SmallVector<int64_t>>
onnx::getSplitSizes(Operation *op, int64_t dim, std::string &why) {
  auto split = cast<SplitOp>(op);
  std::optional<SmallVector<int64_t>> given;
  if (auto attr = split.getSplitAttr()) {
    given = SmallVector<int64_t>(attr->begin(), attr->end());
  } else if (!isa<NoneType>(split.getSplit().getType())) {
    given = getConstantInts(split.getSplit());
    if (!given) {
      why = "'split' is not a constant";
      return failure();
    }
  }
  return computeSplitSizes(
      given ? std::optional<ArrayRef<int64_t>>(*given) : std::nullopt,
      split.getNumResults(), split.getNumOutputs().has_value(), dim, why);
}

std::optional<SmallVector<int64_t>> onnx::getConstantInts(Value v) {
  if (evaluated)
    return evaluateInts(v, 0);
  DenseMap<Value, SmallVector<int64_t>> memo;
  evaluated = &memo;
  llvm::scope_exit leave([] { evaluated = nullptr; });
  return evaluateInts(v, 0);
}

std::optional<SmallVector<int64_t>> onnx::getSqueezeAxes(Operation *op) {
  Value axesIn;
  std::optional<ArrayRef<int64_t>> attr;
  Value ranked;
  if (auto sq = dyn_cast_or_null<SqueezeOp>(op)) {
    axesIn = sq.getAxes();
    attr = sq.getAxesAttr();
    ranked = sq.getData();
  } else if (auto un = dyn_cast_or_null<UnsqueezeOp>(op)) {
    axesIn = un.getAxes();
    attr = un.getAxesAttr();
    ranked = un.getResult();
  } else {
    return std::nullopt;
  }
  SmallVector<int64_t> axes;
  if (attr) {
    axes.assign(attr->begin(), attr->end());
  } else if (!isa<NoneType>(axesIn.getType())) {
    auto ints = getConstantInts(axesIn);
    if (!ints)
      return std::nullopt;
    axes = std::move(*ints);
  } else {
    return std::nullopt;
  }
  auto t = dyn_cast<RankedTensorType>(ranked.getType());
  for (int64_t &a : axes)
    if (a < 0) {
      if (!t)
        return std::nullopt;
      a += t.getRank();
    }
  return axes;
}

DimRef onnx::canonicalDim(DimRef d) {
  for (int depth = 0; depth < 32; ++depth) {
    Operation *def = d.tensor.getDefiningOp();
    if (!def)
      break;
    if (auto tr = dyn_cast<TransposeOp>(def)) {
      auto t = dyn_cast<RankedTensorType>(tr.getData().getType());
      std::optional<SmallVector<int64_t>> perm;
      if (!t || !(perm = permOf(tr, t.getRank())) || d.axis < 0 ||
          d.axis >= (int64_t)perm->size())
        break;
      d = {tr.getData(), (*perm)[d.axis]};
      continue;
    }
    if (isa<IdentityOp, CastOp>(def)) {
      d.tensor = def->getOperand(0);
      continue;
    }
    auto node = dyn_cast<NodeOp>(def);
    if (node && node.getOpType() == "ReverseSequence" &&
        (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
        node.getGraphs().empty() && !node.getInputs().empty() &&
        def->getNumResults() == 1) {
      d.tensor = node.getInputs()[0];
      continue;
    }
    break;
  }
  return d;
}

/// Element `i` of `shape`, a value read from Shape(t) (through Cast and
/// Identity): the dimension of t it is.
static std::optional<DimRef> shapeElement(Value shape, int64_t i, int depth) {
  if (depth > 16)
    return std::nullopt;
  Operation *def = shape.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<IdentityOp, CastOp>(def))
    return shapeElement(def->getOperand(0), i, depth + 1);
  auto sh = dyn_cast<ShapeOp>(def);
  if (!sh)
    return std::nullopt;
  auto t = dyn_cast<RankedTensorType>(sh.getData().getType());
  if (!t)
    return std::nullopt;
  auto [start, end] = ShapeOp::getRange(ShapeOp::Adaptor(sh), t.getRank());
  if (i < 0)
    i += end - start;
  if (i < 0 || start + i >= end)
    return std::nullopt;
  return canonicalDim({sh.getData(), start + i});
}

/// One constant integer (a scalar or a one-element list).
static std::optional<int64_t> singleInt(Value v) {
  auto ints = getConstantInts(v);
  if (!ints || ints->size() != 1)
    return std::nullopt;
  return ints->front();
}

static std::optional<DimRef> dimSource(Value v, int depth) {
  if (depth > 16)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto cast = dyn_cast<CastOp>(def)) {
    // Exact for any dimension a tensor in memory can have (below 2^24
    // elements along one axis for f32).
    Type to = getElementTypeOrSelf(cast.getResult().getType());
    if (!(to.isInteger(32) || to.isInteger(64) || to.isF32() || to.isF64()))
      return std::nullopt;
    return dimSource(cast.getInput(), depth + 1);
  }
  if (isa<IdentityOp, SqueezeOp, UnsqueezeOp, ReshapeOp>(def))
    return dimSource(def->getOperand(0), depth + 1);
  if (auto g = dyn_cast<GatherOp>(def)) {
    auto idx = singleInt(g.getIndices());
    if (!idx || g.getAxis() != 0)
      return std::nullopt;
    return shapeElement(g.getData(), *idx, depth + 1);
  }
  if (auto sl = dyn_cast<SliceOp>(def)) {
    if (sl.getStartsAttrAttr() || sl.getEndsAttrAttr())
      return std::nullopt;
    auto st = singleInt(sl.getStarts()), en = singleInt(sl.getEnds());
    if (!st || !en)
      return std::nullopt;
    if (!isa<NoneType>(sl.getAxes().getType())) {
      auto ax = singleInt(sl.getAxes());
      if (!ax || (*ax != 0 && *ax != -1))
        return std::nullopt;
    }
    if (!isa<NoneType>(sl.getSteps().getType())) {
      auto stp = singleInt(sl.getSteps());
      if (!stp || *stp != 1)
        return std::nullopt;
    }
    // [s, s + 1): one element (a negative start counts from the end: then
    // the end is s + 1 too, below 0, or past any rank for the last element).
    bool one = *st >= 0 ? *en == *st + 1
                        : (*st < -1 && *en == *st + 1) ||
                              (*st == -1 && *en >= INT32_MAX);
    if (!one)
      return std::nullopt;
    return shapeElement(sl.getData(), *st, depth + 1);
  }
  return std::nullopt;
}

std::optional<DimRef> onnx::getDimSource(Value v) { return dimSource(v, 0); }

bool onnx::holdsDimSize(Value v, Value tensor, int64_t axis) {
  auto t = dyn_cast<RankedTensorType>(tensor.getType());
  if (!t || axis < 0 || axis >= t.getRank())
    return false;
  if (!t.isDynamicDim(axis))
    if (auto c = singleInt(v))
      return *c == t.getDimSize(axis);
  auto src = getDimSource(v);
  if (!src)
    return false;
  DimRef want = canonicalDim({tensor, axis});
  if (*src == want)
    return true;
  // Two static dimensions of the same size.
  auto a = dyn_cast<RankedTensorType>(src->tensor.getType());
  return a && !t.isDynamicDim(axis) && !a.isDynamicDim(src->axis) &&
         a.getDimSize(src->axis) == t.getDimSize(axis);
}

ConstantBuilder::ConstantBuilder(func::FuncOp func) : func(func) {
  func.walk([&](InitializerOp init) { names.insert(init.getName()); });
}

Value ConstantBuilder::create(Location loc, StringRef name,
                              RankedTensorType type, ArrayRef<char> bytes,
                              ElementsAttr given) {
  std::string typeKey;
  llvm::raw_string_ostream(typeKey) << type;
  auto key = std::make_pair(typeKey, std::string(bytes.data(), bytes.size()));
  auto it = byContent.find(key);
  if (it != byContent.end())
    return it->second;
  std::string unique = name.str();
  for (unsigned i = 1; !names.insert(unique).second; ++i)
    unique = name.str() + "_" + std::to_string(i);
  OpBuilder b(func.getContext());
  Block &entry = func.front();
  auto pos = entry.begin();
  while (pos != entry.end() && isa<InitializerOp>(*pos))
    ++pos;
  b.setInsertionPoint(&entry, pos);
  ElementsAttr value = given;
  if (value) {
  } else if (bytes.size() <= 64) {
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  } else {
    size_t align = type.getElementTypeBitWidth() / 8;
    value = DenseResourceElementsAttr::get(
        type, unique,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, align));
  }
  Value v = InitializerOp::create(b, loc, type, unique, value, false);
  keyOf[v.getDefiningOp()] = key;
  byContent.emplace(std::move(key), v);
  return v;
}

void ConstantBuilder::forget(Operation *op) {
  auto it = keyOf.find(op);
  if (it == keyOf.end())
    return;
  byContent.erase(it->second);
  keyOf.erase(it);
}

Value ConstantBuilder::getF32(Location loc, StringRef name,
                              ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, Float32Type::get(func.getContext()));
  return create(loc, name, type,
                ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                               values.size() * 4));
}

Value ConstantBuilder::getI64(Location loc, StringRef name,
                              ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(
      shape, IntegerType::get(func.getContext(), 64));
  return create(loc, name, type,
                ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                               values.size() * 8));
}

Value ConstantBuilder::getInts(Location loc, StringRef name,
                               RankedTensorType type,
                               ArrayRef<int64_t> values) {
  auto et = cast<IntegerType>(type.getElementType());
  SmallVector<APInt> ints;
  for (int64_t v : values)
    ints.push_back(APInt(et.getWidth(), v, /*isSigned=*/true,
                         /*implicitTrunc=*/true));
  // Keyed by the int64 values: equal for equal content of one type.
  return create(loc, name, type,
                ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                               values.size() * 8),
                DenseElementsAttr::get(type, ints));
}

static RankedTensorType rankedOrNull(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

Value onnx::createSqueeze(OpBuilder &b, Location loc, ConstantBuilder &consts,
                          Value v, ArrayRef<int64_t> axes) {
  auto t = rankedOrNull(v);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(t.getDimSize(i));
  auto type = RankedTensorType::get(shape, t.getElementType());
  if (getDefaultOpset(b.getInsertionBlock()->getParentOp()) >= 13) {
    Value ax = consts.getI64(loc, "axes", {(int64_t)axes.size()}, axes);
    return SqueezeOp::create(b, loc, type, v, ax, nullptr);
  }
  Value none = NoneOp::create(b, loc);
  return SqueezeOp::create(b, loc, type, v, none, b.getDenseI64ArrayAttr(axes));
}

Value onnx::createUnsqueeze(OpBuilder &b, Location loc, ConstantBuilder &consts,
                            Value v, ArrayRef<int64_t> axes) {
  auto t = rankedOrNull(v);
  SmallVector<int64_t> shape(t.getShape());
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  for (int64_t a : sorted)
    shape.insert(shape.begin() + a, 1);
  auto type = RankedTensorType::get(shape, t.getElementType());
  if (getDefaultOpset(b.getInsertionBlock()->getParentOp()) >= 13) {
    Value ax = consts.getI64(loc, "axes", {(int64_t)axes.size()}, axes);
    return UnsqueezeOp::create(b, loc, type, v, ax, nullptr);
  }
  Value none = NoneOp::create(b, loc);
  return UnsqueezeOp::create(b, loc, type, v, none,
                             b.getDenseI64ArrayAttr(axes));
}

Value onnx::createTranspose(OpBuilder &b, Location loc, Value v,
                            ArrayRef<int64_t> perm) {
  auto t = rankedOrNull(v);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  auto type = RankedTensorType::get(shape, t.getElementType());
  return TransposeOp::create(b, loc, type, v, b.getDenseI64ArrayAttr(perm));
}

Value onnx::createGatherIndex(OpBuilder &b, Location loc,
                              ConstantBuilder &consts, Value v, int64_t axis,
                              int64_t index) {
  auto t = rankedOrNull(v);
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + axis);
  auto type = RankedTensorType::get(shape, t.getElementType());
  Value idx = consts.getI64(loc, "index", {}, {index});
  return GatherOp::create(b, loc, type, v, idx, axis);
}

Value onnx::createSliceAxis(OpBuilder &b, Location loc, ConstantBuilder &consts,
                            Value v, int64_t axis, int64_t start, int64_t end) {
  auto t = rankedOrNull(v);
  SmallVector<int64_t> shape(t.getShape());
  shape[axis] = end - start;
  auto type = RankedTensorType::get(shape, t.getElementType());
  Value none = NoneOp::create(b, loc);
  Value s = consts.getI64(loc, "starts", {1}, {start});
  Value e = consts.getI64(loc, "ends", {1}, {end});
  Value a = consts.getI64(loc, "axes", {1}, {axis});
  return SliceOp::create(b, loc, type, v, s, e, a, none, nullptr, nullptr,
                         nullptr);
}

static bool canHoist(Value v, Operation *point, int depth) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point))
    return true;
  if (depth > 16 || !isPure(def) || def->getNumRegions() || def == point)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return canHoist(operand, point, depth + 1);
  });
}

static void hoist(Value v, Operation *point) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point))
    return;
  for (Value operand : def->getOperands())
    hoist(operand, point);
  def->moveBefore(point);
}

bool onnx::hoistBefore(Value v, Operation *point) {
  if (!canHoist(v, point, 0))
    return false;
  hoist(v, point);
  return true;
}

void onnx::eraseDeadOps(ArrayRef<Operation *> ops,
                        function_ref<void(Operation *)> onErase,
                        function_ref<bool(Operation *)> alsoErase) {
  llvm::SetVector<Operation *> work(ops.begin(), ops.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!op->use_empty() || op->hasTrait<OpTrait::IsTerminator>() ||
        !(isMemoryEffectFree(op) || (alsoErase && alsoErase(op))))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.insert(def);
    work.remove(op);
    if (onErase)
      onErase(op);
    op->erase();
  }
}

void onnx::setOutputName(Operation *op, unsigned i, StringRef name) {
  SmallVector<Attribute> names(op->getNumResults(),
                               StringAttr::get(op->getContext(), ""));
  if (auto old = op->getAttrOfType<ArrayAttr>(attrs::kOutputNames))
    for (unsigned k = 0; k < old.size() && k < names.size(); ++k)
      names[k] = old[k];
  names[i] = StringAttr::get(op->getContext(), name);
  op->setAttr(attrs::kOutputNames, ArrayAttr::get(op->getContext(), names));
}

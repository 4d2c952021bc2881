//===- ONNXShapeRules.cpp - the shape rule of each onnx op ----------------===//
//
// One function per operator: what ONNX requires of the operands' shapes and
// what the results' shapes and element types are (ONNXShapeRules.h). Each
// rule works from partial knowledge: an unknown rank gives an unranked
// result, an unknown dimension an unknown one, and only what is known to be
// wrong is refused.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::onnx;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

Value onnx::skipIdentities(Value v) {
  while (auto id = v.getDefiningOp<IdentityOp>())
    v = id.getInput();
  return v;
}

ElementsAttr onnx::getConstantAttr(Value v) {
  v = skipIdentities(v);
  Operation *def = v.getDefiningOp();
  if (!def)
    return {};
  if (auto init = dyn_cast<InitializerOp>(def))
    return init.getValue();
  if (auto c = dyn_cast<ConstantOp>(def))
    return c.getValue() ? *c.getValue() : ElementsAttr();
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    return dyn_cast<ElementsAttr>(c.getValue());
  return {};
}

std::optional<std::vector<char>> onnx::getRawBytes(ElementsAttr attr,
                                                   size_t elemBytes) {
  int64_t n = attr.getNumElements();
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != n * elemBytes)
      return std::nullopt;
    return std::vector<char>(blob->getData().begin(), blob->getData().end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || attr.getElementType().isInteger(1))
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  std::vector<char> out;
  if (dense.isSplat()) {
    for (int64_t i = 0; i < n; ++i)
      out.insert(out.end(), raw.begin(), raw.end());
  } else {
    out.assign(raw.begin(), raw.end());
  }
  if (out.size() != n * elemBytes)
    return std::nullopt;
  return out;
}

std::optional<Dims> onnx::getConstantInts(ElementsAttr attr) {
  if (!attr)
    return std::nullopt;
  Type e = attr.getElementType();
  if (e.isInteger(1)) {
    // Bools (a loop's condition): dense, or a resource of one byte each.
    Dims out;
    if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      if (dense.getNumElements() > (int64_t(1) << 20))
        return std::nullopt;
      for (bool b : dense.getValues<bool>())
        out.push_back(b);
      return out;
    }
    auto bytes = getRawBytes(attr, 1);
    if (!bytes)
      return std::nullopt;
    for (char c : *bytes)
      out.push_back(c != 0);
    return out;
  }
  if (!e.isInteger(64) && !e.isInteger(32))
    return std::nullopt;
  size_t w = e.isInteger(64) ? 8 : 4;
  auto bytes = getRawBytes(attr, w);
  if (!bytes)
    return std::nullopt;
  Dims out;
  for (size_t i = 0; i < bytes->size(); i += w) {
    if (w == 8) {
      int64_t x;
      std::memcpy(&x, bytes->data() + i, 8);
      out.push_back(x);
    } else {
      int32_t x;
      std::memcpy(&x, bytes->data() + i, 4);
      out.push_back(x);
    }
  }
  return out;
}

std::optional<Dims> onnx::getLiteralInts(Value v, int64_t maxElements) {
  v = skipIdentities(v);
  if (auto c = v.getDefiningOp<ConstantOp>()) {
    if (auto i = c.getValueInt())
      return Dims{*i};
    if (auto is = c.getValueInts())
      return Dims(is->begin(), is->end());
  }
  ElementsAttr attr = getConstantAttr(v);
  if (!attr || attr.getNumElements() > maxElements)
    return std::nullopt;
  return getConstantInts(attr);
}

//===----------------------------------------------------------------------===//
// ShapeQuery
//===----------------------------------------------------------------------===//

static ShapedTypeComponents componentsOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return ShapedTypeComponents();
  if (!shaped.hasRank())
    return ShapedTypeComponents(shaped.getElementType());
  return ShapedTypeComponents(shaped.getShape(), shaped.getElementType());
}

std::optional<Dims> ShapeQuery::dims(Value v) const {
  if (!v)
    return std::nullopt;
  if (shapeFn) {
    ShapedTypeComponents c = shapeFn(v);
    if (!c.hasRank())
      return std::nullopt;
    return Dims(c.getDims());
  }
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return Dims(t.getShape());
  return std::nullopt;
}

std::optional<int64_t> ShapeQuery::rank(Value v) const {
  if (auto d = dims(v))
    return (int64_t)d->size();
  return std::nullopt;
}

Type ShapeQuery::elementType(Value v) const {
  if (!v)
    return {};
  if (auto t = dyn_cast<ShapedType>(v.getType()))
    return t.getElementType();
  return {};
}

std::optional<Dims> ShapeQuery::ints(Value v) const {
  if (!v || isa<NoneType>(v.getType()))
    return std::nullopt;
  std::optional<Dims> out = intsFn ? intsFn(v) : getLiteralInts(v, kMaxInts);
  if (out && (int64_t)out->size() > kMaxInts)
    return std::nullopt;
  return out;
}

LogicalResult onnx::detail::inferWithValueShapeRange(
    ValueShapeRange operands, std::optional<Location> location,
    function_ref<LogicalResult(ShapeQuery &)> rule) {
  auto shapeOf = [&](Value v) {
    ShapeAdaptor a = operands.getShape(v);
    if (!a)
      return componentsOf(v.getType());
    if (!a.hasRank())
      return ShapedTypeComponents(a.getElementType());
    ShapedTypeComponents c;
    a.getDims(c);
    return ShapedTypeComponents(c.getDims(), a.getElementType());
  };
  ValueShapeRange::ValueShapeMapFn asShape = operands.getValueToShapeMapping();
  auto intsOf = [&](Value v) -> std::optional<Dims> {
    if (asShape)
      if (ShapeAdaptor a = asShape(v); a && a.hasRank()) {
        Dims values;
        a.getDims(values);
        return values;
      }
    return ShapeQuery().ints(v);
  };
  ShapeQuery query(shapeOf, intsOf);
  if (succeeded(rule(query)))
    return success();
  return emitOptionalError(location, query.getReason());
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

LogicalResult
onnx::inferResultShapes(Operation *op, ShapeQuery &query,
                        SmallVectorImpl<ShapedTypeComponents> &shapes) {
  auto rule = dyn_cast<ShapeRuleOpInterface>(op);
  if (!rule)
    return query.fail("'" + op->getName().getStringRef() +
                      "' has no shape rule");
  return rule.inferResultShapes(query, shapes);
}

static std::string describe(const ShapedTypeComponents &c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "tensor<";
  if (!c.hasRank()) {
    os << "*x";
  } else {
    for (int64_t d : c.getDims()) {
      if (ShapedType::isDynamic(d))
        os << "?";
      else
        os << d;
      os << "x";
    }
  }
  if (c.getElementType())
    os << c.getElementType();
  else
    os << "?";
  os << ">";
  return s;
}

Type onnx::refineType(Type declared, const ShapedTypeComponents &inferred) {
  // A value the model leaves untyped: a tensor once the element type is known.
  if (isa<UnknownType>(declared) && inferred.getElementType()) {
    if (!inferred.hasRank())
      return UnrankedTensorType::get(inferred.getElementType());
    return RankedTensorType::get(inferred.getDims(), inferred.getElementType());
  }
  auto shaped = dyn_cast<TensorType>(declared);
  if (!shaped)
    return declared;
  Type elem = shaped.getElementType();
  if (inferred.getElementType() && inferred.getElementType() != elem)
    return {};
  if (!inferred.hasRank())
    return declared;
  ArrayRef<int64_t> dims = inferred.getDims();
  if (!shaped.hasRank())
    return RankedTensorType::get(dims, elem);
  if (shaped.getRank() != (int64_t)dims.size())
    return {};
  Dims out(shaped.getShape());
  for (auto [o, d] : llvm::zip(out, dims)) {
    if (ShapedType::isDynamic(o))
      o = d;
    else if (!ShapedType::isDynamic(d) && d != o)
      return {};
  }
  return RankedTensorType::get(out, elem,
                               cast<RankedTensorType>(shaped).getEncoding());
}

LogicalResult onnx::verifyShapeRule(Operation *op) {
  ShapeQuery query;
  SmallVector<ShapedTypeComponents> shapes;
  if (failed(inferResultShapes(op, query, shapes)))
    return op->emitOpError() << query.getReason();
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    if (i >= shapes.size())
      break;
    if (!refineType(result.getType(), shapes[i]))
      return op->emitOpError()
             << "result #" << i << " has the type " << result.getType()
             << " but the operator's shape rule gives " << describe(shapes[i]);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

std::optional<int64_t> onnx::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<Dims> onnx::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  Dims out(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[off + i];
      int64_t d = s[i];
      if (d == o || d == 1)
        continue;
      if (o == 1) {
        o = d;
        continue;
      }
      // Static o != 1: d is o or unknown (then it must be o, or 1).
      // Unknown o: a static d != 1 decides it.
      if (ShapedType::isDynamic(d))
        continue;
      if (!ShapedType::isDynamic(o))
        return failure();
      o = d;
    }
  }
  return out;
}

FailureOr<SliceWindow> onnx::computeSliceWindow(ArrayRef<int64_t> in,
                                                ArrayRef<int64_t> starts,
                                                ArrayRef<int64_t> ends,
                                                ArrayRef<int64_t> axes,
                                                ArrayRef<int64_t> steps,
                                                std::string &why) {
  if (ends.size() != starts.size() ||
      (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size())) {
    why = "starts, ends, axes and steps differ in length";
    return failure();
  }
  int64_t rank = in.size();
  SliceWindow w;
  w.first.assign(rank, 0);
  w.step.assign(rank, 1);
  w.size.assign(in.begin(), in.end());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes.empty() ? (int64_t)i : axes[i];
    auto axis = normalizeAxis(a, rank);
    if (!axis || seen[*axis]) {
      why = "invalid or repeated axis " + std::to_string(a);
      return failure();
    }
    seen[*axis] = true;
    int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0 || step == std::numeric_limits<int64_t>::min()) {
      why = "step " + std::to_string(step);
      return failure();
    }
    w.step[*axis] = step;
    int64_t n = in[*axis];
    if (ShapedType::isDynamic(n)) {
      w.size[*axis] = ShapedType::kDynamic;
      continue;
    }
    // Negative bounds count from the end; then start and end clamp to
    // [0, n] (positive step) or to [0, n-1] and [-1, n-1] (negative step).
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s = s < -n ? -1 : s + n;
    if (e < 0)
      e = e < -n ? -1 : e + n;
    int64_t len = 0;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      len = e > s ? (e - s - 1) / step + 1 : 0;
    } else if (n > 0) {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      len = s > e ? (s - e - 1) / -step + 1 : 0;
    }
    w.first[*axis] = len ? s : 0;
    w.size[*axis] = len;
  }
  return w;
}

FailureOr<Dims> onnx::computeSplitSizes(std::optional<ArrayRef<int64_t>> given,
                                        int64_t n, bool hasNumOutputs,
                                        int64_t dim, std::string &why) {
  bool known = !ShapedType::isDynamic(dim);
  Dims sizes;
  if (given) {
    sizes.assign(given->begin(), given->end());
  } else {
    if (!known) {
      why = "equal parts of a dimension of unknown size";
      return failure();
    }
    if (!hasNumOutputs && dim % n != 0) {
      why = "dimension " + std::to_string(dim) + " does not split into " +
            std::to_string(n) + " equal parts";
      return failure();
    }
    int64_t part = dim / n + (dim % n != 0);
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::clamp<int64_t>(dim - i * part, 0, part));
  }
  if ((int64_t)sizes.size() != n) {
    why = "'split' has " + std::to_string(sizes.size()) + " sizes for " +
          std::to_string(n) + " outputs";
    return failure();
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || llvm::AddOverflow(total, s, total)) {
      why = "'split' sizes must be non-negative and add up to the axis";
      return failure();
    }
  }
  if (known && total != dim) {
    why = "'split' sizes add up to " + std::to_string(total) +
          " but the axis has " + std::to_string(dim);
    return failure();
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// The rules
//===----------------------------------------------------------------------===//

namespace {
using Shapes = SmallVectorImpl<ShapedTypeComponents>;

/// Pushes a result of `dims` (std::nullopt, or a rank past
/// kMaxInferredRank: unknown rank) and `elem`.
void push(Shapes &shapes, std::optional<ArrayRef<int64_t>> dims, Type elem) {
  if (dims && (int64_t)dims->size() <= kMaxInferredRank)
    shapes.emplace_back(*dims, elem);
  else
    shapes.emplace_back(elem);
}

/// One result of `dims` (std::nullopt: unknown rank).
LogicalResult result(Shapes &shapes, std::optional<ArrayRef<int64_t>> dims,
                     Type elem) {
  push(shapes, dims, elem);
  return success();
}

/// One result of unknown rank.
LogicalResult unranked(Shapes &shapes, Type elem) {
  return result(shapes, std::nullopt, elem);
}

/// All dimensions unknown, of rank `rank` when known.
std::optional<Dims> unknownDims(std::optional<int64_t> rank) {
  if (!rank || *rank > kMaxInferredRank)
    return std::nullopt;
  return Dims(*rank, ShapedType::kDynamic);
}

std::string str(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << t << "'";
  return s;
}

template <typename R>
std::string list(const R &values) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  return s;
}

bool isStatic(int64_t d) { return !ShapedType::isDynamic(d); }

/// A result with the shape and element type of `v`.
LogicalResult sameAs(ShapeQuery &q, Value v, Shapes &shapes) {
  return result(shapes, q.dims(v), q.elementType(v));
}

/// An optional integer-list input, or its pre-opset-13 attribute; an empty
/// list when neither is given, std::nullopt when the input is not known.
std::optional<Dims> intsOrAttr(ShapeQuery &q, Value input,
                               std::optional<ArrayRef<int64_t>> attr) {
  if (attr)
    return Dims(attr->begin(), attr->end());
  if (!input || isa<NoneType>(input.getType()))
    return Dims();
  return q.ints(input);
}
} // namespace

// Elementwise families -------------------------------------------------------

LogicalResult onnx::inferElementwiseUnary(ShapeQuery &q, Value x,
                                          Shapes &shapes) {
  return sameAs(q, x, shapes);
}

LogicalResult onnx::inferElementwiseBroadcast(ShapeQuery &q, Value a, Value b,
                                              Shapes &shapes) {
  auto da = q.dims(a), db = q.dims(b);
  Type elem = q.elementType(a);
  if (!da || !db)
    return unranked(shapes, elem);
  auto out = broadcastShapes({*da, *db});
  if (failed(out))
    return q.fail("operands are not broadcast-compatible: " +
                  str(a.getType()) + " and " + str(b.getType()));
  return result(shapes, *out, elem);
}

#define ONNX_UNARY_RULE(OP)                                                    \
  LogicalResult OP::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {   \
    return inferElementwiseUnary(q, op.getX(), shapes);                        \
  }
ONNX_UNARY_RULE(NegOp)
ONNX_UNARY_RULE(SigmoidOp)
ONNX_UNARY_RULE(TanhOp)
ONNX_UNARY_RULE(ReluOp)
ONNX_UNARY_RULE(HardSigmoidOp)
#undef ONNX_UNARY_RULE

#define ONNX_BINARY_RULE(OP)                                                   \
  LogicalResult OP::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {   \
    return inferElementwiseBroadcast(q, op.getA(), op.getB(), shapes);         \
  }
ONNX_BINARY_RULE(AddOp)
ONNX_BINARY_RULE(SubOp)
ONNX_BINARY_RULE(MulOp)
ONNX_BINARY_RULE(DivOp)
#undef ONNX_BINARY_RULE

LogicalResult ClipOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  return sameAs(q, op.getInput(), shapes);
}
LogicalResult IdentityOp::inferShapes(ShapeQuery &q, Adaptor op,
                                      Shapes &shapes) {
  return sameAs(q, op.getInput(), shapes);
}
LogicalResult SoftmaxOp::inferShapes(ShapeQuery &q, Adaptor op,
                                     Shapes &shapes) {
  return sameAs(q, op.getInput(), shapes);
}
LogicalResult LogSoftmaxOp::inferShapes(ShapeQuery &q, Adaptor op,
                                        Shapes &shapes) {
  return sameAs(q, op.getInput(), shapes);
}

LogicalResult CastOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  Type to = getElementTypeForOnnxDataType(op.getInput().getContext(),
                                          op.getTo());
  push(shapes, q.dims(op.getInput()), to);
  return success();
}

// Linear algebra -------------------------------------------------------------

LogicalResult MatMulOp::inferShapes(ShapeQuery &q, Adaptor op,
                                    Shapes &shapes) {
  Type elem = q.elementType(op.getA());
  auto a = q.dims(op.getA()), b = q.dims(op.getB());
  if ((a && a->empty()) || (b && b->empty()))
    return q.fail("operands must have rank >= 1");
  if (!a || !b)
    return unranked(shapes, elem);
  int64_t ra = a->size(), rb = b->size();
  int64_t k1 = a->back(), k2 = rb == 1 ? (*b)[0] : (*b)[rb - 2];
  if (isStatic(k1) && isStatic(k2) && k1 != k2)
    return q.fail("inner dimensions differ: " + std::to_string(k1) + " vs " +
                  std::to_string(k2));
  ArrayRef<int64_t> batchA = ra > 2 ? ArrayRef<int64_t>(*a).drop_back(2) : ArrayRef<int64_t>();
  ArrayRef<int64_t> batchB = rb > 2 ? ArrayRef<int64_t>(*b).drop_back(2) : ArrayRef<int64_t>();
  auto out = broadcastShapes({batchA, batchB});
  if (failed(out))
    return q.fail("batch dimensions do not broadcast: " +
                  str(op.getA().getType()) + " and " + str(op.getB().getType()));
  if (ra > 1)
    out->push_back((*a)[ra - 2]);
  if (rb > 1)
    out->push_back(b->back());
  return result(shapes, *out, elem);
}

LogicalResult GemmOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  auto a = q.dims(op.getA()), b = q.dims(op.getB());
  if (a && a->size() != 2)
    return q.fail("A must have rank 2, got " + str(op.getA().getType()));
  if (b && b->size() != 2)
    return q.fail("B must have rank 2, got " + str(op.getB().getType()));
  if (op.getTransA() != 0 && op.getTransA() != 1)
    return q.fail("transA must be 0 or 1");
  if (op.getTransB() != 0 && op.getTransB() != 1)
    return q.fail("transB must be 0 or 1");
  bool ta = op.getTransA(), tb = op.getTransB();
  int64_t m = a ? (*a)[ta ? 1 : 0] : ShapedType::kDynamic;
  int64_t n = b ? (*b)[tb ? 0 : 1] : ShapedType::kDynamic;
  if (a && b) {
    int64_t k1 = (*a)[ta ? 0 : 1], k2 = (*b)[tb ? 1 : 0];
    if (isStatic(k1) && isStatic(k2) && k1 != k2)
      return q.fail("inner dimensions differ: " + std::to_string(k1) + " vs " +
                    std::to_string(k2));
  }
  Dims y = {m, n};
  if (auto c = q.dims(op.getC())) {
    if (c->size() > 2)
      return q.fail("C must have rank <= 2");
    // C broadcasts to [M, N] one way.
    auto bc = broadcastShapes({y, *c});
    if (failed(bc) || llvm::any_of(llvm::zip(*bc, y), [](auto p) {
          return isStatic(std::get<1>(p)) && std::get<0>(p) != std::get<1>(p);
        }))
      return q.fail("C " + str(op.getC().getType()) +
                    " does not broadcast to [" + list(y) + "]");
  }
  return result(shapes, y, q.elementType(op.getA()));
}

// Shapes and data movement ---------------------------------------------------

LogicalResult ReshapeOp::inferShapes(ShapeQuery &q, Adaptor op,
                                     Shapes &shapes) {
  Type elem = q.elementType(op.getData());
  auto in = q.dims(op.getData());
  auto target = q.ints(op.getShape());
  if (!target) {
    // The rank is the length of `shape`, if that is known.
    auto s = q.dims(op.getShape());
    std::optional<int64_t> rank;
    if (s && s->size() == 1 && isStatic((*s)[0]))
      rank = (*s)[0];
    return result(shapes, unknownDims(rank), elem);
  }
  Dims out;
  int64_t inferred = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !op.getAllowzero()) {
      if (in && i >= in->size())
        return q.fail("shape entry " + std::to_string(i) +
                      " is 0 (copy) but the input has rank " +
                      std::to_string(in->size()));
      out.push_back(in ? (*in)[i] : ShapedType::kDynamic);
    } else if (d == -1) {
      if (inferred >= 0)
        return q.fail("more than one -1 in the shape");
      inferred = i;
      out.push_back(ShapedType::kDynamic);
    } else if (d < 0) {
      return q.fail("invalid shape entry " + std::to_string(d));
    } else {
      out.push_back(d);
    }
  }
  // Element counts, where every dimension involved is known.
  auto count = [](ArrayRef<int64_t> dims) -> std::optional<int64_t> {
    if (!llvm::all_of(dims, isStatic))
      return std::nullopt;
    return checkedNumElements(dims);
  };
  std::optional<int64_t> total = in ? count(*in) : std::nullopt;
  if (inferred >= 0) {
    Dims rest(out);
    rest.erase(rest.begin() + inferred);
    std::optional<int64_t> known = count(rest);
    if (total && known) {
      if (*known == 0 || *total % *known != 0)
        return q.fail("cannot infer the -1 dimension reshaping " +
                      str(op.getData().getType()));
      out[inferred] = *total / *known;
    }
  } else if (auto n = count(out); total && n && *n != *total) {
    return q.fail("cannot reshape " + str(op.getData().getType()) + " to [" +
                  list(out) + "]");
  }
  return result(shapes, out, elem);
}

/// Squeeze's and Unsqueeze's operands: the data's dimensions and the axes
/// (input or attribute), when both are known.
template <typename AdaptorT>
static std::optional<std::pair<Dims, Dims>> dataAndAxes(ShapeQuery &q,
                                                        AdaptorT op) {
  auto in = q.dims(op.getData());
  auto axes = intsOrAttr(q, op.getAxes(), op.getAxesAttr());
  if (!in || !axes)
    return std::nullopt;
  return std::make_pair(std::move(*in), std::move(*axes));
}

LogicalResult SqueezeOp::inferShapes(ShapeQuery &q, Adaptor op,
                                     Shapes &shapes) {
  Type elem = q.elementType(op.getData());
  auto known = dataAndAxes(q, op);
  if (!known)
    return unranked(shapes, elem);
  const auto &[in, axes] = *known;
  int64_t rank = in.size();
  SmallVector<bool> drop(rank, false);
  if (axes.empty()) {
    // Every dimension of size 1: unknown when a dimension is.
    if (llvm::any_of(in, [](int64_t d) { return !isStatic(d); }))
      return unranked(shapes, elem);
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = in[i] == 1;
  }
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank);
    if (!axis)
      return q.fail("axis " + std::to_string(a) + " is out of range for rank " +
                    std::to_string(rank));
    int64_t d = in[*axis];
    if (isStatic(d) && d != 1)
      return q.fail("cannot squeeze dimension " + std::to_string(*axis) +
                    " of size " + std::to_string(d));
    drop[*axis] = true;
  }
  Dims out;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      out.push_back(in[i]);
  return result(shapes, out, elem);
}

LogicalResult UnsqueezeOp::inferShapes(ShapeQuery &q, Adaptor op,
                                       Shapes &shapes) {
  Type elem = q.elementType(op.getData());
  auto known = dataAndAxes(q, op);
  if (!known)
    return unranked(shapes, elem);
  const auto &[in, axes] = *known;
  int64_t rank = in.size() + axes.size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank);
    if (!axis || inserted[*axis])
      return q.fail("invalid axes for output rank " + std::to_string(rank));
    inserted[*axis] = true;
  }
  Dims out;
  for (int64_t i = 0, j = 0; i < rank; ++i)
    out.push_back(inserted[i] ? 1 : in[j++]);
  return result(shapes, out, elem);
}

SmallVector<int64_t> TransposeOp::getPermutation(Adaptor op, int64_t rank) {
  if (auto p = op.getPerm())
    return SmallVector<int64_t>(p->begin(), p->end());
  SmallVector<int64_t> perm;
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  return perm;
}

LogicalResult TransposeOp::inferShapes(ShapeQuery &q, Adaptor op,
                                       Shapes &shapes) {
  Type elem = q.elementType(op.getData());
  auto in = q.dims(op.getData());
  if (auto p = op.getPerm()) {
    llvm::SmallSet<int64_t, 8> seen;
    for (int64_t d : *p)
      if (d < 0 || d >= (int64_t)p->size() || !seen.insert(d).second)
        return q.fail("perm is not a permutation");
    if (in && p->size() != in->size())
      return q.fail("perm has " + std::to_string(p->size()) +
                    " entries for rank " + std::to_string(in->size()));
  }
  if (!in)
    return result(shapes,
                  unknownDims(op.getPerm() ? std::optional<int64_t>(
                                                 op.getPerm()->size())
                                           : std::nullopt),
                  elem);
  Dims out;
  for (int64_t p : getPermutation(op, in->size()))
    out.push_back((*in)[p]);
  return result(shapes, out, elem);
}

FailureOr<SliceWindow> SliceOp::getWindow(ShapeQuery &q, Adaptor op,
                                          ArrayRef<int64_t> in,
                                          bool &known) {
  known = false;
  std::optional<Dims> starts, ends, axes, steps;
  if (op.getStartsAttr() || op.getEndsAttr()) {
    // Before opset 10 the bounds are attributes.
    if (!op.getStartsAttr() || !op.getEndsAttr())
      return SliceWindow();
    starts = Dims(op.getStartsAttr()->begin(), op.getStartsAttr()->end());
    ends = Dims(op.getEndsAttr()->begin(), op.getEndsAttr()->end());
    axes = intsOrAttr(q, Value(), op.getAxesAttr());
    steps = Dims();
  } else {
    starts = q.ints(op.getStarts());
    ends = q.ints(op.getEnds());
    axes = intsOrAttr(q, op.getAxes(), std::nullopt);
    steps = intsOrAttr(q, op.getSteps(), std::nullopt);
  }
  if (!starts || !ends || !axes || !steps)
    return SliceWindow();
  std::string why;
  auto w = computeSliceWindow(in, *starts, *ends, *axes, *steps, why);
  if (failed(w)) {
    (void)q.fail(why);
    return failure();
  }
  known = true;
  return w;
}

LogicalResult SliceOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  Type elem = q.elementType(op.getData());
  auto in = q.dims(op.getData());
  if (!in)
    return unranked(shapes, elem);
  bool known;
  auto w = getWindow(q, op, *in, known);
  if (failed(w))
    return failure();
  return result(shapes, known ? w->size : *unknownDims(in->size()), elem);
}

LogicalResult ConcatOp::inferShapes(ShapeQuery &q, Adaptor op,
                                    Shapes &shapes) {
  ValueRange inputs = op.getInputs();
  if (inputs.empty())
    return q.fail("needs at least one input");
  Type elem = q.elementType(inputs[0]);
  std::optional<Dims> out;
  int64_t axis = 0;
  bool allKnown = true;
  for (Value v : inputs) {
    auto s = q.dims(v);
    if (!s) {
      allKnown = false;
      continue;
    }
    if (!out) {
      auto a = normalizeAxis(op.getAxis(), s->size());
      if (!a)
        return q.fail("axis " + std::to_string(op.getAxis()) +
                      " is out of range for rank " + std::to_string(s->size()));
      axis = *a;
      out = *s;
      continue;
    }
    if (s->size() != out->size())
      return q.fail("inputs differ in rank");
    for (int64_t d = 0, e = s->size(); d < e; ++d) {
      int64_t &o = (*out)[d];
      if (d == axis) {
        // A sum past int64 (a hostile model) is as good as unknown.
        int64_t sum;
        o = isStatic(o) && isStatic((*s)[d]) &&
                    !llvm::AddOverflow(o, (*s)[d], sum)
                ? sum
                : ShapedType::kDynamic;
      } else if (!isStatic(o)) {
        o = (*s)[d];
      } else if (isStatic((*s)[d]) && (*s)[d] != o) {
        return q.fail("inputs differ in dimension " + std::to_string(d) +
                      " outside the concat axis");
      }
    }
  }
  if (out && !allKnown)
    (*out)[axis] = ShapedType::kDynamic;
  return result(shapes, out, elem);
}

LogicalResult SplitOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  Type elem = q.elementType(op.getInput());
  // The number of parts: the op's results, `num_outputs` or the sizes.
  std::optional<int64_t> numParts;
  if (q.getNumResults())
    numParts = *q.getNumResults();
  else if (op.getNumOutputs())
    numParts = *op.getNumOutputs();
  else if (op.getSplitAttr())
    numParts = op.getSplitAttr()->size();
  else if (auto s = q.dims(op.getSplit()); s && s->size() == 1)
    numParts = (*s)[0];
  if (!numParts || ShapedType::isDynamic(*numParts) || *numParts < 1)
    return q.fail("the number of outputs is not known");
  int64_t n = *numParts;
  auto in = q.dims(op.getInput());
  auto results = [&](std::optional<ArrayRef<int64_t>> sizes, int64_t axis) {
    for (int64_t i = 0; i < n; ++i) {
      if (!in) {
        push(shapes, std::nullopt, elem);
        continue;
      }
      Dims d(*in);
      d[axis] = sizes ? (*sizes)[i] : ShapedType::kDynamic;
      push(shapes, d, elem);
    }
    return success();
  };
  if (!in)
    return results(std::nullopt, 0);
  auto axis = normalizeAxis(op.getAxis(), in->size());
  if (!axis)
    return q.fail("axis " + std::to_string(op.getAxis()) +
                  " is out of range for rank " + std::to_string(in->size()));
  std::optional<Dims> given;
  if (auto attr = op.getSplitAttr()) {
    given = Dims(attr->begin(), attr->end());
  } else if (!isa<NoneType>(op.getSplit().getType())) {
    given = q.ints(op.getSplit());
    if (!given)
      return results(std::nullopt, *axis);
  } else if (!isStatic((*in)[*axis])) {
    return results(std::nullopt, *axis);
  }
  std::string why;
  auto sizes = computeSplitSizes(
      given ? std::optional<ArrayRef<int64_t>>(*given) : std::nullopt, n,
      op.getNumOutputs().has_value(), (*in)[*axis], why);
  if (failed(sizes))
    return q.fail(why);
  return results(*sizes, *axis);
}

LogicalResult GatherOp::inferShapes(ShapeQuery &q, Adaptor op,
                                    Shapes &shapes) {
  Type elem = q.elementType(op.getData());
  auto data = q.dims(op.getData()), idx = q.dims(op.getIndices());
  if (!data)
    return unranked(shapes, elem);
  if (data->empty())
    return q.fail("data must have rank >= 1");
  auto axis = normalizeAxis(op.getAxis(), data->size());
  if (!axis)
    return q.fail("axis " + std::to_string(op.getAxis()) +
                  " is out of range for rank " + std::to_string(data->size()));
  if (!idx)
    return unranked(shapes, elem);
  Dims out(ArrayRef<int64_t>(*data).take_front(*axis));
  out.append(idx->begin(), idx->end());
  out.append(data->begin() + *axis + 1, data->end());
  return result(shapes, out, elem);
}

LogicalResult ExpandOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  Type elem = q.elementType(op.getInput());
  auto in = q.dims(op.getInput());
  auto target = q.ints(op.getShape());
  if (!in || !target)
    return unranked(shapes, elem);
  if (llvm::any_of(*target, [](int64_t d) { return d < 0; }))
    return q.fail("invalid shape [" + list(*target) + "]");
  auto out = broadcastShapes({*in, *target});
  if (failed(out))
    return q.fail("cannot broadcast " + str(op.getInput().getType()) +
                  " to the shape [" + list(*target) + "]");
  return result(shapes, *out, elem);
}

std::pair<int64_t, int64_t> ShapeOp::getRange(Adaptor op, int64_t rank) {
  int64_t start = op.getStart() ? *op.getStart() : 0;
  int64_t end = op.getEnd() ? *op.getEnd() : rank;
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  return {start, std::max(start, end)};
}

LogicalResult ShapeOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  Type i64 = IntegerType::get(op.getData().getContext(), 64);
  auto rank = q.rank(op.getData());
  int64_t n = ShapedType::kDynamic;
  if (rank) {
    auto [start, end] = getRange(op, *rank);
    n = end - start;
  }
  return result(shapes, Dims{n}, i64);
}

LogicalResult ConstantOp::inferShapes(ShapeQuery &q, Adaptor op,
                                      Shapes &shapes) {
  // The context, from whichever value attribute the op has.
  Attribute any;
  for (Attribute a :
       {Attribute(op.getValueAttr()), Attribute(op.getValueFloatAttr()),
        Attribute(op.getValueFloatsAttr()), Attribute(op.getValueIntAttr()),
        Attribute(op.getValueIntsAttr()), Attribute(op.getValueStringAttr()),
        Attribute(op.getValueStringsAttr())})
    if (a && !any)
      any = a;
  if (!any) {
    push(shapes, std::nullopt, Type());
    return success();
  }
  MLIRContext *ctx = any.getContext();
  Type f32 = Float32Type::get(ctx), i64 = IntegerType::get(ctx, 64);
  if (auto v = op.getValue()) {
    auto t = cast<ShapedType>(v->getType());
    push(shapes, t.getShape(), t.getElementType());
  } else if (op.getValueFloat()) {
    push(shapes, Dims{}, f32);
  } else if (auto fs = op.getValueFloats()) {
    push(shapes, Dims{(int64_t)fs->size()}, f32);
  } else if (op.getValueInt()) {
    push(shapes, Dims{}, i64);
  } else if (auto is = op.getValueInts()) {
    push(shapes, Dims{(int64_t)is->size()}, i64);
  } else if (op.getValueString()) {
    push(shapes, Dims{}, StringType::get(ctx));
  } else if (auto ss = op.getValueStrings()) {
    push(shapes, Dims{(int64_t)ss->size()}, StringType::get(ctx));
  } else {
    push(shapes, std::nullopt, Type());
  }
  return success();
}

LogicalResult ConstantOfShapeOp::inferShapes(ShapeQuery &q, Adaptor op,
                                             Shapes &shapes) {
  Type elem = op.getValue() ? op.getValue()->getElementType()
                            : Float32Type::get(op.getInput().getContext());
  if (auto dims = q.ints(op.getInput())) {
    if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
      return q.fail("negative dimension in [" + list(*dims) + "]");
    return result(shapes, *dims, elem);
  }
  auto s = q.dims(op.getInput());
  std::optional<int64_t> rank;
  if (s && s->size() == 1 && isStatic((*s)[0]))
    rank = (*s)[0];
  return result(shapes, unknownDims(rank), elem);
}

// Recurrent layers -----------------------------------------------------------

namespace {
/// Y [T, D, B, H] (layout 0) or [B, T, D, H], the states [D, B, H] or
/// [B, D, H]; `numStates` state outputs (Y_h, and Y_c for LSTM).
template <typename AdaptorT>
LogicalResult inferRecurrent(ShapeQuery &q, AdaptorT op, int numStates,
                             Shapes &shapes) {
  Type elem = q.elementType(op.getX());
  int64_t d = op.getDirection() == "bidirectional" ? 2 : 1;
  int64_t t = ShapedType::kDynamic, b = ShapedType::kDynamic,
          h = ShapedType::kDynamic;
  bool layout1 = op.getLayout() == 1;
  if (auto x = q.dims(op.getX()); x && x->size() == 3) {
    t = (*x)[layout1 ? 1 : 0];
    b = (*x)[layout1 ? 0 : 1];
  }
  if (op.getHiddenSize())
    h = *op.getHiddenSize();
  else if (auto r = q.dims(op.getR()); r && r->size() == 3)
    h = (*r)[2];
  push(shapes, layout1 ? Dims{b, t, d, h} : Dims{t, d, b, h}, elem);
  for (int i = 0; i < numStates; ++i)
    push(shapes, layout1 ? Dims{b, d, h} : Dims{d, b, h}, elem);
  return success();
}
} // namespace

LogicalResult LSTMOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  return inferRecurrent(q, op, 2, shapes);
}
LogicalResult GRUOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  return inferRecurrent(q, op, 1, shapes);
}
LogicalResult RNNOp::inferShapes(ShapeQuery &q, Adaptor op, Shapes &shapes) {
  return inferRecurrent(q, op, 1, shapes);
}

#include "lstm-opt/Dialect/ONNX/IR/ONNXInterfaces.cpp.inc"

//===- ONNXUtils.cpp - reading and making onnx constants and glue ---------===//

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::onnx;

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

/// The raw little-endian bytes of a non-splat or splat attribute, expanded.
static std::optional<std::vector<char>> rawBytes(ElementsAttr attr,
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

std::optional<F32Tensor> onnx::getConstantF32(ElementsAttr attr) {
  if (!attr || !attr.getElementType().isF32())
    return std::nullopt;
  auto bytes = rawBytes(attr, 4);
  if (!bytes)
    return std::nullopt;
  F32Tensor t;
  auto shape = cast<ShapedType>(attr.getType()).getShape();
  t.shape.assign(shape.begin(), shape.end());
  t.values.resize(bytes->size() / 4);
  std::memcpy(t.values.data(), bytes->data(), bytes->size());
  return t;
}

std::optional<F32Tensor> onnx::getConstantF32(Value v) {
  return getConstantF32(getConstantAttr(v));
}

std::optional<SmallVector<int64_t>> onnx::getConstantInts(Value v) {
  v = skipIdentities(v);
  if (auto c = v.getDefiningOp<ConstantOp>()) {
    if (auto i = c.getValueInt())
      return SmallVector<int64_t>{*i};
    if (auto is = c.getValueInts())
      return SmallVector<int64_t>(is->begin(), is->end());
  }
  ElementsAttr attr = getConstantAttr(v);
  if (!attr)
    return std::nullopt;
  Type e = attr.getElementType();
  if (!e.isInteger(64) && !e.isInteger(32))
    return std::nullopt;
  size_t w = e.isInteger(64) ? 8 : 4;
  auto bytes = rawBytes(attr, w);
  if (!bytes)
    return std::nullopt;
  SmallVector<int64_t> out;
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

ConstantBuilder::ConstantBuilder(func::FuncOp func) : func(func) {
  func.walk([&](InitializerOp init) { names.insert(init.getName()); });
}

Value ConstantBuilder::create(Location loc, StringRef name,
                              RankedTensorType type, ArrayRef<char> bytes) {
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
  ElementsAttr value;
  if (bytes.size() <= 64) {
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  } else {
    size_t align = type.getElementTypeBitWidth() / 8;
    value = DenseResourceElementsAttr::get(
        type, unique,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, align));
  }
  Value v = InitializerOp::create(b, loc, type, unique, value, false);
  byContent.emplace(std::move(key), v);
  return v;
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

void onnx::eraseDeadOps(ArrayRef<Operation *> ops,
                        function_ref<void(Operation *)> onErase) {
  llvm::SetVector<Operation *> work(ops.begin(), ops.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!op->use_empty() || !isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::IsTerminator>())
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

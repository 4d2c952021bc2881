//===- StreamToSequence.cpp - onnx-stream-to-sequence ---------------------===//
//
// A model called once per chunk with its state passed in and out, rewritten
// into one that takes N chunks in one call: the graph's body inside an ONNX
// Loop of N iterations, the states loop-carried, the other outputs stacked
// as scan outputs. See docs/passes/onnx-stream-to-sequence.md.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/IR/ONNXShapeRules.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/ONNX/Utils/StateSlots.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_ONNXSTREAMTOSEQUENCEPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;

namespace {

namespace od = lstm_opt::onnx;

constexpr llvm::StringLiteral kPass = "onnx-stream-to-sequence";

using onnx::StateSlot;
using onnx::StateSlots;

/// The initial-state slot `use` is, if it is one of a recurrent onnx op.
std::optional<StateSlot> initialSlot(OpOperand &use) {
  Operation *op = use.getOwner();
  if (!isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op))
    return std::nullopt;
  if (use.getOperandNumber() == 5)
    return StateSlot(op, 0);
  if (isa<od::LSTMOp>(op) && use.getOperandNumber() == 6)
    return StateSlot(op, 1);
  return std::nullopt;
}

/// The final-state slot `r` is, if it is a recurrent onnx op's Y_h or Y_c.
std::optional<StateSlot> finalSlot(OpResult r) {
  Operation *op = r.getOwner();
  if (!isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op))
    return std::nullopt;
  if (r.getResultNumber() == 1)
    return StateSlot(op, 0);
  if (isa<od::LSTMOp>(op) && r.getResultNumber() == 2)
    return StateSlot(op, 1);
  return std::nullopt;
}

/// A state input and output may differ in how much of their shape the model
/// declares (silero-vad: [2, 1, 128] in, [2, batch, 128] out).
bool compatible(Type a, Type b) {
  return getElementTypeOrSelf(a) == getElementTypeOrSelf(b) &&
         succeeded(verifyCompatibleShape(a, b));
}

StringRef argName(func::FuncOp f, unsigned i) {
  if (auto s = f.getArgAttrOfType<StringAttr>(i, od::attrs::kName))
    return s.getValue();
  return {};
}
StringRef resultName(func::FuncOp f, unsigned i) {
  if (auto s = f.getResultAttrOfType<StringAttr>(i, od::attrs::kName))
    return s.getValue();
  return {};
}

/// The ONNX operator type of `op` when it is of the default domain (the
/// rules below are those operators'); "" otherwise.
StringRef defaultDomainType(Operation *op) {
  if (auto n = dyn_cast<od::NodeOp>(op);
      n && !n.getDomain().empty() && n.getDomain() != "ai.onnx")
    return {};
  return od::getOnnxOpType(op);
}

/// An integer attribute of a typed op or an onnx.node.
std::optional<int64_t> intAttr(Operation *op, StringRef name) {
  Attribute a = op->getAttr(name);
  if (auto n = dyn_cast<od::NodeOp>(op); n && !a && n.getAttrsAttr())
    a = n.getAttrsAttr().get(name);
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return i.getInt();
  return std::nullopt;
}

/// An integer-list attribute (DenseI64ArrayAttr or ArrayAttr of integers).
std::optional<SmallVector<int64_t>> intsAttr(Operation *op, StringRef name) {
  Attribute a = op->getAttr(name);
  if (auto n = dyn_cast<od::NodeOp>(op); n && !a && n.getAttrsAttr())
    a = n.getAttrsAttr().get(name);
  if (auto d = dyn_cast_or_null<DenseI64ArrayAttr>(a))
    return SmallVector<int64_t>(d.asArrayRef());
  if (auto arr = dyn_cast_or_null<ArrayAttr>(a)) {
    SmallVector<int64_t> out;
    for (Attribute e : arr) {
      auto i = dyn_cast<IntegerAttr>(e);
      if (!i)
        return std::nullopt;
      out.push_back(i.getInt());
    }
    return out;
  }
  return std::nullopt;
}

/// Where each element of a value comes from, for data movement only: the
/// ids of the elements of the leaves it was moved from (checkRoundTrip).
struct IdTensor {
  SmallVector<int64_t> shape;
  std::vector<int64_t> ids;
};

constexpr int64_t kMaxRoundTripElements = int64_t(1) << 20;

/// Evaluates `v` as data movement over `leaves`; std::nullopt when an op on
/// the way is not one (or the sizes are too large).
std::optional<IdTensor> moveIds(Value v, DenseMap<Value, IdTensor> &env,
                                int depth = 0) {
  if (auto it = env.find(v); it != env.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  auto rt = dyn_cast<RankedTensorType>(v.getType());
  if (!op || depth > 64 || !rt)
    return std::nullopt;
  StringRef type = defaultDomainType(op);
  // Arity as the operators define it (an onnx.node may hold any).
  if ((type == "Gather" && op->getNumOperands() != 2) ||
      (type == "Slice" && op->getNumOperands() < 3) ||
      op->getNumOperands() == 0)
    return std::nullopt;
  auto in = [&](unsigned i) -> std::optional<IdTensor> {
    if (i >= op->getNumOperands())
      return std::nullopt;
    return moveIds(op->getOperand(i), env, depth + 1);
  };
  auto strides = [](ArrayRef<int64_t> s) {
    SmallVector<int64_t> st(s.size(), 1);
    for (int64_t i = (int64_t)s.size() - 2; i >= 0; --i)
      st[i] = st[i + 1] * s[i + 1];
    return st;
  };
  // Index i of `shape` -> its multi-index.
  auto unravel = [](int64_t i, ArrayRef<int64_t> s, SmallVectorImpl<int64_t> &idx) {
    idx.assign(s.size(), 0);
    for (int64_t d = (int64_t)s.size() - 1; d >= 0; --d) {
      idx[d] = s[d] ? i % s[d] : 0;
      i = s[d] ? i / s[d] : 0;
    }
  };
  // A constant that is all zeros (x + 0, x - 0) or all ones (x * 1, x / 1):
  // the other operand, as it is.
  auto allEqual = [](Value c, double want) {
    if (auto f = od::getConstantF32(od::skipIdentities(c)))
      return llvm::all_of(f->values, [&](float x) { return x == want; });
    Value src = od::skipIdentities(c);
    if (auto cast = src.getDefiningOp<od::CastOp>())
      src = cast.getInput();
    if (auto ints = od::getConstantInts(src))
      return llvm::all_of(*ints, [&](int64_t x) { return x == (int64_t)want; });
    return false;
  };
  // The result's shape where the op's own rule gives it; the declared type
  // must agree where it is static.
  SmallVector<int64_t> shape;
  bool shapeFromType = false;
  if (rt.hasStaticShape()) {
    shape.assign(rt.getShape().begin(), rt.getShape().end());
    shapeFromType = true;
  }
  IdTensor out;
  // The result's shape (checked against a static declared type); returns
  // its element count.
  auto setShape = [&](SmallVector<int64_t> computed) -> std::optional<int64_t> {
    if (shapeFromType && computed != shape)
      return std::nullopt;
    shape = computed;
    out.shape = shape;
    int64_t count = 1;
    for (int64_t d : shape)
      if (d < 0 || llvm::MulOverflow(count, d, count) ||
          count > kMaxRoundTripElements)
        return std::nullopt;
    return count;
  };
  std::optional<IdTensor> r;
  if ((type == "Add" || type == "Sub" || type == "Mul" || type == "Div") &&
      op->getNumOperands() == 2) {
    double unit = type == "Add" || type == "Sub" ? 0.0 : 1.0;
    int keep = allEqual(op->getOperand(1), unit)   ? 0
               : (type == "Add" || type == "Mul") &&
                       allEqual(op->getOperand(0), unit)
                   ? 1
                   : -1;
    if (keep < 0 || !(r = in(keep)))
      return std::nullopt;
    // Only where the constant does not broadcast the value to more.
    if (shapeFromType && SmallVector<int64_t>(r->shape) != shape)
      return std::nullopt;
    env[v] = *r;
    return r;
  }
  if (type == "Identity" || type == "Squeeze" || type == "Unsqueeze" ||
      type == "Reshape" || type == "Flatten" ||
      (type == "Cast" &&
       getElementTypeOrSelf(op->getOperand(0).getType()) == rt.getElementType())) {
    if (!(r = in(0)))
      return std::nullopt;
    if (!shapeFromType) {
      // Identity, Cast: the input's shape; Squeeze/Unsqueeze: by the axes.
      shape = r->shape;
      if (type == "Squeeze" || type == "Unsqueeze") {
        std::optional<SmallVector<int64_t>> axes;
        if (op->getNumOperands() > 1 && !isa<NoneType>(op->getOperand(1).getType()))
          axes = od::getConstantInts(op->getOperand(1));
        else
          axes = intsAttr(op, "axes_attr");
        if (!axes)
          return std::nullopt;
        int64_t rank = (int64_t)r->shape.size() +
                       (type == "Unsqueeze" ? (int64_t)axes->size() : 0);
        SmallVector<int64_t> ax;
        for (int64_t x : *axes) {
          auto nx = od::normalizeAxis(x, rank);
          if (!nx)
            return std::nullopt;
          ax.push_back(*nx);
        }
        shape.clear();
        if (type == "Squeeze") {
          for (int64_t d = 0; d < (int64_t)r->shape.size(); ++d)
            if (!llvm::is_contained(ax, d))
              shape.push_back(r->shape[d]);
        } else {
          for (int64_t d = 0, k = 0; d < rank; ++d)
            shape.push_back(llvm::is_contained(ax, d) ? 1 : r->shape[k++]);
        }
      } else if (type != "Identity" && type != "Cast") {
        return std::nullopt;
      }
    }
    out = IdTensor{shape, r->ids};
  } else if (type == "Transpose") {
    if (!(r = in(0)))
      return std::nullopt;
    SmallVector<int64_t> perm;
    if (auto p = intsAttr(op, "perm"))
      perm = *p;
    else
      for (int64_t i = (int64_t)r->shape.size(); i-- > 0;)
        perm.push_back(i);
    if (perm.size() != r->shape.size())
      return std::nullopt;
    SmallVector<int64_t> permuted;
    for (int64_t p : perm) {
      if (p < 0 || p >= (int64_t)r->shape.size())
        return std::nullopt;
      permuted.push_back(r->shape[p]);
    }
    if (!setShape(permuted))
      return std::nullopt;
    int64_t count = (int64_t)r->ids.size();
    auto st = strides(r->shape);
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < count; ++i) {
      unravel(i, shape, idx);
      int64_t src = 0;
      for (size_t d = 0; d < perm.size(); ++d)
        src += idx[d] * st[perm[d]];
      out.ids.push_back(r->ids[src]);
    }
  } else if (type == "Concat") {
    SmallVector<IdTensor> parts;
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      if (!(r = in(i)) || (!parts.empty() && r->shape.size() != parts[0].shape.size()))
        return std::nullopt;
      parts.push_back(*r);
    }
    if (parts.empty())
      return std::nullopt;
    auto axis = od::normalizeAxis(intAttr(op, "axis").value_or(0),
                                  (int64_t)parts[0].shape.size());
    if (!axis)
      return std::nullopt;
    SmallVector<int64_t> joined = parts[0].shape;
    joined[*axis] = 0;
    for (IdTensor &p : parts) {
      for (size_t d = 0; d < joined.size(); ++d)
        if ((int64_t)d != *axis && p.shape[d] != joined[d])
          return std::nullopt;
      joined[*axis] += p.shape[*axis];
    }
    auto counted = setShape(joined);
    if (!counted)
      return std::nullopt;
    int64_t count = *counted;
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < count; ++i) {
      unravel(i, shape, idx);
      int64_t k = idx[*axis];
      for (IdTensor &p : parts) {
        if (k < p.shape[*axis]) {
          idx[*axis] = k;
          auto st = strides(p.shape);
          int64_t src = 0;
          for (size_t d = 0; d < idx.size(); ++d)
            src += idx[d] * st[d];
          out.ids.push_back(p.ids[src]);
          break;
        }
        k -= p.shape[*axis];
      }
    }
  } else if (type == "Gather" || type == "Slice") {
    if (!(r = in(0)))
      return std::nullopt;
    int64_t rank = (int64_t)r->shape.size();
    // Per input axis, the source index of each output index (Slice), or
    // the gathered axis (Gather, scalar or 1-D constant indices).
    SmallVector<SmallVector<int64_t>> pick(rank);
    for (int64_t d = 0; d < rank; ++d)
      for (int64_t k = 0; k < r->shape[d]; ++k)
        pick[d].push_back(k);
    SmallVector<int64_t> outAxisOf(rank);
    for (int64_t d = 0; d < rank; ++d)
      outAxisOf[d] = d;
    int64_t dropped = -1;
    if (type == "Gather") {
      auto axis = od::normalizeAxis(intAttr(op, "axis").value_or(0), rank);
      auto ind = od::getConstantInts(op->getOperand(1));
      auto indRank = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
      if (!axis || !ind || !indRank || indRank.getRank() > 1)
        return std::nullopt;
      pick[*axis].clear();
      for (int64_t k : *ind) {
        int64_t kk = k < 0 ? k + r->shape[*axis] : k;
        if (kk < 0 || kk >= r->shape[*axis])
          return std::nullopt;
        pick[*axis].push_back(kk);
      }
      if (indRank.getRank() == 0)
        dropped = *axis;
    } else {
      auto starts = od::getConstantInts(op->getOperand(1));
      auto ends = od::getConstantInts(op->getOperand(2));
      std::optional<SmallVector<int64_t>> axes, steps;
      if (op->getNumOperands() > 3 && !isa<NoneType>(op->getOperand(3).getType()))
        axes = od::getConstantInts(op->getOperand(3));
      if (op->getNumOperands() > 4 && !isa<NoneType>(op->getOperand(4).getType()))
        steps = od::getConstantInts(op->getOperand(4));
      if (!starts || !ends || starts->size() != ends->size() ||
          (axes && axes->size() != starts->size()) ||
          (steps && steps->size() != starts->size()))
        return std::nullopt;
      for (size_t i = 0; i < starts->size(); ++i) {
        auto ax = od::normalizeAxis(axes ? (*axes)[i] : (int64_t)i, rank);
        int64_t step = steps ? (*steps)[i] : 1;
        if (!ax || step == 0)
          return std::nullopt;
        int64_t dim = r->shape[*ax];
        auto clampIdx = [&](int64_t x, bool isEnd) {
          if (x < 0)
            x += dim;
          if (step > 0)
            return std::clamp<int64_t>(x, 0, dim);
          return std::clamp<int64_t>(x, -1, dim - 1);
          (void)isEnd;
        };
        int64_t s = clampIdx((*starts)[i], false), e = clampIdx((*ends)[i], true);
        pick[*ax].clear();
        for (int64_t k = s; step > 0 ? k < e : k > e; k += step)
          pick[*ax].push_back(k);
      }
    }
    // Output shape: the picks, minus the dropped axis.
    SmallVector<int64_t> expect;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dropped)
        expect.push_back((int64_t)pick[d].size());
    auto counted = setShape(expect);
    if (!counted)
      return std::nullopt;
    int64_t count = *counted;
    auto st = strides(r->shape);
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < count; ++i) {
      unravel(i, shape, idx);
      int64_t src = 0, o = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t k = d == dropped ? pick[d][0] : pick[d][idx[o++]];
        src += k * st[d];
      }
      out.ids.push_back(r->ids[src]);
    }
  } else {
    return std::nullopt;
  }
  int64_t count = 1;
  for (int64_t d : out.shape)
    if (d < 0 || llvm::MulOverflow(count, d, count) ||
        count > kMaxRoundTripElements)
      return std::nullopt;
  if ((int64_t)out.ids.size() != count)
    return std::nullopt;
  env[v] = out;
  return out;
}

/// The batched form of a streaming graph: N chunks as one computation.
///
/// A value of the per-chunk graph is invariant (it depends on constants and
/// state inputs only: computed once, as it is), batched (it depends on a
/// chunk input: the N chunks' values at once, concatenated chunk-major
/// along one of its axes, its batch axis: a chunk input [b, ...] becomes
/// [N*b, ...]), or, on the way to a state output, final (computed once from
/// the recurrent layers' final states). Each recurrent layer runs once over
/// the N chunks' steps in order: its X, batched along its batch axis
/// ([T, N*b, I]), is reordered time-major into [N*T, b, I], its initial
/// states are the invariant ones, its Y comes back batched ([T, D, N*b, H])
/// and so does its per-chunk Y_h (Y's last step of each chunk); its final
/// Y_h/Y_c feed the state outputs. Every other op reads batched values only
/// along axes other than their batch axis (per-op rules below), so that it
/// computes the N chunks independently, as N calls would.
class ChunkBatcher {
public:
  struct Counts {
    int64_t batchedOps = 0, layers = 0;
  };
  ChunkBatcher(func::FuncOp f, int64_t n,
               ArrayRef<std::pair<unsigned, unsigned>> pairs)
      : f(f), n(n), pairs(pairs), b(f.getContext()),
        consts(std::make_unique<od::ConstantBuilder>(f)) {}

  /// Rewrites `f`; on failure `f` is unchanged and `why` says why.
  LogicalResult run(std::string &why);
  int64_t batchedOps = 0, layers = 0;

private:
  struct Batched {
    Value v;
    int64_t axis; ///< -1: invariant (the original value)
  };
  FailureOr<Batched> evalB(Value v);
  FailureOr<Value> evalF(Value v);
  FailureOr<Operation *> layer(Operation *l);
  FailureOr<int64_t> rule(Operation *op, ArrayRef<Batched> in);
  LogicalResult fail(Operation *op, const Twine &msg) {
    if (why.empty())
      why = (op ? "'" + od::getNodeName(op) + "' (" +
                      od::getOnnxOpType(op).str() + "): "
                : std::string()) +
            msg.str();
    return failure();
  }
  /// `t` with dimension `axis` multiplied by n; null if not static.
  RankedTensorType grown(Type t, int64_t axis) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape() || axis < 0 || axis >= rt.getRank())
      return {};
    SmallVector<int64_t> s(rt.getShape());
    // Sizes a model cannot have (overflowing, or past 2^48 elements) are
    // refused rather than wrapped.
    int64_t count = 1;
    if (llvm::MulOverflow(s[axis], n, s[axis]))
      return {};
    for (int64_t d : s)
      if (llvm::MulOverflow(count, d, count) || count > (int64_t(1) << 48))
        return {};
    return RankedTensorType::get(s, rt.getElementType());
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    auto et = cast<ShapedType>(v.getType()).getElementType();
    Value s = consts->getI64(loc, "stream_shape", {(int64_t)shape.size()},
                             shape);
    auto r = od::ReshapeOp::create(b, loc, RankedTensorType::get(shape, et),
                                   v, s);
    r->removeAttr("allowzero"); // the default; opsets before 14 lack it
    return r;
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    auto rt = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> s;
    for (int64_t p : perm)
      s.push_back(rt.getDimSize(p));
    return od::TransposeOp::create(b, loc,
                                   RankedTensorType::get(s, rt.getElementType()),
                                   v, b.getDenseI64ArrayAttr(perm));
  }

  func::FuncOp f;
  int64_t n;
  ArrayRef<std::pair<unsigned, unsigned>> pairs;
  OpBuilder b;
  Location loc = UnknownLoc::get(f.getContext());
  std::unique_ptr<od::ConstantBuilder> consts;
  std::string why;
  DenseSet<Value> variant, stateDep;
  LogicalResult checkRoundTrip();
  DenseMap<Value, Batched> memoB;
  DenseMap<Value, Value> memoF;
  DenseMap<Operation *, Operation *> newLayer;
  DenseMap<unsigned, Value> mergedInput;

public:
  /// Each chunk input's batch axis (0 unless set).
  DenseMap<unsigned, int64_t> inputAxis;
};

bool isRecurrent(Operation *op) { return isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op); }

FailureOr<Operation *> ChunkBatcher::layer(Operation *l) {
  if (auto it = newLayer.find(l); it != newLayer.end())
    return it->second;
  auto dir = l->getAttrOfType<StringAttr>("direction");
  if (dir && dir.getValue() != "forward")
    return fail(l, "a " + dir.getValue() +
                       " layer does not run the chunks' steps in order");
  if (intAttr(l, "layout").value_or(0) != 0)
    return fail(l, "a batch-major layer (layout 1)");
  if (l->getNumOperands() > 4 && !isa<NoneType>(l->getOperand(4).getType()))
    return fail(l, "a layer with sequence_lens");
  // Initial states: invariant (computed from the state inputs once).
  for (unsigned i = 5; i < 7 && i < l->getNumOperands(); ++i)
    if (variant.contains(l->getOperand(i)))
      return fail(l, "its initial state depends on a chunk input");
  for (unsigned i = 1; i < 4; ++i)
    if (variant.contains(l->getOperand(i)))
      return fail(l, "its weights depend on a chunk input");
  auto x = evalB(l->getOperand(0));
  if (failed(x))
    return failure();
  if (x->axis != 1)
    return fail(l, "its input is not batched along its batch axis");
  auto xt = cast<RankedTensorType>(x->v.getType());
  int64_t t = xt.getDimSize(0), nb = xt.getDimSize(1), in = xt.getDimSize(2);
  int64_t bb = nb / n;
  // [T, N*b, I] -> [N*T, b, I], time-major over the chunks.
  Value seq = t == 1 ? reshape(x->v, {n, bb, in})
                     : reshape(transpose(reshape(x->v, {t, n, bb, in}),
                                         {1, 0, 2, 3}),
                               {n * t, bb, in});
  IRMapping map;
  map.map(l->getOperand(0), seq);
  Operation *nl = b.clone(*l, map);
  auto yh = dyn_cast<RankedTensorType>(l->getResult(1).getType());
  if (!yh || !yh.hasStaticShape())
    return fail(l, "its Y_h has no static shape");
  int64_t d = yh.getDimSize(0), h = yh.getDimSize(2);
  nl->getResult(0).setType(
      RankedTensorType::get({n * t, d, bb, h}, yh.getElementType()));
  newLayer[l] = nl;
  ++layers;
  return nl;
}

FailureOr<ChunkBatcher::Batched> ChunkBatcher::evalB(Value v) {
  if (!variant.contains(v)) {
    if (stateDep.contains(v)) {
      return fail(v.getDefiningOp(), "a chunk's computation reads the state "
                                     "other than as a recurrent layer's "
                                     "initial state");
    }
    return Batched{v, -1};
  }
  if (auto it = memoB.find(v); it != memoB.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto it = mergedInput.find(arg.getArgNumber());
    if (it == mergedInput.end()) {
      return fail(nullptr, "a state input is read by a chunk's computation");
    }
    return memoB[v] = Batched{it->second, inputAxis.lookup(it->first)};
  }
  Operation *op = v.getDefiningOp();
  unsigned r = cast<OpResult>(v).getResultNumber();
  if (isRecurrent(op)) {
    auto nl = layer(op);
    if (failed(nl))
      return failure();
    Value y = (*nl)->getResult(0);
    auto yt = cast<RankedTensorType>(y.getType());
    int64_t t = yt.getDimSize(0) / n, d = yt.getDimSize(1),
            bb = yt.getDimSize(2), h = yt.getDimSize(3);
    Value y5 = reshape(y, {n, t, d, bb, h});
    if (r == 0) // per chunk Y [T, D, b, H], batch axis 2
      return memoB[v] = Batched{
                 reshape(transpose(y5, {1, 2, 0, 3, 4}), {t, d, n * bb, h}), 2};
    if (r == 1) { // per chunk Y_h = Y's last step [D, b, H], batch axis 1
      Value last = od::createGatherIndex(b, loc, *consts, y5, 1, t - 1);
      return memoB[v] = Batched{
                 reshape(transpose(last, {1, 0, 2, 3}), {d, n * bb, h}), 1};
    }
    return fail(op,
                "each chunk's cell state Y_c is read by a chunk's output (a "
                "layer gives only the last one)");
  }
  if (op->getNumRegions()) {
    return fail(op, "an op with subgraphs");
  }
  SmallVector<Batched> in;
  for (Value o : op->getOperands()) {
    auto e = evalB(o);
    if (failed(e))
      return failure();
    in.push_back(*e);
  }
  auto axis = rule(op, in);
  if (failed(axis))
    return failure();
  IRMapping map;
  for (auto [o, e] : llvm::zip(op->getOperands(), in))
    map.map(o, e.v);
  Operation *c = b.clone(*op, map);
  for (OpResult res : c->getResults()) {
    RankedTensorType t = grown(res.getType(), *axis);
    if (!t) {
      return fail(op, "a result without a static shape");
    }
    res.setType(t);
  }
  ++batchedOps;
  for (auto [o, nr] : llvm::zip(op->getResults(), c->getResults()))
    memoB[o] = Batched{nr, *axis};
  return memoB[v];
}

FailureOr<Value> ChunkBatcher::evalF(Value v) {
  if (!variant.contains(v)) {
    if (stateDep.contains(v)) {
      return fail(v.getDefiningOp(),
                  "a state output reads the state input other "
                  "than through a recurrent layer");
    }
    return v;
  }
  if (auto it = memoF.find(v); it != memoF.end())
    return it->second;
  if (isa<BlockArgument>(v)) {
    return fail(nullptr, "a state output depends on a chunk input other than "
                         "through a recurrent layer's final state");
  }
  Operation *op = v.getDefiningOp();
  unsigned r = cast<OpResult>(v).getResultNumber();
  if (isRecurrent(op)) {
    if (r == 0) {
      return fail(op, "a state output reads the layer's Y");
    }
    auto nl = layer(op);
    if (failed(nl))
      return failure();
    return memoF[v] = (*nl)->getResult(r);
  }
  if (op->getNumRegions()) {
    return fail(op, "an op with subgraphs");
  }
  IRMapping map;
  for (Value o : op->getOperands()) {
    auto e = evalF(o);
    if (failed(e))
      return failure();
    map.map(o, *e);
  }
  Operation *c = b.clone(*op, map);
  for (auto [o, nr] : llvm::zip(op->getResults(), c->getResults()))
    memoF[o] = nr;
  return memoF[v];
}

/// The batch axis of `op`'s results, when it computes each chunk of its
/// batched operands independently.
FailureOr<int64_t> ChunkBatcher::rule(Operation *op, ArrayRef<Batched> in) {
  StringRef type = defaultDomainType(op);
  if ((type == "Gather" && op->getNumOperands() != 2) ||
      ((type == "Slice" || type == "Pad") && op->getNumOperands() < 2) ||
      ((type == "MatMul" || type == "Gemm") && op->getNumOperands() < 2))
    return fail(op, "an arity the operator does not have");
  int64_t outRank = -1;
  if (op->getNumResults())
    if (auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType()))
      outRank = rt.getRank();
  auto rankOf = [](Value v) {
    auto rt = dyn_cast<RankedTensorType>(v.getType());
    return rt ? rt.getRank() : (int64_t)-1;
  };
  // The one batched operand (index), or -1 for several/none.
  int first = -1, count = 0;
  for (auto [i, e] : llvm::enumerate(in))
    if (e.axis >= 0) {
      if (first < 0)
        first = i;
      ++count;
    }
  if (outRank < 0)
    return fail(op, "a result without a known rank");
  if (first < 0)
    return fail(op, "no batched operand");
  int64_t a = in[first].axis, inRank = rankOf(in[first].v);
  auto constInts = [&](unsigned i) -> std::optional<SmallVector<int64_t>> {
    if (i >= op->getNumOperands() || isa<NoneType>(op->getOperand(i).getType()))
      return std::nullopt;
    return od::getConstantInts(op->getOperand(i));
  };
  auto onlyFirst = [&]() {
    return count == 1 ? success()
                      : fail(op, "reads batched values in several operands");
  };

  static const llvm::StringSet<> unary = {
      "Relu", "Sigmoid", "Tanh", "Sqrt", "Abs", "Neg", "Exp", "Log", "Cast",
      "Erf", "Softplus", "Softsign", "LeakyRelu", "Elu", "Selu", "HardSigmoid",
      "HardSwish", "Identity", "Reciprocal", "Floor", "Ceil", "Round", "Sin",
      "Cos", "Not", "Sign", "Gelu", "Mish", "Celu", "ThresholdedRelu",
      "IsNaN", "IsInf", "Dropout"};
  static const llvm::StringSet<> broadcast = {
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Equal",
      "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
      "PRelu", "Mod", "Clip", "Sum", "Mean", "BitShift"};
  if (unary.contains(type) && first == 0 &&
      (type != "Dropout" || count == 1))
    return a;
  if (broadcast.contains(type)) {
    // Right-aligned: the output's batch axis; every batched operand must
    // have it there, every other operand 1 or nothing there.
    int64_t out = a + (outRank - inRank);
    for (auto [i, e] : llvm::enumerate(in)) {
      Value o = op->getOperand(i);
      if (isa<NoneType>(o.getType()))
        continue;
      int64_t r = rankOf(o);
      if (r < 0)
        return fail(op, "an operand without a known rank");
      int64_t at = out - (outRank - r);
      if (e.axis >= 0) {
        if (at != e.axis)
          return fail(op, "batched operands meet along different axes");
        continue;
      }
      auto rt = cast<RankedTensorType>(o.getType());
      if (at >= 0 && rt.getDimSize(at) != 1)
        return fail(op, "broadcasts an unbatched operand along the batch axis");
    }
    return out;
  }
  if (type == "Conv" || type == "MaxPool" || type == "AveragePool" ||
      type == "GlobalAveragePool" || type == "GlobalMaxPool" ||
      type == "InstanceNormalization" || type == "LpPool" ||
      type == "ConvTranspose" || type == "BatchNormalization") {
    if (first != 0 || count != 1 || a != 0)
      return fail(op, "its batched input is not batched along axis 0");
    if (type == "BatchNormalization" && intAttr(op, "training_mode").value_or(0))
      return fail(op, "BatchNormalization in training mode");
    return int64_t(0);
  }
  auto norm = [&](int64_t x, int64_t rank) -> std::optional<int64_t> {
    return od::normalizeAxis(x, rank);
  };
  if (type == "Concat") {
    // Every input batched along the same axis, joined along another.
    auto axis = norm(intAttr(op, "axis").value_or(0), inRank);
    for (const Batched &e : in)
      if (e.axis != a || rankOf(e.v) != inRank)
        return fail(op, "concatenates batched and unbatched values");
    if (!axis || *axis == a)
      return fail(op, "concatenates along the batch axis");
    return a;
  }
  // The rules below read one batched operand, their data (operand 0).
  if (failed(onlyFirst()))
    return failure();
  if (first != 0)
    return fail(op, "a batched operand other than its data");
  if (type == "Unsqueeze" || type == "Squeeze") {
    std::optional<SmallVector<int64_t>> axes = constInts(1);
    if (!axes)
      axes = intsAttr(op, "axes_attr");
    if (!axes)
      axes = intsAttr(op, "axes");
    if (!axes)
      return fail(op, "its axes are not constant");
    int64_t rank = type == "Unsqueeze" ? outRank : inRank;
    SmallVector<int64_t> ax;
    for (int64_t x : *axes) {
      auto nx = norm(x, rank);
      if (!nx)
        return fail(op, "an axis out of range");
      ax.push_back(*nx);
    }
    llvm::sort(ax);
    if (type == "Squeeze") {
      if (llvm::is_contained(ax, a))
        return fail(op, "squeezes the batch axis");
      return a - (int64_t)llvm::count_if(ax, [&](int64_t x) { return x < a; });
    }
    // Unsqueeze: the input axes keep their order among the output's.
    int64_t out = 0, seen = 0;
    for (; out < outRank; ++out) {
      if (llvm::is_contained(ax, out))
        continue;
      if (seen++ == a)
        break;
    }
    return out;
  }
  if (type == "Transpose") {
    SmallVector<int64_t> perm;
    if (auto p = intsAttr(op, "perm"))
      perm = *p;
    else
      for (int64_t i = inRank; i-- > 0;)
        perm.push_back(i);
    for (auto [i, p] : llvm::enumerate(perm))
      if (p == a)
        return (int64_t)i;
    return fail(op, "a permutation without the batch axis");
  }
  if (type == "Slice") {
    auto axes = constInts(3);
    auto starts = constInts(1);
    if (!starts)
      return fail(op, "its starts are not constant");
    SmallVector<int64_t> ax;
    if (axes)
      ax = *axes;
    else
      for (int64_t i = 0; i < (int64_t)starts->size(); ++i)
        ax.push_back(i);
    // The batch axis only taken whole (step 1 from the start to the end).
    auto ends = constInts(2);
    auto steps = constInts(4);
    int64_t dim = cast<RankedTensorType>(op->getOperand(0).getType())
                      .getDimSize(a);
    for (auto [i, x] : llvm::enumerate(ax)) {
      if (norm(x, inRank) != a)
        continue;
      bool whole = ends && i < starts->size() && i < ends->size() &&
                   ((*starts)[i] == 0 || (*starts)[i] <= -dim) &&
                   (*ends)[i] >= dim && (!steps || (*steps)[i] == 1);
      if (!whole)
        return fail(op, "slices the batch axis");
    }
    return a;
  }
  if (type == "Gather") {
    int64_t axis = norm(intAttr(op, "axis").value_or(0), inRank).value_or(-1);
    if (first != 0 || axis == a)
      return fail(op, "gathers along the batch axis");
    return a < axis ? a : a + rankOf(op->getOperand(1)) - 1;
  }
  if (type == "Split" || type == "Softmax" ||
      type == "LogSoftmax" || type == "LayerNormalization" ||
      type == "Flatten") {
    // Default axes: Softmax's is 1 before opset 13, -1 from 13 on.
    bool softmax = type == "Softmax" || type == "LogSoftmax";
    int64_t def = softmax ? (od::getDefaultOpset(op) < 13 ? 1 : -1)
                  : type == "LayerNormalization" ? -1
                  : type == "Flatten"            ? 1
                                                 : 0;
    auto axis = norm(intAttr(op, "axis").value_or(def), inRank);
    // Flatten, LayerNormalization and (before opset 13) Softmax work on all
    // the axes from `axis` on: the batch axis must come before them.
    if (!axis || (type == "Split" ? *axis == a : a >= *axis))
      return fail(op, "works across the batch axis");
    if (type == "Flatten") {
      // The batch axis must lead what Flatten merges, for the chunks to
      // stay contiguous: every dimension before it 1.
      auto rt = cast<RankedTensorType>(op->getOperand(0).getType());
      for (int64_t d = 0; d < a; ++d)
        if (rt.getDimSize(d) != 1)
          return fail(op, "flattens the batch axis with a dimension before it");
      return int64_t(0);
    }
    return a;
  }
  if (type.starts_with("Reduce")) {
    std::optional<SmallVector<int64_t>> axes = constInts(1);
    if (!axes)
      axes = intsAttr(op, "axes");
    if (!axes || axes->empty())
      return fail(op, "reduces over all axes");
    int64_t before = 0;
    for (int64_t x : *axes) {
      auto nx = norm(x, inRank);
      if (!nx || *nx == a)
        return fail(op, "reduces the batch axis");
      before += *nx < a;
    }
    return intAttr(op, "keepdims").value_or(1) ? a : a - before;
  }
  if (type == "Pad") {
    auto pads = constInts(1);
    if (!pads)
      pads = intsAttr(op, "pads");
    if (!pads)
      return fail(op, "its pads are not constant");
    auto axes = constInts(3);
    SmallVector<int64_t> ax;
    if (axes)
      ax = *axes;
    else
      for (int64_t i = 0; i < inRank; ++i)
        ax.push_back(i);
    if ((int64_t)pads->size() != 2 * (int64_t)ax.size())
      return fail(op, "its pads do not match its axes");
    for (auto [i, x] : llvm::enumerate(ax))
      if (norm(x, inRank) == a &&
          ((*pads)[i] != 0 || (*pads)[i + ax.size()] != 0))
        return fail(op, "pads the batch axis");
    return a;
  }
  if (type == "MatMul") {
    if (first != 0 || a >= inRank - 1 || inRank < 2)
      return fail(op, "contracts the batch axis");
    // Batched along a batch dimension of A: B must not have one there.
    auto bt = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
    int64_t out = a + (outRank - inRank);
    if (!bt || bt.getRank() < 2)
      return fail(op, "B without a known rank");
    int64_t at = out - (outRank - bt.getRank());
    if (a < inRank - 2 && at >= 0 && at < bt.getRank() - 2 &&
        bt.getDimSize(at) != 1)
      return fail(op, "B broadcasts along the batch axis");
    return out;
  }
  if (type == "Gemm") {
    if (first != 0 || a != 0 || intAttr(op, "transA").value_or(0))
      return fail(op, "its batched input is not A's rows");
    // C broadcasts along the rows only if it has one row.
    if (op->getNumOperands() > 2 && !isa<NoneType>(op->getOperand(2).getType())) {
      auto ct = dyn_cast<RankedTensorType>(op->getOperand(2).getType());
      if (!ct || (ct.getRank() == 2 && ct.getDimSize(0) != 1))
        return fail(op, "its C has a row per batch row");
    }
    return int64_t(0);
  }
  return fail(op, "no rule says that it computes each chunk independently");
}

LogicalResult ChunkBatcher::run(std::string &whyOut) {
  Block &body = f.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto isStateIn = [&](unsigned i) {
    return llvm::any_of(pairs, [&](auto p) { return p.first == i; });
  };
  auto isStateOut = [&](unsigned o) {
    return llvm::any_of(pairs, [&](auto p) { return p.second == o; });
  };
  // Which values depend on a chunk input.
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (!isStateIn(i))
      variant.insert(f.getArgument(i));
  for (Operation &op : body.without_terminator()) {
    bool v = llvm::any_of(op.getOperands(),
                          [&](Value o) { return variant.contains(o); });
    if (!v && op.getNumRegions()) // subgraphs may read chunk inputs by scope
      op.walk([&](Operation *in) {
        for (Value o : in->getOperands())
          v |= variant.contains(o);
      });
    if (v)
      for (Value r : op.getResults())
        variant.insert(r);
  }
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (isStateIn(i))
      stateDep.insert(f.getArgument(i));
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value o) { return stateDep.contains(o); }))
      for (Value r : op.getResults())
        stateDep.insert(r);
  if (failed(checkRoundTrip())) {
    whyOut = why;
    return failure();
  }
  // The new ops go before the return; on failure they are erased again.
  b.setInsertionPoint(ret);
  SmallVector<Operation *> before;
  for (Operation &op : body.without_terminator())
    before.push_back(&op);
  DenseSet<Operation *> old(before.begin(), before.end());
  auto undo = [&]() {
    SmallVector<Operation *> made;
    for (Operation &op : body.without_terminator())
      if (!old.contains(&op))
        made.push_back(&op);
    for (Operation *op : llvm::reverse(made)) {
      op->dropAllUses();
      op->erase();
    }
    whyOut = why;
    return failure();
  };
  // Chunk inputs: [N, ..., b, ...] merged into [..., N*b, ...] along each
  // one's batch axis (inputAxis).
  SmallVector<Type> inTypes;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    Type t = f.getArgument(i).getType();
    if (isStateIn(i)) {
      inTypes.push_back(t);
      continue;
    }
    auto rt = dyn_cast<RankedTensorType>(t);
    // An input the graph does not read (one bound at compile time, --bind)
    // keeps its type.
    if (f.getArgument(i).use_empty()) {
      inTypes.push_back(t);
      continue;
    }
    if (!rt || !rt.hasStaticShape() || rt.getRank() == 0) {
      why = "chunk input '" + argName(f, i).str() +
            "' is not a tensor of rank >= 1 with a static shape";
      return undo();
    }
    SmallVector<int64_t> stacked = {n};
    stacked.append(rt.getShape().begin(), rt.getShape().end());
    inTypes.push_back(RankedTensorType::get(stacked, rt.getElementType()));
    // Stand-in until the argument's type changes (below).
    mergedInput[i] = Value();
  }
  // The merged inputs read the new arguments: created on a placeholder now
  // (the argument itself, retyped at the end).
  for (auto &[i, v] : mergedInput) {
    auto rt = cast<RankedTensorType>(f.getArgument(i).getType());
    int64_t a = inputAxis.lookup(i);
    RankedTensorType grownType = grown(rt, a);
    if (!grownType) {
      why = "chunk input '" + argName(f, i).str() + "' is too large for " +
            std::to_string(n) + " chunks";
      return undo();
    }
    SmallVector<int64_t> merged(grownType.getShape());
    Value in = f.getArgument(i);
    if (a > 0) {
      // [N, d0, .., da, ..] -> [d0, .., N, da, ..]: the chunk axis before a.
      SmallVector<int64_t> perm, shape;
      for (int64_t d = 0; d < rt.getRank(); ++d) {
        if (d == a)
          perm.push_back(0);
        perm.push_back(d + 1);
      }
      SmallVector<int64_t> stackedShape = {n};
      stackedShape.append(rt.getShape().begin(), rt.getShape().end());
      for (int64_t p : perm)
        shape.push_back(stackedShape[p]);
      in = od::TransposeOp::create(
          b, loc, RankedTensorType::get(shape, rt.getElementType()), in,
          b.getDenseI64ArrayAttr(perm));
    }
    Value s = consts->getI64(loc, "stream_shape", {(int64_t)merged.size()},
                             merged);
    auto r = od::ReshapeOp::create(
        b, loc, RankedTensorType::get(merged, rt.getElementType()), in, s);
    r->removeAttr("allowzero");
    v = r;
  }
  SmallVector<Value> results(ret.getNumOperands());
  SmallVector<Type> outTypes;
  for (unsigned o = 0; o < ret.getNumOperands(); ++o) {
    Value v = ret.getOperand(o);
    if (isStateOut(o)) {
      auto e = evalF(v);
      if (failed(e))
        return undo();
      results[o] = *e;
      outTypes.push_back(v.getType());
      continue;
    }
    auto e = evalB(v);
    if (failed(e))
      return undo();
    auto rt = dyn_cast<RankedTensorType>(v.getType());
    if (e->axis < 0 || !rt || !rt.hasStaticShape()) {
      why = "output '" + resultName(f, o).str() +
            (e->axis < 0 ? "' does not depend on the chunk inputs"
                         : "' has no static shape");
      return undo();
    }
    // Batched along axis a: [.., N*s_a, ..] -> [N, .., s_a, ..].
    int64_t a = e->axis;
    SmallVector<int64_t> split(rt.getShape().begin(), rt.getShape().begin() + a);
    split.push_back(n);
    split.append(rt.getShape().begin() + a, rt.getShape().end());
    Value s = reshape(e->v, split);
    if (a > 0) {
      SmallVector<int64_t> perm = {a};
      for (int64_t i = 0; i < (int64_t)split.size(); ++i)
        if (i != a)
          perm.push_back(i);
      s = transpose(s, perm);
    }
    results[o] = s;
    outTypes.push_back(s.getType());
  }
  if (layers == 0) {
    why = "no recurrent layer runs on the chunks";
    return undo();
  }
  // Commit: the new results, the new signature, the old ops gone.
  ret->setOperands(results);
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    f.getArgument(i).setType(inTypes[i]);
  f.setType(FunctionType::get(f.getContext(), inTypes, outTypes));
  for (Operation *op : llvm::reverse(before))
    if (!isa<od::InitializerOp>(op) && op->use_empty())
      op->erase();
  return success();
}

/// The layers run over all chunks' steps as one sequence, each starting
/// where the last chunk's left off: that is what N calls do only if the
/// state output, fed back as the next call's state input, gives each layer
/// its own final state as its initial state. Checked element by element:
/// the ops between are data movement (moveIds), and each initial state's
/// elements are exactly the final state's, in place.
LogicalResult ChunkBatcher::checkRoundTrip() {
  Block &body = f.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  DenseMap<Value, IdTensor> finals;
  SmallVector<Operation *> ls;
  int64_t next = 0;
  for (Operation &op : body.without_terminator()) {
    if (!isRecurrent(&op) || !variant.contains(op.getOperand(0)))
      continue;
    ls.push_back(&op);
    for (unsigned r = 1; r < op.getNumResults(); ++r) {
      auto t = dyn_cast<RankedTensorType>(op.getResult(r).getType());
      if (!t || !t.hasStaticShape())
        return fail(&op, "its final state has no static shape");
      if (t.getNumElements() > kMaxRoundTripElements)
        return fail(&op, "its final state has more than 2^20 elements");
      IdTensor leaf{SmallVector<int64_t>(t.getShape()), {}};
      for (int64_t k = 0; k < t.getNumElements(); ++k)
        leaf.ids.push_back(next++);
      finals[op.getResult(r)] = leaf;
    }
  }
  if (ls.empty())
    return fail(nullptr, "no recurrent layer runs on the chunks");
  DenseMap<Value, IdTensor> fed;
  for (auto [i, o] : pairs) {
    DenseMap<Value, IdTensor> env = finals;
    auto ids = moveIds(ret.getOperand(o), env);
    if (!ids)
      return fail(nullptr, "state output '" + resultName(f, o).str() +
                               "' is not the recurrent layers' final states "
                               "moved as they are");
    fed[f.getArgument(i)] = *ids;
  }
  for (Operation *l : ls) {
    unsigned slots = isa<od::LSTMOp>(l) ? 2 : 1;
    for (unsigned k = 0; k < slots; ++k) {
      Value init = l->getOperand(5 + k);
      if (isa<NoneType>(init.getType()))
        return fail(l, "it starts every chunk from a zero state");
      DenseMap<Value, IdTensor> env = fed;
      auto ids = moveIds(init, env);
      if (!ids || ids->ids != finals[l->getResult(1 + k)].ids)
        return fail(l, "its initial state is not, element for element, "
                       "the final state the last chunk left in the state "
                       "output");
    }
  }
  return success();
}

struct StreamToSequence
    : public rnn::impl::ONNXStreamToSequencePassBase<StreamToSequence> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp graph;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isDeclaration()) {
        if (graph) {
          module.emitError() << kPass << ": the module has more than one graph";
          return signalPassFailure();
        }
        graph = f;
      }
    if (!graph) {
      module.emitError() << kPass << ": the module has no graph";
      return signalPassFailure();
    }
    if (failed(rewrite(graph)))
      signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp f) {
    auto fail = [&]() { return f.emitError() << kPass << ": "; };
    if (chunks < 1 || chunks > (int64_t(1) << 31))
      return fail() << "chunks must be in [1, 2^31], not " << int64_t(chunks);
    if (form != "auto" && form != "batched" && form != "loop")
      return fail() << "form must be auto, batched or loop, not '"
                    << form << "'";
    if (!f.getBody().hasOneBlock())
      return fail() << "the graph must be one block";
    auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
    unsigned nIn = f.getNumArguments(), nOut = f.getNumResults();

    // The state pairs.
    SmallVector<std::pair<unsigned, unsigned>> pairs;
    auto typeOf = [&](unsigned i) { return f.getArgument(i).getType(); };
    if (state != "auto") {
      SmallVector<StringRef> items;
      StringRef(state).split(items, ',', -1, /*KeepEmpty=*/false);
      if (items.empty())
        return fail() << "no state pairs given (IN=OUT[,IN=OUT...] or auto)";
      for (StringRef item : items) {
        auto [in, out] = item.trim().split('=');
        std::optional<unsigned> i, o;
        for (unsigned k = 0; k < nIn; ++k)
          if (argName(f, k) == in.trim())
            i = k;
        for (unsigned k = 0; k < nOut; ++k)
          if (resultName(f, k) == out.trim())
            o = k;
        if (!i)
          return fail() << "'" << in.trim() << "' is not a graph input";
        if (!o)
          return fail() << "'" << out.trim() << "' is not a graph output";
        if (!compatible(typeOf(*i), f.getResultTypes()[*o]))
          return fail() << "state pair " << in.trim() << "=" << out.trim()
                        << " has different types (" << typeOf(*i) << " and "
                        << f.getResultTypes()[*o] << ")";
        for (auto [pi, po] : pairs)
          if (pi == *i || po == *o)
            return fail() << "'" << (pi == *i ? in : out).trim()
                          << "' is in two state pairs";
        pairs.push_back({*i, *o});
      }
    } else {
      SmallVector<StateSlots> read;
      for (unsigned o = 0; o < nOut; ++o)
        read.push_back(onnx::stateSlotsRead(ret.getOperand(o), finalSlot));
      llvm::DenseSet<unsigned> taken;
      for (unsigned i = 0; i < nIn; ++i) {
        StateSlots fed = onnx::stateSlotsFed(f.getArgument(i), initialSlot);
        if (fed.empty())
          continue;
        SmallVector<unsigned> match;
        for (unsigned o = 0; o < nOut; ++o) {
          if (taken.count(o) || !compatible(typeOf(i), f.getResultTypes()[o]))
            continue;
          if (llvm::any_of(fed, [&](auto s) { return read[o].count(s); }))
            match.push_back(o);
        }
        if (match.size() > 1)
          return fail() << "state=auto: input '" << argName(f, i)
                        << "' could pair with outputs '"
                        << resultName(f, match[0]) << "' and '"
                        << resultName(f, match[1]) << "'; name the pairs";
        if (match.size() == 1) {
          pairs.push_back({i, match[0]});
          taken.insert(match[0]);
        }
      }
      if (pairs.empty())
        return fail() << "state=auto found no graph input that is a "
                         "recurrent layer's initial state with an output "
                         "of the same type computed from its final state; "
                         "name the pairs (IN=OUT)";
      std::string list;
      for (auto [i, o] : pairs)
        list += (list.empty() ? "" : ", ") + argName(f, i).str() + "=" +
                resultName(f, o).str();
      f.emitRemark() << kPass << ": state pairs " << list;
    }
    if (form != "loop") {
      // Each chunk input's batch axis: every combination, axis 0 first, at
      // most 64 tries; the first that batches wins (each is correct by
      // construction: its ops compute the chunks independently).
      // Types as precise as the shape rules make them (the ops between the
      // chunk inputs and the layers need static shapes).
      od::refineShapes(f, /*graphOutputs=*/true);
      SmallVector<unsigned> chunkIns;
      SmallVector<int64_t> ranks;
      for (unsigned i = 0; i < nIn; ++i) {
        if (llvm::any_of(pairs, [&](auto p) { return p.first == i; }))
          continue;
        auto rt = dyn_cast<RankedTensorType>(typeOf(i));
        chunkIns.push_back(i);
        ranks.push_back(rt && rt.getRank() > 0 ? rt.getRank() : 1);
      }
      SmallVector<int64_t> pick(chunkIns.size(), 0);
      std::string whyNot, firstWhy;
      int64_t bestProgress = -1;
      bool batched = false;
      ChunkBatcher::Counts counts;
      for (int tries = 0; tries < 64; ++tries) {
        ChunkBatcher batcher(f, chunks, pairs);
        for (auto [k, i] : llvm::enumerate(chunkIns))
          batcher.inputAxis[i] = pick[k];
        whyNot.clear();
        if (succeeded(batcher.run(whyNot))) {
          batched = true;
          counts = {batcher.batchedOps, batcher.layers};
          break;
        }
        // The reason of the try that got furthest (the most layers, then
        // ops, batched before it stopped).
        int64_t progress = batcher.layers * 1000000 + batcher.batchedOps;
        if (firstWhy.empty() || progress > bestProgress) {
          firstWhy = whyNot;
          bestProgress = progress;
        }
        // The next combination (odometer).
        size_t k = 0;
        for (; k < pick.size(); ++k) {
          if (++pick[k] < ranks[k])
            break;
          pick[k] = 0;
        }
        if (k == pick.size())
          break;
      }
      whyNot = firstWhy;
      if (batched) {
        f.emitRemark() << kPass << ": the " << int64_t(chunks)
                       << " chunks batched: " << counts.batchedOps
                       << " ops run once over all chunks, " << counts.layers
                       << " recurrent layer" << (counts.layers == 1 ? "" : "s")
                       << " over all their steps";
        return success();
      }
      if (form == "batched")
        return fail() << "the chunks cannot be batched: " << whyNot;
      f.emitRemark() << kPass
                     << ": a Loop over the chunks (they cannot be batched: "
                     << whyNot << ")";
    }
    auto isStateIn = [&](unsigned i) {
      return llvm::any_of(pairs, [&](auto p) { return p.first == i; });
    };
    auto isStateOut = [&](unsigned o) {
      return llvm::any_of(pairs, [&](auto p) { return p.second == o; });
    };
    auto stacked = [&](Type t) -> FailureOr<Type> {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt)
        return failure();
      SmallVector<int64_t> shape = {chunks};
      shape.append(rt.getShape().begin(), rt.getShape().end());
      return Type(RankedTensorType::get(shape, rt.getElementType()));
    };

    // The new signature: chunk inputs and outputs with a leading axis.
    SmallVector<Type> inTypes, outTypes;
    for (unsigned i = 0; i < nIn; ++i) {
      if (isStateIn(i)) {
        inTypes.push_back(typeOf(i));
        continue;
      }
      auto t = stacked(typeOf(i));
      if (failed(t))
        return fail() << "input '" << argName(f, i)
                      << "' has no known rank (give --input-shape)";
      inTypes.push_back(*t);
    }
    for (unsigned o = 0; o < nOut; ++o) {
      Type t = f.getResultTypes()[o];
      if (isStateOut(o)) {
        outTypes.push_back(t);
        continue;
      }
      auto s = stacked(t);
      if (failed(s))
        return fail() << "output '" << resultName(f, o)
                      << "' has no known rank";
      outTypes.push_back(*s);
    }

    Block &body = f.getBody().front();
    OpBuilder b(f.getContext());
    Location loc = f.getLoc();
    // The old body moves into the Loop; the function gets a new block.
    Block *top = new Block();
    for (Type t : inTypes)
      top->addArgument(t, loc);
    b.setInsertionPointToStart(top);
    // Initializers stay in the outer graph.
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      if (isa<od::InitializerOp>(op))
        op.moveBefore(top, top->end());
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    auto i1 = RankedTensorType::get({}, b.getI1Type());
    Value trip = od::ConstantOp::create(
        b, loc, i64, DenseElementsAttr::get(i64, ArrayRef<int64_t>{chunks}),
        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    Value cond = od::ConstantOp::create(
        b, loc, i1, DenseElementsAttr::get(i1, ArrayRef<bool>{true}), nullptr,
        nullptr, nullptr, nullptr, nullptr, nullptr);
    SmallVector<Value> loopIns = {trip, cond};
    SmallVector<Type> loopTypes;
    for (auto [i, o] : pairs) {
      loopIns.push_back(top->getArgument(i));
      loopTypes.push_back(f.getResultTypes()[o]);
    }
    SmallVector<unsigned> scanOuts;
    for (unsigned o = 0; o < nOut; ++o)
      if (!isStateOut(o)) {
        scanOuts.push_back(o);
        loopTypes.push_back(outTypes[o]);
      }
    auto loop = od::NodeOp::create(b, loc, loopTypes, loopIns,
                                   b.getStringAttr("Loop"), b.getStringAttr(""),
                                   DictionaryAttr(),
                                   b.getStrArrayAttr({"body"}),
                                   /*graphsCount=*/1);
    Block *lb = new Block();
    loop.getGraphs()[0].push_back(lb);
    Value iter = lb->addArgument(i64, loc);
    Value condIn = lb->addArgument(i1, loc);
    SmallVector<std::string> inNames = {"stream_iteration", "stream_condition"};
    // The old body's arguments: a state from the carried value, a chunk
    // input from Gather(stacked input, iteration).
    b.setInsertionPointToStart(lb);
    SmallVector<Value> mapped(nIn);
    for (auto [i, o] : pairs) {
      mapped[i] = lb->addArgument(typeOf(i), loc);
      inNames.push_back(argName(f, i).str() + "_carried");
    }
    for (unsigned i = 0; i < nIn; ++i)
      if (!isStateIn(i))
        mapped[i] = od::GatherOp::create(b, loc, typeOf(i),
                                         top->getArgument(i), iter,
                                         b.getI64IntegerAttr(0));
    for (unsigned i = 0; i < nIn; ++i)
      body.getArgument(i).replaceAllUsesWith(mapped[i]);
    // Move the ops.
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      op.moveBefore(lb, lb->end());
    SmallVector<Value> yields = {condIn};
    SmallVector<std::string> outNames = {"stream_condition_next"};
    for (auto [i, o] : pairs) {
      yields.push_back(ret.getOperand(o));
      outNames.push_back(resultName(f, o).str() + "_next");
    }
    for (unsigned o : scanOuts) {
      yields.push_back(ret.getOperand(o));
      outNames.push_back(resultName(f, o).str() + "_chunk");
    }
    b.setInsertionPointToEnd(lb);
    SmallVector<StringRef> inRefs(inNames.begin(), inNames.end()),
        outRefs(outNames.begin(), outNames.end());
    od::YieldOp::create(b, loc, yields, b.getStringAttr("stream_body"),
                        b.getStrArrayAttr(inRefs), b.getStrArrayAttr(outRefs));
    // The function's results in their order.
    b.setInsertionPointToEnd(top);
    SmallVector<Value> results(nOut);
    for (auto [k, p] : llvm::enumerate(pairs))
      results[p.second] = loop.getResult(k);
    for (auto [k, o] : llvm::enumerate(scanOuts))
      results[o] = loop.getResult(pairs.size() + k);
    func::ReturnOp::create(b, loc, results);
    ret.erase();
    body.erase();
    f.getBody().push_back(top);
    f.setType(FunctionType::get(f.getContext(), inTypes, outTypes));
    return success();
  }
};
} // namespace

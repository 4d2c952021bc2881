//===- RecognizeCells.cpp - find recurrent cells by their equations -------===//
//
// Two jobs:
//  * standard onnx.LSTM/GRU/RNN layers become rnn.sequence (gate blocks
//    reordered to the canonical order, bias split, layout 1 transposed);
//  * one step of an unrolled LSTM/GRU/RNN becomes rnn.lstm_cell/gru_cell/
//    rnn_cell. The match is on the equations, not on node shapes: the state
//    updates that identify a cell (c' = f*c + i*g, h' = (1 - z)*n + z*h, ...)
//    are a table of cell forms (CellForms.cpp), matched from the node that
//    computes the new state; the family's builder then expands the gate
//    pre-activations into linear forms sum_v v * W_v + b over
//    MatMul/Gemm/Add/Sub/Split/Slice/Concat and constants, whatever the
//    exporter's node order, gate order, packing or Gemm/MatMul choice.
//    Exactly two inputs (the step input and the hidden state) must remain;
//    their weights become W and R. A simple RNN step (an activation of a
//    linear form, inside a chain of them) is the general fallback, last.
// A near-miss leaves the graph unchanged and emits a remark on the node.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/CellForms.h"
#include "lstm-opt/Dialect/RNN/Utils/GateLayout.h"
#include "lstm-opt/Dialect/RNN/Utils/StepValues.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <map>
#include <numeric>

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNRECOGNIZECELLSPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;
using rnn::Activation;
using rnn::CellFamily;
using rnn::CellForm;
using rnn::CellPattern;
using rnn::getActivation;
using rnn::isGateActivation;
using rnn::isOnes;

namespace {

//===----------------------------------------------------------------------===//
// Linear forms
//===----------------------------------------------------------------------===//

/// A block of a constant matrix: rows [row0, row0+rows) x cols
/// [col0, col0+width) of `src` ([K, N], or [N, K] when `transposed`), times
/// `scale`. Kept symbolic so that T steps sharing weights share the work.
struct WeightRef {
  Value src;
  bool transposed;
  int64_t row0, rows, col0, width;
  float scale;
  auto key() const {
    return std::make_tuple(src.getAsOpaquePointer(), transposed, row0, rows,
                           col0, width, scale);
  }
};

/// A slice of a constant vector (or a broadcast scalar) times `scale`.
struct BiasRef {
  Value src;
  int64_t col0, width;
  bool scalar;
  float scale;
  auto key() const {
    return std::make_tuple(src.getAsOpaquePointer(), col0, width, scalar, scale);
  }
};

struct Term {
  Value input;
  int64_t k; ///< input feature size
  SmallVector<WeightRef, 2> weights;
};

/// A value times a per-feature constant, elementwise: `input[:, col0 :
/// col0+width] * factor` (an LSTM's peephole P * c).
struct DiagonalTerm {
  Value input;
  int64_t col0;
  BiasRef factor;
};

struct LinearForm {
  int64_t width = 0;
  SmallVector<Term, 2> terms;
  SmallVector<BiasRef, 2> biases;
  /// Elementwise products; only the LSTM builder accepts them (peepholes).
  SmallVector<DiagonalTerm, 1> diagonal;
  SmallVector<Operation *, 8> ops; ///< the nodes the form was read from
  /// Read through a quantized MatMul (QuantizedProduct): the model asks for
  /// int8 there.
  bool quantized = false;

  void add(LinearForm &&o, float scale) {
    quantized |= o.quantized;
    for (DiagonalTerm &d : o.diagonal) {
      d.factor.scale *= scale;
      diagonal.push_back(d);
    }
    for (Term &t : o.terms) {
      for (WeightRef &w : t.weights)
        w.scale *= scale;
      addTerm(std::move(t));
    }
    for (BiasRef &b : o.biases) {
      b.scale *= scale;
      biases.push_back(b);
    }
    ops.append(o.ops.begin(), o.ops.end());
  }
  void addTerm(Term &&t) {
    for (Term &mine : terms)
      if (mine.input == t.input) {
        mine.weights.append(t.weights.begin(), t.weights.end());
        return;
      }
    terms.push_back(std::move(t));
  }
};

int64_t staticDim(Value v, int64_t i) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || i >= t.getRank())
    return ShapedType::kDynamic;
  return t.getDimSize(i < 0 ? t.getRank() + i : i);
}

int64_t rankOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

int64_t knownWidth(Value v) { return od::inferLastDim(v); }

/// Why `v` (a weight) is not an f32 constant, for a remark: its element
/// type where it is a constant of another one (a model converted to f16 or
/// f64), else the node that computes it (a Slice of a Loop-carried value, a
/// Cast, ...) or the graph input it is.
std::string notF32Constant(Value v) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (auto attr = od::getConstantAttr(v)) {
    if (attr.getElementType().isF32())
      os << "an f32 constant of " << attr.getNumElements()
         << " elements that could not be read (larger than the recogniser "
            "reads, or its data is missing)";
    else
      os << "a constant of " << attr.getElementType()
         << " (only f32 layers are fused; convert the model to f32)";
    return out;
  }
  Value src = od::skipIdentities(v);
  if (Operation *def = src.getDefiningOp())
    os << "computed by " << od::getOnnxOpType(def) << " node '"
       << od::getNodeName(def) << "', not a constant";
  else
    os << "a graph or subgraph input, not a constant";
  return out;
}
int64_t knownRank(Value v) { return od::inferRank(v); }

/// The most elements of a bias computed from constants (a broadcast bias
/// is [batch, N]).
constexpr int64_t kMaxFoldedBias = int64_t(1) << 22;

/// One quantized MatMul (onnxruntime.quantization's dynamic, QDQ and
/// QOperator forms), read as `a` times the f32 weight `w` its int8 weight
/// stands for. `quantized`: the model quantizes `a` too (it asks for int8);
/// not with only the weight dequantized, which `a · w` computes exactly.
struct QuantizedProduct {
  Value a, w;
  bool quantized = true;
  SmallVector<Operation *, 6> ops;
  /// A Gemm's: w is [N, K] (transB), the product's factor (alpha), and C
  /// (null: none) with its factor (beta).
  bool transposed = false;
  float alpha = 1.0f, beta = 1.0f;
  Value c;
};

/// Expands `v[..., col0 : col0+width]` (v is [B, N]) into a linear form.
class LinearAnalyzer {
public:
  /// Recognises a quantized MatMul at its last op (a Mul, MatMul or
  /// DequantizeLinear): 1 (filled in `q`), 0 (not one), -1 (one, refused:
  /// `why` says why). Unset: none are read.
  std::function<int(Operation *, QuantizedProduct &, std::string &)> quantized;

  /// A gate's pre-activation; elementwise products with a per-feature
  /// constant (DiagonalTerm) only with `allowDiagonal`.
  FailureOr<LinearForm> analyzeGate(Value v, int64_t col0, int64_t width,
                                    std::string &why,
                                    bool allowDiagonal = false) {
    auto f = analyze(v, col0, width, why);
    if (succeeded(f) && !allowDiagonal && !f->diagonal.empty()) {
      why = "a gate pre-activation multiplies a computed value by a constant "
            "elementwise (a peephole: LSTMs only)";
      return failure();
    }
    return f;
  }

private:
  FailureOr<LinearForm> analyze(Value v, int64_t col0, int64_t width,
                                std::string &why, int depth = 0);
};

FailureOr<LinearForm> LinearAnalyzer::analyze(Value v, int64_t col0,
                                              int64_t width, std::string &why,
                                              int depth) {
  LinearForm form;
  form.width = width;
  if (depth > 32) {
    why = "gate pre-activation is too deep to analyse";
    return failure();
  }
  while (auto id = v.getDefiningOp<od::IdentityOp>()) {
    form.ops.push_back(id);
    v = id.getInput();
  }
  Operation *def = v.getDefiningOp();
  // A constant: a bias, broadcast along the batch. Also one computed from
  // constants by data movement (a Squeeze or Reshape of a bias row, the
  // part of a Split): exporters of loop bodies write those.
  std::optional<od::F32Tensor> folded;
  if (def && !od::getConstantAttr(v) &&
      isa<od::SqueezeOp, od::UnsqueezeOp, od::ReshapeOp, od::SplitOp,
          od::SliceOp, od::ConcatOp, od::TransposeOp, od::CastOp>(def))
    folded = od::foldConstantF32(v, kMaxFoldedBias);
  if (od::getConstantAttr(v) || folded) {
    auto c = folded ? folded : od::getConstantF32(v);
    if (!c) {
      why = "a constant in a gate pre-activation is not f32";
      return failure();
    }
    int64_t n = c->numElements();
    bool scalar = n == 1;
    int64_t last = c->shape.empty() ? 1 : c->shape.back();
    // A bias broadcast to [batch, N] by the exporter: every row the same.
    if (!scalar && n != last && last > 0 && n % last == 0) {
      bool rowsEqual = true;
      for (int64_t i = last; i < n && rowsEqual; ++i)
        rowsEqual = c->values[i] == c->values[i % last];
      if (rowsEqual)
        n = last;
    }
    if (!scalar && (n != last || col0 + width > n)) {
      why = "a constant in a gate pre-activation is not a per-feature bias";
      return failure();
    }
    form.biases.push_back({v, col0, width, scalar, 1.0f});
    return form;
  }
  if (!def) {
    why = "a gate pre-activation adds a graph input directly";
    return failure();
  }
  auto fail = [&](const Twine &msg) -> FailureOr<LinearForm> {
    why = msg.str();
    return failure();
  };
  if (isa<od::AddOp, od::SubOp>(def)) {
    auto a = analyze(def->getOperand(0), col0, width, why, depth + 1);
    if (failed(a))
      return failure();
    auto b = analyze(def->getOperand(1), col0, width, why, depth + 1);
    if (failed(b))
      return failure();
    form.add(std::move(*a), 1.0f);
    form.add(std::move(*b), isa<od::SubOp>(def) ? -1.0f : 1.0f);
    form.ops.push_back(def);
    return form;
  }
  // input x W, where input may be Concat([x, h]) along features.
  auto addProduct = [&](Value lhs, Value weight, bool transposed,
                        float scale) -> LogicalResult {
    // Only the type is checked here (materialising a large weight for every
    // step cost seconds); the values are read once, through constant().
    auto attr = od::getConstantAttr(weight);
    if (!attr || !attr.getElementType().isF32()) {
      why = "the weight of a gate matmul is " + notF32Constant(weight);
      return failure();
    }
    if (rankOf(lhs) != 2) {
      why = "a gate matmul input is not [batch, features]";
      return failure();
    }
    SmallVector<Value> parts;
    Value l = od::skipIdentities(lhs);
    auto cat = l.getDefiningOp<od::ConcatOp>();
    if (cat && (cat.getAxis() == 1 || cat.getAxis() == -1)) {
      form.ops.push_back(cat);
      parts.append(cat.getInputs().begin(), cat.getInputs().end());
    } else {
      parts.push_back(lhs);
    }
    // Feature sizes: from the types, the one unknown part from the weight.
    auto wShape = cast<RankedTensorType>(od::skipIdentities(weight).getType())
                      .getShape();
    int64_t total = transposed ? wShape[1] : wShape[0];
    int64_t known = 0, unknown = 0;
    for (Value p : parts) {
      if (ShapedType::isDynamic(staticDim(p, 1)))
        ++unknown;
      else
        known += staticDim(p, 1);
    }
    if (unknown > 1 || (unknown == 0 && known != total) || known > total) {
      why = "the feature sizes of a gate matmul's inputs do not add up to its "
            "weight";
      return failure();
    }
    int64_t row = 0;
    for (Value p : parts) {
      int64_t k = staticDim(p, 1);
      if (ShapedType::isDynamic(k))
        k = total - known;
      Term t{p, k, {WeightRef{weight, transposed, row, k, col0, width, scale}}};
      form.addTerm(std::move(t));
      row += k;
    }
    return success();
  };
  // A Gemm's C, itself linear (tf2onnx folds `h R + b` into it), times
  // beta.
  auto addGemmC = [&](Value c, float beta) -> LogicalResult {
    if (rankOf(c) > 2) {
      why = "a gate Gemm's C has rank > 2";
      return failure();
    }
    auto cf = analyze(c, col0, width, why, depth + 1);
    if (failed(cf))
      return failure();
    form.add(std::move(*cf), beta);
    return success();
  };
  if (quantized && isa<od::MulOp, od::MatMulOp, od::GemmOp, od::NodeOp>(def)) {
    QuantizedProduct q;
    int found = quantized(def, q, why);
    if (found < 0)
      return failure();
    if (found > 0) {
      if (failed(addProduct(q.a, q.w, q.transposed, q.alpha)))
        return failure();
      if (q.c && failed(addGemmC(q.c, q.beta)))
        return failure();
      form.ops.append(q.ops.begin(), q.ops.end());
      form.quantized = q.quantized;
      return form;
    }
  }
  if (auto mm = dyn_cast<od::MatMulOp>(def)) {
    if (rankOf(mm.getB()) != 2)
      return fail("a gate MatMul's weight is not a matrix");
    if (failed(addProduct(mm.getA(), mm.getB(), false, 1.0f)))
      return failure();
    form.ops.push_back(def);
    return form;
  }
  if (auto gemm = dyn_cast<od::GemmOp>(def)) {
    if (gemm.getTransA())
      return fail("a gate Gemm transposes its input");
    if (failed(addProduct(gemm.getA(), gemm.getB(), gemm.getTransB() != 0,
                          gemm.getAlpha().convertToFloat())))
      return failure();
    if (!isa<NoneType>(gemm.getC().getType()) &&
        failed(addGemmC(gemm.getC(), gemm.getBeta().convertToFloat())))
      return failure();
    form.ops.push_back(def);
    return form;
  }
  if (auto mul = dyn_cast<od::MulOp>(def)) {
    // A computed [batch, N] value times a per-feature constant: a diagonal
    // term (an LSTM's peephole P * c). Whether it is one is the cell
    // builder's decision.
    for (auto [val, k] : {std::pair(mul.getA(), mul.getB()),
                          std::pair(mul.getB(), mul.getA())}) {
      if (!od::getConstantAttr(od::skipIdentities(k)) ||
          od::getConstantAttr(od::skipIdentities(val)) || rankOf(val) != 2)
        continue;
      auto c = od::getConstantF32(od::skipIdentities(k));
      if (!c)
        return fail("a constant in a gate pre-activation is not f32");
      int64_t n = c->numElements();
      int64_t last = c->shape.empty() ? 1 : c->shape.back();
      if (n != 1 && (n != last || col0 + width > n))
        return fail("a gate pre-activation multiplies by a constant that is "
                    "not per feature");
      form.diagonal.push_back(
          {val, col0, BiasRef{od::skipIdentities(k), col0, width, n == 1, 1.0f}});
      form.ops.push_back(def);
      return form;
    }
  }
  if (auto expand = dyn_cast<od::ExpandOp>(def)) {
    // A broadcast that changes nothing (tf2onnx emits these), or one of a
    // constant bias.
    auto in = dyn_cast<RankedTensorType>(expand.getInput().getType());
    auto res = dyn_cast<RankedTensorType>(v.getType());
    bool same = in && res && in.hasStaticShape() && in == res;
    auto inner = analyze(expand.getInput(), col0, width, why, depth + 1);
    if (failed(inner))
      return failure();
    if (!same && !inner->terms.empty())
      return fail("a gate pre-activation broadcasts a non-constant value");
    inner->ops.push_back(def);
    return inner;
  }
  if (auto split = dyn_cast<od::SplitOp>(def)) {
    Value in = split.getInput();
    int64_t rank = rankOf(in);
    // (normalizeAxis: an axis attribute is any int64, INT64_MIN included.)
    std::optional<int64_t> axis =
        rank == 2 ? od::normalizeAxis(split.getAxis(), rank) : std::nullopt;
    if (axis != 1)
      return fail("a Split feeding a gate does not split the features");
    std::string splitWhy;
    auto sizesOr = od::getSplitSizes(split, staticDim(in, 1), splitWhy);
    if (failed(sizesOr))
      return fail("a Split feeding a gate has unusable sizes: " + splitWhy);
    SmallVector<int64_t> &sizes = *sizesOr;
    unsigned idx = cast<OpResult>(v).getResultNumber();
    int64_t offset = 0;
    for (unsigned i = 0; i < idx; ++i)
      offset += sizes[i];
    if (col0 + width > sizes[idx])
      return fail("a gate reads past its Split part");
    auto inner = analyze(in, offset + col0, width, why, depth + 1);
    if (failed(inner))
      return failure();
    inner->ops.push_back(def);
    return inner;
  }
  if (auto slice = dyn_cast<od::SliceOp>(def)) {
    Value in = slice.getData();
    if (knownRank(in) != 2 || slice.getStartsAttr())
      return fail("a Slice feeding a gate is not a feature slice");
    auto starts = od::getConstantInts(slice.getStarts());
    auto ends = od::getConstantInts(slice.getEnds());
    std::optional<SmallVector<int64_t>> axes, steps;
    if (!isa<NoneType>(slice.getAxes().getType()))
      axes = od::getConstantInts(slice.getAxes());
    if (!isa<NoneType>(slice.getSteps().getType()))
      steps = od::getConstantInts(slice.getSteps());
    int64_t n = knownWidth(in);
    if (!starts || !ends || starts->empty() || starts->size() != ends->size() ||
        (axes && axes->size() != starts->size()) ||
        (steps && steps->size() != starts->size()) || ShapedType::isDynamic(n))
      return fail("a Slice feeding a gate is not a constant feature slice");
    // One entry per sliced axis: the features (axis 1) with unit step, and
    // optionally the batch (axis 0) taken whole, as tf2onnx writes Keras 3's
    // `x[:, a:b]`.
    int64_t s = 0, e = n;
    bool features = false;
    for (size_t i = 0; i < starts->size(); ++i) {
      int64_t axis = axes ? (*axes)[i] : (int64_t)i;
      if (axis < 0)
        axis += 2;
      int64_t st = steps ? (*steps)[i] : 1;
      if (st != 1 || axis < 0 || axis > 1)
        return fail("a Slice feeding a gate is not a unit-step feature slice");
      if (axis == 0) {
        int64_t batch = staticDim(in, 0);
        bool whole = (*starts)[i] == 0 &&
                     ((*ends)[i] >= INT32_MAX ||
                      (!ShapedType::isDynamic(batch) && (*ends)[i] >= batch));
        if (!whole)
          return fail("a Slice feeding a gate cuts the batch");
        continue;
      }
      if (features)
        return fail("a Slice feeding a gate is not a constant feature slice");
      features = true;
      s = (*starts)[i];
      e = (*ends)[i];
    }
    s = std::clamp<int64_t>(s < 0 ? s + n : s, 0, n);
    e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
    if (col0 + width > e - s)
      return fail("a gate reads past its Slice");
    auto inner = analyze(in, s + col0, width, why, depth + 1);
    if (failed(inner))
      return failure();
    inner->ops.push_back(def);
    return inner;
  }
  if (isa<od::SqueezeOp, od::ReshapeOp>(def)) {
    // A batch of one dropped, [1, N] -> [N] (tf2onnx squeezes h R at a fixed
    // batch of 1, and the Add broadcasts it back): the same N values, read
    // as they are. Only a static batch of 1 whose result is those N values
    // (a term's batch is checked against the cell's by its builder).
    Value in = def->getOperand(0);
    auto it = dyn_cast<RankedTensorType>(in.getType());
    auto rt = dyn_cast<RankedTensorType>(v.getType());
    if (it && rt && it.hasStaticShape() && rt.hasStaticShape() &&
        it.getRank() == 2 && it.getDimSize(0) == 1 && rt.getRank() == 1 &&
        rt.getDimSize(0) == it.getDimSize(1)) {
      auto inner = analyze(in, col0, width, why, depth + 1);
      if (failed(inner))
        return failure();
      inner->ops.push_back(def);
      return inner;
    }
  }
  StringRef type = od::getOnnxOpType(def);
  return fail("'" + (type.empty() ? def->getName().getStringRef() : type) +
              "' in a gate pre-activation is not linear");
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// True if `v` looks like one time step cut out of a sequence tensor.
bool isStepSlice(Value v) {
  v = od::skipIdentities(v);
  Operation *def = v.getDefiningOp();
  if (auto g = dyn_cast_or_null<od::GatherOp>(def))
    return rankOf(g.getData()) == rankOf(v) + 1;
  if (auto sq = dyn_cast_or_null<od::SqueezeOp>(def))
    return isa_and_nonnull<od::SliceOp, od::SplitOp, od::GatherOp>(
        sq.getData().getDefiningOp());
  if (auto re = dyn_cast_or_null<od::ReshapeOp>(def))
    return rankOf(re.getData()) == rankOf(v) + 1 &&
           isa_and_nonnull<od::SliceOp, od::SplitOp>(re.getData().getDefiningOp());
  return false;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The state of one run over one function.
class CellRecognizer {
public:
  CellRecognizer(func::FuncOp func, bool importQuantized,
                 StringRef quantizedPrecision = "f32")
      : importQuantized(importQuantized),
        quantizedPrecision(quantizedPrecision.str()), func(func),
        ctx(func.getContext()),
        consts(std::make_unique<od::ConstantBuilder>(func)) {
    analyzer.quantized = [this](Operation *op, QuantizedProduct &q,
                                std::string &why) {
      return matchQuantizedProduct(op, q, why);
    };
  }
  void run();
  int64_t numCells = 0, numLayers = 0, numUnfusedRecurrences = 0;
  /// "not fused as a ... cell" remarks emitted (quiet matches count none).
  int64_t numNearMisses = 0;

private:
  /// After recognition: a remark on every recurrence left in the graph
  /// (never silent), see the definition.
  void remarkUnfusedRecurrences();
  /// Gate matmul weights computed from constants by data movement become
  /// initializers, see the definition.
  void materializeComputedWeights();
  /// Loop bodies read the values they carry unchanged from outside.
  void readInvariantCarriedValues();
  /// The QOperator format's quantized ops as their QDQ form (compiled
  /// targets), see the definition.
  void expandQOperatorNodes();
  void expandQGemm(onnx::NodeOp n);
  /// ONNX Runtime's com.microsoft.FusedGemm (a Gemm and its activation, as
  /// ORT_ENABLE_EXTENDED saves them) as a Gemm and the activation op.
  void expandFusedGemms();
  bool expandFusedGemmsOnce();
  /// LinearAnalyzer::quantized: onnxruntime.quantization's MatMuls.
  int matchQuantizedProduct(Operation *op, QuantizedProduct &q,
                            std::string &why);
  /// The f32 weight `(wq - zp) * scale` (along `axis`), made once per
  /// (wq, zp, scale, axis); null with `why` set when it cannot be.
  Value dequantizedWeight(Location loc, Value wq, Value scale, Value zp,
                          int64_t axis, std::string &why);
  Value quantizedBias(onnx::NodeOp dq, Value weight, std::string &why);
  /// Per dequantized weight: the first bias quantizedBias made for a Gemm
  /// of it, and half of each element's quantization step (keyed by values:
  /// forgetCached drops an erased op's entries).
  struct QuantBias {
    Value c;
    od::F32Tensor values, halfStep;
  };
  DenseMap<Value, QuantBias> quantBiases;
  std::map<std::tuple<void *, void *, void *, int64_t>, Value> dequantized;
  /// The precision attribute of a cell read through quantized MatMuls.
  void markQuantized(Operation *cell, ArrayRef<const LinearForm *> forms);
  MLIRContext &getContext() { return *ctx; }
  void importLayer(Operation *op);
  bool importQuantized;
  /// The `lstm_opt.precision` an imported quantized layer gets ("f32":
  /// none).
  std::string quantizedPrecision;
  /// Whether markQuantized said that the f32 cells ignore the model's
  /// quantization.
  bool saidQuantizedF32 = false;
  void matchForm(const CellForm &form, const CellPattern &pattern,
                 Operation *anchor);
  /// `coupledI`: the input gate of a coupled form (f = 1 - i), else null.
  void buildLSTM(Operation *cOp, od::MulOp ig, std::optional<Activation> fAct,
                 Value cPrev, ArrayRef<Operation *> extra, bool quiet = false,
                 Value coupledI = Value());
  Value zeros(Location loc, Value like, int64_t hidden);
  /// `negatedUpdate`: the update gate enters as z*n + (1 - z)*h.
  void buildGRU(Operation *anchor, Activation z, Activation n, Value h,
                SmallVector<Operation *> matched, bool quiet,
                bool negatedUpdate = false);
  void matchRNNCells();
  /// Shared tail: weights from per-gate linear forms, cell creation checks.
  struct GateTerms {
    SmallVector<SmallVector<WeightRef, 2>, 4> w, r;
    SmallVector<SmallVector<BiasRef, 2>, 4> bw, br;
  };
  bool splitTerms(ArrayRef<LinearForm> forms, Value x, Value h, GateTerms &out,
                  std::string &why);
  Location fusedLoc(ArrayRef<Operation *> ops);
  void finishCell(Operation *cell, ArrayRef<Operation *> matched,
                  ArrayRef<std::pair<Value, Value>> replace);
  /// The report's counts (rnn.source_nodes, rnn.source_gemms) of the nodes
  /// `matched` that `cell` replaces, whose `outputs` it takes over.
  void setSourceCounts(Operation *cell, ArrayRef<Operation *> matched,
                       ArrayRef<Value> outputs);
  Value materializeWeights(Location loc, StringRef name,
                           ArrayRef<SmallVector<WeightRef, 2>> gates,
                           int64_t hidden, int64_t k);
  Value materializeBias(Location loc, StringRef name,
                        ArrayRef<SmallVector<BiasRef, 2>> gates, int64_t hidden);
  const std::vector<float> &constant(Value v);
  void eraseIfDead(ArrayRef<Operation *> ops);
  /// Drops the cache entries that name `op`'s results (it is being erased).
  void forgetCached(Operation *op);

  func::FuncOp func;
  MLIRContext *ctx;
  std::unique_ptr<od::ConstantBuilder> consts;
  LinearAnalyzer analyzer;
  DenseMap<Value, std::vector<float>> constCache;
  std::map<std::vector<std::tuple<const void *, bool, int64_t, int64_t,
                                  int64_t, int64_t, float>>,
           Value>
      weightCache;
  std::map<std::vector<std::tuple<const void *, int64_t, int64_t, bool, float>>,
           Value>
      biasCache;
  /// c_out -> h_out of each recognised cell.
  DenseMap<Value, Value> cellOfC;
  DenseSet<Operation *> erasedOps;
};

const std::vector<float> &CellRecognizer::constant(Value v) {
  auto it = constCache.find(v);
  if (it != constCache.end())
    return it->second;
  if (od::getConstantAttr(v))
    return constCache[v] = od::getConstantF32(v)->values;
  return constCache[v] = od::foldConstantF32(v, kMaxFoldedBias)->values;
}

Value CellRecognizer::materializeWeights(
    Location loc, StringRef name, ArrayRef<SmallVector<WeightRef, 2>> gates,
    int64_t hidden, int64_t k) {
  std::vector<std::tuple<const void *, bool, int64_t, int64_t, int64_t, int64_t,
                         float>>
      key;
  for (auto &g : gates) {
    for (const WeightRef &w : g)
      key.push_back(w.key());
    // Gate separator, with the shape (empty gates stand for zeros).
    key.push_back({nullptr, false, hidden, k, -1, -1, 0.f});
  }
  auto it = weightCache.find(key);
  if (it != weightCache.end())
    return it->second;
  // Canonical [G*H, K]: row (gate, j), column i = sum of src(i, j) * scale.
  std::vector<float> out(gates.size() * hidden * k, 0.0f);
  for (auto [gi, refs] : llvm::enumerate(gates)) {
    for (const WeightRef &w : refs) {
      const std::vector<float> &src = constant(w.src);
      auto shape = cast<RankedTensorType>(od::skipIdentities(w.src).getType())
                       .getShape();
      int64_t ncols = shape[1]; // src is [K, N], or [N, K] if transposed
      for (int64_t j = 0; j < hidden; ++j)
        for (int64_t i = 0; i < k; ++i) {
          int64_t r = w.row0 + i, c = w.col0 + j;
          float v = w.transposed ? src[c * ncols + r] : src[r * ncols + c];
          out[(gi * hidden + j) * k + i] += v * w.scale;
        }
    }
  }
  Value v = consts->getF32(loc, name, {(int64_t)gates.size() * hidden, k}, out);
  weightCache[key] = v;
  return v;
}

Value CellRecognizer::materializeBias(Location loc, StringRef name,
                                      ArrayRef<SmallVector<BiasRef, 2>> gates,
                                      int64_t hidden) {
  std::vector<std::tuple<const void *, int64_t, int64_t, bool, float>> key;
  for (auto &g : gates) {
    for (const BiasRef &b : g)
      key.push_back(b.key());
    key.push_back({nullptr, hidden, -1, false, 0.f}); // separator and size
  }
  auto it = biasCache.find(key);
  if (it != biasCache.end())
    return it->second;
  std::vector<float> out(gates.size() * hidden, 0.0f);
  for (auto [gi, refs] : llvm::enumerate(gates))
    for (const BiasRef &b : refs) {
      const std::vector<float> &src = constant(b.src);
      for (int64_t j = 0; j < hidden; ++j)
        out[gi * hidden + j] += (b.scalar ? src[0] : src[b.col0 + j]) * b.scale;
    }
  Value v = consts->getF32(loc, name, {(int64_t)gates.size() * hidden}, out);
  biasCache[key] = v;
  return v;
}

void CellRecognizer::forgetCached(Operation *op) {
  // The caches are keyed by values (their addresses): an op allocated later
  // at an erased one's address must not find the erased one's entries.
  for (Value v : op->getResults()) {
    const void *p = v.getAsOpaquePointer();
    constCache.erase(v);
    for (auto it = dequantized.begin(); it != dequantized.end();) {
      auto &[key, value] = *it;
      if (value == v || std::get<0>(key) == p || std::get<1>(key) == p ||
          std::get<2>(key) == p)
        it = dequantized.erase(it);
      else
        ++it;
    }
    auto dropFrom = [&](auto &cache) {
      for (auto it = cache.begin(); it != cache.end();) {
        bool stale = it->second == v ||
                     llvm::any_of(it->first, [&](const auto &entry) {
                       return std::get<0>(entry) == p;
                     });
        it = stale ? cache.erase(it) : std::next(it);
      }
    };
    dropFrom(weightCache);
    dropFrom(biasCache);
    SmallVector<Value> staleBiases;
    for (auto &[weight, bias] : quantBiases)
      if (weight == v || bias.c == v)
        staleBiases.push_back(weight);
    for (Value w : staleBiases)
      quantBiases.erase(w);
  }
}

void CellRecognizer::eraseIfDead(ArrayRef<Operation *> ops) {
  auto onErase = [&](Operation *op) {
    erasedOps.insert(op);
    consts->forget(op);
    forgetCached(op);
  };
  SmallVector<Operation *> work(ops.begin(), ops.end());
  // `ops` are live: an older entry at one's address is stale.
  for (Operation *op : ops)
    erasedOps.erase(op);
  while (true) {
    od::eraseDeadOps(work, onErase);
    // An activation kept as onnx.node (Softsign, Elu, ...; unknown effects
    // to generic code), or a quantized MatMul's MatMulInteger and
    // DynamicQuantizeLinear, is known to be pure here: a dead one goes too,
    // and with it what only it read.
    SmallVector<Operation *> next;
    for (Operation *op : work) {
      if (erasedOps.contains(op) || !isa<od::NodeOp>(op) || !op->use_empty())
        continue;
      auto node = cast<od::NodeOp>(op);
      bool quantOp =
          (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
          llvm::is_contained({"MatMulInteger", "DynamicQuantizeLinear",
                              "QuantizeLinear", "DequantizeLinear",
                              "QLinearMatMul"},
                             node.getOpType());
      auto act = op->getNumResults() == 1
                     ? rnn::getActivation(op->getResult(0))
                     : std::nullopt;
      if (!quantOp && (!act || act->op != op))
        continue;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          next.push_back(def);
      onErase(op);
      op->erase();
    }
    // (An op pushed here may have been erased later in the same sweep.)
    auto erased = [&](Operation *op) { return erasedOps.contains(op); };
    llvm::erase_if(next, erased);
    if (next.empty())
      return;
    llvm::erase_if(work, erased);
    work.append(next.begin(), next.end());
  }
}

/// h' = o * h(c') among the users of c': the Mul, o and h.
static std::optional<std::tuple<od::MulOp, Activation, Activation>>
findHiddenOutput(Value cNew) {
  // Prefer o with a gate activation; any activation still identifies the
  // structure (and a wrong one is then reported, not ignored).
  std::optional<std::tuple<od::MulOp, Activation, Activation>> fallback;
  for (Operation *user : cNew.getUsers()) {
    if (user->getNumResults() != 1)
      continue;
    auto u = getActivation(user->getResult(0));
    if (!u || u->op != user || u->input != cNew)
      continue;
    for (Operation *uu : user->getUsers()) {
      auto m = dyn_cast<od::MulOp>(uu);
      if (!m)
        continue;
      Value other = m.getA() == user->getResult(0) ? m.getB() : m.getA();
      auto o = getActivation(other);
      if (o && isGateActivation(*o))
        return std::make_tuple(m, *o, *u);
      if (o && !fallback)
        fallback = std::make_tuple(m, *o, *u);
    }
  }
  return fallback;
}

//===----------------------------------------------------------------------===//
// Which value a step reads is its hidden state
//===----------------------------------------------------------------------===//

/// Where a value comes from when only data movement separates it from its
/// source: a graph input (`arg`), something constant (an initializer, zeros
/// made in the graph, also from a computed shape), or computed (neither).
struct StateRoot {
  Value arg;
  bool constant = false;
  bool known() const { return arg || constant; }
  bool operator==(const StateRoot &o) const {
    return known() && arg == o.arg && constant == o.constant;
  }
};

static StateRoot stateRoot(Value v) {
  // Bounded: a longer chain of pure data movement is treated as computed.
  for (int depth = 0; depth < 64; ++depth) {
    if (isa<BlockArgument>(v))
      return {v, false};
    Operation *def = v.getDefiningOp();
    if (od::getConstantAttr(v) || isa<od::ConstantOfShapeOp>(def))
      return {Value(), true};
    if (!isa<od::IdentityOp, od::GatherOp, od::SliceOp, od::SplitOp,
             od::SqueezeOp, od::UnsqueezeOp, od::ReshapeOp, od::ExpandOp,
             od::TransposeOp, od::CastOp>(def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

/// The weights that later steps apply to `out`, this step's hidden output:
/// the B operands of the MatMul/Gemm nodes that read it (through Identity).
static SmallVector<Value> weightsApplied(Value out) {
  SmallVector<Value> weights, work = {out};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto id = dyn_cast<od::IdentityOp>(user))
        work.push_back(id.getResult());
      else if (isa<od::MatMulOp, od::GemmOp>(user) &&
               use.getOperandNumber() == 0)
        weights.push_back(od::skipIdentities(user->getOperand(1)));
    }
  }
  return weights;
}

/// Which of the two values `inputs` that a step's gates read is its hidden
/// state, from the recurrence rather than from shapes. In order:
///  1. the hidden output of the step that produced `cPrev` (LSTM);
///  2. the one that is multiplied by the weights that the next step applies
///     to this step's output `out` (the recurrent weights R);
///  3. the one with the same source as `cPrev` (both graph inputs sliced from
///     one state tensor, or both constant: a zero initial state);
///  4. the one that is a graph input or a constant when the other is computed
///     (a first step: the initial state, beside the layer below's output).
/// Returns 0 or 1, or -1 when none of these decides.
static int pickHiddenState(ArrayRef<Value> inputs, ArrayRef<LinearForm> forms,
                           Value cPrev, Value out) {
  auto pick = [&](bool a, bool b) { return a == b ? -1 : (a ? 0 : 1); };
  if (cPrev) {
    if (auto prev = findHiddenOutput(od::skipIdentities(cPrev))) {
      Value h = std::get<0>(*prev).getResult();
      int k = pick(od::skipIdentities(inputs[0]) == h,
                   od::skipIdentities(inputs[1]) == h);
      if (k >= 0)
        return k;
    }
  }
  if (out) {
    SmallVector<Value> next = weightsApplied(out);
    auto readsNext = [&](Value in) {
      for (const LinearForm &f : forms)
        for (const Term &t : f.terms)
          if (t.input == in)
            for (const WeightRef &w : t.weights)
              if (llvm::is_contained(next, od::skipIdentities(w.src)))
                return true;
      return false;
    };
    int k = pick(readsNext(inputs[0]), readsNext(inputs[1]));
    if (k >= 0)
      return k;
  }
  StateRoot a = stateRoot(inputs[0]), b = stateRoot(inputs[1]);
  if (cPrev) {
    StateRoot c = stateRoot(cPrev);
    int k = pick(a == c, b == c);
    if (c.known() && k >= 0)
      return k;
  }
  return pick(a.known(), b.known());
}

void CellRecognizer::matchForm(const CellForm &form,
                               const CellPattern &pattern, Operation *anchor) {
  // A folded first step is a term of the full update: the full form's job.
  if (form.foldedState && llvm::any_of(anchor->getUsers(), [](Operation *u) {
        return isa<od::AddOp>(u);
      }))
    return;
  auto m = rnn::matchCellPattern(pattern, anchor);
  if (!m)
    return;
  bool quiet = form.foldedState;
  switch (form.family) {
  case CellFamily::LSTM: {
    auto ig = dyn_cast_or_null<od::MulOp>(m->label("ig"));
    assert(ig && "an LSTM form labels the i*g product 'ig'");
    if (!ig)
      return;
    SmallVector<Operation *> extra(m->nodes.begin(), m->nodes.end());
    // A full update without f: the coupled form, f = 1 - i.
    Value coupledI = !form.foldedState && !m->activation("f") ? m->value("i")
                                                              : Value();
    buildLSTM(anchor, ig, m->activation("f"), m->value("c"), extra, quiet,
              coupledI);
    return;
  }
  case CellFamily::GRU: {
    auto z = m->activation("z"), n = m->activation("n");
    assert(z && n && "a GRU form binds activations z and n");
    if (!z || !n)
      return;
    buildGRU(anchor, *z, *n, m->value("h"), m->nodes, quiet,
             form.negatedUpdate);
    return;
  }
  }
}

/// Gates that read the parts of one Concat along features (x_t =
/// cat([embedding_t, condition]) in the model, times one weight) beside a
/// hidden state read on its own: the parts become one input again, the
/// Concat, each product's blocks of weight rows joined. Only where the gates
/// would otherwise read more than two values (two may be TensorFlow's
/// Concat([x, h]), which must stay apart), where exactly one value is left
/// beside the Concat's parts, and where every gate reads each part through
/// the same weights' consecutive row blocks. With `isState` (a GRU, whose
/// state the update names), the inputs other than the state must be the
/// parts. Without it, one value beside the parts is the state; or, where
/// the zero state was folded away, none, if no part has the `hidden` size
/// (else the parts may be [x, h] of the first step). True if the forms were
/// changed.
static bool joinConcatParts(MutableArrayRef<LinearForm *> forms,
                            function_ref<bool(Value)> isState,
                            int64_t hidden) {
  SmallVector<Value, 4> inputs;
  for (LinearForm *f : forms)
    for (Term &t : f->terms)
      if (!(isState && isState(t.input)) &&
          !llvm::is_contained(inputs, t.input))
        inputs.push_back(t.input);
  if (inputs.size() < 2)
    return false;
  auto partSizeIsHidden = [&](ArrayRef<Value> parts) {
    for (LinearForm *f : forms)
      for (Term &t : f->terms)
        if (llvm::is_contained(parts, t.input) &&
            (ShapedType::isDynamic(hidden) || t.k == hidden))
          return true;
    return false;
  };
  auto joinable = [](ArrayRef<Term *> parts) {
    for (Term *t : parts)
      if (!t || t->weights.size() != parts[0]->weights.size())
        return false;
    for (size_t j = 0; j < parts[0]->weights.size(); ++j)
      for (size_t p = 1; p < parts.size(); ++p) {
        const WeightRef &a = parts[p - 1]->weights[j], &b = parts[p]->weights[j];
        if (a.src != b.src || a.transposed != b.transposed ||
            a.col0 != b.col0 || a.width != b.width || a.scale != b.scale ||
            a.rows != parts[p - 1]->k || b.row0 != a.row0 + a.rows)
          return false;
      }
    return true;
  };
  for (LinearForm *f0 : forms)
    for (Operation *op : f0->ops) {
      auto cat = dyn_cast<od::ConcatOp>(op);
      if (!cat || cat.getNumOperands() < 2 || rankOf(cat.getResult()) != 2 ||
          (cat.getAxis() != 1 && cat.getAxis() != -1))
        continue;
      SmallVector<Value> parts(cat.getInputs().begin(), cat.getInputs().end());
      if (!llvm::all_of(parts,
                        [&](Value p) { return llvm::is_contained(inputs, p); }) ||
          DenseSet<Value>(parts.begin(), parts.end()).size() != parts.size())
        continue;
      if (isState ? inputs.size() != parts.size()
                  : inputs.size() != parts.size() + 1 &&
                        !(inputs.size() == parts.size() &&
                          !partSizeIsHidden(parts)))
        continue;
      // Each gate reads every part, or none of them.
      SmallVector<SmallVector<Term *>> byForm;
      bool ok = true;
      for (LinearForm *f : forms) {
        SmallVector<Term *> terms;
        for (Value p : parts) {
          Term *found = nullptr;
          for (Term &t : f->terms)
            if (t.input == p)
              found = &t;
          terms.push_back(found);
        }
        bool none = llvm::all_of(terms, [](Term *t) { return !t; });
        if (!none && !joinable(terms))
          ok = false;
        byForm.push_back(none ? SmallVector<Term *>() : terms);
      }
      if (!ok)
        continue;
      for (auto [f, terms] : llvm::zip(forms, byForm)) {
        llvm::erase(f->ops, cat.getOperation()); // it stays: the new x
        if (terms.empty())
          continue;
        Term joined{cat.getResult(), 0, terms[0]->weights};
        for (Term *t : terms)
          joined.k += t->k;
        for (WeightRef &w : joined.weights)
          w.rows = joined.k;
        SmallVector<Term, 2> rest;
        bool placed = false;
        for (Term &t : f->terms) {
          if (!llvm::is_contained(parts, t.input)) {
            rest.push_back(std::move(t));
          } else if (!placed) {
            rest.push_back(joined);
            placed = true;
          }
        }
        f->terms = std::move(rest);
      }
      return true;
    }
  return false;
}

Value CellRecognizer::zeros(Location loc, Value like, int64_t hidden) {
  // A state of more than 2^24 elements (64 MiB) is not made: a batch size
  // computed from a corrupt shape constant (2^40) must not exhaust memory.
  constexpr int64_t kMaxZeroState = int64_t(1) << 24;
  int64_t batch = staticDim(like, 0);
  std::optional<int64_t> n =
      ShapedType::isDynamic(batch)
          ? std::nullopt
          : checkedNumElements({batch, hidden}, kMaxZeroState);
  if (!n)
    return {};
  std::vector<float> z(*n, 0.0f);
  return consts->getF32(loc, "zero_state", {batch, hidden}, z);
}

/// A GEMM of the exporter's: MatMul, Gemm, or a quantized MatMulInteger or
/// QLinearMatMul.
static bool isGemm(Operation *op) {
  auto node = dyn_cast<od::NodeOp>(op);
  return isa<od::GemmOp, od::MatMulOp>(op) ||
         (node && (node.getOpType() == "MatMulInteger" ||
                   node.getOpType() == "QLinearMatMul" ||
                   node.getOpType() == "FusedGemm" ||
                   node.getOpType() == "QGemm"));
}

/// Gives `cell` the ONNX attributes for `acts` unless they are `defaults`
/// without parameters: `activations`, and `activation_alpha`/`_beta` listing
/// the parameters of the functions that take them, in order (ONNX Runtime
/// hands them out that way: [Sigmoid, LeakyRelu(0.1), Tanh] has the alphas
/// [0.1]).
static void setActivations(Operation *cell, ArrayRef<Activation> acts,
                           ArrayRef<StringRef> defaults) {
  bool isDefault = true;
  for (auto [a, d] : llvm::zip(acts, defaults))
    isDefault &= a.name == d && !a.hasParams;
  if (isDefault)
    return;
  Builder b(cell->getContext());
  SmallVector<StringRef> names;
  SmallVector<float> alphas, betas;
  for (const Activation &a : acts) {
    names.push_back(a.name);
    std::string n = StringRef(a.name).lower();
    if (llvm::is_contained({"leakyrelu", "thresholdedrelu", "elu",
                            "hardsigmoid", "scaledtanh", "affine"},
                           n))
      alphas.push_back(a.alpha);
    if (llvm::is_contained({"hardsigmoid", "scaledtanh", "affine"}, n))
      betas.push_back(a.beta);
  }
  cell->setAttr("activations", b.getStrArrayAttr(names));
  if (!alphas.empty())
    cell->setAttr("activation_alpha", b.getDenseF32ArrayAttr(alphas));
  if (!betas.empty())
    cell->setAttr("activation_beta", b.getDenseF32ArrayAttr(betas));
}

void CellRecognizer::buildLSTM(Operation *cOp, od::MulOp ig,
                               std::optional<Activation> fActIn, Value cPrev,
                               ArrayRef<Operation *> extra, bool quiet,
                               Value coupledI) {
  Value cNew = cOp->getResult(0);
  auto remark = [&](const Twine &why) {
    if (!quiet)
      ++numNearMisses, cOp->emitRemark() << "not fused as an LSTM cell: " << why;
  };
  auto out = findHiddenOutput(cNew);
  if (!out)
    return; // c' without h' = o*h(c'): not an LSTM step
  auto [hMul, oActV, hActV] = *out;
  Activation oAct = oActV, hActObj = hActV;
  Activation *hAct = &hActObj;
  auto igA = getActivation(ig.getA()), igB = getActivation(ig.getB());
  // The gate activation f: the forget gate's, or (folded c) the output's.
  Activation fRef = fActIn ? *fActIn : oAct;
  // Which of i*g is the gate: the one with f's activation.
  Activation iAct, gAct;
  bool either = false;
  if (coupledI) {
    // f = 1 - i: i is the operand of i*g that (1 - i) reads; ONNX's
    // input_forget takes i's activation for f.
    bool aIsI = od::skipIdentities(ig.getA()) == od::skipIdentities(coupledI);
    iAct = aIsI ? *igA : *igB;
    gAct = aIsI ? *igB : *igA;
    fRef = iAct;
  } else if (*igA == fRef && !(*igB == fRef)) {
    iAct = *igA;
    gAct = *igB;
  } else if (*igB == fRef && !(*igA == fRef)) {
    iAct = *igB;
    gAct = *igA;
  } else if (*igA == fRef && *igB == fRef) {
    // Both factors of i * g have the gate activation (Keras' LSTM with
    // activation="sigmoid"): i * g = g * i, so either is the input gate and
    // the step is the same; the one with a peephole, if any, below.
    iAct = *igA;
    gAct = *igB;
    either = true;
  } else {
    return remark("the input gate's activation (" + igA->name + "/" +
                  igB->name + ") differs from the forget gate's (" +
                  fRef.name + ")");
  }
  if (!(oAct == fRef))
    return remark("the output gate's activation (" + oAct.name +
                  ") differs from the forget gate's (" + fRef.name + ")");
  // The hidden size: the first static one among the step's values.
  int64_t hidden = ShapedType::kDynamic;
  SmallVector<Value> sized = {cNew, hMul.getResult(), iAct.input, gAct.input,
                              oAct.input};
  if (cPrev)
    sized.push_back(cPrev);
  if (fActIn)
    sized.push_back(fActIn->input);
  for (Value v : sized)
    if (rankOf(v) == 2 && !ShapedType::isDynamic(staticDim(v, 1))) {
      hidden = staticDim(v, 1);
      break;
    }
  if (ShapedType::isDynamic(hidden))
    for (Value v : sized)
      if (!ShapedType::isDynamic(hidden = knownWidth(v)))
        break;
  for (Value v : {cNew, hMul.getResult(), cPrev})
    if (v && rankOf(v) != 2 && rankOf(v) != -1)
      return remark("the cell state is not a [batch, hidden] tensor");
  if (ShapedType::isDynamic(hidden))
    return remark("the hidden size is not known statically");

  // Linear forms of the gates, canonical order i, f, g, o (f absent when the
  // zero cell state was folded: its weights do not matter then).
  std::optional<Activation> gateActs[4] = {iAct, fActIn, gAct, oAct};
  LinearForm forms[4];
  for (int k = 0; k < 4; ++k) {
    if (!gateActs[k])
      continue;
    std::string why;
    auto f = analyzer.analyzeGate(gateActs[k]->input, 0, hidden, why,
                                  /*allowDiagonal=*/true);
    if (failed(f))
      return remark(why);
    forms[k] = std::move(*f);
  }
  if (either && forms[0].diagonal.empty() && !forms[2].diagonal.empty()) {
    std::swap(forms[0], forms[2]);
    std::swap(iAct, gAct);
  }
  // Peepholes: P_i * c and P_f * c (the state before the step) in i and f,
  // P_o * c' in o; nothing else is multiplied elementwise in an LSTM gate.
  SmallVector<SmallVector<BiasRef, 2>, 3> peep(3); // i, f, o
  bool hasPeephole = false;
  for (int k = 0; k < 4; ++k)
    for (DiagonalTerm &dt : forms[k].diagonal) {
      Value want = k == 3 ? cNew : k == 2 ? Value() : cPrev;
      if (k == 2)
        return remark("the cell candidate's pre-activation multiplies a value "
                      "elementwise (ONNX's peepholes are on i, f and o)");
      if (!want || dt.col0 != 0 ||
          od::skipIdentities(dt.input) != od::skipIdentities(want))
        return remark(Twine("a gate pre-activation multiplies a value "
                            "elementwise that is not the cell state ") +
                      (k == 3 ? "after the step (o's peephole reads c')"
                              : "before the step (i's and f's peepholes read c)"));
      peep[k == 3 ? 2 : k].push_back(dt.factor);
      hasPeephole = true;
    }
  // The inputs: the step input x and the hidden state h (absent when the
  // zero initial state was folded). A step input joined from parts reads as
  // several: one again.
  LinearForm *formPtrs[] = {&forms[0], &forms[1], &forms[2], &forms[3]};
  joinConcatParts(formPtrs, nullptr, hidden);
  SmallVector<Value, 2> inputs;
  for (auto &f : forms)
    for (Term &t : f.terms)
      if (!llvm::is_contained(inputs, t.input))
        inputs.push_back(t.input);
  if (inputs.empty() || inputs.size() > 2)
    return remark("the gates read " + Twine(inputs.size()) +
                  " values; an LSTM step reads its input and hidden state");
  auto featureSize = [&](Value in) {
    for (auto &f : forms)
      for (Term &t : f.terms)
        if (t.input == in)
          return t.k;
    return int64_t(ShapedType::kDynamic);
  };
  Value x, h;
  if (inputs.size() == 1) {
    x = inputs[0];
  } else {
    int64_t k0 = featureSize(inputs[0]), k1 = featureSize(inputs[1]);
    int hIdx = -1;
    // The previous step of this layer produced both c and h.
    auto prevH = cPrev ? cellOfC.find(cPrev) : cellOfC.end();
    if (prevH != cellOfC.end() && inputs[0] == prevH->second)
      hIdx = 0;
    else if (prevH != cellOfC.end() && inputs[1] == prevH->second)
      hIdx = 1;
    else if (k0 == hidden && k1 != hidden)
      hIdx = 0;
    else if (k1 == hidden && k0 != hidden)
      hIdx = 1;
    else
      hIdx = pickHiddenState(inputs, forms, cPrev, hMul.getResult());
    if (hIdx < 0 && isStepSlice(inputs[0]) != isStepSlice(inputs[1]))
      hIdx = isStepSlice(inputs[0]) ? 1 : 0;
    if (hIdx < 0) {
      // Nothing in the graph tells them apart: both have the hidden size and
      // both come from graph inputs (or both are computed), and no later step
      // of this cell exists to say which one the recurrence carries. A
      // single step is symmetric in (x, W) and (h, R), so either reading
      // computes the same numbers; the first one read is taken as the input.
      if (cPrev && cellOfC.count(cPrev))
        return remark("cannot tell the step input from the hidden state");
      hIdx = 1;
    }
    x = inputs[1 - hIdx];
    h = inputs[hIdx];
    if (featureSize(h) != hidden)
      return remark("the hidden state feeding the gates has size " +
                    Twine(featureSize(h)) + ", not " + Twine(hidden));
  }
  int64_t inSize = featureSize(x);
  if (!isa<RankedTensorType>(x.getType()) ||
      (h && !isa<RankedTensorType>(h.getType())))
    return remark("the step input or hidden state has no known rank");

  SmallVector<SmallVector<WeightRef, 2>, 4> wRefs(4), rRefs(4);
  SmallVector<SmallVector<BiasRef, 2>, 4> bRefs(4);
  for (int k = 0; k < 4; ++k) {
    for (Term &t : forms[k].terms)
      (t.input == x ? wRefs[k] : rRefs[k]).append(t.weights.begin(),
                                                  t.weights.end());
    bRefs[k] = forms[k].biases;
  }

  // Everything matched: build the cell.
  SmallVector<Operation *> matched = {cOp, ig, hMul, hAct->op, iAct.op,
                                      gAct.op, oAct.op};
  matched.append(extra.begin(), extra.end());
  if (fActIn)
    matched.push_back(fActIn->op);
  for (auto &f : forms)
    matched.append(f.ops.begin(), f.ops.end());
  SmallVector<Location> locs;
  for (Operation *op : matched)
    locs.push_back(op->getLoc());
  Location loc = FusedLoc::get(&getContext(), locs);
  if (!h && !(h = zeros(loc, cNew, hidden)))
    return remark("a folded zero initial state needs a static batch size");
  if (!cPrev && !(cPrev = zeros(loc, cNew, hidden)))
    return remark("a folded zero initial state needs a static batch size");
  Value W = materializeWeights(loc, "lstm_W", wRefs, hidden, inSize);
  Value R = materializeWeights(loc, "lstm_R", rRefs, hidden, hidden);
  Value Bw = materializeBias(loc, "lstm_B", bRefs, hidden);
  SmallVector<SmallVector<BiasRef, 2>, 4> none(4);
  Value Br = materializeBias(loc, "lstm_zero_bias", none, hidden);
  Value P = hasPeephole ? materializeBias(loc, "lstm_P", peep, hidden) : Value();

  OpBuilder b(cOp);
  // States left unranked by shape inference get [batch, hidden].
  auto stateType = [&](Value v) -> Type {
    if (isa<RankedTensorType>(v.getType()))
      return v.getType();
    int64_t batch = staticDim(x, 0);
    if (ShapedType::isDynamic(batch))
      batch = staticDim(h, 0);
    return RankedTensorType::get(
        {batch, hidden}, cast<RankedTensorType>(x.getType()).getElementType());
  };
  auto cell = rnn::LSTMCellOp::create(b, loc, stateType(hMul.getResult()),
                                      stateType(cNew), x, h, cPrev, W, R, Bw,
                                      Br, P, nullptr, nullptr, nullptr, nullptr,
                                      coupledI ? b.getUnitAttr() : nullptr);
  LogicalResult valid = success();
  {
    // A failed check here is a reason not to fuse, not an error.
    ScopedDiagnosticHandler silence(&getContext(), [](Diagnostic &) {
      return success();
    });
    valid = mlir::verify(cell, /*verifyRecursively=*/false);
  }
  if (failed(valid)) {
    cell.erase();
    return remark("the step's values have incompatible shapes");
  }
  setActivations(cell, {fRef, gAct, *hAct}, {"Sigmoid", "Tanh", "Tanh"});
  // What the cell replaces, for the report.
  SetVector<Operation *> unique(matched.begin(), matched.end());
  setSourceCounts(cell, unique.getArrayRef(),
                  {hMul.getResult(), cNew});
  markQuantized(cell, {&forms[0], &forms[1], &forms[2], &forms[3]});
  if (!fActIn && !coupledI)
    cell->setAttr("rnn.zero_forget", b.getUnitAttr());
  hMul.getResult().replaceAllUsesWith(cell.getHOut());
  cNew.replaceAllUsesWith(cell.getCOut());
  cellOfC[cell.getCOut()] = cell.getHOut();
  ++numCells;
  eraseIfDead(unique.getArrayRef());
}


//===----------------------------------------------------------------------===//
// GRU and simple RNN cells
//===----------------------------------------------------------------------===//

/// Leaves of an Add tree (through Identity), with the Adds walked.
static void addLeaves(Value v, SmallVectorImpl<Value> &leaves,
                      SmallVectorImpl<Operation *> &adds) {
  v = od::skipIdentities(v);
  if (auto add = v.getDefiningOp<od::AddOp>()) {
    adds.push_back(add);
    addLeaves(add.getA(), leaves, adds);
    addLeaves(add.getB(), leaves, adds);
    return;
  }
  leaves.push_back(v);
}

Location CellRecognizer::fusedLoc(ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return FusedLoc::get(&getContext(), locs);
}

bool CellRecognizer::splitTerms(ArrayRef<LinearForm> forms, Value x, Value h,
                                GateTerms &out, std::string &why) {
  out.w.assign(forms.size(), {});
  out.r.assign(forms.size(), {});
  out.bw.assign(forms.size(), {});
  out.br.assign(forms.size(), {});
  for (auto [k, f] : llvm::enumerate(forms)) {
    for (const Term &t : f.terms) {
      if (t.input == x)
        out.w[k].append(t.weights.begin(), t.weights.end());
      else if (h && t.input == h)
        out.r[k].append(t.weights.begin(), t.weights.end());
      else {
        why = "a gate reads a value that is neither the step input nor the "
              "hidden state";
        return false;
      }
    }
    out.bw[k] = f.biases;
  }
  return true;
}

void CellRecognizer::finishCell(Operation *cell, ArrayRef<Operation *> matched,
                                ArrayRef<std::pair<Value, Value>> replace) {
  SetVector<Operation *> unique(matched.begin(), matched.end());
  SmallVector<Value> outputs;
  for (auto [from, to] : replace)
    outputs.push_back(from);
  setSourceCounts(cell, unique.getArrayRef(), outputs);
  for (auto [from, to] : replace)
    from.replaceAllUsesWith(to);
  ++numCells;
  eraseIfDead(unique.getArrayRef());
}

void CellRecognizer::setSourceCounts(Operation *cell,
                                     ArrayRef<Operation *> matched,
                                     ArrayRef<Value> outputs) {
  // A step of a hoisted projection counts as the nodes it stands for.
  int64_t nodes = 0, gemms = 0;
  for (Operation *op : matched) {
    auto counts = rnn::StepNormalizer::sourceCounts(op);
    nodes += counts ? counts->first : 1;
    gemms += counts ? counts->second : isGemm(op);
  }
  // An output the unit-axis rewrite put back with an Unsqueeze that a
  // stack reads: the roller counts that Unsqueeze as the exporter's.
  for (Value out : outputs)
    for (Operation *user : out.getUsers())
      if (isa<od::UnsqueezeOp>(user) && rnn::StepNormalizer::isMade(user) &&
          llvm::any_of(user->getUsers(),
                       [](Operation *u) { return isa<od::ConcatOp>(u); }))
        --nodes;
  OpBuilder b(cell);
  cell->setAttr("rnn.source_nodes", b.getI64IntegerAttr(nodes));
  cell->setAttr("rnn.source_gemms", b.getI64IntegerAttr(gemms));
}

/// Verifies a freshly built cell without reporting; erases it on failure.
static bool verifyQuietly(Operation *cell) {
  ScopedDiagnosticHandler silence(cell->getContext(),
                                  [](Diagnostic &) { return success(); });
  if (succeeded(mlir::verify(cell, /*verifyRecursively=*/false)))
    return true;
  cell->erase();
  return false;
}

void CellRecognizer::buildGRU(Operation *anchor, Activation zA, Activation nA,
                              Value h, SmallVector<Operation *> matched,
                              bool quiet, bool negatedUpdate) {
  Value hNew = anchor->getResult(0);
  std::optional<Activation> z = zA, n = nA;
  auto remark = [&](const Twine &why) {
    if (!quiet)
      ++numNearMisses, anchor->emitRemark() << "not fused as a GRU cell: " << why;
  };
  int64_t hidden = staticDim(hNew, 1);
  if ((rankOf(hNew) != 2 || ShapedType::isDynamic(hidden)) && h)
    hidden = staticDim(h, 1);
  if (rankOf(hNew) != 2 || ShapedType::isDynamic(hidden))
    return remark("the hidden state is not [batch, hidden] with a static size");
  matched.append({z->op, n->op});

  // n's pre-activation: x-part + r * (h R_n + b_hn)  (linear_before_reset)
  // or a linear form over x and r * h.
  SmallVector<Value> leaves;
  SmallVector<Operation *> adds;
  addLeaves(n->input, leaves, adds);
  std::optional<Activation> r;
  Value resetLinear; // h R_n + b_hn
  SmallVector<Value> xLeaves;
  for (Value leaf : leaves) {
    auto m = leaf.getDefiningOp<od::MulOp>();
    std::optional<Activation> ra;
    Value other;
    if (m) {
      // r is the factor with z's activation; failing that a sigmoid-like
      // one (and a mismatch is reported below).
      auto ga = getActivation(m.getA()), gb = getActivation(m.getB());
      auto rank = [&](const std::optional<Activation> &a) {
        return !a ? 0 : *a == *z ? 3 : isGateActivation(*a) ? 2 : 1;
      };
      int rankA = rank(ga), rankB = rank(gb);
      if (rankA && rankA >= rankB)
        ra = ga, other = m.getB();
      else if (rankB)
        ra = gb, other = m.getA();
    }
    if (other && !resetLinear && rankOf(other) == 2) {
      r = ra;
      resetLinear = other;
      matched.push_back(m);
      continue;
    }
    xLeaves.push_back(leaf);
  }
  bool lbr = (bool)resetLinear;
  matched.append(adds.begin(), adds.end());
  LinearForm formN, formNRec;
  formN.width = hidden;
  for (Value leaf : xLeaves) {
    std::string why;
    auto f = analyzer.analyzeGate(leaf, 0, hidden, why);
    if (failed(f))
      return remark(why);
    formN.add(std::move(*f), 1.0f);
  }
  Value rh; // lbr = 0: the value r * h feeding a matmul
  if (lbr) {
    std::string why;
    auto f = analyzer.analyzeGate(resetLinear, 0, hidden, why);
    if (failed(f))
      return remark(why);
    formNRec = std::move(*f);
  } else {
    // Find the term whose input is r * h.
    for (Term &t : formN.terms) {
      auto m = od::skipIdentities(t.input).getDefiningOp<od::MulOp>();
      if (!m)
        continue;
      for (auto [a, b] : {std::pair(m.getA(), m.getB()), std::pair(m.getB(), m.getA())}) {
        auto ra = getActivation(a);
        if (ra && *ra == *z && h &&
            od::skipIdentities(b) == od::skipIdentities(h)) {
          r = ra;
          rh = t.input;
          matched.push_back(m);
        }
      }
    }
    if (!r && h)
      return remark("no reset gate found in the candidate's pre-activation");
  }
  // Without a hidden state and a reset product, r does not matter: its rows
  // stay zero and the roller treats them as don't-care.
  bool noReset = !r;
  if (noReset)
    r = z;
  if (!(*r == *z))
    return remark("the reset gate's activation (" + r->name +
                  ") differs from the update gate's (" + z->name + ")");
  std::string why;
  FailureOr<LinearForm> formR = LinearForm();
  formR->width = hidden;
  if (!noReset) {
    matched.push_back(r->op);
    formR = analyzer.analyzeGate(r->input, 0, hidden, why);
    if (failed(formR))
      return remark(why);
  }
  auto formZ = analyzer.analyzeGate(z->input, 0, hidden, why);
  if (failed(formZ))
    return remark(why);
  if (negatedUpdate) {
    // h' = z*n + (1 - z)*h is a GRU with update gate 1 - z. For a sigmoid,
    // 1 - sigmoid(a) = sigmoid(-a); for HardSigmoid(alpha, beta),
    // 1 - hs(a) = hs(-a + (1 - 2 beta) / alpha), the same function (r
    // shares it). z's pre-activation is negated (exactly: every weight and
    // bias), and a HardSigmoid's beta other than 0.5 (Keras 3's
    // hard_sigmoid, read with beta 0) adds (1 - 2 beta) / alpha to its bias
    // (one rounding of that sum).
    bool hard = z->name == "HardSigmoid" && z->alpha > 0.f;
    if (!(z->name == "Sigmoid" && !z->hasParams) && !hard)
      return remark("the update gate enters as z*n + (1 - z)*h and " +
                    z->name + " is not symmetric (1 - f(a) = f(-a + c) "
                    "holds for Sigmoid and HardSigmoid)");
    LinearForm negated;
    negated.width = formZ->width;
    negated.add(std::move(*formZ), -1.0f);
    if (hard && z->beta != 0.5f) {
      float shift = float((1.0 - 2.0 * double(z->beta)) / double(z->alpha));
      if (!std::isfinite(shift))
        return remark("the update gate enters as z*n + (1 - z)*h and its "
                      "HardSigmoid's alpha is too small to shift");
      Value c = consts->getF32(anchor->getLoc(), "gru_update_shift", {},
                               {shift});
      negated.biases.push_back({c, 0, hidden, /*scalar=*/true, 1.0f});
    }
    *formZ = std::move(negated);
  }

  // The step input: the one other value the gates read. A zero state
  // folded by the exporter may be written as two zero constants (one in
  // the gates' products, one in the update): the same state.
  Value hh = h ? od::skipIdentities(h) : Value();
  auto zeroConst = [](Value v) {
    auto t = od::getConstantF32(v);
    return t && llvm::all_of(t->values, [](float e) { return e == 0.0f; })
               ? t
               : std::nullopt;
  };
  auto hZero = hh ? zeroConst(hh) : std::nullopt;
  auto isH = [&](Value v) {
    v = od::skipIdentities(v);
    if (v == hh)
      return true;
    if (!hZero)
      return false;
    auto vz = zeroConst(v);
    return vz && vz->shape == hZero->shape;
  };
  // (A step input joined from parts reads as several: one again.)
  LinearForm *forms[] = {&*formR, &*formZ, &formN};
  joinConcatParts(
      forms, [&](Value v) { return isH(v) || v == rh; }, hidden);
  for (auto *f : {&*formR, &*formZ, &formN, &formNRec})
    matched.append(f->ops.begin(), f->ops.end());
  Value x;
  for (auto *f : forms)
    for (Term &t : f->terms)
      if (!isH(t.input) && t.input != rh) {
        if (x && x != t.input)
          return remark("the gates read more than a step input and a hidden "
                        "state");
        x = t.input;
      }
  if (!x)
    return remark("no step input found");
  // Canonical gates r, z, n.
  GateTerms gt;
  LinearForm nX = formN;
  LinearForm nRec = formNRec;
  if (!lbr) {
    // (r*h) R_n: its weights are R's n rows; no separate recurrent bias.
    nX.terms.clear();
    for (Term &t : formN.terms) {
      if (t.input == rh) {
        Term ht = t;
        ht.input = h;
        nRec.terms.push_back(ht);
      } else {
        nX.terms.push_back(t);
      }
    }
  }
  // r and z read h directly; unify h values through Identity.
  auto normalize = [&](LinearForm &f) {
    for (Term &t : f.terms)
      if (isH(t.input))
        t.input = h;
  };
  normalize(*formR);
  normalize(*formZ);
  normalize(nX);
  normalize(nRec);
  if (!splitTerms({*formR, *formZ, nX}, x, h, gt, why))
    return remark(why);
  for (const Term &t : nRec.terms) {
    if (t.input != h)
      return remark("the reset product reads something other than the "
                    "hidden state");
    gt.r[2].append(t.weights.begin(), t.weights.end());
  }
  if (lbr)
    gt.br[2] = nRec.biases;
  int64_t inSize = -1;
  for (auto *f : {&*formR, &*formZ, &nX})
    for (Term &t : f->terms)
      if (t.input == x)
        inSize = t.k;
  Location loc = fusedLoc(matched);
  if (!h) {
    h = zeros(loc, hNew, hidden);
    if (!h)
      return remark("a folded zero initial state needs a static batch size "
                    "(and at most 2^24 elements)");
    for (auto &gate : gt.r)
      gate.clear(); // nothing multiplies the zero state
  }
  Value W = materializeWeights(loc, "gru_W", gt.w, hidden, inSize);
  Value R = materializeWeights(loc, "gru_R", gt.r, hidden, hidden);
  Value Bw = materializeBias(loc, "gru_Bw", gt.bw, hidden);
  Value Br = materializeBias(loc, "gru_Br", gt.br, hidden);
  OpBuilder b(anchor);
  auto cell = rnn::GRUCellOp::create(b, loc, hNew.getType(), x, h, W, R, Bw, Br,
                                     lbr ? b.getUnitAttr() : nullptr, nullptr,
                                     nullptr, nullptr, nullptr);
  if (!verifyQuietly(cell))
    return remark("the step's values have incompatible shapes");
  setActivations(cell, {*z, *n}, {"Sigmoid", "Tanh"});
  if (noReset)
    cell->setAttr("rnn.zero_reset", b.getUnitAttr());
  markQuantized(cell, {&*formR, &*formZ, &nX, &nRec});
  finishCell(cell, matched, {{hNew, cell.getResult()}});
}

void CellRecognizer::matchRNNCells() {
  // h' = f(x W + h R + b). Any activation of a linear form looks like this,
  // so a candidate counts only inside a chain: its output is the hidden state
  // of another candidate, or it reads another candidate's output as its
  // hidden state.
  struct Candidate {
    Activation act;
    LinearForm form;
    Value out;
  };
  std::vector<Candidate> cands;
  DenseMap<Value, unsigned> byOutput;
  SmallVector<Operation *> acts;
  func.walk([&](Operation *op) {
    // Any op that computes one of ONNX's activations (Softsign, Elu,
    // LeakyRelu, HardSigmoid, ... as Keras' SimpleRNN takes them); which
    // ones is getActivation's, below.
    if (op->getNumResults() == 1 && !rnn::StepNormalizer::isReplaced(op)) {
      acts.push_back(op);
      erasedOps.erase(op); // live: an older entry at its address is stale
    }
  });
  for (Operation *op : acts) {
    if (erasedOps.contains(op))
      continue;
    auto a = getActivation(op->getResult(0));
    int64_t hidden = staticDim(op->getResult(0), 1);
    if (!a || a->op != op || rankOf(op->getResult(0)) != 2 ||
        ShapedType::isDynamic(hidden))
      continue;
    std::string why;
    auto f = analyzer.analyzeGate(a->input, 0, hidden, why);
    if (succeeded(f) && f->terms.size() >= 2) {
      LinearForm *one[] = {&*f};
      joinConcatParts(one, nullptr, hidden); // a step input joined from parts
    }
    if (failed(f) || f->terms.empty() || f->terms.size() > 2)
      continue;
    byOutput[op->getResult(0)] = cands.size();
    cands.push_back({*a, std::move(*f), op->getResult(0)});
  }
  // Which input is the hidden state: another candidate's output.
  SmallVector<int> hIdx(cands.size(), -1);
  SmallVector<bool> inChain(cands.size(), false);
  for (auto [i, c] : llvm::enumerate(cands))
    for (auto [k, t] : llvm::enumerate(c.form.terms)) {
      auto it = byOutput.find(od::skipIdentities(t.input));
      if (it != byOutput.end() && it->second != i &&
          cands[it->second].act == c.act && c.form.terms.size() == 2 &&
          t.k == staticDim(c.out, 1)) {
        hIdx[i] = k;
        inChain[i] = inChain[it->second] = true;
      }
    }
  // Or a chain across a Loop's iterations: the hidden-size input is a value
  // the Loop carries, and the body yields the candidate's output for it.
  for (auto [i, c] : llvm::enumerate(cands)) {
    if (hIdx[i] >= 0 || c.form.terms.size() != 2)
      continue;
    for (auto [k, t] : llvm::enumerate(c.form.terms)) {
      auto arg = dyn_cast<BlockArgument>(od::skipIdentities(t.input));
      auto loop = arg ? dyn_cast<od::NodeOp>(arg.getOwner()->getParentOp())
                      : od::NodeOp();
      if (!loop || loop.getOpType() != "Loop" || arg.getArgNumber() < 2 ||
          t.k != staticDim(c.out, 1))
        continue;
      auto yield = dyn_cast<od::YieldOp>(arg.getOwner()->getTerminator());
      unsigned slot = arg.getArgNumber() - 1; // after the condition
      if (yield && slot < yield->getNumOperands() &&
          od::skipIdentities(yield->getOperand(slot)) == c.out) {
        hIdx[i] = k;
        inChain[i] = true;
        break;
      }
    }
  }
  int64_t made = 0;
  for (auto [i, c] : llvm::enumerate(cands)) {
    if (!inChain[i])
      continue;
    int64_t hidden = staticDim(c.out, 1);
    Value x, h;
    if (c.form.terms.size() == 1) {
      x = c.form.terms[0].input; // first step, zero state folded
    } else if (hIdx[i] >= 0) {
      h = c.form.terms[hIdx[i]].input;
      x = c.form.terms[1 - hIdx[i]].input;
    } else {
      // The chain's first step: the input of hidden size that is not a step
      // slice is the initial state.
      Value a = c.form.terms[0].input, b = c.form.terms[1].input;
      int64_t ka = c.form.terms[0].k, kb = c.form.terms[1].k;
      int pick = -1;
      if (ka == hidden && kb != hidden)
        pick = 0;
      else if (kb == hidden && ka != hidden)
        pick = 1;
      else
        pick = pickHiddenState({a, b}, {c.form}, Value(), c.out);
      if (pick < 0 && isStepSlice(a) != isStepSlice(b))
        pick = isStepSlice(a) ? 1 : 0;
      if (pick >= 0) {
        std::tie(h, x) = pick == 0 ? std::pair(a, b) : std::pair(b, a);
      } else {
        c.act.op->emitRemark() << "not fused as an RNN cell: cannot tell the "
                                  "step input from the hidden state";
        continue;
      }
    }
    SmallVector<Operation *> matched = {c.act.op};
    matched.append(c.form.ops.begin(), c.form.ops.end());
    Location loc = fusedLoc(matched);
    if (!h && !(h = zeros(loc, c.out, hidden)))
      continue;
    GateTerms gt;
    std::string why;
    if (!splitTerms({c.form}, x, h, gt, why)) {
      ++numNearMisses, c.act.op->emitRemark() << "not fused as an RNN cell: " << why;
      continue;
    }
    int64_t inSize = -1;
    for (Term &t : c.form.terms)
      if (t.input == x)
        inSize = t.k;
    Value W = materializeWeights(loc, "rnn_W", gt.w, hidden, inSize);
    Value R = materializeWeights(loc, "rnn_R", gt.r, hidden, hidden);
    Value Bw = materializeBias(loc, "rnn_Bw", gt.bw, hidden);
    Value Br = materializeBias(loc, "rnn_Br", gt.br, hidden);
    OpBuilder b(c.act.op);
    auto cell = rnn::RNNCellOp::create(b, loc, c.out.getType(), x, h, W, R, Bw,
                                       Br, nullptr, nullptr, nullptr, nullptr);
    if (!verifyQuietly(cell))
      continue;
    setActivations(cell, {c.act}, {"Tanh"});
    // Later candidates read this output: keep their references valid.
    Value old = c.out;
    markQuantized(cell, {&c.form});
    finishCell(cell, matched, {{old, cell.getResult()}});
    for (Candidate &other : cands)
      for (Term &t : other.form.terms)
        if (t.input == old)
          t.input = cell.getResult();
    ++made;
  }
  (void)made;
}

/// What an imported quantized layer computes where it is not marked int8.
static constexpr const char *kWithoutActivationQuantization =
    "are dequantized exactly, and this target runs the layer without the model's "
    "int8 quantization of its inputs and state: its outputs differ from "
    "ONNX Runtime's by that rounding (lstm-opt --target=cpu without "
    "--precision runs it on the int8 kernels)";

void CellRecognizer::importLayer(Operation *op) {
  // Standard ONNX layers: reorder gates, split the bias, normalise layout.
  auto remark = [&](const Twine &why) {
    op->emitRemark() << "not imported into the rnn dialect: " << why;
  };
  rnn::CellKind kind;
  Value X, W, R, B, lens, h0, c0;
  int64_t layout;
  StringRef direction;
  std::optional<int64_t> hiddenAttr;
  std::optional<ArrayAttr> acts;
  std::optional<ArrayRef<float>> alphas, betas;
  FloatAttr clip;
  bool lbr = false;
  // LSTM variants: input_forget, peephole weights P [D, 3H] (ONNX: i, o, f).
  bool inputForget = false;
  Value P;
  auto common = [&](auto o) {
    X = o.getX();
    W = o.getW();
    R = o.getR();
    B = o.getB();
    lens = o.getSequenceLens();
    h0 = o.getInitialH();
    layout = o.getLayout();
    direction = o.getDirection();
    hiddenAttr = o.getHiddenSize();
    acts = o.getActivations();
    clip = o.getClipAttr();
  };
  std::optional<od::F32Tensor> w, r;
  if (auto node = dyn_cast<od::NodeOp>(op)) {
    // com.microsoft.DynamicQuantizeLSTM (onnxruntime's quantize_dynamic):
    // an LSTM whose W [D, I, 4H] and R [D, H, 4H] are int8/uint8 with a
    // scale and zero point per direction or per gate row. The weights are
    // dequantized exactly ((q - zp) * scale: one f32 rounding, as ONNX
    // Runtime's own dequantization); ONNX Runtime also quantizes x and h per
    // GEMM, which the f32 layer does not: its outputs are the float model's,
    // within the quantization's own error of ONNX Runtime's.
    auto in = [&](unsigned i) {
      return i < node.getInputs().size() ? node.getInputs()[i] : Value();
    };
    auto none = [](Value v) { return !v || isa<NoneType>(v.getType()); };
    kind = rnn::CellKind::LSTM;
    X = in(0);
    B = in(3);
    lens = in(4);
    h0 = in(5);
    c0 = in(6);
    if (none(B))
      B = Value();
    DictionaryAttr attrs = node.getAttrsAttr();
    auto get = [&](StringRef n) { return attrs ? attrs.get(n) : Attribute(); };
    layout = 0;
    auto dirAttr = dyn_cast_or_null<StringAttr>(get("direction"));
    direction = dirAttr ? dirAttr.getValue() : StringRef("forward");
    if (auto h = dyn_cast_or_null<IntegerAttr>(get("hidden_size")))
      hiddenAttr = h.getInt();
    if (auto a = dyn_cast_or_null<ArrayAttr>(get("activations")))
      acts = a;
    clip = dyn_cast_or_null<FloatAttr>(get("clip"));
    if (auto f = dyn_cast_or_null<IntegerAttr>(get("input_forget")))
      inputForget = f.getInt() != 0;
    if (!none(in(7)))
      P = in(7);
    for (StringRef n : {"activation_alpha", "activation_beta"})
      if (get(n) && !isa<DenseF32ArrayAttr>(get(n)))
        return remark(n + Twine(" is not a list of floats"));
    auto dequantize = [&](unsigned q, unsigned scale, unsigned zp,
                          StringRef what) -> std::optional<od::F32Tensor> {
      ElementsAttr qa = od::getConstantAttr(in(q));
      auto sc = od::getConstantF32(in(scale));
      ElementsAttr za = none(in(zp)) ? ElementsAttr() : od::getConstantAttr(in(zp));
      if (!qa || !sc || (!none(in(zp)) && !za)) {
        remark(what + Twine(", its scale or zero point is not a constant"));
        return std::nullopt;
      }
      Type et = qa.getElementType();
      if (!et.isInteger(8) || (za && za.getElementType() != et)) {
        remark(what + Twine(" is not int8/uint8 with a zero point of its type"));
        return std::nullopt;
      }
      bool isUnsigned = et.isUnsignedInteger();
      auto qb = od::getRawBytes(qa, 1);
      std::optional<std::vector<char>> zb;
      if (za)
        zb = od::getRawBytes(za, 1);
      auto shape = cast<ShapedType>(qa.getType()).getShape();
      if (!qb || (za && !zb) || shape.size() != 3) {
        remark(what + Twine(" is not a rank-3 constant"));
        return std::nullopt;
      }
      int64_t d = shape[0], k = shape[1], gh = shape[2];
      // Per direction ([D]) or per gate row ([D, 4H]).
      int64_t per = sc->numElements() == d ? 1 : gh;
      if (sc->numElements() != d * per ||
          (zb && (int64_t)zb->size() != sc->numElements())) {
        remark(what + Twine("'s scale or zero point is neither [D] nor [D, 4H]"));
        return std::nullopt;
      }
      auto val = [&](const std::vector<char> &bytes, int64_t i) -> int32_t {
        return isUnsigned ? (int32_t)(uint8_t)bytes[i] : (int32_t)(int8_t)bytes[i];
      };
      od::F32Tensor t; // ONNX LSTM layout [D, 4H, K]
      t.shape = {d, gh, k};
      t.values.resize(d * gh * k);
      for (int64_t di = 0; di < d; ++di)
        for (int64_t ki = 0; ki < k; ++ki)
          for (int64_t j = 0; j < gh; ++j) {
            int64_t s = di * per + (per == 1 ? 0 : j);
            int32_t z = zb ? val(*zb, s) : 0;
            t.values[(di * gh + j) * k + ki] =
                (float)(val(*qb, (di * k + ki) * gh + j) - z) * sc->values[s];
          }
      return t;
    };
    if (!importQuantized)
      return remark("a DynamicQuantizeLSTM stays as it is for ONNX Runtime "
                    "(the compiled targets import it)");
    w = dequantize(1, 8, 9, "W");
    if (!w)
      return;
    r = dequantize(2, 10, 11, "R");
    if (!r)
      return;
  } else if (auto l = dyn_cast<od::LSTMOp>(op)) {
    kind = rnn::CellKind::LSTM;
    common(l);
    c0 = l.getInitialC();
    if (!isa<NoneType>(l.getP().getType()))
      P = l.getP();
    inputForget = l.getInputForget() != 0;
  } else if (auto g = dyn_cast<od::GRUOp>(op)) {
    kind = rnn::CellKind::GRU;
    common(g);
    lbr = g.getLinearBeforeReset() != 0;
  } else {
    kind = rnn::CellKind::RNN;
    common(cast<od::RNNOp>(op));
  }
  auto floats = [&](StringRef n) -> DenseF32ArrayAttr {
    if (auto node = dyn_cast<od::NodeOp>(op))
      return node.getAttrs() ? dyn_cast_or_null<DenseF32ArrayAttr>(
                                   node.getAttrsAttr().get(n))
                             : nullptr;
    return op->getAttrOfType<DenseF32ArrayAttr>(n);
  };
  if (auto a = floats("activation_alpha"))
    alphas = a.asArrayRef();
  if (auto a = floats("activation_beta"))
    betas = a.asArrayRef();
  // Exporters without constant folding reorder gates in the graph
  // (Unsqueeze(Concat(Slice(W), ...))): evaluated here, exactly.
  if (!w)
    w = od::foldConstantF32(W);
  if (!r)
    r = od::foldConstantF32(R);
  if (!w)
    return remark("W is " + notF32Constant(W));
  if (!r)
    return remark("R is " + notF32Constant(R));
  if (rankOf(X) != 3)
    return remark("X is not a rank-3 tensor");
  // The shapes the operator defines, checked on the values themselves (a
  // foreign op such as DynamicQuantizeLSTM has no verifier, and the
  // weights below are sliced by them).
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return remark("direction is not forward, reverse or bidirectional");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t g = rnn::getNumGates(kind);
  if (w->shape.size() != 3 || w->shape[0] != dirs || w->shape[1] <= 0 ||
      w->shape[1] % g != 0 || w->shape[2] <= 0)
    return remark("W is not [num_directions, gates * hidden, input]");
  int64_t d = w->shape[0], gh = w->shape[1], in = w->shape[2];
  int64_t hidden = gh / g;
  if (hiddenAttr && *hiddenAttr != hidden)
    return remark("hidden_size disagrees with W");
  if (r->shape != SmallVector<int64_t>{d, gh, hidden})
    return remark("R is not [num_directions, gates * hidden, hidden]");
  if (auto xt = dyn_cast<RankedTensorType>(X.getType());
      xt && !xt.isDynamicDim(2) && xt.getDimSize(2) != in)
    return remark("X's input size disagrees with W");
  std::optional<od::F32Tensor> bias;
  if (B && !isa<NoneType>(B.getType())) {
    bias = od::foldConstantF32(B);
    if (!bias)
      return remark("B is not an f32 constant");
    if (bias->numElements() != d * 2 * gh)
      return remark("B is not [num_directions, 2 * gates * hidden]");
  }
  std::optional<od::F32Tensor> peep;
  if (P) {
    peep = od::foldConstantF32(P);
    if (!peep)
      return remark("P is not an f32 constant");
    if (peep->numElements() != d * 3 * hidden)
      return remark("P is not [num_directions, 3 * hidden]");
  }
  auto none = [](Value v) { return !v || isa<NoneType>(v.getType()); };
  if (!none(lens)) {
    auto t = dyn_cast<RankedTensorType>(lens.getType());
    if (!t || !t.getElementType().isInteger(32))
      return remark("sequence_lens is not an i32 tensor");
  }
  for (Value s : {h0, c0}) {
    if (none(s))
      continue;
    if (rankOf(s) != 3)
      return remark("an initial state is not a rank-3 tensor");
    // [D, B, H] (layout 1: [B, D, H]); static sizes must agree.
    auto st = cast<RankedTensorType>(s.getType());
    int64_t dAxis = layout == 1 ? 1 : 0;
    if ((!st.isDynamicDim(dAxis) && st.getDimSize(dAxis) != d) ||
        (!st.isDynamicDim(2) && st.getDimSize(2) != hidden))
      return remark("an initial state's size disagrees with W");
    auto xt = cast<RankedTensorType>(X.getType());
    int64_t xb = layout == 1 ? 0 : 1, sb = layout == 1 ? 0 : 1;
    if (!xt.isDynamicDim(xb) && !st.isDynamicDim(sb) &&
        xt.getDimSize(xb) != st.getDimSize(sb))
      return remark("an initial state's batch size disagrees with X");
  }

  auto perm = rnn::canonicalToONNXGates(kind);
  std::vector<int> from(perm.begin(), perm.end()); // canonical k <- ONNX perm[k]
  std::vector<float> wc, rc, bwc, brc, pc;
  for (int64_t k = 0; k < d; ++k) {
    if (peep) {
      // ONNX's i, o, f -> the canonical i, f, o.
      auto pk = rnn::permuteGateBlocks(
          ArrayRef<float>(peep->values).slice(k * 3 * hidden, 3 * hidden), 3,
          hidden, 1, {0, 2, 1});
      pc.insert(pc.end(), pk.begin(), pk.end());
    }
    auto pw = rnn::permuteGateBlocks(
        ArrayRef<float>(w->values).slice(k * gh * in, gh * in), g, hidden, in, from);
    auto pr = rnn::permuteGateBlocks(
        ArrayRef<float>(r->values).slice(k * gh * hidden, gh * hidden), g, hidden,
        hidden, from);
    wc.insert(wc.end(), pw.begin(), pw.end());
    rc.insert(rc.end(), pr.begin(), pr.end());
    std::vector<float> zeros(gh, 0.0f);
    ArrayRef<float> bw = bias ? ArrayRef<float>(bias->values).slice(k * 2 * gh, gh)
                              : ArrayRef<float>(zeros);
    ArrayRef<float> br = bias ? ArrayRef<float>(bias->values).slice(k * 2 * gh + gh, gh)
                              : ArrayRef<float>(zeros);
    auto pbw = rnn::permuteGateBlocks(bw, g, hidden, 1, from);
    auto pbr = rnn::permuteGateBlocks(br, g, hidden, 1, from);
    bwc.insert(bwc.end(), pbw.begin(), pbw.end());
    brc.insert(brc.end(), pbr.begin(), pbr.end());
  }
  Location loc = op->getLoc();
  Value Wc = consts->getF32(loc, "W_canonical", {d, gh, in}, wc);
  Value Rc = consts->getF32(loc, "R_canonical", {d, gh, hidden}, rc);
  Value Bwc = consts->getF32(loc, "Bw_canonical", {d, gh}, bwc);
  Value Brc = consts->getF32(loc, "Br_canonical", {d, gh}, brc);
  Value Pc = peep ? consts->getF32(loc, "P_canonical", {d, 3 * hidden}, pc)
                  : Value();

  OpBuilder b(op);
  Value x = X;
  if (layout == 1) {
    x = od::createTranspose(b, loc, X, {1, 0, 2});
    if (!none(h0))
      h0 = od::createTranspose(b, loc, h0, {1, 0, 2});
    if (!none(c0))
      c0 = od::createTranspose(b, loc, c0, {1, 0, 2});
  }
  auto xt = cast<RankedTensorType>(x.getType());
  Type f = xt.getElementType();
  int64_t steps = xt.getDimSize(0), batch = xt.getDimSize(1);
  auto yType = RankedTensorType::get({steps, d, batch, hidden}, f);
  auto sType = RankedTensorType::get({d, batch, hidden}, f);
  rnn::Direction dir = direction == "reverse"         ? rnn::Direction::Reverse
                       : direction == "bidirectional" ? rnn::Direction::Bidirectional
                                                      : rnn::Direction::Forward;
  SmallVector<Type> types = {yType, sType};
  if (kind == rnn::CellKind::LSTM)
    types.push_back(sType);
  auto seq = rnn::SequenceOp::create(
      b, loc, types, rnn::CellKindAttr::get(&getContext(), kind),
      rnn::DirectionAttr::get(&getContext(), dir), b.getI64IntegerAttr(hidden),
      lbr ? b.getUnitAttr() : nullptr, x, Wc, Rc, Bwc, Brc,
      none(h0) ? Value() : h0, none(c0) ? Value() : c0,
      none(lens) ? Value() : lens, Pc, acts ? *acts : nullptr,
      alphas ? b.getDenseF32ArrayAttr(*alphas) : nullptr,
      betas ? b.getDenseF32ArrayAttr(*betas) : nullptr, clip,
      inputForget ? b.getUnitAttr() : nullptr);
  // A layer the model quantizes keeps asking for int8 (the CPU kernels'
  // lstm_opt.precision; its weights are requantized per gate row from
  // their exact f32 values).
  if (isa<od::NodeOp>(op) && quantizedPrecision != "f32")
    seq->setAttr(rnn::kPrecisionAttr, b.getStringAttr(quantizedPrecision));
  else if (isa<od::NodeOp>(op))
    op->emitRemark() << "DynamicQuantizeLSTM imported: its weights "
                     << kWithoutActivationQuantization;
  // Results back in the op's layout and types.
  auto replace = [&](Value old, Value now, ArrayRef<int64_t> perm) {
    if (isa<NoneType>(old.getType()) || old.use_empty())
      return;
    if (layout == 1)
      now = od::createTranspose(b, loc, now, perm);
    old.replaceAllUsesWith(now);
  };
  // (A foreign op lists only the outputs it names.)
  unsigned results = op->getNumResults();
  if (results > 0)
    replace(op->getResult(0), seq.getY(), {2, 0, 1, 3});
  if (results > 1)
    replace(op->getResult(1), seq.getHN(), {1, 0, 2});
  if (kind == rnn::CellKind::LSTM && results > 2)
    replace(op->getResult(2), seq.getCN(), {1, 0, 2});
  if (isa<od::NodeOp>(op) && op->use_empty()) {
    // A foreign op is not known to be free of effects: erased here, by hand,
    // once all its results are replaced.
    SmallVector<Operation *> defs;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        defs.push_back(def);
    erasedOps.insert(op);
    consts->forget(op);
    forgetCached(op);
    op->erase();
    eraseIfDead(defs);
  } else {
    eraseIfDead({op});
  }
  ++numLayers;
}

Value CellRecognizer::dequantizedWeight(Location loc, Value wq, Value scale,
                                        Value zp, int64_t axis,
                                        std::string &why) {
  if (!wq || !scale || isa<NoneType>(wq.getType()) ||
      isa<NoneType>(scale.getType())) {
    why = "a quantized MatMul's weight or scale is missing";
    return Value();
  }
  wq = od::skipIdentities(wq);
  scale = od::skipIdentities(scale);
  if (zp && isa<NoneType>(zp.getType()))
    zp = Value();
  if (zp)
    zp = od::skipIdentities(zp);
  auto key = std::make_tuple(wq.getAsOpaquePointer(),
                             zp ? zp.getAsOpaquePointer() : nullptr,
                             scale.getAsOpaquePointer(), axis);
  auto cached = dequantized.find(key);
  if (cached != dequantized.end())
    return cached->second;
  std::string whyNot;
  auto w = od::dequantizeConstant(wq, scale, zp, axis, whyNot);
  if (failed(w)) {
    why = "a quantized MatMul's weight: " + whyNot;
    return Value();
  }
  if (w->shape.size() != 2) {
    why = "a quantized MatMul's weight is not a matrix";
    return Value();
  }
  Value c = consts->getF32(loc, "W_dequantized", w->shape, w->values);
  dequantized.try_emplace(key, c);
  return c;
}

/// quantize_static's bias of a Gemm(a, W, C): C = DequantizeLinear(Cq, s)
/// with Cq int32 and s = a's scale * W's (per column), its f32 values made
/// one constant. Each step's Gemm has its own Cq: a's scale, calibrated per
/// node, differs from step to step, and so do the roundings of one float
/// bias. Where the biases of two Gemms of the same weight are within their
/// two half steps of each other everywhere (|c1 - c2| <= (s1 + s2) / 2:
/// both may be roundings of the one bias the model was quantized from),
/// the later one reads the first's constant, so that the steps make one
/// layer; the change is within the model's own rounding of the bias, which
/// the int8 kernels (quantizing x and h to their own range) do not
/// reproduce either. Other biases stay their own.
Value CellRecognizer::quantizedBias(od::NodeOp dq, Value weight,
                                    std::string &why) {
  auto ins = dq.getInputs();
  auto in = [&](unsigned i) -> Value {
    Value v = i < ins.size() ? ins[i] : Value();
    return v && !isa<NoneType>(v.getType()) ? v : Value();
  };
  int64_t axis = od::getNodeIntAttr(dq, "axis", 1).value_or(1);
  std::string whyNot;
  std::vector<float> scales;
  auto c = od::dequantizeConstant(in(0), in(1), in(2), axis, whyNot,
                                  int64_t(1) << 26, &scales);
  if (failed(c)) {
    why = "a quantized Gemm's bias: " + whyNot;
    return Value();
  }
  // Half a step per element.
  od::F32Tensor half = *c;
  for (int64_t i = 0; i < c->numElements(); ++i)
    half.values[i] = std::fabs(scales[i]) / 2;
  auto it = quantBiases.find(weight);
  if (it != quantBiases.end() && it->second.values.shape == c->shape) {
    const QuantBias &first = it->second;
    bool close = true;
    for (int64_t i = 0; i < c->numElements() && close; ++i)
      close = std::fabs(c->values[i] - first.values.values[i]) <=
              half.values[i] + first.halfStep.values[i];
    if (close)
      return first.c;
  }
  Value v = consts->getF32(dq.getLoc(), "C_dequantized", c->shape, c->values);
  if (it == quantBiases.end())
    quantBiases.try_emplace(weight, QuantBias{v, *c, half});
  return v;
}

/// The three forms onnxruntime.quantization writes for a MatMul(a, W), each
/// read as a · W with W = (Wq - Wzp) * Ws, exactly the weight the model was
/// quantized from up to its rounding (one f32 rounding, as ONNX Runtime
/// dequantizes):
/// - quantize_dynamic (at the Mul):
///     q, s, zp = DynamicQuantizeLinear(a)        (u8, per tensor, asymmetric)
///     Mul(Cast<float>(MatMulInteger(q, Wq, zp, Wzp)), Mul(s, Ws))
/// - quantize_static, QDQ format (at the MatMul, or at the
///   DequantizeLinear(QuantizeLinear(.., ys, yz), ys, yz) quantizing its
///   product):
///     MatMul(DequantizeLinear(QuantizeLinear(a, s, z), s, z),
///            DequantizeLinear(Wq, Ws, Wzp))
///   (without any activation's QuantizeLinear/DequantizeLinear only the
///   weight is quantized: a · W is then exact and the cell stays f32);
/// - quantize_static, QOperator format: DequantizeLinear(QLinearMatMul(
///     QuantizeLinear(a, s, z), s, z, Wq, Ws, Wzp, ys, yz), ys, yz), which
///   expandQOperatorNodes has made the QDQ form above;
/// Wq an int8/uint8 constant [K, N], Wzp and Ws constants per tensor or per
/// column (per row too through DequantizeLinear's axis). The activation's
/// quantization (dynamic, or the static scale the model was calibrated with)
/// and the requantization of its product (QLinearMatMul's, QDQ's) are the
/// int8 kernels' business: they quantize x and h per row and step to their range (the
/// cell asks for int8, as an imported DynamicQuantizeLSTM does). The ONNX
/// target keeps the nodes (import-quantized off): ONNX Runtime runs them as
/// they are.
int CellRecognizer::matchQuantizedProduct(Operation *op, QuantizedProduct &q,
                                          std::string &why) {
  auto nodeOf = [](Value v, StringRef type) -> od::NodeOp {
    auto n = od::skipIdentities(v).getDefiningOp<od::NodeOp>();
    bool defaultDomain = n && (n.getDomain().empty() || n.getDomain() == "ai.onnx");
    return defaultDomain && n.getOpType() == type ? n : od::NodeOp();
  };
  auto same = [](Value a, Value b) {
    return od::skipIdentities(a) == od::skipIdentities(b);
  };
  auto input = [](od::NodeOp n, unsigned i) {
    Value v = i < n.getInputs().size() ? n.getInputs()[i] : Value();
    return v && isa<NoneType>(v.getType()) ? Value() : v;
  };
  auto intAttr = [](od::NodeOp n, StringRef name, int64_t dflt) {
    DictionaryAttr attrs = n.getAttrsAttr();
    auto a = attrs ? dyn_cast_or_null<IntegerAttr>(attrs.get(name)) : nullptr;
    return a ? a.getInt() : dflt;
  };
  auto keep = [&](StringRef what) {
    why = ("a quantized MatMul (" + what +
           ") stays as it is for ONNX Runtime (the compiled targets import it "
           "as an int8 layer)")
              .str();
    return -1;
  };
  // Equal per-tensor quantization parameters: the same values, or equal
  // constants (a missing zero point is 0).
  auto sameParams = [&](Value s1, Value z1, Value s2, Value z2) {
    auto s1c = od::getConstantF32(od::skipIdentities(s1));
    auto s2c = od::getConstantF32(od::skipIdentities(s2));
    if (!s1c || !s2c || s1c->numElements() != 1 || s2c->numElements() != 1 ||
        s1c->values[0] != s2c->values[0])
      return false;
    if (z1 && z2 && same(z1, z2))
      return true;
    auto zeroPoint = [](Value z) -> std::optional<int64_t> {
      if (!z)
        return 0;
      ElementsAttr a = od::getConstantAttr(od::skipIdentities(z));
      if (!a || !a.getElementType().isInteger(8) || a.getNumElements() != 1)
        return std::nullopt;
      auto bytes = od::getRawBytes(a, 1);
      if (!bytes || bytes->size() != 1)
        return std::nullopt;
      return a.getElementType().isUnsignedInteger()
                 ? (int64_t)(uint8_t)(*bytes)[0]
                 : (int64_t)(int8_t)(*bytes)[0];
    };
    auto a = zeroPoint(z1), b = zeroPoint(z2);
    return a && b && *a == *b;
  };
  // `v` = DequantizeLinear(QuantizeLinear(a, s, z), s, z) per tensor: `a`.
  auto fakeQuantized = [&](od::NodeOp dq) -> Value {
    od::NodeOp qn = nodeOf(input(dq, 0), "QuantizeLinear");
    if (!qn || !input(qn, 0) || !input(qn, 1) || !input(dq, 1) ||
        !sameParams(input(qn, 1), input(qn, 2), input(dq, 1), input(dq, 2)))
      return Value();
    return input(qn, 0);
  };

  if (auto mul = dyn_cast<od::MulOp>(op)) {
    for (auto [product, scales] : {std::pair(mul.getA(), mul.getB()),
                                   std::pair(mul.getB(), mul.getA())}) {
      auto toFloat = od::skipIdentities(product).getDefiningOp<od::CastOp>();
      if (!toFloat || toFloat.getTo() != 1) // FLOAT
        continue;
      od::NodeOp mmi = nodeOf(toFloat.getInput(), "MatMulInteger");
      if (!mmi || mmi.getInputs().size() < 3 || mmi->getNumResults() != 1)
        continue;
      od::NodeOp dql = nodeOf(mmi.getInputs()[0], "DynamicQuantizeLinear");
      if (!dql || dql->getNumResults() != 3 || dql.getInputs().size() != 1 ||
          !same(mmi.getInputs()[0], dql->getResult(0)) ||
          !same(mmi.getInputs()[2], dql->getResult(2)))
        continue;
      auto sm = od::skipIdentities(scales).getDefiningOp<od::MulOp>();
      if (!sm)
        continue;
      Value ws = same(sm.getA(), dql->getResult(1))   ? sm.getB()
                 : same(sm.getB(), dql->getResult(1)) ? sm.getA()
                                                      : Value();
      if (!ws)
        continue;
      // quantize_dynamic's MatMul: from here on a refusal says why.
      if (!importQuantized)
        return keep("MatMulInteger");
      q.w = dequantizedWeight(mmi.getLoc(), mmi.getInputs()[1], ws,
                              input(mmi, 3), 1, why);
      if (!q.w)
        return -1;
      q.a = dql.getInputs()[0];
      q.ops = {mul, toFloat, mmi, dql, sm};
      return 1;
    }
    return 0;
  }

  // A MatMul, or a Gemm (PyTorch's nn.Linear and cells: a · W^T + C).
  auto qdqProduct = [&](Operation *mm) {
    Value aIn, bIn;
    auto gemm = dyn_cast<od::GemmOp>(mm);
    if (gemm) {
      aIn = gemm.getA(), bIn = gemm.getB();
    } else {
      auto m = cast<od::MatMulOp>(mm);
      aIn = m.getA(), bIn = m.getB();
    }
    od::NodeOp dqw = nodeOf(bIn, "DequantizeLinear");
    if (!dqw)
      return 0;
    if (!importQuantized)
      return keep("DequantizeLinear weights, QDQ");
    if (intAttr(dqw, "block_size", 0) != 0) {
      why = "a quantized MatMul's weight is quantized in blocks (block_size)";
      return -1;
    }
    if (gemm && gemm.getTransA()) {
      why = "a quantized Gemm transposes its input";
      return -1;
    }
    q.w = dequantizedWeight(dqw.getLoc(), input(dqw, 0), input(dqw, 1),
                            input(dqw, 2), intAttr(dqw, "axis", 1), why);
    if (!q.w)
      return -1;
    q.a = aIn;
    q.quantized = false;
    q.ops = {mm, dqw};
    if (gemm) {
      q.transposed = gemm.getTransB() != 0;
      q.alpha = gemm.getAlpha().convertToFloat();
      q.beta = gemm.getBeta().convertToFloat();
      if (!isa<NoneType>(gemm.getC().getType())) {
        q.c = gemm.getC();
        // quantize_static's int32 bias, DequantizeLinear(Cq, a_s * w_s):
        // its exact f32 values, one constant.
        if (od::NodeOp dqc = nodeOf(q.c, "DequantizeLinear")) {
          q.c = quantizedBias(dqc, q.w, why);
          if (!q.c)
            return -1;
          q.ops.push_back(dqc);
        }
      }
    }
    if (od::NodeOp dqa = nodeOf(aIn, "DequantizeLinear")) {
      Value a = fakeQuantized(dqa);
      if (!a) {
        why = "a quantized MatMul's input is not a QuantizeLinear and "
              "DequantizeLinear pair with one scale and zero point";
        return -1;
      }
      q.a = a;
      q.quantized = true;
      q.ops.push_back(dqa);
      q.ops.push_back(nodeOf(input(dqa, 0), "QuantizeLinear"));
    }
    return 1;
  };
  if (isa<od::MatMulOp, od::GemmOp>(op))
    return qdqProduct(op);

  auto dq = dyn_cast<od::NodeOp>(op);
  if (!dq || op->getNumResults() != 1 ||
      dq != nodeOf(op->getResult(0), "DequantizeLinear"))
    return 0;
  // QDQ with the product quantized too (quantize_static writes that for a
  // MatMul): DequantizeLinear(QuantizeLinear(MatMul(...), ys, yz), ys, yz).
  if (od::NodeOp qy = nodeOf(input(dq, 0), "QuantizeLinear")) {
    Operation *mm = input(qy, 0)
                        ? od::skipIdentities(input(qy, 0)).getDefiningOp()
                        : nullptr;
    Value w = !mm ? Value()
              : isa<od::MatMulOp>(mm) ? cast<od::MatMulOp>(mm).getB()
              : isa<od::GemmOp>(mm)   ? cast<od::GemmOp>(mm).getB()
                                      : Value();
    if (!w || !nodeOf(w, "DequantizeLinear"))
      return 0;
    if (!input(dq, 1) || !input(qy, 1) ||
        !sameParams(input(qy, 1), input(qy, 2), input(dq, 1), input(dq, 2))) {
      why = "a quantized MatMul's product is not requantized by a "
            "QuantizeLinear and DequantizeLinear pair with one scale and zero "
            "point";
      return -1;
    }
    int found = qdqProduct(mm);
    if (found <= 0)
      return found;
    q.quantized = true;
    q.ops.push_back(dq);
    q.ops.push_back(qy);
    return 1;
  }
  // QOperator: on the compiled targets expandQOperatorNodes has made each
  // QLinearMatMul it can the QDQ form above; one left has scales it cannot.
  od::NodeOp qmm = nodeOf(input(dq, 0), "QLinearMatMul");
  auto qgemm = od::skipIdentities(input(dq, 0)).getDefiningOp<od::NodeOp>();
  if (qgemm && !(qgemm.getDomain() == "com.microsoft" &&
                 qgemm.getOpType() == "QGemm"))
    qgemm = od::NodeOp();
  if (!qmm && !qgemm)
    return 0;
  if (!importQuantized)
    return keep(qmm ? "QLinearMatMul" : "QGemm");
  why = qmm ? "a QLinearMatMul's input or output scale or zero point is not "
              "one value"
            : "a QGemm's scales are not constants, or it has attributes or "
              "operands other than quantize_static writes";
  return -1;
}

void CellRecognizer::markQuantized(Operation *cell,
                                   ArrayRef<const LinearForm *> forms) {
  if (!llvm::any_of(forms, [](const LinearForm *f) { return f->quantized; }))
    return;
  if (quantizedPrecision != "f32")
    cell->setAttr(rnn::kPrecisionAttr,
                  StringAttr::get(cell->getContext(), quantizedPrecision));
  else if (!saidQuantizedF32) {
    // Once per function: every step's cell would say the same.
    saidQuantizedF32 = true;
    cell->emitRemark() << "cells of quantized MatMuls (this one and any "
                          "after it): their weights "
                       << kWithoutActivationQuantization;
  }
}

/// Whether a QuantizeLinear is one of a quantized MatMul's own (which the
/// int8 layers stand for, see matchQuantizedProduct): it quantizes a
/// MatMul's or Gemm's product, or every use of its value is one's input
/// (through a DequantizeLinear, or a QLinearMatMul or QGemm directly).
static bool quantizesAProduct(od::NodeOp q) {
  auto isNode = [](Operation *op, StringRef type) {
    auto n = dyn_cast<od::NodeOp>(op);
    return n && n.getOpType() == type;
  };
  auto isProduct = [&](Operation *op) {
    return op && (isa<od::MatMulOp, od::GemmOp>(op) ||
                  isNode(op, "QLinearMatMul") || isNode(op, "QGemm"));
  };
  if (q.getInputs().empty() || q->getNumResults() < 1)
    return false;
  if (isProduct(od::skipIdentities(q.getInputs()[0]).getDefiningOp()))
    return true;
  if (q->getResult(0).use_empty())
    return false;
  for (Operation *user : q->getResult(0).getUsers()) {
    if (isNode(user, "QLinearMatMul") || isNode(user, "QGemm"))
      continue;
    if (!isNode(user, "DequantizeLinear") || user->getNumResults() != 1)
      return false;
    for (Operation *u : user->getResult(0).getUsers())
      if (!isProduct(u))
        return false;
  }
  return true;
}

/// A recurrence nobody fused must not pass unnoticed: the remarks of the
/// matchers cover the candidates that came close, not a cell written in a
/// way no form knows. What every unrolled recurrence has, whatever its cell:
/// a constant weight applied (MatMul, Gemm and their quantized forms) at several
/// steps, each to a value computed from its application at an earlier step. Weights whose
/// applications reach each other are one recurrence; each gets one remark,
/// on its first application in program order, which `--report` lists among
/// the refusals. The search back from the last application of each weight
/// visits at most 4096 nodes.
void CellRecognizer::remarkUnfusedRecurrences() {
  Block &body = func.front();
  llvm::MapVector<Value, SmallVector<Operation *>> apps;
  for (Operation &op : body) {
    Value w;
    auto node = dyn_cast<od::NodeOp>(op);
    if (auto mm = dyn_cast<od::MatMulOp>(op))
      w = mm.getB();
    else if (auto g = dyn_cast<od::GemmOp>(op))
      w = g.getB();
    else if (node && node.getOpType() == "MatMulInteger" &&
             node.getInputs().size() >= 2)
      w = node.getInputs()[1];
    else if (node &&
             (node.getOpType() == "QLinearMatMul" || node.getOpType() == "QGemm") &&
             node.getInputs().size() >= 4)
      w = node.getInputs()[3];
    else
      continue;
    w = od::skipIdentities(w);
    // A weight dequantized from a constant (QDQ): that constant.
    if (auto dq = w.getDefiningOp<od::NodeOp>();
        dq && dq.getOpType() == "DequantizeLinear" && !dq.getInputs().empty())
      w = od::skipIdentities(dq.getInputs()[0]);
    if (od::getConstantAttr(w))
      apps[w].push_back(&op);
  }
  DenseMap<Operation *, unsigned> groupOf; // application -> weight index
  SmallVector<Value> weights;
  for (auto &[w, ops] : apps) {
    if (ops.size() < 2)
      continue;
    for (Operation *op : ops)
      groupOf[op] = weights.size();
    weights.push_back(w);
  }
  if (weights.empty())
    return;
  // Union-find over the weights that are recurrent.
  SmallVector<unsigned> parent(weights.size());
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](unsigned k) {
    while (parent[k] != k)
      k = parent[k] = parent[parent[k]];
    return k;
  };
  SmallVector<bool> recurrent(weights.size(), false);
  SmallVector<SmallVector<unsigned>> reaches(weights.size());
  // A QuantizeLinear on the way back: the model rounds values inside the
  // recurrence (quantize_static's QDQ beyond the MatMuls' inputs).
  SmallVector<Operation *> rounding(weights.size(), nullptr);
  for (auto [k, w] : llvm::enumerate(weights)) {
    Operation *last = apps[w].back();
    SmallVector<Value> work = {last->getOperand(0)};
    DenseSet<Operation *> seen;
    while (!work.empty() && seen.size() < 4096) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != &body || !seen.insert(def).second)
        continue;
      if (auto n = dyn_cast<od::NodeOp>(def);
          n && n.getOpType() == "QuantizeLinear" && !rounding[k] &&
          !quantizesAProduct(n))
        rounding[k] = def;
      auto it = groupOf.find(def);
      if (it != groupOf.end()) {
        if (it->second == k)
          recurrent[k] = true;
        else
          reaches[k].push_back(it->second);
      }
      work.append(def->operand_begin(), def->operand_end());
    }
  }
  for (auto [k, to] : llvm::enumerate(reaches))
    if (recurrent[k])
      for (unsigned j : to)
        if (recurrent[j])
          parent[find(k)] = find(j);
  // One remark per recurrence, on its first application.
  llvm::MapVector<unsigned, SmallVector<unsigned>> sets;
  for (unsigned k = 0; k < weights.size(); ++k)
    if (recurrent[k])
      sets[find(k)].push_back(k);
  for (auto &[root, members] : sets) {
    Operation *first = nullptr, *quantize = nullptr;
    size_t steps = 0;
    for (unsigned k : members) {
      if (!quantize)
        quantize = rounding[k];
      Operation *op = apps[weights[k]].front();
      if (!first || op->isBeforeInBlock(first))
        first = op;
      steps = std::max(steps, apps[weights[k]].size());
    }
    auto diag = first->emitRemark();
    diag << "not fused: a recurrence is left as it is: " << members.size()
         << " constant weight" << (members.size() == 1 ? " is" : "s are")
         << " applied at " << steps
         << " steps, each to values computed from an earlier application, "
            "and no cell form matched it";
    if (numNearMisses)
      diag << " (earlier remarks name the near misses)";
    else if (!quantize)
      diag << ": no step came close to a cell form (an LSTM, GRU or simple "
              "RNN step with the gates, activations and update the "
              "recogniser reads; its documentation lists them)";
    if (quantize)
      diag << "; the model rounds a value inside the cell to integers "
              "(QuantizeLinear '"
           << od::getNodeName(quantize)
           << "') and uses it beyond a MatMul's input, which a fused layer "
              "would not do";
    ++numUnfusedRecurrences;
  }
}

/// A value a Loop carries and its body hands back unchanged is its initial
/// value at every iteration. The body reads that value directly instead
/// (ONNX scoping lets a subgraph read the enclosing graph's values), so that
/// a cell in a Loop that stays a loop (its trip count known only when the
/// model runs) sees constant weights: tf2onnx's Keras LSTM Loops carry their
/// kernels.
void CellRecognizer::readInvariantCarriedValues() {
  func.walk([&](od::NodeOp node) {
    StringRef domain = node.getDomain();
    if ((!domain.empty() && domain != "ai.onnx") || node.getOpType() != "Loop" ||
        node->getNumRegions() != 1 || node->getRegion(0).empty())
      return;
    Block &body = node->getRegion(0).front();
    auto yield = dyn_cast<od::YieldOp>(body.getTerminator());
    auto ins = node.getInputs();
    if (!yield || body.getNumArguments() != ins.size() ||
        yield.getValues().size() + 1 < ins.size())
      return;
    for (unsigned i = 2; i < ins.size(); ++i) {
      BlockArgument arg = body.getArgument(i);
      if (od::skipIdentities(yield.getValues()[i - 1]) != arg ||
          ins[i].getType() != arg.getType())
        continue;
      arg.replaceUsesWithIf(ins[i], [&](OpOperand &use) {
        return use.getOwner() != yield.getOperation();
      });
    }
  });
}

/// A weight that data movement computes from a constant: tf2onnx's Keras
/// Loop bodies slice the loop-carried kernel at every step
/// (MatMul(h, Slice(W_carried))); unrolled, every step computes the same
/// Slice of the same initializer. Each distinct one becomes one initializer
/// (ops equal up to location, over the same operands, share it), so that the
/// gate matmuls read constants. Weights past kMaxFoldedWeight elements stay.
void CellRecognizer::materializeComputedWeights() {
  constexpr int64_t kMaxFoldedWeight = int64_t(1) << 26;
  struct Made {
    Operation *op;
    unsigned result;
    Value value;
  };
  DenseMap<unsigned, SmallVector<Made, 1>> made;
  auto hashOf = [](Operation *op) {
    return (unsigned)OperationEquivalence::computeHash(
        op, OperationEquivalence::directHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
  };
  SmallVector<Operation *> products;
  llvm::SetVector<Operation *> replaced;
  func.walk([&](Operation *op) {
    if (isa<od::MatMulOp, od::GemmOp>(op))
      products.push_back(op);
  });
  for (Operation *op : products) {
    Value w = op->getOperand(1);
    auto t = dyn_cast<RankedTensorType>(w.getType());
    Operation *def = w.getDefiningOp();
    if (!t || !t.getElementType().isF32() || !t.hasStaticShape() ||
        t.getNumElements() > kMaxFoldedWeight || !def ||
        od::getConstantAttr(w) ||
        !isa<od::SliceOp, od::SplitOp, od::ConcatOp, od::SqueezeOp,
             od::UnsqueezeOp, od::ReshapeOp, od::TransposeOp>(def))
      continue;
    unsigned k = cast<OpResult>(w).getResultNumber();
    auto &bucket = made[hashOf(def)];
    Value c;
    for (const Made &m : bucket)
      if (m.result == k &&
          OperationEquivalence::isEquivalentTo(
              def, m.op, OperationEquivalence::exactValueMatch, nullptr,
              OperationEquivalence::IgnoreLocations)) {
        c = m.value;
        break;
      }
    if (!c) {
      auto folded = od::foldConstantF32(w, kMaxFoldedWeight);
      if (!folded)
        continue;
      c = consts->getF32(def->getLoc(), "folded_weight", folded->shape,
                         folded->values);
      bucket.push_back({def, k, c});
    }
    op->setOperand(1, c);
    replaced.insert(def);
  }
  // The data movement now unused goes (each memo key stays until here).
  SmallVector<Operation *> dead(replaced.begin(), replaced.end());
  od::eraseDeadOps(dead, [&](Operation *op) {
    erasedOps.insert(op);
    consts->forget(op);
    forgetCached(op);
  });
}

/// `v`'s shape with f32 elements (unranked if `v` is).
static Type f32Like(Value v) {
  Type f32 = Float32Type::get(v.getContext());
  auto rt = dyn_cast<RankedTensorType>(v.getType());
  return rt ? Type(RankedTensorType::get(rt.getShape(), f32))
            : Type(UnrankedTensorType::get(f32));
}

/// DequantizeLinear(x, s[, z]) along `axis` (1, ONNX's default, unwritten);
/// a null or none `z` is left out.
static Value createDequantize(OpBuilder &b, Location loc, Value x, Value s,
                              Value z, int64_t axis = 1) {
  SmallVector<Value> ops = {x, s};
  if (z && !isa<NoneType>(z.getType()))
    ops.push_back(z);
  DictionaryAttr attrs =
      axis == 1 ? DictionaryAttr()
                : b.getDictionaryAttr(
                      b.getNamedAttr("axis", b.getI64IntegerAttr(axis)));
  return od::NodeOp::create(b, loc, TypeRange{f32Like(x)}, ops,
                            "DequantizeLinear", "", attrs, ArrayAttr(), 0)
      ->getResult(0);
}

/// onnxruntime.quantization's QOperator format (quantize_static with
/// QuantFormat.QOperator) writes quantized operators: QLinearMatMul, and
/// com.microsoft's QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu
/// and QLinearConcat, whose inputs and outputs are uint8/int8 with a scale
/// and zero point each. On the compiled targets each becomes the QDQ form of
/// the same computation, DequantizeLinear of every input, the float
/// operator, QuantizeLinear of the result with the output's scale and zero
/// point, which the compiled targets run (and whose MatMuls
/// matchQuantizedProduct reads as int8 layers). ONNX Runtime computes a few
/// of these with another float association (QLinearAdd scales each input by
/// its scale over the output's), so the two agree within one step of the
/// output's quantization, not bit for bit. Ops with scales or zero points
/// of another shape than one value (QLinearMatMul: b per column) stay, and
/// the CPU backend names them.
void CellRecognizer::expandFusedGemms() {
  // In rounds: a FusedGemm whose input another one computes has no type
  // until shapes are inferred again after that one is expanded (ONNX's
  // inference does not know com.microsoft ops).
  for (int round = 0; round < 64; ++round) {
    if (!expandFusedGemmsOnce())
      return;
    od::refineShapes(func);
  }
}

bool CellRecognizer::expandFusedGemmsOnce() {
  SmallVector<od::NodeOp> nodes;
  func.walk([&](od::NodeOp n) {
    if (n.getDomain() == "com.microsoft" && n.getOpType() == "FusedGemm" &&
        n->getNumResults() == 1 && n.getNumRegions() == 0 &&
        (n.getInputs().size() == 2 || n.getInputs().size() == 3))
      nodes.push_back(n);
  });
  bool expanded = false;
  for (od::NodeOp n : nodes) {
    DictionaryAttr attrs = n.getAttrsAttr();
    auto str = [&](StringRef k) {
      auto a = attrs ? attrs.getAs<StringAttr>(k) : StringAttr();
      return a ? a.getValue() : StringRef();
    };
    auto f32 = [&](StringRef k, float d) -> std::optional<float> {
      Attribute a = attrs ? attrs.get(k) : Attribute();
      if (!a)
        return d;
      if (auto f = dyn_cast<FloatAttr>(a))
        return (float)f.getValueAsDouble();
      return std::nullopt;
    };
    auto i64 = [&](StringRef k) -> std::optional<int64_t> {
      Attribute a = attrs ? attrs.get(k) : Attribute();
      if (!a)
        return 0;
      if (auto i = dyn_cast<IntegerAttr>(a))
        return i.getInt();
      return std::nullopt;
    };
    // Only what the activation and the Gemm say alone: any other attribute
    // (an activation's parameters) leaves the node as it is.
    bool known = !attrs || llvm::all_of(attrs, [](NamedAttribute na) {
      return llvm::is_contained(
          {"activation", "alpha", "beta", "transA", "transB"},
          na.getName().getValue());
    });
    StringRef act = str("activation");
    auto alpha = f32("alpha", 1.0f), beta = f32("beta", 1.0f);
    auto transA = i64("transA"), transB = i64("transB");
    if (!known || !alpha || !beta || !transA || !transB ||
        !llvm::is_contained({"", "Tanh", "Relu", "Sigmoid"}, act))
      continue;
    auto ins = n.getInputs();
    auto at = dyn_cast<RankedTensorType>(ins[0].getType());
    auto bt = dyn_cast<RankedTensorType>(ins[1].getType());
    auto rt = dyn_cast<RankedTensorType>(n->getResult(0).getType());
    if (!at || !bt || at.getRank() != 2 || bt.getRank() != 2)
      continue;
    Type type = rt;
    if (!rt)
      type = RankedTensorType::get(
          {at.getDimSize(*transA ? 1 : 0), bt.getDimSize(*transB ? 0 : 1)},
          at.getElementType());
    OpBuilder b(n);
    Location loc = n.getLoc();
    Value c = ins.size() == 3 ? ins[2] : Value(od::NoneOp::create(b, loc));
    auto fa = [&](float v) {
      return v == 1.0f ? FloatAttr() : b.getF32FloatAttr(v);
    };
    auto ia = [&](int64_t v) {
      return v == 0 ? IntegerAttr() : b.getI64IntegerAttr(v);
    };
    Value y = od::GemmOp::create(b, loc, type, ins[0], ins[1], c, fa(*alpha),
                                 fa(*beta), ia(*transA), ia(*transB));
    if (act == "Tanh")
      y = od::TanhOp::create(b, loc, type, y);
    else if (act == "Relu")
      y = od::ReluOp::create(b, loc, type, y);
    else if (act == "Sigmoid")
      y = od::SigmoidOp::create(b, loc, type, y);
    if (Attribute names = n->getAttr(od::attrs::kOutputNames))
      y.getDefiningOp()->setAttr(od::attrs::kOutputNames, names);
    n->getResult(0).replaceAllUsesWith(y);
    erasedOps.insert(n);
    forgetCached(n);
    n.erase();
    expanded = true;
  }
  return expanded;
}

void CellRecognizer::expandQOperatorNodes() {
  SmallVector<od::NodeOp> nodes;
  func.walk([&](od::NodeOp n) {
    StringRef d = n.getDomain(), t = n.getOpType();
    bool std = d.empty() || d == "ai.onnx";
    if ((std && t == "QLinearMatMul") ||
        (d == "com.microsoft" &&
         llvm::is_contained({"QLinearAdd", "QLinearMul", "QLinearSigmoid",
                             "QLinearLeakyRelu", "QLinearConcat", "QGemm"},
                            t)))
      nodes.push_back(n);
  });
  auto none = [](Value v) { return !v || isa<NoneType>(v.getType()); };
  for (od::NodeOp n : nodes) {
    if (n->getNumResults() != 1)
      continue;
    if (n.getOpType() == "QGemm") {
      expandQGemm(n);
      continue;
    }
    StringRef t = n.getOpType();
    auto ins = n.getInputs();
    auto in = [&](unsigned i) { return i < ins.size() ? ins[i] : Value(); };
    // The output's element type: the output zero point's, else the first
    // input's (ONNX Runtime's shape inference, not ONNX's, knows the
    // com.microsoft ops: their results may be untyped here).
    Value typeSource = t == "QLinearMatMul"  ? in(7)
                       : t == "QLinearConcat" ? in(1)
                       : t == "QLinearAdd" || t == "QLinearMul"
                           ? in(7)
                           : in(4);
    if (!typeSource || isa<NoneType>(typeSource.getType()))
      typeSource = t == "QLinearConcat" ? in(2) : in(0);
    Type outElem = typeSource ? getElementTypeOrSelf(typeSource.getType())
                              : Type();
    if (!outElem || !outElem.isInteger(8))
      continue;
    OpBuilder b(n);
    Location loc = n.getLoc();
    Type f32 = b.getF32Type();
    auto fType = f32Like;
    // The float op's result type from its shape rule where the node's
    // result was untyped.
    auto refine = [&](Value v) {
      if (auto rt = dyn_cast<RankedTensorType>(v.getType());
          rt && rt.hasStaticShape())
        return;
      ShapedTypeComponents c = od::inferShape(v);
      if (c.hasRank() && llvm::none_of(c.getDims(), ShapedType::isDynamic))
        v.setType(RankedTensorType::get(c.getDims(), f32));
    };
    // A zero point: the given one, or 0 of `type` (QuantizeLinear without
    // one would make uint8).
    auto zeroPoint = [&](Value z, Type et) -> Value {
      if (!none(z))
        return z;
      return consts->getInts(loc, "zero_point", RankedTensorType::get({}, et),
                             {0});
    };
    auto dq = [&](Value x, Value s, Value z, int64_t axis = 1) {
      return createDequantize(b, loc, x, s, z, axis);
    };
    // One value, or absent (a zero point); `scale`: one value, present.
    auto scalar = [&](Value v) {
      if (none(v))
        return true;
      auto rt = dyn_cast<RankedTensorType>(v.getType());
      return rt && rt.hasStaticShape() && rt.getNumElements() == 1;
    };
    auto scale = [&](Value v) { return !none(v) && scalar(v); };
    Value y, ys, yz;
    if (t == "QLinearMatMul") {
      if (ins.size() != 8 || !scale(in(1)) || !scalar(in(2)) || none(in(4)) ||
          !scale(in(6)) || !scalar(in(7)))
        continue;
      auto bt = dyn_cast<RankedTensorType>(in(3).getType());
      if (!bt || bt.getRank() < 2)
        continue;
      // b's scale and zero point per tensor or per column (its last axis).
      Value a = dq(in(0), in(1), in(2));
      Value w = dq(in(3), in(4), in(5), bt.getRank() - 1);
      y = od::MatMulOp::create(b, loc, fType(n->getResult(0)), a, w);
      ys = in(6);
      yz = in(7);
    } else if (t == "QLinearAdd" || t == "QLinearMul") {
      if (ins.size() < 7 || !scale(in(1)) || !scalar(in(2)) ||
          !scale(in(4)) || !scalar(in(5)) || !scale(in(6)) || !scalar(in(7)))
        continue;
      Value a = dq(in(0), in(1), in(2)), c = dq(in(3), in(4), in(5));
      Type rt = fType(n->getResult(0));
      y = t == "QLinearAdd" ? Value(od::AddOp::create(b, loc, rt, a, c))
                            : Value(od::MulOp::create(b, loc, rt, a, c));
      ys = in(6);
      yz = in(7);
    } else if (t == "QLinearSigmoid" || t == "QLinearLeakyRelu") {
      if (ins.size() < 4 || !scale(in(1)) || !scalar(in(2)) ||
          !scale(in(3)) || !scalar(in(4)))
        continue;
      Value x = dq(in(0), in(1), in(2));
      Type rt = fType(n->getResult(0));
      if (t == "QLinearSigmoid") {
        y = od::SigmoidOp::create(b, loc, rt, x);
      } else {
        DictionaryAttr attrs = n.getAttrsAttr();
        auto alpha = attrs ? attrs.getAs<FloatAttr>("alpha") : FloatAttr();
        y = od::NodeOp::create(
                b, loc, TypeRange{rt}, ValueRange{x}, "LeakyRelu", "",
                b.getDictionaryAttr(b.getNamedAttr(
                    "alpha", alpha ? alpha : b.getF32FloatAttr(0.01f))),
                ArrayAttr(), 0)
                ->getResult(0);
      }
      ys = in(3);
      yz = in(4);
    } else { // QLinearConcat(Y_scale, Y_zero_point, (X, X_scale, X_zp)...)
      if (ins.size() < 5 || (ins.size() - 2) % 3 != 0 || !scale(in(0)) ||
          !scalar(in(1)))
        continue;
      bool ok = true;
      SmallVector<Value> parts;
      for (unsigned i = 2; i + 2 < ins.size() && ok; i += 3) {
        ok = scale(in(i + 1)) && scalar(in(i + 2));
        if (ok)
          parts.push_back(dq(in(i), in(i + 1), in(i + 2)));
      }
      DictionaryAttr attrs = n.getAttrsAttr();
      auto axis = attrs ? attrs.getAs<IntegerAttr>("axis") : IntegerAttr();
      if (!ok || !axis) {
        for (Value p : llvm::reverse(parts)) {
          forgetCached(p.getDefiningOp());
          p.getDefiningOp()->erase();
        }
        continue;
      }
      y = od::ConcatOp::create(b, loc, fType(n->getResult(0)), parts,
                               axis.getInt());
      ys = in(0);
      yz = in(1);
    }
    refine(y);
    auto yt = dyn_cast<RankedTensorType>(y.getType());
    Type outT = yt ? Type(RankedTensorType::get(yt.getShape(), outElem))
                   : Type(UnrankedTensorType::get(outElem));
    Value q = od::NodeOp::create(b, loc, TypeRange{outT},
                                 ValueRange{y, ys, zeroPoint(yz, outElem)},
                                 "QuantizeLinear", "", DictionaryAttr(),
                                 ArrayAttr(), 0)
                  ->getResult(0);
    n->getResult(0).replaceAllUsesWith(q);
    erasedOps.insert(n);
    forgetCached(n);
    n.erase();
  }
}

/// com.microsoft's QGemm (quantize_static's QOperator form of a Gemm:
/// PyTorch's nn.Linear and LSTMCell/GRUCell export as Gemm):
///   QGemm(A, a_scale, a_zp, B, b_scale, b_zp, [C], [y_scale, y_zp])
/// computes, as ONNX Runtime does, acc = C + sum_k (a - a_zp)(b - b_zp) in
/// 32-bit integers and y = acc * alpha * a_scale * b_scale[n] (b's scale
/// and zero point per tensor or per output column n), quantized with
/// y_scale and y_zp where they are given, else f32. Its QDQ form:
///   Gemm(DequantizeLinear(A), DequantizeLinear(B), DequantizeLinear(C, S),
///        alpha, transA, transB)   with S = alpha * a_scale * b_scale
/// (constants, S computed in f32 in that order as ONNX Runtime does), then
/// QuantizeLinear(., y_scale, y_zp). The float sums round where ONNX
/// Runtime's integer ones do not: within one step of the output's
/// quantization. A QGemm with another attribute, non-constant scales, or
/// y_scale without y_zp (a float output divided by y_scale) stays, and the
/// CPU backend names it.
void CellRecognizer::expandQGemm(od::NodeOp n) {
  auto ins = n.getInputs();
  auto in = [&](unsigned i) -> Value {
    Value v = i < ins.size() ? ins[i] : Value();
    return v && !isa<NoneType>(v.getType()) ? v : Value();
  };
  if (ins.size() < 6 || ins.size() > 9 || !in(0) || !in(1) || !in(3) ||
      !in(4) || (bool)in(7) != (bool)in(8))
    return;
  DictionaryAttr attrs = n.getAttrsAttr();
  if (attrs && !llvm::all_of(attrs, [](NamedAttribute na) {
        return llvm::is_contained({"alpha", "transA", "transB"},
                                  na.getName().getValue());
      }))
    return;
  float alpha = 1.0f;
  int64_t transA = 0, transB = 0;
  if (attrs) {
    if (Attribute a = attrs.get("alpha")) {
      auto f = dyn_cast<FloatAttr>(a);
      if (!f)
        return;
      alpha = (float)f.getValueAsDouble();
    }
    for (auto [name, v] : {std::pair<StringRef, int64_t *>("transA", &transA),
                           std::pair<StringRef, int64_t *>("transB", &transB)})
      if (Attribute a = attrs.get(name)) {
        auto i = dyn_cast<IntegerAttr>(a);
        if (!i || (i.getInt() != 0 && i.getInt() != 1))
          return;
        *v = i.getInt();
      }
  }
  auto at = dyn_cast<RankedTensorType>(in(0).getType());
  auto bt = dyn_cast<RankedTensorType>(in(3).getType());
  if (!at || !bt || at.getRank() != 2 || bt.getRank() != 2 ||
      !at.getElementType().isInteger(8) || !bt.getElementType().isInteger(8))
    return;
  int64_t N = bt.getDimSize(transB ? 0 : 1);
  auto as = od::getConstantF32(od::skipIdentities(in(1)));
  auto bs = od::getConstantF32(od::skipIdentities(in(4)));
  if (!as || as->numElements() != 1 || !bs ||
      (bs->numElements() != 1 && (ShapedType::isDynamic(N) ||
                                  bs->numElements() != N)))
    return;
  if (Value ci = in(6)) {
    auto ct = dyn_cast<RankedTensorType>(ci.getType());
    if (!ct || !ct.getElementType().isInteger(32) || ct.getRank() > 2)
      return;
  }
  Type outElem;
  if (Value yz = in(8)) {
    outElem = getElementTypeOrSelf(yz.getType());
    if (!outElem.isInteger(8))
      return;
  }
  OpBuilder b(n);
  Location loc = n.getLoc();
  Type f32 = b.getF32Type();
  auto dq = [&](Value x, Value s, Value z, int64_t axis) {
    return createDequantize(b, loc, x, s, z, axis);
  };
  Value a = dq(in(0), in(1), in(2), 1);
  // b's scale per output column: B's axis 0 when B is [N, K].
  Value w = dq(in(3), in(4), in(5), transB ? 0 : 1);
  Value c;
  if (Value ci = in(6)) {
    // C dequantized with S: per tensor, or per column along C's last axis
    // (C [N] or [1, N]); a per-column S over a C of [M, 1] or one value is
    // Cast<float>(C) * S.
    std::vector<float> sv;
    for (float bv : bs->values)
      sv.push_back(alpha * as->values[0] * bv);
    auto ct = cast<RankedTensorType>(ci.getType());
    bool perColumn = sv.size() != 1;
    SmallVector<int64_t> sShape;
    if (perColumn)
      sShape.push_back((int64_t)sv.size());
    Value scaleC = consts->getF32(loc, "qgemm_bias_scale", sShape, sv);
    if (!perColumn || (ct.getRank() >= 1 && ct.getShape().back() == N)) {
      c = dq(ci, scaleC, Value(), perColumn ? ct.getRank() - 1 : 1);
    } else {
      Value cf = od::CastOp::create(b, loc, f32Like(ci), ci,
                                    b.getI64IntegerAttr(1) /*FLOAT*/, IntegerAttr());
      c = od::MulOp::create(b, loc, UnrankedTensorType::get(f32), cf, scaleC);
      if (ShapedTypeComponents sc = od::inferShape(c);
          sc.hasRank() && llvm::none_of(sc.getDims(), ShapedType::isDynamic))
        c.setType(RankedTensorType::get(sc.getDims(), f32));
    }
  }
  auto rt = dyn_cast<RankedTensorType>(n->getResult(0).getType());
  Type gemmType = RankedTensorType::get(
      rt ? rt.getShape()
         : ArrayRef<int64_t>{at.getDimSize(transA ? 1 : 0), N},
      f32);
  Value y = od::GemmOp::create(
      b, loc, gemmType, a, w, c ? c : Value(od::NoneOp::create(b, loc)),
      alpha == 1.0f ? FloatAttr() : b.getF32FloatAttr(alpha), FloatAttr(),
      transA ? b.getI64IntegerAttr(1) : IntegerAttr(),
      transB ? b.getI64IntegerAttr(1) : IntegerAttr());
  if (outElem) {
    auto yt = cast<RankedTensorType>(y.getType());
    y = od::NodeOp::create(b, loc,
                           TypeRange{RankedTensorType::get(yt.getShape(), outElem)},
                           ValueRange{y, in(7), in(8)}, "QuantizeLinear", "",
                           DictionaryAttr(), ArrayAttr(), 0)
            ->getResult(0);
  }
  n->getResult(0).replaceAllUsesWith(y);
  erasedOps.insert(n);
  forgetCached(n);
  n.erase();
}

void CellRecognizer::run() {
  // Initializers the graph uses now; those the fused cells leave unused
  // (weights, Split sizes, Gather indices read only inside the steps, also
  // from subgraphs) are dropped at the end, and so are unused ones the
  // recogniser made (a constant made for a match that then failed). Ones
  // unused already are kept.
  SmallVector<od::InitializerOp> usedBefore;
  DenseSet<Operation *> before;
  for (auto init : func.front().getOps<od::InitializerOp>()) {
    before.insert(init);
    if (!init->use_empty() && !init.getGraphInput())
      usedBefore.push_back(init);
  }
  llvm::scope_exit dropUnused([&] {
    // (Liveness from the block, not from erasedOps: an erased op's address
    // may since hold a new op. Such a new one counts as old here and is
    // kept: the safe side.)
    DenseSet<Operation *> live;
    SmallVector<od::InitializerOp> made;
    for (auto init : func.front().getOps<od::InitializerOp>()) {
      live.insert(init);
      if (!before.contains(init) && init->use_empty() && !init.getGraphInput())
        made.push_back(init);
    }
    for (od::InitializerOp init : usedBefore)
      if (live.contains(init) && init->use_empty())
        init->erase();
    for (od::InitializerOp init : made)
      init->erase();
  });
  // Dead nodes first (a hand-written graph may compute a gate it then does
  // not use): a state they read would look shared with something else.
  {
    SmallVector<Operation *> all;
    for (Operation &op : func.front())
      if (!isa<od::InitializerOp>(op) && !op.hasTrait<OpTrait::IsTerminator>())
        all.push_back(&op);
    od::eraseDeadOps(all, [&](Operation *op) {
      erasedOps.insert(op);
      consts->forget(op);
      forgetCached(op);
    });
  }
  expandFusedGemms();
  if (importQuantized)
    expandQOperatorNodes();
  readInvariantCarriedValues();
  materializeComputedWeights();
  // Steps written with a leading unit axis or a hoisted input projection,
  // in the form the cell forms read; undone below where no cell took them.
  rnn::StepNormalizer steps(func, *consts);
  steps.apply();
  SmallVector<Operation *> layers;
  func.walk([&](Operation *op) {
    auto node = dyn_cast<od::NodeOp>(op);
    if (isa<od::LSTMOp, od::GRUOp, od::RNNOp>(op) ||
        (node && node.getDomain() == "com.microsoft" &&
         node.getOpType() == "DynamicQuantizeLSTM"))
      layers.push_back(op);
  });
  for (Operation *op : layers)
    importLayer(op);
  // Cells by their state updates (CellForms.cpp), form by form in the
  // table's order, anchors in program order: a step's hidden input is then
  // known to be the previous step's output.
  for (const auto &[form, pattern] : rnn::parsedCellForms()) {
    SmallVector<Operation *> anchors;
    const auto &anchorPattern = pattern; // a lambda cannot capture a binding
    func.walk([&](Operation *op) {
      if (rnn::matchesNodeKind(anchorPattern, op) &&
          !rnn::StepNormalizer::isReplaced(op))
        anchors.push_back(op);
    });
    // A live op at the address of one erased before is not erased.
    for (Operation *anchor : anchors)
      erasedOps.erase(anchor);
    for (Operation *anchor : anchors)
      // A match erases the nodes it replaced, later anchors among them.
      if (!erasedOps.contains(anchor))
        matchForm(*form, pattern, anchor);
  }
  // Simple RNN steps, last: every activation left is a candidate.
  matchRNNCells();
  steps.settle([&](Operation *op) {
    erasedOps.insert(op);
    consts->forget(op);
  });
  remarkUnfusedRecurrences();
  // Function results may have become more static.
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  func.setFunctionType(FunctionType::get(
      &getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
}

struct RecognizeCells
    : public rnn::impl::RNNRecognizeCellsPassBase<RecognizeCells> {
  // (For the generated createRNNRecognizeCellsPass(options); the pipelines
  // make the pass with the default constructor, see buildRecognitionPipeline.)
  using RNNRecognizeCellsPassBase::RNNRecognizeCellsPassBase;
  void runOnOperation() override {
    if (quantizedPrecision != "f32" && quantizedPrecision != "int8") {
      getOperation()->emitError()
          << "rnn-recognize-cells: quantized-precision must be f32 or "
             "int8, not '"
          << quantizedPrecision << "'";
      return signalPassFailure();
    }
    rnn::forEachGraph(getOperation(), [&](func::FuncOp func) {
      CellRecognizer recognizer(func, importQuantized, quantizedPrecision);
      recognizer.run();
      numCells += recognizer.numCells;
      numLayers += recognizer.numLayers;
      numUnfusedRecurrences += recognizer.numUnfusedRecurrences;
    });
  }
};

} // namespace

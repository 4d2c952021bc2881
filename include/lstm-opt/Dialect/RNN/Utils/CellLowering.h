//===- CellLowering.h - shared by the rnn backends --------------*- C++ -*-===//
//
// What convert-rnn-to-cpu, convert-rnn-to-gpu and convert-rnn-to-cudnn have
// in common: the ONNX activations of a layer with their parameters, the
// activation math (on scalars or vectors), symbol naming, and replacing a
// layer op by the buffers its lowering wrote.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_RNN_UTILS_CELLLOWERING_H
#define LSTM_OPT_DIALECT_RNN_UTILS_CELLLOWERING_H

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>
#include <string>
#include <type_traits>

namespace lstm_opt::rnn {

/// An activation with its ONNX parameters (lower-case ONNX name).
struct Activation {
  std::string name;
  float alpha = 0.f, beta = 0.f;
  bool operator==(const Activation &o) const {
    return name == o.name && alpha == o.alpha && beta == o.beta;
  }
};

/// The activations of each of `directions` directions, from the op's
/// `activations` (absent: the cell's defaults), with the defaults of ONNX
/// and the alphas/betas consumed in order by the functions that take them,
/// as ONNX Runtime does. An unknown name is an error on `op` prefixed by
/// `pass`.
mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<Activation>>>
collectActivations(mlir::Operation *op, llvm::StringRef pass, CellKind kind,
                   int64_t directions, std::optional<mlir::ArrayAttr> names,
                   std::optional<llvm::ArrayRef<float>> alphas,
                   std::optional<llvm::ArrayRef<float>> betas);

/// What every backend's kernel generator knows about a layer, all static.
struct LayerShape {
  CellKind kind = CellKind::LSTM;
  bool linearBeforeReset = false;
  int64_t T = 0, B = 0, I = 0, H = 0, D = 0, G = 0;
  llvm::SmallVector<bool> reverse;                          // per direction
  llvm::SmallVector<llvm::SmallVector<Activation>> acts;    // per direction
  std::optional<float> clip;
  bool hasH0 = false, hasC0 = false;
  /// LSTM variants: f = 1 - i; peephole weights (an operand of the layer).
  bool inputForget = false, hasPeephole = false;
  bool isLSTM() const { return kind == CellKind::LSTM; }
  bool isGRU() const { return kind == CellKind::GRU; }
  /// GRU without linear_before_reset needs r of every unit before the n
  /// gate's GEMM: two phases per step.
  bool twoPhase() const { return isGRU() && !linearBeforeReset; }
};

/// Fills `s` from a layer op (rnn.sequence or rnn.recurrence) with static
/// input type `x` [T, B, I], input weights of width `wInputWidth`, and the
/// presence of initial states. Errors go on `op`, prefixed by `pass`.
template <typename OpTy>
mlir::LogicalResult describeLayer(OpTy op, llvm::StringRef pass,
                                  mlir::RankedTensorType x,
                                  int64_t wInputWidth, bool hasH0, bool hasC0,
                                  LayerShape &s) {
  s.kind = op.getCell();
  s.linearBeforeReset = op.getLinearBeforeReset();
  s.T = x.getDimSize(0);
  s.B = x.getDimSize(1);
  s.I = x.getDimSize(2);
  s.H = op.getHiddenSize();
  s.D = op.getNumDirections();
  s.G = getNumGates(s.kind);
  if (wInputWidth != s.I)
    return op->emitError() << pass << ": input width does not match W";
  s.reverse.clear();
  for (int64_t d = 0; d < s.D; ++d)
    s.reverse.push_back(op.getDirection() == Direction::Reverse ||
                        (op.getDirection() == Direction::Bidirectional && d == 1));
  auto acts = collectActivations(op, pass, s.kind, s.D, op.getActivations(),
                                 op.getActivationAlpha(), op.getActivationBeta());
  if (mlir::failed(acts))
    return mlir::failure();
  s.acts = std::move(*acts);
  if (auto c = op.getClipAttr())
    s.clip = c.getValueAsDouble();
  s.hasH0 = hasH0;
  s.hasC0 = hasC0 && s.isLSTM();
  s.inputForget = op.getInputForget();
  s.hasPeephole = op.getPeephole() != nullptr;
  return mlir::success();
}

/// How an activation is written in arith/math ops; only the sigmoid differs.
enum class ActivationForm {
  /// The recurrent kernels: sigmoid as 0.5 + 0.5 tanh(x / 2), one rational
  /// approximation and no division. Gate outputs are read with absolute
  /// error, which this keeps at a few ulp of 1 (a result below ~1e-8 comes
  /// out as 0).
  Kernel,
  /// A model's own activation nodes (convert-onnx-to-linalg): sigmoid as
  /// 1 / (1 + exp(-x)), accurate relative to the result down to the smallest
  /// outputs (a probability of 1e-20 stays 1e-20).
  Reference,
};

/// `a` applied to `x` (a float, or a vector of floats) with arith/math ops,
/// in the given form. The one place the ONNX activations' math is written.
/// `a` on one float, as ActivationForm::Reference computes it.
float evalActivation(const Activation &a, float x);

/// The reduced precisions of the CPU kernels' products.
enum class LowPrecision { BF16, Int8 };

/// int8's symmetric scale for values whose largest magnitude is `maxAbs`:
/// maxAbs / 127 (0 for all-zero values).
inline float int8Scale(float maxAbs) { return maxAbs / 127.f; }
/// `v` quantized to int8 for a range of `maxAbs`: round(v * (127 / maxAbs)),
/// ties to even, clamped to [-127, 127]; 0 when maxAbs is 0. The CPU
/// kernels quantize their weights (per gate row) with this, and x and h
/// (per row and step) with the same float operations at run time.
int8_t quantizeInt8(float v, float maxAbs);

/// How far reduced-precision products move a layer's outputs: the layer's
/// equations run on the host in f32 and again with the products in
/// precision `p`, as the CPU kernels compute them: bf16 rounds the weights,
/// x and h to bf16; int8 quantizes the weights per gate row, and x, h (and
/// a GRU's r * h) per row and step, to their range (quantizeInt8), with
/// exact integer sums; accumulation, gates and states stay f32. Runs on
/// `steps` steps of `batch` rows of random inputs (uniform in [-1, 1],
/// seeded, zero initial state); returns max |y_low - y_f32| / max |y_f32|
/// over the outputs. `w`, `r`, `bw`, `br` are the layer's constants in the
/// dialect's layout ([D][G*H][I], [D][G*H][H], [D][G*H]). A very large
/// layer runs fewer steps (at most about 2^28 multiply-adds per
/// precision); `stepsRun` receives how many. An LSTM's `peephole` weights
/// ([D][3*H], i, f, o; empty: none) and input_forget (`s`) are applied.
double simulatedPrecisionError(const LayerShape &s, LowPrecision p,
                               llvm::ArrayRef<float> w,
                               llvm::ArrayRef<float> r,
                               llvm::ArrayRef<float> bw,
                               llvm::ArrayRef<float> br, int64_t steps,
                               int64_t batch, int64_t *stepsRun = nullptr,
                               llvm::ArrayRef<float> peephole = {});
inline double simulatedBF16Error(const LayerShape &s, llvm::ArrayRef<float> w,
                                 llvm::ArrayRef<float> r,
                                 llvm::ArrayRef<float> bw,
                                 llvm::ArrayRef<float> br, int64_t steps,
                                 int64_t batch, int64_t *stepsRun = nullptr) {
  return simulatedPrecisionError(s, LowPrecision::BF16, w, r, bw, br, steps,
                                 batch, stepsRun);
}

mlir::Value emitActivation(mlir::ImplicitLocOpBuilder &b, const Activation &a,
                           mlir::Value x,
                           ActivationForm form = ActivationForm::Kernel);

/// `base`, or `base_N` for the first N no symbol of `module` uses.
std::string uniqueSymbol(mlir::ModuleOp module, llvm::StringRef base);

/// `prefix` + the first ONNX node name in `loc` (else "layer"), with every
/// character that is not alphanumeric replaced by '_'.
std::string layerSymbol(mlir::Location loc, llvm::StringRef prefix);

/// Replaces `op`'s results by `bufferization.to_tensor restrict` of the
/// memrefs its lowering wrote (cast to the result types where they know
/// less), erases `op` and the constants only it used.
mlir::LogicalResult replaceWithBuffers(mlir::Operation *op,
                                       mlir::ArrayRef<mlir::Value> buffers);

/// A constant (or, with `constant` false, a mutable) `memref.global` named
/// `sym` (already unique in `module`) at the top of `module`, holding
/// `values` as a flat [n] array of `elt` (translated to LLVM as one raw data
/// array, however large), 64-byte aligned; returns its `memref.get_global`
/// at `b`.
mlir::Value emitFlatGlobal(mlir::ImplicitLocOpBuilder &b, mlir::ModuleOp module,
                           llvm::StringRef sym, mlir::Type elt,
                           mlir::Attribute values, int64_t n,
                           bool constant = true);
/// The same for `values` (a flat [n] dense attribute of `elt`), viewed with
/// `shape` (memref.expand_shape).
mlir::Value emitShapedGlobal(mlir::ImplicitLocOpBuilder &b,
                             mlir::ModuleOp module, llvm::StringRef sym,
                             llvm::ArrayRef<int64_t> shape, mlir::Type elt,
                             mlir::DenseElementsAttr values);
/// The same for f32 `values`.
mlir::Value emitShapedGlobal(mlir::ImplicitLocOpBuilder &b,
                             mlir::ModuleOp module, llvm::StringRef sym,
                             llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<float> values);

/// ONNX's `clip` on a gate's pre-activation: min(max(x, -clip), clip), with
/// constants of x's type (f32, or a vector of f32); x itself without one.
mlir::Value emitClip(mlir::ImplicitLocOpBuilder &b, mlir::Value x,
                     std::optional<float> clip);

/// What a recurrent backend runs exactly, beyond what every backend needs
/// (static shapes, constant weights: describeLayer). The CPU kernels run all
/// of it; a backend that does not (cuDNN, the generated GPU kernels) states
/// its limits here and leaves the layers it cannot run, with the reason
/// whyUnsupported gives, to them (remarkLayerLeftForCPU).
struct BackendCapabilities {
  /// How the refusals name the backend ("cuDNN", "the GPU kernels").
  llvm::StringRef name;
  /// Per-row lengths (`sequence_lens`): the padded steps of short rows are
  /// skipped and their states frozen.
  bool sequenceLens = true;
  /// A reverse-only layer (not half of a bidirectional one).
  bool reverseOnly = true;
  /// ONNX's `clip` of the gate pre-activations.
  bool clip = true;
  /// A GRU with linear_before_reset = 0 (the reset gate applied before the
  /// recurrent GEMM).
  bool gruResetBeforeGemm = true;
  /// Activations other than each cell's defaults (for a simple RNN: tanh or
  /// relu, the same in every direction).
  bool anyActivations = true;
  /// An LSTM's peephole weights and coupled input-forget gate.
  bool lstmVariants = true;
};

/// Why a backend of `caps` cannot run the layer (an rnn.sequence or
/// rnn.stack), or "" when it can.
template <typename OpTy>
std::string whyUnsupported(OpTy op, const BackendCapabilities &caps) {
  std::string name = caps.name.str();
  if (!caps.sequenceLens && op.getSequenceLens())
    return name + " cannot skip the padded steps of short rows "
                  "(sequence_lens)";
  if (!caps.reverseOnly && op.getDirection() == Direction::Reverse)
    return name + " has no reverse-only direction";
  if (!caps.gruResetBeforeGemm && op.getCell() == CellKind::GRU &&
      !op.getLinearBeforeReset())
    return name + "'s GRU applies the reset after the recurrent GEMM "
                  "(linear_before_reset = 1) only";
  if constexpr (!std::is_same_v<OpTy, StackOp>) { // (a stack has neither)
    if (!caps.lstmVariants && op.getPeephole())
      return name + " cannot run a peephole LSTM";
    if (!caps.lstmVariants && op.getInputForget())
      return name + " cannot run an LSTM with coupled input and forget "
                    "gates (input_forget)";
  }
  if (!caps.clip && op.getClipAttr())
    return "ONNX's clip (of the gate pre-activations) has no " + name +
           " equivalent";
  if (!caps.anyActivations)
    if (auto acts = op.getActivationsAttr()) {
      int64_t n = getNumActivations(op.getCell());
      llvm::StringRef first =
          llvm::cast<mlir::StringAttr>(acts[0]).getValue();
      for (auto [i, a] : llvm::enumerate(acts)) {
        std::string act = llvm::cast<mlir::StringAttr>(a).getValue().lower();
        if (op.getCell() == CellKind::RNN) {
          if (act != first.lower() || (act != "tanh" && act != "relu"))
            return name + "'s simple RNN is tanh or relu (the same in both "
                          "directions)";
          continue;
        }
        if (act != (i % n == 0 ? "sigmoid" : "tanh"))
          return name + " runs the default activations only";
      }
    }
  return "";
}

/// A backend that runs only some layers (cuDNN, the generated GPU kernels)
/// refuses the others with this remark on the layer, which then stays for
/// convert-rnn-to-cpu: "<pass>: layer left for the CPU kernels: <why>".
void remarkLayerLeftForCPU(mlir::Operation *layer, llvm::StringRef pass,
                           const llvm::Twine &why);

/// A layer's operands: from an rnn.sequence, or from an rnn.recurrence and
/// the rnn.input_projection that feeds it (the hoisted form).
struct LayerOperands {
  mlir::Value x, w, bw, r, br, h0, c0, lens;
  /// An LSTM's peephole weights [D, 3*H] (i, f, o), or null.
  mlir::Value peephole;
};

/// A layer's constant weights, read from its operands (getConstantF32).
struct LayerConstants {
  onnx::F32Tensor w, r, bw, br;
  std::optional<onnx::F32Tensor> peephole; ///< absent: none
};

/// Reads `in`'s weights, biases and peephole weights; a non-constant one is
/// an error through `fail` ("needs constant f32 weights").
mlir::FailureOr<LayerConstants>
readLayerConstants(const LayerOperands &in,
                   llvm::function_ref<mlir::InFlightDiagnostic(const llvm::Twine &)> fail);

/// Calls `lower` on every layer of `module` (each rnn.sequence, and each
/// rnn.recurrence with its projection's operands), in walk order, stopping
/// at the first failure. A recurrence not fed by an rnn.input_projection is
/// an error prefixed by `pass`.
mlir::LogicalResult
forEachLayer(mlir::ModuleOp module, llvm::StringRef pass,
             llvm::function_ref<mlir::LogicalResult(mlir::Operation *,
                                                    const LayerOperands &)>
                 lower);

/// After a backend lowered the layers: an error, prefixed by `pass`, on the
/// first rnn.stack (`stackMessage` says what to do) or lone cell left.
mlir::LogicalResult checkOnlyLayersLowered(mlir::ModuleOp module,
                                           llvm::StringRef pass,
                                           llvm::StringRef stackMessage);

/// How a backend reports a refusal: an error on the layer op, prefixed
/// with the pass name.
using LayerFailure = llvm::function_ref<mlir::InFlightDiagnostic(const llvm::Twine &)>;

/// `v` (an initial state, or sequence_lens; null passes through) with the
/// static type `shape` x `elt` its layer gives it: a tensor.cast where shape
/// inference left sizes open (states built by Expand over computed shapes).
/// `what` names it in the errors ("the initial state", "sequence_lens").
mlir::FailureOr<mlir::Value> castToLayerType(mlir::ImplicitLocOpBuilder &b,
                                             mlir::Value v,
                                             llvm::ArrayRef<int64_t> shape,
                                             mlir::Type elt,
                                             llvm::StringRef what,
                                             LayerFailure fail);

/// The call of a layer's generated function `fn` in place of `op`: `x`
/// ([T, B, I], passed collapsed to [T*B, I]) and `inputs` (the present
/// initial states and lengths, as they are) as read-only buffers of the
/// tensors, then one 64-byte aligned buffer per result ([T, D, B, H] for
/// the first, [D, B, H] for the final states), which replace the results
/// (replaceWithBuffers). Fails if a result's static type is not the layer's.
mlir::LogicalResult emitLayerCall(mlir::ImplicitLocOpBuilder &b,
                                  mlir::Operation *op, mlir::func::FuncOp fn,
                                  mlir::Value x,
                                  llvm::ArrayRef<mlir::Value> inputs,
                                  const LayerShape &s, LayerFailure fail);

} // namespace lstm_opt::rnn

#endif // LSTM_OPT_DIALECT_RNN_UTILS_CELLLOWERING_H

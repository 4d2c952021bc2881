//===- StepValues.h - the values of one unrolled time step ------*- C++ -*-===//
//
// What the recogniser and the roller share about the values of one step of
// an unrolled recurrence:
//  * a step slice: one time step cut out of a sequence tensor (Gather,
//    Squeeze(Slice), Squeeze(Split), a Reshape dropping the unit axis);
//  * StepNormalizer: rewrites that put a step's values in the
//    [batch, features] form the cell forms read, where an exporter wrote
//    them otherwise, applied tentatively (undone where no cell takes them).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_RNN_UTILS_STEPVALUES_H
#define LSTM_OPT_DIALECT_RNN_UTILS_STEPVALUES_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace lstm_opt::rnn {

/// `value` is slice `index` of `seq` (rank 3) along `axis` (0 or 1, the
/// axis removed); `ops` are the nodes that cut it.
struct StepSlice {
  mlir::Value seq;
  int64_t axis = -1;
  int64_t index = -1;
  llvm::SmallVector<mlir::Operation *, 2> ops;
};

/// The step a Slice keeps of `axis` when it keeps one step of that axis
/// (`[t, t + 1)`, negative starts counted from the end) and every other axis
/// it names whole; none otherwise.
std::optional<int64_t> oneStepOfSlice(onnx::SliceOp sl, int64_t axis);

/// The step slice `v` is, if it is one (through Identity).
std::optional<StepSlice> getStepSlice(mlir::Value v);

/// The single axis of a Squeeze (attribute or constant input),
/// non-negative; none for several axes or none given.
std::optional<int64_t> squeezeAxis(onnx::SqueezeOp sq);

/// The single axis of an Unsqueeze (attribute or constant input),
/// non-negative.
std::optional<int64_t> unsqueezeAxis(onnx::UnsqueezeOp un);

/// Rewrites of the top-level graph of a function, each exact (the same
/// products and sums of the same values) but the last, which give the steps of an
/// unrolled recurrence the form the cell forms match:
///  * a step of an input projection computed for all steps at once,
///    `Squeeze(Slice(MatMul(X, W) + b, t))`, becomes the projection of
///    the step, `MatMul(Squeeze(Slice(X, t)), W) + b` (torch.export's
///    decomposition of nn.RNN hoists the input GEMM itself);
///  * a step computed with a leading unit axis ([1, batch, features], the
///    state as torch.export's decomposition keeps it) is computed without
///    it, the unit axis put back after: `f(Unsqueeze(a), ...)` becomes
///    `Unsqueeze(f(a, ...))` for elementwise ops and a MatMul by a matrix,
///    so that the Unsqueeze moves down the chain of ops;
///  * torch.lerp's Where(w < 0.5, s + w(e - s), e - (e - s)(1 - w)) is its
///    first branch (not exact: the other branch rounds differently);
///  * Clip(L, 0, u) * K, K constant (a hard sigmoid whose 1 / u an exporter
///    moved onto a constant) is (Clip(L, 0, u) * (1 / u)) * (u * K) (exact
///    where K is zero, else a rounding of the constant's product).
/// Each rewrite replaces the uses of one value and keeps the node it
/// replaced until `settle`, which keeps the rewrites that a cell took and
/// undoes the others: a graph without a cell to find is left as it was.
class StepNormalizer {
public:
  StepNormalizer(mlir::func::FuncOp func, onnx::ConstantBuilder &consts)
      : func(func), consts(consts) {}
  /// Applies the rewrites; returns how many were made.
  int64_t apply();
  /// Keeps each rewrite whose marked op is gone (a cell replaced it) and
  /// undoes the others, then erases what became dead. `onErase` is told of
  /// each op just before it is erased.
  void settle(llvm::function_ref<void(mlir::Operation *)> onErase);
  /// Whether `op` is a node a rewrite replaced (dead until settle): cell
  /// matching must not start from it.
  static bool isReplaced(mlir::Operation *op);
  /// Whether a rewrite made `op` (until settle).
  static bool isMade(mlir::Operation *op);
  /// For an op a projection's step became (until settle): the source nodes
  /// and GEMMs it stands for in a fusion report, instead of itself.
  static std::optional<std::pair<int64_t, int64_t>>
  sourceCounts(mlir::Operation *op);

private:
  struct Rewrite {
    mlir::Value orig, repl;
    /// repl's op, and the op whose disappearance says that a cell took the
    /// rewrite (compared, never followed: a cell may have erased them).
    mlir::Operation *replOp, *key;
  };
  bool sliceSequenceAt(mlir::Operation *op);
  bool pushStepIntoProjection(mlir::Operation *op);
  bool sinkUnitAxis(mlir::Operation *op);
  bool readLerp(mlir::Operation *op);
  bool readMovedClipScale(mlir::Operation *op);
  bool sinkUnitAxisOfSplit(onnx::SplitOp split);
  void record(mlir::Value orig, mlir::Value repl, mlir::Operation *key);

  mlir::func::FuncOp func;
  onnx::ConstantBuilder &consts;
  llvm::SmallVector<Rewrite> rewrites;
  /// Every op a rewrite made, in order.
  llvm::SmallVector<mlir::Operation *> created;
  /// The projections a step was pushed into (counted once in reports).
  llvm::DenseSet<mlir::Operation *> projections;
  /// The SequenceAt/SplitToSequence nodes a rewrite read (never erased by
  /// the recogniser: unknown effects); settle erases those left dead.
  llvm::SmallVector<mlir::Operation *> sequenceNodes;
  /// Other onnx.node ops a rewrite replaced or read (a lerp's Where and
  /// Less); settle erases those left dead.
  llvm::SmallVector<mlir::Operation *> genericNodes;
  /// Each graph input [1, ...] squeezed once.
  llvm::DenseMap<mlir::Value, mlir::Value> squeezedInputs;
};

} // namespace lstm_opt::rnn

#endif // LSTM_OPT_DIALECT_RNN_UTILS_STEPVALUES_H

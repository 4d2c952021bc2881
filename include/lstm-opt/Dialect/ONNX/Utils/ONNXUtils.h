//===- ONNXUtils.h - reading and making onnx constants and glue -*- C++ -*-===//
//
// Helpers the passes share: read constant tensors (initializers, Constant
// nodes, arith.constant, through Identity), create new initializers (deduped
// by content), and build the small onnx ops that glue a rewrite in, in the
// form the module's opset needs (Squeeze/Unsqueeze axes are an input from
// opset 13 on, an attribute before).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_ONNX_UTILS_ONNXUTILS_H
#define LSTM_OPT_DIALECT_ONNX_UTILS_ONNXUTILS_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <vector>

namespace lstm_opt::onnx {

// skipIdentities, getConstantAttr and getConstantInts(ElementsAttr) belong
// to the dialect (ONNXShapeRules.h).

/// A constant f32 tensor's shape and values.
struct F32Tensor {
  llvm::SmallVector<int64_t> shape;
  std::vector<float> values;
  int64_t numElements() const { return (int64_t)values.size(); }
};
std::optional<F32Tensor> getConstantF32(mlir::Value v);
std::optional<F32Tensor> getConstantF32(mlir::ElementsAttr attr);

/// Like getConstantF32, but also evaluates the data movement that exporters
/// leave between a weight and its use when they do not fold constants
/// (PyTorch's gate reordering: Unsqueeze(Concat(Slice(W), ...))): Identity,
/// Slice, Concat, Squeeze, Unsqueeze, Reshape, Transpose, and Cast from
/// f16/bf16/f64 to f32. Each of these is exact except f64 -> f32, which
/// rounds to nearest as ONNX's Cast does. At most `maxElements` elements per
/// intermediate tensor and a nesting depth of 32; std::nullopt otherwise.
std::optional<F32Tensor> foldConstantF32(mlir::Value v,
                                         int64_t maxElements = int64_t(1) << 26);

/// `(q - zero_point) * scale` for a constant int8/uint8 tensor `q` (or an
/// int32 one: a quantized bias), as
/// ONNX's DequantizeLinear computes it (one f32 rounding): `scale` (f32) and
/// `zeroPoint` (of q's type; a null or none value is 0) constants with one
/// element, or one per index of `axis` of q. Fails with `why` set otherwise,
/// or past `maxElements`. With `elementScales`, each element's scale too.
llvm::FailureOr<F32Tensor> dequantizeConstant(mlir::Value q, mlir::Value scale,
                                              mlir::Value zeroPoint,
                                              int64_t axis, std::string &why,
                                              int64_t maxElements = int64_t(1)
                                                                    << 26,
                                              std::vector<float> *elementScales =
                                                  nullptr);

/// An integer attribute of a generic node: `dflt` when absent, std::nullopt
/// when present but not an integer.
std::optional<int64_t> getNodeIntAttr(NodeOp node, llvm::StringRef name,
                                      int64_t dflt);

/// The ONNX node an op comes from: the first NameLoc of its location (as
/// the importer sets it), else its first output name, else "<unnamed>".
std::string getNodeName(mlir::Operation *op);

/// The integer values of `v` (i32/i64, flattened) when known at compile
/// time: constants, and the shape arithmetic exporters emit over them
/// (Shape of a static tensor, Gather, integer Add/Sub/Mul/Div, Concat,
/// Squeeze/Unsqueeze, Cast).
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value v);

/// The axes of a Squeeze or Unsqueeze (the input of opset 13 on, or the
/// attribute before), negative ones counted from the end of the rank they
/// refer to; std::nullopt for other ops, axes not known at compile time, or
/// a Squeeze without axes.
std::optional<llvm::SmallVector<int64_t>> getSqueezeAxes(mlir::Operation *op);

/// A dimension of a tensor: `tensor`'s axis `axis`.
struct DimRef {
  mlir::Value tensor;
  int64_t axis;
  bool operator==(const DimRef &o) const {
    return tensor == o.tensor && axis == o.axis;
  }
};

/// The dimension a one-element integer (or integral float) value holds, when
/// it is read from a shape: `Shape(t)` indexed by Gather or a one-element
/// Slice, through Cast (to a 32/64-bit integer or float), Identity,
/// Squeeze, Unsqueeze and Reshape, the tensor then followed back through
/// Transpose (the axis permuted), Identity, Cast and ReverseSequence, which
/// keep its dimensions (canonicalDim). std::nullopt otherwise.
std::optional<DimRef> getDimSource(mlir::Value v);

/// `d` followed back through the ops that keep a tensor's dimensions
/// (Transpose, with the axis permuted; Identity; Cast; ReverseSequence).
DimRef canonicalDim(DimRef d);

/// Whether `v` holds the size of `tensor`'s axis `axis` at run time: the
/// same dimension read from a shape (getDimSource), or a constant equal to
/// the axis's static size.
bool holdsDimSize(mlir::Value v, mlir::Value tensor, int64_t axis);

/// The part sizes of `split` along an axis of size `dim`: from the `split`
/// input (opset 13+, evaluated like getConstantInts), the `split` attribute
/// (before 13), or equal parts (computeSplitSizes, the Split shape rule's).
/// Fails, with `why` set, when the sizes are not constant or break the rule.
llvm::FailureOr<llvm::SmallVector<int64_t>>
getSplitSizes(mlir::Operation *split, int64_t dim, std::string &why);

/// The shape of `v` as far as it is known: its type, refined by the shape
/// rule of the op that computes it, whose operands are refined the same way
/// (up to 8 ops up) and whose integer operands are evaluated like
/// getConstantInts. For values the importer's shape inference left unknown.
mlir::ShapedTypeComponents inferShape(mlir::Value v);
/// Fills in the types of `func`'s top-level ops from their shape rules, in
/// block order so that what one op learns its users see: a result whose
/// declared type is less precise than the rule's (an unknown rank or
/// dimension) gets the rule's, where every user is an onnx op (a graph
/// output keeps its declared type, and so does a value a subgraph or
/// another dialect reads; what is inferred for it still flows on). Integer
/// operands are evaluated like getConstantInts. Returns the number of
/// results refined.
/// With `graphOutputs`, the graph outputs are refined as well and the
/// function's type follows its return.
int64_t refineShapes(mlir::func::FuncOp func, bool graphOutputs = false);

/// The last dimension / rank of inferShape(v); kDynamic / -1 if unknown.
int64_t inferLastDim(mlir::Value v);
int64_t inferRank(mlir::Value v);

/// Creates initializers in a function, reusing one per distinct content, so
/// that T steps that share weights share one value.
class ConstantBuilder {
public:
  explicit ConstantBuilder(mlir::func::FuncOp func);
  mlir::Value getF32(mlir::Location loc, llvm::StringRef name,
                     llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<float> values);
  mlir::Value getI64(mlir::Location loc, llvm::StringRef name,
                     llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> values);
  /// An integer constant of any width (bool included): `values` truncated
  /// to the element type.
  mlir::Value getInts(mlir::Location loc, llvm::StringRef name,
                      mlir::RankedTensorType type,
                      llvm::ArrayRef<int64_t> values);
  /// Drops `op` from the reuse cache; call it before erasing an initializer
  /// this builder may have handed out (eraseDeadOps' onErase), or a later
  /// request for the same content would get the erased value.
  void forget(mlir::Operation *op);
  /// An onErase callback for eraseDeadOps that forgets each erased op.
  auto forgetter() {
    return [this](mlir::Operation *op) { forget(op); };
  }

private:
  mlir::Value create(mlir::Location loc, llvm::StringRef name,
                     mlir::RankedTensorType type, llvm::ArrayRef<char> bytes,
                     mlir::ElementsAttr given = {});
  mlir::func::FuncOp func;
  llvm::StringSet<> names;
  std::map<std::pair<std::string, std::string>, mlir::Value> byContent;
  llvm::DenseMap<mlir::Operation *, std::pair<std::string, std::string>> keyOf;
};

/// Glue ops. `axes` are non-negative.
mlir::Value createSqueeze(mlir::OpBuilder &b, mlir::Location loc,
                          ConstantBuilder &consts, mlir::Value v,
                          llvm::ArrayRef<int64_t> axes);
mlir::Value createUnsqueeze(mlir::OpBuilder &b, mlir::Location loc,
                            ConstantBuilder &consts, mlir::Value v,
                            llvm::ArrayRef<int64_t> axes);
mlir::Value createTranspose(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value v, llvm::ArrayRef<int64_t> perm);
/// Gather of index `index` along `axis` (removes that axis).
mlir::Value createGatherIndex(mlir::OpBuilder &b, mlir::Location loc,
                              ConstantBuilder &consts, mlir::Value v,
                              int64_t axis, int64_t index);
/// Slice [start, end) along `axis`.
mlir::Value createSliceAxis(mlir::OpBuilder &b, mlir::Location loc,
                            ConstantBuilder &consts, mlir::Value v,
                            int64_t axis, int64_t start, int64_t end);

/// Erases those of `ops` that have no users and no memory effects, then,
/// transitively, the producers of their operands that became dead. Ops of
/// unknown semantics (onnx.node) and graph-input initializers stay, unless
/// `alsoErase` says an op may go when dead anyway (a caller that knows the
/// node is a function of its inputs). `onErase` is told of each op just
/// before it is erased.
void eraseDeadOps(llvm::ArrayRef<mlir::Operation *> ops,
                  llvm::function_ref<void(mlir::Operation *)> onErase = {},
                  llvm::function_ref<bool(mlir::Operation *)> alsoErase = {});

/// Makes `v` available before `point` (in the same block): moves the pure
/// ops that compute it there, if everything they read already is (at most
/// 16 ops deep). False, with nothing moved, otherwise.
bool hoistBefore(mlir::Value v, mlir::Operation *point);

/// Marks `op` as lstm-opt's output name for result `i` (keeps exported names
/// readable).
void setOutputName(mlir::Operation *op, unsigned i, llvm::StringRef name);

/// Limits on unrolling one Loop/Scan: iterations, and ops copied in all.
struct UnrollLimits {
  int64_t maxTrips = 4096;
  int64_t maxOps = 200000;
};

/// Replaces each recurrent ONNX Loop/Scan at the top level of `func` whose
/// iteration count is known at compile time by its unrolled iterations (see
/// UnrollLoops.cpp); others get a remark naming the node and the reason.
/// Returns the number unrolled.
/// Loops whose ordinal (place among the graph's top-level Loop/Scan nodes)
/// is in `skip` are left alone, with a remark that their steps do not fuse.
/// Every copied op is marked with its loop's ordinal and its iteration (a
/// metadata_props entry `lstm_opt.unrolled`, so that the mark survives an
/// export and import); stripUnrolledMarks removes the marks. Ordinals start
/// at `ordinalBase` (a later round over the same graph continues the
/// numbering, so that marks stay unique).
int unrollRecurrentLoops(mlir::func::FuncOp func,
                         const UnrollLimits &limits = {},
                         llvm::ArrayRef<int64_t> skip = {},
                         int64_t ordinalBase = 0);

/// Replaces a top-level Loop/Scan node's results by `values`, each given
/// the join of its type and the result's (so a graph output keeps its
/// declared static size); the function's result types follow. Fails,
/// changing nothing, where two types contradict each other.
mlir::LogicalResult replaceLoopResults(mlir::Operation *loop,
                                       llvm::ArrayRef<mlir::Value> values);

/// The number of top-level Loop/Scan nodes of the graph.
int64_t countLoopNodes(mlir::func::FuncOp func);

/// Whether the graph has a top-level Loop or Scan node.
bool hasLoopNodes(mlir::func::FuncOp func);

/// The ordinals of unrolled loops whose copies still carry the recurrence
/// from one iteration to the next (after the pipeline: the steps did not
/// fuse into a layer).
llvm::SmallVector<int64_t> unfusedUnrolledLoops(mlir::func::FuncOp func);

/// Removes the marks unrollRecurrentLoops put on the copies.
void stripUnrolledMarks(mlir::func::FuncOp func);

/// Removes the discardable `onnx.*` attributes of `op` (the importer's
/// provenance: node names, the module's opset and producer, ...).
void stripONNXAttrs(mlir::Operation *op);

} // namespace lstm_opt::onnx

#endif // LSTM_OPT_DIALECT_ONNX_UTILS_ONNXUTILS_H

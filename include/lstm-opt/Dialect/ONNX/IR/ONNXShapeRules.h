//===- ONNXShapeRules.h - the shape rule of each onnx op --------*- C++ -*-===//
//
// Every typed op of the `onnx` dialect states its ONNX shape rule once, as a
// static `inferShapes(ShapeQuery &, Adaptor, results)`: it checks what the
// operator requires of its operands' shapes and computes the shapes and
// element types of its results, from whatever is known (a dimension or a
// rank may be unknown; integer operands such as Reshape's `shape` are read
// through the query). Three ways in, one rule:
//
//  * the verifier (`verifyShapeRule`, run by `ShapeRuleOpInterface`)
//    rejects an op whose declared result types contradict the rule;
//  * `InferShapedTypeOpInterface::inferReturnTypeComponents`, for generic
//    MLIR code (constants come from the ValueShapeRange's value-to-shape
//    mapping, refined operand shapes from its operand mapping);
//  * `inferResultShapes(op, query, ...)` for the dialect's own passes: the
//    recogniser's shape inference (`onnx::inferShape`, operands refined
//    recursively, shape arithmetic evaluated) and convert-onnx-to-linalg
//    (static operand types: the result types of the lowered ops).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_ONNX_IR_ONNXSHAPERULES_H
#define LSTM_OPT_DIALECT_ONNX_IR_ONNXSHAPERULES_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace lstm_opt::onnx {

using Dims = llvm::SmallVector<int64_t>;

/// What a shape rule may know about its operands, and why it refused them.
/// By default an operand's shape is its type and an integer operand is known
/// when it is a constant (an initializer, onnx.Constant or arith.constant,
/// through Identity); a caller that knows more passes functions that refine
/// both.
class ShapeQuery {
public:
  /// The shape of a value (unranked components: unknown rank).
  using ShapeFn = llvm::function_ref<mlir::ShapedTypeComponents(mlir::Value)>;
  /// The flattened integer values of a value, if known.
  using IntsFn = llvm::function_ref<std::optional<Dims>(mlir::Value)>;

  ShapeQuery() = default;
  ShapeQuery(ShapeFn shapeFn, IntsFn intsFn)
      : shapeFn(shapeFn), intsFn(intsFn) {}

  /// The dimensions of `v` when its rank is known.
  std::optional<Dims> dims(mlir::Value v) const;
  /// The rank of `v`, if known.
  std::optional<int64_t> rank(mlir::Value v) const;
  /// The element type of `v`, or null.
  mlir::Type elementType(mlir::Value v) const;
  /// The integer values of `v` (i32/i64/bool, flattened), when known and
  /// at most kMaxInts of them.
  std::optional<Dims> ints(mlir::Value v) const;
  static constexpr int64_t kMaxInts = int64_t(1) << 16;

  /// Records why the operands break the operator's rule; returns failure.
  mlir::LogicalResult fail(const llvm::Twine &why) {
    reason = why.str();
    return mlir::failure();
  }
  const std::string &getReason() const { return reason; }

  /// The number of results of the op the rule runs for, where the caller
  /// knows it (an op with variadic results, such as Split, needs it).
  std::optional<unsigned> getNumResults() const { return numResults; }
  void setNumResults(unsigned n) { numResults = n; }

private:
  std::optional<unsigned> numResults;
  ShapeFn shapeFn;
  IntsFn intsFn;
  std::string reason;
};

/// A rule gives a result of a higher rank an unknown rank instead: no real
/// tensor has that many dimensions, and a hostile model (a Reshape whose
/// target is a list of a million entries, built by a few Concats) would
/// otherwise make types of millions of dimensions.
inline constexpr int64_t kMaxInferredRank = 1024;

/// Runs the shape rule of `op` (an op with ShapeRuleOpInterface) with what
/// `query` knows. Fails, with the query's reason set, when the operands break
/// the rule, or when `op` has no rule.
mlir::LogicalResult
inferResultShapes(mlir::Operation *op, ShapeQuery &query,
                  llvm::SmallVectorImpl<mlir::ShapedTypeComponents> &shapes);

namespace detail {
/// Runs `rule` with a query over a ValueShapeRange: operand shapes from its
/// operand mapping, integer operands from its value-to-shape mapping (or the
/// constants); a refusal is reported at `location`.
mlir::LogicalResult
inferWithValueShapeRange(mlir::ValueShapeRange operands,
                         std::optional<mlir::Location> location,
                         llvm::function_ref<mlir::LogicalResult(ShapeQuery &)> rule);
} // namespace detail

/// InferShapedTypeOpInterface::inferReturnTypeComponents of every onnx op:
/// its shape rule over a ValueShapeRange.
template <typename AdaptorT>
mlir::LogicalResult inferWithRule(
    mlir::LogicalResult (*rule)(ShapeQuery &, AdaptorT,
                                llvm::SmallVectorImpl<mlir::ShapedTypeComponents> &),
    std::optional<mlir::Location> location, mlir::ValueShapeRange operands,
    mlir::DictionaryAttr attributes, mlir::OpaqueProperties properties,
    mlir::RegionRange regions,
    llvm::SmallVectorImpl<mlir::ShapedTypeComponents> &shapes) {
  return detail::inferWithValueShapeRange(
      operands, location, [&](ShapeQuery &query) {
        return rule(query,
                    AdaptorT(operands.getValues(), attributes, properties,
                             regions),
                    shapes);
      });
}

/// The verifier of ShapeRuleOpInterface: runs the rule over the operands'
/// types and constants and checks each declared result type against it.
mlir::LogicalResult verifyShapeRule(mlir::Operation *op);

/// `declared` with every unknown dimension (or an unknown rank) that
/// `inferred` knows filled in (an !onnx.unknown becomes a tensor once the
/// element type is known); null when the two contradict each other.
mlir::Type refineType(mlir::Type declared,
                      const mlir::ShapedTypeComponents &inferred);

/// The rules of the two elementwise families (traits ElementwiseUnary and
/// ElementwiseBroadcast): X's shape; the numpy broadcast of A and B.
mlir::LogicalResult
inferElementwiseUnary(ShapeQuery &query, mlir::Value x,
                      llvm::SmallVectorImpl<mlir::ShapedTypeComponents> &shapes);
mlir::LogicalResult
inferElementwiseBroadcast(ShapeQuery &query, mlir::Value a, mlir::Value b,
                          llvm::SmallVectorImpl<mlir::ShapedTypeComponents> &shapes);

//===----------------------------------------------------------------------===//
// Pieces of the rules that lowerings and folders use too
//===----------------------------------------------------------------------===//

/// Normalises an axis in [-rank, rank) to [0, rank).
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// The numpy broadcast of `shapes` (kDynamic: unknown), or failure when two
/// static dimensions differ and neither is 1.
llvm::FailureOr<Dims> broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// The elements an ONNX Slice takes from a tensor of shape `in`, per axis:
/// the first index, the step and the count, after ONNX's clamping. An axis of
/// unknown size that is sliced gets an unknown count.
struct SliceWindow {
  Dims first, step, size;
};
/// `axes` empty: 0, 1, ...; `steps` empty: all 1. Fails with `why` set when
/// the lists differ in length, an axis is out of range or repeated, or a
/// step is 0.
llvm::FailureOr<SliceWindow>
computeSliceWindow(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> starts,
                   llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
                   llvm::ArrayRef<int64_t> steps, std::string &why);

/// The part sizes of a Split of a dimension of size `dim` (kDynamic:
/// unknown) into `numResults` parts: the explicit `sizes` (from the `split`
/// input or attribute; std::nullopt: none given), or equal parts (opset 18's
/// `num_outputs`: ceil(dim / n) each, the last one smaller). Fails with `why`
/// set when the sizes are negative, do not add up to `dim` or do not match
/// the number of results, or equal parts of an unknown `dim` are asked for.
llvm::FailureOr<Dims> computeSplitSizes(std::optional<llvm::ArrayRef<int64_t>> sizes,
                                        int64_t numResults, bool hasNumOutputs,
                                        int64_t dim, std::string &why);

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// Follows onnx.Identity chains to the value that defines `v`'s data.
mlir::Value skipIdentities(mlir::Value v);

/// The constant attribute behind `v` (onnx.initializer, onnx.Constant with
/// `value`, arith.constant; through Identity), or null.
mlir::ElementsAttr getConstantAttr(mlir::Value v);

/// The integer values of a constant (i32/i64/bool, flattened).
std::optional<Dims> getConstantInts(mlir::ElementsAttr attr);

/// The integer values a constant states: onnx.Constant's value_int or
/// value_ints, or an i32/i64/bool constant attribute (getConstantAttr) of
/// at most `maxElements` elements; through Identity. std::nullopt for
/// anything computed (onnx::getConstantInts evaluates that).
std::optional<Dims>
getLiteralInts(mlir::Value v,
               int64_t maxElements = std::numeric_limits<int64_t>::max());

/// The raw little-endian bytes of an attribute of `numElements` elements of
/// `elemBytes` each, a splat expanded; std::nullopt for bools or a size that
/// does not match.
std::optional<std::vector<char>> getRawBytes(mlir::ElementsAttr attr,
                                             size_t elemBytes);

} // namespace lstm_opt::onnx

#endif // LSTM_OPT_DIALECT_ONNX_IR_ONNXSHAPERULES_H

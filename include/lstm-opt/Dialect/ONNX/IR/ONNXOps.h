//===- ONNXOps.h - onnx dialect ops and types -------------------*- C++ -*-===//

#ifndef LSTM_OPT_DIALECT_ONNX_IR_ONNXOPS_H
#define LSTM_OPT_DIALECT_ONNX_IR_ONNXOPS_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXDialect.h"
#include "lstm-opt/Dialect/ONNX/IR/ONNXShapeRules.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "lstm-opt/Dialect/ONNX/IR/ONNXAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "lstm-opt/Dialect/ONNX/IR/ONNXTypes.h.inc"

namespace lstm_opt::onnx::traits {
namespace impl {
mlir::LogicalResult verifyElementwiseUnary(mlir::Operation *op);
mlir::LogicalResult verifyElementwiseBroadcast(mlir::Operation *op);
} // namespace impl

/// An op computed element by element over its one input: the result has the
/// input's shape and element type (Neg, Sigmoid, Tanh, Relu, HardSigmoid).
template <typename ConcreteType>
class ElementwiseUnary
    : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseUnary> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return impl::verifyElementwiseUnary(op);
  }
};

/// An op computed element by element after numpy broadcasting of its two
/// inputs (Add, Sub, Mul, Div): one element type, broadcast-compatible
/// static dimensions, the result of the broadcast shape.
template <typename ConcreteType>
class ElementwiseBroadcast
    : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseBroadcast> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return impl::verifyElementwiseBroadcast(op);
  }
};
} // namespace lstm_opt::onnx::traits

#include "lstm-opt/Dialect/ONNX/IR/ONNXInterfaces.h.inc"

#define GET_OP_CLASSES
#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h.inc"

namespace lstm_opt::onnx {
/// True for the ops of both elementwise families: their result has the
/// (broadcast) shape of their operands.
inline bool isElementwise(mlir::Operation *op) {
  return op->hasTrait<traits::ElementwiseUnary>() ||
         op->hasTrait<traits::ElementwiseBroadcast>();
}
} // namespace lstm_opt::onnx

namespace lstm_opt::onnx {

/// Names of the discardable attributes the importer attaches and the
/// exporter reads. They never clash with ONNX attribute names (no dot there).
namespace attrs {
/// On a func.func argument or result: the ONNX graph input/output name.
inline constexpr llvm::StringLiteral kName = "onnx.name";
/// On a func.func argument or result: symbolic dimension names ("" = none).
inline constexpr llvm::StringLiteral kDimParams = "onnx.dim_params";
/// On a func.func argument or result: the ValueInfoProto doc string.
inline constexpr llvm::StringLiteral kDocString = "onnx.doc_string";
/// On an op: the ONNX names of its outputs.
inline constexpr llvm::StringLiteral kOutputNames = "onnx.names";
/// On a func.func: the ONNX graph name.
inline constexpr llvm::StringLiteral kGraphName = "onnx.graph_name";
/// On the module: model-level fields. opset_import is a list of
/// #onnx.opset<domain, version>; metadata_props a list of [key, value].
inline constexpr llvm::StringLiteral kIrVersion = "onnx.ir_version";
inline constexpr llvm::StringLiteral kOpsetImport = "onnx.opset_import";
inline constexpr llvm::StringLiteral kProducerName = "onnx.producer_name";
inline constexpr llvm::StringLiteral kProducerVersion = "onnx.producer_version";
inline constexpr llvm::StringLiteral kModelDomain = "onnx.domain";
inline constexpr llvm::StringLiteral kModelVersion = "onnx.model_version";
inline constexpr llvm::StringLiteral kMetadataProps = "onnx.metadata_props";
/// Model functions, training info etc. kept as serialized protos.
inline constexpr llvm::StringLiteral kOpaqueModelFields = "onnx.opaque_model_fields";
/// On an op, a func.func argument or result: the NodeProto's or
/// ValueInfoProto's metadata_props (IR 10+), a list of [key, value].
inline constexpr llvm::StringLiteral kProps = "onnx.metadata";
/// On an op: value_info entries of its results, {result name: [[key, value],
/// ...]}; on an onnx.initializer: its value_info entry's metadata_props (the
/// initializer had a value_info entry).
inline constexpr llvm::StringLiteral kValueInfo = "onnx.value_info";
/// On an initializer: the type its value_info entry declares, where that
/// differs from the tensor's own type (kept for a lossless round trip).
inline constexpr llvm::StringLiteral kValueInfoType = "onnx.value_info_type";
/// On an onnx.yield: the types its subgraph's outputs declare (a TypeAttr,
/// or a UnitAttr where none is declared), and their dimension names (a list
/// of strings each), kept for a lossless round trip where the values' own
/// types are more precise.
inline constexpr llvm::StringLiteral kOutputTypes = "onnx.output_types";
inline constexpr llvm::StringLiteral kOutputDimParams = "onnx.output_dim_params";
/// On a subgraph's onnx.yield: its inputs' declarations beyond their names
/// (dimension names, doc strings, metadata; one dictionary per input, as a
/// graph input's argument attributes), kept for a lossless round trip.
inline constexpr llvm::StringLiteral kInputAttrs = "onnx.input_attrs";
/// On the module: the file the model was read from (for messages).
inline constexpr llvm::StringLiteral kSourceFile = "onnx.source_file";
} // namespace attrs

/// Returns the ONNX operator type of an op of this dialect ("Gemm" for
/// onnx.Gemm, the `op_type` of onnx.node), or "" for structural ops.
llvm::StringRef getOnnxOpType(mlir::Operation *op);

/// Maps an ONNX TensorProto data type number to the MLIR element type the
/// dialect uses (FLOAT -> f32, INT8 -> i8, UINT8 -> ui8, BOOL -> i1,
/// STRING -> !onnx.string, ...). Returns null for unknown numbers.
mlir::Type getElementTypeForOnnxDataType(mlir::MLIRContext *ctx, int64_t dataType);

/// The inverse of getElementTypeForOnnxDataType; 0 (UNDEFINED) if none.
int64_t getOnnxDataTypeForElementType(mlir::Type type);

/// Returns the default-domain opset the module imports (0 if none).
int64_t getDefaultOpset(mlir::Operation *op);

} // namespace lstm_opt::onnx

#endif // LSTM_OPT_DIALECT_ONNX_IR_ONNXOPS_H

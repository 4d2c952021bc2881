//===- ONNXOps.td - onnx dialect operations ----------------*- tablegen -*-===//
//
// Typed mirrors of the ONNX operators that recurrent models are built from,
// plus the structural ops of the dialect. Attribute names and kinds are the
// ONNX ones: INT -> ONNX_IntAttr, FLOAT -> F32Attr, STRING -> StrAttr,
// INTS -> DenseI64ArrayAttr, FLOATS -> DenseF32ArrayAttr,
// STRINGS -> StrArrayAttr, TENSOR -> ElementsAttr. Attributes are kept
// exactly as the model states them: an absent attribute stays absent (the
// accessors return the ONNX default), so a model round-trips unchanged.
//
// Where the operator changed between opsets (Split, Slice, Squeeze, Clip,
// ...), the op holds the union of both forms; the verifier accepts exactly
// one of them.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_ONNX_IR_ONNXOPS_TD
#define LSTM_OPT_DIALECT_ONNX_IR_ONNXOPS_TD

include "lstm-opt/Dialect/ONNX/IR/ONNXBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Shape rules
//===----------------------------------------------------------------------===//

def ONNX_ShapeRuleOpInterface : OpInterface<"ShapeRuleOpInterface"> {
  let cppNamespace = "::lstm_opt::onnx";
  let description = [{
    An op that states its ONNX shape rule (ONNXShapeRules.h): what it requires
    of its operands' shapes and the shapes and element types of its results.
    The verifier checks the declared result types against the rule; the
    recogniser's shape inference and convert-onnx-to-linalg ask the rule
    instead of computing shapes themselves.
  }];
  let methods = [
    InterfaceMethod<[{
        Runs the rule with what `query` knows of the operands; one entry per
        result (unranked where the rank is unknown). Fails, with the query's
        reason set, when the operands break the rule.
      }],
      "::llvm::LogicalResult", "inferResultShapes",
      (ins "::lstm_opt::onnx::ShapeQuery &":$query,
           "::llvm::SmallVectorImpl<::mlir::ShapedTypeComponents> &":$shapes),
      [{}], [{
        query.setNumResults($_op->getNumResults());
        return ConcreteOp::inferShapes(query, typename ConcreteOp::Adaptor($_op),
                                       shapes);
      }]>
  ];
  // After the op's own verifier, which checks the op's structure first.
  let verifyWithRegions = 1;
  let verify = [{ return ::lstm_opt::onnx::verifyShapeRule($_op); }];
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// An op mirroring one ONNX operator of the default domain. `onnxIns` lists
// the ONNX inputs in order (optional ones as ONNX_TensorOrNone), `onnxAttrs`
// the ONNX attributes. The importer pads omitted trailing inputs with `none`
// up to `kNumOnnxInputs`; `kVariadicOnnxInputs`/`kVariadicOnnxOutputs` mark
// operators whose input/output count is free.
//
// Each states its shape rule (ONNXShapeRules.cpp) as `inferShapes`, which
// the verifier, InferShapedTypeOpInterface and the passes share.
class ONNX_Op<string mnemonic, dag ins, dag attrs, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic,
         !listconcat([Pure, InferShapedTypeOpInterface,
                      ONNX_ShapeRuleOpInterface], traits)> {
  let arguments = !con(ins, attrs);
  bit variadicIns = 0;
  bit variadicOuts = 0;
  code extraOpDecl = "";
  let extraClassDeclaration = [{
    static constexpr int kNumOnnxInputs = }] # !size(ins) # [{;
    static constexpr int kNumOnnxOutputs = }] # !size(results) # [{;
    static constexpr bool kVariadicOnnxInputs = }] # !if(variadicIns, "true", "false") # [{;
    static constexpr bool kVariadicOnnxOutputs = }] # !if(variadicOuts, "true", "false") # [{;

    /// The ONNX shape rule of this operator (ONNXShapeRules.cpp).
    static ::llvm::LogicalResult inferShapes(
        ::lstm_opt::onnx::ShapeQuery &query, Adaptor op,
        ::llvm::SmallVectorImpl<::mlir::ShapedTypeComponents> &shapes);
    static ::llvm::LogicalResult inferReturnTypeComponents(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> location,
        ::mlir::ValueShapeRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::ShapedTypeComponents> &shapes) {
      return ::lstm_opt::onnx::inferWithRule<Adaptor>(
          &inferShapes, location, operands, attributes, properties, regions,
          shapes);
    }
  }] # extraOpDecl;
  let assemblyFormat = "`(` operands `)` attr-dict `:` functional-type(operands, results)";
}

// The shape rules that whole families of ops share, stated once as traits
// (lstm-opt/Dialect/ONNX/IR/ONNXOps.h): their verifiers check them, and the
// shape inference of the recogniser and the linalg lowering dispatch on them.
// A unary op computed element by element: Y has X's shape and element type.
def ONNX_ElementwiseUnary : NativeOpTrait<"ElementwiseUnary"> {
  let cppNamespace = "::lstm_opt::onnx::traits";
}
// A binary op computed element by element after numpy broadcasting: A and B
// broadcast-compatible, C of their broadcast shape, one element type.
def ONNX_ElementwiseBroadcast : NativeOpTrait<"ElementwiseBroadcast"> {
  let cppNamespace = "::lstm_opt::onnx::traits";
}

class ONNX_UnaryOp<string mnemonic, string desc, dag attrs = (ins),
                   list<Trait> traits = []>
    : ONNX_Op<mnemonic, (ins ONNX_Tensor:$X), attrs,
              !listconcat([ONNX_ElementwiseUnary], traits)> {
  let summary = "ONNX " # mnemonic;
  let description = desc;
  let results = (outs ONNX_Tensor:$Y);
}

class ONNX_BinaryOp<string mnemonic, string desc>
    : ONNX_Op<mnemonic, (ins ONNX_Tensor:$A, ONNX_Tensor:$B), (ins),
              [ONNX_ElementwiseBroadcast]> {
  let summary = "ONNX " # mnemonic # " (numpy broadcasting)";
  let description = desc # [{

    Both operands broadcast numpy-style; the verifier checks that static
    dimensions are compatible and that the element types agree.

    ```mlir
    %c = onnx.}] # mnemonic # [{(%a, %b) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
    ```
  }];
  let results = (outs ONNX_Tensor:$C);
}

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

def ONNX_NoneOp : Op<ONNX_Dialect, "none", [Pure, ConstantLike]> {
  let summary = "an omitted optional input";
  let description = [{
    Produces the `none` value that stands for an optional ONNX input or output
    the node omits (an empty name in the ONNX file).

    ```mlir
    %none = onnx.none
    %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, ...) : ...
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
  let builders = [OpBuilder<(ins), [{
    build($_builder, $_state, $_builder.getNoneType());
  }]>];
  let hasFolder = 1;
}

def ONNX_InitializerOp : Op<ONNX_Dialect, "initializer", [
    AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "an ONNX graph initializer";
  let description = [{
    A named constant of the graph. The importer stores the tensor as a dense
    resource attribute that owns the bytes read from the model (no copy); the
    exporter writes it back as an initializer under the same name. With
    `graph_input`, the initializer is also listed among the graph inputs (a
    default value a runtime may override; IR version < 4 style); such an
    initializer is part of the graph's interface and is never removed as
    dead code (it reports a write effect), a plain one is pure.

    ```mlir
    %w = onnx.initializer "W" dense_resource<W> : tensor<128x32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value, UnitAttr:$graph_input);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$name (`graph_input` $graph_input^)? $value attr-dict";
  let hasVerifier = 1;
}

def ONNX_NodeOp : Op<ONNX_Dialect, "node", [
    RegionKindInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "any ONNX operator, kept generically";
  let description = [{
    Every ONNX node without a typed op (any domain, any opset) is imported as
    `onnx.node`: its operator type, domain, attributes (converted to MLIR
    attributes of the matching kind, in `attrs`) and subgraphs. A graph-valued
    attribute becomes a region; `graph_attrs` names the attribute each region
    came from. A region's block arguments are the subgraph inputs and its
    `onnx.yield` returns the subgraph outputs; values of enclosing graphs are
    referenced directly, as ONNX scoping allows.

    Nothing about the node's semantics is assumed: it has unknown memory
    effects, so generic transformations never remove or move it.

    ```mlir
    %y = onnx.node "LayerNormalization"(%x, %s, %b) {domain = "", attrs = {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<ONNX_ValueOrNone>:$inputs, StrAttr:$op_type,
                       DefaultValuedStrAttr<StrAttr, "">:$domain,
                       OptionalAttr<DictionaryAttr>:$attrs,
                       OptionalAttr<StrArrayAttr>:$graph_attrs);
  let results = (outs Variadic<ONNX_ValueOrNone>:$outputs);
  let regions = (region VariadicRegion<SizedRegion<1>>:$graphs);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` (`graphs` $graphs^)? attr-dict `:`
    functional-type($inputs, results)
  }];
  let extraClassDeclaration = [{
    static ::mlir::RegionKind getRegionKind(unsigned) {
      return ::mlir::RegionKind::Graph;
    }
  }];
  let hasVerifier = 1;
}

def ONNX_YieldOp : Op<ONNX_Dialect, "yield", [Pure, Terminator, ReturnLike,
                                              HasParent<"NodeOp">]> {
  let summary = "the outputs of an ONNX subgraph";
  let description = [{
    Terminates a subgraph region of `onnx.node`. Its operands are the subgraph
    outputs; it also records the subgraph's name and the ONNX names of its
    inputs (the region's block arguments) and outputs.

    ```mlir
    onnx.yield %cond, %v {name = "body", input_names = ["i", "c"], output_names = ["c_out", "v_out"]} : tensor<i1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<ONNX_AnyValue>:$values,
                       DefaultValuedStrAttr<StrAttr, "">:$name,
                       StrArrayAttr:$input_names, StrArrayAttr:$output_names);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def ONNX_GemmOp : ONNX_Op<"Gemm",
    (ins ONNX_Tensor:$A, ONNX_Tensor:$B, ONNX_TensorOrNone:$C),
    (ins DefaultValuedOptionalAttr<F32Attr, "1.0f">:$alpha,
         DefaultValuedOptionalAttr<F32Attr, "1.0f">:$beta,
         DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$transA,
         DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$transB)> {
  let summary = "ONNX Gemm: Y = alpha * A' * B' + beta * C";
  let description = [{
    General matrix multiply on rank-2 operands, `A'`/`B'` transposed when
    `transA`/`transB` is 1; `C` (optional) broadcasts to [M, N].

    ```mlir
    %y = onnx.Gemm(%x, %w, %b) {transB = 1 : i64} : (tensor<1x32xf32>, tensor<128x32xf32>, tensor<128xf32>) -> tensor<1x128xf32>
    ```
  }];
  let results = (outs ONNX_Tensor:$Y);
  let hasVerifier = 1;
}

def ONNX_MatMulOp : ONNX_Op<"MatMul", (ins ONNX_Tensor:$A, ONNX_Tensor:$B), (ins)> {
  let summary = "ONNX MatMul (numpy matmul semantics)";
  let description = [{
    ```mlir
    %y = onnx.MatMul(%x, %w) : (tensor<1x32xf32>, tensor<32x128xf32>) -> tensor<1x128xf32>
    ```
  }];
  let results = (outs ONNX_Tensor:$Y);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def ONNX_AddOp : ONNX_BinaryOp<"Add", "Elementwise sum.">;
def ONNX_SubOp : ONNX_BinaryOp<"Sub", "Elementwise difference.">;
def ONNX_MulOp : ONNX_BinaryOp<"Mul", "Elementwise product.">;
def ONNX_DivOp : ONNX_BinaryOp<"Div", "Elementwise quotient.">;

def ONNX_NegOp : ONNX_UnaryOp<"Neg", "Y = -X.">;
def ONNX_SigmoidOp : ONNX_UnaryOp<"Sigmoid", "Y = 1 / (1 + exp(-X)).">;
def ONNX_TanhOp : ONNX_UnaryOp<"Tanh", "Y = tanh(X).">;
def ONNX_ReluOp : ONNX_UnaryOp<"Relu", "Y = max(0, X).">;
def ONNX_HardSigmoidOp : ONNX_UnaryOp<"HardSigmoid",
    "Y = max(0, min(1, alpha * X + beta)).",
    (ins DefaultValuedOptionalAttr<F32Attr, "0.2f">:$alpha,
         DefaultValuedOptionalAttr<F32Attr, "0.5f">:$beta)>;

def ONNX_ClipOp : ONNX_Op<"Clip",
    (ins ONNX_Tensor:$input, ONNX_TensorOrNone:$min, ONNX_TensorOrNone:$max),
    (ins OptionalAttr<F32Attr>:$min_attr, OptionalAttr<F32Attr>:$max_attr)> {
  let summary = "ONNX Clip: min(max(input, min), max)";
  let description = [{
    Opset 11+ passes the bounds as optional scalar inputs; opset 6 as the
    attributes `min`/`max`, held here as `min_attr`/`max_attr` (the importer
    and exporter rename them).
  }];
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_IdentityOp : ONNX_Op<"Identity", (ins ONNX_AnyValue:$input), (ins)> {
  let summary = "ONNX Identity";
  let description = [{
    Returns its input (tensor, sequence or optional). Input and output types
    may differ in what they state (a graph output may declare a symbolic dim
    the input has static, or a type the input's producer leaves unknown);
    known element types must agree.
  }];
  let results = (outs ONNX_AnyValue:$output);
  let hasVerifier = 1;
}

def ONNX_CastOp : ONNX_Op<"Cast", (ins ONNX_Tensor:$input),
    (ins ONNX_IntAttr:$to, OptionalAttr<ONNX_IntAttr>:$saturate)> {
  let summary = "ONNX Cast";
  let description = [{ `to` is an ONNX TensorProto data type number. }];
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_SoftmaxOp : ONNX_Op<"Softmax", (ins ONNX_Tensor:$input),
    (ins OptionalAttr<ONNX_IntAttr>:$axis)> {
  let summary = "ONNX Softmax";
  let hasVerifier = 1;
  let description = [{
    When `axis` is absent its default depends on the opset: 1 (coerced to 2-D)
    before opset 13, -1 from opset 13 on. The attribute is kept as written.
  }];
  let results = (outs ONNX_Tensor:$output);
}

def ONNX_LogSoftmaxOp : ONNX_Op<"LogSoftmax", (ins ONNX_Tensor:$input),
    (ins OptionalAttr<ONNX_IntAttr>:$axis)> {
  let summary = "ONNX LogSoftmax";
  let hasVerifier = 1;
  let description = [{ Same axis rules as `onnx.Softmax`. }];
  let results = (outs ONNX_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def ONNX_SplitOp : ONNX_Op<"Split", (ins ONNX_Tensor:$input, ONNX_TensorOrNone:$split),
    (ins DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$axis,
         OptionalAttr<DenseI64ArrayAttr>:$split_attr,
         OptionalAttr<ONNX_IntAttr>:$num_outputs)> {
  let summary = "ONNX Split";
  let description = [{
    Splits `input` along `axis`. Sizes come from the `split` input (opset 13+),
    the `split` attribute (before 13; held as `split_attr`), or equal parts.

    ```mlir
    %i, %f, %g, %o = onnx.Split(%gates, %none) {axis = 1 : i64} : (tensor<1x64xf32>, none) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
    ```
  }];
  let results = (outs Variadic<ONNX_TensorOrNone>:$outputs);
  let variadicOuts = 1;
  let hasVerifier = 1;
}

def ONNX_SliceOp : ONNX_Op<"Slice",
    (ins ONNX_Tensor:$data, ONNX_TensorOrNone:$starts, ONNX_TensorOrNone:$ends,
         ONNX_TensorOrNone:$axes, ONNX_TensorOrNone:$steps),
    (ins OptionalAttr<DenseI64ArrayAttr>:$starts_attr,
         OptionalAttr<DenseI64ArrayAttr>:$ends_attr,
         OptionalAttr<DenseI64ArrayAttr>:$axes_attr)> {
  let summary = "ONNX Slice";
  let description = [{
    Opset 10+ takes starts/ends/axes/steps as inputs; opset 1 as attributes
    (held as `starts_attr`, `ends_attr`, `axes_attr`).
  }];
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
  let extraOpDecl = [{
    /// The elements the slice takes from a tensor of shape `in` (its shape
    /// rule's window); `known` is false when the bounds are not known.
    static ::llvm::FailureOr<::lstm_opt::onnx::SliceWindow>
    getWindow(::lstm_opt::onnx::ShapeQuery &query, Adaptor op,
              ::llvm::ArrayRef<int64_t> in, bool &known);
  }];
}

def ONNX_GatherOp : ONNX_Op<"Gather", (ins ONNX_Tensor:$data, ONNX_Tensor:$indices),
    (ins DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$axis)> {
  let summary = "ONNX Gather";
  let description = [{
    ```mlir
    %xt = onnx.Gather(%x, %t) {axis = 0 : i64} : (tensor<5x1x8xf32>, tensor<i64>) -> tensor<1x8xf32>
    ```
  }];
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ConcatOp : ONNX_Op<"Concat", (ins Variadic<ONNX_Tensor>:$inputs),
    (ins ONNX_IntAttr:$axis)> {
  let summary = "ONNX Concat";
  let description = [{
    ```mlir
    %xh = onnx.Concat(%x, %h) {axis = 1 : i64} : (tensor<1x8xf32>, tensor<1x16xf32>) -> tensor<1x24xf32>
    ```
  }];
  let results = (outs ONNX_Tensor:$concat_result);
  let variadicIns = 1;
  let hasVerifier = 1;
}

def ONNX_SqueezeOp : ONNX_Op<"Squeeze", (ins ONNX_Tensor:$data, ONNX_TensorOrNone:$axes),
    (ins OptionalAttr<DenseI64ArrayAttr>:$axes_attr)> {
  let summary = "ONNX Squeeze";
  let description = [{
    `axes` is an input from opset 13 on, an attribute before (held as
    `axes_attr`); absent, every dimension of size 1 is removed.
  }];
  let results = (outs ONNX_Tensor:$squeezed);
  let hasVerifier = 1;
}

def ONNX_UnsqueezeOp : ONNX_Op<"Unsqueeze", (ins ONNX_Tensor:$data, ONNX_TensorOrNone:$axes),
    (ins OptionalAttr<DenseI64ArrayAttr>:$axes_attr)> {
  let summary = "ONNX Unsqueeze";
  let description = [{
    `axes` is an input from opset 13 on, an attribute before (held as
    `axes_attr`). One of the two is required.
  }];
  let results = (outs ONNX_Tensor:$expanded);
  let hasVerifier = 1;
}

def ONNX_ReshapeOp : ONNX_Op<"Reshape", (ins ONNX_Tensor:$data, ONNX_Tensor:$shape),
    (ins DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$allowzero)> {
  let summary = "ONNX Reshape";
  let description = "Reshapes `data` to `shape` (0 copies a dimension unless allowzero, -1 infers one).";
  let results = (outs ONNX_Tensor:$reshaped);
  let hasVerifier = 1;
}

def ONNX_TransposeOp : ONNX_Op<"Transpose", (ins ONNX_Tensor:$data),
    (ins OptionalAttr<DenseI64ArrayAttr>:$perm)> {
  let summary = "ONNX Transpose";
  let description = "Permutes the dimensions (reverses them when `perm` is absent).";
  let results = (outs ONNX_Tensor:$transposed);
  let hasVerifier = 1;
  let extraOpDecl = [{
    /// `perm`, or the reversed dimensions of a tensor of rank `rank` when
    /// it is absent (not checked: the shape rule checks it).
    static ::llvm::SmallVector<int64_t> getPermutation(Adaptor op, int64_t rank);
  }];
}

def ONNX_ExpandOp : ONNX_Op<"Expand", (ins ONNX_Tensor:$input, ONNX_Tensor:$shape), (ins)> {
  let summary = "ONNX Expand";
  let description = "Broadcasts `input` to `shape` (numpy rules).";
  let results = (outs ONNX_Tensor:$output);
}

def ONNX_ShapeOp : ONNX_Op<"Shape", (ins ONNX_Tensor:$data),
    (ins OptionalAttr<ONNX_IntAttr>:$start, OptionalAttr<ONNX_IntAttr>:$end)> {
  let summary = "ONNX Shape";
  let description = "The shape of `data` as a 1-D int64 tensor (dims [start, end)).";
  let results = (outs ONNX_Tensor:$shape);
  let extraOpDecl = [{
    /// The dimensions [start, end) of a tensor of rank `rank` the op returns.
    static std::pair<int64_t, int64_t> getRange(Adaptor op, int64_t rank);
  }];
}

def ONNX_ConstantOp : ONNX_Op<"Constant", (ins),
    (ins OptionalAttr<ElementsAttr>:$value,
         OptionalAttr<F32Attr>:$value_float,
         OptionalAttr<DenseF32ArrayAttr>:$value_floats,
         OptionalAttr<ONNX_IntAttr>:$value_int,
         OptionalAttr<DenseI64ArrayAttr>:$value_ints,
         OptionalAttr<StrAttr>:$value_string,
         OptionalAttr<StrArrayAttr>:$value_strings)> {
  let summary = "ONNX Constant";
  let description = [{
    Exactly one of the value attributes is set (`sparse_value` is refused at
    import: lstm-opt does not support sparse tensors).

    ```mlir
    %axes = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
    ```
  }];
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ConstantOfShapeOp : ONNX_Op<"ConstantOfShape", (ins ONNX_Tensor:$input),
    (ins OptionalAttr<ElementsAttr>:$value)> {
  let summary = "ONNX ConstantOfShape";
  let description = "A tensor of shape `input` filled with `value` (default float 0).";
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Recurrent operators
//===----------------------------------------------------------------------===//

class ONNX_RecurrentOp<string mnemonic, string desc, dag extraIns, dag extraAttrs,
                       dag outs>
    : ONNX_Op<mnemonic,
      !con((ins ONNX_Tensor:$X, ONNX_Tensor:$W, ONNX_Tensor:$R, ONNX_TensorOrNone:$B,
                ONNX_TensorOrNone:$sequence_lens, ONNX_TensorOrNone:$initial_h),
           extraIns),
      !con((ins OptionalAttr<DenseF32ArrayAttr>:$activation_alpha,
                OptionalAttr<DenseF32ArrayAttr>:$activation_beta,
                OptionalAttr<StrArrayAttr>:$activations,
                OptionalAttr<F32Attr>:$clip,
                DefaultValuedOptionalAttr<StrAttr, "\"forward\"">:$direction,
                OptionalAttr<ONNX_IntAttr>:$hidden_size,
                DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$layout),
           extraAttrs)> {
  let summary = "ONNX " # mnemonic;
  let description = desc # [{

    The verifier checks the ONNX shape rules: W [D, G*H, I], R [D, G*H, H],
    B [D, 2*G*H], initial states [D, B, H] (layout 0) or [B, D, H] (layout 1),
    with D = 2 for `bidirectional`, and the number of activations.
  }];
  let results = outs;
  let hasVerifier = 1;
  let extraOpDecl = [{
    /// Number of directions (1 or 2).
    int64_t getNumDirections() { return getDirection() == "bidirectional" ? 2 : 1; }
  }];
}

def ONNX_LSTMOp : ONNX_RecurrentOp<"LSTM",
    "A whole LSTM layer (gate order i, o, f, c).",
    (ins ONNX_TensorOrNone:$initial_c, ONNX_TensorOrNone:$P),
    (ins DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$input_forget),
    (outs ONNX_TensorOrNone:$Y, ONNX_TensorOrNone:$Y_h, ONNX_TensorOrNone:$Y_c)>;

def ONNX_GRUOp : ONNX_RecurrentOp<"GRU",
    "A whole GRU layer (gate order z, r, h).",
    (ins), (ins DefaultValuedOptionalAttr<ONNX_IntAttr, "0">:$linear_before_reset),
    (outs ONNX_TensorOrNone:$Y, ONNX_TensorOrNone:$Y_h)>;

def ONNX_RNNOp : ONNX_RecurrentOp<"RNN",
    "A whole simple RNN layer (Ht = f(Xt*W^T + Ht-1*R^T + Wb + Rb)).",
    (ins), (ins), (outs ONNX_TensorOrNone:$Y, ONNX_TensorOrNone:$Y_h)>;

#endif // LSTM_OPT_DIALECT_ONNX_IR_ONNXOPS_TD

//===- ONNXBase.td - onnx dialect definition ---------------*- tablegen -*-===//
//
// The `onnx` dialect mirrors ONNX faithfully: one op per ONNX operator, the
// ONNX attribute names and kinds, omitted optional inputs/outputs as `none`.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_ONNX_IR_ONNXBASE_TD
#define LSTM_OPT_DIALECT_ONNX_IR_ONNXBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def ONNX_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::lstm_opt::onnx";
  let summary = "A faithful mirror of the ONNX operator set";
  let description = [{
    The `onnx` dialect is what the lstm-opt importer produces and what the
    exporter writes back. It keeps everything a model carries:

    * a graph is a `func.func` whose arguments and results carry their ONNX
      names (`onnx.name`) and symbolic dimensions (`onnx.dim_params`);
    * initializers are `onnx.initializer` ops holding dense resource
      attributes (large weights are not copied);
    * every ONNX node becomes one op: a typed op (`onnx.Gemm`, `onnx.LSTM`, ...)
      for the operators recurrent models are built from, and the generic
      `onnx.node` for every other operator of any domain (attributes and
      subgraphs kept), so any model round-trips;
    * an omitted optional input or output is a value of type `none`
      (produced by `onnx.none`);
    * node names become `NameLoc`s, output names the `onnx.names` attribute,
      and the module records opset imports and model metadata.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class ONNX_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<ONNX_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def ONNX_StringType : ONNX_Type<"String", "string"> {
  let summary = "ONNX string element type";
  let description = [{ The element type of ONNX `STRING` tensors. }];
}

def ONNX_UnknownType : ONNX_Type<"Unknown", "unknown"> {
  let summary = "an ONNX value whose type the model does not state";
  let description = [{
    Used for values of unknown type (for example the outputs of a custom-domain
    operator without `value_info`). The exporter writes no type for them.
  }];
}

def ONNX_SeqType : ONNX_Type<"Seq", "seq"> {
  let summary = "ONNX sequence type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def ONNX_OptType : ONNX_Type<"Opt", "opt"> {
  let summary = "ONNX optional type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def ONNX_MapType : ONNX_Type<"Map", "map"> {
  let summary = "ONNX map type";
  let parameters = (ins "::mlir::Type":$keyType, "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $keyType `,` $valueType `>`";
}

def ONNX_OpsetAttr : AttrDef<ONNX_Dialect, "Opset"> {
  let mnemonic = "opset";
  let summary = "one opset import of the model: a domain and its version";
  let description = [{
    The module's `onnx.opset_import` is a list of these, in the model's
    order. `""` is the default ONNX domain.

    ```mlir
    module attributes {onnx.opset_import = [#onnx.opset<"", 17>, #onnx.opset<"ai.onnx.ml", 3>]}
    ```
  }];
  let parameters = (ins StringRefParameter<"the domain">:$domain,
                        "int64_t":$version);
  let assemblyFormat = "`<` $domain `,` $version `>`";
}

// ONNX INT attribute: signless i64 read as a signed int64_t (ODS's I64Attr
// reads it unsigned, which breaks negative axes).
def ONNX_IntAttr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                "64-bit integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

// Any ONNX value: tensors, sequences, maps, optionals, unknown.
def ONNX_AnyValue : AnyTypeOf<[AnyTensor, ONNX_SeqType, ONNX_OptType,
                               ONNX_MapType, ONNX_UnknownType]>;
def ONNX_Tensor : AnyTypeOf<[AnyTensor, ONNX_UnknownType], "tensor">;
def ONNX_TensorOrNone : AnyTypeOf<[AnyTensor, ONNX_UnknownType, NoneType],
                                  "tensor or none">;
def ONNX_ValueOrNone : AnyTypeOf<[ONNX_AnyValue, NoneType], "value or none">;

#endif // LSTM_OPT_DIALECT_ONNX_IR_ONNXBASE_TD

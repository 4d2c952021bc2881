//===- ONNXImport.h - ONNX model -> onnx dialect ----------------*- C++ -*-===//
//
// Reads an ONNX model (binary protobuf or ONNX's textual syntax) into a
// builtin.module of the onnx dialect. Every problem with the input is
// reported as an MLIR diagnostic naming the file and, where there is one,
// the ONNX node; the functions then return null. See docs/ONNXImport.md for
// the mapping rules.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TARGET_ONNX_ONNXIMPORT_H
#define LSTM_OPT_TARGET_ONNX_ONNXIMPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace lstm_opt {

struct ONNXImportOptions {
  /// Run ONNX shape inference so intermediate values get types. Values whose
  /// type is still unknown get !onnx.unknown.
  bool shapeInference = true;
  /// Tensors (in attributes) of at most this many bytes become plain dense
  /// attributes; larger ones, and every initializer, dense resources.
  size_t maxInlineTensorBytes = 64;
  /// Concrete shapes for graph inputs (by name), set before shape inference
  /// so that symbolic sizes resolve (lstm-run specialises a model to the
  /// inputs it is given). A rank or a fixed size that disagrees is an error.
  /// With any shape given, the inferred graph output types are kept.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// The format of a model file, from its extension.
enum class ONNXFileFormat { Binary, Text };
ONNXFileFormat getONNXFileFormat(llvm::StringRef path);

/// True if `path` names an ONNX model (.onnx, .onnxtext, .pb).
bool isONNXFile(llvm::StringRef path);

/// The operators of ONNX's default domain this build's ONNX library knows,
/// sorted by name: (name, the opset of its newest version), deprecated ones
/// left out.
std::vector<std::pair<std::string, int>> listONNXOperators();

/// Imports the model at `path`. External data is resolved next to it.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXFile(llvm::StringRef path, mlir::MLIRContext *context,
               const ONNXImportOptions &options = {});

/// Imports a model held in memory. `sourceName` is used in messages and
/// locations, `baseDir` resolves external data ("" forbids external data).
mlir::OwningOpRef<mlir::ModuleOp>
importONNXBuffer(llvm::StringRef bytes, ONNXFileFormat format,
                 llvm::StringRef sourceName, llvm::StringRef baseDir,
                 mlir::MLIRContext *context,
                 const ONNXImportOptions &options = {});

/// A graph input as a model file declares it (initializers excluded).
struct DeclaredInput {
  std::string name;
  /// The ONNX element type (TensorProto.DataType); 0 when the input is not a
  /// tensor or does not say.
  int32_t elemType = 0;
  /// Whether the type has a shape; `dims` holds it, -1 for a dimension that
  /// is symbolic or not given.
  bool ranked = false;
  std::vector<int64_t> dims;
};

/// The graph inputs the model at `path` declares, read without importing it
/// (lstm-run checks the arrays it is given against them before reading
/// those). Problems are reported like importONNXFile's.
mlir::FailureOr<std::vector<DeclaredInput>>
readDeclaredInputs(llvm::StringRef path, mlir::MLIRContext *context);

/// What onnx's checker says of the model in `path` ("" when it accepts it,
/// or when the file cannot be read, parsed, or has an opset newer than the
/// checker knows).
std::string checkONNXFile(llvm::StringRef path);

/// Specialises an imported model for compilation with concrete inputs:
///  - the graph inputs named in `values` (int64 tensors of static shape,
///    such as a sample rate) read constants of those values inside the graph;
///    the arguments stay, so the signature does not change, and the result
///    is valid only for those values;
///  - int64 values computable at compile time (shape arithmetic, pads)
///    become initializers;
///  - `If` nodes whose condition is then constant are replaced by the ops of
///    the branch taken;
///  - the ONNX library's shape inference runs again over the result (with
///    `options`, i.e. the same input shapes), so values downstream get static
///    types. `module` is replaced by the refined one.
mlir::LogicalResult
specializeModel(mlir::OwningOpRef<mlir::ModuleOp> &module,
                const std::map<std::string, std::vector<int64_t>> &values,
                const ONNXImportOptions &options);

/// After specializeModel, for a model written back as ONNX: the bound graph
/// inputs (now unused) are removed from the graph, and the model's metadata
/// gets `lstm_opt.bound` = "NAME=V[,V...];..." saying which values the
/// model was specialised for.
mlir::LogicalResult
dropBoundInputs(mlir::ModuleOp module,
                const std::map<std::string, std::vector<int64_t>> &values);

/// Replaces every `If` whose condition the graph's declared shapes decide
/// (a rank or a static dimension compared, as exporters write "is the input
/// 2-D?") by the ops of the branch taken, with a remark on the `If`, and
/// runs the ONNX library's shape inference over the result, in rounds (a
/// condition may read a shape known only once another `If` is gone). The
/// result computes the same as the original for every input the declared
/// shapes admit. Nothing else changes; `module` is replaced by the refined
/// one when an `If` was inlined. `inlined` counts them.
mlir::LogicalResult
inlineShapeDecidedIfs(mlir::OwningOpRef<mlir::ModuleOp> &module,
                      const ONNXImportOptions &options, int &inlined);

/// The model's graph in an imported module: its public function with a
/// body (null if there is none).
mlir::func::FuncOp graphFunction(mlir::ModuleOp module);

/// Parses a binding NAME=V[,V...] (integer values) as `--bind` takes it.
/// Returns false for anything else.
bool parseInputBinding(llvm::StringRef spec, std::string &name,
                       std::vector<int64_t> &values);

/// Unrolls the graph's recurrent Loop/Scan nodes whose iteration count is
/// known at compile time (onnx::unrollRecurrentLoops), then, if any was
/// unrolled, runs the ONNX library's shape inference over the result (with
/// `options`) so that the copied steps get the static types the recogniser
/// needs. `module` is replaced by the refined one.
/// Loops whose ordinal is in `skip` are left alone (see
/// onnx::unrollRecurrentLoops). The copies' marks are removed unless
/// `keepMarks` (to ask onnx::unfusedUnrolledLoops after a trial run).
mlir::LogicalResult
unrollRecurrentLoops(mlir::OwningOpRef<mlir::ModuleOp> &module,
                     const ONNXImportOptions &options = {},
                     llvm::ArrayRef<int64_t> skip = {},
                     bool keepMarks = false);

} // namespace lstm_opt

#endif // LSTM_OPT_TARGET_ONNX_ONNXIMPORT_H

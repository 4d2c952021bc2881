//===- ProtoUtils.h - libonnx calls that need C++ exceptions ----*- C++ -*-===//
//
// libonnx's text parser, shape inference, checker and schema registry throw
// C++ exceptions. LLVM/MLIR code is built with -fno-exceptions, so these
// calls live in one small library built with exceptions, and report errors
// as strings. Nothing here knows about MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_LIB_TARGET_ONNX_PROTOUTILS_H
#define LSTM_OPT_LIB_TARGET_ONNX_PROTOUTILS_H

#include "onnx/onnx_pb.h"

#include <string>
#include <vector>

namespace lstm_opt::proto {

/// Parses ONNX's textual model syntax. Returns false and sets `error`.
bool parseModelText(const std::string &text, ::onnx::ModelProto &model,
                    std::string &error);

/// Runs ONNX shape inference in place (node-level errors are not fatal).
/// Returns false and sets `error` on a model-level failure.
/// With `dataPropagation`, shape arithmetic (Shape -> Gather -> Concat ...)
/// is evaluated so values shaped by it get static types.
bool inferShapes(::onnx::ModelProto &model, std::string &error,
                 bool dataPropagation = false);

/// Runs onnx's checker.
bool checkModel(const ::onnx::ModelProto &model, std::string &error);

/// The highest opset of `domain` that this libonnx knows (0 if unknown).
int maxKnownOpset(const std::string &domain);

/// The newest ONNX IR version this libonnx reads and checks.
int64_t maxKnownIrVersion();

/// An operator of this libonnx's schema registry, at its newest version.
struct OperatorSchema {
  std::string name;
  int sinceVersion = 0;
  bool deprecated = false;
};
/// Every operator of `domain` ("" for the default one), sorted by name.
std::vector<OperatorSchema> listOperators(const std::string &domain);

/// What the operator schema says about a node's inputs.
struct InputRules {
  bool known = false;      ///< A schema exists for this op/domain/opset.
  int minInputs = 0;       ///< Minimum number of inputs.
  int maxInputs = 0;       ///< Maximum number (INT_MAX if variadic).
  int maxOutputs = 0;      ///< Maximum number of outputs.
  /// For each formal input: its name and whether it is required.
  std::vector<std::pair<std::string, bool>> formals;
};
InputRules getInputRules(const std::string &opType, const std::string &domain,
                         int opset);

/// Prints a graph in ONNX's textual syntax (used for .onnxtext output).
std::string printModelText(const ::onnx::ModelProto &model);

} // namespace lstm_opt::proto

#endif // LSTM_OPT_LIB_TARGET_ONNX_PROTOUTILS_H

//===- Diagnostics.h - how the tools print diagnostics ----------*- C++ -*-===//

#ifndef LSTM_OPT_SUPPORT_DIAGNOSTICS_H
#define LSTM_OPT_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir {
class Diagnostic;
} // namespace mlir

namespace lstm_opt {

/// The file location (file:line:col, line 0 for a binary model) and the
/// first NameLoc, i.e. the ONNX node, found in `loc`.
void describeLocation(mlir::Location loc, std::string &file, unsigned &line,
                      unsigned &col, std::string &node);

/// Prints `diag` to stderr the way the tools do: `file: severity: node 'x':
/// message` (file:line:col for textual input), with its notes.
void printToolDiagnostic(mlir::Diagnostic &diag);

} // namespace lstm_opt

#endif // LSTM_OPT_SUPPORT_DIAGNOSTICS_H

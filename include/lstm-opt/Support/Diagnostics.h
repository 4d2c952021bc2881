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

/// `text` safe to print on a terminal: ASCII control characters, DEL, the
/// C1 controls (U+0080..U+009F) and bytes that are not UTF-8 become `\xNN`
/// (a backslash becomes `\\`), so a name in a model cannot move the cursor,
/// recolour or retitle the user's terminal. Printable UTF-8 stays, and with
/// `keepLayout` so do newlines and tabs (multi-line messages).
std::string escapeForTerminal(llvm::StringRef text, bool keepLayout = false);

/// Prints `diag` to stderr the way the tools do: `file: severity: node 'x':
/// message` (file:line:col for textual input), with its notes.
void printToolDiagnostic(mlir::Diagnostic &diag);

} // namespace lstm_opt

#endif // LSTM_OPT_SUPPORT_DIAGNOSTICS_H

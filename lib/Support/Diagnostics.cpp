//===- Diagnostics.cpp - how the tools print diagnostics ------------------===//

#include "lstm-opt/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Finds the file location and the first NameLoc (the ONNX node) of `loc`.
void lstm_opt::describeLocation(Location loc, std::string &file, unsigned &line,
                      unsigned &col, std::string &node) {
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l); f && file.empty()) {
      file = f.getFilename().str();
      line = f.getLine();
      col = f.getColumn();
    }
    if (auto n = dyn_cast<NameLoc>(l); n && node.empty())
      node = n.getName().str();
    return WalkResult::advance();
  });
}

void lstm_opt::printToolDiagnostic(Diagnostic &diag) {
  std::string file, node;
  unsigned line = 0, col = 0;
  describeLocation(diag.getLocation(), file, line, col, node);
  std::string message = diag.str();
  StringRef severity;
  llvm::raw_ostream::Colors color = llvm::raw_ostream::RED;
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: severity = "error"; break;
  case DiagnosticSeverity::Warning:
    severity = "warning";
    color = llvm::raw_ostream::MAGENTA;
    break;
  case DiagnosticSeverity::Remark:
    severity = "remark";
    color = llvm::raw_ostream::BLUE;
    break;
  case DiagnosticSeverity::Note: severity = "note"; break;
  }
  auto &os = llvm::errs();
  os << (file.empty() ? std::string("<unknown>") : file);
  if (line)
    os << ":" << line << ":" << col;
  os << ": ";
  llvm::WithColor(os, color, /*Bold=*/true) << severity << ": ";
  // Importer messages already name the node.
  if (!node.empty() &&
      StringRef(message).find("'" + node + "'") == StringRef::npos)
    os << "node '" << node << "': ";
  os << message << "\n";
  for (Diagnostic &note : diag.getNotes())
    os << "  note: " << note.str() << "\n";
}


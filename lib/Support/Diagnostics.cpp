//===- Diagnostics.cpp - how the tools print diagnostics ------------------===//

#include "lstm-opt/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string lstm_opt::escapeForTerminal(StringRef text, bool keepLayout) {
  std::string out;
  out.reserve(text.size());
  auto hex = [&](unsigned char c) {
    const char *digits = "0123456789abcdef";
    out += "\\x";
    out += digits[c >> 4];
    out += digits[c & 15];
  };
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if ((c < 0x20 || c == 0x7f) &&
               !(keepLayout && (c == '\n' || c == '\t'))) {
      hex(c);
      ++i;
    } else if (c < 0x80) {
      out += char(c);
      ++i;
    } else {
      // A UTF-8 sequence: its length from the lead byte, then continuation
      // bytes; anything else is escaped byte by byte.
      size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4 : 0;
      bool ok = n && i + n <= text.size() && c >= 0xc2 && c <= 0xf4;
      for (size_t k = 1; ok && k < n; ++k)
        ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      // U+0080..U+009F are the C1 controls (0xc2 0x80..0x9f).
      if (ok && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)
        ok = false;
      if (!ok) {
        hex(c);
        ++i;
        continue;
      }
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

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
  std::string message = escapeForTerminal(diag.str(), /*keepLayout=*/true);
  file = escapeForTerminal(file);
  node = escapeForTerminal(node);
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
    os << "  note: " << escapeForTerminal(note.str(), /*keepLayout=*/true)
       << "\n";
}


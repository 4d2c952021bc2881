//===- Report.h - the --report summary of an lstm-opt run -------*- C++ -*-===//

#ifndef LSTM_OPT_TOOLS_REPORT_H
#define LSTM_OPT_TOOLS_REPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace lstm_opt {

/// What one run of the driver did: op counts before and after, where the
/// time went, and every remark (a node left alone and why).
struct RunReport {
  struct Phase {
    std::string name;
    double ms;
  };
  struct Remark {
    std::string severity; ///< "remark" or "warning"
    std::string node;     ///< the ONNX node name, if the location has one
    std::string message;
    /// Every ONNX node the location names (a fused op's source nodes).
    std::vector<std::string> sourceNodes;
  };
  std::string input;
  std::string output;
  std::map<std::string, int64_t> opsBefore;
  std::map<std::string, int64_t> opsAfter;
  std::vector<Phase> phases;
  std::vector<Remark> remarks;

  /// Counts ops by ONNX operator type (`Gemm`, `com.microsoft.Attention`,
  /// ...); ops of other dialects by their MLIR name. Initializers and
  /// structural ops are not counted.
  static std::map<std::string, int64_t> countOps(mlir::ModuleOp module);

  void printText(llvm::raw_ostream &os) const;
  void printJSON(llvm::raw_ostream &os) const;
};

} // namespace lstm_opt

#endif // LSTM_OPT_TOOLS_REPORT_H

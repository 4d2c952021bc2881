//===- Report.cpp - the --report summary of an lstm-opt run ---------------===//

#include "lstm-opt/Tools/Report.h"

#include "lstm-opt/Support/Diagnostics.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace lstm_opt;

std::map<std::string, int64_t> RunReport::countOps(ModuleOp module) {
  std::map<std::string, int64_t> counts;
  module.walk([&](Operation *op) {
    if (isa<ModuleOp, func::FuncOp, func::ReturnOp, onnx::NoneOp,
            onnx::InitializerOp, onnx::YieldOp>(op))
      return;
    StringRef type = onnx::getOnnxOpType(op);
    if (type.empty()) {
      ++counts[op->getName().getStringRef().str()];
      return;
    }
    std::string key = type.str();
    if (auto node = dyn_cast<onnx::NodeOp>(op))
      if (!node.getDomain().empty() && node.getDomain() != "ai.onnx")
        key = (node.getDomain() + "." + type).str();
    ++counts[key];
  });
  return counts;
}

static int64_t total(const std::map<std::string, int64_t> &m) {
  int64_t n = 0;
  for (auto &kv : m)
    n += kv.second;
  return n;
}

void RunReport::printText(llvm::raw_ostream &os) const {
  os << "lstm-opt report: " << escapeForTerminal(input) << " -> "
     << escapeForTerminal(output) << "\n";
  os << "  nodes: " << total(opsBefore) << " -> " << total(opsAfter) << "\n";
  std::map<std::string, std::pair<int64_t, int64_t>> rows;
  for (auto &kv : opsBefore)
    rows[kv.first].first = kv.second;
  for (auto &kv : opsAfter)
    rows[kv.first].second = kv.second;
  size_t width = 8;
  for (auto &kv : rows)
    width = std::max(width, kv.first.size());
  os << "  " << llvm::left_justify("op", width) << "  before   after\n";
  for (auto &kv : rows)
    os << "  " << llvm::left_justify(kv.first, width) << "  "
       << llvm::format_decimal(kv.second.first, 6) << "  "
       << llvm::format_decimal(kv.second.second, 6)
       << (kv.second.first != kv.second.second ? "  *" : "") << "\n";
  os << "  time:";
  double sum = 0;
  for (auto &p : phases) {
    os << " " << p.name << " " << llvm::format("%.1f", p.ms) << " ms;";
    // Named passes are part of "passes": not added twice.
    if (!StringRef(p.name).starts_with("pass "))
      sum += p.ms;
  }
  os << " total " << llvm::format("%.1f", sum) << " ms\n";
  if (remarks.empty())
    return;
  os << "  remarks (" << remarks.size() << "):\n";
  for (auto &r : remarks) {
    os << "    " << r.severity << ": ";
    if (!r.node.empty())
      os << "node '" << escapeForTerminal(r.node) << "': ";
    os << escapeForTerminal(r.message, /*keepLayout=*/true) << "\n";
  }
}

namespace {
/// The fields of a "fused <KIND> layer: ..." remark of rnn-roll-time-loop.
std::optional<llvm::json::Object> parseLayerRemark(StringRef msg) {
  static const llvm::Regex re(
      "^fused ([A-Z]+) layer: ([0-9]+) steps, ([a-z]+), hidden ([0-9]+): "
      "([0-9]+) nodes -> 1 layer \\+ ([0-9]+) glue; ([0-9]+) GEMMs -> 1 "
      "input GEMM \\+ ([0-9]+) recurrent$");
  SmallVector<StringRef> m;
  if (!re.match(msg, &m))
    return std::nullopt;
  auto num = [](StringRef s) {
    int64_t v = 0;
    s.getAsInteger(10, v);
    return v;
  };
  return llvm::json::Object{
      {"cell", m[1]},          {"steps", num(m[2])},
      {"direction", m[3]},     {"hidden", num(m[4])},
      {"nodes_before", num(m[5])}, {"glue_nodes", num(m[6])},
      {"gemms_before", num(m[7])}, {"input_gemms", 1},
      {"recurrent_gemms", num(m[8])}};
}

bool isRefusal(StringRef msg) {
  return msg.starts_with("not fused") || msg.starts_with("not rolled") ||
         msg.starts_with("not imported") || msg.starts_with("not paired") ||
         msg.starts_with("not stacked") ||
         msg.starts_with("starts a new layer");
}
} // namespace

void RunReport::printJSON(llvm::raw_ostream &os) const {
  auto counts = [](const std::map<std::string, int64_t> &m) {
    llvm::json::Object o;
    for (auto &kv : m)
      o[kv.first] = kv.second;
    return o;
  };
  llvm::json::Array phaseArr;
  for (auto &p : phases)
    phaseArr.push_back(llvm::json::Object{{"name", p.name}, {"ms", p.ms}});
  llvm::json::Array remarkArr;
  for (auto &r : remarks)
    remarkArr.push_back(llvm::json::Object{
        {"severity", r.severity}, {"node", r.node}, {"message", r.message}});
  llvm::json::Array layerArr, refusedArr;
  int64_t unfusedRecurrences = 0;
  for (auto &r : remarks) {
    if (StringRef(r.message).starts_with("not fused: a recurrence"))
      ++unfusedRecurrences;
    if (auto layer = parseLayerRemark(r.message)) {
      (*layer)["node"] = r.node;
      llvm::json::Array sources;
      for (auto &n : r.sourceNodes)
        sources.push_back(n);
      (*layer)["source_nodes"] = std::move(sources);
      layerArr.push_back(std::move(*layer));
    } else if (isRefusal(r.message)) {
      refusedArr.push_back(
          llvm::json::Object{{"node", r.node}, {"reason", r.message}});
    }
  }
  llvm::json::Object root{
      {"layers", std::move(layerArr)},
      {"refused", std::move(refusedArr)},
      {"unfused_recurrences", unfusedRecurrences},
      {"input", input},
      {"output", output},
      {"nodes_before", total(opsBefore)},
      {"nodes_after", total(opsAfter)},
      {"ops_before", counts(opsBefore)},
      {"ops_after", counts(opsAfter)},
      {"phases", std::move(phaseArr)},
      {"remarks", std::move(remarkArr)},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

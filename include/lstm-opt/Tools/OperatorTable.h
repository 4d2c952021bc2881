//===- OperatorTable.h - where each ONNX operator is supported --*- C++ -*-===//
//
// `lstm-opt --print-operator-table`: a Markdown table of every operator of
// ONNX's default domain this build knows, and what lstm-opt does with it
// (import, shape rule, CPU backend), from the code itself.
// scripts/gen-docs.sh writes it to docs/generated/Operators.md.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TOOLS_OPERATORTABLE_H
#define LSTM_OPT_TOOLS_OPERATORTABLE_H

#include "llvm/Support/raw_ostream.h"

namespace lstm_opt {

/// Prints the operator table (Markdown) to `os`.
void printOperatorTable(llvm::raw_ostream &os);

} // namespace lstm_opt

#endif // LSTM_OPT_TOOLS_OPERATORTABLE_H

//===- RNNOps.h - rnn dialect -----------------------------------*- C++ -*-===//

#ifndef LSTM_OPT_DIALECT_RNN_IR_RNNOPS_H
#define LSTM_OPT_DIALECT_RNN_IR_RNNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "lstm-opt/Dialect/RNN/IR/RNNDialect.h.inc"
#include "lstm-opt/Dialect/RNN/IR/RNNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "lstm-opt/Dialect/RNN/IR/RNNAttrs.h.inc"

#define GET_OP_CLASSES
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h.inc"

namespace lstm_opt::rnn {

/// Number of gates of a cell kind: LSTM 4, GRU 3, RNN 1.
int64_t getNumGates(CellKind kind);

/// Number of activation functions per direction: LSTM 3, GRU 2, RNN 1.
int64_t getNumActivations(CellKind kind);

/// True if two layers run the same cell: kind, hidden size,
/// linear_before_reset, activations (with their parameters), clip and
/// sequence lengths.
bool haveSameCell(SequenceOp a, SequenceOp b);

/// A layer's (or a cell's) own precision ("f32", "bf16" or "int8"): what
/// the model asks for (a quantized layer, rnn-recognize-cells) or the user
/// sets; it overrides convert-rnn-to-cpu's `precision` option and is kept
/// when cells are rolled and layers paired.
inline constexpr llvm::StringLiteral kPrecisionAttr = "lstm_opt.precision";

} // namespace lstm_opt::rnn

#endif // LSTM_OPT_DIALECT_RNN_IR_RNNOPS_H

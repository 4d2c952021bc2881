//===- GateLayout.h - gate orders and weight layout conversions -*- C++ -*-===//
//
// The canonical gate order of the rnn dialect (LSTM i,f,g,o; GRU r,z,n) and
// the conversions from/to the orders of the outside world. Pure functions on
// row-major float data: every backend and importer goes through them, and the
// unit tests check them against references written in the tests.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_RNN_UTILS_GATELAYOUT_H
#define LSTM_OPT_DIALECT_RNN_UTILS_GATELAYOUT_H

#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace lstm_opt::rnn {

/// For each canonical gate k, the index of the same gate in ONNX's order
/// (LSTM i,o,f,c; GRU z,r,h; RNN the one gate).
llvm::ArrayRef<int> canonicalToONNXGates(CellKind kind);

/// Reorders the gate blocks of a [gates * hidden, cols] row-major matrix (or
/// a [gates * hidden] vector with cols = 1): block k of the result is block
/// `from[k]` of the input.
std::vector<float> permuteGateBlocks(llvm::ArrayRef<float> data, int64_t gates,
                                     int64_t hidden, int64_t cols,
                                     llvm::ArrayRef<int> from);

/// The inverse permutation.
std::vector<int> invertPermutation(llvm::ArrayRef<int> perm);

} // namespace lstm_opt::rnn

#endif // LSTM_OPT_DIALECT_RNN_UTILS_GATELAYOUT_H

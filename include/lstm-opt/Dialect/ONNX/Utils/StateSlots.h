//===- StateSlots.h - which recurrent states a graph value feeds ---------===//
//
// The dataflow behind --state=auto (the CPU backend's streams) and
// onnx-stream-to-sequence: which recurrent layers' initial states a graph
// input's values reach, and which final states a graph output is computed
// from. The layers are whatever the callers recognise (rnn.sequence in the
// CPU backend, onnx.LSTM/GRU/RNN on the ONNX side).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_ONNX_UTILS_STATESLOTS_H
#define LSTM_OPT_DIALECT_ONNX_UTILS_STATESLOTS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <set>
#include <utility>

namespace lstm_opt::onnx {

/// A recurrent layer's state: (layer, 0) for h, (layer, 1) for c.
using StateSlot = std::pair<mlir::Operation *, int>;
using StateSlots = std::set<StateSlot>;

/// The slots `from`'s values reach: forward through every user, into nested
/// regions (and out through their ancestors); a use `initialSlot` names is
/// recorded and not followed; a Shape or Size (which reads only the shape)
/// is not followed.
StateSlots stateSlotsFed(
    mlir::Value from,
    llvm::function_ref<std::optional<StateSlot>(mlir::OpOperand &)> initialSlot);

/// The final-state slots `to` is computed from: backward through every
/// operand; a value `finalSlot` names is recorded and not followed; an If's
/// result through what each branch yields for it; another op with regions
/// through every value its regions use from above, and every slot
/// `finalSlot` names among its nested ops' results.
StateSlots stateSlotsRead(
    mlir::Value to,
    llvm::function_ref<std::optional<StateSlot>(mlir::OpResult)> finalSlot);

} // namespace lstm_opt::onnx

#endif // LSTM_OPT_DIALECT_ONNX_UTILS_STATESLOTS_H

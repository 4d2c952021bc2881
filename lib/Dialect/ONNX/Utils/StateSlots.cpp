//===- StateSlots.cpp - which recurrent states a graph value feeds -------===//

#include "lstm-opt/Dialect/ONNX/Utils/StateSlots.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace lstm_opt;

onnx::StateSlots onnx::stateSlotsFed(
    Value from, function_ref<std::optional<StateSlot>(OpOperand &)> initialSlot) {
  StateSlots slots;
  SmallVector<Value> work = {from};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      if (auto slot = initialSlot(use)) {
        slots.insert(*slot);
        continue;
      }
      Operation *user = use.getOwner();
      if (isa<ShapeOp>(user) ||
          (isa<NodeOp>(user) && cast<NodeOp>(user).getOpType() == "Size"))
        continue;
      for (Operation *op = user; op && !isa<func::FuncOp>(op);
           op = op->getParentOp())
        for (Value r : op->getResults())
          work.push_back(r);
    }
  }
  return slots;
}

onnx::StateSlots onnx::stateSlotsRead(
    Value to, function_ref<std::optional<StateSlot>(OpResult)> finalSlot) {
  StateSlots slots;
  SmallVector<Value> work = {to};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      continue;
    if (auto slot = finalSlot(result)) {
      slots.insert(*slot);
      continue;
    }
    Operation *def = result.getOwner();
    for (Value operand : def->getOperands())
      work.push_back(operand);
    auto node = dyn_cast<NodeOp>(def);
    if (node && node.getOpType() == "If") {
      unsigned r = result.getResultNumber();
      for (Region &branch : node.getGraphs())
        if (!branch.empty())
          if (auto y = dyn_cast<YieldOp>(branch.front().getTerminator()))
            if (r < y.getValues().size())
              work.push_back(y.getValues()[r]);
      continue;
    }
    if (def->getNumRegions())
      def->walk([&](Operation *inner) {
        for (OpResult r : inner->getResults())
          if (auto slot = finalSlot(r))
            slots.insert(*slot);
        for (Value operand : inner->getOperands())
          if (!def->isAncestor(operand.getParentBlock()->getParentOp()))
            work.push_back(operand);
      });
  }
  return slots;
}

//===- RNNToCPU.h - rnn -> generated CPU kernels ----------------*- C++ -*-===//

#ifndef LSTM_OPT_CONVERSION_RNNTOCPU_RNNTOCPU_H
#define LSTM_OPT_CONVERSION_RNNTOCPU_RNNTOCPU_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace lstm_opt {

#define GEN_PASS_DECL_CONVERTRNNTOCPUPASS
#define GEN_PASS_DECL_CPUAPPROXIMATEMATHPASS
#define GEN_PASS_DECL_CPUDISTINCTRESULTSPASS
#define GEN_PASS_DECL_CPUEXPANDCOPIESPASS
#define GEN_PASS_DECL_CPUFORWARDOUTPARAMSPASS
#define GEN_PASS_DECL_CPUVECTORIZECONTRACTIONSPASS
#include "lstm-opt/Conversion/Passes.h.inc"

/// The attribute convert-rnn-to-cpu puts on a layer's `omp.parallel`: the
/// most threads the team can use (the layer's hidden blocks). The CPU
/// backend caps the team size it sets at it.
inline constexpr llvm::StringLiteral kTeamMaxThreadsAttr = "lstm_opt.max_threads";

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_RNNTOCPU_RNNTOCPU_H

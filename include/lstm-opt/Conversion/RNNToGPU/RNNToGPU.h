//===- RNNToGPU.h - rnn -> generated GPU kernels ----------------*- C++ -*-===//
//
// convert-rnn-to-gpu: each rnn.sequence becomes a host function on memrefs
// that launches generated kernels (hoisted input projection, then the
// recurrence: one fused gate kernel per step, or one persistent kernel for
// batch <= 4). With mapping=cpu the same kernel bodies run inside
// scf.parallel loops instead, so their numerics are tested on the CPU.
// See docs/passes/convert-rnn-to-gpu.md.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_CONVERSION_RNNTOGPU_RNNTOGPU_H
#define LSTM_OPT_CONVERSION_RNNTOGPU_RNNTOGPU_H

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace lstm_opt {

#define GEN_PASS_DECL_CONVERTRNNTOGPUPASS
#include "lstm-opt/Conversion/Passes.h.inc"

/// Name of the one gpu.module holding every generated kernel of a module.
constexpr const char *kGPUKernelModuleName = "__lstm_opt_kernels";

namespace gpu_kernels {
/// The values of convert-rnn-to-gpu's `design` option (`--gpu-design`).
llvm::ArrayRef<llvm::StringRef> designNames();
/// The GPUs the kernels are generated for (`--gpu-chip`).
llvm::ArrayRef<llvm::StringRef> chipNames();
/// The shared memory a block may opt in to on `chip` (bytes; sm_80: 163
/// KiB, sm_90: 227 KiB): the `shared-bytes` the GPU pipelines set.
int64_t chipSharedBytes(llvm::StringRef chip);
/// The blocks the persistent kernel may spread over on `chip`, one per SM
/// (sm_80: the A100's 108, sm_90: the H100 SXM's and H200's 132): the
/// `max-blocks` the GPU pipelines set. A GPU with fewer SMs refuses the
/// launch (cooperative launch) rather than deadlock.
int64_t chipMaxBlocks(llvm::StringRef chip);
} // namespace gpu_kernels

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_RNNTOGPU_RNNTOGPU_H

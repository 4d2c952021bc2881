//===- GPUBackend.h - generated GPU kernels for a model ---------*- C++ -*-===//
//
// The GPU target (v1): the model's recurrent layers become generated kernels
// (convert-rnn-to-gpu{mapping=gpu}), gathered in one gpu.module; that module
// is lowered with MLIR's own passes (nvvm-attach-target, convert-gpu-to-nvvm,
// gpu-module-to-binary{format=isa}) to PTX for sm_80 or sm_90, and ptxas
// turns the PTX into a cubin (lstm-opt --target=gpu -o k.ptx / k.cubin). The
// whole model, host side included, is compiled by the CPU backend with
// CPUOptions::gpuKernels (-o m.so / m.o / m.mlir, lstm-run --device=gpu). See
// docs/passes/convert-rnn-to-gpu.md and docs/GPUKernels.md.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TARGET_GPU_GPUBACKEND_H
#define LSTM_OPT_TARGET_GPU_GPUBACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace lstm_opt::gpu_backend {

struct GPUOptions {
  /// sm_80 or sm_90.
  std::string chip = "sm_80";
  /// Run recognition first (rnn-recognize-cells, roll, pair).
  bool recognize = true;
  /// convert-rnn-to-gpu's `design`: auto, step or persistent.
  std::string design = "auto";
  /// The persistent kernel's hidden units per block (0: chosen per layer).
  int64_t unitsPerBlock = 0;
  /// How its blocks exchange h: flags or barrier.
  std::string gridSync = "flags";
  /// Where its weights stay: registers (where they fit) or shared.
  std::string weights = "registers";
  /// The persistent kernel's recurrent products: f32 or bf16.
  std::string precision = "f32";
};

/// Runs the GPU host pipeline (lstm_opt::buildGPUPipeline) on `module` (which then holds the host functions
/// and the gpu.module), lowers a copy of the gpu.module and returns its PTX.
/// Diagnostics go to the context's handler.
mlir::FailureOr<std::string> compileToPTX(mlir::ModuleOp module,
                                          const GPUOptions &options);

/// True if ptxas was found when this build was configured.
bool havePtxas();
/// Assembles `ptx` for `chip` with ptxas into `path` (a cubin).
mlir::LogicalResult ptxToCubin(llvm::StringRef ptx, llvm::StringRef chip,
                               llvm::StringRef path);

} // namespace lstm_opt::gpu_backend

#endif // LSTM_OPT_TARGET_GPU_GPUBACKEND_H

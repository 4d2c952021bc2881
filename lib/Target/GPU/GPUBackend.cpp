//===- GPUBackend.cpp - generated GPU kernels to PTX and cubin ------------===//

#include "lstm-opt/Target/GPU/GPUBackend.h"

#include "lstm-opt/Conversion/RNNToGPU/RNNToGPU.h"
#include "lstm-opt/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::gpu_backend;

FailureOr<std::string>
lstm_opt::gpu_backend::compileToPTX(ModuleOp module, const GPUOptions &options) {
  if (!llvm::is_contained(gpu_kernels::chipNames(), StringRef(options.chip))) {
    module.emitError() << "--gpu-chip takes sm_80 or sm_90, not '"
                       << options.chip << "'";
    return failure();
  }
  MLIRContext *ctx = module.getContext();
  {
    DialectRegistry registry;
    registerAllToLLVMIRTranslations(registry);
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    ctx->appendDialectRegistry(registry);
  }
  PassManager pm(ctx, ModuleOp::getOperationName());
  GPUPipelineOptions host;
  host.recognize = options.recognize;
  host.design = options.design;
  host.unitsPerBlock = options.unitsPerBlock;
  host.gridSync = options.gridSync;
  host.weights = options.weights;
  host.precision = options.precision;
  host.chip = options.chip;
  buildGPUPipeline(pm, host);
  if (failed(pm.run(module)))
    return failure();
  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kGPUKernelModuleName);
  if (!kernels) {
    module.emitError() << "no recurrent layer to compile for the GPU (the "
                          "model has no rnn.sequence after recognition)";
    return failure();
  }
  // Lower a copy: the caller may still print the host side with its
  // gpu.module.
  OwningOpRef<ModuleOp> dev = ModuleOp::create(module.getLoc());
  (*dev)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));
  dev->getBody()->push_back(kernels->clone());
  // format=isa stops at the PTX text: no ptxas, no driver inside MLIR.
  PassManager kpm(ctx, ModuleOp::getOperationName());
  GPUKernelsOptions kernelOptions;
  kernelOptions.chip = options.chip;
  kernelOptions.format = "isa";
  buildGPUKernelsPipeline(kpm, kernelOptions);
  if (failed(kpm.run(*dev)))
    return failure();
  std::string ptx;
  for (auto bin : dev->getOps<gpu::BinaryOp>())
    for (Attribute a : bin.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
        ptx += obj.getObject().getValue().str();
  if (ptx.empty()) {
    module.emitError() << "gpu-module-to-binary produced no PTX";
    return failure();
  }
  return ptx;
}

bool lstm_opt::gpu_backend::havePtxas() {
#ifdef LSTM_OPT_PTXAS
  return true;
#else
  return false;
#endif
}

LogicalResult lstm_opt::gpu_backend::ptxToCubin(StringRef ptx, StringRef chip,
                                                StringRef path) {
#ifndef LSTM_OPT_PTXAS
  llvm::errs() << path << ": error: this build found no ptxas (configure with "
                          "the CUDA toolkit, or write .ptx)\n";
  return failure();
#else
  SmallString<128> in;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("lstm-opt-kernels", "ptx", in)) {
    llvm::errs() << "lstm-opt: error: cannot create a temporary file: "
                 << ec.message() << "\n";
    return failure();
  }
  llvm::scope_exit removeIn([&] { llvm::sys::fs::remove(in); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      llvm::errs() << in << ": error: " << ec.message() << "\n";
      return failure();
    }
    os << ptx;
  }
  // Written next to the output and renamed: no partial cubin on failure.
  std::string tmp = (path + ".tmp-cubin").str();
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {LSTM_OPT_PTXAS, arch, "-O3", "-o", tmp, in};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(LSTM_OPT_PTXAS, args, std::nullopt, {}, 0,
                                     0, &err);
  if (rc != 0) {
    llvm::sys::fs::remove(tmp);
    llvm::errs() << path << ": error: ptxas failed"
                 << (err.empty() ? "" : ": " + err) << " (exit " << rc << ")\n";
    return failure();
  }
  if (llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    llvm::errs() << path << ": error: cannot write the output file\n";
    return failure();
  }
  return success();
#endif
}

//===- Pipelines.cpp - lstm-opt pass pipelines ----------------------------===//

#include "lstm-opt/Pipelines/Pipelines.h"

#include "lstm-opt/Conversion/Passes.h"
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::rnn;

void lstm_opt::buildRecognitionPipeline(OpPassManager &pm,
                                        bool importQuantized,
                                        StringRef quantizedPrecision) {
  pm.addPass(createRNNUnrollRecurrentLoopsPass());
  // Made by the default constructor and given its option as text: the
  // pass's statistics are constructed in libMLIR (built with NDEBUG, where
  // they hold no state) but read here, where they do, so the pass object
  // must start zeroed, as `make_unique<Pass>()` value-initialises it and
  // the constructor taking options does not (UBSan: an uninitialised bool
  // in TrackingStatistic::init).
  std::unique_ptr<Pass> recognize = createRNNRecognizeCellsPass();
  if (importQuantized)
    (void)recognize->initializeOptions(
        ("import-quantized=true quantized-precision=" + quantizedPrecision).str(),
        [](const Twine &) { return failure(); });
  pm.addPass(std::move(recognize));
  // An imported foreign layer has the shapes the importer could not infer;
  // the compiled targets that import it need static graph outputs.
  if (importQuantized) {
    std::unique_ptr<Pass> shapes = createONNXInferShapesPass();
    (void)shapes->initializeOptions("graph-outputs=true",
                                    [](const Twine &) { return failure(); });
    pm.addPass(std::move(shapes));
  }
  pm.addPass(createRNNRollTimeLoopPass());
  pm.addPass(createRNNLoopToSequencePass());
  pm.addPass(createRNNPairBidirectionalPass());
}

void lstm_opt::buildDefaultPipeline(OpPassManager &pm,
                                    const DefaultPipelineOptions &) {
  // (rnn-fuse-gate-gemms is not here: it would also merge products outside
  // any recurrent cell, and recognition reads per-gate products anyway.)
  buildRecognitionPipeline(pm);
  pm.addPass(createConvertRNNToONNXPass());
}

void lstm_opt::buildGPUKernelsPipeline(OpPassManager &pm,
                                       const GPUKernelsOptions &options) {
  // PTX ISA 8.0 (CUDA 12.0) covers sm_80 and sm_90.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // convert-gpu-to-nvvm maps the math ops (fma, exp, tanh, ...) to
  // libdevice calls (__nv_fmaf, ...), which gpu-module-to-binary links from
  // the toolkit.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
#ifdef LSTM_OPT_CUDA_ROOT
  if (binary.toolkitPath.empty())
    binary.toolkitPath = LSTM_OPT_CUDA_ROOT;
#endif
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

/// convert-rnn-to-gpu for the GPU (mapping=gpu) of `chip`: the opt-in shared
/// memory per block of the chip bounds the persistent kernel's blocks, which
/// may keep a whole weight matrix there.
static ConvertRNNToGPUPassOptions gpuKernelOptions(StringRef chip,
                                                   StringRef design,
                                                   int64_t unitsPerBlock,
                                                   StringRef gridSync,
                                                   StringRef weights,
                                                   StringRef precision) {
  ConvertRNNToGPUPassOptions gpu;
  gpu.mapping = "gpu";
  gpu.design = design.str();
  gpu.sharedBytes = gpu_kernels::chipSharedBytes(chip);
  gpu.maxCoResidentBlocks = gpu_kernels::chipMaxBlocks(chip);
  gpu.unitsPerBlock = unitsPerBlock;
  gpu.gridSync = gridSync.str();
  gpu.weights = weights.str();
  gpu.precision = precision.str();
  return gpu;
}

void lstm_opt::buildCPULayerPipeline(OpPassManager &pm,
                                     const CPUPipelineOptions &options) {
  if (options.recognize)
    buildRecognitionPipeline(pm, /*importQuantized=*/true);
  if (options.cudnn) {
    pm.addPass(createRNNStackLayersPass());
    ConvertRNNToCUDNNPassOptions cudnn;
    cudnn.dataType = options.cudnnDataType;
    cudnn.algo = options.cudnnAlgo;
    pm.addPass(createConvertRNNToCUDNNPass(cudnn));
  }
  if (options.gpuKernelsOnCPU) {
    ConvertRNNToGPUPassOptions gpu;
    gpu.mapping = "cpu";
    gpu.design = options.gpuDesign;
    // bf16: the twin of the tensor-core design (the other precisions are
    // refused before: lstm-run).
    if (options.precision == "bf16")
      gpu.precision = "bf16";
    pm.addPass(createConvertRNNToGPUPass(gpu));
  }
  if (options.gpuKernels) {
    // Per layer, whichever of cuDNN and the generated kernels the table
    // measured on the chip says is faster (no stacking: a stack is one cuDNN
    // call, and its levels may differ).
    if (options.gpuLayerChoice) {
      ConvertRNNToCUDNNPassOptions cudnn;
      cudnn.onlyFasterOn = options.gpuChip;
      pm.addPass(createConvertRNNToCUDNNPass(cudnn));
    }
    // The kernels first, down to a gpu.binary, before any host-side pass can
    // touch the gpu.module (convert-math-to-libm, finalize-memref-to-llvm,
    // ... run on the whole module).
    pm.addPass(createConvertRNNToGPUPass(
        gpuKernelOptions(options.gpuChip, options.gpuDesign,
                         options.gpuUnitsPerBlock, options.gpuGridSync,
                         options.gpuWeights, options.precision)));
    GPUKernelsOptions kernels;
    kernels.chip = options.gpuChip;
    kernels.format = options.gpuBinaryFormat;
    buildGPUKernelsPipeline(pm, kernels);
  }
}

ConvertRNNToCPUPassOptions
lstm_opt::cpuKernelOptions(const CPUPipelineOptions &options) {
  ConvertRNNToCPUPassOptions kernels;
  kernels.batchTile = options.batchTile;
  kernels.gemmChunkSteps = options.gemmChunkSteps;
  kernels.threads = options.threads;
  kernels.vectorWidth = options.vectorWidth;
  kernels.vectorRegisters = options.vectorRegisters;
  kernels.cacheBytes = options.cacheBytes;
  kernels.l1CacheBytes = options.l1CacheBytes;
  kernels.precision = options.precision;
  kernels.layerPrecisions.assign(options.layerPrecisions.begin(),
                                 options.layerPrecisions.end());
  kernels.bf16Dot = options.bf16Dot;
  kernels.int8Dot = options.int8Dot;
  kernels.int8PairDot = options.int8PairDot;
  kernels.dotIsa = options.dotIsa;
  return kernels;
}

void lstm_opt::buildCPUBufferPipeline(OpPassManager &pm,
                                      const CPUPipelineOptions &options) {
  pm.addPass(createConvertRNNToCPUPass(cpuKernelOptions(options)));
  pm.addPass(createConvertONNXToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(createCPUDistinctResultsPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCPUForwardOutParamsPass());
  bufferization::buildBufferDeallocationPipeline(pm, {});
  pm.addPass(createCanonicalizerPass());
}

void lstm_opt::buildCPULLVMPipeline(OpPassManager &pm,
                                    const CPUPipelineOptions &options) {
  // The GPU host functions' synchronous gpu.alloc/memcpy/launch_func become
  // a chain of async ops on one stream (what gpu-to-llvm lowers), with a
  // gpu.wait before anything else that touches memory.
  if (options.gpuKernels)
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  CPUVectorizeContractionsPassOptions contractions;
  contractions.lanes = options.vectorWidth;
  contractions.registers = options.vectorRegisters;
  // Threads for a contraction of at least 2M multiply-adds (about 20 us on
  // one core: more than an OpenMP fork and join costs).
  contractions.parallelMinWork = options.threads > 1 ? int64_t(1) << 21 : 0;
  pm.addPass(createCPUVectorizeContractionsPass(contractions));
  pm.addPass(createCPUExpandCopiesPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (options.threads > 1)
    pm.addPass(createConvertSCFToOpenMPPass({options.threads}));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCPUApproximateMathPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // A subview at a computed offset (ScatterND's slices) leaves its offset as
  // affine.apply.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  if (options.threads > 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  // x86vector.avx512.dot (AArch64's bfdot is an llvm.call_intrinsic).
  vectorToLLVM.x86Vector = options.bf16Dot && options.dotIsa == "x86";
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  // gpu.alloc/memcpy/memset/dealloc/wait -> mgpu* calls; gpu.launch_func
  // stays, on LLVM values, for the translation (gpu.binary's
  // #gpu.select_object handler emits the module load and mgpuLaunchKernel).
  if (options.gpuKernels)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void lstm_opt::buildCPUPipeline(OpPassManager &pm,
                                const CPUPipelineOptions &options) {
  buildCPULayerPipeline(pm, options);
  buildCPUBufferPipeline(pm, options);
  buildCPULLVMPipeline(pm, options);
}

void lstm_opt::buildGPUPipeline(OpPassManager &pm,
                                const GPUPipelineOptions &options) {
  if (options.recognize)
    buildRecognitionPipeline(pm, /*importQuantized=*/true);
  pm.addPass(
      createConvertRNNToGPUPass(gpuKernelOptions(options.chip, options.design,
                                                 options.unitsPerBlock, options.gridSync,
                                                 options.weights, options.precision)));
}

void lstm_opt::buildLinalgPipeline(OpPassManager &pm,
                                   const LinalgPipelineOptions &options) {
  if (options.recognize)
    buildRecognitionPipeline(pm, /*importQuantized=*/true, "f32");
  ConvertRNNToLinalgPassOptions layers;
  layers.unrollSteps = options.unrollSteps;
  layers.ireeDispatch = options.ireeDispatch;
  pm.addPass(createConvertRNNToLinalgPass(layers));
  pm.addPass(createConvertONNXToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinalgSignlessIntegersPass());
  pm.addPass(createONNXStripAttributesPass());
}

void lstm_opt::buildLinalgPipeline(OpPassManager &pm) {
  buildLinalgPipeline(pm, LinalgPipelineOptions());
}

void lstm_opt::registerPipelines() {
  static bool once = [] {
    PassPipelineRegistration<LinalgPipelineOptions>(
        "lstm-opt-linalg",
        "An ONNX graph with recurrent layers down to linalg, tensor, arith, "
        "math and scf on tensors (what --target=linalg prints; IREE takes it)",
        [](OpPassManager &pm, const LinalgPipelineOptions &o) {
          buildLinalgPipeline(pm, o);
        });
    PassPipelineRegistration<DefaultPipelineOptions>(
        "lstm-opt-default",
        "The pipeline lstm-opt runs on an ONNX model when no pass is named",
        buildDefaultPipeline);
    PassPipelineRegistration<CPUPipelineOptions>(
        "lstm-opt-cpu",
        "An ONNX graph with recurrent layers down to the LLVM dialect (what "
        "--target=cpu|cudnn|gpu compiles)",
        buildCPUPipeline);
    PassPipelineRegistration<GPUPipelineOptions>(
        "lstm-opt-gpu",
        "Recognition, then the layers as generated GPU kernels in a "
        "gpu.module with the host functions that launch them",
        buildGPUPipeline);
    return true;
  }();
  (void)once;
}

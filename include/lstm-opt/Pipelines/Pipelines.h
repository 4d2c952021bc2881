//===- Pipelines.h - lstm-opt pass pipelines --------------------*- C++ -*-===//
//
// Every pass pipeline of the project, as C++ builders with typed options
// (the pattern of CIRCT and mlir/examples: a public build...Pipeline plus a
// PassPipelineRegistration). The driver, lstm-run, the CPU and GPU backends,
// the mlir-opt plugin and embedders call these; nothing parses pipeline text.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_PIPELINES_PIPELINES_H
#define LSTM_OPT_PIPELINES_PIPELINES_H

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace lstm_opt {

/// The front half every target runs first: recurrent loops unrolled, cells
/// recognised, rolled into layers, bidirectional halves paired. Each pass
/// leaves what it cannot prove untouched, with a remark. With
/// `importQuantized` (the compiled targets), com.microsoft.DynamicQuantizeLSTM
/// layers are imported too, and shapes inferred again past them;
/// `quantizedPrecision` "int8" marks them to run on the int8 kernels.
void buildRecognitionPipeline(mlir::OpPassManager &pm,
                              bool importQuantized = false,
                              llvm::StringRef quantizedPrecision = "f32");

struct DefaultPipelineOptions
    : public mlir::PassPipelineOptions<DefaultPipelineOptions> {};

/// The pipeline `lstm-opt model.onnx -o out.onnx` runs when no pass is named
/// (registered as `lstm-opt-default`): recognition, then the layers written
/// as standard ONNX ops. It only holds passes that keep the numbers exactly.
void buildDefaultPipeline(mlir::OpPassManager &pm,
                          const DefaultPipelineOptions &options = {});

/// The generated GPU kernels (a gpu.module) down to a gpu.binary: NVVM
/// target attached, the kernels lowered to NVVM (math ops to libdevice,
/// linked from the CUDA toolkit), serialized.
/// The portable lowering (what `lstm-opt --target=linalg` prints): with
/// `recognize`, the recognition pipeline first (quantized layers imported
/// as f32 layers); then every recurrent layer (convert-rnn-to-linalg) and the
/// rest of the graph (convert-onnx-to-linalg) to linalg, tensor, arith,
/// math and scf on tensors, canonicalized, and the onnx.* attributes
/// dropped (onnx-strip-attributes): a module of upstream dialects only, for
/// a stack's own pass manager (IREE: `iree-compile --iree-input-type=none`).
struct LinalgPipelineOptions
    : public mlir::PassPipelineOptions<LinalgPipelineOptions> {
  Option<bool> recognize{
      *this, "recognize",
      llvm::cl::desc("Recognise the recurrent cells first (the input is an "
                     "imported ONNX graph)"),
      llvm::cl::init(true)};
  Option<int64_t> unrollSteps{
      *this, "unroll-steps",
      llvm::cl::desc("Write a layer of at most this many steps as a straight "
                     "line of steps instead of an scf.for (0: always a loop)"),
      llvm::cl::init(0)};
  Option<bool> ireeDispatch{
      *this, "iree-dispatch",
      llvm::cl::desc("Put each time loop in one IREE flow.dispatch.region "
                     "(what --target=iree prints; needs unregistered "
                     "dialects allowed)"),
      llvm::cl::init(false)};
};
void buildLinalgPipeline(mlir::OpPassManager &pm,
                         const LinalgPipelineOptions &options);
/// The same, with the options' defaults.
void buildLinalgPipeline(mlir::OpPassManager &pm);

struct GPUKernelsOptions {
  /// sm_80 or sm_90.
  std::string chip = "sm_80";
  /// gpu-module-to-binary's format: fatbin, bin (both run the toolkit's
  /// ptxas) or isa (PTX text).
  std::string format = "fatbin";
  /// The CUDA toolkit (libdevice, ptxas); "" = the one found at configure
  /// time, else MLIR's default.
  std::string toolkit;
};
void buildGPUKernelsPipeline(mlir::OpPassManager &pm,
                             const GPUKernelsOptions &options);

/// The CPU pipeline (registered as `lstm-opt-cpu`): an ONNX graph with its
/// recurrent layers to the LLVM dialect, the layers lowered to generated
/// step kernels (or calls into the cuDNN runtime, `cudnn`; or the generated
/// GPU kernels, `gpu-kernels`), the rest through linalg.
struct CPUPipelineOptions
    : public mlir::PassPipelineOptions<CPUPipelineOptions> {
  Option<bool> recognize{*this, "recognize",
                         llvm::cl::desc("Run the recognition passes first"),
                         llvm::cl::init(true)};
  Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("OpenMP threads a large layer's hidden blocks are split "
                     "across; 1 = sequential, no OpenMP runtime"),
      llvm::cl::init(1)};
  Option<int64_t> batchTile{
      *this, "batch-tile",
      llvm::cl::desc("Rows per register tile of the kernels' GEMMs; 0 = "
                     "automatic"),
      llvm::cl::init(0)};
  Option<int64_t> gemmChunkSteps{
      *this, "gemm-chunk-steps",
      llvm::cl::desc("Steps per chunk of the kernels' hoisted input GEMM; "
                     "0 = automatic"),
      llvm::cl::init(0)};
  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes of a vector register of the target"),
      llvm::cl::init(16)};
  Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Vector registers of the target"), llvm::cl::init(32)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("The recurrent layers' weight precision: f32, bf16 or int8"),
      llvm::cl::init("f32")};
  ListOption<std::string> layerPrecisions{
      *this, "layer-precision",
      llvm::cl::desc("Per-layer precisions, NODE=f32|bf16|int8: the layer "
                     "fused from ONNX node NODE runs at that precision")};
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 layers at 16 lanes use AVX512_BF16 vdpbf16ps"),
      llvm::cl::init(false)};
  Option<bool> int8Dot{
      *this, "int8-dot",
      llvm::cl::desc("int8 layers at 16 or 8 lanes use VNNI vpdpbusd"),
      llvm::cl::init(false)};
  Option<bool> int8PairDot{
      *this, "int8-pair-dot",
      llvm::cl::desc("int8 layers without int8-dot use pmaddwd (x86: SSE2, "
                     "AVX2, AVX512BW) or smull + saddlp (AArch64) on pairs "
                     "of k"),
      llvm::cl::init(false)};
  Option<std::string> dotIsa{
      *this, "dot-isa",
      llvm::cl::desc("Whose dot products bf16-dot and int8-dot mean: x86 "
                     "(vdpbf16ps, vpdpbusd) or aarch64 (bfdot, sdot at 4 "
                     "lanes)"),
      llvm::cl::init("x86")};
  Option<int64_t> cacheBytes{
      *this, "cache-bytes",
      llvm::cl::desc("Private (L2) cache per core of the target, in bytes"),
      llvm::cl::init(1 << 20)};
  Option<int64_t> l1CacheBytes{
      *this, "l1-cache-bytes",
      llvm::cl::desc("Level-1 data cache per core of the target, in bytes"),
      llvm::cl::init(32 << 10)};
  Option<bool> cudnn{
      *this, "cudnn",
      llvm::cl::desc("Run the layers cuDNN runs exactly through the "
                     "project's cuDNN runtime (layers stacked first)"),
      llvm::cl::init(false)};
  Option<std::string> cudnnDataType{
      *this, "cudnn-data-type", llvm::cl::desc("cuDNN math: f32 or f16"),
      llvm::cl::init("f32")};
  Option<std::string> cudnnAlgo{
      *this, "cudnn-algo",
      llvm::cl::desc("cuDNN algorithm: auto, standard, persist-static or "
                     "persist-small-h"),
      llvm::cl::init("auto")};
  Option<bool> gpuKernelsOnCPU{
      *this, "gpu-kernels-on-cpu",
      llvm::cl::desc("Lower the layers as the generated GPU kernels, run in "
                     "CPU loops (a numerics test of the kernels)"),
      llvm::cl::init(false)};
  Option<bool> gpuKernels{
      *this, "gpu-kernels",
      llvm::cl::desc("Lower the layers as generated GPU kernels, embedded as "
                     "a gpu.binary and launched through the project's GPU "
                     "runtime"),
      llvm::cl::init(false)};
  Option<std::string> gpuDesign{
      *this, "gpu-design",
      llvm::cl::desc("The GPU kernels' recurrence: auto, step or persistent"),
      llvm::cl::init("auto")};
  Option<std::string> gpuChip{*this, "gpu-chip",
                              llvm::cl::desc("sm_80 or sm_90"),
                              llvm::cl::init("sm_80")};
  Option<int64_t> gpuUnitsPerBlock{
      *this, "gpu-units-per-block",
      llvm::cl::desc("The persistent GPU kernel's hidden units per block (0: "
                     "chosen per layer)"),
      llvm::cl::init(0)};
  Option<bool> gpuLayerChoice{
      *this, "gpu-layer-choice",
      llvm::cl::desc("With gpu-kernels: the layers cuDNN runs faster on "
                     "gpu-chip (the measured table) go to cuDNN instead"),
      llvm::cl::init(false)};
  Option<std::string> gpuGridSync{
      *this, "gpu-grid-sync",
      llvm::cl::desc("The persistent GPU kernel's exchange between blocks: "
                     "flags or barrier"),
      llvm::cl::init("flags")};
  Option<std::string> gpuWeights{
      *this, "gpu-weights",
      llvm::cl::desc("Where the persistent GPU kernel keeps the recurrent "
                     "weights: registers (where they fit) or shared"),
      llvm::cl::init("registers")};
  Option<std::string> gpuBinaryFormat{
      *this, "gpu-binary-format",
      llvm::cl::desc("The kernels' gpu.binary: fatbin, bin or isa"),
      llvm::cl::init("fatbin")};
};

/// The CPU pipeline in its three stages. With `gpu-kernels` the GPU host
/// functions must be set aside between the first and the second (buffer
/// deallocation rejects gpu.launch_func); cpu::lowerToLLVMDialect does that.
/// 1. recognition, and the layers that leave the CPU lowering (cuDNN calls,
///    GPU kernels compiled to a gpu.binary);
void buildCPULayerPipeline(mlir::OpPassManager &pm,
                           const CPUPipelineOptions &options);
/// 2. the step kernels, the rest through linalg, bufferized, buffers freed;
/// convert-rnn-to-cpu's options as the CPU pipeline sets them from
/// `options` (the kernels' vector shape, threads, precision).
ConvertRNNToCPUPassOptions cpuKernelOptions(const CPUPipelineOptions &options);
void buildCPUBufferPipeline(mlir::OpPassManager &pm,
                            const CPUPipelineOptions &options);
/// 3. loops, OpenMP, vectors, down to the LLVM dialect.
void buildCPULLVMPipeline(mlir::OpPassManager &pm,
                          const CPUPipelineOptions &options);
/// All three (`lstm-opt-cpu`).
void buildCPUPipeline(mlir::OpPassManager &pm,
                      const CPUPipelineOptions &options);

/// The GPU host side (registered as `lstm-opt-gpu`): recognition, then the
/// layers as generated kernels (convert-rnn-to-gpu{mapping=gpu}) in a
/// gpu.module next to the host functions that launch them.
struct GPUPipelineOptions
    : public mlir::PassPipelineOptions<GPUPipelineOptions> {
  Option<bool> recognize{*this, "recognize",
                         llvm::cl::desc("Run the recognition passes first"),
                         llvm::cl::init(true)};
  Option<std::string> design{
      *this, "design",
      llvm::cl::desc("The kernels' recurrence: auto, step or persistent"),
      llvm::cl::init("auto")};
  Option<int64_t> unitsPerBlock{
      *this, "units-per-block",
      llvm::cl::desc("The persistent kernel's hidden units per block (0: "
                     "chosen per layer)"),
      llvm::cl::init(0)};
  Option<std::string> gridSync{
      *this, "grid-sync",
      llvm::cl::desc("The persistent kernel's exchange between blocks: flags "
                     "or barrier"),
      llvm::cl::init("flags")};
  Option<std::string> weights{
      *this, "weights",
      llvm::cl::desc("Where the persistent kernel keeps the recurrent "
                     "weights: registers (where they fit) or shared"),
      llvm::cl::init("registers")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("The persistent kernel's recurrent products: f32 or bf16 "
                     "(tensor cores, f32 accumulation)"),
      llvm::cl::init("f32")};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("The GPU the kernels are for (sm_80, sm_90): its shared "
                     "memory bounds the persistent kernel's blocks"),
      llvm::cl::init("sm_80")};
};
void buildGPUPipeline(mlir::OpPassManager &pm,
                      const GPUPipelineOptions &options);

/// Registers the pipelines above under their names.
void registerPipelines();

} // namespace lstm_opt

#endif // LSTM_OPT_PIPELINES_PIPELINES_H

//===- CPUBackend.h - compile a model for this CPU --------------*- C++ -*-===//
//
// The CPU target: the pass pipeline from the onnx/rnn dialects down to the
// LLVM dialect, execution through MLIR's ExecutionEngine (JIT), and AOT
// output (object file or shared library with a C header).
//
// Calling convention of the compiled model (docs/RuntimeABI.md): one entry
// `lstm_opt_model` with every graph input and then every graph output as a
// strided memref descriptor, through MLIR's C interface
// `_mlir_ciface_lstm_opt_model(desc *in..., desc *out...)`. All shapes are
// static: a model is compiled for the input shapes it will run with.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TARGET_CPU_CPUBACKEND_H
#define LSTM_OPT_TARGET_CPU_CPUBACKEND_H

#include "lstm-opt/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace lstm_opt::cpu {

struct CPUOptions {
  /// Threads the hidden blocks of each layer are split across (OpenMP);
  /// 1 = sequential code with no OpenMP runtime.
  unsigned threads = 1;
  /// Code linked beside this model (a stream's block entry, which reads
  /// this model's thread setting) has OpenMP teams: the setting then starts
  /// at `threads` and takes any count even where this model has none.
  bool otherTeams = false;
  /// Rows per register tile of the generated GEMMs; 0 = automatic.
  int64_t batchTile = 0;
  /// Steps per chunk of the generated input GEMM; 0 = automatic.
  int64_t gemmChunkSteps = 0;
  /// The recurrent layers' weight precision: "f32" (the model's numbers),
  /// "bf16" (weights stored as bf16, x and h rounded to bf16 for the
  /// products; accumulation, gates and states f32) or "int8" (weights int8
  /// per gate row, x and h quantized per row and step).
  std::string precision = "f32";
  /// Per-layer precisions, "NODE=PRECISION" each: the layer whose ONNX node
  /// (any node it was fused from) is NODE runs at PRECISION, whatever
  /// `precision` and its own lstm_opt.precision say.
  std::vector<std::string> layerPrecisions;
  /// Layers the model itself quantizes (com.microsoft.DynamicQuantizeLSTM)
  /// run on the int8 kernels; false (a precision the user chose) runs them
  /// at `precision` like every other layer.
  bool quantizedInt8 = true;
  /// The model's state pairs: "" (none), "auto" (found from the graph: an
  /// input that becomes a recurrent layer's initial state and the output
  /// computed from that layer's final state, of the same type), or
  /// "IN=OUT[,IN=OUT...]" by graph input and output names.
  std::string statePairs;
  /// The CPU the code is compiled for: "" or "host" (this machine, with the
  /// features it has), or an LLVM CPU name of this machine's architecture
  /// (x86-64: x86-64-v3 for AVX2, x86-64-v4 for AVX-512, znver3, znver4,
  /// sapphirerapids, ...), so that code compiled here runs on that CPU. The
  /// kernels' vector width and register tile follow from it (targetVector).
  std::string targetCPU;
  /// The target triple: "" (this machine's) or another one, e.g.
  /// aarch64-linux-gnu, to cross-compile (object files, assembly, and a .so
  /// when a C compiler for that triple, <triple>-gcc, is installed). With a
  /// foreign triple `targetCPU` names a CPU of that architecture ("generic"
  /// when empty).
  std::string targetTriple;
  /// Run recognition first (rnn-recognize-cells, roll, pair); off when the
  /// input already holds rnn layers.
  bool recognize = true;
  /// Run the recurrent layers cuDNN can run exactly through the cuDNN runtime
  /// (convert-rnn-to-cudnn; layers are stacked first); the rest stays on the
  /// CPU. `cudnnDataType` is f32 or f16, `cudnnAlgo` auto, standard,
  /// persist-static or persist-small-h.
  bool cuda = false;
  std::string cudnnDataType = "f32";
  std::string cudnnAlgo = "auto";
  /// Lower the recurrent layers with convert-rnn-to-gpu{mapping=cpu} first:
  /// the generated GPU kernel bodies run in scf.parallel loops (a test of
  /// their numerics, not a fast path).
  bool gpuKernelsOnCPU = false;
  /// Its recurrence kernel: auto, step or persistent (also for gpuKernels).
  std::string gpuKernelsDesign = "auto";
  /// The persistent kernel's hidden units per block (0: chosen per layer).
  int64_t gpuUnitsPerBlock = 0;
  /// With gpuKernels: the layers cuDNN runs faster on gpuChip (by the table
  /// measured there) go through the cuDNN runtime instead.
  bool gpuLayerChoice = false;
  /// How its blocks exchange h: flags or barrier.
  std::string gpuGridSync = "flags";
  /// Where its weights stay: registers (where they fit) or shared.
  std::string gpuWeights = "registers";
  /// Run the recurrent layers as generated GPU kernels
  /// (convert-rnn-to-gpu{mapping=gpu}): the gpu.module is lowered with
  /// MLIR's NVVM passes and embedded in the host code as a gpu.binary, the
  /// host side (gpu-to-llvm) calls libLstmOptGPURuntime's mgpu* functions.
  /// `lstm-opt --target=gpu -o m.so`, `lstm-run --device=gpu`.
  bool gpuKernels = false;
  /// A .so for --target=cudnn|gpu: copy the project's runtime library it
  /// needs (libLstmOptCUDNNRuntime / libLstmOptGPURuntime) next to it, where
  /// its $ORIGIN rpath finds it, so that the folder can be deployed alone.
  bool bundleRuntime = false;
  /// sm_80 or sm_90.
  std::string gpuChip = "sm_80";
  /// gpu-module-to-binary's format: fatbin (cubin + PTX; MLIR runs the
  /// toolkit's ptxas and fatbinary), bin (cubin) or isa (PTX text, compiled
  /// by the driver when the module is loaded).
  std::string gpuBinaryFormat = "fatbin";
};

/// True if this build has the cuDNN runtime library (LSTM_OPT_ENABLE_CUDNN).
bool haveCUDNNRuntime();
/// True if the cuDNN runtime finds a usable CUDA device (false without the
/// runtime).
bool cudaDeviceAvailable();
/// True if this build has the GPU kernels' runtime (libLstmOptGPURuntime,
/// the mgpu* functions; built when the CUDA toolkit is found).
bool haveGPURuntime();
/// True if the GPU runtime loads (it needs the CUDA driver) and finds a
/// usable CUDA device (false without the runtime).
bool gpuDeviceAvailable();

/// The entry point's name in the compiled code.
constexpr const char *kEntryName = "lstm_opt_model";
/// `void lstm_opt_model_packed(void **descs)`: the entry with an array of
/// descriptor pointers (inputs, then outputs).
constexpr const char *kPackedEntryName = "lstm_opt_model_packed";
/// A C string: the model's signature as JSON ({"inputs": [{"name", "dtype",
/// "shape"}...], "outputs": [...]}).
constexpr const char *kSignatureSymbol = "lstm_opt_model_signature";
/// `int32_t lstm_opt_model_threads`: the OpenMP team size the model's
/// parallel loops use (the compile-time --threads; 1 when it has none).
constexpr const char *kThreadsSymbol = "lstm_opt_model_num_threads";
/// `int32_t lstm_opt_model_set_threads(int32_t n)`: sets it (n < 1 counts as
/// 1; no effect on a model without parallel loops), returns the count now
/// in effect.
constexpr const char *kThreadsSetterName = "lstm_opt_model_set_threads";
/// `int32_t lstm_opt_model_threads(void)`: the count in effect.
constexpr const char *kThreadsGetterName = "lstm_opt_model_threads";
/// `const char *lstm_opt_model_cpu_check(void)` in a compiled .so: null when
/// this CPU has every instruction-set feature the code was compiled for,
/// else a message naming the ones it lacks. Runners call it before running.
constexpr const char *kCPUCheckSymbol = "lstm_opt_model_cpu_check";

/// The C source of kCPUCheckSymbol for `options`' target (x86-64: the
/// vector and bit-manipulation extensions of the target CPU, checked with
/// __builtin_cpu_supports; other architectures: nothing to check).
std::string cpuCheckSource(const CPUOptions &options);

/// One graph input or output of a compiled model.
struct TensorSig {
  std::string name;
  std::string dtype; // numpy name: float32, int64, ...
  std::vector<int64_t> shape;
  /// An input the model was specialised to (--bind): the only values it
  /// may be run with. Empty otherwise.
  std::vector<int64_t> bound;
  size_t elementSize() const;
  int64_t numElements() const;
};

struct ModelSignature {
  std::vector<TensorSig> inputs, outputs;
  /// The model's state pairs (--state): an input and the output the next
  /// call reads as that input, by index into `inputs` and `outputs`. A
  /// compiled library with state pairs has the lstm_opt_stream_* API.
  std::vector<std::pair<unsigned, unsigned>> state;
  bool isStateInput(unsigned i) const;
  bool isStateOutput(unsigned o) const;
};

/// A second entry point of a stream library: the model's batched form for
/// `chunks` chunks per call (onnx-stream-to-sequence), which run_chunks
/// calls for each whole block of `chunks` (--stream-block).
struct StreamBlock {
  int64_t chunks = 0;
  ModelSignature sig;
};

/// The C source of the lstm_opt_stream_* API of a model with state pairs
/// (`sig.state`), compiled into its library beside the CPU check; "" for a
/// model without. With `block`, run_chunks runs whole blocks of
/// block->chunks through `lstm_opt_block_packed`. See docs/RuntimeABI.md.
std::string streamSource(const ModelSignature &sig,
                         const StreamBlock *block = nullptr);

/// Parses what kSignatureSymbol holds.
llvm::Expected<ModelSignature> parseSignatureJSON(llvm::StringRef text);

/// The CPU pipeline's options (lstm_opt::CPUPipelineOptions) for
/// `options`' target: its vector width and register count from the target
/// machine (targetVector).
void setPipelineOptions(const CPUOptions &options,
                        lstm_opt::CPUPipelineOptions &pipeline);
/// The passes from an imported model to the LLVM dialect
/// (lstm_opt::buildCPUPipeline with setPipelineOptions). With gpuKernels,
/// lowerToLLVMDialect runs its three stages apart: the GPU host functions
/// (gpu.alloc, gpu.launch_func, ... on memrefs) are set aside while buffers
/// are deallocated, which rejects ops with unknown memory effects.
void buildCPUPipeline(mlir::OpPassManager &pm, const CPUOptions &options);

/// Checks the module has one graph function with static shapes, records its
/// signature, renames it to `kEntryName` and lowers everything to the LLVM
/// dialect. Diagnostics go to the context's handler.
mlir::FailureOr<ModelSignature> lowerToLLVMDialect(mlir::ModuleOp module,
                                                   const CPUOptions &options);

/// Whether a module lowered by lowerToLLVMDialect runs OpenMP teams (whose
/// size is the model's thread setting).
bool hasOpenMPTeams(mlir::ModuleOp module);

/// The vector shape of the kernels for a target: f32 lanes per register and
/// number of vector registers (AVX-512 16/32, AVX2 8/16, SSE 4/16, NEON 4/32),
/// and the private (L2) and level-1 data caches per core the kernels assume:
/// this machine's when compiling for it, else 1 MiB and 32 KiB.
struct TargetVector {
  int64_t lanes = 16;
  int64_t registers = 32;
  int64_t cacheBytes = 1 << 20;
  /// AVX512_BF16 (vdpbf16ps) with 16 lanes: bf16 layers use it.
  bool bf16Dot = false;
  /// AVX512_VNNI with 16 lanes, AVX-VNNI with 8: int8 layers use vpdpbusd.
  /// AArch64 (`arm`): BF16 (bfdot) and DotProd (sdot) at 4 lanes.
  bool int8Dot = false;
  bool arm = false;
  /// Without int8Dot: int8 layers use pmaddwd on pairs of k (x86: SSE2 at 4
  /// lanes, AVX2 at 8, AVX512BW at 16), or smull + saddlp (AArch64).
  bool int8PairDot = false;
  int64_t l1CacheBytes = 32 << 10;
};
llvm::Expected<TargetVector> targetVector(const CPUOptions &options);

/// Writes an object file (or, for a path ending in .s, assembly) for the
/// CPU `options.targetCPU` names (default: this host's).
/// With `blockEntry`, the module is a stream's block form: its entry
/// `lstm_opt_model_packed` is renamed `lstm_opt_block_packed` and every
/// other symbol it defines made internal, so that it links beside the
/// model's own object.
/// With `onlyExport`, that symbol is the only one the object defines
/// globally (everything else internal) and no function may call a library
/// routine LLVM would otherwise form (`no-builtins`: memset, memcpy): the
/// freestanding object of an IREE executable (lowerLayersToIREEKernels).
mlir::LogicalResult emitObjectFile(mlir::ModuleOp llvmModule,
                                   llvm::StringRef path,
                                   const CPUOptions &options = {},
                                   bool blockEntry = false,
                                   llvm::StringRef onlyExport = {});
/// convert-rnn-to-iree-kernels (--target=iree): each recurrent layer of
/// `module` with constant weights and static shapes becomes an IREE
/// `flow.dispatch` of a `stream.executable` that calls the layer's CPU
/// kernel (convert-rnn-to-cpu's, one thread, at `options`' precision and
/// target CPU), compiled to the freestanding object
/// `<objectDir>/<stem>.layer<N>.o` that IREE links into its embedded
/// executable. Other layers stay, with a remark. Needs unregistered
/// dialects allowed (the IREE ops are generic).
mlir::LogicalResult lowerLayersToIREEKernels(mlir::ModuleOp module,
                                             const CPUOptions &options,
                                             llvm::StringRef objectDir,
                                             llvm::StringRef stem);
/// Registers convert-rnn-to-iree-kernels (lstm-opt's own pass registry).
void registerIREEKernelsPass();

/// Writes a shared library (object linked by the system compiler driver)
/// and, next to it, the C header `<stem>.h` (see cHeader).
/// With `blockModule` (lowered like the model, `block` its signature), the
/// library's run_chunks batches whole blocks through it.
mlir::LogicalResult emitSharedLibrary(mlir::ModuleOp llvmModule,
                                      const ModelSignature &sig,
                                      const CPUOptions &options,
                                      llvm::StringRef path,
                                      mlir::ModuleOp blockModule = {},
                                      const StreamBlock *block = nullptr);
/// The C header declaring the entry point of `sig`.
std::string cHeader(const ModelSignature &sig);

/// A compiled model: compiled in memory (create), or a shared library
/// written by `lstm-opt --target=cpu -o m.so` (load).
class JITModel {
public:
  static llvm::Expected<std::unique_ptr<JITModel>>
  create(mlir::ModuleOp llvmModule, ModelSignature sig,
         const CPUOptions &options);
  static llvm::Expected<std::unique_ptr<JITModel>> load(llvm::StringRef path);
  ~JITModel();

  const ModelSignature &signature() const { return sig; }
  /// Runs once; `inputs`/`outputs` are contiguous buffers in signature
  /// order with the signature's shapes.
  llvm::Error run(llvm::ArrayRef<const void *> inputs,
                  llvm::ArrayRef<void *> outputs);
  /// Sets the thread count of the model's parallel loops
  /// (kThreadsSetterName); returns the count in effect (1 for a model
  /// without parallel loops).
  unsigned setThreads(unsigned n);
  /// The thread count in effect (kThreadsGetterName).
  unsigned threads() const;

private:
  JITModel() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  ModelSignature sig;
  void (*entry)(void **) = nullptr;
  int32_t (*threadSetter)(int32_t) = nullptr;
  int32_t (*threadGetter)() = nullptr;
};

} // namespace lstm_opt::cpu

#endif // LSTM_OPT_TARGET_CPU_CPUBACKEND_H

//===- Passes.td - lstm-opt conversion passes --------------*- tablegen -*-===//

#ifndef LSTM_OPT_CONVERSION_PASSES_TD
#define LSTM_OPT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRNNToONNXPass : Pass<"convert-rnn-to-onnx", "mlir::ModuleOp"> {
  let summary = "Lower rnn layers and cells to standard ONNX LSTM/GRU/RNN ops";
  let description = [{
    `rnn.sequence` becomes `onnx.LSTM`/`onnx.GRU`/`onnx.RNN` (ONNX gate order
    i,o,f,c / z,r,h, bias [Wb, Rb], layout 0, direction, activations, clip),
    with the weights converted at compile time into new initializers; an
    `rnn.stack` becomes one such node per layer. A cell not rolled into a
    layer, or a hoisted projection/recurrence, is an error (ONNX has no such
    op). Everything else is untouched.
    See docs/passes/convert-rnn-to-onnx.md.
  }];
  let dependentDialects = ["lstm_opt::onnx::ONNXDialect"];
}

def ConvertRNNToLinalgPass : Pass<"convert-rnn-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower rnn layers to linalg, tensor, arith, math and scf on tensors";
  let description = [{
    The portable lowering, for compiler stacks that take upstream MLIR
    (IREE's `--iree-input-type=none`). Per direction of each `rnn.sequence`
    (or `rnn.input_projection` + `rnn.recurrence` pair): the hoisted input
    GEMM as one `linalg.matmul` over all `T*B` rows (the weights transposed
    at compile time, the biases added by a `linalg.generic`), then the time
    loop as an `scf.for` with the states and the output sequence as tensor
    `iter_args`: per step one `linalg.matmul` of h with every gate's
    recurrent weights at once (two for a GRU whose reset comes before its
    matmul) and one `linalg.generic` for the whole cell (activations, clip,
    cell and hidden update, sequence lengths). Directions, `sequence_lens`
    (a reverse direction reverses each row's first `len` steps before and
    after, as ONNX's ReverseSequence), clip and every ONNX activation are
    supported; f32 only. The gate math uses `math` ops (no approximation):
    the stack lowers them as it lowers a model's own activations.
    See docs/passes/convert-rnn-to-linalg.md.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect", "mlir::math::MathDialect",
    "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect"];
  let options = [
    Option<"unrollSteps", "unroll-steps", "int64_t", /*default=*/"0",
           "Write the steps of a layer of at most this many steps one after "
           "the other instead of an scf.for (0: always a loop): for stacks "
           "that run a host loop's iterations as separate dispatches">,
    Option<"ireeDispatch", "iree-dispatch", "bool", /*default=*/"false",
           "Put each direction's time loop in one IREE `flow.dispatch.region` "
           "(its states carried in place, its recurrent matmul given an "
           "undistributed lowering config), so that IREE runs the whole "
           "recurrence as one dispatch instead of one per step. The module "
           "then holds IREE's ops and attributes (unregistered here: the "
           "context must allow unregistered dialects)">,
  ];
}

def ONNXStripAttributesPass : Pass<"onnx-strip-attributes", "mlir::ModuleOp"> {
  let summary = "Drop the onnx.* attributes the importer puts on the module, functions and ops";
  let description = [{
    The importer records the model's provenance in discardable `onnx.*`
    attributes (`onnx.name` on graph inputs and outputs, `onnx.opset_import`,
    `onnx.producer_name`, ... on the module, a node's name on its ops). Once
    nothing of the onnx dialect is left, this removes them, so that a stack
    that does not know the dialect reads the module (the last pass of
    `lstm-opt-linalg`).
  }];
}

def LinalgSignlessIntegersPass : Pass<"linalg-signless-integers", "mlir::ModuleOp"> {
  let summary = "Make the unsigned and signed integer types convert-onnx-to-linalg leaves signless";
  let description = [{
    `convert-onnx-to-linalg` keeps ONNX's `uint8`/`int8` element types on
    tensors (`tensor<...xui8>`: quantized weights, zero points, a model's
    `uint8` inputs) and states their signedness in the ops that read them
    (`arith.extui` or `arith.extsi` after an `unrealized_conversion_cast` to
    the signless type). Upstream `arith` and stacks such as IREE take only
    signless integers: this pass gives every value, block argument,
    function signature and constant the signless type of the same width
    (constants keep their bits) and drops the casts that become identities.
    The numbers do not change. A pass of `lstm-opt-linalg`, before
    `onnx-strip-attributes`.
  }];
}

def ConvertONNXToLinalgPass : Pass<"convert-onnx-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower the remaining onnx ops to linalg on tensors, tensor, arith and math";
  let description = [{
    Lowers the onnx ops a model keeps around its recognised layers (constants
    and initializers, shape arithmetic, Reshape/Squeeze/Unsqueeze/Flatten,
    Transpose, Slice, Concat, Split, Gather, Expand, Cast, elementwise math,
    MatMul/Gemm, Softmax/LogSoftmax, Clip) to upstream dialects at the tensor
    level, ready for one-shot bufferization. Shapes must be static; integer
    shape inputs must be compile-time constants (constant shape arithmetic
    is folded). `rnn` ops, the function signatures and returns are left
    alone. Any other op (`onnx.node`, `onnx.LSTM`, ...) is an error naming
    the ONNX node. See docs/passes/convert-onnx-to-linalg.md.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvertRNNToCPUPass : Pass<"convert-rnn-to-cpu", "mlir::ModuleOp"> {
  let summary = "Lower rnn layers to generated CPU kernels (hoisted GEMM + fused step)";
  let description = [{
    Each `rnn.sequence` (or `rnn.input_projection` + `rnn.recurrence` pair)
    becomes a call to a generated function on memrefs: per direction one
    hoisted input GEMM over all `T*B` rows (in chunks of steps where
    that scratch would be large: `gemm-chunk-steps`), then per time step one recurrent
    GEMM fused with all of the cell's pointwise math (biases, activations,
    clip, cell and hidden update, sequence lengths). Weights are packed at
    compile time into `memref.global` constants in the kernel's layout
    `[D][H/V][K][G][V]` (V = `vector-width`); the V-wide hidden blocks are
    split across threads: a layer whose steps are large enough runs on one
    OpenMP team (`threads` > 1) that meets at a barrier after each step; a
    large input GEMM of a layer too small to share is an `scf.parallel`. See
    docs/passes/convert-rnn-to-cpu.md.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect", "mlir::omp::OpenMPDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::x86vector::X86VectorDialect", "mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"batchTile", "batch-tile", "int64_t", /*default=*/"0",
           "Rows per register tile of the GEMMs (1..8); 0 = as many as the "
           "vector registers hold (32 registers: LSTM 6, GRU 8; 16: LSTM 2, "
           "GRU 3)">,
    Option<"blockTile", "block-tile", "int64_t", /*default=*/"0",
           "Hidden blocks per register tile of a step's recurrent GEMM, "
           "all of the batch's rows in the tile: 0 = automatic (several "
           "where one block's rows x gates accumulators are fewer than 12 "
           "and a thread's recurrent weights fit in `l1-cache-bytes`; else "
           "1); 1 = one block (k split into partial sums where the chains "
           "are few); N = N blocks, where N divides the blocks and the tile "
           "fits in the registers (else the automatic choice)">,
    Option<"gemmChunkSteps", "gemm-chunk-steps", "int64_t", /*default=*/"0",
           "Steps per chunk of the hoisted input GEMM: each chunk's "
           "projections are computed just before its steps, into a scratch "
           "of that many steps. 0 = automatic (one GEMM over the sequence "
           "where its projections take at most 32 KiB, else chunks of about "
           "32 KiB and at least 32 rows); N >= T: one GEMM">,
    Option<"l1CacheBytes", "l1-cache-bytes", "int64_t", /*default=*/"32768",
           "Level-1 data cache per core of the target, in bytes: where a "
           "thread's recurrent weights fit in it, block-tile=0 may tile "
           "several hidden blocks; the CPU backend sets it from the host "
           "(32768, the smallest of the x86 and Arm cores, for other "
           "targets)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register of the target: 16 (AVX-512), "
           "8 (AVX2), 4 (SSE, NEON); the CPU backend sets it from the target">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"32",
           "Vector registers of the target (AVX-512 and NEON 32, AVX2 16); "
           "the register tile is sized to fit them">,
    Option<"parallelMinWork", "parallel-min-work", "int64_t",
           /*default=*/"65536",
           "Split a loop over hidden blocks across threads (scf.parallel, "
           "or the layer's OpenMP team) only when it does at least this "
           "many FMAs">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads of the OpenMP team a layer whose steps are large enough "
           "to share runs on (its initial size, capped at the layer's "
           "hidden blocks); 1: no OpenMP">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "The layers' weight precision: f32; bf16 (weights stored as "
           "bf16, x and h rounded to bf16 for the products, accumulation, "
           "gates and states in f32); or int8 (weights int8 with one scale "
           "per gate row, x and h quantized per row and step with a scale "
           "from their range, integer products, gates and states in f32); "
           "a layer's `lstm_opt.precision` attribute overrides it">,
    ListOption<"layerPrecisions", "layer-precision", "std::string",
               "Per-layer precisions, NODE=f32|bf16|int8 each: the layer whose "
               "location names the ONNX node NODE (any node it was fused "
               "from) runs at that precision, over `precision` and its own "
               "`lstm_opt.precision`; a NODE that names no layer is an "
               "error">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "bf16 layers at 16 lanes: the products as AVX512_BF16 vdpbf16ps "
           "(x86vector.avx512.dot), one per gate and pair of k (with "
           "dot-isa=aarch64, at 4 lanes: BF16 bfdot); the CPU backend sets "
           "it where the target CPU has AVX512_BF16 (AArch64: BF16)">,
    Option<"int8Dot", "int8-dot", "bool", /*default=*/"false",
           "int8 layers at 16 or 8 lanes: the products as VNNI vpdpbusd "
           "(u8 activations, s8 weights, i32 sums), one per gate and four k "
           "(with dot-isa=aarch64, at 4 lanes: DotProd sdot, s8 "
           "activations); without it the int8 weights are widened to f32 "
           "in registers (f32 FMAs, exact integer products); the CPU "
           "backend sets it where the target CPU has AVX512_VNNI (16 "
           "lanes) or AVX-VNNI (8 lanes), or AArch64's DotProd">,
    Option<"int8PairDot", "int8-pair-dot", "bool", /*default=*/"false",
           "int8 layers without int8-dot: the products on pairs of k, exact "
           "32-bit sums: x86's pmaddwd (SSE2 at 4 lanes, AVX2 at 8, "
           "AVX512BW at 16; the weights sign-extended to 16 bits in "
           "registers, 16-bit operands; no saturation, unlike pmaddubsw), "
           "with dot-isa=aarch64 NEON's smull and saddlp at 4 lanes; "
           "without it the weights are widened to f32 (f32 FMAs); the CPU "
           "backend sets it for x86 targets with those extensions and for "
           "AArch64">,
    Option<"dotIsa", "dot-isa", "std::string", /*default=*/"\"x86\"",
           "Whose dot-product instructions bf16-dot and int8-dot mean: x86 "
           "(vdpbf16ps, vpdpbusd) or aarch64 (bfdot, sdot); the CPU backend "
           "sets it from the target triple">,
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"1048576",
           "Private cache per core (L2) of the target, in bytes: where a "
           "thread's share of a layer's recurrent weights is larger, odd "
           "steps read them backwards to start on what is still cached; "
           "0 = never; the CPU backend sets it from the target">,
  ];
}

def CPUApproximateMathPass : Pass<"cpu-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replace exp/tanh/log/... by MLIR's polynomial approximations";
  let description = [{
    Rewrites scalar and vector `math` ops (exp, tanh, log, log1p, erf, ...)
    on f32 into MLIR's polynomial approximations, so that the generated
    kernels' activations stay vectorised instead of becoming libm calls.
    Part of the CPU pipeline, after convert-rnn-to-cpu.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def CPUVectorizeContractionsPass : Pass<"cpu-vectorize-contractions", "mlir::ModuleOp"> {
  let summary = "Register-tile and vectorise f32 contractions on buffers";
  let description = [{
    The multiply-adds outside the recurrent layers (MatMul, Gemm, Conv after
    its im2col) as register tiles: every `linalg` op on static f32 buffers
    that computes `out += a * b` through projected permutations, whose
    output's last dimension is a parallel loop the inputs read contiguously
    (or not at all), is tiled to output tiles of `Ti` rows by `Tj` lanes
    (Tj up to 4 vectors of `lanes`, Ti as many rows as `registers` hold),
    the reductions not tiled; each tiled loop's partial last tile is peeled
    off, so that every tile has a static shape; each tile becomes a loop nest
    over its reductions carrying the [Ti, Tj] accumulator in registers, one
    FMA of a broadcast element by a row of the other operand per row and
    step. Part of the CPU pipeline, before convert-linalg-to-loops.
    See docs/passes/cpu-vectorize-contractions.md.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes of the target's vectors (16: AVX-512, 8: AVX2)">,
    Option<"registers", "registers", "int64_t", /*default=*/"32",
           "The target's vector registers">,
    Option<"parallelMinWork", "parallel-min-work", "int64_t", /*default=*/"0",
           "A contraction of at least this many multiply-adds has its "
           "outermost loop of tiles as scf.parallel (OpenMP threads in the "
           "CPU pipeline); 0: never">,
  ];
}

def CPUExpandCopiesPass : Pass<"cpu-expand-copies", "mlir::ModuleOp"> {
  let summary = "Strided memref.copy as linalg.copy, so that it becomes loops";
  let description = [{
    Rewrites every `memref.copy` whose source or target is not an
    identity-layout memref into `linalg.copy`, which
    `convert-linalg-to-loops` turns into a loop nest. Copies of contiguous
    buffers stay (they become a `memcpy`). Without it, `finalize-memref-to-llvm`
    lowers a strided copy to a call to `memrefCopy` in MLIR's C runner
    utilities, a library a compiled model would then need wherever it runs
    (and one that does not exist for a cross-compiled target).
    Part of the CPU pipeline, before convert-linalg-to-loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def CPUDistinctResultsPass : Pass<"cpu-distinct-results", "mlir::ModuleOp"> {
  let summary = "A value a function returns twice is returned once more as a copy";
  let description = [{
    A graph may name one value as two outputs (an output and an `Identity`
    of it, or two equal computations that CSE merged). After bufferization
    `buffer-results-to-out-params` gives every result its own out-parameter
    and cannot handle one buffer returned twice. Each repeated tensor
    result becomes `bufferization.alloc_tensor() copy(%v)`: the caller's
    two buffers both get the value. Part of the CPU pipeline, right before
    one-shot bufferization.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def CPUForwardOutParamsPass : Pass<"cpu-forward-out-params", "mlir::ModuleOp"> {
  let summary = "Results written straight into the out-parameters, through reshapes";
  let description = [{
    After `buffer-results-to-out-params`, a result computed into an
    allocation and returned through `memref.collapse_shape` or
    `memref.expand_shape` (a layer's `[T, 1, B, H]` output returned as
    ONNX's `[T, B, H]`) is copied whole into the out-parameter. When the
    allocation is static, has no use after the copy, and the out-parameter
    no other use, the allocation becomes the inverse reshape of the
    out-parameter and the copy is erased: the kernels write the caller's
    buffer. Part of the CPU pipeline, right after
    `buffer-results-to-out-params`.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ConvertRNNToCUDNNPass : Pass<"convert-rnn-to-cudnn", "mlir::ModuleOp"> {
  let summary = "Lower rnn layers and stacks to calls into the cuDNN runtime";
  let description = [{
    Each `rnn.sequence` and `rnn.stack` cuDNN can run exactly becomes one
    call `lstm_opt_rnn_forward_memref` into the project's cuDNN runtime
    (include/lstm-opt/Runtime/CUDNNRuntime.h), with the canonical weights as
    flat constant globals (converted into cuDNN's weight space once, on the
    first call) and a constant config (cell, directions, layers, sizes, data
    type, algorithm, layer id). Layers cuDNN cannot run exactly (reverse
    only, GRU with linear_before_reset = 0, clip, non-default activations)
    are left, with a remark, for convert-rnn-to-cpu.
    See docs/passes/convert-rnn-to-cudnn.md.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
    "mlir::tensor::TensorDialect"];
  let options = [
    Option<"dataType", "data-type", "std::string", /*default=*/"\"f32\"",
           "f32, or f16 (half data, Tensor Core math)">,
    Option<"algo", "algo", "std::string", /*default=*/"\"auto\"",
           "auto (chosen per layer on the GPU at the first call), standard, "
           "persist-static (small batch) or persist-small-h (small hidden "
           "size)">,
    Option<"onlyFasterOn", "only-faster-on", "std::string", /*default=*/"\"\"",
           "A chip (sm_90): lower only the layers cuDNN runs faster than the "
           "generated GPU kernels there, by the measured table, and leave the "
           "others for convert-rnn-to-gpu with a remark (default: every "
           "layer)">,
  ];
}

def ConvertRNNToGPUPass : Pass<"convert-rnn-to-gpu", "mlir::ModuleOp"> {
  let summary = "Lower rnn layers to generated GPU kernels (or their CPU-mapped twin)";
  let description = [{
    Each `rnn.sequence` becomes a call to a generated host function on
    memrefs that runs, per layer, a hoisted input-projection kernel and the
    recurrence: one fused gate kernel launch per time step (each thread one
    (batch row, hidden unit): its G dot products over H, then the whole
    cell epilogue), or, for batch <= 4, one persistent kernel for all steps
    (each block keeps its units' recurrent rows for the whole sequence, in
    registers where they fit, each group of lanes one unit that runs its own
    cell, else in shared memory, and splits each dot product over the lanes
    of a warp; one block per direction, with h in shared memory, when a
    direction fits, else one block per SM, the blocks handing h to each
    other as (value, step) words, or through a grid barrier with
    `grid-sync=barrier`). With
    `mapping=gpu` the
    kernels are `gpu.func`s of one `gpu.module` launched by
    `gpu.launch_func` on `gpu.alloc`'ed device buffers; with `mapping=cpu`
    the same kernel bodies are placed in `scf.parallel` loops over
    (blocks, threads) of a plain function, for testing on the CPU.
    Layers with `sequence_lens` are left, with a remark, for
    `convert-rnn-to-cpu`. See docs/passes/convert-rnn-to-gpu.md.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::gpu::GPUDialect",
    "mlir::LLVM::LLVMDialect", "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"];
  let options = [
    Option<"mapping", "mapping", "std::string", /*default=*/"\"gpu\"",
           "gpu (gpu.module + gpu.launch_func) or cpu (the same kernel bodies "
           "in scf.parallel loops)">,
    Option<"design", "design", "std::string", /*default=*/"\"auto\"",
           "Recurrence kernel: auto (persistent for batch <= 4 when it fits), "
           "step (one fused launch per step) or persistent">,
    Option<"maxCoResidentBlocks", "max-blocks", "int64_t", /*default=*/"48",
           "Largest grid the persistent kernel may use, one block per SM "
           "(the runtime launches it cooperatively: a GPU that cannot hold "
           "it refuses the launch)">,
    Option<"gridSync", "grid-sync", "std::string", /*default=*/"\"flags\"",
           "How the blocks of a persistent kernel hand h to each other: flags "
           "(each value written with its step in one 64-bit word, read until "
           "the step matches) or barrier (a grid barrier on a global counter, "
           "then plain loads)">,
    Option<"weights", "weights", "std::string", /*default=*/"\"registers\"",
           "Where the persistent kernel keeps the recurrent weights: registers "
           "(each lane its share of its unit's gate rows, for the whole "
           "sequence, where they fit; else shared memory) or shared (always "
           "shared memory)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "The persistent kernel's recurrent products: f32, or bf16 (the "
           "recurrent weights and h rounded to bf16, multiplied on the tensor "
           "cores by mma.sync m16n8k16 with f32 accumulation; the input "
           "projection, gates, cell state and outputs stay f32). A layer the "
           "bf16 design cannot run stays f32, with a remark">,
    Option<"unitsPerBlock", "units-per-block", "int64_t", /*default=*/"0",
           "Hidden units per block of the persistent kernel (0: one block per "
           "direction when it fits, else as many blocks as max-blocks allows)">,
    Option<"sharedBytes", "shared-bytes", "int64_t", /*default=*/"49152",
           "Shared memory a block of the persistent kernel may use; above "
           "48 KiB it is dynamic shared memory (opt-in: sm_80 up to 166912, "
           "sm_90 up to 232448)">,
  ];
}

#endif // LSTM_OPT_CONVERSION_PASSES_TD

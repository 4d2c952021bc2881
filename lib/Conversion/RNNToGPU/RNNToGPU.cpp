//===- RNNToGPU.cpp - rnn layers -> generated GPU kernels -----------------===//
//
// Every rnn.sequence becomes a call to a host function generated for it, on
// memrefs, that launches kernels generated here:
//
//   init       h[0] = h0 (or 0), c = c0 (or 0)          D*B*H threads
//   proj       P[d][t*B+b][g][j] = X[t*B+b] . Wt[d][:, g, j] + bias
//   recurrence, one of two designs:
//     step     one launch per time step s, D*B*H threads; thread (d, b, j):
//              G dot products h[s%2][d][b][:] . Rt[d][:, g, j], then the
//              cell epilogue; writes h[(s+1)%2][d][b][j], c, Y[t][d][b][j]
//              (GRU with the reset before the GEMM: two launches per step)
//     persist  batch <= 4: one launch for all steps; block (d, slice of U
//              units) copies Rt[d][:, :, slice] into shared memory once,
//              threads (b, unit). When a direction's whole matrix fits
//              (U = H) one block per direction, which keeps h in shared
//              memory too and syncs each step with its own barrier; else
//              after each step (each phase) a grid-wide software barrier on
//              a global counter. Past 48 KiB, dynamic shared memory.
//   final      hn = h[T%2], cn = c
//
// Weights are transposed at compile time to `[D][K][G][H]` (unit fastest)
// so that the threads of a warp, adjacent hidden units, read adjacent words.
//
// The kernel BODIES are built once, by functions that get their ids (block,
// thread) and operands as values. `mapping=gpu` wraps them in `gpu.func`s of
// one gpu.module and launches them with `gpu.launch_func` on `gpu.alloc`'ed
// device buffers (inputs and weights copied in with `gpu.memcpy`, outputs
// copied back). `mapping=cpu` places the same bodies inside
// `scf.parallel (block, thread)` loops of a plain function on the host's
// memrefs; the grid barrier of the persistent kernel becomes the end of one
// parallel loop per step, its shared memory a [blocks][slice] buffer.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToGPU/RNNToGPU.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>

namespace lstm_opt {
#define GEN_PASS_DEF_CONVERTRNNTOGPUPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;
using namespace lstm_opt;

namespace {

std::string uniqueSymbol(SymbolTable &table, StringRef base) {
  std::string name = base.str();
  for (int n = 1; table.lookup(name); ++n)
    name = (base + "_" + Twine(n)).str();
  return name;
}

/// Threads per block of the one-dimensional kernels.
constexpr int64_t kBlock = 128;
/// How many steps of the recurrent dot products the GPU kernels unroll.
constexpr int64_t kUnrollK = 16;

using rnn::Activation;

using LayerSpec = rnn::LayerShape;

/// Gate-major `[D][G*H][K]` -> `[D][K][G][H]`.
std::vector<float> transposeWeights(ArrayRef<float> w, int64_t d, int64_t g,
                                    int64_t h, int64_t k) {
  std::vector<float> out(d * k * g * h);
  for (int64_t di = 0; di < d; ++di)
    for (int64_t gi = 0; gi < g; ++gi)
      for (int64_t j = 0; j < h; ++j)
        for (int64_t ki = 0; ki < k; ++ki)
          out[((di * k + ki) * g + gi) * h + j] =
              w[((di * g + gi) * h + j) * k + ki];
  return out;
}

enum class Mapping { GPU, CPU };

/// The sum of `v` over each group of `L` consecutive lanes (a power of two),
/// in every lane of the group: a butterfly of XOR shuffles, which every lane
/// of the warp takes part in (shfl.sync with the full mask). Partners add
/// the same two values, so all lanes of a group get the same bits.
Value butterflySum(ImplicitLocOpBuilder &b, Value v, int64_t L) {
  for (int64_t off = L / 2; off >= 1; off /= 2) {
    auto sh = gpu::ShuffleOp::create(
        b, v, arith::ConstantOp::create(b, b.getI32IntegerAttr(off)),
        arith::ConstantOp::create(b, b.getI32IntegerAttr(32)), gpu::ShuffleMode::XOR);
    v = arith::AddFOp::create(b, v, sh.getShuffleResult());
  }
  return v;
}

/// Unrolls `loop` (of `trips` steps) by the largest factor up to kUnrollK
/// that divides `trips` and is below it (so the loop, and its results, stay
/// in place). Each accumulator still sums in order: the results are
/// unchanged.
void unrollBelowTripCount(scf::ForOp loop, int64_t trips) {
  if (trips <= kUnrollK)
    return;
  int64_t factor = kUnrollK;
  while (trips % factor)
    --factor;
  if (factor > 1)
    (void)loopUnrollByFactor(loop, factor);
}

/// A relaxed (monotonic) load of `type` at GPU scope: ld.relaxed.gpu.
Value relaxedDeviceLoad(ImplicitLocOpBuilder &b, Type type, Value ptr,
                        unsigned alignment) {
  return LLVM::LoadOp::create(b, type, ptr, alignment, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/false,
                              /*isInvariantGroup=*/false,
                              LLVM::AtomicOrdering::monotonic, "device");
}

/// The split-K persistent kernel for U units per block: nbd blocks per
/// direction; each keeps the rows of its units' gates (rows = G * U, each
/// padded to Kp = H rounded up to L, at a stride of S floats) in shared
/// memory. A dot product (batch row, gate row) is split over L lanes (a
/// power of two up to a warp, at least 8 k each when H allows); NT threads
/// take the items `groups = NT / L` at a time. The state (h, and the GRU's
/// r*h) is in shared memory too: all of it with one block per direction
/// (slots h[2] and r*h), else the one vector the phase reads, refilled from
/// global memory after each grid barrier. `pre` holds the sums.
struct PersistGeometry {
  int64_t U = 0, nbd = 0, L = 1, Kp = 0, S = 0, rows = 0, NT = 0, groups = 0,
          stateN = 0, sharedFloats = 0;
  bool oneBlock = false;
  /// The register design: each group of L lanes is one unit and keeps its
  /// G gate rows in registers for the whole sequence (M = Kp / L weights of
  /// each row per lane), computes every gate against every batch row, and
  /// after the butterfly lane b runs the cell of batch row b itself, its c
  /// and h carried in registers from step to step. Shared memory holds only
  /// h, double-buffered; one barrier per step.
  bool regs = false;
  int64_t M = 0;
  /// The bf16 tensor-core design (see mmaGeometry): the register design's
  /// step loop, its dot products as mma.sync m16n8k16 tiles.
  bool mma = false;
  /// Units per 16-row tile (16 / G), tiles per block, warps per tile (the
  /// K split), 16-wide k tiles in all and per warp.
  int64_t UT = 0, TB = 0, KS = 0, KT = 0, KTW = 0;
};

/// Registers a thread of the register design needs, estimated: its weights,
/// its sums, the h values of one k, and the addresses and the cell's values
/// (72: ptxas used 218 for LSTM B4 H1024, against 148 for the first three).
int64_t registerDesignRegs(const LayerSpec &s, int64_t M) {
  return s.G * M + s.G * s.B + s.B + 72;
}

/// The registers a thread of an NT-thread block may use: an SM's four
/// sub-partitions have 16K registers each and hold a block's warps in turn,
/// allocated 8 registers a thread at a time, at most 255.
int64_t registerBudget(int64_t NT) {
  int64_t warpsPerPartition = llvm::divideCeil(llvm::divideCeil(NT, 32), 4);
  return std::min<int64_t>(255, 16384 / (warpsPerPartition * 32) / 8 * 8);
}

PersistGeometry persistGeometry(const LayerSpec &s, int64_t U,
                                bool allowRegs = false) {
  PersistGeometry g;
  g.U = U;
  g.nbd = llvm::divideCeil(s.H, U);
  g.oneBlock = g.nbd == 1;
  while (g.L < 32 && g.L * 2 * 8 <= s.H)
    g.L *= 2;
  if (allowRegs && !s.twoPhase() && s.B <= 8) {
    PersistGeometry r = g;
    while (r.L > 1 && U * r.L > 1024)
      r.L /= 2;
    // Lane b of a group runs the cell of batch row b.
    r.L = std::max<int64_t>(r.L, llvm::PowerOf2Ceil(s.B));
    r.Kp = llvm::alignTo(s.H, r.L);
    r.S = r.Kp;
    r.M = r.Kp / r.L;
    r.rows = s.G * U;
    r.NT = llvm::alignTo(std::max<int64_t>(U * r.L, 32), 32);
    r.groups = r.NT / r.L;
    r.stateN = 2 * s.B * r.Kp;
    r.sharedFloats = r.stateN;
    r.regs = true;
    if (U * r.L <= 1024 && registerDesignRegs(s, r.M) <= registerBudget(r.NT))
      return r;
  }
  g.Kp = llvm::alignTo(s.H, g.L);
  // Groups of L < 32 lanes in one warp read different rows at the same k:
  // a stride of Kp + L puts them in different banks.
  g.S = g.Kp + (g.L < 32 ? g.L : 0);
  g.rows = s.G * U;
  // An item is one gate row against every batch row (the weight loaded once
  // for all of them); a group takes about four items, so that the h values
  // a lane loads serve four rows too (shared-memory traffic, not the FMAs,
  // bounds a step).
  int64_t items = s.twoPhase() ? 2 * U : g.rows;
  g.NT = std::clamp<int64_t>(
      llvm::alignTo(std::max<int64_t>(llvm::divideCeil(items, 4) * g.L, s.B * U), 32), 128, 1024);
  g.groups = g.NT / g.L;
  g.stateN = (g.oneBlock ? (s.twoPhase() ? 3 : 2) : 1) * s.B * g.Kp;
  g.sharedFloats = g.rows * g.S + g.stateN + s.B * g.rows;
  return g;
}

/// The bf16 tensor-core design for U units per block (a multiple of UT).
/// The recurrent matrix of a direction is cut into tiles of 16 rows: UT =
/// 16 / G units, each unit's G gate rows (row g * UT + u; the rows past
/// G * UT, a GRU's 16th, are zero). A block holds TB tiles; each tile is
/// multiplied by KS warps, warp ks taking KTW of its KT k tiles of 16, each
/// keeping its A fragments (the tile's weights at those k, bf16) in
/// registers for the whole sequence: 4 registers a k tile. Per step a warp
/// runs KTW `mma.sync.m16n8k16` with h (rounded to bf16) as the 16 x 8 B
/// operand, the batch rows its columns, and leaves its f32 16 x 8 sums in
/// shared memory (red[KS][TB][16][8]); after a barrier thread (b, unit) adds
/// the KS parts of its G sums and runs the cell, as in the register design.
/// Shared memory: h double-buffered (2 x B x Kp) and red.
PersistGeometry mmaGeometry(const LayerSpec &s, int64_t U) {
  PersistGeometry g;
  g.mma = true;
  g.UT = 16 / s.G;
  g.U = U;
  g.TB = llvm::divideCeil(U, g.UT);
  g.nbd = llvm::divideCeil(s.H, U);
  g.oneBlock = g.nbd == 1;
  g.Kp = llvm::alignTo(s.H, 16);
  g.S = g.Kp;
  g.KT = g.Kp / 16;
  // At most 8 k tiles a warp (32 registers of weights a lane): a warp's
  // mma chain, not the tensor cores' rate, bounds a step, so the k tiles
  // are spread over as many warps as that takes.
  g.KS = llvm::divideCeil(g.KT, 8);
  g.KTW = llvm::divideCeil(g.KT, g.KS);
  g.rows = s.G * U;
  g.NT = std::max<int64_t>(g.TB * g.KS * 32, llvm::alignTo(s.B * U, 32));
  g.groups = g.NT;
  g.stateN = 2 * s.B * g.Kp;
  g.sharedFloats = g.stateN + g.KS * g.TB * 128;
  return g;
}

/// The registers a thread of the bf16 design needs, estimated: its weights
/// (4 words a k tile), its two sets of sums, the cell and the exchange
/// (ptxas: 56 at LSTM B4 H64 with 16 words of weights, 116 at B4 H1024 with
/// 32).
int64_t mmaRegs(const PersistGeometry &g) { return g.KTW * 4 + 84; }

/// Whether the bf16 design's block fits: threads, registers and shared
/// memory.
bool mmaFits(const PersistGeometry &g, int64_t sharedBytes) {
  return g.NT <= 1024 && mmaRegs(g) <= registerBudget(g.NT) &&
         g.sharedFloats * 4 <= sharedBytes;
}

/// The launch geometry and body of one kernel. The body gets the builder,
/// the block and thread ids and the kernel's operands (the host values with
/// mapping=cpu, the gpu.func's arguments with mapping=gpu).
using KernelBody =
    function_ref<void(ImplicitLocOpBuilder &, Value bid, Value tid, ValueRange)>;

class LayerEmitter {
public:
  LayerEmitter(ModuleOp module, const LayerSpec &spec, StringRef name,
               Mapping mapping, bool persistent, int64_t unitsPerBlock,
               bool flagSync, bool regWeights, bool bf16Mma = false)
      : module(module), symbols(module), s(spec), name(name.str()),
        mapping(mapping), persistent(persistent), U(unitsPerBlock),
        flagSync(flagSync), regWeights(regWeights), bf16Mma(bf16Mma) {}

  func::FuncOp emit(ArrayRef<float> w, ArrayRef<float> r, ArrayRef<float> bw,
                    ArrayRef<float> br);

private:
  MLIRContext *ctx() { return module.getContext(); }
  Value idx(ImplicitLocOpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, v);
  }
  Value f32(ImplicitLocOpBuilder &b, float v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  MemRefType mem(ArrayRef<int64_t> shape, Type elt = {}) {
    return MemRefType::get(shape, elt ? elt : Float32Type::get(ctx()));
  }

  // Host side.
  Value global(ImplicitLocOpBuilder &b, StringRef suffix,
               ArrayRef<int64_t> shape, ArrayRef<float> values);
  Value deviceAlloc(ImplicitLocOpBuilder &b, MemRefType type);
  Value toDevice(ImplicitLocOpBuilder &b, Value host);
  gpu::GPUModuleOp kernelModule();
  /// Launches `body` over `grid` blocks of `block` threads: a gpu.func +
  /// gpu.launch_func, or an scf.parallel over (block, thread).
  void launch(ImplicitLocOpBuilder &b, StringRef kernel, int64_t grid,
              int64_t block, ValueRange operands, KernelBody body);

  // Kernel bodies.
  Value activate(ImplicitLocOpBuilder &b, const Activation &a, Value x);
  /// The activation `which` of direction `d` (a select when the directions
  /// of a bidirectional layer use different ones).
  Value act(ImplicitLocOpBuilder &b, Value d, int64_t which, Value x);
  Value clip(ImplicitLocOpBuilder &b, Value x);
  /// t of step s in direction d.
  Value timeOf(ImplicitLocOpBuilder &b, Value d, Value step);
  /// One thread's cell: the dot products over k of gates `gates` against
  /// `src[..][k]`, with weights from `wAt(k, g)`, then the epilogue of
  /// `phase` (0: the whole cell; for the two-phase GRU 1: r, z; 2: n, h).
  /// `hs`, when given, is the block's copy of the state in shared memory
  /// (the one-block persistent kernel): the dot products read h (or r*h)
  /// from it, and the new h (and r*h) are written to it as well.
  struct SharedState {
    function_ref<Value(ImplicitLocOpBuilder &, Value k, bool rh)> load;
    function_ref<void(ImplicitLocOpBuilder &, Value v, bool rh)> store;
  };
  void cellBody(ImplicitLocOpBuilder &b, ValueRange ops, Value step, Value d,
                Value bi, Value j, int phase,
                function_ref<Value(ImplicitLocOpBuilder &, Value k, int64_t g)> wAt,
                const SharedState *hs = nullptr);
  /// cellBody in two halves around the dot products: what the epilogue
  /// reads from memory (loaded first, so that the loads' latency hides behind
  /// the dot products), then the epilogue on the dot products `acc` (one per
  /// gate of `phase`, in gate order).
  struct CellInputs {
    SmallVector<int64_t> gates;
    SmallVector<Value> pOf;
    Value cur, nxt, t, hPrev, cOld, zOld, rbn;
  };
  CellInputs cellLoads(ImplicitLocOpBuilder &b, ValueRange ops, Value step,
                       Value d, Value bi, Value j, int phase,
                       const SharedState *hs);
  /// `published`, when given, receives what other blocks read next: the
  /// new h (phases 0 and 2) or r*h (phase 1).
  void cellEpilogue(ImplicitLocOpBuilder &b, ValueRange ops,
                    const CellInputs &in, Value d, Value bi, Value j, int phase,
                    ValueRange acc, const SharedState *hs,
                    Value *published = nullptr);
  /// The whole cell (phase 0) on the dot products `acc`: the new h, and for
  /// the LSTM the new c in `cNew`. Stores nothing.
  Value cellMath(ImplicitLocOpBuilder &b, const CellInputs &in, Value d,
                 ValueRange acc, Value *cNew);
  Value gruMix(ImplicitLocOpBuilder &b, Value z, Value n, Value hPrev);

  ModuleOp module;
  SymbolTable symbols;
  const LayerSpec &s;
  std::string name;
  Mapping mapping;
  bool persistent;
  int64_t U;
  /// The split-K kernel's blocks exchange h as (value, step) words instead
  /// of through a grid barrier.
  bool flagSync;
  /// The split-K kernel keeps the recurrent weights in registers where they
  /// fit (PersistGeometry::regs).
  bool regWeights;
  /// The persistent kernel's bf16 tensor-core design (mmaGeometry).
  bool bf16Mma;
  SmallVector<Value> deviceBuffers;
  /// Positions of the buffers in the kernels' operand list.
  enum Op { X, Wt, Bias, Rt, Rk, Brn, P, Hb, Cb, Zb, RHb, Y, H0, C0, Hn, Cn, Ctr, Xch, NumOps };
};

Value LayerEmitter::global(ImplicitLocOpBuilder &b, StringRef suffix,
                           ArrayRef<int64_t> shape, ArrayRef<float> values) {
  std::string sym = uniqueSymbol(symbols, name + "_" + suffix.str());
  Value shaped = rnn::emitShapedGlobal(b, module, sym, shape, values);
  symbols.insert(module.lookupSymbol(sym));
  if (mapping == Mapping::CPU)
    return shaped;
  // On the GPU: the runtime's device copy of the constant, uploaded at the
  // first call and kept (lstm_opt_gpu_constant), as a memref on the device
  // pointer it returns.
  auto type = cast<MemRefType>(shaped.getType());
  uint64_t hash = 1469598103934665603ull; // FNV-1a over the values' bits
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    for (int i = 0; i < 4; ++i) {
      hash ^= (bits >> (8 * i)) & 0xff;
      hash *= 1099511628211ull;
    }
  }
  auto i64 = b.getI64Type();
  auto callee = module.lookupSymbol<func::FuncOp>("lstm_opt_gpu_constant");
  if (!callee) {
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPointToStart(module.getBody());
    callee = func::FuncOp::create(mb, module.getLoc(), "lstm_opt_gpu_constant",
                                  FunctionType::get(ctx(), {i64, i64, i64}, {i64}));
    callee.setPrivate();
    symbols.insert(callee);
  }
  Value host = arith::IndexCastOp::create(
      b, i64, memref::ExtractAlignedPointerAsIndexOp::create(b, shaped));
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)).getResult();
  };
  Value dev = func::CallOp::create(
                  b, callee,
                  ValueRange{host, c64(type.getNumElements() * 4), c64(int64_t(hash))})
                  .getResult(0);
  // The memref descriptor (allocated and aligned pointer, offset 0, sizes,
  // row-major strides), cast to the memref type: the memref-to-LLVM
  // conversion folds the cast away.
  auto ptrType = LLVM::LLVMPointerType::get(ctx());
  int64_t rank = type.getRank();
  auto arr = LLVM::LLVMArrayType::get(i64, rank);
  auto descType = LLVM::LLVMStructType::getLiteral(ctx(), {ptrType, ptrType, i64, arr, arr});
  Value ptr = LLVM::IntToPtrOp::create(b, ptrType, dev);
  Value desc = LLVM::UndefOp::create(b, descType);
  desc = LLVM::InsertValueOp::create(b, desc, ptr, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, desc, ptr, ArrayRef<int64_t>{1});
  desc = LLVM::InsertValueOp::create(b, desc, c64(0), ArrayRef<int64_t>{2});
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    desc = LLVM::InsertValueOp::create(b, desc, c64(type.getDimSize(d)),
                                       ArrayRef<int64_t>{3, d});
    desc = LLVM::InsertValueOp::create(b, desc, c64(stride), ArrayRef<int64_t>{4, d});
    stride *= type.getDimSize(d);
  }
  return UnrealizedConversionCastOp::create(b, TypeRange{type}, ValueRange{desc})
      .getResult(0);
}

Value LayerEmitter::deviceAlloc(ImplicitLocOpBuilder &b, MemRefType type) {
  if (mapping == Mapping::CPU)
    return memref::AllocOp::create(b, type, b.getI64IntegerAttr(64));
  Value v = gpu::AllocOp::create(b, type, Type(), ValueRange{}, ValueRange{},
                                 ValueRange{}, false)
                .getMemref();
  deviceBuffers.push_back(v);
  return v;
}

Value LayerEmitter::toDevice(ImplicitLocOpBuilder &b, Value host) {
  if (mapping == Mapping::CPU || !host)
    return host;
  Value dev = deviceAlloc(b, cast<MemRefType>(host.getType()));
  gpu::MemcpyOp::create(b, Type(), ValueRange{}, dev, host);
  return dev;
}

gpu::GPUModuleOp LayerEmitter::kernelModule() {
  if (auto m = module.lookupSymbol<gpu::GPUModuleOp>(kGPUKernelModuleName))
    return m;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx()));
  OpBuilder mb(module.getBodyRegion());
  mb.setInsertionPointToEnd(module.getBody());
  auto m = gpu::GPUModuleOp::create(mb, module.getLoc(), kGPUKernelModuleName);
  symbols.insert(m);
  return m;
}

void LayerEmitter::launch(ImplicitLocOpBuilder &b, StringRef kernel,
                          int64_t grid, int64_t block, ValueRange operands,
                          KernelBody body) {
  if (mapping == Mapping::CPU) {
    scf::ParallelOp::create(
        b, ValueRange{idx(b, 0), idx(b, 0)}, ValueRange{idx(b, grid), idx(b, block)},
        ValueRange{idx(b, 1), idx(b, 1)},
        [&](OpBuilder &ob, Location loc, ValueRange ivs) {
          ImplicitLocOpBuilder ib(loc, ob);
          body(ib, ivs[0], ivs[1], operands);
        });
    return;
  }
  gpu::GPUModuleOp gm = kernelModule();
  SymbolTable kernels(gm);
  std::string kname = uniqueSymbol(kernels, name + "_" + kernel.str());
  OpBuilder kb(gm.getBodyRegion());
  kb.setInsertionPointToEnd(gm.getBody());
  auto fn = gpu::GPUFuncOp::create(
      kb, b.getLoc(), kname, FunctionType::get(ctx(), operands.getTypes(), {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kb.getUnitAttr());
  fn.setKnownBlockSizeAttr(kb.getDenseI32ArrayAttr({(int32_t)block, 1, 1}));
  fn.setKnownGridSizeAttr(kb.getDenseI32ArrayAttr({(int32_t)grid, 1, 1}));
  {
    ImplicitLocOpBuilder fb(b.getLoc(), ctx());
    fb.setInsertionPointToStart(&fn.getBody().front());
    Value bid = gpu::BlockIdOp::create(fb, gpu::Dimension::x);
    Value tid = gpu::ThreadIdOp::create(fb, gpu::Dimension::x);
    body(fb, bid, tid, fn.getArguments());
    gpu::ReturnOp::create(fb);
  }
  Value one = idx(b, 1);
  gpu::LaunchFuncOp::create(b, fn, gpu::KernelDim3{idx(b, grid), one, one},
                            gpu::KernelDim3{idx(b, block), one, one},
                            /*dynamicSharedMemorySize=*/Value(), operands);
}

Value LayerEmitter::activate(ImplicitLocOpBuilder &b, const Activation &a,
                             Value x) {
  return rnn::emitActivation(b, a, x);
}

Value LayerEmitter::act(ImplicitLocOpBuilder &b, Value d, int64_t which,
                        Value x) {
  Value first = activate(b, s.acts[0][which], x);
  if (s.D == 1 || s.acts[1][which] == s.acts[0][which])
    return first;
  Value second = activate(b, s.acts[1][which], x);
  Value isFirst = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d, idx(b, 0));
  return arith::SelectOp::create(b, isFirst, first, second);
}

Value LayerEmitter::clip(ImplicitLocOpBuilder &b, Value x) {
  return rnn::emitClip(b, x, s.clip);
}

Value LayerEmitter::timeOf(ImplicitLocOpBuilder &b, Value d, Value step) {
  Value rev = arith::SubIOp::create(b, idx(b, s.T - 1), step);
  if (s.D == 1)
    return s.reverse[0] ? rev : step;
  // Bidirectional: direction 1 runs backwards.
  Value isRev = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d, idx(b, 1));
  return arith::SelectOp::create(b, isRev, rev, step);
}

LayerEmitter::CellInputs
LayerEmitter::cellLoads(ImplicitLocOpBuilder &b, ValueRange ops, Value step,
                        Value d, Value bi, Value j, int phase,
                        const SharedState *hs) {
  const int64_t B = s.B;
  CellInputs in;
  in.cur = arith::RemUIOp::create(b, step, idx(b, 2));
  in.nxt = arith::SubIOp::create(b, idx(b, 1), in.cur);
  in.t = timeOf(b, d, step);
  Value row = arith::AddIOp::create(b, arith::MulIOp::create(b, in.t, idx(b, B)), bi);
  // The gates whose dot products this phase computes.
  if (phase == 1)
    in.gates = {0, 1};
  else if (phase == 2)
    in.gates = {2};
  else
    in.gates = llvm::to_vector(llvm::seq<int64_t>(0, s.G));
  in.pOf.resize(s.G);
  for (int64_t g : in.gates)
    in.pOf[g] = memref::LoadOp::create(b, ops[P], ValueRange{d, row, idx(b, g), j});
  in.hPrev = hs ? hs->load(b, j, false)
                : memref::LoadOp::create(b, ops[Hb], ValueRange{in.cur, d, bi, j});
  if (s.isLSTM())
    in.cOld = memref::LoadOp::create(b, ops[Cb], ValueRange{d, bi, j});
  if (phase == 2)
    in.zOld = memref::LoadOp::create(b, ops[Zb], ValueRange{d, bi, j});
  if (phase == 0 && s.isGRU())
    in.rbn = memref::LoadOp::create(b, ops[Brn], ValueRange{d, j});
  return in;
}

void LayerEmitter::cellBody(
    ImplicitLocOpBuilder &b, ValueRange ops, Value step, Value d, Value bi,
    Value j, int phase,
    function_ref<Value(ImplicitLocOpBuilder &, Value, int64_t)> wAt,
    const SharedState *hs) {
  const int64_t H = s.H;
  // Everything the epilogue reads from global memory is loaded before the
  // dot products, so that the loads' latency hides behind them: the
  // projected input of each gate, h_prev, c, the GRU's z and Rbn.
  CellInputs in = cellLoads(b, ops, step, d, bi, j, phase, hs);
  // The recurrent dot products, over h (or r*h for the GRU's phase 2).
  SmallVector<Value> init(in.gates.size(), f32(b, 0.f));
  auto loop = scf::ForOp::create(
      b, idx(b, 0), idx(b, H), idx(b, 1), init,
      [&](OpBuilder &ob, Location loc, Value k, ValueRange acc) {
        ImplicitLocOpBuilder lb(loc, ob);
        Value hk = hs ? hs->load(lb, k, phase == 2)
                   : phase == 2
                       ? memref::LoadOp::create(lb, ops[RHb], ValueRange{d, bi, k})
                       : memref::LoadOp::create(lb, ops[Hb], ValueRange{in.cur, d, bi, k});
        // The CPU-mapped twin of the bf16 design rounds what the tensor
        // cores multiply: h and the weights, to nearest even.
        auto operand = [&](Value v) -> Value {
          if (!bf16Mma)
            return v;
          Value r = arith::TruncFOp::create(lb, lb.getBF16Type(), v);
          return arith::ExtFOp::create(lb, lb.getF32Type(), r);
        };
        hk = operand(hk);
        SmallVector<Value> next;
        for (auto [i, g] : llvm::enumerate(in.gates))
          next.push_back(math::FmaOp::create(lb, operand(wAt(lb, k, g)), hk, acc[i]));
        scf::YieldOp::create(lb, next);
      });
  // On the GPU the loop is bound by the latency of its loads (h from global
  // memory, the weights from shared or global memory), not by the FMAs:
  // unrolled up to 16 times, the loads of 16 steps of k are in flight at
  // once. Each accumulator still sums in order, so the results are
  // unchanged. The factor divides H and is below it, so the loop stays one
  // loop (LLVM unrolls a loop of at most 16 steps by itself).
  if (mapping == Mapping::GPU)
    unrollBelowTripCount(loop, H);
  cellEpilogue(b, ops, in, d, bi, j, phase, loop.getResults(), hs);
}

void LayerEmitter::cellEpilogue(ImplicitLocOpBuilder &b, ValueRange ops,
                                const CellInputs &in, Value d, Value bi,
                                Value j, int phase, ValueRange acc,
                                const SharedState *hs, Value *published) {
  auto pre = [&](int64_t g, Value a) -> Value {
    return arith::AddFOp::create(b, a, in.pOf[g]);
  };
  auto finish = [&](Value hNew) {
    if (published)
      *published = hNew;
    memref::StoreOp::create(b, hNew, ops[Hb], ValueRange{in.nxt, d, bi, j});
    memref::StoreOp::create(b, hNew, ops[Y], ValueRange{in.t, d, bi, j});
    if (hs)
      hs->store(b, hNew, false);
  };
  if (phase == 1) {
    Value rg = act(b, d, 0, clip(b, pre(0, acc[0])));
    Value z = act(b, d, 0, clip(b, pre(1, acc[1])));
    memref::StoreOp::create(b, z, ops[Zb], ValueRange{d, bi, j});
    Value rh = arith::MulFOp::create(b, rg, in.hPrev);
    memref::StoreOp::create(b, rh, ops[RHb], ValueRange{d, bi, j});
    if (hs)
      hs->store(b, rh, true);
    if (published)
      *published = rh;
    return;
  }
  if (phase == 2) {
    Value n = act(b, d, 1, clip(b, pre(2, acc[0])));
    finish(gruMix(b, in.zOld, n, in.hPrev));
    return;
  }
  Value c;
  Value h = cellMath(b, in, d, acc, &c);
  if (c)
    memref::StoreOp::create(b, c, ops[Cb], ValueRange{d, bi, j});
  finish(h);
}

Value LayerEmitter::cellMath(ImplicitLocOpBuilder &b, const CellInputs &in,
                             Value d, ValueRange acc, Value *cNew) {
  auto pre = [&](int64_t g, Value a) -> Value {
    return arith::AddFOp::create(b, a, in.pOf[g]);
  };
  if (s.isLSTM()) {
    Value i = act(b, d, 0, clip(b, pre(0, acc[0])));
    Value f = act(b, d, 0, clip(b, pre(1, acc[1])));
    Value g = act(b, d, 1, clip(b, pre(2, acc[2])));
    Value o = act(b, d, 0, clip(b, pre(3, acc[3])));
    *cNew = arith::AddFOp::create(b, arith::MulFOp::create(b, f, in.cOld),
                                  arith::MulFOp::create(b, i, g));
    return arith::MulFOp::create(b, o, act(b, d, 2, *cNew));
  }
  if (s.isGRU()) {
    // linear_before_reset: n = act(Wn x + Wbn + r * (Rn h + Rbn)).
    Value rg = act(b, d, 0, clip(b, pre(0, acc[0])));
    Value z = act(b, d, 0, clip(b, pre(1, acc[1])));
    Value pn = in.pOf[2];
    Value n = act(b, d, 1, clip(b, arith::AddFOp::create(
                                       b, pn, arith::MulFOp::create(
                                                  b, rg, arith::AddFOp::create(b, acc[2], in.rbn)))));
    return gruMix(b, z, n, in.hPrev);
  }
  return act(b, d, 0, clip(b, pre(0, acc[0])));
}

Value LayerEmitter::gruMix(ImplicitLocOpBuilder &b, Value z, Value n,
                           Value hPrev) {
  // h = (1 - z) * n + z * h_prev
  return arith::AddFOp::create(
      b, arith::MulFOp::create(b, arith::SubFOp::create(b, f32(b, 1.f), z), n),
      arith::MulFOp::create(b, z, hPrev));
}

/// `gid = bid * block + tid`; calls `body(gid)` when gid < total.
void forThread(ImplicitLocOpBuilder &b, Value bid, Value tid, int64_t block,
               int64_t total, function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  Value gid = arith::AddIOp::create(
      b, arith::MulIOp::create(b, bid, arith::ConstantIndexOp::create(b, block)), tid);
  Value in = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, gid,
                                   arith::ConstantIndexOp::create(b, total));
  scf::IfOp::create(b, in, [&](OpBuilder &ob, Location loc) {
    ImplicitLocOpBuilder ib(loc, ob);
    body(ib, gid);
    scf::YieldOp::create(ib);
  });
}

/// Splits a linear index into the digits of `sizes` (last fastest).
SmallVector<Value> delinearize(ImplicitLocOpBuilder &b, Value v,
                               ArrayRef<int64_t> sizes) {
  SmallVector<Value> out(sizes.size());
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    Value n = arith::ConstantIndexOp::create(b, sizes[i]);
    out[i] = i ? arith::RemUIOp::create(b, v, n).getResult() : v;
    if (i)
      v = arith::DivUIOp::create(b, v, n);
  }
  return out;
}

func::FuncOp LayerEmitter::emit(ArrayRef<float> w, ArrayRef<float> r,
                                ArrayRef<float> bw, ArrayRef<float> br) {
  const int64_t T = s.T, B = s.B, I = s.I, H = s.H, D = s.D, G = s.G;
  SmallVector<Type> args = {mem({T * B, I})};
  if (s.hasH0)
    args.push_back(mem({D, B, H}));
  if (s.hasC0)
    args.push_back(mem({D, B, H}));
  args.push_back(mem({T, D, B, H}));
  args.push_back(mem({D, B, H}));
  if (s.isLSTM())
    args.push_back(mem({D, B, H}));

  OpBuilder mb(ctx());
  mb.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  name = uniqueSymbol(symbols, name);
  auto func = func::FuncOp::create(mb, loc, name, FunctionType::get(ctx(), args, {}));
  func.setPrivate();
  symbols.insert(func);
  Block *entry = func.addEntryBlock();
  ImplicitLocOpBuilder b(loc, ctx());
  b.setInsertionPointToStart(entry);

  unsigned a = 0;
  Value x = entry->getArgument(a++);
  Value h0 = s.hasH0 ? entry->getArgument(a++) : Value();
  Value c0 = s.hasC0 ? entry->getArgument(a++) : Value();
  Value yHost = entry->getArgument(a++);
  Value hnHost = entry->getArgument(a++);
  Value cnHost = s.isLSTM() ? entry->getArgument(a++) : Value();

  // Constants: transposed weights, the biases (Bw + Br, except the GRU n
  // gate's recurrent bias under linear_before_reset, kept apart in Brn).
  std::vector<float> bias(D * G * H), brn(D * H, 0.f);
  for (int64_t d = 0; d < D; ++d)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t j = 0; j < H; ++j) {
        int64_t at = (d * G + g) * H + j;
        bool split = s.isGRU() && s.linearBeforeReset && g == 2;
        bias[at] = bw[at] + (split ? 0.f : br[at]);
        if (split)
          brn[d * H + j] = br[at];
      }
  SmallVector<Value> ops(NumOps);
  ops[X] = toDevice(b, x);
  ops[Wt] = global(b, "Wt", {D, I, G, H}, transposeWeights(w, D, G, H, I));
  ops[Bias] = global(b, "bias", {D, G, H}, bias);
  // The split-K persistent kernel reads R as it is ([D][G][H][K], k
  // fastest); the others its transpose.
  const bool splitK = persistent && mapping == Mapping::GPU;
  ops[Rt] = splitK ? Value()
                   : global(b, "Rt", {D, H, G, H}, transposeWeights(r, D, G, H, H));
  ops[Rk] = splitK ? global(b, "R", {D, G, H, H}, r) : Value();
  ops[Brn] = s.isGRU() && s.linearBeforeReset ? global(b, "Brn", {D, H}, brn) : Value();
  ops[P] = deviceAlloc(b, mem({D, T * B, G, H}));
  ops[Hb] = deviceAlloc(b, mem({2, D, B, H}));
  if (s.isLSTM())
    ops[Cb] = deviceAlloc(b, mem({D, B, H}));
  if (s.twoPhase()) {
    ops[Zb] = deviceAlloc(b, mem({D, B, H}));
    ops[RHb] = deviceAlloc(b, mem({D, B, H}));
  }
  bool gpuMode = mapping == Mapping::GPU;
  ops[Y] = gpuMode ? deviceAlloc(b, mem({T, D, B, H})) : yHost;
  ops[H0] = toDevice(b, h0);
  ops[C0] = toDevice(b, c0);
  ops[Hn] = gpuMode ? deviceAlloc(b, mem({D, B, H})) : hnHost;
  ops[Cn] = cnHost && gpuMode ? deviceAlloc(b, mem({D, B, H})) : cnHost;

  // The operands of a kernel: the buffers it needs, in Op order, plus any
  // scalars; `at` maps Op to its position.
  struct Operands {
    SmallVector<Value> values;
    SmallVector<int> at = SmallVector<int>(NumOps, -1);
  };
  auto pick = [&](ArrayRef<Op> which, ValueRange scalars = {}) {
    Operands o;
    for (Op w2 : which)
      if (ops[w2]) {
        o.at[w2] = o.values.size();
        o.values.push_back(ops[w2]);
      }
    o.values.append(scalars.begin(), scalars.end());
    return o;
  };
  // Rebuilds the Op-indexed view from a kernel's operand list.
  auto view = [](const Operands &o, ValueRange kernelArgs) {
    SmallVector<Value> v(NumOps);
    for (int i = 0; i < NumOps; ++i)
      if (o.at[i] >= 0)
        v[i] = kernelArgs[o.at[i]];
    return v;
  };
  auto grid1D = [](int64_t total) { return llvm::divideCeil(total, kBlock); };
  const int64_t DBH = D * B * H;

  // 1. Initial states.
  {
    Operands o = pick({Hb, Cb, H0, C0});
    launch(b, "init", grid1D(DBH), kBlock, o.values,
           [&](ImplicitLocOpBuilder &kb, Value bid, Value tid, ValueRange ka) {
      auto v = view(o, ka);
      forThread(kb, bid, tid, kBlock, DBH, [&](ImplicitLocOpBuilder &tb, Value gid) {
        auto dbj = delinearize(tb, gid, {D, B, H});
        Value zero = f32(tb, 0.f);
        Value h = v[H0] ? memref::LoadOp::create(tb, v[H0], dbj).getResult() : zero;
        memref::StoreOp::create(tb, h, v[Hb], ValueRange{idx(tb, 0), dbj[0], dbj[1], dbj[2]});
        if (v[Cb]) {
          Value c = v[C0] ? memref::LoadOp::create(tb, v[C0], dbj).getResult() : zero;
          memref::StoreOp::create(tb, c, v[Cb], dbj);
        }
      });
    });
  }

  // 2. The input projection: thread (d, row, j) computes all G gates.
  // On an H100 it takes about 0.5 us a step at T50 B1 I256 H512 (a profile:
  // 9% occupancy, 200 blocks of 128 threads on 132 SMs, 4% of issue slots
  // used). Four rows a thread, each weight loaded once for them, was slower
  // (a quarter of the threads, each four times as long); the loads of 8 k
  // issued before their multiply-adds changed nothing.
  {
    Operands o = pick({X, Wt, Bias, P});
    int64_t total = D * T * B * H;
    launch(b, "proj", grid1D(total), kBlock, o.values,
           [&](ImplicitLocOpBuilder &kb, Value bid, Value tid, ValueRange ka) {
      auto v = view(o, ka);
      forThread(kb, bid, tid, kBlock, total, [&](ImplicitLocOpBuilder &tb, Value gid) {
        auto drj = delinearize(tb, gid, {D, T * B, H});
        Value d = drj[0], row = drj[1], j = drj[2];
        SmallVector<Value> init;
        for (int64_t g = 0; g < G; ++g)
          init.push_back(memref::LoadOp::create(tb, v[Bias], ValueRange{d, idx(tb, g), j}));
        auto loop = scf::ForOp::create(
            tb, idx(tb, 0), idx(tb, I), idx(tb, 1), init,
            [&](OpBuilder &ob, Location l, Value k, ValueRange acc) {
              ImplicitLocOpBuilder lb(l, ob);
              Value xk = memref::LoadOp::create(lb, v[X], ValueRange{row, k});
              SmallVector<Value> next;
              for (int64_t g = 0; g < G; ++g) {
                Value wv = memref::LoadOp::create(lb, v[Wt], ValueRange{d, k, idx(lb, g), j});
                next.push_back(math::FmaOp::create(lb, wv, xk, acc[g]));
              }
              scf::YieldOp::create(lb, next);
            });
        // Unrolled (the same order of sums), so that the loads of several
        // k are in flight at once.
        if (mapping == Mapping::GPU)
          unrollBelowTripCount(loop, I);
        for (int64_t g = 0; g < G; ++g)
          memref::StoreOp::create(tb, loop.getResult(g), v[P],
                                  ValueRange{d, row, idx(tb, g), j});
      });
    });
  }

  // 3. The recurrence.
  SmallVector<int> phases = s.twoPhase() ? SmallVector<int>{1, 2} : SmallVector<int>{0};
  SmallVector<Op> stepOps = {Rt, Brn, P, Hb, Cb, Zb, RHb, Y};
  if (!persistent) {
    // One fused launch per step (two for the two-phase GRU).
    scf::ForOp::create(b, idx(b, 0), idx(b, T), idx(b, 1), ValueRange{},
                       [&](OpBuilder &ob, Location l, Value step, ValueRange) {
      ImplicitLocOpBuilder sb(l, ob);
      for (int phase : phases) {
        Operands o = pick(stepOps, ValueRange{step});
        std::string kname = phase == 2 ? "step_n" : phase == 1 ? "step_rz" : "step";
        launch(sb, kname, grid1D(DBH), kBlock, o.values,
               [&](ImplicitLocOpBuilder &kb, Value bid, Value tid, ValueRange ka) {
          auto v = view(o, ka);
          Value stepArg = ka.back();
          forThread(kb, bid, tid, kBlock, DBH, [&](ImplicitLocOpBuilder &tb, Value gid) {
            auto dbj = delinearize(tb, gid, {D, B, H});
            cellBody(tb, v, stepArg, dbj[0], dbj[1], dbj[2], phase,
                     [&](ImplicitLocOpBuilder &wb, Value k, int64_t g) -> Value {
                       return memref::LoadOp::create(
                           wb, v[Rt], ValueRange{dbj[0], k, idx(wb, g), dbj[2]});
                     });
          });
        });
      }
      scf::YieldOp::create(sb);
    });
  } else {
    // Persistent: block (d, slice of U units), threads (b, unit).
    const int64_t nbd = llvm::divideCeil(H, U), grid = D * nbd, block = B * U,
                  slice = H * G * U;
    // Block-local pieces shared by both mappings: the ids, the copy of the
    // weight slice into "shared" memory, one step of one phase.
    struct Ids { Value d, jb, bi, jl, j, active; };
    auto ids = [&](ImplicitLocOpBuilder &kb, Value bid, Value tid) {
      Ids i;
      i.d = arith::DivUIOp::create(kb, bid, idx(kb, nbd));
      i.jb = arith::RemUIOp::create(kb, bid, idx(kb, nbd));
      i.bi = arith::DivUIOp::create(kb, tid, idx(kb, U));
      i.jl = arith::RemUIOp::create(kb, tid, idx(kb, U));
      i.j = arith::AddIOp::create(kb, arith::MulIOp::create(kb, i.jb, idx(kb, U)), i.jl);
      i.active = arith::CmpIOp::create(kb, arith::CmpIPredicate::ult, i.j, idx(kb, H));
      return i;
    };
    // sh(k, idx) -> the shared slot; shStore/shLoad are mapping-specific.
    using ShAccess = function_ref<Value(ImplicitLocOpBuilder &, Value, Value)>;
    using ShStore = function_ref<void(ImplicitLocOpBuilder &, Value, Value)>;
    auto loadSlice = [&](ImplicitLocOpBuilder &kb, const SmallVector<Value> &v,
                         Value tid, const Ids &i, ShStore store) {
      // Rs[(k * G + g) * U + jl] = Rt[d][k][g][jb * U + jl] (0 past H).
      scf::ForOp::create(kb, tid, idx(kb, slice), idx(kb, block), ValueRange{},
                         [&](OpBuilder &ob, Location l, Value e, ValueRange) {
        ImplicitLocOpBuilder lb(l, ob);
        auto kgl = delinearize(lb, e, {H, G, U});
        Value jj = arith::AddIOp::create(lb, arith::MulIOp::create(lb, i.jb, idx(lb, U)), kgl[2]);
        Value in = arith::CmpIOp::create(lb, arith::CmpIPredicate::ult, jj, idx(lb, H));
        Value jc = arith::SelectOp::create(lb, in, jj, idx(lb, 0));
        Value wv = memref::LoadOp::create(lb, v[Rt], ValueRange{i.d, kgl[0], kgl[1], jc});
        store(lb, arith::SelectOp::create(lb, in, wv, f32(lb, 0.f)), e);
        scf::YieldOp::create(lb);
      });
    };
    auto stepPhase = [&](ImplicitLocOpBuilder &kb, const SmallVector<Value> &v,
                         Value step, const Ids &i, int phase, ShAccess load,
                         const SharedState *hs = nullptr) {
      scf::IfOp::create(kb, i.active, [&](OpBuilder &ob, Location l) {
        ImplicitLocOpBuilder ib(l, ob);
        cellBody(ib, v, step, i.d, i.bi, i.j, phase,
                 [&](ImplicitLocOpBuilder &wb, Value k, int64_t g) -> Value {
                   Value e = arith::AddIOp::create(
                       wb, arith::MulIOp::create(
                               wb, arith::AddIOp::create(
                                       wb, arith::MulIOp::create(wb, k, idx(wb, G)),
                                       idx(wb, g)),
                               idx(wb, U)),
                       i.jl);
                   return load(wb, e, Value());
                 },
                 hs);
        scf::YieldOp::create(ib);
      });
    };

    if (mapping == Mapping::CPU) {
      // Shared memory: one slice per block; the grid barrier: the end of
      // each parallel loop.
      Value shared = memref::AllocOp::create(b, mem({grid, slice}), b.getI64IntegerAttr(64));
      Operands o = pick({Rt});
      launch(b, "persist_load", grid, block, o.values,
             [&](ImplicitLocOpBuilder &kb, Value bid, Value tid, ValueRange ka) {
        auto v = view(o, ka);
        Ids i = ids(kb, bid, tid);
        // Each thread copies its strided share of the slice, as on the GPU.
        loadSlice(kb, v, tid, i, [&](ImplicitLocOpBuilder &lb, Value val, Value e) {
          memref::StoreOp::create(lb, val, shared, ValueRange{bid, e});
        });
      });
      scf::ForOp::create(b, idx(b, 0), idx(b, T), idx(b, 1), ValueRange{},
                         [&](OpBuilder &ob, Location l, Value step, ValueRange) {
        ImplicitLocOpBuilder sb(l, ob);
        for (int phase : phases) {
          Operands so = pick(stepOps);
          launch(sb, "persist_step", grid, block, so.values,
                 [&](ImplicitLocOpBuilder &kb, Value bid, Value tid, ValueRange ka) {
            auto v = view(so, ka);
            Ids i = ids(kb, bid, tid);
            stepPhase(kb, v, step, i, phase,
                      [&](ImplicitLocOpBuilder &wb, Value e, Value) -> Value {
                        return memref::LoadOp::create(wb, shared, ValueRange{bid, e});
                      });
          });
        }
        scf::YieldOp::create(sb);
      });
    } else {
      // Split-K persistent kernel (see PersistGeometry): block (d, slice of
      // U units) keeps the slice's recurrent rows in shared memory for the
      // whole sequence; each dot product is split over L lanes of a warp and
      // reduced by shuffles; the epilogue threads (b, unit) read the sums
      // from shared memory. One block per direction keeps h in shared
      // memory and syncs each step with its own barrier; else the blocks
      // exchange h through global memory with one grid barrier per step
      // (per GRU phase), on a counter per direction.
      const PersistGeometry pg =
          bf16Mma ? mmaGeometry(s, U) : persistGeometry(s, U, regWeights && flagSync);
      const int64_t nbd = pg.nbd, grid = D * nbd, NT = pg.NT, L = pg.L,
                    Kp = pg.Kp, S = pg.S, rows = pg.rows;
      const bool oneBlock = pg.oneBlock;
      SmallVector<Op> pops = {Rk, Brn, P, Hb, Cb, Zb, RHb, Y};
      // The words h (slots 0, 1) and the GRU's r*h (slot 2) are exchanged
      // in: [slot][D][B][H] x (value, step) as 2 x i32, zeroed before the
      // launch (no step is 0).
      const int64_t slots = s.twoPhase() ? 3 : 2;
      if (!oneBlock && flagSync) {
        ops[Xch] = deviceAlloc(b, mem({slots * D * B * H * 2}, b.getI32Type()));
        gpu::MemsetOp::create(b, Type(), ValueRange{}, ops[Xch],
                              arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
        pops.push_back(Xch);
      } else if (!oneBlock) {
        ops[Ctr] = deviceAlloc(b, mem({D}, b.getI32Type()));
        gpu::MemsetOp::create(b, Type(), ValueRange{}, ops[Ctr],
                              arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
        pops.push_back(Ctr);
      }
      Operands o = pick(pops);
      gpu::GPUModuleOp gm = kernelModule();
      SymbolTable kernels(gm);
      std::string kname = uniqueSymbol(kernels, name + "_persist");
      OpBuilder kbld(gm.getBodyRegion());
      kbld.setInsertionPointToEnd(gm.getBody());
      auto fn = gpu::GPUFuncOp::create(
          kbld, loc, kname, FunctionType::get(ctx(), ValueRange(o.values).getTypes(), {}));
      fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kbld.getUnitAttr());
      fn.setKnownBlockSizeAttr(kbld.getDenseI32ArrayAttr({(int32_t)NT, 1, 1}));
      fn.setKnownGridSizeAttr(kbld.getDenseI32ArrayAttr({(int32_t)grid, 1, 1}));
      {
        ImplicitLocOpBuilder kb(loc, ctx());
        kb.setInsertionPointToStart(&fn.getBody().front());
        Value bid = gpu::BlockIdOp::create(kb, gpu::Dimension::x);
        Value tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);
        auto v = view(o, fn.getArguments());
        auto add = [&](Value x, Value y) { return arith::AddIOp::create(kb, x, y).getResult(); };
        auto mul = [&](Value x, int64_t c) {
          return arith::MulIOp::create(kb, x, idx(kb, c)).getResult();
        };
        auto minI = [&](ImplicitLocOpBuilder &wb, Value x, int64_t c) {
          return arith::MinUIOp::create(wb, x, idx(wb, c)).getResult();
        };
        // Shared memory: Ws [rows][S], the state, pre [B][rows].
        auto smemView = [&](Value raw, int64_t offset, int64_t n) {
          auto t = MemRefType::get(
              {n}, kb.getF32Type(), MemRefLayoutAttrInterface(),
              gpu::AddressSpaceAttr::get(ctx(), gpu::AddressSpace::Workgroup));
          return memref::ViewOp::create(kb, t, raw, idx(kb, offset * 4), ValueRange{})
              .getResult();
        };
        auto bytes = MemRefType::get(
            {ShapedType::kDynamic}, kb.getI8Type(), MemRefLayoutAttrInterface(),
            gpu::AddressSpaceAttr::get(ctx(), gpu::AddressSpace::Workgroup));
        Value raw = gpu::DynamicSharedMemoryOp::create(kb, bytes);
        // The register design keeps only the state there.
        // The bf16 design keeps the state and its tiles' sums (red).
        const bool regWeightsHere = pg.regs || pg.mma;
        const int64_t stAt = regWeightsHere ? 0 : rows * S;
        Value ws = regWeightsHere ? Value() : smemView(raw, 0, rows * S);
        Value st = smemView(raw, stAt, pg.stateN);
        Value pre = pg.regs ? Value()
                            : smemView(raw, stAt + pg.stateN,
                                       pg.mma ? pg.KS * pg.TB * 128 : B * rows);

        Value d = arith::DivUIOp::create(kb, bid, idx(kb, nbd));
        Value jb = arith::RemUIOp::create(kb, bid, idx(kb, nbd));
        // The dot-product group gi of L lanes, lane li.
        Value gi = arith::DivUIOp::create(kb, tid, idx(kb, L));
        Value li = arith::RemUIOp::create(kb, tid, idx(kb, L));
        // The epilogue thread (bi, jl) of unit j (register design: lane bi of
        // group jl); indices clamped so that the idle threads' loads stay in
        // bounds (their stores are skipped).
        auto ult = [&](Value x, int64_t c) -> Value {
          return arith::CmpIOp::create(kb, arith::CmpIPredicate::ult, x, idx(kb, c));
        };
        Value bi = pg.regs ? li : arith::DivUIOp::create(kb, tid, idx(kb, U)).getResult();
        Value jl = pg.regs ? gi : arith::RemUIOp::create(kb, tid, idx(kb, U)).getResult();
        Value j = add(mul(jb, U), jl);
        Value active = arith::AndIOp::create(
            kb, pg.regs ? arith::AndIOp::create(kb, ult(li, B), ult(gi, U)).getResult()
                        : ult(tid, B * U),
            ult(j, H));
        Value bic = minI(kb, bi, B - 1), jc = minI(kb, j, H - 1);

        // Ws[(g * U + u) * S + k] = R[d][g][jb * U + u][k] (0 past H).
        if (!regWeightsHere)
        scf::ForOp::create(kb, tid, idx(kb, rows * S), idx(kb, NT), ValueRange{},
                           [&](OpBuilder &ob, Location l, Value e, ValueRange) {
          ImplicitLocOpBuilder lb(l, ob);
          auto guk = delinearize(lb, e, {G, U, S});
          Value jj = arith::AddIOp::create(lb, arith::MulIOp::create(lb, jb, idx(lb, U)), guk[1]);
          Value in = arith::AndIOp::create(
              lb, arith::CmpIOp::create(lb, arith::CmpIPredicate::ult, jj, idx(lb, H)),
              arith::CmpIOp::create(lb, arith::CmpIPredicate::ult, guk[2], idx(lb, H)));
          Value wv = memref::LoadOp::create(
              lb, v[Rk], ValueRange{d, guk[0], minI(lb, jj, H - 1), minI(lb, guk[2], H - 1)});
          memref::StoreOp::create(lb, arith::SelectOp::create(lb, in, wv, f32(lb, 0.f)), ws,
                                  ValueRange{e});
          scf::YieldOp::create(lb);
        });
        // st[slot][b][k] (one block: slot 0/1 h double-buffered, 2 the GRU's
        // r*h; else one slot, refilled from global memory each phase).
        auto stIndex = [&](ImplicitLocOpBuilder &wb, Value slot, Value bb, Value k) {
          return arith::AddIOp::create(
                     wb,
                     arith::MulIOp::create(
                         wb, arith::AddIOp::create(wb, arith::MulIOp::create(wb, slot, idx(wb, B)), bb),
                         idx(wb, Kp)),
                     k)
              .getResult();
        };
        // Fills slot 0 of st (from element `off`) from `src(b, k)` for k < H,
        // zeros elsewhere (one block: all of st, once).
        auto fillState = [&](ImplicitLocOpBuilder &fb, int64_t n, Value off,
                             function_ref<Value(ImplicitLocOpBuilder &, Value, Value)> src) {
          scf::ForOp::create(fb, tid, idx(fb, n), idx(fb, NT), ValueRange{},
                             [&](OpBuilder &ob, Location l, Value e, ValueRange) {
            ImplicitLocOpBuilder lb(l, ob);
            auto sbk = delinearize(lb, e, {n / (B * Kp), B, Kp});
            Value in = arith::AndIOp::create(
                lb, arith::CmpIOp::create(lb, arith::CmpIPredicate::eq, sbk[0], idx(lb, 0)),
                arith::CmpIOp::create(lb, arith::CmpIPredicate::ult, sbk[2], idx(lb, H)));
            Value val = src(lb, sbk[1], minI(lb, sbk[2], H - 1));
            memref::StoreOp::create(lb, arith::SelectOp::create(lb, in, val, f32(lb, 0.f)), st,
                                    ValueRange{arith::AddIOp::create(lb, off, e)});
            scf::YieldOp::create(lb);
          });
        };
        if (oneBlock)
          fillState(kb, pg.stateN, idx(kb, 0), [&](ImplicitLocOpBuilder &lb, Value bb, Value k) -> Value {
            return memref::LoadOp::create(lb, v[Hb], ValueRange{idx(lb, 0), d, bb, k});
          });
        gpu::BarrierOp::create(kb);

        // The grid barrier's counter of this direction, as an LLVM pointer.
        Value ctrPtr;
        // The exchange words' base address, and the address of word
        // (slot, b, k) of this direction.
        Value xchBase;
        if (v[Xch])
          xchBase = arith::IndexCastOp::create(
              kb, kb.getI64Type(), memref::ExtractAlignedPointerAsIndexOp::create(kb, v[Xch]));
        auto wordPtr = [&](ImplicitLocOpBuilder &wb, Value slot, Value bb, Value k) -> Value {
          Value w = arith::AddIOp::create(
              wb,
              arith::MulIOp::create(
                  wb,
                  arith::AddIOp::create(
                      wb,
                      arith::MulIOp::create(
                          wb, arith::AddIOp::create(wb, arith::MulIOp::create(wb, slot, idx(wb, D)), d),
                          idx(wb, B)),
                      bb),
                  idx(wb, H)),
              k);
          Value a = arith::AddIOp::create(
              wb, xchBase,
              arith::MulIOp::create(wb, arith::IndexCastOp::create(wb, wb.getI64Type(), w),
                                    arith::ConstantOp::create(wb, wb.getI64IntegerAttr(8))));
          return LLVM::IntToPtrOp::create(wb, LLVM::LLVMPointerType::get(ctx()), a);
        };
        auto i32Of = [&](ImplicitLocOpBuilder &wb, Value step, int64_t plus) -> Value {
          return arith::IndexCastOp::create(wb, wb.getI32Type(),
                                            arith::AddIOp::create(wb, step, idx(wb, plus)));
        };
        if (!oneBlock && !flagSync) {
          Value base = memref::ExtractAlignedPointerAsIndexOp::create(kb, v[Ctr]);
          Value addr = arith::IndexCastOp::create(
              kb, kb.getI64Type(),
              add(base, mul(d, 4)));
          ctrPtr = LLVM::IntToPtrOp::create(kb, LLVM::LLVMPointerType::get(ctx()), addr);
        }
        // Fills st from element `off` with the B x Kp words of `slot` once
        // every tag reads `tag` (zeros past H).
        auto fillWords = [&](ImplicitLocOpBuilder &fb, Value slot, Value tag, Value off) {
          const int64_t n = B * Kp, E = llvm::divideCeil(n, NT);
          SmallVector<Value> valid, inH, ptrs;
          SmallVector<Type> i64s(E, fb.getI64Type());
          for (int64_t i = 0; i < E; ++i) {
            Value e = arith::AddIOp::create(fb, tid, idx(fb, i * NT));
            valid.push_back(arith::CmpIOp::create(fb, arith::CmpIPredicate::ult, e, idx(fb, n)));
            auto bk = delinearize(fb, minI(fb, e, n - 1), {B, Kp});
            inH.push_back(arith::AndIOp::create(
                fb, valid.back(),
                arith::CmpIOp::create(fb, arith::CmpIPredicate::ult, bk[1], idx(fb, H))));
            ptrs.push_back(wordPtr(fb, slot, bk[0], minI(fb, bk[1], H - 1)));
          }
          auto wait = scf::WhileOp::create(
              fb, i64s, ValueRange{},
              [&](OpBuilder &wob, Location wl, ValueRange) {
                ImplicitLocOpBuilder wb(wl, wob);
                SmallVector<Value> words;
                for (int64_t i = 0; i < E; ++i)
                  words.push_back(relaxedDeviceLoad(wb, wb.getI64Type(), ptrs[i], 8));
                Value pending = arith::ConstantOp::create(wb, wb.getBoolAttr(false));
                for (int64_t i = 0; i < E; ++i) {
                  Value got = arith::TruncIOp::create(
                      wb, wb.getI32Type(),
                      arith::ShRUIOp::create(
                          wb, words[i],
                          arith::ConstantOp::create(wb, wb.getI64IntegerAttr(32))));
                  Value late = arith::AndIOp::create(
                      wb, inH[i], arith::CmpIOp::create(wb, arith::CmpIPredicate::ne, got, tag));
                  pending = arith::OrIOp::create(wb, pending, late);
                }
                scf::ConditionOp::create(wb, pending, words);
              },
              [&](OpBuilder &wob, Location wl, ValueRange) {
                scf::YieldOp::create(wob, wl);
              });
          for (int64_t i = 0; i < E; ++i) {
            scf::IfOp::create(fb, valid[i], [&](OpBuilder &iob, Location il) {
              ImplicitLocOpBuilder ib2(il, iob);
              Value val = arith::BitcastOp::create(
                  ib2, ib2.getF32Type(),
                  arith::TruncIOp::create(ib2, ib2.getI32Type(), wait.getResult(i)));
              memref::StoreOp::create(
                  ib2, arith::SelectOp::create(ib2, inH[i], val, f32(ib2, 0.f)), st,
                  ValueRange{arith::AddIOp::create(
                          ib2, off, arith::AddIOp::create(ib2, tid, idx(ib2, i * NT)))});
              scf::YieldOp::create(ib2);
            });
          }
        };
        // Publishes (value, step + 1) as word (slot, bic, jc), one 64-bit
        // relaxed store.
        auto publish = [&](ImplicitLocOpBuilder &eb, Value val, Value slot, Value step) {
          Value bits = arith::ExtUIOp::create(
              eb, eb.getI64Type(), arith::BitcastOp::create(eb, eb.getI32Type(), val));
          Value tagged = arith::OrIOp::create(
              eb, bits,
              arith::ShLIOp::create(
                  eb, arith::ExtUIOp::create(eb, eb.getI64Type(), i32Of(eb, step, 1)),
                  arith::ConstantOp::create(eb, eb.getI64IntegerAttr(32))));
          LLVM::StoreOp::create(eb, tagged, wordPtr(eb, slot, bic, jc), /*alignment=*/8,
                                /*isVolatile=*/false, /*isNonTemporal=*/false,
                                /*isInvariantGroup=*/false,
                                LLVM::AtomicOrdering::monotonic, "device");
        };
        if (pg.regs || pg.mma) {
          // The register design (PersistGeometry::regs). The lane's weights:
          // w[g][m] = R[d][g][j][li + m * L] (0 past H and in idle groups),
          // loaded once; the k loop below is unrolled, so each stays in a
          // register.
          const int64_t M = pg.M;
          Value unitOk = arith::AndIOp::create(kb, ult(gi, U), ult(j, H));
          SmallVector<Value> wreg;
          for (int64_t g = 0; g < G && pg.regs; ++g)
            for (int64_t m = 0; m < M; ++m) {
              Value k = arith::AddIOp::create(kb, li, idx(kb, m * L));
              Value in = arith::AndIOp::create(kb, unitOk, ult(k, H));
              Value wv = memref::LoadOp::create(
                  kb, v[Rk], ValueRange{d, idx(kb, g), jc, minI(kb, k, H - 1)});
              wreg.push_back(arith::SelectOp::create(kb, in, wv, f32(kb, 0.f)));
            }
          // The projected input of the lane's cell at `stepv`.
          auto projLoads = [&](ImplicitLocOpBuilder &wb, Value stepv) {
            Value row = arith::AddIOp::create(
                wb, arith::MulIOp::create(wb, timeOf(wb, d, stepv), idx(wb, B)), bic);
            SmallVector<Value> p;
            for (int64_t g = 0; g < G; ++g)
              p.push_back(memref::LoadOp::create(wb, v[P], ValueRange{d, row, idx(wb, g), jc}));
            return p;
          };
          // Carried from step to step: the cell's h and c, and the projected
          // input of the next step (loaded one step ahead).
          SmallVector<Value> init = {
              memref::LoadOp::create(kb, v[Hb], ValueRange{idx(kb, 0), d, bic, jc})};
          if (s.isLSTM())
            init.push_back(memref::LoadOp::create(kb, v[Cb], ValueRange{d, bic, jc}));
          const int64_t pAt = init.size();
          llvm::append_range(init, projLoads(kb, idx(kb, 0)));
          Value rbn = s.isGRU() ? memref::LoadOp::create(kb, v[Brn], ValueRange{d, jc}).getResult()
                                : Value();
          // Independent partial sums per (gate, batch row), so that a lane
          // has at least 8 FMA chains in flight.
          const int64_t A = pg.regs ? std::clamp<int64_t>(8 / (G * B), 1, M) : 1;
          // The bf16 design (PersistGeometry::mma): warp w multiplies tile
          // tt = w % TB at the k tiles of ks = w / TB; lane = 4 * grp + tig
          // holds, per k tile, the A fragment of m16n8k16 (rows grp and
          // grp + 8, k 2 tig, 2 tig + 1 and those + 8), the B fragment of
          // batch row grp (k 2 tig, 2 tig + 1 and + 8) and the sums of rows
          // grp and grp + 8 at batch rows 2 tig and 2 tig + 1.
          const int64_t UT = pg.UT, TB = pg.TB, KS = pg.KS, KT = pg.KT, KTW = pg.KTW;
          auto divI = [&](ImplicitLocOpBuilder &wb, Value x, int64_t c) {
            return arith::DivUIOp::create(wb, x, idx(wb, c)).getResult();
          };
          auto remI = [&](ImplicitLocOpBuilder &wb, Value x, int64_t c) {
            return arith::RemUIOp::create(wb, x, idx(wb, c)).getResult();
          };
          auto addI = [&](ImplicitLocOpBuilder &wb, Value x, int64_t c) {
            return arith::AddIOp::create(wb, x, idx(wb, c)).getResult();
          };
          // Two f32 rounded to bf16 (to nearest even) in one word, `lo` in
          // the low half: the element order of the mma fragments.
          auto packBF16 = [&](ImplicitLocOpBuilder &wb, Value lo, Value hi) -> Value {
            return LLVM::InlineAsmOp::create(
                       wb, wb.getI32Type(), ValueRange{hi, lo},
                       "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f",
                       /*has_side_effects=*/false, /*is_align_stack=*/false,
                       LLVM::tailcallkind::TailCallKind::None,
                       LLVM::AsmDialectAttr(), ArrayAttr())
                .getResult(0);
          };
          Value warp, grp, tig, mmaWarp, tt, ks;
          SmallVector<Value> areg;
          if (pg.mma) {
            warp = divI(kb, tid, 32);
            Value lane = remI(kb, tid, 32);
            grp = divI(kb, lane, 4);
            tig = remI(kb, lane, 4);
            mmaWarp = ult(warp, TB * KS);
            Value wc = minI(kb, warp, TB * KS - 1);
            tt = remI(kb, wc, TB);
            ks = divI(kb, wc, TB);
            // A[r][k] = R[d][g][unit][k], r = g * UT + u, unit = jb * U +
            // tt * UT + u (0 past G * UT, H, and in the warps without a
            // tile).
            for (int64_t i = 0; i < KTW; ++i) {
              Value kt = addI(kb, arith::MulIOp::create(kb, ks, idx(kb, KTW)), i);
              for (int64_t q = 0; q < 4; ++q) {
                Value r = addI(kb, grp, (q & 1) ? 8 : 0);
                Value g = divI(kb, r, UT), u = remI(kb, r, UT);
                Value unit = add(mul(jb, U), add(mul(tt, UT), u));
                Value rowOk = arith::AndIOp::create(
                    kb, mmaWarp, arith::AndIOp::create(kb, ult(g, G), ult(unit, H)));
                Value k0 = addI(kb, add(mul(kt, 16), mul(tig, 2)), (q & 2) ? 8 : 0);
                SmallVector<Value> pair;
                for (int64_t e = 0; e < 2; ++e) {
                  Value k = addI(kb, k0, e);
                  Value ok = arith::AndIOp::create(kb, rowOk, ult(k, H));
                  Value wv = memref::LoadOp::create(
                      kb, v[Rk], ValueRange{d, minI(kb, g, G - 1), minI(kb, unit, H - 1),
                                            minI(kb, k, H - 1)});
                  pair.push_back(arith::SelectOp::create(kb, ok, wv, f32(kb, 0.f)));
                }
                areg.push_back(packBF16(kb, pair[0], pair[1]));
              }
            }
          }
          // The bf16 design's sums of one step: the warps' mma tiles into
          // red, a barrier, then thread (bi, jl) adds the KS parts of its
          // unit's G sums at batch row bi.
          auto mmaSums = [&](ImplicitLocOpBuilder &sb, Value off) {
            scf::IfOp::create(sb, mmaWarp, [&](OpBuilder &iob, Location il) {
              ImplicitLocOpBuilder wb(il, iob);
              auto ultW = [&](Value x, int64_t c) -> Value {
                return arith::CmpIOp::create(wb, arith::CmpIPredicate::ult, x, idx(wb, c));
              };
              Value nOk = ultW(grp, B);
              Value hrow = arith::AddIOp::create(
                  wb, off, arith::MulIOp::create(wb, minI(wb, grp, B - 1), idx(wb, Kp)));
              auto f32Ty = wb.getF32Type();
              auto accTy = LLVM::LLVMStructType::getLiteral(
                  ctx(), SmallVector<Type>(4, f32Ty));
              // Two chains of accumulators (even and odd k tiles).
              SmallVector<SmallVector<Value>> acc(2, SmallVector<Value>(4, f32(wb, 0.f)));
              for (int64_t i = 0; i < KTW; ++i) {
                Value kt = arith::AddIOp::create(
                    wb, arith::MulIOp::create(wb, ks, idx(wb, KTW)), idx(wb, i));
                Value ok = arith::AndIOp::create(wb, nOk, ultW(kt, KT));
                Value k0 = arith::SelectOp::create(
                    wb, ok,
                    arith::AddIOp::create(wb, arith::MulIOp::create(wb, kt, idx(wb, 16)),
                                          arith::MulIOp::create(wb, tig, idx(wb, 2))),
                    idx(wb, 0));
                SmallVector<Value> bw;
                for (int64_t half = 0; half < 2; ++half) {
                  SmallVector<Value> hv;
                  for (int64_t e = 0; e < 2; ++e) {
                    Value hk = memref::LoadOp::create(
                        wb, st, ValueRange{arith::AddIOp::create(
                                    wb, hrow, arith::AddIOp::create(wb, k0, idx(wb, half * 8 + e)))});
                    hv.push_back(arith::SelectOp::create(wb, ok, hk, f32(wb, 0.f)));
                  }
                  bw.push_back(packBF16(wb, hv[0], hv[1]));
                }
                SmallVector<Value> &c = acc[i % 2];
                SmallVector<Value> operands = {areg[i * 4], areg[i * 4 + 1], areg[i * 4 + 2],
                                               areg[i * 4 + 3], bw[0], bw[1]};
                llvm::append_range(operands, c);
                Value d4 = LLVM::InlineAsmOp::create(
                               wb, accTy, operands,
                               "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                               "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
                               "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                               /*has_side_effects=*/false, /*is_align_stack=*/false,
                               LLVM::tailcallkind::TailCallKind::None,
                               LLVM::AsmDialectAttr(), ArrayAttr())
                               .getResult(0);
                for (int64_t q = 0; q < 4; ++q)
                  c[q] = LLVM::ExtractValueOp::create(wb, d4, ArrayRef<int64_t>{q});
              }
              // red[(ks * TB + tt) * 128 + row * 8 + col].
              Value base = arith::MulIOp::create(
                  wb, arith::AddIOp::create(wb, arith::MulIOp::create(wb, ks, idx(wb, TB)), tt),
                  idx(wb, 128));
              for (int64_t q = 0; q < 4; ++q) {
                Value sum = KTW > 1 ? arith::AddFOp::create(wb, acc[0][q], acc[1][q]).getResult()
                                    : acc[0][q];
                Value row = arith::AddIOp::create(wb, grp, idx(wb, q >= 2 ? 8 : 0));
                Value col = arith::AddIOp::create(
                    wb, arith::MulIOp::create(wb, tig, idx(wb, 2)), idx(wb, q % 2));
                Value at = arith::AddIOp::create(
                    wb, base,
                    arith::AddIOp::create(wb, arith::MulIOp::create(wb, row, idx(wb, 8)), col));
                memref::StoreOp::create(wb, sum, pre, ValueRange{at});
              }
              scf::YieldOp::create(wb);
            });
            gpu::BarrierOp::create(sb);
            Value tc = arith::DivUIOp::create(sb, jl, idx(sb, UT));
            Value u = arith::RemUIOp::create(sb, jl, idx(sb, UT));
            SmallVector<Value> sums;
            for (int64_t g = 0; g < G; ++g) {
              Value sum;
              for (int64_t k2 = 0; k2 < KS; ++k2) {
                Value at = arith::AddIOp::create(
                    sb,
                    arith::MulIOp::create(sb, arith::AddIOp::create(sb, idx(sb, k2 * TB), tc),
                                          idx(sb, 128)),
                    arith::AddIOp::create(
                        sb,
                        arith::MulIOp::create(sb, arith::AddIOp::create(sb, idx(sb, g * UT), u),
                                              idx(sb, 8)),
                        bic));
                Value part = memref::LoadOp::create(sb, pre, ValueRange{at});
                sum = sum ? arith::AddFOp::create(sb, sum, part).getResult() : part;
              }
              sums.push_back(sum);
            }
            return sums;
          };
          scf::ForOp::create(
              kb, idx(kb, 0), idx(kb, T), idx(kb, 1), init,
              [&](OpBuilder &ob, Location l, Value step, ValueRange carried) {
            ImplicitLocOpBuilder sb(l, ob);
            CellInputs in;
            in.cur = arith::RemUIOp::create(sb, step, idx(sb, 2));
            in.nxt = arith::SubIOp::create(sb, idx(sb, 1), in.cur);
            in.t = timeOf(sb, d, step);
            in.hPrev = carried[0];
            in.cOld = s.isLSTM() ? carried[1] : Value();
            in.pOf = llvm::to_vector(carried.drop_front(pAt));
            in.rbn = rbn;
            SmallVector<Value> pNext = projLoads(
                sb, arith::MinUIOp::create(sb, arith::AddIOp::create(sb, step, idx(sb, 1)),
                                           idx(sb, T - 1)));
            // h of this step in st slot cur: one block: the last step's
            // epilogues wrote it; else filled from the words (step 0: from h0).
            Value off = arith::MulIOp::create(sb, in.cur, idx(sb, B * Kp));
            if (!oneBlock) {
              Value first = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, step, idx(sb, 0));
              scf::IfOp::create(
                  sb, first,
                  [&](OpBuilder &iob, Location il) {
                    ImplicitLocOpBuilder ib2(il, iob);
                    fillState(ib2, B * Kp, off, [&](ImplicitLocOpBuilder &lb, Value bb, Value k) -> Value {
                      return memref::LoadOp::create(lb, v[Hb], ValueRange{idx(lb, 0), d, bb, k});
                    });
                    scf::YieldOp::create(ib2);
                  },
                  [&](OpBuilder &iob, Location il) {
                    ImplicitLocOpBuilder ib2(il, iob);
                    fillWords(ib2, in.cur, i32Of(ib2, step, 0), off);
                    scf::YieldOp::create(ib2);
                  });
              gpu::BarrierOp::create(sb);
            }
            SmallVector<Value> sums;
            if (pg.mma) {
              sums = mmaSums(sb, off);
            } else {
            // The dot products: every gate row of the unit against every
            // batch row, unrolled over the lane's M values of k.
            SmallVector<Value> acc(G * B * A, f32(sb, 0.f));
            SmallVector<Value> hBase;
            for (int64_t bb = 0; bb < B; ++bb)
              hBase.push_back(arith::AddIOp::create(
                  sb, off, arith::AddIOp::create(sb, li, idx(sb, bb * Kp))));
            for (int64_t m = 0; m < M; ++m) {
              SmallVector<Value> hv;
              for (int64_t bb = 0; bb < B; ++bb)
                hv.push_back(memref::LoadOp::create(
                    sb, st, ValueRange{arith::AddIOp::create(sb, hBase[bb], idx(sb, m * L))}));
              for (int64_t g = 0; g < G; ++g)
                for (int64_t bb = 0; bb < B; ++bb) {
                  Value &a = acc[(g * B + bb) * A + m % A];
                  a = math::FmaOp::create(sb, wreg[g * M + m], hv[bb], a);
                }
            }
            // Partial sums, then the butterfly over the group's L lanes
            // (every lane of the warp takes part; every lane ends with the
            // same sums), then lane bb keeps batch row bb's.
            for (int64_t g = 0; g < G; ++g) {
              Value mine;
              for (int64_t bb = 0; bb < B; ++bb) {
                Value sum = acc[(g * B + bb) * A];
                for (int64_t q = 1; q < A; ++q)
                  sum = arith::AddFOp::create(sb, sum, acc[(g * B + bb) * A + q]);
                sum = butterflySum(sb, sum, L);
                mine = bb == 0 ? sum
                               : arith::SelectOp::create(
                                     sb, arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, li, idx(sb, bb)),
                                     sum, mine).getResult();
              }
              sums.push_back(mine);
            }
            }
            // The cell, in every lane (the idle ones on clamped values);
            // the active lanes store it.
            Value cNew;
            Value hNew = cellMath(sb, in, d, sums, &cNew);
            scf::IfOp::create(sb, active, [&](OpBuilder &iob, Location il) {
              ImplicitLocOpBuilder eb(il, iob);
              if (cNew)
                memref::StoreOp::create(eb, cNew, v[Cb], ValueRange{d, bic, jc});
              memref::StoreOp::create(eb, hNew, v[Hb], ValueRange{in.nxt, d, bic, jc});
              memref::StoreOp::create(eb, hNew, v[Y], ValueRange{in.t, d, bic, jc});
              if (oneBlock) {
                memref::StoreOp::create(eb, hNew, st, ValueRange{stIndex(eb, in.nxt, bic, jc)});
              } else {
                publish(eb, hNew, in.nxt, step);
              }
              scf::YieldOp::create(eb);
            });
            // One block: h of the next step is complete in st after this
            // barrier. Else the next step's fill writes the other slot, and
            // the one after it this slot only after every thread passed the
            // next step's barrier, after its dot products here.
            if (oneBlock)
              gpu::BarrierOp::create(sb);
            SmallVector<Value> next = {hNew};
            if (cNew)
              next.push_back(cNew);
            llvm::append_range(next, pNext);
            scf::YieldOp::create(sb, next);
          });
        } else {
        const int64_t nph = phases.size();
        scf::ForOp::create(kb, idx(kb, 0), idx(kb, T), idx(kb, 1), ValueRange{},
                           [&](OpBuilder &ob, Location l, Value step, ValueRange) {
          ImplicitLocOpBuilder sb(l, ob);
          Value cur = arith::RemUIOp::create(sb, step, idx(sb, 2));
          auto stateLoad = [&](ImplicitLocOpBuilder &wb, Value k, bool rh) -> Value {
            return memref::LoadOp::create(
                wb, st, ValueRange{stIndex(wb, rh ? idx(wb, 2) : cur, bic, k)});
          };
          auto stateStore = [&](ImplicitLocOpBuilder &wb, Value val, bool rh) {
            Value slot = rh ? idx(wb, 2) : arith::SubIOp::create(wb, idx(wb, 1), cur).getResult();
            memref::StoreOp::create(wb, val, st, ValueRange{stIndex(wb, slot, bic, jc)});
          };
          SharedState state{stateLoad, stateStore};
          const SharedState *hs = oneBlock ? &state : nullptr;
          for (auto [pi, ph] : llvm::enumerate(phases)) {
            // (A copy: lambdas below capture it, and C++17 lambdas cannot
            // capture structured bindings.)
            const int phase = ph;
            // What the epilogue reads, loaded before everything else.
            CellInputs in = cellLoads(sb, v, step, d, bic, jc, phase, hs);
            // The phase's source vector in st: one block: h (slot step % 2)
            // or r*h (slot 2); else slot 0, filled from global memory.
            Value srcSlot = oneBlock ? (phase == 2 ? idx(sb, 2) : cur) : idx(sb, 0);
            auto fillFromGlobal = [&](ImplicitLocOpBuilder &fb) {
              fillState(fb, B * Kp, idx(fb, 0), [&](ImplicitLocOpBuilder &lb, Value bb, Value k) -> Value {
                if (phase == 2)
                  return memref::LoadOp::create(lb, v[RHb], ValueRange{d, bb, k});
                return memref::LoadOp::create(lb, v[Hb], ValueRange{cur, d, bb, k});
              });
            };
            // Tagged words: the source vector of step s is in slot s % 2
            // with tag s (r*h: slot 2, tag s + 1); each thread loads all of
            // its words at once and reloads them until every tag matches.
            // Step 0 reads h0 as the init kernel left it.
            auto fillFromWords = [&](ImplicitLocOpBuilder &fb) {
              fillWords(fb, phase == 2 ? idx(fb, 2) : cur,
                        i32Of(fb, step, phase == 2 ? 1 : 0), idx(fb, 0));
            };
            if (!oneBlock && !flagSync)
              fillFromGlobal(sb);
            if (!oneBlock && flagSync) {
              if (phase == 2) {
                fillFromWords(sb);
              } else {
                Value first = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, step, idx(sb, 0));
                scf::IfOp::create(
                    sb, first,
                    [&](OpBuilder &iob, Location il) {
                      ImplicitLocOpBuilder ib2(il, iob);
                      fillFromGlobal(ib2);
                      scf::YieldOp::create(ib2);
                    },
                    [&](OpBuilder &iob, Location il) {
                      ImplicitLocOpBuilder ib2(il, iob);
                      fillFromWords(ib2);
                      scf::YieldOp::create(ib2);
                    });
              }
            }
            if (!oneBlock)
              gpu::BarrierOp::create(sb);
            // The dot products of this phase: item r (a row of its gates)
            // against every batch row; group gi takes items gi, gi + groups,
            // ... (B accumulators per pass, all passes in one loop over k).
            const int64_t g0 = phase == 2 ? 2 : 0;
            const int64_t items = (phase == 1 ? 2 : phase == 2 ? 1 : G) * U;
            const int64_t passes = llvm::divideCeil(items, pg.groups);
            SmallVector<Value> wBase, rowOf, item, hBase;
            for (int64_t p = 0; p < passes; ++p) {
              Value it = arith::AddIOp::create(sb, gi, idx(sb, p * pg.groups));
              Value r = arith::AddIOp::create(sb, minI(sb, it, items - 1), idx(sb, g0 * U));
              item.push_back(it);
              rowOf.push_back(r);
              wBase.push_back(arith::AddIOp::create(
                  sb, arith::MulIOp::create(sb, r, idx(sb, S)), li));
            }
            for (int64_t bb = 0; bb < B; ++bb)
              hBase.push_back(arith::AddIOp::create(
                  sb, stIndex(sb, srcSlot, idx(sb, bb), idx(sb, 0)), li));
            SmallVector<Value> init(passes * B, f32(sb, 0.f));
            auto loop = scf::ForOp::create(
                sb, idx(sb, 0), idx(sb, Kp), idx(sb, L), init,
                [&](OpBuilder &lob, Location ll, Value k, ValueRange acc) {
                  ImplicitLocOpBuilder lb(ll, lob);
                  SmallVector<Value> hv, next;
                  for (int64_t bb = 0; bb < B; ++bb)
                    hv.push_back(memref::LoadOp::create(
                        lb, st, ValueRange{arith::AddIOp::create(lb, hBase[bb], k)}));
                  for (int64_t p = 0; p < passes; ++p) {
                    Value wv = memref::LoadOp::create(
                        lb, ws, ValueRange{arith::AddIOp::create(lb, wBase[p], k)});
                    for (int64_t bb = 0; bb < B; ++bb)
                      next.push_back(math::FmaOp::create(lb, wv, hv[bb], acc[p * B + bb]));
                  }
                  scf::YieldOp::create(lb, next);
                });
            // A factor below the trip count keeps the loop (and its results)
            // in place.
            int64_t trips = Kp / L,
                    factor = std::min<int64_t>(trips - 1, passes * B >= 8 ? 4 : kUnrollK);
            while (factor > 1 && trips % factor)
              --factor;
            if (factor > 1)
              (void)loopUnrollByFactor(loop, factor);
            Value leader = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, li, idx(sb, 0));
            for (int64_t p = 0; p < passes; ++p) {
              SmallVector<Value> sums;
              for (int64_t bb = 0; bb < B; ++bb) {
                // Butterfly over the group's L lanes (every lane of the warp
                // takes part: shfl.sync with the full mask).
                sums.push_back(butterflySum(sb, loop.getResult(p * B + bb), L));
              }
              Value store = arith::AndIOp::create(
                  sb, leader,
                  arith::CmpIOp::create(sb, arith::CmpIPredicate::ult, item[p], idx(sb, items)));
              scf::IfOp::create(sb, store, [&](OpBuilder &iob, Location il) {
                ImplicitLocOpBuilder ib2(il, iob);
                for (int64_t bb = 0; bb < B; ++bb)
                  memref::StoreOp::create(
                      ib2, sums[bb], pre,
                      ValueRange{arith::AddIOp::create(ib2, rowOf[p], idx(ib2, bb * rows))});
                scf::YieldOp::create(ib2);
              });
            }
            gpu::BarrierOp::create(sb);
            // The epilogue of (bi, j) on its sums.
            scf::IfOp::create(sb, active, [&](OpBuilder &iob, Location il) {
              ImplicitLocOpBuilder eb(il, iob);
              SmallVector<Value> acc;
              for (int64_t g : in.gates)
                acc.push_back(memref::LoadOp::create(
                    eb, pre,
                    ValueRange{arith::AddIOp::create(
                        eb, arith::MulIOp::create(eb, bic, idx(eb, rows)),
                        arith::AddIOp::create(eb, jl, idx(eb, g * U)))}));
              Value out;
              cellEpilogue(eb, v, in, d, bic, jc, phase, acc, hs, &out);
              if (!oneBlock && flagSync) {
                publish(eb, out, phase == 1 ? idx(eb, 2) : in.nxt, step);
              }
              scf::YieldOp::create(eb);
            });
            if (!oneBlock && flagSync) {
              // No barrier: the next phase waits for its words (and refills
              // st only after every thread passed this phase's barrier
              // before the epilogue).
              continue;
            }
            if (oneBlock) {
              // The block's barrier also makes its global writes visible.
              gpu::BarrierOp::create(sb);
              continue;
            }
            // Grid barrier number n = step * phases + pi + 1 of direction d:
            // all its blocks have arrived when the counter reaches n * nbd.
            Value n = arith::AddIOp::create(
                sb, arith::MulIOp::create(sb, step, idx(sb, nph)), idx(sb, pi + 1));
            Value target = arith::IndexCastOp::create(
                sb, sb.getI32Type(), arith::MulIOp::create(sb, n, idx(sb, nbd)));
            gpu::BarrierOp::create(sb);
            Value first = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, tid, idx(sb, 0));
            scf::IfOp::create(sb, first, [&](OpBuilder &ob2, Location l2) {
              ImplicitLocOpBuilder tb(l2, ob2);
              // Release the block's writes (h, c, Y; the CTA barrier made
              // them this thread's) at GPU scope, arrive, then spin on
              // acquiring loads (no read-modify-write traffic on the
              // counter while waiting).
              LLVM::FenceOp::create(tb, LLVM::AtomicOrdering::release, "device");
              LLVM::AtomicRMWOp::create(
                  tb, LLVM::AtomicBinOp::add, ctrPtr,
                  arith::ConstantOp::create(tb, tb.getI32IntegerAttr(1)),
                  LLVM::AtomicOrdering::monotonic, "device", /*alignment=*/4);
              scf::WhileOp::create(
                  tb, TypeRange{}, ValueRange{},
                  [&](OpBuilder &wob, Location wl, ValueRange) {
                    ImplicitLocOpBuilder wb(wl, wob);
                    Value seen = relaxedDeviceLoad(wb, wb.getI32Type(), ctrPtr, 4);
                    Value wait = arith::CmpIOp::create(wb, arith::CmpIPredicate::slt,
                                                       seen, target);
                    scf::ConditionOp::create(wb, wait, ValueRange{});
                  },
                  [&](OpBuilder &wob, Location wl, ValueRange) {
                    scf::YieldOp::create(wob, wl);
                  });
              // Acquire the other blocks' writes.
              LLVM::FenceOp::create(tb, LLVM::AtomicOrdering::acquire, "device");
              scf::YieldOp::create(tb);
            });
            gpu::BarrierOp::create(sb);
          }
          scf::YieldOp::create(sb);
        });
        }
        gpu::ReturnOp::create(kb);
      }
      Value one = idx(b, 1);
      Value smem = arith::ConstantOp::create(
          b, b.getI32IntegerAttr(int32_t(pg.sharedFloats * 4)));
      gpu::LaunchFuncOp::create(b, fn, gpu::KernelDim3{idx(b, grid), one, one},
                                gpu::KernelDim3{idx(b, NT), one, one}, smem,
                                o.values);
    }
  }

  // 4. Final states.
  {
    Operands o = pick({Hb, Cb, Hn, Cn});
    launch(b, "final", grid1D(DBH), kBlock, o.values,
           [&](ImplicitLocOpBuilder &kb, Value bid, Value tid, ValueRange ka) {
      auto v = view(o, ka);
      forThread(kb, bid, tid, kBlock, DBH, [&](ImplicitLocOpBuilder &tb, Value gid) {
        auto dbj = delinearize(tb, gid, {D, B, H});
        Value h = memref::LoadOp::create(
            tb, v[Hb], ValueRange{idx(tb, T % 2), dbj[0], dbj[1], dbj[2]});
        memref::StoreOp::create(tb, h, v[Hn], dbj);
        if (v[Cn])
          memref::StoreOp::create(tb, memref::LoadOp::create(tb, v[Cb], dbj), v[Cn], dbj);
      });
    });
  }

  if (gpuMode) {
    gpu::MemcpyOp::create(b, Type(), ValueRange{}, yHost, ops[Y]);
    gpu::MemcpyOp::create(b, Type(), ValueRange{}, hnHost, ops[Hn]);
    if (cnHost)
      gpu::MemcpyOp::create(b, Type(), ValueRange{}, cnHost, ops[Cn]);
    for (Value v : deviceBuffers)
      gpu::DeallocOp::create(b, Type(), ValueRange{}, v);
  }
  // mapping=cpu: scratch buffers are freed by the buffer-deallocation
  // pipeline, as convert-rnn-to-cpu's.
  func::ReturnOp::create(b);
  return func;
}

struct Options {
  Mapping mapping;
  std::string design;
  int64_t maxBlocks;
  int64_t sharedBytes;
  int64_t unitsPerBlock;
  bool flagSync;
  bool regWeights;
  /// precision=bf16: the persistent kernel's tensor-core design where a
  /// layer fits it.
  bool bf16;
};

/// What the generated kernels run: every layer but one with sequence_lens
/// (they run all T steps for every batch row).
const rnn::BackendCapabilities kGPUKernels = {
    /*name=*/"the GPU kernels",    /*sequenceLens=*/false,
    /*reverseOnly=*/true,          /*clip=*/true,
    /*gruResetBeforeGemm=*/true,   /*anyActivations=*/true,
    /*lstmVariants=*/false};

LogicalResult lowerSequence(rnn::SequenceOp op, ModuleOp module,
                            const Options &opts) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << "convert-rnn-to-gpu: " << why;
  };
  // What the kernels cannot run stays, with a remark, for the CPU kernels.
  std::string why = rnn::whyUnsupported(op, kGPUKernels);
  if (!why.empty()) {
    rnn::remarkLayerLeftForCPU(op, "convert-rnn-to-gpu", why);
    return success();
  }
  auto xt = dyn_cast<RankedTensorType>(op.getX().getType());
  if (!xt || !xt.hasStaticShape() || xt.getRank() != 3 ||
      !xt.getElementType().isF32())
    return fail("needs a static f32 [T, B, I] input; specialise the input "
                "shapes first (--input-shape)");
  auto w = onnx::getConstantF32(op.getW()), r = onnx::getConstantF32(op.getR()),
       bw = onnx::getConstantF32(op.getBw()), br = onnx::getConstantF32(op.getBr());
  if (!w || !r || !bw || !br)
    return fail("needs constant f32 weights");
  LayerSpec s;
  if (failed(rnn::describeLayer(op, "convert-rnn-to-gpu", xt, w->shape[2],
                                (bool)op.getH0(), (bool)op.getC0(), s)))
    return failure();

  // The recurrence kernel: persistent for batch <= 4 when it fits.
  int64_t u = 0;
  std::string whyNot;
  if (opts.mapping == Mapping::GPU) {
    // Split-K: one block per direction when everything fits its shared
    // memory (no grid barrier), else as many blocks as may be co-resident
    // (the less each block's step takes), fewer only where a unit per
    // block would leave blocks idle.
    auto geometry = [&](int64_t units) {
      return persistGeometry(s, units, opts.regWeights && opts.flagSync);
    };
    auto fitsWith = [&](int64_t units) {
      PersistGeometry g = geometry(units);
      return g.sharedFloats * 4 <= opts.sharedBytes &&
             (g.regs || s.B * units <= 1024) && s.D * g.nbd <= opts.maxBlocks;
    };
    int64_t perDir = std::max<int64_t>(1, opts.maxBlocks / s.D);
    u = fitsWith(s.H) ? s.H : llvm::divideCeil(s.H, std::min(perDir, s.H));
    if (opts.unitsPerBlock > 0)
      u = std::min(opts.unitsPerBlock, s.H);
    if (!fitsWith(u)) {
      PersistGeometry g = geometry(u);
      whyNot = (Twine(s.D) + " x " + Twine(g.nbd) + " blocks of " + Twine(u) +
                " units need " + Twine(g.sharedFloats * 4) +
                " bytes of shared memory each (at most " + Twine(opts.sharedBytes) +
                "), " + Twine(s.B * u) + " epilogue threads (at most 1024) and " +
                Twine(s.D * g.nbd) + " co-resident blocks (at most " +
                Twine(opts.maxBlocks) + ")")
                   .str();
    }
  } else {
    // The CPU-mapped twin keeps the one-thread-per-unit design: U units per
    // block, as few as keep the grid within maxBlocks, but at least a warp
    // of threads (B * U >= 32) when that fits too.
    int64_t perDir = std::max<int64_t>(1, opts.maxBlocks / s.D);
    int64_t uMin = llvm::divideCeil(s.H, perDir);
    auto fitsWith = [&](int64_t units) {
      return s.H * s.G * units * 4 <= opts.sharedBytes && s.B * units <= 1024;
    };
    u = std::max<int64_t>(uMin, std::min<int64_t>(s.H, llvm::divideCeil(32, s.B)));
    if (!fitsWith(u))
      u = uMin;
    int64_t stateBytes = (s.twoPhase() ? 3 : 2) * s.B * s.H * 4;
    if (fitsWith(s.H) && s.H * s.G * s.H * 4 + stateBytes <= opts.sharedBytes)
      u = s.H;
    if (!fitsWith(u))
      whyNot = (Twine(s.D) + " x " + Twine(llvm::divideCeil(s.H, u)) +
                " blocks of " + Twine(u) + " units need " +
                Twine(s.H * s.G * u * 4) + " bytes of shared memory each (at most " +
                Twine(opts.sharedBytes) + ") and " + Twine(s.B * u) +
                " threads (at most 1024)")
                   .str();
  }
  bool fits = whyNot.empty();
  bool persistent = opts.design == "persistent" ||
                    (opts.design == "auto" && s.B <= 4 && fits);
  // precision=bf16: the tensor-core design where the layer fits it, else
  // f32 with a remark saying why.
  bool mma = false;
  if (opts.bf16) {
    std::string whyF32;
    PersistGeometry mg;
    if (s.twoPhase())
      whyF32 = "a GRU without linear_before_reset multiplies r * h, which "
               "its first products give, in a second product";
    else if (s.B > 8)
      whyF32 = "batch " + std::to_string(s.B) + " is above 8, the columns of "
               "an mma tile";
    else if (!opts.flagSync)
      whyF32 = "it exchanges h with grid-sync=flags only";
    else if (opts.design == "step")
      whyF32 = "it is a persistent design (design=step was asked for)";
    else if (opts.mapping == Mapping::CPU) {
      // The CPU-mapped twin: the persistent bodies with the operands of the
      // recurrent products rounded as the tensor cores take them.
      mma = true;
      persistent = true;
    } else {
      const int64_t UT = 16 / s.G, tiles = llvm::divideCeil(s.H, UT);
      const int64_t perDir = std::max<int64_t>(1, opts.maxBlocks / s.D);
      auto fitsMma = [&](int64_t tb) {
        PersistGeometry g = mmaGeometry(s, tb * UT);
        return mmaFits(g, opts.sharedBytes) && s.D * g.nbd <= opts.maxBlocks;
      };
      int64_t tb = opts.unitsPerBlock > 0
                       ? llvm::divideCeil(std::min(opts.unitsPerBlock, s.H), UT)
                   : fitsMma(tiles) ? tiles
                                    : llvm::divideCeil(tiles, std::min(perDir, tiles));
      mg = mmaGeometry(s, tb * UT);
      if (fitsMma(tb)) {
        mma = true;
        u = tb * UT;
        persistent = true;
      } else {
        whyF32 = (Twine(s.D) + " x " + Twine(mg.nbd) + " blocks of " +
                  Twine(mg.NT) + " threads (" + Twine(mg.TB) + " tiles of 16 "
                  "rows, " + Twine(mg.KS) + " warps each) would need " +
                  Twine(mg.sharedFloats * 4) + " bytes of shared memory (at "
                  "most " + Twine(opts.sharedBytes) + "), " +
                  Twine(mmaRegs(mg)) + " registers a thread (at most " +
                  Twine(registerBudget(mg.NT)) + ") and " +
                  Twine(s.D * mg.nbd) + " co-resident blocks (at most " +
                  Twine(opts.maxBlocks) + ")")
                     .str();
      }
    }
    if (mma && opts.mapping == Mapping::CPU)
      op->emitRemark() << "convert-rnn-to-gpu: bf16 recurrent products (h and "
                          "the weights rounded to bf16, f32 sums), the "
                          "CPU-mapped twin of the tensor-core design";
    else if (mma)
      op->emitRemark() << "convert-rnn-to-gpu: bf16 recurrent products on the "
                          "tensor cores (mma.sync m16n8k16, f32 sums): "
                       << s.D * mg.nbd << (s.D * mg.nbd == 1 ? " block" : " blocks")
                       << " of " << mg.NT << " threads, " << mg.TB
                       << (mg.TB == 1 ? " tile" : " tiles") << " of 16 gate rows, "
                       << mg.KS << (mg.KS == 1 ? " warp" : " warps") << " a tile";
    else
      op->emitRemark() << "convert-rnn-to-gpu: runs f32, not bf16: " << whyF32;
  }
  if (persistent && !fits && !mma)
    return fail("the persistent kernel does not fit: " + whyNot);

  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto h0 = rnn::castToLayerType(b, op.getH0(), {s.D, s.B, s.H},
                                 b.getF32Type(), "the initial state", fail);
  auto c0 = rnn::castToLayerType(b, s.hasC0 ? op.getC0() : Value(),
                                 {s.D, s.B, s.H}, b.getF32Type(),
                                 "the initial cell state", fail);
  if (failed(h0) || failed(c0))
    return failure();

  LayerEmitter emitter(module, s, rnn::layerSymbol(op.getLoc(), "__lstm_opt_gpu_"), opts.mapping,
                       persistent, u, opts.flagSync, opts.regWeights, mma);
  func::FuncOp fn = emitter.emit(w->values, r->values, bw->values, br->values);

  // The call site, as convert-rnn-to-cpu's: tensors through bufferization.
  SmallVector<Value> inputs;
  for (Value v : {*h0, *c0})
    if (v)
      inputs.push_back(v);
  return rnn::emitLayerCall(b, op, fn, op.getX(), inputs, s, fail);
}

} // namespace

llvm::ArrayRef<llvm::StringRef> lstm_opt::gpu_kernels::designNames() {
  static const llvm::StringRef names[] = {"auto", "step", "persistent"};
  return names;
}

llvm::ArrayRef<llvm::StringRef> lstm_opt::gpu_kernels::chipNames() {
  static const llvm::StringRef names[] = {"sm_80", "sm_90"};
  return names;
}

int64_t lstm_opt::gpu_kernels::chipSharedBytes(llvm::StringRef chip) {
  return chip.starts_with("sm_9") ? 227 * 1024 : 163 * 1024;
}

int64_t lstm_opt::gpu_kernels::chipMaxBlocks(llvm::StringRef chip) {
  return chip.starts_with("sm_9") ? 132 : 108;
}

namespace {

struct ConvertRNNToGPUPass
    : public lstm_opt::impl::ConvertRNNToGPUPassBase<ConvertRNNToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Options opts;
    if (mapping != "gpu" && mapping != "cpu") {
      module.emitError() << "convert-rnn-to-gpu: mapping must be gpu or cpu, not '"
                         << mapping << "'";
      return signalPassFailure();
    }
    if (!llvm::is_contained(gpu_kernels::designNames(), StringRef(design))) {
      module.emitError() << "convert-rnn-to-gpu: design must be auto, step or "
                            "persistent, not '" << design << "'";
      return signalPassFailure();
    }
    opts.mapping = mapping == "gpu" ? Mapping::GPU : Mapping::CPU;
    opts.design = design;
    opts.maxBlocks = std::max<int64_t>(1, maxCoResidentBlocks);
    opts.sharedBytes = std::max<int64_t>(1, sharedBytes);
    opts.unitsPerBlock = std::max<int64_t>(0, unitsPerBlock);
    if (gridSync != "flags" && gridSync != "barrier") {
      module.emitError() << "convert-rnn-to-gpu: grid-sync must be flags or "
                            "barrier, not '" << gridSync << "'";
      return signalPassFailure();
    }
    opts.flagSync = gridSync == "flags";
    if (weights != "registers" && weights != "shared") {
      module.emitError() << "convert-rnn-to-gpu: weights must be registers or "
                            "shared, not '" << weights << "'";
      return signalPassFailure();
    }
    opts.regWeights = weights == "registers";
    if (precision != "f32" && precision != "bf16") {
      module.emitError() << "convert-rnn-to-gpu: precision must be f32 or "
                            "bf16, not '" << precision << "'";
      return signalPassFailure();
    }
    opts.bf16 = precision == "bf16";
    SmallVector<rnn::SequenceOp> layers;
    module.walk([&](rnn::SequenceOp op) { layers.push_back(op); });
    for (rnn::SequenceOp op : layers)
      if (failed(lowerSequence(op, module, opts)))
        return signalPassFailure();
  }
};

} // namespace

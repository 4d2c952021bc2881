//===- RNNToCPU.cpp - rnn layers -> generated CPU kernels -----------------===//
//
// Every recurrent layer becomes a call to a function generated for it, on
// memrefs, built from scf + vector ops:
//
//   for d in directions:
//     for s in 0 .. T-1:             the time loop
//       if s % Tc == 0:              every Tc steps (Tc = T: once)
//         P = X[s .. s+Tc) W[d]^T + bias    the hoisted input GEMM
//       parallel for jb in H/V blocks:
//         acc[b][g] = h_{s-1}[b] . Rp[d][jb][:, g, :]     recurrent GEMM
//         fused epilogue: + P[t], activations, clip, c/h update, Y[t] store
//
// V is the target's vector width in f32 lanes (`vector-width`: 16 AVX-512,
// 8 AVX2, 4 SSE/NEON). Both GEMMs use one register tile: up to `batch-tile`
// rows times G gates of V hidden units (vector<Vxf32>), as many rows as the
// target's `vector-registers` hold without spilling, accumulated with FMAs
// over K while the weights stream from a packed block `[K][G][V]` that each
// thread keeps in its cache (the V-unit blocks of a layer are split between
// threads, the same blocks every step). Weights are packed here, at compile
// time.
//
// P is block-major, [H/V][Tc*B][G][V], its rows in step order (a reversed
// direction's row s holds x at T-1-s, or at len-1-s with sequence_lens).
// Tc is `gemm-chunk-steps`, or automatically the whole sequence unless its
// P would pass 32 KiB: then chunks of about 32 KiB (see chunkSteps), so
// that the scratch stays small whatever T and P is still cached when read.
// State lives in padded scratch
// buffers (h double-buffered [2][B][Hp], c [B][Hp], Hp = H rounded up to V); Y rows are stored masked when H is not
// a multiple of V. With sequence_lens, rows past their length keep their
// state and write zeros (selects, no branches).
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include <cstring>

namespace lstm_opt {
#define GEN_PASS_DEF_CONVERTRNNTOCPUPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;
using namespace lstm_opt;

namespace {

using rnn::Activation;

/// Everything about one layer the generator needs, all static.
struct LayerSpec : rnn::LayerShape {
  bool hasLens = false;
  /// f32 lanes of one vector register of the target (16 AVX-512, 8 AVX2,
  /// 4 SSE/NEON): the width of a hidden block.
  int64_t vec = 16;
  int64_t hp() const { return llvm::divideCeil(H, vec) * vec; }
  int64_t nb() const { return llvm::divideCeil(H, vec); }
};

/// The pass's options that shape every layer's kernel.
struct KernelParams {
  int64_t batchTile, minWork, vec, registers, threads, cacheBytes;
  /// Weights stored as bf16 (pairs of k per 32-bit word, see weights()).
  bool bf16 = false;
  /// With bf16 at 16 lanes: the products as AVX512_BF16 vdpbf16ps.
  bool dot = false;
  /// Weights int8 (one scale per gate row), x and h quantized per row.
  bool int8 = false;
  /// With int8 at 16 or 8 lanes: the products as VNNI vpdpbusd.
  bool int8Dot = false;
  /// The dot products are AArch64's (4 lanes): bf16 `bfdot` (BF16), int8
  /// `sdot` (DotProd, signed operands) instead of x86's.
  bool arm = false;
  /// With int8 without int8Dot: the products on pairs of k, exact 32-bit
  /// sums: x86's pmaddwd (16-bit operands), AArch64's smull + saddlp (8-bit
  /// operands, 16-bit products).
  bool int8PairDot = false;
  /// Hidden blocks per tile of a step's GEMM (0: automatic, see
  /// LayerEmitter::blocksPerTile).
  int64_t blockTile = 0;
  /// Steps per chunk of the input GEMM (0: automatic, see
  /// LayerEmitter::chunkSteps).
  int64_t gemmChunkSteps = 0;
  /// The target's level-1 data cache per core.
  int64_t l1CacheBytes = 32 << 10;
};

/// The bits of `v` rounded to the nearest bf16 (ties to even), as the upper
/// half of an f32: what `vcvtneps2bf16` computes. NaNs stay NaNs (quiet).
static uint16_t toBF16Bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/// Gate-major weights `[D][G*H][K]` -> the kernel's `[D][H/V][K][G][V]`
/// (V = `vec` lanes; zero-padded units), for gates `gates` of the G in the
/// source.
std::vector<float> packWeights(ArrayRef<float> w, int64_t d, int64_t g,
                               int64_t h, int64_t k, ArrayRef<int64_t> gates,
                               int64_t kVec) {
  int64_t nb = llvm::divideCeil(h, kVec), gs = gates.size();
  std::vector<float> out(d * nb * k * gs * kVec, 0.f);
  for (int64_t di = 0; di < d; ++di)
    for (int64_t jb = 0; jb < nb; ++jb)
      for (int64_t ki = 0; ki < k; ++ki)
        for (int64_t gi = 0; gi < gs; ++gi)
          for (int64_t v = 0; v < kVec; ++v) {
            int64_t j = jb * kVec + v;
            if (j >= h)
              continue;
            out[(((di * nb + jb) * k + ki) * gs + gi) * kVec + v] =
                w[(di * g + gates[gi]) * h * k + j * k + ki];
          }
  return out;
}

/// Generates the function of one layer.
class LayerEmitter {
public:
  LayerEmitter(ModuleOp module, const LayerSpec &spec, StringRef name,
               const KernelParams &kp)
      : module(module), s(spec), name(name.str()), batchTile(kp.batchTile),
        blockTile(kp.blockTile), gemmChunkSteps(kp.gemmChunkSteps),
        l1CacheBytes(kp.l1CacheBytes),
        minWork(kp.minWork),
        registers(kp.registers), threads(kp.threads),
        cacheBytes(kp.cacheBytes), bf16(kp.bf16),
        dot(kp.bf16 && kp.dot && (kp.arm ? spec.vec == 4 : spec.vec == 16)),
        int8(kp.int8 && !kp.bf16),
        vnni(int8 && kp.int8Dot &&
             (kp.arm ? spec.vec == 4 : spec.vec == 16 || spec.vec == 8)),
        pairDot(int8 && !vnni && kp.int8PairDot &&
                (kp.arm ? spec.vec == 4
                        : spec.vec == 4 || spec.vec == 8 || spec.vec == 16)),
        arm(kp.arm), signedDot(vnni && kp.arm) {}

  /// Whether odd steps also read each block's weights from its last k down
  /// (see streamsDown's definition).
  bool streamsDown() const;
  /// A thread's share of one direction's recurrent weights.
  int64_t weightBytesPerThread() const;
  int64_t weightKiBPerThread() const { return weightBytesPerThread() >> 10; }
  /// Whether the layer's steps run on one OpenMP team (see emitDirection).
  bool usesTeam() const {
    return threads > 1 && s.nb() > 1 && s.B * s.G * s.hp() * s.H >= minWork;
  }
  /// int8 on a team: whether each thread keeps the quantized h (and a GRU's
  /// r * h) of its own, on its stack, and quantizes the whole h into it
  /// after the step's barrier, instead of its blocks into a shared copy
  /// behind a second barrier. Where those copies are small (kOwnQuantBytes):
  /// a few hundred values quantized twice cost less than a barrier; the
  /// whole h of a large batch would not.
  bool ownQuant() const {
    int64_t bytes =
        (2 + (s.twoPhase() ? 1 : 0)) * s.B * (s.hp() * quantBytes() + 4);
    return int8 && usesTeam() && bytes <= kOwnQuantBytes;
  }

  /// Rows per register tile of a GEMM over `g` gates.
  int64_t rowsPerTile(int64_t g) const { return tileFor(g); }
  /// Steps per chunk of the input GEMM, T for one GEMM over the sequence:
  /// `gemm-chunk-steps`, or where the whole sequence's projections (P, f32,
  /// B * G * Hp per step) would pass kChunkBytes, as many steps as about
  /// kChunkBytes hold, at least kChunkMinRows rows, rounded up to whole
  /// register tiles. A chunk's P is written just before its steps read it,
  /// from the core's cache, and the scratch no longer grows with T (an IREE
  /// dispatch's workspace is allocated at every call). The input GEMM's
  /// weights are then read once per chunk instead of once: at least 32 rows
  /// per chunk keeps that within the FMAs' time where they stay in the
  /// core's cache (`cache-bytes`), at least 128 where they do not (LSTM T25
  /// B4 H1024, 16 MiB of weights, one thread of an AMD Zen 4: chunks of 36
  /// rows were 5-10% slower, read from the L3).
  int64_t chunkSteps() const {
    const int64_t T = s.T, B = s.B;
    if (gemmChunkSteps > 0)
      return std::min(gemmChunkSteps, T);
    const int64_t rowBytes = B * s.G * s.hp() * 4;
    if (T * rowBytes <= kChunkBytes)
      return T;
    const int64_t inputWeightBytes =
        s.G * s.hp() * s.I * (int8 ? 1 : bf16 ? 2 : 4);
    const int64_t minRows =
        cacheBytes > 0 && inputWeightBytes > cacheBytes ? 4 * kChunkMinRows
                                                       : kChunkMinRows;
    int64_t n = std::max<int64_t>(kChunkBytes / rowBytes,
                                  llvm::divideCeil(minRows, B));
    const int64_t tile = tileFor(s.G);
    for (int64_t i = 0; i < tile && (n * B) % tile != 0; ++i)
      ++n;
    return std::min(n, T);
  }
  static constexpr int64_t kChunkBytes = 32 << 10, kChunkMinRows = 32;
  static constexpr int64_t kOwnQuantBytes = 32 << 10;
  /// Hidden blocks per register tile of a step's GEMM (single-phase steps).
  int64_t stepBlocksPerTile() const {
    return s.twoPhase() ? 1 : blocksPerTile(s.G);
  }

  /// How a bf16 or int8 layer's products are computed, for its remark.
  StringRef products() const {
    if (dot)
      return arm ? "AArch64 BF16 bfdot" : "AVX512_BF16 vdpbf16ps";
    if (vnni)
      return arm            ? "AArch64 DotProd sdot"
             : s.vec == 16 ? "AVX512_VNNI vpdpbusd"
                           : "VNNI vpdpbusd (256-bit)";
    if (pairDot)
      return arm ? "AArch64 NEON smull + saddlp on pairs of k, exact 32-bit sums"
             : s.vec == 16 ? "AVX512BW vpmaddwd on pairs of k, exact 32-bit sums"
             : s.vec == 8 ? "AVX2 vpmaddwd on pairs of k, exact 32-bit sums"
                          : "SSE2 pmaddwd on pairs of k, exact 32-bit sums";
    return bf16 ? "bf16 weights widened in registers, f32 FMAs"
                : "int8 weights widened in registers, f32 FMAs";
  }

  /// Weights in canonical layout: W [D, G*H, I], R [D, G*H, H], Bw/Br
  /// [D, G*H], and an LSTM's peephole weights [D, 3*H] (empty: none).
  func::FuncOp emit(ArrayRef<float> w, ArrayRef<float> r, ArrayRef<float> bw,
                    ArrayRef<float> br, ArrayRef<float> peephole);

private:
  // Small builders.
  Value idx(ImplicitLocOpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, v);
  }
  Value vsplat(ImplicitLocOpBuilder &b, float v) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vecType(), b.getF32FloatAttr(v)));
  }
  VectorType vecType() {
    return VectorType::get({s.vec}, Float32Type::get(module.getContext()));
  }
  Value global(ImplicitLocOpBuilder &b, StringRef suffix,
               ArrayRef<int64_t> shape, ArrayRef<float> values);
  /// A packed weight matrix `[D][H/V][K][G][V]`: f32, or with `bf16` pairs
  /// of k as bf16 in 32-bit words (`[D][H/V][ceil(K/2)][G][V]`), or with
  /// `int8` quantized per gate row (see quantScales): with `vnni` four k as
  /// s8 in 32-bit words (`[D][H/V][ceil(K/4)][G][V]`, vpdpbusd's layout),
  /// with `pairDot` two k per lane (`[D][H/V][ceil(K/2)][G][V][2]` s8;
  /// x86 sign-extends them to pmaddwd's 16-bit pairs in registers), else one s8 per
  /// weight (`[D][H/V][K][G][V]`, widened in registers).
  Value weights(ImplicitLocOpBuilder &b, StringRef suffix,
                ArrayRef<int64_t> shape, ArrayRef<float> values);
  /// With `bf16`, `v` (an f32 or a vector of them) rounded to the nearest
  /// bf16 (ties to even; NaNs kept), still f32: the GEMMs read their x and h
  /// operands rounded once, so every product is one of bf16 operands.
  Value roundOperand(ImplicitLocOpBuilder &b, Value v);
  Value alloc(ImplicitLocOpBuilder &b, ArrayRef<int64_t> shape,
              Type elt = {}) {
    auto type = MemRefType::get(shape, elt ? elt : b.getF32Type());
    return memref::AllocOp::create(b, type, b.getI64IntegerAttr(64));
  }
  /// int8: a buffer of quantized operands, `[.., K]` (VNNI: u8 = q + 128 in
  /// i8, or q with sdot; pairs: q in i16 for pmaddwd, in i8 for smull;
  /// otherwise the integers q as f32, exact).
  Value allocQuant(ImplicitLocOpBuilder &b, ArrayRef<int64_t> shape) {
    return alloc(b, shape, quantType(b));
  }
  /// Bytes of one quantized operand: i8 (VNNI, smull), i16 (pmaddwd), f32.
  int64_t quantBytes() const {
    return vnni || (pairDot && arm) ? 1 : pairDot ? 2 : 4;
  }
  Type quantType(OpBuilder &b) const {
    int64_t n = quantBytes();
    return n == 4 ? Type(b.getF32Type()) : Type(b.getIntegerType(8 * n));
  }
  /// int8: whether the GEMMs' sums are integers (i32 vectors).
  bool intSums() const { return vnni || pairDot; }
  /// int8: quantizes the rows of an f32 operand to their range. For each
  /// of `rows` rows: m = max |v| over its `blocks` vectors (`load`), its
  /// scale m / 127 to `storeScale` (where `writer` is null or true), and
  /// blocks lo..hi-1 as round(v * 127 / m) (ties to even) to `store`.
  void quantizeRows(
      ImplicitLocOpBuilder &b, int64_t rows, int64_t blocks, Value lo, Value hi,
      function_ref<Value(ImplicitLocOpBuilder &, Value row, Value jb)> load,
      function_ref<void(ImplicitLocOpBuilder &, Value row, Value jb, Value q)> store,
      function_ref<void(ImplicitLocOpBuilder &, Value row, Value scale)> storeScale,
      Value writer = Value());
  /// int8: the operand of the GEMMs at row `row`, k `k` of a quantized
  /// buffer at `prefix`: with VNNI the 32-bit word of k..k+3 (k = 4p), with
  /// pairs the word of k..k+1 (k = 2p; 32 bits for pmaddwd, 16 for smull).
  Value quantOperand(ImplicitLocOpBuilder &b, Value buf, ValueRange prefix,
                     Value row, Value k);
  Value activate(ImplicitLocOpBuilder &b, const Activation &a, Value x);
  Value loadLen(ImplicitLocOpBuilder &b, Value lens, Value bi);
  Value clip(ImplicitLocOpBuilder &b, Value x);

  /// acc[(i * rows + r) * g + gi] = sum_k A(row0 + r, k) *
  /// Wp[d][jbs[i]][k][gi][:], r < rows: one register tile over the blocks
  /// `jbs` (each row's broadcast feeds all of them).
  /// With `down` (an i1, true at run time) k runs from k-1 down to 0.
  /// With int8, `a` gives quantized operands (quantOperand: with VNNI the
  /// word at k = 4p) and `aScale` each row's scale; the sums come back
  /// dequantized, f32.
  SmallVector<Value>
  gemmTile(ImplicitLocOpBuilder &b, Value wp, int64_t d, ArrayRef<Value> jbs,
           int64_t k, int64_t g, int64_t rows,
           function_ref<Value(ImplicitLocOpBuilder &, int64_t r, Value k)> a,
           Value down = Value(),
           function_ref<Value(ImplicitLocOpBuilder &, int64_t r)> aScale = {});
  /// Calls `body(row0, rows)` over `total` rows in tiles of `tile`.
  void forEachRowTile(ImplicitLocOpBuilder &b, int64_t total, int64_t tile,
                      function_ref<void(ImplicitLocOpBuilder &, Value, int64_t)> body);

  void emitDirection(ImplicitLocOpBuilder &b, int64_t d, Value x, Value h0,
                     Value c0, Value lens, Value y, Value hn, Value cn);
  /// The steps of an int8 GEMM over `k`: words of four k (VNNI), pairs
  /// (pmaddwd, smull) or single k (widened weights).
  int64_t quantSteps(int64_t k) const {
    return vnni ? llvm::divideCeil(k, 4) : pairDot ? llvm::divideCeil(k, 2) : k;
  }

  ModuleOp module;
  const LayerSpec &s;
  std::string name;
  int64_t batchTile, blockTile, gemmChunkSteps, l1CacheBytes, minWork,
      registers, threads, cacheBytes;
  bool bf16, dot, int8, vnni;
  /// int8 without VNNI or DotProd: the products on pairs of k (x86's
  /// pmaddwd, AArch64's smull + saddlp; signed operands, no compensation),
  /// see KernelParams::int8PairDot.
  bool pairDot;
  /// The dot products are AArch64's; with int8, `sdot`'s operands are
  /// signed (q itself, no compensation).
  bool arm, signedDot;
  /// int8: per packed weight matrix, its scales [D][H/V][G][V] (f32) and,
  /// with x86's VNNI, 128 * the sum of each row's quantized weights (i32;
  /// the u8 operands are q + 128).
  struct QuantScales {
    Value scale, comp;
  };
  llvm::DenseMap<Value, QuantScales> quantScales;

  /// Vector registers a GEMM tile of `rows` rows over `g` gates holds
  /// besides its accumulators (weight vectors, broadcasts).
  int64_t liveInTile(int64_t rows, int64_t g) const {
    return (dot || vnni) ? 1 + rows
           : pairDot     ? 1 + g + rows
           : bf16        ? 3 + 2 * rows
                         : g + 2;
  }
  /// Hidden blocks per register tile of a step's GEMM over `g` gates, with
  /// all B rows in one tile. Where one block's rows * g accumulators are too
  /// few chains to hide the FMA latency (small batch), a tile of several
  /// blocks reuses each row's broadcast across them and hands the gate math
  /// of all its blocks to the core at once, instead of splitting k into
  /// partial sums. Only where the recurrent weights fit in the level-1 data
  /// cache (`l1-cache-bytes`: the host's, else 32 KiB, the smallest of the
  /// x86 and Arm cores this runs on): a larger tile reads its blocks in the
  /// same order at every step, where
  /// one block at a time alternates the order so that the previous step's
  /// last blocks are still in the cache. LSTM T100 B1, one thread, AMD Zen 5
  /// (48 KiB L1D): H32 10.6 -> 9.7 us, H48 19.4 -> 18.0 us; H64 (64 KiB of
  /// weights) 36.5 us with one block, 47 us with tiles of four.
  /// A divisor of the blocks (a team's share is known at run time only:
  /// none), keeping accumulators, weights and broadcasts within the
  /// registers.
  int64_t blocksPerTile(int64_t g) const {
    const int64_t B = s.B, nb = s.nb();
    if (usesTeam() || B > tileFor(g) || blockTile == 1)
      return 1;
    // (With several blocks every row's broadcast stays live.)
    int64_t room = std::min<int64_t>(24, registers - liveInTile(B, g) - B - 2);
    if (blockTile > 1 && nb % blockTile == 0 && blockTile * B * g <= room)
      return blockTile;
    if (B * g >= 12 || weightBytesPerThread() > l1CacheBytes)
      return 1;
    int64_t best = 1;
    for (int64_t bt = 2; bt <= nb && bt * B * g <= room; ++bt)
      if (nb % bt == 0)
        best = bt;
    return best;
  }
  /// Rows per register tile for a GEMM over `g` gates: the option, or as
  /// many as keep rows * g accumulators, g weight vectors and a broadcast
  /// within the target's vector registers (32: LSTM 6, GRU 8; 16: LSTM 2,
  /// GRU 3), so that the tile never spills.
  int64_t tileFor(int64_t g) const {
    if (batchTile > 0)
      return std::min<int64_t>(batchTile, 8);
    // bf16 (per gate: the two weight vectors; per row: two broadcasts; a
    // mask) and vdpbf16ps (per gate one weight vector; per row one
    // broadcast) hold other registers than f32's g weights and broadcast.
    if (dot || vnni)
      return std::clamp<int64_t>((registers - 1) / (g + 1), 1, 8);
    // pmaddwd / smull: the g weight vectors (LLVM loads a gate's ahead of
    // the products), the product before its add, a broadcast per row. (With
    // one weight vector counted, a GRU tile of 7 rows spilled a broadcast
    // on AArch64.)
    if (pairDot)
      return std::clamp<int64_t>((registers - 2 - g) / (g + 1), 1, 8);
    if (int8)
      return std::clamp<int64_t>((registers - 3 - g) / g, 1, 8);
    if (bf16)
      return std::clamp<int64_t>((registers - 3) / (g + 2), 1, 8);
    return std::clamp<int64_t>((registers - 2 - g) / g, 1, 8);
  }
  // Packed constants and scratch, set while emitting.
  Value wIn, bIn, rRec, rRecN, bRecN, p, hbuf, cbuf, zbuf, rhbuf;
  /// An LSTM's peephole weights [D, 3, Hp] (i, f, o), or null.
  Value bPeep;
  /// With bf16: h rounded ([2, B, Hp], beside hbuf), the GEMMs' copy; with
  /// int8: h quantized (allocQuant), its scales in hsbuf [2, B].
  Value hrbuf, hsbuf;
  /// With int8: a GRU's r * h quantized ([B, Hp]) and its scales ([B]); x
  /// quantized ([T*B, I rounded up to V]) and its scales ([T*B]).
  Value rhqbuf, rhsbuf, xsbuf;
};

/// With the team at its compiled size (the thread setting of a compiled
/// model can change it at run time; only speed depends on this).
int64_t LayerEmitter::weightBytesPerThread() const {
  int64_t team = usesTeam() ? std::min(threads, s.nb()) : 1;
  return s.G * s.hp() * s.H * (int8 ? 1 : bf16 ? 2 : 4) / team;
}

/// Odd steps visit the blocks downwards (forEachBlockAlternating); when a
/// thread's recurrent weights do not fit in its cache (`cache-bytes`), they
/// also read each block from its last k down, so that the step starts on
/// the lines the previous one read last, still in the cache, and the step
/// is one stream for the L2 prefetcher. Where the weights fit, ascending
/// reads are kept: a backwards stream from L2 loses the L1 next-line
/// prefetcher (LSTM T150 B1 H256, 512 KiB per thread on a Xeon with 2 MiB
/// of L2: 3% slower backwards). Where they do not, the gain varied with the
/// load on the machine's shared L3 (T50 B4 H1536: 15% in one sitting,
/// level in another).
bool LayerEmitter::streamsDown() const {
  return cacheBytes > 0 && weightBytesPerThread() > cacheBytes;
}

Value LayerEmitter::global(ImplicitLocOpBuilder &b, StringRef suffix,
                           ArrayRef<int64_t> shape, ArrayRef<float> values) {
  return rnn::emitShapedGlobal(
      b, module, rnn::uniqueSymbol(module, name + "_" + suffix.str()), shape,
      values);
}

Value LayerEmitter::weights(ImplicitLocOpBuilder &b, StringRef suffix,
                            ArrayRef<int64_t> shape, ArrayRef<float> values) {
  if (int8) {
    // One symmetric scale per packed row (d, jb, g, v), i.e. per gate row
    // of the source, over its K weights.
    int64_t d = shape[0], nb = shape[1], k = shape[2], g = shape[3],
            v = shape[4], gv = g * v, quads = llvm::divideCeil(k, 4);
    std::vector<float> scale(d * nb * gv, 0.f);
    std::vector<int32_t> comp(d * nb * gv, 0);
    int64_t pairs = llvm::divideCeil(k, 2);
    std::vector<int8_t> bytes(
        vnni ? 0 : pairDot ? d * nb * pairs * gv * 2 : values.size(), 0);
    std::vector<int32_t> words(vnni ? d * nb * quads * gv : 0, 0);
    for (int64_t i = 0; i < d * nb; ++i)
      for (int64_t e = 0; e < gv; ++e) {
        float maxAbs = 0.f;
        for (int64_t ki = 0; ki < k; ++ki)
          maxAbs = std::max(maxAbs, std::fabs(values[(i * k + ki) * gv + e]));
        scale[i * gv + e] = rnn::int8Scale(maxAbs);
        int32_t sum = 0;
        for (int64_t ki = 0; ki < k; ++ki) {
          int8_t q = rnn::quantizeInt8(values[(i * k + ki) * gv + e], maxAbs);
          sum += q;
          if (vnni)
            words[(i * quads + ki / 4) * gv + e] |=
                (int32_t)((uint32_t)(uint8_t)q << (8 * (ki % 4)));
          else if (pairDot)
            bytes[((i * pairs + ki / 2) * gv + e) * 2 + ki % 2] = q;
          else
            bytes[(i * k + ki) * gv + e] = q;
        }
        comp[i * gv + e] = 128 * sum;
      }
    Type i32 = b.getI32Type(), i8 = b.getI8Type();
    std::string sym = name + "_" + suffix.str();
    Value packed =
        vnni ? rnn::emitShapedGlobal(
                   b, module, rnn::uniqueSymbol(module, sym + "_i8x4"),
                   {d, nb, quads, g, v}, i32,
                   DenseElementsAttr::get(
                       RankedTensorType::get({(int64_t)words.size()}, i32),
                       ArrayRef(words)))
             : pairDot
             ? rnn::emitShapedGlobal(
                   b, module, rnn::uniqueSymbol(module, sym + "_i8x2"),
                   {d, nb, pairs, g, 2 * v}, i8,
                   DenseElementsAttr::get(
                       RankedTensorType::get({(int64_t)bytes.size()}, i8),
                       ArrayRef(bytes)))
             : rnn::emitShapedGlobal(
                   b, module, rnn::uniqueSymbol(module, sym + "_i8"),
                   {d, nb, k, g, v}, i8,
                   DenseElementsAttr::get(
                       RankedTensorType::get({(int64_t)bytes.size()}, i8),
                       ArrayRef(bytes)));
    QuantScales qs;
    qs.scale = global(b, suffix.str() + "_scale", {d, nb, g, v}, scale);
    if (vnni && !signedDot)
      qs.comp = rnn::emitShapedGlobal(
          b, module, rnn::uniqueSymbol(module, sym + "_comp"), {d, nb, g, v},
          i32,
          DenseElementsAttr::get(
              RankedTensorType::get({(int64_t)comp.size()}, i32),
              ArrayRef(comp)));
    quantScales[packed] = qs;
    return packed;
  }
  if (!bf16)
    return global(b, suffix, shape, values);
  // [D][H/V][K][G][V] f32 -> [D][H/V][ceil(K/2)][G][V] 32-bit words, each
  // the bf16 of k = 2p (low half) and k = 2p + 1 (high half; 0 past K): the
  // layout AVX512_BF16's vdpbf16ps reads, and on other CPUs one load and a
  // shift or a mask give either f32 weight vector.
  int64_t d = shape[0], nb = shape[1], k = shape[2], g = shape[3], v = shape[4];
  int64_t pairs = llvm::divideCeil(k, 2);
  std::vector<int32_t> words(d * nb * pairs * g * v, 0);
  for (int64_t i = 0; i < d * nb; ++i)
    for (int64_t ki = 0; ki < k; ++ki)
      for (int64_t e = 0; e < g * v; ++e) {
        uint32_t bits = toBF16Bits(values[(i * k + ki) * g * v + e]);
        words[(i * pairs + ki / 2) * g * v + e] |=
            (int32_t)(bits << (ki % 2 ? 16 : 0));
      }
  Type i32 = b.getI32Type();
  return rnn::emitShapedGlobal(
      b, module, rnn::uniqueSymbol(module, name + "_" + suffix.str() + "_bf16"),
      {d, nb, pairs, g, v}, i32,
      DenseElementsAttr::get(
          RankedTensorType::get({(int64_t)words.size()}, i32), ArrayRef(words)));
}

Value LayerEmitter::roundOperand(ImplicitLocOpBuilder &b, Value v) {
  if (!bf16)
    return v;
  Type i32 = b.getI32Type();
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    i32 = VectorType::get(vt.getShape(), i32);
  auto c = [&](uint32_t x) -> Value {
    if (auto vt = dyn_cast<VectorType>(i32))
      return arith::ConstantOp::create(
          b, DenseElementsAttr::get(vt, b.getI32IntegerAttr((int32_t)x)));
    return arith::ConstantOp::create(b, b.getI32IntegerAttr((int32_t)x));
  };
  Value u = arith::BitcastOp::create(b, i32, v);
  Value lsb = arith::AndIOp::create(b, arith::ShRUIOp::create(b, u, c(16)), c(1));
  Value up = arith::AddIOp::create(b, arith::AddIOp::create(b, u, c(0x7fff)), lsb);
  Value r = arith::BitcastOp::create(
      b, v.getType(), arith::AndIOp::create(b, up, c(0xffff0000u)));
  // A NaN keeps its bits (the rounding could carry into the sign).
  Value nan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, v, v);
  return arith::SelectOp::create(b, nan, v, r);
}

void LayerEmitter::quantizeRows(
    ImplicitLocOpBuilder &b, int64_t rows, int64_t blocks, Value lo, Value hi,
    function_ref<Value(ImplicitLocOpBuilder &, Value, Value)> load,
    function_ref<void(ImplicitLocOpBuilder &, Value, Value, Value)> store,
    function_ref<void(ImplicitLocOpBuilder &, Value, Value)> storeScale,
    Value writer) {
  auto rowLoop = scf::ForOp::create(b, idx(b, 0), idx(b, rows), idx(b, 1));
  ImplicitLocOpBuilder rb(b.getLoc(), rowLoop.getBody(), rowLoop.getBody()->begin());
  Value row = rowLoop.getInductionVar();
  // m = max |v| over the whole row (every thread computes the same m). The
  // max is a plain vmaxps (no NaN rules); NaNs and infinities are found by
  // a second sum of v - v (0, or NaN), added to m at the end.
  auto nnan = arith::FastMathFlags::nnan;
  auto maxLoop = scf::ForOp::create(
      rb, idx(rb, 0), idx(rb, blocks), idx(rb, 1),
      ValueRange{vsplat(rb, 0.f), vsplat(rb, 0.f)},
      [&](OpBuilder &ob, Location loc, Value jb, ValueRange acc) {
        ImplicitLocOpBuilder ib(loc, ob);
        Value v = load(ib, row, jb);
        Value m = arith::MaxNumFOp::create(
            ib, acc[0], math::AbsFOp::create(ib, v),
            arith::FastMathFlagsAttr::get(ib.getContext(), nnan));
        Value bad = arith::AddFOp::create(ib, acc[1], arith::SubFOp::create(ib, v, v));
        scf::YieldOp::create(ib, ValueRange{m, bad});
      });
  Value m = vector::ReductionOp::create(rb, vector::CombiningKind::MAXNUMF,
                                        maxLoop.getResult(0), nnan);
  m = arith::AddFOp::create(
      rb, m,
      vector::ReductionOp::create(rb, vector::CombiningKind::ADD,
                                  maxLoop.getResult(1)));
  auto cst = [&](float v) -> Value {
    return arith::ConstantOp::create(rb, rb.getF32FloatAttr(v));
  };
  // As rnn::quantizeInt8: q = round(v * (127 / m)); nothing when m is 0 (a
  // NaN in the row makes m, and so the row's products, NaN).
  Value positive = arith::CmpFOp::create(rb, arith::CmpFPredicate::OGT, m, cst(0.f));
  Value inv = arith::SelectOp::create(
      rb, positive, arith::DivFOp::create(rb, cst(127.f), m), cst(0.f));
  Value scale = arith::DivFOp::create(rb, m, cst(127.f));
  if (writer) {
    auto ifOp = scf::IfOp::create(rb, writer, /*withElse=*/false);
    ImplicitLocOpBuilder wb(rb.getLoc(), ifOp.thenBlock(), ifOp.thenBlock()->begin());
    storeScale(wb, row, scale);
  } else {
    storeScale(rb, row, scale);
  }
  Value invV = vector::BroadcastOp::create(rb, vecType(), inv);
  scf::ForOp::create(rb, lo, hi, idx(rb, 1), ValueRange{},
                     [&](OpBuilder &ob, Location loc, Value jb, ValueRange) {
    ImplicitLocOpBuilder ib(loc, ob);
    Value q = math::RoundEvenOp::create(
        ib, arith::MulFOp::create(ib, load(ib, row, jb), invV));
    if (intSums()) {
      auto i32v = VectorType::get({s.vec}, ib.getI32Type());
      Value i = arith::FPToSIOp::create(ib, i32v, q);
      if (vnni && !signedDot)
        i = arith::AddIOp::create(
            ib, i,
            arith::ConstantOp::create(
                ib, DenseElementsAttr::get(i32v, ib.getI32IntegerAttr(128))));
      q = arith::TruncIOp::create(ib, VectorType::get({s.vec}, quantType(ib)), i);
    }
    store(ib, row, jb, q);
    scf::YieldOp::create(ib);
  });
}

Value LayerEmitter::quantOperand(ImplicitLocOpBuilder &b, Value buf,
                                 ValueRange prefix, Value row, Value k) {
  SmallVector<Value> at(prefix.begin(), prefix.end());
  at.push_back(row);
  if (!intSums()) {
    at.push_back(k);
    return memref::LoadOp::create(b, buf, at);
  }
  int64_t per = vnni ? 4 : 2;
  at.push_back(arith::MulIOp::create(b, k, idx(b, per)));
  Type elt = quantType(b);
  Value four = vector::LoadOp::create(b, VectorType::get({per}, elt), buf, at);
  Value word = vector::BitCastOp::create(
      b,
      VectorType::get({1}, b.getIntegerType(per * elt.getIntOrFloatBitWidth())),
      four);
  return vector::ExtractOp::create(b, word, ArrayRef<int64_t>{0});
}

Value LayerEmitter::activate(ImplicitLocOpBuilder &b, const Activation &a,
                             Value x) {
  return rnn::emitActivation(b, a, x);
}

Value LayerEmitter::clip(ImplicitLocOpBuilder &b, Value x) {
  return rnn::emitClip(b, x, s.clip);
}

SmallVector<Value> LayerEmitter::gemmTile(
    ImplicitLocOpBuilder &b, Value wp, int64_t d, ArrayRef<Value> jbs,
    int64_t k, int64_t g, int64_t rows,
    function_ref<Value(ImplicitLocOpBuilder &, int64_t, Value)> a,
    Value down, function_ref<Value(ImplicitLocOpBuilder &, int64_t)> aScale) {
  // With bf16 the loop runs over pairs of k (the weights' words hold k = 2p
  // in their low half and 2p + 1 in their high half, see weights()): per
  // pair and gate, one load and two integer ops give both f32 weight
  // vectors. An odd k's last pair has its low half alone. With int8 and
  // VNNI it runs over quads of k (zero-padded).
  int64_t steps = int8 ? quantSteps(k) : bf16 ? k / 2 : k;
  bool oddTail = bf16 && k % 2;
  // With few accumulators (small batch), FMA latency rather than throughput
  // bounds the loop: give each of `split` consecutive k (pairs) its own set
  // of accumulators (at least ~12 independent chains) and add them at the
  // end. All sets of accumulators, the weight vectors and the broadcasts
  // must stay in the target's registers, or the loop spills.
  const int64_t nt = jbs.size(), rg = rows * g, chains = nt * rg;
  int64_t live = liveInTile(rows, g);
  int64_t split = std::clamp<int64_t>(llvm::divideCeil(12, chains), 1, 4);
  split = std::min(split, std::max<int64_t>((registers - live) / chains, 1));
  split = std::min(split, std::max<int64_t>(steps, 1));
  int64_t main = steps / split * split;
  Value dIdx = idx(b, d);
  // The i-th k (pair) visited is kBase + kDir * i: i, or steps-1-i when
  // `down`.
  Value kBase, kDir;
  if (down) {
    kBase = arith::SelectOp::create(b, down, idx(b, steps - 1), idx(b, 0));
    kDir = arith::SelectOp::create(b, down, idx(b, -1), idx(b, 1));
  }
  auto i32v = VectorType::get({s.vec}, b.getI32Type());
  auto splatI32 = [&](ImplicitLocOpBuilder &ib, uint32_t v) -> Value {
    return arith::ConstantOp::create(
        ib, DenseElementsAttr::get(i32v, ib.getI32IntegerAttr((int32_t)v)));
  };
  // The dot-product instructions' sums (vdpbf16ps, bfdot, vpdpbusd, sdot,
  // pmaddwd, smull),
  // block by block and gate by gate of the tile, so that one weight vector
  // is live at a time: the gate's weight words at k (pair, quad) `kk`, as
  // `wType`, go into `product(sum, w, row)` for each row's sum. The words
  // are loaded as `loadType` (default: V 32-bit words) and bit-cast to
  // `wType`, or sign-extended to it where it has wider elements.
  auto dotProducts = [&](ImplicitLocOpBuilder &ib, Value kk, VectorType wType,
                         ValueRange sums,
                         function_ref<Value(Value, Value, int64_t)> product,
                         VectorType loadType = {}) {
    VectorType lt = loadType ? loadType : i32v;
    SmallVector<Value> out(chains);
    for (int64_t bt = 0; bt < nt; ++bt)
      for (int64_t gi = 0; gi < g; ++gi) {
        Value raw = vector::LoadOp::create(
            ib, lt, wp, ValueRange{dIdx, jbs[bt], kk, idx(ib, gi), idx(ib, 0)});
        Value w = lt.getNumElements() == wType.getNumElements() &&
                          lt.getElementTypeBitWidth() <
                              wType.getElementTypeBitWidth()
                      ? arith::ExtSIOp::create(ib, wType, raw).getResult()
                  : lt == wType
                      ? raw
                      : vector::BitCastOp::create(ib, wType, raw).getResult();
        for (int64_t r = 0; r < rows; ++r) {
          int64_t c = bt * rg + r * g + gi;
          out[c] = product(sums[c], w, r);
        }
      }
    return out;
  };
  // acc[set][r * g + gi] += W[k][gi] * A(r, k) for k = k0 + set (f32), or
  // for both k of pair k0 + set (bf16; `loOnly`: the low half alone).
  auto body = [&](ImplicitLocOpBuilder &ib, Value k0, ValueRange acc,
                  int64_t sets, bool mapDown, bool loOnly) {
    SmallVector<Value> next;
    for (int64_t set = 0; set < sets; ++set) {
      Value kk = set ? arith::AddIOp::create(ib, k0, idx(ib, set)).getResult() : k0;
      if (down && mapDown)
        kk = arith::AddIOp::create(ib, kBase,
                                   arith::MulIOp::create(ib, kDir, kk));
      if (vnni) {
        // vpdpbusd: acc += sum of 4 products u8 * s8 per 32-bit lane, the
        // weights' words as they are, the row's word of 4 operands
        // broadcast. AArch64's sdot: the same with s8 * s8.
        auto bytesV = VectorType::get({4 * s.vec}, ib.getI8Type());
        SmallVector<Value> av(rows);
        for (int64_t r = 0; r < rows; ++r)
          av[r] = vector::BitCastOp::create(
              ib, bytesV, vector::BroadcastOp::create(ib, i32v, a(ib, r, kk)));
        StringRef intrinsic = arm ? "llvm.aarch64.neon.sdot.v4i32.v16i8"
                              : s.vec == 16 ? "llvm.x86.avx512.vpdpbusd.512"
                                            : "llvm.x86.avx512.vpdpbusd.256";
        next.append(dotProducts(
            ib, kk, bytesV, acc.drop_front(set * chains),
            [&](Value sum, Value w, int64_t r) -> Value {
              return LLVM::CallIntrinsicOp::create(
                         ib, i32v, ib.getStringAttr(intrinsic),
                         ValueRange{sum, av[r], w})
                  .getResult(0);
            }));
        continue;
      }
      if (pairDot) {
        // Per 32-bit lane w.lo * a.lo + w.hi * a.hi, summed exactly in 32
        // bits (|q| <= 127: no overflow), added to acc. x86's pmaddwd: the
        // weights' bytes (k = 2p, 2p + 1 per lane) sign-extended to 16 bits
        // in registers, the row's two operands one 32-bit word of two i16,
        // broadcast. AArch64's smull (8-bit operands, 16-bit products) and
        // saddlp (adjacent products summed into 32 bits): the bytes as they
        // are, the operands a 16-bit word of two i8.
        auto bytesV = VectorType::get({2 * s.vec}, ib.getI8Type());
        auto wordsV = VectorType::get({2 * s.vec}, ib.getI16Type());
        auto opV = arm ? bytesV : wordsV;
        auto opWordV = VectorType::get(
            {s.vec}, arm ? ib.getI16Type() : ib.getI32Type());
        SmallVector<Value> av(rows);
        for (int64_t r = 0; r < rows; ++r)
          av[r] = vector::BitCastOp::create(
              ib, opV, vector::BroadcastOp::create(ib, opWordV, a(ib, r, kk)));
        StringRef intrinsic = s.vec == 16  ? "llvm.x86.avx512.pmaddw.d.512"
                              : s.vec == 8 ? "llvm.x86.avx2.pmadd.wd"
                                           : "llvm.x86.sse2.pmadd.wd";
        auto call = [&](Type type, StringRef name, ValueRange args) -> Value {
          return LLVM::CallIntrinsicOp::create(ib, type, ib.getStringAttr(name),
                                               args)
              .getResult(0);
        };
        next.append(dotProducts(
            ib, kk, opV, acc.drop_front(set * chains),
            [&](Value sum, Value w, int64_t r) -> Value {
              Value prod =
                  arm ? call(i32v, "llvm.aarch64.neon.saddlp.v4i32.v8i16",
                             call(wordsV, "llvm.aarch64.neon.smull.v8i16",
                                  ValueRange{w, av[r]}))
                      : call(i32v, intrinsic, ValueRange{w, av[r]});
              return arith::AddIOp::create(ib, sum, prod);
            },
            bytesV));
        continue;
      }
      if (!bf16) {
        // f32 weights, or int8 ones widened (sign-extended, converted: the
        // products of the integers are exact).
        // Each row's broadcast made where the first block uses it, and
        // reused by the others.
        SmallVector<Value> av(rows);
        SmallVector<Value> out(chains);
        for (int64_t bt = 0; bt < nt; ++bt) {
          SmallVector<Value> w;
          for (int64_t gi = 0; gi < g; ++gi) {
            SmallVector<Value> at{dIdx, jbs[bt], kk, idx(ib, gi), idx(ib, 0)};
            if (!int8) {
              w.push_back(vector::LoadOp::create(ib, vecType(), wp, at));
              continue;
            }
            Value bytes = vector::LoadOp::create(
                ib, VectorType::get({s.vec}, ib.getI8Type()), wp, at);
            w.push_back(arith::SIToFPOp::create(
                ib, vecType(), arith::ExtSIOp::create(ib, i32v, bytes)));
          }
          for (int64_t r = 0; r < rows; ++r) {
            if (!av[r])
              av[r] = vector::BroadcastOp::create(ib, vecType(), a(ib, r, kk));
            for (int64_t gi = 0; gi < g; ++gi) {
              int64_t c = bt * rg + r * g + gi;
              out[c] = vector::FMAOp::create(ib, w[gi], av[r], acc[set * chains + c]);
            }
          }
        }
        next.append(out.begin(), out.end());
        continue;
      }
      Value kLo = arith::MulIOp::create(ib, kk, idx(ib, 2));
      Value kHi = arith::AddIOp::create(ib, kLo, idx(ib, 1));
      if (dot) {
        // vdpbf16ps: acc += w.lo * a.lo + w.hi * a.hi per 32-bit lane, the
        // weights' words as they are, the two rounded operands packed into
        // one word (their bf16 bits: the upper halves) and broadcast.
        // AArch64's bfdot computes the same.
        auto bfv = VectorType::get({2 * s.vec}, ib.getBF16Type());
        Type i32 = ib.getI32Type();
        auto c32 = [&](uint32_t v) -> Value {
          return arith::ConstantOp::create(ib, ib.getI32IntegerAttr((int32_t)v));
        };
        SmallVector<Value> av(rows);
        for (int64_t r = 0; r < rows; ++r) {
          Value word = arith::ShRUIOp::create(
              ib, arith::BitcastOp::create(ib, i32, a(ib, r, kLo)), c32(16));
          if (!loOnly)
            word = arith::OrIOp::create(
                ib, word,
                arith::AndIOp::create(
                    ib, arith::BitcastOp::create(ib, i32, a(ib, r, kHi)),
                    c32(0xffff0000u)));
          av[r] = vector::BitCastOp::create(
              ib, bfv, vector::BroadcastOp::create(ib, i32v, word));
        }
        next.append(dotProducts(
            ib, kk, bfv, acc.drop_front(set * chains),
            [&](Value sum, Value w, int64_t r) -> Value {
              if (arm)
                return LLVM::CallIntrinsicOp::create(
                           ib, vecType(),
                           ib.getStringAttr("llvm.aarch64.neon.bfdot.v4f32.v8bf16"),
                           ValueRange{sum, w, av[r]})
                    .getResult(0);
              return x86vector::DotBF16Op::create(ib, vecType(), sum, w, av[r])
                  .getResult();
            }));
        continue;
      }
      // Gate by gate: the two f32 weight vectors of a gate are made just
      // before the FMAs that use them (all rows), so that only two are live.
      SmallVector<Value> a0(rows), a1(rows);
      for (int64_t r = 0; r < rows; ++r) {
        a0[r] = vector::BroadcastOp::create(ib, vecType(), a(ib, r, kLo));
        if (!loOnly)
          a1[r] = vector::BroadcastOp::create(ib, vecType(), a(ib, r, kHi));
      }
      SmallVector<Value> out(chains);
      for (int64_t bt = 0; bt < nt; ++bt)
        for (int64_t gi = 0; gi < g; ++gi) {
          Value words = vector::LoadOp::create(
              ib, i32v, wp,
              ValueRange{dIdx, jbs[bt], kk, idx(ib, gi), idx(ib, 0)});
          Value lo = arith::BitcastOp::create(
              ib, vecType(), arith::ShLIOp::create(ib, words, splatI32(ib, 16)));
          int64_t c0 = bt * rg + gi;
          for (int64_t r = 0; r < rows; ++r)
            out[c0 + r * g] = vector::FMAOp::create(
                ib, lo, a0[r], acc[set * chains + c0 + r * g]);
          if (loOnly)
            continue;
          Value hi = arith::BitcastOp::create(
              ib, vecType(),
              arith::AndIOp::create(ib, words, splatI32(ib, 0xffff0000u)));
          for (int64_t r = 0; r < rows; ++r)
            out[c0 + r * g] =
                vector::FMAOp::create(ib, hi, a1[r], out[c0 + r * g]);
        }
      next.append(out.begin(), out.end());
    }
    return next;
  };
  Value zeroAcc = intSums() ? arith::ConstantOp::create(
                            b, DenseElementsAttr::get(i32v, b.getI32IntegerAttr(0)))
                            .getResult()
                      : vsplat(b, 0.f);
  SmallVector<Value> acc(split * chains, zeroAcc);
  if (main > 0) {
    auto loop = scf::ForOp::create(
        b, idx(b, 0), idx(b, main), idx(b, split), acc,
        [&](OpBuilder &ob, Location loc, Value k0, ValueRange args) {
          ImplicitLocOpBuilder ib(loc, ob);
          scf::YieldOp::create(ib, body(ib, k0, args, split, true, false));
        });
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  // The k (pairs) left over by the split go into the first set.
  auto intoFirst = [&](int64_t kk, bool mapDown, bool loOnly) {
    SmallVector<Value> first(acc.begin(), acc.begin() + chains);
    auto next = body(b, idx(b, kk), first, 1, mapDown, loOnly);
    std::copy(next.begin(), next.end(), acc.begin());
  };
  for (int64_t kk = main; kk < steps; ++kk)
    intoFirst(kk, true, false);
  if (oddTail)
    intoFirst(steps, false, true);
  SmallVector<Value> out(acc.begin(), acc.begin() + chains);
  for (int64_t set = 1; set < split; ++set)
    for (int64_t c = 0; c < chains; ++c)
      out[c] = intSums() ? arith::AddIOp::create(b, out[c], acc[set * chains + c])
                          .getResult()
                    : arith::AddFOp::create(b, out[c], acc[set * chains + c])
                          .getResult();
  if (!int8)
    return out;
  // Dequantized: (sum - 128 * sum of the row's weights with VNNI's u8
  // operands) * the weight row's scale * the operand row's scale.
  const QuantScales &qs = quantScales.lookup(wp);
  for (int64_t bt = 0; bt < nt; ++bt) {
    for (int64_t gi = 0; gi < g; ++gi) {
      SmallVector<Value> at{dIdx, jbs[bt], idx(b, gi), idx(b, 0)};
      Value ws = vector::LoadOp::create(b, vecType(), qs.scale, at);
      Value comp =
          qs.comp ? vector::LoadOp::create(b, i32v, qs.comp, at).getResult()
                  : Value();
      for (int64_t r = 0; r < rows; ++r) {
        Value &v = out[bt * rg + r * g + gi];
        if (comp)
          v = arith::SubIOp::create(b, v, comp);
        if (intSums())
          v = arith::SIToFPOp::create(b, vecType(), v);
        v = arith::MulFOp::create(
            b, arith::MulFOp::create(b, v, ws),
            vector::BroadcastOp::create(b, vecType(), aScale(b, r)));
      }
    }
  }
  return out;
}

void LayerEmitter::forEachRowTile(
    ImplicitLocOpBuilder &b, int64_t total, int64_t tile,
    function_ref<void(ImplicitLocOpBuilder &, Value, int64_t)> body) {
  int64_t full = total / tile * tile;
  if (full / tile == 1) {
    body(b, idx(b, 0), tile);
  } else if (full > 0) {
    scf::ForOp::create(b, idx(b, 0), idx(b, full), idx(b, tile), ValueRange{},
                       [&](OpBuilder &ob, Location loc, Value r0, ValueRange) {
                         ImplicitLocOpBuilder ib(loc, ob);
                         body(ib, r0, tile);
                         scf::YieldOp::create(ib);
                       });
  }
  if (total > full)
    body(b, idx(b, full), total - full);
}

/// A loop over the hidden blocks: `scf.parallel` (split across threads) when
/// one pass over them holds at least `minWork` FMAs, else a plain `scf.for`
/// (forking threads for a few microseconds of work costs more than it saves).
static void forEachBlock(ImplicitLocOpBuilder &b, int64_t nb, int64_t work,
                         int64_t minWork,
                         function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value n = arith::ConstantIndexOp::create(b, nb);
  if (nb > 1 && work >= minWork) {
    scf::ParallelOp::create(b, ValueRange{zero}, ValueRange{n}, ValueRange{one},
                            [&](OpBuilder &ob, Location loc, ValueRange ivs) {
                              ImplicitLocOpBuilder ib(loc, ob);
                              body(ib, ivs[0]);
                            });
    return;
  }
  scf::ForOp::create(b, zero, n, one, ValueRange{},
                     [&](OpBuilder &ob, Location loc, Value iv, ValueRange) {
                       ImplicitLocOpBuilder ib(loc, ob);
                       body(ib, iv);
                       scf::YieldOp::create(ib);
                     });
}

/// Blocks lo..hi-1 in ascending order at even steps, descending at odd ones.
/// The blocks one step ends with are the first the next step reads: when a
/// thread's recurrent weights are a little larger than its cache, the part
/// read last is still there (in a cyclic order, least-recently-used eviction
/// misses on every block). LSTM T25 B1 H512 on two threads of an Intel Xeon
/// (2 MiB L2 per core, 2 MiB of weights per thread): 1.17 -> 0.89 ms.
static void forEachBlockAlternating(
    ImplicitLocOpBuilder &b, Value lo, Value hi, Value step,
    function_ref<void(ImplicitLocOpBuilder &, Value, Value)> body) {
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value odd = arith::TruncIOp::create(
      b, b.getI1Type(),
      arith::IndexCastUIOp::create(
          b, b.getI64Type(),
          arith::RemUIOp::create(b, step, arith::ConstantIndexOp::create(b, 2))));
  Value last = arith::SubIOp::create(b, arith::AddIOp::create(b, lo, hi), one);
  scf::ForOp::create(b, lo, hi, one, ValueRange{},
                     [&](OpBuilder &ob, Location loc, Value i, ValueRange) {
                       ImplicitLocOpBuilder ib(loc, ob);
                       Value down = arith::SubIOp::create(ib, last, i);
                       body(ib, arith::SelectOp::create(ib, odd, down, i), odd);
                       scf::YieldOp::create(ib);
                     });
}

/// `int32_t name(void)` of the OpenMP runtime, declared once in `module`.
static func::FuncOp ompQuery(ModuleOp module, StringRef name) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType({}, {b.getI32Type()}));
  f.setPrivate();
  return f;
}

/// Row `bi`'s sequence length (i32), clamped into [0, T]: a length past
/// the steps, or a negative one, would index the sequence out of range (ONNX
/// Runtime refuses such a length; generated code has no error channel, so it
/// runs as T steps, or none).
Value LayerEmitter::loadLen(ImplicitLocOpBuilder &b, Value lens, Value bi) {
  Value len = memref::LoadOp::create(b, lens, ValueRange{bi});
  len = arith::MaxSIOp::create(
      b, len, arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
  return arith::MinSIOp::create(
      b, len, arith::ConstantOp::create(b, b.getI32IntegerAttr((int32_t)s.T)));
}

void LayerEmitter::emitDirection(ImplicitLocOpBuilder &b, int64_t d, Value x,
                                 Value h0, Value c0, Value lens, Value y,
                                 Value hn, Value cn) {
  const int64_t T = s.T, B = s.B, I = s.I, H = s.H, G = s.G, nb = s.nb();
  const bool rev = s.reverse[d];
  const auto &acts = s.acts[d];
  Value dIdx = idx(b, d);
  Value vzero = vsplat(b, 0.f), vone = vsplat(b, 1.f);
  Value c0i = idx(b, 0), c16 = idx(b, s.vec);

  // A layer whose steps are large enough to share runs on one OpenMP team
  // (`threads` > 1): each thread takes a contiguous range of hidden blocks
  // for the input GEMM and for every step, and the threads meet at a
  // barrier after each step (after each phase of a two-phase GRU step).
  const bool team = usesTeam();
  // The input GEMM in chunks of Tc steps (chunkSteps; Tc = T: one GEMM
  // before the time loop).
  const int64_t Tc = chunkSteps();
  const bool chunked = Tc < T;

  // Per batch row at step `step`: the time index it reads/writes and
  // whether it runs (null without sequence_lens).
  auto rowTimeAt = [&](ImplicitLocOpBuilder &ib, Value bi,
                       Value step) -> std::pair<Value, Value> {
    Value tFwd = step;
    Value tRev = arith::SubIOp::create(ib, idx(ib, T - 1), step);
    if (!s.hasLens)
      return {rev ? tRev : tFwd, Value()};
    Value len = arith::IndexCastOp::create(ib, ib.getIndexType(),
                                           loadLen(ib, lens, bi));
    Value active = arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, step, len);
    Value t = tFwd;
    if (rev) {
      Value lm1 = arith::SubIOp::create(ib, len, idx(ib, 1));
      t = arith::SubIOp::create(ib, lm1, step);
    }
    return {arith::SelectOp::create(ib, active, t, step), active};
  };

  // 1. The hoisted input GEMM of steps s0 .. s0+n-1 (n = Tc, or the last
  // chunk's rest):
  // P[jb][(s - s0) * B + b][g][:] = X[t(s, b) * B + b] . W[d] + bias, where
  // t(s, b) is the time row b reads at step s.
  auto inputGemm = [&](ImplicitLocOpBuilder &pb, Value jb, Value s0, int64_t n) {
    Value col = arith::MulIOp::create(pb, jb, c16);
    forEachRowTile(pb, n * B, tileFor(G), [&](ImplicitLocOpBuilder &tb, Value row0, int64_t rows) {
      SmallVector<Value> rowIdx, xIdx;
      for (int64_t r = 0; r < rows; ++r) {
        Value row = arith::AddIOp::create(tb, row0, idx(tb, r));
        rowIdx.push_back(row);
        if (!chunked && !rev && !s.hasLens) {
          xIdx.push_back(row);
          continue;
        }
        Value step = arith::AddIOp::create(
            tb, s0, arith::DivUIOp::create(tb, row, idx(tb, B)));
        Value bi = arith::RemUIOp::create(tb, row, idx(tb, B));
        Value t = rowTimeAt(tb, bi, step).first;
        xIdx.push_back(arith::AddIOp::create(
            tb, arith::MulIOp::create(tb, t, idx(tb, B)), bi));
      }
      auto acc = gemmTile(
          tb, wIn, d, jb, I, G, rows,
          [&](ImplicitLocOpBuilder &ib, int64_t r, Value k) -> Value {
            if (int8)
              return quantOperand(ib, x, ValueRange{}, xIdx[r], k);
            return memref::LoadOp::create(ib, x, ValueRange{xIdx[r], k});
          },
          Value(), [&](ImplicitLocOpBuilder &ib, int64_t r) -> Value {
            return memref::LoadOp::create(ib, xsbuf, ValueRange{xIdx[r]});
          });
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t g = 0; g < G; ++g) {
          Value bias = vector::LoadOp::create(tb, vecType(), bIn,
                                              ValueRange{dIdx, idx(tb, g), col});
          vector::StoreOp::create(tb, arith::AddFOp::create(tb, acc[r * G + g], bias),
                                  p, ValueRange{jb, rowIdx[r], idx(tb, g), c0i});
        }
    });
  };
  // Each chunk's GEMM over blocks lo..hi-1: a team's thread computes the
  // blocks it owns (only it reads them: no barrier); alone, over all blocks,
  // split across threads where a chunk's work is large enough.
  auto chunkGemm = [&](ImplicitLocOpBuilder &gb, Value lo, Value hi, Value s0,
                       int64_t n) {
    if (!team) {
      forEachBlock(gb, nb, n * B * I * G * s.hp(), minWork,
                   [&](ImplicitLocOpBuilder &pb, Value jb) { inputGemm(pb, jb, s0, n); });
      return;
    }
    scf::ForOp::create(gb, lo, hi, idx(gb, 1), ValueRange{},
                       [&](OpBuilder &ob, Location loc, Value jb, ValueRange) {
                         ImplicitLocOpBuilder ib(loc, ob);
                         inputGemm(ib, jb, s0, n);
                         scf::YieldOp::create(ib);
                       });
  };
  if (!team && !chunked)
    chunkGemm(b, Value(), Value(), c0i, T);

  // 2. Initial states (the padding lanes are kept at zero).
  auto fillState = [&](Value buf, ValueRange prefix, Value init,
                       bool round = false) {
    scf::ForOp::create(b, c0i, idx(b, B), idx(b, 1), ValueRange{},
                       [&](OpBuilder &ob, Location loc, Value bi, ValueRange) {
      ImplicitLocOpBuilder ib(loc, ob);
      scf::ForOp::create(ib, idx(ib, 0), idx(ib, s.hp()), idx(ib, 1), ValueRange{},
                         [&](OpBuilder &ob2, Location loc2, Value j, ValueRange) {
        ImplicitLocOpBuilder jb(loc2, ob2);
        Value v = arith::ConstantOp::create(jb, jb.getF32FloatAttr(0.f));
        if (init) {
          Value inRange = arith::CmpIOp::create(jb, arith::CmpIPredicate::ult, j,
                                                idx(jb, H));
          Value jc = arith::SelectOp::create(jb, inRange, j, idx(jb, 0));
          Value iv = memref::LoadOp::create(jb, init, ValueRange{idx(jb, d), bi, jc});
          v = arith::SelectOp::create(jb, inRange, iv, v);
        }
        if (round)
          v = roundOperand(jb, v);
        SmallVector<Value> at(prefix.begin(), prefix.end());
        at.append({bi, j});
        memref::StoreOp::create(jb, v, buf, at);
        scf::YieldOp::create(jb);
      });
      scf::YieldOp::create(ib);
    });
  };
  fillState(hbuf, ValueRange{c0i}, h0);
  if (bf16)
    fillState(hrbuf, ValueRange{c0i}, h0, /*round=*/true);
  // int8: h (slot `which` of hbuf) quantized into the same slot of hrbuf,
  // scales in hsbuf: every thread finds each row's range, quantizes its
  // blocks lo..hi-1 (`writer` stores the scales). With ownQuant, each
  // thread quantizes every block into copies of its own (lo..hi: all
  // blocks, no writer): the same numbers in each copy.
  const bool ownQ = ownQuant();
  auto quantizeH = [&](ImplicitLocOpBuilder &qb, Value src, ValueRange srcAt,
                       Value dst, Value scales, ValueRange scaleAt, Value lo,
                       Value hi, Value writer) {
    auto at = [&](ImplicitLocOpBuilder &ib, ValueRange pre, Value row, Value jb) {
      SmallVector<Value> v(pre.begin(), pre.end());
      v.push_back(row);
      if (jb)
        v.push_back(arith::MulIOp::create(ib, jb, idx(ib, s.vec)));
      return v;
    };
    quantizeRows(
        qb, B, nb, lo, hi,
        [&](ImplicitLocOpBuilder &ib, Value row, Value jb) -> Value {
          return vector::LoadOp::create(ib, vecType(), src, at(ib, srcAt, row, jb));
        },
        [&](ImplicitLocOpBuilder &ib, Value row, Value jb, Value q) {
          vector::StoreOp::create(ib, q, dst, at(ib, srcAt, row, jb));
        },
        [&](ImplicitLocOpBuilder &ib, Value row, Value scale) {
          memref::StoreOp::create(ib, scale, scales, at(ib, scaleAt, row, Value()));
        },
        writer);
  };
  if (int8 && !ownQ)
    quantizeH(b, hbuf, ValueRange{c0i}, hrbuf, hsbuf, ValueRange{c0i}, c0i,
              idx(b, nb), Value());
  if (s.isLSTM())
    fillState(cbuf, ValueRange{}, c0);

  // Masked store of a hidden block into an unpadded [.., H] row.
  auto storeRow = [&](ImplicitLocOpBuilder &ib, Value v, Value mem,
                      ValueRange at, Value col) {
    if (H % s.vec == 0) {
      vector::StoreOp::create(ib, v, mem, at);
      return;
    }
    Value left = arith::SubIOp::create(ib, idx(ib, H), col);
    Value n = arith::MinSIOp::create(ib, left, idx(ib, s.vec));
    Value mask = vector::CreateMaskOp::create(
        ib, VectorType::get({s.vec}, ib.getI1Type()), ValueRange{n});
    vector::MaskedStoreOp::create(ib, mem, at, mask, v);
  };

  // 3. The time loop over blocks lo..hi-1.
  auto timeLoop = [&](ImplicitLocOpBuilder &lb, Value lo, Value hi, Value me) {
  auto sync = [&](ImplicitLocOpBuilder &ib) {
    if (team)
      omp::BarrierOp::create(ib);
  };
  scf::ForOp::create(lb, c0i, idx(lb, T), idx(lb, 1), ValueRange{},
                     [&](OpBuilder &ob, Location loc, Value step, ValueRange) {
    ImplicitLocOpBuilder sb(loc, ob);
    Value cur = arith::RemUIOp::create(sb, step, idx(sb, 2));
    Value nxt = arith::SubIOp::create(sb, idx(sb, 1), cur);
    // The step's index within its chunk of P.
    Value pStep = step;
    if (chunked) {
      pStep = arith::RemUIOp::create(sb, step, idx(sb, Tc));
      Value first = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, pStep,
                                          c0i);
      auto ifOp = scf::IfOp::create(sb, first, /*withElse=*/false);
      ImplicitLocOpBuilder gb(loc, ifOp.getThenBodyBuilder());
      // A last, shorter chunk has a GEMM of its own row count.
      if (int64_t rest = T % Tc) {
        Value whole = arith::CmpIOp::create(gb, arith::CmpIPredicate::ule, step,
                                            idx(gb, T - Tc));
        auto ifWhole = scf::IfOp::create(gb, whole, /*withElse=*/true);
        ImplicitLocOpBuilder wb(loc, ifWhole.getThenBodyBuilder());
        chunkGemm(wb, lo, hi, step, Tc);
        ImplicitLocOpBuilder rb(loc, ifWhole.getElseBodyBuilder());
        chunkGemm(rb, lo, hi, step, rest);
      } else {
        chunkGemm(gb, lo, hi, step, Tc);
      }
    }
    auto rowTime = [&](ImplicitLocOpBuilder &ib, Value bi) {
      return rowTimeAt(ib, bi, step);
    };
    // Row b's row of P at this step.
    auto pRow = [&](ImplicitLocOpBuilder &ib, Value bi) -> Value {
      return arith::AddIOp::create(ib, arith::MulIOp::create(ib, pStep, idx(ib, B)), bi);
    };
    auto pre = [&](ImplicitLocOpBuilder &ib, Value acc, Value bi, int64_t g,
                   Value jb) -> Value {
      Value pv = vector::LoadOp::create(ib, vecType(), p,
                                        ValueRange{jb, pRow(ib, bi), idx(ib, g), c0i});
      return arith::AddFOp::create(ib, acc, pv);
    };
    // P[jb][s*B + b] of a tile's rows (s: the step within its chunk) was
    // written by the input GEMM before the chunk's first step, with one GEMM
    // over the sequence long before, and is read once, by the epilogue,
    // maybe from far from the core.
    // Prefetching its lines (one per row and gate) before the tile's GEMM
    // hides that latency behind the FMAs.
    auto prefetchP = [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> rowIdx,
                         ArrayRef<int64_t> gates, Value jb) {
      for (Value bi : rowIdx) {
        Value row = pRow(ib, bi);
        for (int64_t g : gates)
          memref::PrefetchOp::create(ib, p, ValueRange{jb, row, idx(ib, g), c0i},
                                     /*isWrite=*/false, /*localityHint=*/3,
                                     /*isDataCache=*/true);
      }
    };
    auto hLoad = [&](Value buf, Value which) {
      return [&, buf, which](ImplicitLocOpBuilder &ib, Value row, Value k) -> Value {
        if (int8)
          return quantOperand(ib, buf, ValueRange{which}, row, k);
        return memref::LoadOp::create(ib, buf, ValueRange{which, row, k});
      };
    };
    // int8: the scale of row `row` of the quantized h.
    auto hScale = [&](SmallVector<Value> &rowIdx) {
      return [&, cur](ImplicitLocOpBuilder &ib, int64_t r) -> Value {
        return memref::LoadOp::create(ib, hsbuf, ValueRange{cur, rowIdx[r]});
      };
    };
    // int8 on a team: thread 0 stores the scales; alone: always.
    Value writer;
    if (int8 && me && !ownQ)
      writer = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, me, c0i);
    // The blocks this thread quantizes.
    Value qlo = ownQ ? c0i : lo, qhi = ownQ ? idx(sb, nb) : hi;
    // The final write of a row: h into the state and Y.
    auto finish = [&](ImplicitLocOpBuilder &ib, Value bi, Value col, Value t,
                      Value active, Value hNew, Value hPrev) {
      Value yv = hNew;
      if (active) {
        hNew = arith::SelectOp::create(ib, active, hNew, hPrev);
        yv = arith::SelectOp::create(ib, active, hNew, vzero);
      }
      vector::StoreOp::create(ib, hNew, hbuf, ValueRange{nxt, bi, col});
      if (bf16)
        vector::StoreOp::create(ib, roundOperand(ib, hNew), hrbuf,
                                ValueRange{nxt, bi, col});
      storeRow(ib, yv, y, ValueRange{t, idx(ib, d), bi, col}, col);
    };

    if (!s.twoPhase()) {
      // Tiles of `nt` blocks (blocksPerTile; 1 on a team, whose range of
      // blocks is known at run time only).
      const int64_t nt = me ? 1 : blocksPerTile(G);
      Value tlo = lo, thi = hi;
      if (nt > 1) {
        tlo = idx(sb, 0);
        thi = idx(sb, nb / nt);
      }
      forEachBlockAlternating(sb, tlo, thi, step,
                   [&](ImplicitLocOpBuilder &pb, Value jt, Value down) {
        SmallVector<Value> jbs;
        for (int64_t i = 0; i < nt; ++i)
          jbs.push_back(nt == 1 ? jt
                                : arith::AddIOp::create(
                                      pb, arith::MulIOp::create(pb, jt, idx(pb, nt)),
                                      idx(pb, i))
                                      .getResult());
        forEachRowTile(pb, B, tileFor(G), [&](ImplicitLocOpBuilder &tb, Value row0, int64_t rows) {
          SmallVector<Value> rowIdx;
          for (int64_t r = 0; r < rows; ++r)
            rowIdx.push_back(arith::AddIOp::create(tb, row0, idx(tb, r)));
          for (Value jb : jbs)
            prefetchP(tb, rowIdx, llvm::to_vector(llvm::seq<int64_t>(0, G)), jb);
          auto load = hLoad(bf16 || int8 ? hrbuf : hbuf, cur);
          auto tileAcc = gemmTile(tb, rRec, d, jbs, H, G, rows,
                              [&](ImplicitLocOpBuilder &ib, int64_t r, Value k) {
                                return load(ib, rowIdx[r], k);
                              }, streamsDown() ? down : Value(), hScale(rowIdx));
          // The epilogue of each block of the tile and each row.
          for (int64_t e = 0; e < nt * rows; ++e) {
            const int64_t bt = e / rows, r = e % rows;
            Value jb = jbs[bt];
            Value col = arith::MulIOp::create(tb, jb, idx(tb, s.vec));
            ArrayRef<Value> acc(tileAcc.data() + bt * rows * G, rows * G);
            Value bi = rowIdx[r];
            Value t, active; // (a lambda does not capture structured bindings)
            std::tie(t, active) = rowTime(tb, bi);
            auto a = [&](int64_t g) { return pre(tb, acc[r * G + g], bi, g, jb); };
            Value hPrev = vector::LoadOp::create(tb, vecType(), hbuf, ValueRange{cur, bi, col});
            Value hNew;
            if (s.isLSTM()) {
              Value cOld = vector::LoadOp::create(tb, vecType(), cbuf, ValueRange{bi, col});
              // Peepholes (k: i, f, o) inside the clip, as ONNX Runtime.
              auto peep = [&](Value pre, int64_t k, Value c) -> Value {
                if (!s.hasPeephole)
                  return pre;
                Value pk = vector::LoadOp::create(tb, vecType(), bPeep,
                                                  ValueRange{dIdx, idx(tb, k), col});
                return math::FmaOp::create(tb, pk, c, pre);
              };
              Value i = activate(tb, acts[0], clip(tb, peep(a(0), 0, cOld)));
              Value f = s.inputForget
                            ? arith::SubFOp::create(tb, vone, i).getResult()
                            : activate(tb, acts[0], clip(tb, peep(a(1), 1, cOld)));
              Value g = activate(tb, acts[1], clip(tb, a(2)));
              Value c = arith::AddFOp::create(tb, arith::MulFOp::create(tb, f, cOld),
                                              arith::MulFOp::create(tb, i, g));
              Value o = activate(tb, acts[0], clip(tb, peep(a(3), 2, c)));
              if (active)
                c = arith::SelectOp::create(tb, active, c, cOld);
              vector::StoreOp::create(tb, c, cbuf, ValueRange{bi, col});
              hNew = arith::MulFOp::create(tb, o, activate(tb, acts[2], c));
            } else if (s.isGRU()) {
              Value rg = activate(tb, acts[0], clip(tb, a(0)));
              Value z = activate(tb, acts[0], clip(tb, a(1)));
              Value bn = vector::LoadOp::create(tb, vecType(), bRecN, ValueRange{dIdx, col});
              Value hn2 = arith::AddFOp::create(tb, acc[r * G + 2], bn);
              Value pn = vector::LoadOp::create(tb, vecType(), p,
                                                ValueRange{jb, pRow(tb, bi), idx(tb, 2), c0i});
              Value n = activate(tb, acts[1], clip(tb, arith::AddFOp::create(
                                                      tb, pn, arith::MulFOp::create(tb, rg, hn2))));
              // h = (1 - z) * n + z * h_prev
              hNew = arith::AddFOp::create(
                  tb, arith::MulFOp::create(tb, arith::SubFOp::create(tb, vone, z), n),
                  arith::MulFOp::create(tb, z, hPrev));
            } else {
              hNew = activate(tb, acts[0], clip(tb, a(0)));
            }
            finish(tb, bi, col, t, active, hNew, hPrev);
          }
        });
      });
    } else {
      // GRU, reset before the GEMM: phase A (r, z) then phase B (n).
      forEachBlockAlternating(sb, lo, hi, step,
                   [&](ImplicitLocOpBuilder &pb, Value jb, Value down) {
        Value col = arith::MulIOp::create(pb, jb, idx(pb, s.vec));
        forEachRowTile(pb, B, tileFor(2), [&](ImplicitLocOpBuilder &tb, Value row0, int64_t rows) {
          SmallVector<Value> rowIdx;
          for (int64_t r = 0; r < rows; ++r)
            rowIdx.push_back(arith::AddIOp::create(tb, row0, idx(tb, r)));
          prefetchP(tb, rowIdx, {0, 1}, jb);
          auto load = hLoad(bf16 || int8 ? hrbuf : hbuf, cur);
          auto acc = gemmTile(tb, rRec, d, jb, H, 2, rows,
                              [&](ImplicitLocOpBuilder &ib, int64_t r, Value k) {
                                return load(ib, rowIdx[r], k);
                              }, streamsDown() ? down : Value(), hScale(rowIdx));
          for (int64_t r = 0; r < rows; ++r) {
            Value bi = rowIdx[r];
            auto [t, active] = rowTime(tb, bi);
            Value rg = activate(tb, acts[0], clip(tb, pre(tb, acc[r * 2], bi, 0, jb)));
            Value z = activate(tb, acts[0], clip(tb, pre(tb, acc[r * 2 + 1], bi, 1, jb)));
            Value hPrev = vector::LoadOp::create(tb, vecType(), hbuf, ValueRange{cur, bi, col});
            vector::StoreOp::create(tb, z, zbuf, ValueRange{bi, col});
            // (r * h feeds the n gate's GEMM alone: stored rounded.)
            vector::StoreOp::create(
                tb, roundOperand(tb, arith::MulFOp::create(tb, rg, hPrev)),
                rhbuf, ValueRange{bi, col});
          }
        });
      });
      sync(sb);
      if (int8) {
        quantizeH(sb, rhbuf, ValueRange{}, rhqbuf, rhsbuf, ValueRange{}, qlo,
                  qhi, writer);
        if (!ownQ)
          sync(sb);
      }
      forEachBlockAlternating(sb, lo, hi, step,
                   [&](ImplicitLocOpBuilder &pb, Value jb, Value down) {
        Value col = arith::MulIOp::create(pb, jb, idx(pb, s.vec));
        forEachRowTile(pb, B, tileFor(1), [&](ImplicitLocOpBuilder &tb, Value row0, int64_t rows) {
          SmallVector<Value> rowIdx;
          for (int64_t r = 0; r < rows; ++r)
            rowIdx.push_back(arith::AddIOp::create(tb, row0, idx(tb, r)));
          prefetchP(tb, rowIdx, {2}, jb);
          auto acc = gemmTile(
              tb, rRecN, d, jb, H, 1, rows,
              [&](ImplicitLocOpBuilder &ib, int64_t r, Value k) -> Value {
                if (int8)
                  return quantOperand(ib, rhqbuf, ValueRange{}, rowIdx[r], k);
                return memref::LoadOp::create(ib, rhbuf, ValueRange{rowIdx[r], k});
              },
              streamsDown() ? down : Value(),
              [&](ImplicitLocOpBuilder &ib, int64_t r) -> Value {
                return memref::LoadOp::create(ib, rhsbuf, ValueRange{rowIdx[r]});
              });
          for (int64_t r = 0; r < rows; ++r) {
            Value bi = rowIdx[r];
            auto [t, active] = rowTime(tb, bi);
            Value n = activate(tb, acts[1], clip(tb, pre(tb, acc[r], bi, 2, jb)));
            Value z = vector::LoadOp::create(tb, vecType(), zbuf, ValueRange{bi, col});
            Value hPrev = vector::LoadOp::create(tb, vecType(), hbuf, ValueRange{cur, bi, col});
            Value hNew = arith::AddFOp::create(
                tb, arith::MulFOp::create(tb, arith::SubFOp::create(tb, vone, z), n),
                arith::MulFOp::create(tb, z, hPrev));
            finish(tb, bi, col, t, active, hNew, hPrev);
          }
        });
      });
    }
    sync(sb);
    if (int8) {
      // The new h quantized for the next step, after every thread wrote
      // its blocks, before any reads it. With copies of its own, no thread
      // reads another's: the next step writes the other slot of hbuf, and
      // the step after it this slot only past the next step's barrier.
      quantizeH(sb, hbuf, ValueRange{nxt}, hrbuf, hsbuf, ValueRange{nxt}, qlo,
                qhi, writer);
      if (!ownQ)
        sync(sb);
    }
    scf::YieldOp::create(sb);
  });
  };
  if (!team) {
    timeLoop(b, c0i, idx(b, nb), Value());
  } else {
    // The team: its size is set by the CPU backend (a setting of the
    // compiled model), capped at the number of blocks.
    omp::ParallelOperands clauses;
    clauses.numThreads = arith::ConstantOp::create(
        b, b.getI32IntegerAttr((int32_t)std::min<int64_t>(threads, nb)));
    auto par = omp::ParallelOp::create(b, clauses);
    par->setAttr(kTeamMaxThreadsAttr, b.getI64IntegerAttr(nb));
    ImplicitLocOpBuilder tb(b.getLoc(), b.getContext());
    tb.setInsertionPointToStart(tb.createBlock(&par.getRegion()));
    auto query = [&](StringRef fn) -> Value {
      Value v = func::CallOp::create(tb, ompQuery(module, fn), ValueRange{})
                    .getResult(0);
      return arith::IndexCastOp::create(tb, tb.getIndexType(), v);
    };
    Value me = query("omp_get_thread_num"), all = query("omp_get_num_threads");
    Value nbv = idx(tb, nb);
    // Blocks me*nb/all .. (me+1)*nb/all - 1: contiguous, the same at
    // every step, so a thread's weights stay in its cache.
    Value lo = arith::DivUIOp::create(tb, arith::MulIOp::create(tb, me, nbv), all);
    Value hi = arith::DivUIOp::create(
        tb, arith::MulIOp::create(tb, arith::AddIOp::create(tb, me, idx(tb, 1)), nbv),
        all);
    if (!chunked)
      chunkGemm(tb, lo, hi, c0i, T);
    // ownQuant: the thread's own quantized h (and a GRU's r * h) on its
    // stack, from the initial state (hbuf, filled before the team).
    Value sharedH = hrbuf, sharedHs = hsbuf, sharedRh = rhqbuf,
          sharedRhs = rhsbuf;
    if (ownQ) {
      auto stack = [&](ArrayRef<int64_t> shape, Type elt) -> Value {
        return memref::AllocaOp::create(tb, MemRefType::get(shape, elt),
                                        tb.getI64IntegerAttr(64));
      };
      Type qElt = quantType(tb);
      hrbuf = stack({2, B, s.hp()}, qElt);
      hsbuf = stack({2, B}, tb.getF32Type());
      if (s.twoPhase()) {
        rhqbuf = stack({B, s.hp()}, qElt);
        rhsbuf = stack({B}, tb.getF32Type());
      }
      quantizeH(tb, hbuf, ValueRange{c0i}, hrbuf, hsbuf, ValueRange{c0i}, c0i,
                idx(tb, nb), Value());
    }
    timeLoop(tb, lo, hi, me);
    hrbuf = sharedH, hsbuf = sharedHs, rhqbuf = sharedRh, rhsbuf = sharedRhs;
    omp::TerminatorOp::create(tb);
  }

  // 4. Final states.
  Value last = idx(b, T % 2);
  auto copyOut = [&](Value src, ValueRange prefix, Value dst) {
    scf::ForOp::create(b, c0i, idx(b, B), idx(b, 1), ValueRange{},
                       [&](OpBuilder &ob, Location loc, Value bi, ValueRange) {
      ImplicitLocOpBuilder ib(loc, ob);
      scf::ForOp::create(ib, idx(ib, 0), idx(ib, H), idx(ib, 1), ValueRange{},
                         [&](OpBuilder &ob2, Location loc2, Value j, ValueRange) {
        ImplicitLocOpBuilder jb(loc2, ob2);
        SmallVector<Value> at(prefix.begin(), prefix.end());
        at.append({bi, j});
        Value v = memref::LoadOp::create(jb, src, at);
        if (s.hasLens) {
          // As ONNX Runtime: a row with sequence length 0 ends in zeros.
          Value len = loadLen(jb, lens, bi);
          Value zeroLen = arith::CmpIOp::create(
              jb, arith::CmpIPredicate::eq, len,
              arith::ConstantOp::create(jb, jb.getI32IntegerAttr(0)));
          v = arith::SelectOp::create(
              jb, zeroLen, arith::ConstantOp::create(jb, jb.getF32FloatAttr(0.f)), v);
        }
        memref::StoreOp::create(jb, v, dst, ValueRange{idx(jb, d), bi, j});
        scf::YieldOp::create(jb);
      });
      scf::YieldOp::create(ib);
    });
  };
  copyOut(hbuf, ValueRange{last}, hn);
  if (s.isLSTM())
    copyOut(cbuf, ValueRange{}, cn);
}

func::FuncOp LayerEmitter::emit(ArrayRef<float> w, ArrayRef<float> r,
                                ArrayRef<float> bw, ArrayRef<float> br,
                                ArrayRef<float> peephole) {
  MLIRContext *ctx = module.getContext();
  const int64_t T = s.T, B = s.B, I = s.I, H = s.H, D = s.D, G = s.G,
                nb = s.nb(), hp = s.hp();
  Type f32 = Float32Type::get(ctx);
  auto mem = [&](ArrayRef<int64_t> shape, Type t = {}) {
    return MemRefType::get(shape, t ? t : f32);
  };
  SmallVector<Type> args = {mem({T * B, I})};
  if (s.hasH0)
    args.push_back(mem({D, B, H}));
  if (s.hasC0)
    args.push_back(mem({D, B, H}));
  if (s.hasLens)
    args.push_back(mem({B}, IntegerType::get(ctx, 32)));
  args.push_back(mem({T, D, B, H}));
  args.push_back(mem({D, B, H}));
  if (s.isLSTM())
    args.push_back(mem({D, B, H}));

  OpBuilder mb(ctx);
  mb.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  name = rnn::uniqueSymbol(module, name);
  auto func = func::FuncOp::create(mb, loc, name, FunctionType::get(ctx, args, {}));
  func.setPrivate();
  Block *entry = func.addEntryBlock();
  ImplicitLocOpBuilder b(loc, ctx);
  b.setInsertionPointToStart(entry);

  // Packed weights. The input projection carries both biases except the
  // n gate's recurrent one under linear_before_reset (it sits inside r * (.)).
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, G));
  wIn = weights(b, "W", {D, nb, I, G, s.vec}, packWeights(w, D, G, H, I, all, s.vec));
  std::vector<float> bias(D * G * hp, 0.f), brn(D * hp, 0.f);
  for (int64_t d = 0; d < D; ++d)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t j = 0; j < H; ++j) {
        float rb = br[(d * G + g) * H + j];
        bool split = s.isGRU() && s.linearBeforeReset && g == 2;
        bias[(d * G + g) * hp + j] = bw[(d * G + g) * H + j] + (split ? 0.f : rb);
        if (split)
          brn[d * hp + j] = rb;
      }
  bIn = global(b, "B", {D, G, hp}, bias);
  if (s.twoPhase()) {
    rRec = weights(b, "Rrz", {D, nb, H, 2, s.vec}, packWeights(r, D, G, H, H, {0, 1}, s.vec));
    rRecN = weights(b, "Rn", {D, nb, H, 1, s.vec}, packWeights(r, D, G, H, H, {2}, s.vec));
  } else {
    rRec = weights(b, "R", {D, nb, H, G, s.vec}, packWeights(r, D, G, H, H, all, s.vec));
  }
  if (s.isGRU() && s.linearBeforeReset)
    bRecN = global(b, "Brn", {D, hp}, brn);
  if (s.hasPeephole) {
    std::vector<float> pp(D * 3 * hp, 0.f);
    for (int64_t d = 0; d < D; ++d)
      for (int64_t k = 0; k < 3; ++k)
        for (int64_t j = 0; j < H; ++j)
          pp[(d * 3 + k) * hp + j] = peephole[(d * 3 + k) * H + j];
    bPeep = global(b, "Peep", {D, 3, hp}, pp);
  }

  // P block-major, [H/V][Tc*B][G][V]: the input GEMM of a block writes one
  // contiguous run, and a step's epilogue reads B * G * V contiguous floats
  // per block.
  p = alloc(b, {nb, chunkSteps() * B, G, s.vec});
  hbuf = alloc(b, {2, B, hp});
  SmallVector<Value> scratch = {p, hbuf};
  if (bf16)
    scratch.push_back(hrbuf = alloc(b, {2, B, hp}));
  // (With ownQuant, each thread's own: emitDirection.)
  if (int8 && !ownQuant()) {
    scratch.push_back(hrbuf = allocQuant(b, {2, B, hp}));
    scratch.push_back(hsbuf = alloc(b, {2, B}));
    if (s.twoPhase()) {
      scratch.push_back(rhqbuf = allocQuant(b, {B, hp}));
      scratch.push_back(rhsbuf = alloc(b, {B}));
    }
  }
  if (s.isLSTM())
    scratch.push_back(cbuf = alloc(b, {B, hp}));
  if (s.twoPhase()) {
    scratch.push_back(zbuf = alloc(b, {B, hp}));
    scratch.push_back(rhbuf = alloc(b, {B, hp}));
  }

  unsigned a = 0;
  Value x = entry->getArgument(a++);
  Value h0 = s.hasH0 ? entry->getArgument(a++) : Value();
  Value c0 = s.hasC0 ? entry->getArgument(a++) : Value();
  Value lens = s.hasLens ? entry->getArgument(a++) : Value();
  Value y = entry->getArgument(a++);
  Value hn = entry->getArgument(a++);
  Value cn = s.isLSTM() ? entry->getArgument(a++) : Value();
  if (bf16) {
    // The input GEMM's operand, rounded once for both directions.
    auto xType = cast<MemRefType>(x.getType());
    Value xr = memref::AllocOp::create(
        b, MemRefType::get(xType.getShape(), b.getF32Type()),
        b.getI64IntegerAttr(64));
    scratch.push_back(xr);
    SmallVector<Value> lbs(xType.getRank(), idx(b, 0)),
        steps(xType.getRank(), idx(b, 1)), ubs;
    for (int64_t dim : xType.getShape())
      ubs.push_back(idx(b, dim));
    scf::buildLoopNest(b, b.getLoc(), lbs, ubs, steps,
                       [&](OpBuilder &ob, Location loc, ValueRange iv) {
                         ImplicitLocOpBuilder ib(loc, ob);
                         Value v = memref::LoadOp::create(ib, x, iv);
                         memref::StoreOp::create(ib, roundOperand(ib, v), xr, iv);
                       });
    x = xr;
  }
  if (int8) {
    // The input GEMM's operand, quantized once for both directions: per row
    // of x to its range, the row padded with zeros to whole vectors.
    int64_t blocks = llvm::divideCeil(I, s.vec);
    Value xq = allocQuant(b, {T * B, blocks * s.vec});
    scratch.push_back(xq);
    scratch.push_back(xsbuf = alloc(b, {T * B}));
    Value pad = arith::ConstantOp::create(b, b.getF32FloatAttr(0.f));
    quantizeRows(
        b, T * B, blocks, idx(b, 0), idx(b, blocks),
        [&](ImplicitLocOpBuilder &ib, Value row, Value jb) -> Value {
          Value col = arith::MulIOp::create(ib, jb, idx(ib, s.vec));
          return vector::TransferReadOp::create(
              ib, vecType(), x, ValueRange{row, col}, pad,
              ArrayRef<bool>{I % s.vec == 0});
        },
        [&](ImplicitLocOpBuilder &ib, Value row, Value jb, Value q) {
          Value col = arith::MulIOp::create(ib, jb, idx(ib, s.vec));
          vector::StoreOp::create(ib, q, xq, ValueRange{row, col});
        },
        [&](ImplicitLocOpBuilder &ib, Value row, Value scale) {
          memref::StoreOp::create(ib, scale, xsbuf, ValueRange{row});
        });
    x = xq;
  }
  for (int64_t d = 0; d < D; ++d)
    emitDirection(b, d, x, h0, c0, lens, y, hn, cn);
  // The scratch buffers are freed by the buffer-deallocation pipeline.
  (void)scratch;
  func::ReturnOp::create(b);
  return func;
}

using rnn::LayerOperands;

template <typename OpTy>
LogicalResult lowerLayer(OpTy op, const LayerOperands &in, ModuleOp module,
                         const KernelParams &kp) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << "convert-rnn-to-cpu: " << why;
  };
  auto xt = dyn_cast<RankedTensorType>(in.x.getType());
  if (!xt || !xt.hasStaticShape() || xt.getRank() != 3 ||
      !xt.getElementType().isF32())
    return fail("needs a static f32 [T, B, I] input; specialise the input "
                "shapes first (lstm-run does)");
  auto consts = rnn::readLayerConstants(in, fail);
  if (failed(consts))
    return failure();
  const onnx::F32Tensor *w = &consts->w, *r = &consts->r, *bw = &consts->bw,
                        *br = &consts->br;
  const std::optional<onnx::F32Tensor> &peephole = consts->peephole;
  LayerSpec s;
  if (failed(rnn::describeLayer(op, "convert-rnn-to-cpu", xt, w->shape[2],
                                (bool)in.h0, (bool)in.c0, s)))
    return failure();
  s.hasLens = (bool)in.lens;
  s.vec = kp.vec;
  // Initial states are [D, B, H] and sequence_lens [B] by the op's
  // definition; where shape inference left their sizes open (states built
  // by Expand over computed shapes), they are cast to those static types.
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto h0 = rnn::castToLayerType(b, in.h0, {s.D, s.B, s.H}, b.getF32Type(),
                                 "the initial state", fail);
  auto c0 = rnn::castToLayerType(b, s.hasC0 ? in.c0 : Value(),
                                 {s.D, s.B, s.H}, b.getF32Type(),
                                 "the initial cell state", fail);
  auto lens = rnn::castToLayerType(b, in.lens, {s.B}, b.getI32Type(),
                                   "sequence_lens", fail);
  if (failed(h0) || failed(c0) || failed(lens))
    return failure();

  // A layer's own precision (`lstm_opt.precision`) overrides the pass's.
  KernelParams lp = kp;
  if (auto p = op->template getAttrOfType<StringAttr>(rnn::kPrecisionAttr)) {
    if (p.getValue() != "f32" && p.getValue() != "bf16" &&
        p.getValue() != "int8")
      return fail("lstm_opt.precision must be \"f32\", \"bf16\" or \"int8\", "
                  "not \"" + p.getValue() + "\"");
    lp.bf16 = p.getValue() == "bf16";
    lp.int8 = p.getValue() == "int8";
  }
  // VNNI's i32 sums of u8 * s8 products (at most 255 * 127 each) stay
  // exact up to 65536 terms.
  if (lp.int8 && std::max(s.I, s.H) > 65536)
    return fail("precision int8 takes at most 65536 inputs and hidden units "
                "(the integer sums are 32-bit); this layer has input size " +
                Twine(s.I) + " and hidden size " + Twine(s.H));
  LayerEmitter emitter(module, s, rnn::layerSymbol(op.getLoc(), "__lstm_opt_"),
                       lp);
  ArrayRef<float> peep = peephole ? ArrayRef<float>(peephole->values)
                                  : ArrayRef<float>();
  func::FuncOp fn =
      emitter.emit(w->values, r->values, bw->values, br->values, peep);
  // What bf16 does to this layer's numbers, on the host's simulation of
  // both precisions (8 steps, one batch row of random inputs).
  std::string lowError;
  if (lp.bf16 || lp.int8) {
    int64_t steps = 0;
    double e = rnn::simulatedPrecisionError(
        s, lp.bf16 ? rnn::LowPrecision::BF16 : rnn::LowPrecision::Int8,
        w->values, r->values, bw->values, br->values, /*steps=*/8,
        /*batch=*/1, &steps, peep);
    lowError = llvm::formatv("; {0} against f32 on random inputs ({1} step{2}, "
                             "simulated on the host): max rel error {3:e1}",
                             lp.bf16 ? "bf16" : "int8", steps,
                             steps == 1 ? "" : "s", e)
                   .str();
  }
  std::string precision = "; precision f32";
  if (lp.bf16)
    precision = std::string("; precision bf16 (weights bf16, x and h rounded "
                            "to bf16 for the products, f32 accumulation, "
                            "gates and states): ") +
                emitter.products().str();
  else if (lp.int8)
    precision = std::string("; precision int8 (weights int8 with one scale "
                            "per gate row, x and h quantized per row and step "
                            "to their range, integer products, gates and "
                            "states f32): ") +
                emitter.products().str();
  // The kernel's shape, for the user (lstm-opt --report lists remarks).
  op->emitRemark() << "CPU kernel: " << s.vec << "-lane f32 vectors, "
                   << kp.registers << " vector registers; register tile of the "
                   << "GEMMs: up to " << emitter.rowsPerTile(s.G) << " rows x "
                   << s.G << " gates"
                   << (emitter.stepBlocksPerTile() > 1
                           ? "; at each step " +
                                 std::to_string(emitter.stepBlocksPerTile()) +
                                 " hidden blocks per tile"
                           : "")
                   << "; recurrent weights " << emitter.weightKiBPerThread()
                   << " KiB per thread, cache " << (kp.cacheBytes >> 10)
                   << " KiB"
                   << (emitter.streamsDown() ? ": odd steps read them backwards"
                                             : "")
                   << (emitter.chunkSteps() < s.T
                           ? "; input GEMM in chunks of " +
                                 std::to_string(emitter.chunkSteps()) + " steps"
                           : "")
                   << precision << lowError;

  // The call site: tensors in and out through bufferization casts.
  SmallVector<Value> inputs;
  for (Value v : {*h0, *c0, *lens})
    if (v)
      inputs.push_back(v);
  return rnn::emitLayerCall(b, op, fn, in.x, inputs, s, fail);
}

/// `omp.barrier` orders every thread's reads and writes around it, but the
/// OpenMP dialect declares no memory effects for it, and MLIR's buffer
/// deallocation refuses a function with an op of unknown effects. This
/// states them: it reads and writes memory.
struct BarrierEffects
    : public MemoryEffectOpInterface::ExternalModel<BarrierEffects,
                                                    omp::BarrierOp> {
  void getEffects(Operation *,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// The int8 kernels' vpdpbusd is an `llvm.call_intrinsic`, which declares
/// no memory effects either; the buffer-deallocation pipeline refuses it.
/// This states them: none for the dot-product intrinsics the kernels emit
/// (x86's vpdpbusd and pmaddwd, AArch64's sdot, bfdot, smull and saddlp:
/// pure arithmetic on registers), reads and writes for any other.
struct CallIntrinsicEffects
    : public MemoryEffectOpInterface::ExternalModel<CallIntrinsicEffects,
                                                    LLVM::CallIntrinsicOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    StringRef name = cast<LLVM::CallIntrinsicOp>(op).getIntrin();
    if (name.starts_with("llvm.x86.avx512.vpdpbusd.") ||
        name == "llvm.x86.avx512.pmaddw.d.512" ||
        name == "llvm.x86.avx2.pmadd.wd" || name == "llvm.x86.sse2.pmadd.wd" ||
        name.starts_with("llvm.aarch64.neon.smull.") ||
        name.starts_with("llvm.aarch64.neon.saddlp.") ||
        name.starts_with("llvm.aarch64.neon.sdot.") ||
        name.starts_with("llvm.aarch64.neon.bfdot."))
      return;
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

struct ConvertRNNToCPUPass
    : public lstm_opt::impl::ConvertRNNToCPUPassBase<ConvertRNNToCPUPass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.addExtension(+[](MLIRContext *ctx, omp::OpenMPDialect *) {
      omp::BarrierOp::attachInterface<BarrierEffects>(*ctx);
    });
    registry.addExtension(+[](MLIRContext *ctx, LLVM::LLVMDialect *) {
      LLVM::CallIntrinsicOp::attachInterface<CallIntrinsicEffects>(*ctx);
    });
  }
  /// `layer-precision`: each NODE=P sets lstm_opt.precision = P on the
  /// layers whose location names NODE.
  LogicalResult applyLayerPrecisions(ModuleOp module) {
    if (layerPrecisions.empty())
      return success();
    // Each layer with the node names of its location (a fused layer's can
    // be hundreds), gathered once.
    SmallVector<std::pair<Operation *, llvm::SetVector<StringRef>>> layers;
    module.walk([&](Operation *op) {
      if (!isa<rnn::SequenceOp, rnn::RecurrenceOp>(op))
        return;
      llvm::SetVector<StringRef> names;
      op->getLoc()->walk([&](Location l) {
        if (auto n = dyn_cast<NameLoc>(l))
          names.insert(n.getName().getValue());
        return WalkResult::advance();
      });
      layers.emplace_back(op, std::move(names));
    });
    for (const std::string &entry : layerPrecisions) {
      auto [node, p] = StringRef(entry).rsplit('=');
      if (node.empty() || (p != "f32" && p != "bf16" && p != "int8")) {
        module.emitError() << "convert-rnn-to-cpu: layer-precision takes "
                              "NODE=f32|bf16|int8, not '"
                           << entry << "'";
        return failure();
      }
      bool found = false;
      for (auto &[op, names] : layers)
        if (names.contains(node)) {
          op->setAttr(rnn::kPrecisionAttr,
                      StringAttr::get(module.getContext(), p));
          found = true;
        }
      if (!found) {
        // Name the layers there are, as their remarks do (first node).
        std::string list;
        for (auto &[op, names] : layers)
          list += (list.empty() ? "'" : ", '") +
                  (names.empty() ? std::string("?") : names.front().str()) +
                  "'";
        module.emitError() << "convert-rnn-to-cpu: layer-precision names '"
                           << node << "', which is no recurrent layer's node"
                           << (layers.empty() ? std::string("; the model has no "
                                                            "recurrent layer")
                                              : "; the layers: " + list);
        return failure();
      }
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (vectorWidth != 4 && vectorWidth != 8 && vectorWidth != 16) {
      module.emitError() << "convert-rnn-to-cpu: vector-width must be 4, 8 "
                            "or 16, not "
                         << static_cast<int64_t>(vectorWidth);
      return signalPassFailure();
    }
    if (vectorRegisters < 8 || vectorRegisters > 64) {
      module.emitError() << "convert-rnn-to-cpu: vector-registers must be "
                            "8..64, not "
                         << static_cast<int64_t>(vectorRegisters);
      return signalPassFailure();
    }
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>{"cache-bytes", cacheBytes},
          {"l1-cache-bytes", l1CacheBytes},
          {"block-tile", blockTile},
          {"gemm-chunk-steps", gemmChunkSteps}}) {
      if (value < 0) {
        module.emitError() << "convert-rnn-to-cpu: " << name
                           << " must be >= 0, not " << value;
        return signalPassFailure();
      }
    }
    if (precision != "f32" && precision != "bf16" && precision != "int8") {
      module.emitError() << "convert-rnn-to-cpu: precision must be f32, "
                            "bf16 or int8, not '"
                         << precision << "'";
      return signalPassFailure();
    }
    if (dotIsa != "x86" && dotIsa != "aarch64") {
      module.emitError() << "convert-rnn-to-cpu: dot-isa must be x86 or "
                            "aarch64, not '"
                         << dotIsa << "'";
      return signalPassFailure();
    }
    if (failed(applyLayerPrecisions(module)))
      return signalPassFailure();
    KernelParams params{batchTile,       parallelMinWork, vectorWidth,
                              vectorRegisters, threads,         cacheBytes,
                              precision == "bf16", bf16Dot,
                              precision == "int8", int8Dot,
                              dotIsa == "aarch64"};
    params.int8PairDot = int8PairDot;
    params.blockTile = blockTile;
    params.gemmChunkSteps = gemmChunkSteps;
    params.l1CacheBytes = l1CacheBytes;
    auto lower = [&](Operation *op, const LayerOperands &in) {
      if (auto seq = dyn_cast<rnn::SequenceOp>(op))
        return lowerLayer(seq, in, module, params);
      return lowerLayer(cast<rnn::RecurrenceOp>(op), in, module, params);
    };
    if (failed(rnn::forEachLayer(module, "convert-rnn-to-cpu", lower)) ||
        failed(rnn::checkOnlyLayersLowered(
            module, "convert-rnn-to-cpu",
            "rnn.stack is not lowered yet; run the CPU pipeline without "
            "rnn-stack-layers")))
      signalPassFailure();
  }
};

} // namespace

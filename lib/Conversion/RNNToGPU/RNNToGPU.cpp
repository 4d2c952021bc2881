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
/// Static shared memory a block may use (bytes): the sm_80/sm_90 limit
/// without the opt-in to larger dynamic shared memory.
constexpr int64_t kSharedBytes = 48 * 1024;
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

/// The launch geometry and body of one kernel. The body gets the builder,
/// the block and thread ids and the kernel's operands (the host values with
/// mapping=cpu, the gpu.func's arguments with mapping=gpu).
using KernelBody =
    function_ref<void(ImplicitLocOpBuilder &, Value bid, Value tid, ValueRange)>;

class LayerEmitter {
public:
  LayerEmitter(ModuleOp module, const LayerSpec &spec, StringRef name,
               Mapping mapping, bool persistent, int64_t unitsPerBlock)
      : module(module), symbols(module), s(spec), name(name.str()),
        mapping(mapping), persistent(persistent), U(unitsPerBlock) {}

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

  ModuleOp module;
  SymbolTable symbols;
  const LayerSpec &s;
  std::string name;
  Mapping mapping;
  bool persistent;
  int64_t U;
  SmallVector<Value> deviceBuffers;
  /// Positions of the buffers in the kernels' operand list.
  enum Op { X, Wt, Bias, Rt, Brn, P, Hb, Cb, Zb, RHb, Y, H0, C0, Hn, Cn, Ctr, NumOps };
};

Value LayerEmitter::global(ImplicitLocOpBuilder &b, StringRef suffix,
                           ArrayRef<int64_t> shape, ArrayRef<float> values) {
  std::string sym = uniqueSymbol(symbols, name + "_" + suffix.str());
  Value shaped = rnn::emitShapedGlobal(b, module, sym, shape, values);
  symbols.insert(module.lookupSymbol(sym));
  return toDevice(b, shaped);
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

void LayerEmitter::cellBody(
    ImplicitLocOpBuilder &b, ValueRange ops, Value step, Value d, Value bi,
    Value j, int phase,
    function_ref<Value(ImplicitLocOpBuilder &, Value, int64_t)> wAt,
    const SharedState *hs) {
  const int64_t B = s.B, H = s.H;
  Value cur = arith::RemUIOp::create(b, step, idx(b, 2));
  Value nxt = arith::SubIOp::create(b, idx(b, 1), cur);
  Value t = timeOf(b, d, step);
  Value row = arith::AddIOp::create(b, arith::MulIOp::create(b, t, idx(b, B)), bi);

  // The recurrent dot products, over h (or r*h for the GRU's phase 2).
  SmallVector<int64_t> gates;
  if (phase == 1)
    gates = {0, 1};
  else if (phase == 2)
    gates = {2};
  else
    gates = llvm::to_vector(llvm::seq<int64_t>(0, s.G));
  // Everything the epilogue reads from global memory is loaded before the
  // dot products, so that the loads' latency hides behind them: the
  // projected input of each gate, h_prev, c, the GRU's z and Rbn.
  SmallVector<Value> pOf(s.G);
  for (int64_t g : gates)
    pOf[g] = memref::LoadOp::create(b, ops[P], ValueRange{d, row, idx(b, g), j});
  Value hPrev = hs ? hs->load(b, j, false)
                   : memref::LoadOp::create(b, ops[Hb], ValueRange{cur, d, bi, j});
  Value cOld = s.isLSTM() ? memref::LoadOp::create(b, ops[Cb], ValueRange{d, bi, j})
                          : Value();
  Value zOld = phase == 2 ? memref::LoadOp::create(b, ops[Zb], ValueRange{d, bi, j})
                          : Value();
  Value rbn = phase == 0 && s.isGRU()
                  ? memref::LoadOp::create(b, ops[Brn], ValueRange{d, j})
                  : Value();
  SmallVector<Value> init(gates.size(), f32(b, 0.f));
  auto loop = scf::ForOp::create(
      b, idx(b, 0), idx(b, H), idx(b, 1), init,
      [&](OpBuilder &ob, Location loc, Value k, ValueRange acc) {
        ImplicitLocOpBuilder lb(loc, ob);
        Value hk = hs ? hs->load(lb, k, phase == 2)
                   : phase == 2
                       ? memref::LoadOp::create(lb, ops[RHb], ValueRange{d, bi, k})
                       : memref::LoadOp::create(lb, ops[Hb], ValueRange{cur, d, bi, k});
        SmallVector<Value> next;
        for (auto [i, g] : llvm::enumerate(gates))
          next.push_back(math::FmaOp::create(lb, wAt(lb, k, g), hk, acc[i]));
        scf::YieldOp::create(lb, next);
      });
  // On the GPU the loop is bound by the latency of its loads (h from global
  // memory, the weights from shared or global memory), not by the FMAs:
  // unrolled up to 16 times, the loads of 16 steps of k are in flight at
  // once. Each accumulator still sums in order, so the results are
  // unchanged. The factor divides H and is below it, so the loop stays one
  // loop (LLVM unrolls a loop of at most 16 steps by itself).
  if (mapping == Mapping::GPU && H > kUnrollK) {
    int64_t factor = kUnrollK;
    while (H % factor)
      --factor;
    if (factor > 1)
      (void)loopUnrollByFactor(loop, factor);
  }
  auto pre = [&](int64_t g, Value acc) -> Value {
    return arith::AddFOp::create(b, acc, pOf[g]);
  };
  auto finish = [&](Value hNew) {
    memref::StoreOp::create(b, hNew, ops[Hb], ValueRange{nxt, d, bi, j});
    memref::StoreOp::create(b, hNew, ops[Y], ValueRange{t, d, bi, j});
    if (hs)
      hs->store(b, hNew, false);
  };
  Value one = f32(b, 1.f);
  auto gruH = [&](Value z, Value n) -> Value {
    // h = (1 - z) * n + z * h_prev
    return arith::AddFOp::create(
        b, arith::MulFOp::create(b, arith::SubFOp::create(b, one, z), n),
        arith::MulFOp::create(b, z, hPrev));
  };
  auto acc = loop.getResults();
  if (phase == 1) {
    Value rg = act(b, d, 0, clip(b, pre(0, acc[0])));
    Value z = act(b, d, 0, clip(b, pre(1, acc[1])));
    memref::StoreOp::create(b, z, ops[Zb], ValueRange{d, bi, j});
    Value rh = arith::MulFOp::create(b, rg, hPrev);
    memref::StoreOp::create(b, rh, ops[RHb], ValueRange{d, bi, j});
    if (hs)
      hs->store(b, rh, true);
    return;
  }
  if (phase == 2) {
    Value n = act(b, d, 1, clip(b, pre(2, acc[0])));
    finish(gruH(zOld, n));
    return;
  }
  if (s.isLSTM()) {
    Value i = act(b, d, 0, clip(b, pre(0, acc[0])));
    Value f = act(b, d, 0, clip(b, pre(1, acc[1])));
    Value g = act(b, d, 1, clip(b, pre(2, acc[2])));
    Value o = act(b, d, 0, clip(b, pre(3, acc[3])));
    Value c = arith::AddFOp::create(b, arith::MulFOp::create(b, f, cOld),
                                    arith::MulFOp::create(b, i, g));
    memref::StoreOp::create(b, c, ops[Cb], ValueRange{d, bi, j});
    finish(arith::MulFOp::create(b, o, act(b, d, 2, c)));
  } else if (s.isGRU()) {
    // linear_before_reset: n = act(Wn x + Wbn + r * (Rn h + Rbn)).
    Value rg = act(b, d, 0, clip(b, pre(0, acc[0])));
    Value z = act(b, d, 0, clip(b, pre(1, acc[1])));
    Value pn = pOf[2];
    Value n = act(b, d, 1, clip(b, arith::AddFOp::create(
                                       b, pn, arith::MulFOp::create(
                                                  b, rg, arith::AddFOp::create(b, acc[2], rbn)))));
    finish(gruH(z, n));
  } else {
    finish(act(b, d, 0, clip(b, pre(0, acc[0]))));
  }
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
  ops[Rt] = global(b, "Rt", {D, H, G, H}, transposeWeights(r, D, G, H, H));
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
      // One block per direction: the blocks share nothing, and a step needs
      // only the block's barrier. Else the grid barrier's counter, zeroed
      // before the launch.
      const bool gridBarrier = grid > D;
      SmallVector<Op> pops = stepOps;
      if (gridBarrier) {
        ops[Ctr] = deviceAlloc(b, mem({1}, b.getI32Type()));
        gpu::MemsetOp::create(b, Type(), ValueRange{}, ops[Ctr],
                              arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
        pops.push_back(Ctr);
      }
      // One block: the state in shared memory too, h double-buffered
      // ([2][B][H]) and the GRU's r*h ([B][H]) after it.
      const int64_t stateN = gridBarrier ? 0 : (phases.size() == 2 ? 3 : 2) * B * H;
      // The weight slice (and the state): static shared memory up to 48
      // KiB, else dynamic shared memory (the runtime opts the kernel in at
      // its launch).
      const bool dynamicShared = (slice + stateN) * 4 > kSharedBytes;
      Operands o = pick(pops);
      gpu::GPUModuleOp gm = kernelModule();
      SymbolTable kernels(gm);
      std::string kname = uniqueSymbol(kernels, name + "_persist");
      OpBuilder kbld(gm.getBodyRegion());
      kbld.setInsertionPointToEnd(gm.getBody());
      auto shType = MemRefType::get(
          {slice}, b.getF32Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx(), gpu::AddressSpace::Workgroup));
      auto stType = MemRefType::get(
          {std::max<int64_t>(stateN, 1)}, b.getF32Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx(), gpu::AddressSpace::Workgroup));
      SmallVector<Type> attributions;
      if (!dynamicShared) {
        attributions.push_back(shType);
        if (stateN)
          attributions.push_back(stType);
      }
      auto fn = gpu::GPUFuncOp::create(
          kbld, loc, kname, FunctionType::get(ctx(), ValueRange(o.values).getTypes(), {}),
          attributions);
      fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kbld.getUnitAttr());
      fn.setKnownBlockSizeAttr(kbld.getDenseI32ArrayAttr({(int32_t)block, 1, 1}));
      fn.setKnownGridSizeAttr(kbld.getDenseI32ArrayAttr({(int32_t)grid, 1, 1}));
      {
        ImplicitLocOpBuilder kb(loc, ctx());
        kb.setInsertionPointToStart(&fn.getBody().front());
        Value bid = gpu::BlockIdOp::create(kb, gpu::Dimension::x);
        Value tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);
        auto v = view(o, fn.getArguments());
        Value sh, st;
        if (dynamicShared) {
          auto bytes = MemRefType::get(
              {ShapedType::kDynamic}, kb.getI8Type(), MemRefLayoutAttrInterface(),
              gpu::AddressSpaceAttr::get(ctx(), gpu::AddressSpace::Workgroup));
          Value raw = gpu::DynamicSharedMemoryOp::create(kb, bytes);
          sh = memref::ViewOp::create(kb, shType, raw, idx(kb, 0), ValueRange{});
          if (stateN)
            st = memref::ViewOp::create(kb, stType, raw, idx(kb, slice * 4),
                                        ValueRange{});
        } else {
          sh = fn.getWorkgroupAttributions()[0];
          if (stateN)
            st = fn.getWorkgroupAttributions()[1];
        }
        Ids i = ids(kb, bid, tid);
        loadSlice(kb, v, tid, i, [&](ImplicitLocOpBuilder &lb, Value val, Value e) {
          memref::StoreOp::create(lb, val, sh, ValueRange{e});
        });
        if (stateN) {
          // st[0][b][j] = h[0][d][b][j], as the init kernel left it.
          scf::ForOp::create(kb, tid, idx(kb, B * H), idx(kb, block), ValueRange{},
                             [&](OpBuilder &ob, Location l, Value e, ValueRange) {
            ImplicitLocOpBuilder lb(l, ob);
            auto bj = delinearize(lb, e, {B, H});
            Value h = memref::LoadOp::create(
                lb, v[Hb], ValueRange{idx(lb, 0), i.d, bj[0], bj[1]});
            memref::StoreOp::create(lb, h, st, ValueRange{e});
            scf::YieldOp::create(lb);
          });
        }
        gpu::BarrierOp::create(kb);
        Value ctr = v[Ctr];
        int64_t nph = phases.size();
        scf::ForOp::create(kb, idx(kb, 0), idx(kb, T), idx(kb, 1), ValueRange{},
                           [&](OpBuilder &ob, Location l, Value step, ValueRange) {
          ImplicitLocOpBuilder sb(l, ob);
          // st[slot][b][k]: slot step % 2 is h, the other the new h, 2 r*h.
          auto stateIndex = [&](ImplicitLocOpBuilder &wb, Value slot, Value k) {
            return arith::AddIOp::create(
                wb,
                arith::MulIOp::create(
                    wb, arith::AddIOp::create(wb, arith::MulIOp::create(wb, slot, idx(wb, B)), i.bi),
                    idx(wb, H)),
                k);
          };
          auto stateLoad = [&](ImplicitLocOpBuilder &wb, Value k, bool rh) -> Value {
            Value slot = rh ? idx(wb, 2) : arith::RemUIOp::create(wb, step, idx(wb, 2));
            return memref::LoadOp::create(wb, st, ValueRange{stateIndex(wb, slot, k)});
          };
          auto stateStore = [&](ImplicitLocOpBuilder &wb, Value val, bool rh) {
            Value slot = rh ? idx(wb, 2)
                            : arith::SubIOp::create(
                                  wb, idx(wb, 1), arith::RemUIOp::create(wb, step, idx(wb, 2)));
            memref::StoreOp::create(wb, val, st, ValueRange{stateIndex(wb, slot, i.jl)});
          };
          SharedState state{stateLoad, stateStore};
          for (auto [pi, phase] : llvm::enumerate(phases)) {
            stepPhase(sb, v, step, i, phase,
                      [&](ImplicitLocOpBuilder &wb, Value e, Value) -> Value {
                        return memref::LoadOp::create(wb, sh, ValueRange{e});
                      },
                      stateN ? &state : nullptr);
            // Grid barrier number n = step * phases + pi + 1: all blocks
            // have arrived when the counter reaches n * grid.
            if (!gridBarrier) {
              // The block's barrier also makes its global writes (h, c)
              // visible to all its threads.
              gpu::BarrierOp::create(sb);
              continue;
            }
            Value n = arith::AddIOp::create(
                sb, arith::MulIOp::create(sb, step, idx(sb, nph)), idx(sb, pi + 1));
            Value target = arith::IndexCastOp::create(
                sb, sb.getI32Type(), arith::MulIOp::create(sb, n, idx(sb, grid)));
            gpu::BarrierOp::create(sb);
            Value first = arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, tid, idx(sb, 0));
            scf::IfOp::create(sb, first, [&](OpBuilder &ob2, Location l2) {
              ImplicitLocOpBuilder tb(l2, ob2);
              Value c0 = idx(tb, 0);
              // Release this block's writes (h, c, Y) before arriving.
              LLVM::FenceOp::create(tb, LLVM::AtomicOrdering::acq_rel);
              memref::AtomicRMWOp::create(
                  tb, tb.getI32Type(), arith::AtomicRMWKind::addi,
                  arith::ConstantOp::create(tb, tb.getI32IntegerAttr(1)), ctr,
                  ValueRange{c0});
              scf::WhileOp::create(
                  tb, TypeRange{}, ValueRange{},
                  [&](OpBuilder &wob, Location wl, ValueRange) {
                    ImplicitLocOpBuilder wb(wl, wob);
                    Value seen = memref::AtomicRMWOp::create(
                        wb, wb.getI32Type(), arith::AtomicRMWKind::addi,
                        arith::ConstantOp::create(wb, wb.getI32IntegerAttr(0)), ctr,
                        ValueRange{idx(wb, 0)});
                    Value wait = arith::CmpIOp::create(wb, arith::CmpIPredicate::slt,
                                                       seen, target);
                    scf::ConditionOp::create(wb, wait, ValueRange{});
                  },
                  [&](OpBuilder &wob, Location wl, ValueRange) {
                    scf::YieldOp::create(wob, wl);
                  });
              // Acquire the other blocks' writes.
              LLVM::FenceOp::create(tb, LLVM::AtomicOrdering::acq_rel);
              scf::YieldOp::create(tb);
            });
            gpu::BarrierOp::create(sb);
          }
          scf::YieldOp::create(sb);
        });
        gpu::ReturnOp::create(kb);
      }
      Value one = idx(b, 1);
      Value smem = dynamicShared
                       ? Value(arith::ConstantOp::create(
                             b, b.getI32IntegerAttr(int32_t((slice + stateN) * 4))))
                       : Value();
      gpu::LaunchFuncOp::create(b, fn, gpu::KernelDim3{idx(b, grid), one, one},
                                gpu::KernelDim3{idx(b, block), one, one},
                                smem, o.values);
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
};

/// What the generated kernels run: every layer but one with sequence_lens
/// (they run all T steps for every batch row).
const rnn::BackendCapabilities kGPUKernels = {/*name=*/"the GPU kernels",
                                              /*sequenceLens=*/false};

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

  // The recurrence kernel: persistent for batch <= 4 when a block's weight
  // slice fits the static shared memory with the grid no larger than
  // `maxBlocks` (assumed co-resident).
  // U units per block: as few as keep the grid within maxBlocks, but at
  // least a warp of threads (B * U >= 32) when that fits too.
  int64_t perDir = std::max<int64_t>(1, opts.maxBlocks / s.D);
  int64_t uMin = llvm::divideCeil(s.H, perDir);
  auto fitsWith = [&](int64_t u) {
    return s.H * s.G * u * 4 <= opts.sharedBytes && s.B * u <= 1024;
  };
  int64_t u = std::max<int64_t>(uMin, std::min<int64_t>(s.H, llvm::divideCeil(32, s.B)));
  if (!fitsWith(u))
    u = uMin;
  // One block per direction when a direction's whole recurrent matrix fits
  // its shared memory: the steps then need only the block's own barrier,
  // not the grid barrier over global atomics (most of a step's time on an
  // H100 at H = 64).
  int64_t stateBytes = (s.twoPhase() ? 3 : 2) * s.B * s.H * 4;
  if (fitsWith(s.H) && s.H * s.G * s.H * 4 + stateBytes <= opts.sharedBytes)
    u = s.H;
  bool fits = fitsWith(u);
  bool persistent = opts.design == "persistent" ||
                    (opts.design == "auto" && s.B <= 4 && fits);
  if (persistent && !fits)
    return fail("the persistent kernel does not fit: " + Twine(s.D) + " x " +
                Twine(llvm::divideCeil(s.H, u)) + " blocks of " + Twine(u) +
                " units need " + Twine(s.H * s.G * u * 4) +
                " bytes of shared memory each (at most " + Twine(opts.sharedBytes) +
                ") and " + Twine(s.B * u) + " threads (at most 1024)");

  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto h0 = rnn::castToLayerType(b, op.getH0(), {s.D, s.B, s.H},
                                 b.getF32Type(), "the initial state", fail);
  auto c0 = rnn::castToLayerType(b, s.hasC0 ? op.getC0() : Value(),
                                 {s.D, s.B, s.H}, b.getF32Type(),
                                 "the initial cell state", fail);
  if (failed(h0) || failed(c0))
    return failure();

  LayerEmitter emitter(module, s, rnn::layerSymbol(op.getLoc(), "__lstm_opt_gpu_"), opts.mapping,
                       persistent, u);
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
    SmallVector<rnn::SequenceOp> layers;
    module.walk([&](rnn::SequenceOp op) { layers.push_back(op); });
    for (rnn::SequenceOp op : layers)
      if (failed(lowerSequence(op, module, opts)))
        return signalPassFailure();
  }
};

} // namespace

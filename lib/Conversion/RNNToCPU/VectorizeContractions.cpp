//===- VectorizeContractions.cpp - register-tiled contractions ------------===//
//
// The rest of a model's multiply-adds (MatMul/Gemm, Conv after im2col) as
// register tiles: each f32 or i32 contraction on buffers whose output's innermost
// dimension is contiguous is tiled to [.., Ti, Tj] output tiles (partial
// tiles peeled into tiles of their own), each tile a loop nest over the
// reductions carrying the accumulator in registers, one FMA of a broadcast
// by a row of Tj lanes per row and step.
// See docs/passes/cpu-vectorize-contractions.md.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include <functional>

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CPUVECTORIZECONTRACTIONSPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMarker = "lstm_opt.vectorize";
constexpr llvm::StringLiteral kParallel = "lstm_opt.parallel_tiles";

/// The plan for one contraction: which loop is the output's contiguous
/// dimension (j), which the next output dimension (i), the tile sizes and
/// the loop order (parallel loops, then i, j, then the reductions).
struct Plan {
  unsigned j = 0;
  std::optional<unsigned> i;
  SmallVector<int64_t> tiles;
  SmallVector<int64_t> interchange;
};

/// Whether `op` is `out += a * b` (f32, or i32: a quantized model's
/// MatMulInteger and ConvInteger) on static buffers, every operand
/// read through a projected permutation, the output's last dimension a
/// parallel loop that the inputs read contiguously (as their last
/// dimension) or not at all; and the plan for it.
std::optional<Plan> planFor(linalg::LinalgOp op, int64_t lanes,
                            int64_t registers) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2)
    return std::nullopt;
  Type elem = cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  if (!elem.isF32() && !elem.isSignlessInteger(32))
    return std::nullopt;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.hasStaticShape() || t.getElementType() != elem ||
        !t.getLayout().isIdentity())
      return std::nullopt;
  }
  bool isFloat = elem.isF32();
  // The body: yield(add(out, mul(a, b))) in any operand order.
  Block &body = op->getRegion(0).front();
  if (body.getOperations().size() != 3)
    return std::nullopt;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  Operation *add = yield ? yield.getOperand(0).getDefiningOp() : nullptr;
  if (!add || !(isFloat ? isa<arith::AddFOp>(add) : isa<arith::AddIOp>(add)))
    return std::nullopt;
  Value acc = body.getArgument(2);
  Value other = add->getOperand(0) == acc   ? add->getOperand(1)
                : add->getOperand(1) == acc ? add->getOperand(0)
                                            : Value();
  Operation *mul = other ? other.getDefiningOp() : nullptr;
  if (!mul || !(isFloat ? isa<arith::MulFOp>(mul) : isa<arith::MulIOp>(mul)))
    return std::nullopt;
  Value m0 = mul->getOperand(0), m1 = mul->getOperand(1);
  if (!((m0 == body.getArgument(0) && m1 == body.getArgument(1)) ||
        (m0 == body.getArgument(1) && m1 == body.getArgument(0))))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap m : maps)
    if (!m.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  SmallVector<utils::IteratorType> its = op.getIteratorTypesArray();
  AffineMap out = maps.back();
  if (out.getNumResults() < 1)
    return std::nullopt;
  Plan p;
  p.j = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  if (its[p.j] != utils::IteratorType::parallel)
    return std::nullopt;
  for (unsigned k = 0; k < 2; ++k) {
    AffineMap m = maps[k];
    bool uses = m.isFunctionOfDim(p.j);
    if (uses && (m.getNumResults() == 0 ||
                 cast<AffineDimExpr>(m.getResults().back()).getPosition() != p.j))
      return std::nullopt;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t tj = 4 * lanes;
  while (tj > lanes && tj > ranges[p.j])
    tj -= lanes;
  if (ranges[p.j] < lanes)
    return std::nullopt;
  if (out.getNumResults() >= 2) {
    unsigned d =
        cast<AffineDimExpr>(out.getResults()[out.getNumResults() - 2]).getPosition();
    if (its[d] == utils::IteratorType::parallel)
      p.i = d;
  }
  // Accumulators: ti rows of tj / lanes registers, plus one broadcast and
  // one row of the other operand.
  int64_t perRow = tj / lanes;
  int64_t ti = p.i ? std::max<int64_t>(1, std::min<int64_t>(
                                              ranges[*p.i], (registers - 2 - perRow) / perRow))
                   : 1;
  ti = std::min<int64_t>(ti, 6);
  unsigned n = its.size();
  p.tiles.assign(n, 1);
  for (unsigned d = 0; d < n; ++d)
    if (its[d] == utils::IteratorType::reduction)
      p.tiles[d] = 0;
  p.tiles[p.j] = tj;
  if (p.i)
    p.tiles[*p.i] = ti;
  for (unsigned d = 0; d < n; ++d)
    if (its[d] == utils::IteratorType::parallel && d != p.j && d != p.i)
      p.interchange.push_back(d);
  if (p.i)
    p.interchange.push_back(*p.i);
  p.interchange.push_back(p.j);
  for (unsigned d = 0; d < n; ++d)
    if (its[d] == utils::IteratorType::reduction)
      p.interchange.push_back(d);
  return p;
}

/// A tile `op` (static shapes: every parallel loop of extent 1 except i
/// (Ti rows) and j (Tj lanes), the reductions whole) as vector code: the
/// [Ti, Tj] accumulator read once, a loop nest over the reductions carrying
/// it (in registers), each step one FMA per row of the row's element of `a`
/// (the input that does not read j), broadcast, by `b`'s Tj contiguous
/// elements; the accumulator written back once.
LogicalResult emitTile(RewriterBase &rewriter, linalg::LinalgOp op) {
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.hasStaticShape())
      return failure();
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> its = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap out = maps.back();
  unsigned j = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  std::optional<unsigned> i;
  SmallVector<unsigned> reds;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    if (its[d] == utils::IteratorType::reduction) {
      reds.push_back(d);
      continue;
    }
    if (d != j && ranges[d] != 1) {
      if (i)
        return failure();
      i = d;
    }
  }
  int64_t ti = i ? ranges[*i] : 1, tj = ranges[j];
  // Which input reads j (b) and which does not (a).
  int bIdx = maps[0].isFunctionOfDim(j) ? 0 : maps[1].isFunctionOfDim(j) ? 1 : -1;
  if (bIdx < 0 || maps[1 - bIdx].isFunctionOfDim(j))
    return failure();
  Value aMem = op.getDpsInputs()[1 - bIdx], bMem = op.getDpsInputs()[bIdx];
  Value outMem = op.getDpsInits()[0];
  AffineMap aMap = maps[1 - bIdx], bMap = maps[bIdx];
  auto posOf = [](AffineMap m, unsigned d) -> std::optional<unsigned> {
    for (unsigned r = 0; r < m.getNumResults(); ++r)
      if (cast<AffineDimExpr>(m.getResult(r)).getPosition() == d)
        return r;
    return std::nullopt;
  };
  std::optional<unsigned> outI = i ? posOf(out, *i) : std::nullopt;
  if (ti != 1 && !outI)
    return failure();
  bool rows = ti != 1;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  // f32 (fused multiply-adds) or i32 (multiply, add: exact in any order).
  Type elem = cast<MemRefType>(outMem.getType()).getElementType();
  bool isFloat = elem.isF32();
  auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = cIdx(rewriter, 0);
  Value pad = arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(elem));
  auto rankOf = [](Value m) { return cast<MemRefType>(m.getType()).getRank(); };
  auto zeros = [&](Value m) { return SmallVector<Value>(rankOf(m), zero); };
  // acc: [ti, tj] (or [tj]) from out's (i, j) dimensions.
  SmallVector<AffineExpr> accExprs;
  if (rows)
    accExprs.push_back(getAffineDimExpr(*outI, ctx));
  accExprs.push_back(getAffineDimExpr(out.getNumResults() - 1, ctx));
  auto accType = rows ? VectorType::get({ti, tj}, elem) : VectorType::get({tj}, elem);
  AffineMap accMap = AffineMap::get(rankOf(outMem), 0, accExprs, ctx);
  SmallVector<bool> inBounds(accExprs.size(), true);
  Value acc = vector::TransferReadOp::create(
      rewriter, loc, accType, outMem, zeros(outMem), AffineMapAttr::get(accMap),
      pad, /*mask=*/Value(), rewriter.getBoolArrayAttr(inBounds));
  auto rowType = VectorType::get({tj}, elem);
  // The indices of an operand at reduction point `ivs` (row r for i).
  auto indices = [&](OpBuilder &b, AffineMap m, ArrayRef<Value> ivs,
                     int64_t r) {
    SmallVector<Value> idx;
    for (AffineExpr e : m.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      auto it = llvm::find(reds, d);
      if (it != reds.end())
        idx.push_back(ivs[it - reds.begin()]);
      else if (i && d == *i)
        idx.push_back(cIdx(b, r));
      else
        idx.push_back(cIdx(b, 0));
    }
    return idx;
  };
  // The step: acc += a[rows] * b[row of tj].
  auto step = [&](OpBuilder &b, ArrayRef<Value> ivs, Value cur) -> Value {
    Value bRow = vector::LoadOp::create(b, loc, rowType, bMem,
                                        indices(b, bMap, ivs, 0));
    for (int64_t r = 0; r < ti; ++r) {
      Value ar = memref::LoadOp::create(b, loc, aMem, indices(b, aMap, ivs, r));
      Value bc = vector::BroadcastOp::create(b, loc, rowType, ar);
      Value row = rows ? vector::ExtractOp::create(b, loc, cur, ArrayRef<int64_t>{r})
                             .getResult()
                       : cur;
      Value fma = isFloat ? vector::FMAOp::create(b, loc, bc, bRow, row).getResult()
                          : arith::AddIOp::create(b, loc, row,
                                                  arith::MulIOp::create(b, loc, bc, bRow))
                                .getResult();
      cur = rows ? vector::InsertOp::create(b, loc, fma, cur, ArrayRef<int64_t>{r})
                       .getResult()
                 : fma;
    }
    return cur;
  };
  // The reduction loops, the accumulator carried.
  std::function<Value(OpBuilder &, unsigned, SmallVector<Value> &, Value)> nest =
      [&](OpBuilder &b, unsigned k, SmallVector<Value> &ivs, Value cur) -> Value {
    if (k == reds.size())
      return step(b, ivs, cur);
    auto loop = scf::ForOp::create(
        b, loc, cIdx(b, 0), cIdx(b, ranges[reds[k]]), cIdx(b, 1), ValueRange{cur},
        [&](OpBuilder &ib, Location, Value iv, ValueRange iter) {
          ivs.push_back(iv);
          Value next = nest(ib, k + 1, ivs, iter[0]);
          ivs.pop_back();
          scf::YieldOp::create(ib, loc, next);
        });
    return loop.getResult(0);
  };
  SmallVector<Value> ivs;
  Value result = nest(rewriter, 0, ivs, acc);
  vector::TransferWriteOp::create(rewriter, loc, result, outMem, zeros(outMem),
                                  AffineMapAttr::get(accMap), Value(),
                                  rewriter.getBoolArrayAttr(inBounds));
  return success();
}

struct CPUVectorizeContractionsPass
    : public lstm_opt::impl::CPUVectorizeContractionsPassBase<
          CPUVectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<std::pair<linalg::LinalgOp, Plan>> work;
    module.walk([&](linalg::LinalgOp op) {
      if (auto p = planFor(op, lanes, registers))
        work.push_back({op, *p});
    });
    IRRewriter rewriter(ctx);
    for (auto &[op, plan] : work) {
      rewriter.setInsertionPoint(op);
      scf::SCFTilingOptions options;
      SmallVector<OpFoldResult> sizes;
      for (int64_t t : plan.tiles)
        sizes.push_back(rewriter.getIndexAttr(t));
      options.setTileSizes(sizes);
      options.setInterchange(plan.interchange);
      auto tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      for (Operation *t : tiled->tiledOps)
        t->setAttr(kMarker, rewriter.getUnitAttr());
      // Enough work for the threads: the outermost tile loop of more than
      // one tile becomes an scf.parallel (OpenMP later), each thread
      // writing its own output tiles.
      int64_t work = 1;
      for (int64_t r : op.getStaticLoopRanges())
        work = work > (int64_t(1) << 40) / std::max<int64_t>(r, 1) ? int64_t(1) << 40
                                                                   : work * r;
      if (parallelMinWork > 0 && work >= parallelMinWork)
        for (LoopLikeOpInterface l : tiled->loops) {
          auto f = dyn_cast<scf::ForOp>(l.getOperation());
          auto lb = f ? getConstantIntValue(f.getLowerBound()) : std::nullopt;
          auto ub = f ? getConstantIntValue(f.getUpperBound()) : std::nullopt;
          auto st = f ? getConstantIntValue(f.getStep()) : std::nullopt;
          if (lb && ub && st && *ub - *lb > *st) {
            f->setAttr(kParallel, rewriter.getUnitAttr());
            break;
          }
        }
      rewriter.eraseOp(op);
    }
    // Peel the partial tile off every tiled loop, the copies peeling
    // creates included (the columns' loop inside the rows' last tile), until
    // every tile loop steps through full tiles only.
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<scf::ForOp> loops;
      module.walk([&](Operation *op) {
        if (!op->hasAttr(kMarker))
          return;
        for (auto f = op->getParentOfType<scf::ForOp>(); f;
             f = f->getParentOfType<scf::ForOp>())
          loops.push_back(f);
      });
      for (scf::ForOp f : loops) {
        // A single tile (what peeling leaves) needs no peeling.
        auto lb = getConstantIntValue(f.getLowerBound()),
             ub = getConstantIntValue(f.getUpperBound()),
             st = getConstantIntValue(f.getStep());
        if (!lb || !ub || !st || *ub - *lb <= *st)
          continue;
        rewriter.setInsertionPoint(f);
        scf::ForOp partial;
        if (succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, f, partial)) &&
            partial) {
          partial->removeAttr(kParallel); // one tile
          changed = true;
          break;
        }
      }
    }
    // Static tile shapes, then the full tiles vectorised.
    {
      RewritePatternSet patterns(ctx);
      for (auto *d : ctx->getLoadedDialects())
        d->getCanonicalizationPatterns(patterns);
      for (RegisteredOperationName n : ctx->getRegisteredOperations())
        n.getCanonicalizationPatterns(patterns, ctx);
      if (failed(applyPatternsGreedily(module, std::move(patterns))))
        return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> marked;
    module.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kMarker))
        marked.push_back(op);
    });
    for (linalg::LinalgOp op : marked) {
      op->removeAttr(kMarker);
      if (succeeded(emitTile(rewriter, op)))
        rewriter.eraseOp(op);
    }
    // The marked tile loops as scf.parallel.
    SmallVector<scf::ForOp> parallel;
    module.walk([&](scf::ForOp f) {
      if (f->hasAttr(kParallel))
        parallel.push_back(f);
    });
    for (scf::ForOp f : parallel) {
      f->removeAttr(kParallel);
      if (f.getNumRegionIterArgs() != 0)
        continue;
      rewriter.setInsertionPoint(f);
      auto par = scf::ParallelOp::create(rewriter, f.getLoc(),
                                         ValueRange{f.getLowerBound()},
                                         ValueRange{f.getUpperBound()},
                                         ValueRange{f.getStep()});
      Block *from = f.getBody(), *to = par.getBody();
      f.getInductionVar().replaceAllUsesWith(par.getInductionVars()[0]);
      to->getOperations().splice(to->begin(), from->getOperations(),
                                 from->begin(), std::prev(from->end()));
      rewriter.eraseOp(f);
    }
  }
};
} // namespace

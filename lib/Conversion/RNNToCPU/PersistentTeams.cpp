//===- PersistentTeams.cpp - one OpenMP team for a whole time loop --------===//
//
// convert-scf-to-openmp turns each parallel hidden-block loop into a team of
// its own, `omp.parallel { omp.wsloop { ... } }`. Inside a layer's time loop
// that forks and joins the team at every step: about 1.2 us with libomp on
// two cores, four times the cost of the barrier the step needs (0.3 us).
//
// Here a sequential `scf.for` whose body holds nothing but such teams and
// ops without memory effects becomes one team around the loop:
//
//   scf.for %s {                       omp.parallel {
//     %cur = arith.remui %s, 2           scf.for %s {
//     omp.parallel {             =>        %cur = arith.remui %s, 2
//       omp.wsloop { blocks(%cur) }        omp.wsloop { blocks(%cur) }
//     }                                  }
//   }                                  }
//
// Every thread runs the loop and computes the same indices; each step's
// work-sharing loop splits the blocks as before, and its implicit barrier
// (the loops never carry `nowait`) keeps a step from starting before the
// previous one is done everywhere. Without a schedule clause the split is
// static: a thread gets the same blocks at every step, so the weights it
// reads stay in its cache. A loop that carries values, writes memory outside
// the work-sharing loops, or whose teams differ in size or carry other
// clauses is left as it is.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CPUPERSISTENTTEAMSPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;

namespace {

/// The work-sharing loop that is all of `team`, when the team has no clause
/// but num_threads and the loop none that would change what a barrier-ended
/// loop inside a wider team means (nowait, reductions, privatisation, ...).
omp::WsloopOp soleLoop(omp::ParallelOp team) {
  if (team.getIfExpr() || team.getProcBindKind() ||
      !team.getPrivateVars().empty() || !team.getReductionVars().empty() ||
      !team.getAllocateVars().empty() || !team.getRegion().hasOneBlock())
    return {};
  Block &body = team.getRegion().front();
  if (body.getNumArguments() != 0 || !llvm::hasNItems(body, 2))
    return {};
  auto loop = dyn_cast<omp::WsloopOp>(body.front());
  if (!loop || !isa<omp::TerminatorOp>(body.back()) || loop.getNowait() ||
      loop.getOrdered() || !loop.getReductionVars().empty() ||
      !loop.getPrivateVars().empty() || !loop.getLinearVars().empty() ||
      !loop.getAllocateVars().empty())
    return {};
  return loop;
}

/// The team size `team` asks for, as something comparable across the teams
/// of one loop body: null for none, a unit attribute for a value defined
/// outside `loop` (the same value for all teams: `outside`), the constant for
/// one defined inside. Fails for a size computed inside the loop.
FailureOr<Attribute> sizeKey(omp::ParallelOp team, scf::ForOp loop,
                             Value &outside) {
  Value n = team.getNumThreads();
  if (!n)
    return Attribute();
  if (!loop->isAncestor(n.getParentRegion()->getParentOp())) {
    if (outside && outside != n)
      return failure();
    outside = n;
    return Attribute(UnitAttr::get(team.getContext()));
  }
  Attribute c;
  if (!matchPattern(n, m_Constant(&c)))
    return failure();
  return c;
}

/// Makes `loop` run inside one team when its body qualifies; returns whether
/// it did.
bool hoist(scf::ForOp loop) {
  if (loop.getNumResults() != 0 || loop->getParentOfType<omp::ParallelOp>())
    return false;
  SmallVector<omp::ParallelOp> teams;
  Value outside;
  std::optional<Attribute> size;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto team = dyn_cast<omp::ParallelOp>(op)) {
      FailureOr<Attribute> key = sizeKey(team, loop, outside);
      if (!soleLoop(team) || failed(key) || (size && *size != *key))
        return false;
      size = *key;
      teams.push_back(team);
      continue;
    }
    if (!isMemoryEffectFree(&op))
      return false;
  }
  if (teams.empty())
    return false;

  // The new team, with the same clauses as the first: its size is the value
  // from outside the loop or a copy of the constant before it.
  OpBuilder b(loop);
  auto team = cast<omp::ParallelOp>(teams.front()->cloneWithoutRegions());
  b.insert(team);
  if (size && *size && !isa<UnitAttr>(*size)) {
    Value n = teams.front().getNumThreads();
    Operation *copy = b.clone(*n.getDefiningOp());
    team->moveAfter(copy);
    team.getNumThreadsMutable().assign(copy->getResult(0));
  }
  Block *body = b.createBlock(&team.getRegion());
  loop->moveBefore(body, body->end());
  b.setInsertionPointToEnd(body);
  omp::TerminatorOp::create(b, loop.getLoc());
  for (omp::ParallelOp inner : teams) {
    soleLoop(inner)->moveBefore(inner);
    inner->erase();
  }
  return true;
}

struct CPUPersistentTeamsPass
    : public lstm_opt::impl::CPUPersistentTeamsPassBase<CPUPersistentTeamsPass> {
  void runOnOperation() override {
    // Innermost loops first: a loop around a hoisted one holds a team that
    // is no longer a sole work-sharing loop, and stays as it is.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      hoist(loop);
  }
};

} // namespace

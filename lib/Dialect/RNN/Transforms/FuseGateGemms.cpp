//===- FuseGateGemms.cpp - one GEMM per shared input ----------------------===//
//
// MatMul(v, B1), MatMul(v, B2), ... with constant B_k (or Gemm with
// transA = 0, alpha = beta = 1 and a constant bias) become
//   Y = MatMul(v, [B1 | B2 | ...]) (+ [b1 | b2 | ...]); Split(Y) on the last axis.
// Every output element is the same dot product as before. Only members
// that agree on having a bias are merged, so no zero is ever added.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/Transforms/Passes.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/IR/Builders.h"

#include <map>

namespace lstm_opt::rnn {
#define GEN_PASS_DEF_RNNFUSEGATEGEMMSPASS
#include "lstm-opt/Dialect/RNN/Transforms/Passes.h.inc"
} // namespace lstm_opt::rnn

using namespace mlir;
using namespace lstm_opt;
namespace od = lstm_opt::onnx;

namespace {

/// One product v x B (+ b) that may join a group.
struct Member {
  Operation *op;
  Value lhs;
  od::F32Tensor weight; ///< [K, N], already transposed for transB
  std::vector<float> bias;  ///< [N] or empty
};

std::optional<Member> asMember(Operation *op) {
  Member m{op, {}, {}, {}};
  Value rhs, c;
  bool transB = false;
  if (auto mm = dyn_cast<od::MatMulOp>(op)) {
    m.lhs = mm.getA();
    rhs = mm.getB();
  } else if (auto g = dyn_cast<od::GemmOp>(op)) {
    if (g.getTransA() || !g.getAlpha().isExactlyValue(1.0) ||
        !g.getBeta().isExactlyValue(1.0))
      return std::nullopt;
    m.lhs = g.getA();
    rhs = g.getB();
    transB = g.getTransB() != 0;
    c = isa<NoneType>(g.getC().getType()) ? Value() : g.getC();
  } else {
    return std::nullopt;
  }
  auto lt = dyn_cast<RankedTensorType>(m.lhs.getType());
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto w = od::getConstantF32(rhs);
  if (!lt || !rt || !lt.getElementType().isF32() || !w || w->shape.size() != 2)
    return std::nullopt;
  int64_t k = w->shape[transB ? 1 : 0], n = w->shape[transB ? 0 : 1];
  m.weight.shape = {k, n};
  m.weight.values.resize(k * n);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      m.weight.values[i * n + j] =
          transB ? w->values[j * k + i] : w->values[i * n + j];
  if (c) {
    auto b = od::getConstantF32(c);
    if (!b || b->numElements() != n || (b->shape.size() == 2 && b->shape[0] != 1))
      return std::nullopt; // a bias per row (or broadcast C) is left alone
    m.bias = b->values;
  }
  return m;
}

struct FuseGateGemms
    : public rnn::impl::RNNFuseGateGemmsPassBase<FuseGateGemms> {
  void runOnOperation() override {
    rnn::forEachGraph(getOperation(),
                      [&](func::FuncOp func) { runOnFunction(func); });
  }

  void runOnFunction(func::FuncOp func) {
    od::ConstantBuilder consts(func);
    // Group by (block, input, has bias, K), in program order: members of
    // one group live in one block (a subgraph's products stay there).
    using Key = std::tuple<const void *, const void *, bool, int64_t>;
    std::map<Key, SmallVector<Member>> groups;
    SmallVector<Key> order;
    func.walk([&](Operation *op) {
      auto m = asMember(op);
      if (!m)
        return;
      auto key = std::make_tuple((const void *)op->getBlock(),
                                 m->lhs.getAsOpaquePointer(), !m->bias.empty(),
                                 m->weight.shape[0]);
      auto &g = groups[key];
      if (g.empty())
        order.push_back(key);
      g.push_back(std::move(*m));
    });
    for (auto &key : order) {
      auto &g = groups[key];
      if (g.size() < 2)
        continue;
      fuse(g, consts);
    }
  }

  void fuse(ArrayRef<Member> group, od::ConstantBuilder &consts) {
    int64_t k = group[0].weight.shape[0], total = 0;
    for (const Member &m : group)
      total += m.weight.shape[1];
    std::vector<float> w(k * total), bias;
    int64_t col = 0;
    for (const Member &m : group) {
      int64_t n = m.weight.shape[1];
      for (int64_t i = 0; i < k; ++i)
        std::copy_n(m.weight.values.begin() + i * n, n,
                    w.begin() + i * total + col);
      bias.insert(bias.end(), m.bias.begin(), m.bias.end());
      col += n;
    }
    // Insert before the first member: its input and the constants dominate.
    Operation *first = group[0].op;
    for (const Member &m : group)
      if (m.op->isBeforeInBlock(first))
        first = m.op;
    SmallVector<Location> locs;
    for (const Member &m : group)
      locs.push_back(m.op->getLoc());
    Location loc = FusedLoc::get(first->getContext(), locs);
    OpBuilder b(first);
    Value lhs = group[0].lhs;
    auto lt = cast<RankedTensorType>(lhs.getType());
    SmallVector<int64_t> shape(lt.getShape());
    shape.back() = total;
    auto yType = RankedTensorType::get(shape, lt.getElementType());
    Value wv = consts.getF32(loc, "fused_gate_W", {k, total}, w);
    Value y = od::MatMulOp::create(b, loc, yType, lhs, wv);
    if (!bias.empty()) {
      Value bv = consts.getF32(loc, "fused_gate_B", {total}, bias);
      y = od::AddOp::create(b, loc, yType, y, bv);
    }
    SmallVector<Type> partTypes;
    SmallVector<int64_t> sizes;
    for (const Member &m : group) {
      partTypes.push_back(m.op->getResult(0).getType());
      sizes.push_back(m.weight.shape[1]);
    }
    int64_t axis = lt.getRank() - 1;
    Value none = od::NoneOp::create(b, loc);
    od::SplitOp split;
    if (od::getDefaultOpset(first) >= 13) {
      Value s = consts.getI64(loc, "split", {(int64_t)sizes.size()}, sizes);
      split = od::SplitOp::create(b, loc, partTypes, y, s, axis, nullptr,
                                  nullptr);
    } else {
      split = od::SplitOp::create(b, loc, partTypes, y, none, axis,
                                  b.getDenseI64ArrayAttr(sizes), nullptr);
    }
    SmallVector<Operation *> dead;
    for (auto [m, part] : llvm::zip(group, split.getResults())) {
      m.op->getResult(0).replaceAllUsesWith(part);
      dead.push_back(m.op);
    }
    od::eraseDeadOps(dead, consts.forgetter());
    numFused += group.size() - 1;
  }
};

} // namespace

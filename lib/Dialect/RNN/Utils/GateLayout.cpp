//===- GateLayout.cpp - gate orders and weight layout conversions ---------===//

#include "lstm-opt/Dialect/RNN/Utils/GateLayout.h"

#include <cassert>

using namespace lstm_opt;
using namespace lstm_opt::rnn;

llvm::ArrayRef<int> rnn::canonicalToONNXGates(CellKind kind) {
  // LSTM canonical i,f,g,o -> ONNX i,o,f,c: i=0, f=2, g(c)=3, o=1.
  static const int lstm[] = {0, 2, 3, 1};
  // GRU canonical r,z,n -> ONNX z,r,h: r=1, z=0, n(h)=2.
  static const int gru[] = {1, 0, 2};
  static const int simple[] = {0};
  switch (kind) {
  case CellKind::LSTM: return lstm;
  case CellKind::GRU: return gru;
  case CellKind::RNN: return simple;
  }
  return {};
}

std::vector<float> rnn::permuteGateBlocks(llvm::ArrayRef<float> data,
                                          int64_t gates, int64_t hidden,
                                          int64_t cols,
                                          llvm::ArrayRef<int> from) {
  assert((int64_t)data.size() == gates * hidden * cols && "bad gate matrix");
  assert((int64_t)from.size() == gates && "bad permutation");
  std::vector<float> out(data.size());
  int64_t block = hidden * cols;
  for (int64_t k = 0; k < gates; ++k)
    std::copy(data.begin() + from[k] * block, data.begin() + (from[k] + 1) * block,
              out.begin() + k * block);
  return out;
}

std::vector<int> rnn::invertPermutation(llvm::ArrayRef<int> perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = (int)i;
  return inv;
}

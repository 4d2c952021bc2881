//===- PrecisionAndChoiceTest.cpp - bf16 error estimate, GPU layer choice -===//
//
// rnn::simulatedBF16Error (the number a bf16 layer's remark gives) and
// cudnn::fasterThanGeneratedKernels (the table --gpu-design=auto applies per
// layer on sm_90).
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCUDNN/RNNToCUDNN.h"
#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace lstm_opt;

namespace {

rnn::LayerShape layer(rnn::CellKind kind, int64_t H, int64_t I, int64_t D = 1,
                      bool lbr = false) {
  rnn::LayerShape s;
  s.kind = kind;
  s.linearBeforeReset = lbr;
  s.T = 12;
  s.B = 2;
  s.I = I;
  s.H = H;
  s.D = D;
  s.G = kind == rnn::CellKind::LSTM ? 4 : kind == rnn::CellKind::GRU ? 3 : 1;
  s.reverse = D == 2 ? llvm::SmallVector<bool>{false, true} : llvm::SmallVector<bool>{false};
  llvm::SmallVector<rnn::Activation> acts =
      kind == rnn::CellKind::LSTM ? llvm::SmallVector<rnn::Activation>{{"sigmoid"}, {"tanh"}, {"tanh"}}
      : kind == rnn::CellKind::GRU ? llvm::SmallVector<rnn::Activation>{{"sigmoid"}, {"tanh"}}
                                   : llvm::SmallVector<rnn::Activation>{{"tanh"}};
  for (int64_t d = 0; d < D; ++d)
    s.acts.push_back(acts);
  return s;
}

std::vector<float> randomValues(size_t n, float scale, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

double errorOf(const rnn::LayerShape &s, float scale, unsigned seed) {
  size_t gh = s.D * s.G * s.H;
  auto w = randomValues(gh * s.I, scale, seed), r = randomValues(gh * s.H, scale, seed + 1),
       bw = randomValues(gh, scale, seed + 2), br = randomValues(gh, scale, seed + 3);
  return rnn::simulatedBF16Error(s, w, r, bw, br, 8, 1);
}

// Weights of zero: every product is exactly zero in both precisions.
TEST(SimulatedBF16Error, ZeroWeightsGiveZero) {
  rnn::LayerShape s = layer(rnn::CellKind::LSTM, 16, 8);
  std::vector<float> w(4 * 16 * 8, 0.f), r(4 * 16 * 16, 0.f), b(4 * 16, 0.5f);
  EXPECT_EQ(rnn::simulatedBF16Error(s, w, r, b, b, 8, 1), 0.0);
}

// bf16 keeps 8 bits of mantissa: on contractive random layers of every kind
// the outputs move by more than nothing and by well under 1e-1; larger
// weights (more amplification) move them more.
TEST(SimulatedBF16Error, EveryCellKindIsSmallButNotZero) {
  for (auto [kind, lbr] : {std::pair{rnn::CellKind::LSTM, false},
                           std::pair{rnn::CellKind::GRU, false},
                           std::pair{rnn::CellKind::GRU, true},
                           std::pair{rnn::CellKind::RNN, false}}) {
    for (int64_t D : {1, 2}) {
      rnn::LayerShape s = layer(kind, 24, 10, D, lbr);
      double e = errorOf(s, 1.f / std::sqrt(24.f), 7);
      SCOPED_TRACE(testing::Message() << "kind " << int(kind) << " lbr " << lbr << " D " << D);
      EXPECT_GT(e, 1e-5);
      EXPECT_LT(e, 1e-1);
    }
  }
}

// Mismatched constants (too short for the shape) are not read past.
TEST(SimulatedBF16Error, ShortConstantsReturnZero) {
  rnn::LayerShape s = layer(rnn::CellKind::LSTM, 16, 8);
  std::vector<float> tooShort(3, 1.f);
  EXPECT_EQ(rnn::simulatedBF16Error(s, tooShort, tooShort, tooShort, tooShort, 8, 1), 0.0);
}

TEST(EvalActivation, MatchesTheONNXDefinitions) {
  EXPECT_FLOAT_EQ(rnn::evalActivation({"sigmoid"}, 0.f), 0.5f);
  EXPECT_FLOAT_EQ(rnn::evalActivation({"tanh"}, 0.5f), std::tanh(0.5f));
  EXPECT_FLOAT_EQ(rnn::evalActivation({"relu"}, -2.f), 0.f);
  EXPECT_FLOAT_EQ(rnn::evalActivation({"hardsigmoid", 0.2f, 0.5f}, 1.f), 0.7f);
  EXPECT_FLOAT_EQ(rnn::evalActivation({"hardsigmoid", 0.2f, 0.5f}, 9.f), 1.f);
  EXPECT_FLOAT_EQ(rnn::evalActivation({"leakyrelu", 0.1f}, -2.f), -0.2f);
  EXPECT_FLOAT_EQ(rnn::evalActivation({"scaledtanh", 2.f, 0.5f}, 1.f), 2.f * std::tanh(0.5f));
  EXPECT_FLOAT_EQ(rnn::evalActivation({"softsign"}, 1.f), 0.5f);
}

// The measured table (H100): cuDNN at batch > 4, H <= 128, batch 1 up to
// H = 512; the generated persistent kernel elsewhere; no table off sm_90.
TEST(FasterThanGeneratedKernels, TheH100Table) {
  std::string why;
  auto cudnnAt = [&](int64_t b, int64_t h) {
    return *cudnn::fasterThanGeneratedKernels("sm_90", b, h, why);
  };
  EXPECT_TRUE(cudnnAt(1, 64));
  EXPECT_TRUE(cudnnAt(4, 64));
  EXPECT_TRUE(cudnnAt(1, 256));
  EXPECT_TRUE(cudnnAt(1, 512));
  EXPECT_TRUE(cudnnAt(64, 512));
  EXPECT_FALSE(cudnnAt(4, 256));
  EXPECT_FALSE(cudnnAt(2, 512));
  EXPECT_FALSE(cudnnAt(1, 1024));
  EXPECT_FALSE(cudnnAt(4, 1024));
  EXPECT_NE(why.find("sm_90 at batch 4, hidden size 1024"), std::string::npos);
  EXPECT_FALSE(cudnn::fasterThanGeneratedKernels("sm_80", 1, 64, why).has_value());
}

} // namespace

// int8 quantization as the kernels do it: symmetric, ties to even, clamped,
// nothing for an all-zero range.
TEST(QuantizeInt8, SymmetricTiesToEvenClamped) {
  EXPECT_EQ(rnn::quantizeInt8(1.f, 1.f), 127);
  EXPECT_EQ(rnn::quantizeInt8(-1.f, 1.f), -127);
  EXPECT_EQ(rnn::quantizeInt8(2.f, 1.f), 127);
  EXPECT_EQ(rnn::quantizeInt8(0.5f / 127.f, 1.f), 0); // 0.5 -> 0 (even)
  EXPECT_EQ(rnn::quantizeInt8(1.5f / 127.f, 1.f), 2); // 1.5 -> 2 (even)
  EXPECT_EQ(rnn::quantizeInt8(0.3f, 0.f), 0);
  EXPECT_FLOAT_EQ(rnn::int8Scale(127.f), 1.f);
}

// int8 keeps ~7 bits per operand: more error than bf16's 8 bits of mantissa
// on the same layers, still well under 1e-1 on contractive random layers.
TEST(SimulatedInt8Error, LargerThanBF16ButSmall) {
  for (auto [kind, lbr] : {std::pair{rnn::CellKind::LSTM, false},
                           std::pair{rnn::CellKind::GRU, false},
                           std::pair{rnn::CellKind::GRU, true},
                           std::pair{rnn::CellKind::RNN, false}}) {
    rnn::LayerShape s = layer(kind, 24, 10, 1, lbr);
    size_t gh = s.D * s.G * s.H;
    float scale = 1.f / std::sqrt(24.f);
    auto w = randomValues(gh * s.I, scale, 3), r = randomValues(gh * s.H, scale, 4),
         bw = randomValues(gh, scale, 5), br = randomValues(gh, scale, 6);
    double e8 = rnn::simulatedPrecisionError(s, rnn::LowPrecision::Int8, w, r, bw, br, 8, 1);
    double e16 = rnn::simulatedPrecisionError(s, rnn::LowPrecision::BF16, w, r, bw, br, 8, 1);
    SCOPED_TRACE(testing::Message() << "kind " << int(kind) << " lbr " << lbr);
    EXPECT_GT(e8, e16);
    EXPECT_LT(e8, 1e-1);
  }
}

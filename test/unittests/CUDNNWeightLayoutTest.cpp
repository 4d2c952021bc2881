//===- CUDNNWeightLayoutTest.cpp - canonical weights -> cuDNN's matrices --===//
//
// lstm_opt_rnn_pack_weights (pure host code, no GPU) against a reference
// written here from the documentation alone: for every (pseudo-layer,
// linLayerID, row, column) the canonical element cuDNN's matrix must hold,
// by cuDNN's meaning of the linLayerID (cudnnGetRNNWeightParams) and the rnn
// dialect's layout (docs/Dialects/RNNRationale.md). The reference table gives
// every (pseudo-layer, linLayerID) its own buffers, as cuDNN's weight space
// gives each its own place.
//
// Also: ONNX's LSTM gate order (i, o, f, c) passed as if canonical scrambles
// the gates; size mismatches are errors; create() validates its input on the
// host; the fp16 conversion the runtime uses rounds to nearest even.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Runtime/CUDNNRuntime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// The reference: what the documentation says
//===----------------------------------------------------------------------===//

/// cuDNN's gate of each linLayerID (cudnnGetRNNWeightParams): LSTM 0-3 and
/// 4-7 are the input and recurrent matrices of i, f, c(g), o; GRU 0-2 and 3-5
/// of r, z, h(n); RNN 0 and 1. Returned in the rnn dialect's names.
std::string cudnnGateOf(int cell, int id) {
  static const char *lstm[] = {"i", "f", "g", "o", "i", "f", "g", "o"};
  static const char *gru[] = {"r", "z", "n", "r", "z", "n"};
  if (cell == LSTM_OPT_RNN_LSTM)
    return lstm[id];
  if (cell == LSTM_OPT_RNN_GRU)
    return gru[id];
  return "h";
}

/// The canonical gate order (RNNRationale.md, "The canonical form").
std::string canonicalOrder(int cell) {
  if (cell == LSTM_OPT_RNN_LSTM)
    return "ifgo";
  if (cell == LSTM_OPT_RNN_GRU)
    return "rzn";
  return "h";
}

int gates(int cell) { return int(canonicalOrder(cell).size()); }

/// Canonical weights whose every element is distinct and exactly
/// representable: the value tells which array and which index it came from.
struct Canonical {
  std::vector<float> W0, Wn, R, Bw, Br;
  explicit Canonical(const lstm_opt_rnn_desc &d) {
    int64_t G = gates(d.cell), D = d.bidirectional ? 2 : 1, L = d.num_layers,
            H = d.hidden_size, I = d.input_size;
    auto fill = [](std::vector<float> &v, int64_t n, float base) {
      v.resize(size_t(n));
      for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = base + float(i);
    };
    fill(W0, D * G * H * I, 10000);
    fill(Wn, (L - 1) * D * G * H * D * H, 20000);
    fill(R, L * D * G * H * H, 30000);
    fill(Bw, L * D * G * H, 40000);
    fill(Br, L * D * G * H, 50000);
  }
  const float *wn() const { return Wn.empty() ? nullptr : Wn.data(); }
};

/// The canonical element cuDNN's (pseudo, id) matrix holds at (row, col), by
/// flat index into the documented shapes W0 [D][G*H][I],
/// Wn [L-1][D][G*H][D*H], R [L][D][G*H][H].
float expectedMatrixElement(const lstm_opt_rnn_desc &d, const Canonical &c,
                            int pseudo, int id, int64_t row, int64_t col) {
  int64_t G = gates(d.cell), D = d.bidirectional ? 2 : 1, H = d.hidden_size,
          I = d.input_size;
  int64_t layer = pseudo / D, dir = pseudo % D;
  bool recurrent = id >= G;
  int64_t gate = int64_t(canonicalOrder(d.cell).find(cudnnGateOf(d.cell, id)));
  int64_t rowInBlock = gate * H + row; // row of [G*H]
  if (recurrent)
    return c.R[size_t(((layer * D + dir) * G * H + rowInBlock) * H + col)];
  if (layer == 0)
    return c.W0[size_t((dir * G * H + rowInBlock) * I + col)];
  return c.Wn[size_t((((layer - 1) * D + dir) * G * H + rowInBlock) * (D * H) +
                     col)];
}

float expectedBiasElement(const lstm_opt_rnn_desc &d, const Canonical &c,
                          int pseudo, int id, int64_t row) {
  int64_t G = gates(d.cell), H = d.hidden_size;
  bool recurrent = id >= G;
  int64_t gate = int64_t(canonicalOrder(d.cell).find(cudnnGateOf(d.cell, id)));
  // Bw/Br [L][D][G*H]: pseudo-layer = layer*D + dir is the [L][D] index.
  size_t index = size_t((pseudo * G + gate) * H + row);
  return recurrent ? c.Br[index] : c.Bw[index];
}

/// The reference table: one matrix and one bias buffer per (pseudo, id),
/// sized as cuDNN sizes them ([H][in], in = I, D*H or H; [H]).
struct Table {
  struct Entry {
    std::vector<float> mat, bias;
    int calls = 0;
  };
  std::map<std::pair<int, int>, Entry> entries;
  std::vector<std::pair<int, int>> order; // the calls, in order
  // Set to perturb the reported sizes of one entry.
  std::pair<int, int> wrong{-1, -1};
  int64_t matDelta = 0, biasDelta = 0;
  bool refuse = false;

  explicit Table(const lstm_opt_rnn_desc &d) {
    int G = gates(d.cell), D = d.bidirectional ? 2 : 1, H = d.hidden_size;
    for (int p = 0; p < d.num_layers * D; ++p)
      for (int id = 0; id < 2 * G; ++id) {
        int64_t cols = id >= G ? H : (p < D ? d.input_size : D * H);
        Entry &e = entries[{p, id}];
        e.mat.assign(size_t(H * cols), std::nanf(""));
        e.bias.assign(size_t(H), std::nanf(""));
      }
  }
  static int dst(void *ctx, int pseudo, int id, float **mat, int64_t *matElems,
                 float **bias, int64_t *biasElems) {
    auto *t = static_cast<Table *>(ctx);
    t->order.push_back({pseudo, id});
    auto it = t->entries.find({pseudo, id});
    if (it == t->entries.end() || t->refuse)
      return 1;
    Entry &e = it->second;
    ++e.calls;
    bool perturb = t->wrong == std::make_pair(pseudo, id);
    *mat = e.mat.data();
    *matElems = int64_t(e.mat.size()) + (perturb ? t->matDelta : 0);
    *bias = e.bias.data();
    *biasElems = int64_t(e.bias.size()) + (perturb ? t->biasDelta : 0);
    return 0;
  }
};

lstm_opt_rnn_desc makeDesc(int cell, int D, int L, int H, int I) {
  lstm_opt_rnn_desc d;
  std::memset(&d, 0, sizeof d);
  d.cell = cell;
  d.bidirectional = D == 2;
  d.num_layers = L;
  d.input_size = I;
  d.hidden_size = H;
  d.seq_len = 3;
  d.batch = 2;
  d.name = "test";
  return d;
}

int pack(const lstm_opt_rnn_desc &d, const Canonical &c, Table &t) {
  return lstm_opt_rnn_pack_weights(&d, c.W0.data(), c.wn(), c.R.data(),
                                   c.Bw.data(), c.Br.data(), &Table::dst, &t);
}

/// Every (pseudo, id, row, col) of `t` against the reference.
void checkAgainstReference(const lstm_opt_rnn_desc &d, const Canonical &c,
                           const Table &t) {
  int G = gates(d.cell), D = d.bidirectional ? 2 : 1;
  int64_t H = d.hidden_size;
  // Called once per entry, pseudo-layers in order, IDs ascending.
  ASSERT_EQ(t.order.size(), t.entries.size());
  size_t k = 0;
  for (int p = 0; p < d.num_layers * D; ++p)
    for (int id = 0; id < 2 * G; ++id, ++k)
      EXPECT_EQ(t.order[k], std::make_pair(p, id));
  for (const auto &[key, e] : t.entries) {
    auto [pseudo, id] = key;
    SCOPED_TRACE("pseudo-layer " + std::to_string(pseudo) + ", linLayerID " +
                 std::to_string(id));
    EXPECT_EQ(e.calls, 1);
    int64_t cols = int64_t(e.mat.size()) / H;
    for (int64_t row = 0; row < H; ++row) {
      for (int64_t col = 0; col < cols; ++col)
        ASSERT_EQ(e.mat[size_t(row * cols + col)],
                  expectedMatrixElement(d, c, pseudo, id, row, col))
            << "matrix row " << row << ", col " << col;
      ASSERT_EQ(e.bias[size_t(row)], expectedBiasElement(d, c, pseudo, id, row))
          << "bias row " << row;
    }
  }
}

void checkCell(int cell) {
  for (int D : {1, 2})
    for (int L : {1, 2, 3})
      for (int H : {1, 3})
        for (int I : {2, 5}) {
          SCOPED_TRACE("D=" + std::to_string(D) + " L=" + std::to_string(L) +
                       " H=" + std::to_string(H) + " I=" + std::to_string(I));
          lstm_opt_rnn_desc d = makeDesc(cell, D, L, H, I);
          Canonical c(d);
          Table t(d);
          ASSERT_EQ(pack(d, c, t), 0);
          checkAgainstReference(d, c, t);
        }
}

TEST(CUDNNWeightLayout, LSTM) { checkCell(LSTM_OPT_RNN_LSTM); }
TEST(CUDNNWeightLayout, GRU) { checkCell(LSTM_OPT_RNN_GRU); }
TEST(CUDNNWeightLayout, RNNTanh) { checkCell(LSTM_OPT_RNN_TANH); }
TEST(CUDNNWeightLayout, RNNRelu) { checkCell(LSTM_OPT_RNN_RELU); }

// The trap: ONNX's LSTM stores its gates as i, o, f, c. Passed as if
// canonical, cuDNN's forget gate gets the output gate's rows, and so on; only
// `i` lands right. Converting with the rationale's table (canonical gate k is
// ONNX block [0, 2, 3, 1][k]) first gives the reference layout.
TEST(CUDNNWeightLayout, ONNXGateOrderIsNotCanonical) {
  const int H = 3, I = 2, G = 4;
  lstm_opt_rnn_desc d = makeDesc(LSTM_OPT_RNN_LSTM, 1, 1, H, I);
  Canonical canonical(d);

  // The same layer as ONNX stores it: block j of W/R/B is gate "iofg"[j].
  const std::string onnxOrder = "iofg", canon = "ifgo";
  Canonical onnx = canonical;
  auto toOnnx = [&](const std::vector<float> &src, std::vector<float> &dst,
                    int64_t blockElems) {
    for (int j = 0; j < G; ++j) {
      int k = int(canon.find(onnxOrder[size_t(j)]));
      std::copy(src.begin() + k * blockElems,
                src.begin() + (k + 1) * blockElems,
                dst.begin() + j * blockElems);
    }
  };
  toOnnx(canonical.W0, onnx.W0, H * I);
  toOnnx(canonical.R, onnx.R, H * H);
  toOnnx(canonical.Bw, onnx.Bw, H);
  toOnnx(canonical.Br, onnx.Br, H);

  Table wrong(d);
  ASSERT_EQ(pack(d, onnx, wrong), 0);
  auto rowsOfGate = [&](const Canonical &c, char gate) {
    int k = int(canon.find(gate));
    return std::vector<float>(c.W0.begin() + k * H * I,
                              c.W0.begin() + (k + 1) * H * I);
  };
  // linLayerID 0 (i) is right by luck; 1 (f) holds o, 2 (g) holds f, 3 (o)
  // holds g.
  auto packed = [&](int id) {
    return wrong.entries[std::make_pair(0, id)].mat;
  };
  EXPECT_EQ(packed(0), rowsOfGate(canonical, 'i'));
  EXPECT_NE(packed(1), rowsOfGate(canonical, 'f'));
  EXPECT_EQ(packed(1), rowsOfGate(canonical, 'o'));
  EXPECT_EQ(packed(2), rowsOfGate(canonical, 'f'));
  EXPECT_EQ(packed(3), rowsOfGate(canonical, 'g'));
  int differing = 0;
  for (int id = 0; id < 2 * G; ++id) {
    const std::vector<float> got = packed(id);
    int64_t cols = int64_t(got.size()) / H;
    bool same = true;
    for (int64_t row = 0; row < H; ++row)
      for (int64_t col = 0; col < cols; ++col)
        same &= got[size_t(row * cols + col)] ==
                expectedMatrixElement(d, canonical, 0, id, row, col);
    differing += !same;
  }
  EXPECT_EQ(differing, 6); // all but i's input and recurrent matrices

  // Converted as docs/Dialects/RNNRationale.md says, it is right.
  const int perm[G] = {0, 2, 3, 1};
  Canonical converted = onnx;
  auto fromOnnx = [&](const std::vector<float> &src, std::vector<float> &dst,
                      int64_t blockElems) {
    for (int k = 0; k < G; ++k)
      std::copy(src.begin() + perm[k] * blockElems,
                src.begin() + (perm[k] + 1) * blockElems,
                dst.begin() + k * blockElems);
  };
  fromOnnx(onnx.W0, converted.W0, H * I);
  fromOnnx(onnx.R, converted.R, H * H);
  fromOnnx(onnx.Bw, converted.Bw, H);
  fromOnnx(onnx.Br, converted.Br, H);
  Table right(d);
  ASSERT_EQ(pack(d, converted, right), 0);
  checkAgainstReference(d, canonical, right);
}

TEST(CUDNNWeightLayout, SizeMismatchIsAnError) {
  // Layer 1's input matrices are [H][D*H]; claim one more element.
  lstm_opt_rnn_desc d = makeDesc(LSTM_OPT_RNN_GRU, 2, 2, 3, 5);
  Canonical c(d);
  {
    Table t(d);
    t.wrong = {2, 1};
    t.matDelta = 1;
    EXPECT_EQ(pack(d, c, t), 2);
  }
  {
    Table t(d);
    t.wrong = {0, 0};
    t.matDelta = -1;
    EXPECT_EQ(pack(d, c, t), 2);
  }
  {
    Table t(d);
    t.wrong = {3, 4};
    t.biasDelta = 1;
    EXPECT_EQ(pack(d, c, t), 3);
  }
  {
    Table t(d);
    t.refuse = true;
    EXPECT_EQ(pack(d, c, t), 4);
  }
  {
    // A description that disagrees with the buffers cuDNN gives: the table is
    // for I = 5, the description says I = 4.
    Table t(d);
    lstm_opt_rnn_desc other = d;
    other.input_size = 4;
    Canonical c4(other);
    EXPECT_EQ(lstm_opt_rnn_pack_weights(&other, c4.W0.data(), c4.wn(),
                                        c4.R.data(), c4.Bw.data(),
                                        c4.Br.data(), &Table::dst, &t),
              2);
  }
  // Invalid descriptions and missing arrays.
  Table t(d);
  lstm_opt_rnn_desc bad = d;
  bad.hidden_size = 0;
  EXPECT_EQ(lstm_opt_rnn_pack_weights(&bad, c.W0.data(), c.wn(), c.R.data(),
                                      c.Bw.data(), c.Br.data(), &Table::dst,
                                      &t),
            1);
  bad = d;
  bad.cell = 7;
  EXPECT_EQ(lstm_opt_rnn_pack_weights(&bad, c.W0.data(), c.wn(), c.R.data(),
                                      c.Bw.data(), c.Br.data(), &Table::dst,
                                      &t),
            1);
  EXPECT_EQ(lstm_opt_rnn_pack_weights(&d, c.W0.data(), nullptr, c.R.data(),
                                      c.Bw.data(), c.Br.data(), &Table::dst,
                                      &t),
            1);
  EXPECT_EQ(lstm_opt_rnn_pack_weights(nullptr, c.W0.data(), c.wn(),
                                      c.R.data(), c.Bw.data(), c.Br.data(),
                                      &Table::dst, &t),
            1);
  EXPECT_TRUE(t.order.empty());
}

// create() checks its input before touching CUDA, so this runs anywhere.
TEST(CUDNNRuntime, CreateValidatesOnTheHost) {
  lstm_opt_rnn_desc d = makeDesc(LSTM_OPT_RNN_LSTM, 1, 2, 3, 2);
  d.name = "/enc/LSTM";
  Canonical c(d);
  char err[512];
  // A failed create sets *out to NULL.
  lstm_opt_rnn *rnn = reinterpret_cast<lstm_opt_rnn *>(uintptr_t(16));
  lstm_opt_rnn_desc bad = d;
  bad.hidden_size = 0;
  EXPECT_NE(lstm_opt_rnn_create(&bad, c.W0.data(), c.wn(), c.R.data(),
                                c.Bw.data(), c.Br.data(), &rnn, err,
                                sizeof err),
            0);
  EXPECT_EQ(rnn, nullptr);
  EXPECT_STREQ(err, "layer '/enc/LSTM': invalid layer description: "
                    "hidden_size is 0, expected at least 1");
  bad = d;
  bad.algo = 4;
  EXPECT_NE(lstm_opt_rnn_create(&bad, c.W0.data(), c.wn(), c.R.data(),
                                c.Bw.data(), c.Br.data(), &rnn, err,
                                sizeof err),
            0);
  EXPECT_STREQ(err, "layer '/enc/LSTM': invalid layer description: algo is 4, "
                    "expected 0 (CUDNN_RNN_ALGO_STANDARD), 1 "
                    "(CUDNN_RNN_ALGO_PERSIST_STATIC), 2 "
                    "(CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H) or 3 (auto)");
  EXPECT_NE(lstm_opt_rnn_create(&d, c.W0.data(), nullptr, c.R.data(),
                                c.Bw.data(), c.Br.data(), &rnn, err,
                                sizeof err),
            0);
  EXPECT_STREQ(err, "layer '/enc/LSTM': the weight array Wn is NULL");
  // A short buffer is truncated and terminated.
  char tiny[8];
  EXPECT_NE(lstm_opt_rnn_create(&bad, c.W0.data(), c.wn(), c.R.data(),
                                c.Bw.data(), c.Br.data(), &rnn, tiny,
                                sizeof tiny),
            0);
  EXPECT_STREQ(tiny, "layer '");
  lstm_opt_rnn_destroy(nullptr); // a no-op
}

//===----------------------------------------------------------------------===//
// fp16 conversion (data_type 1)
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(CUDNNRuntime, HalfRoundTripsEveryHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = lstm_opt_half_to_float(uint16_t(h));
    bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (nan) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      uint16_t back = lstm_opt_float_to_half(f);
      EXPECT_EQ(back & 0x7c00, 0x7c00) << std::hex << h;
      EXPECT_NE(back & 0x3ff, 0) << std::hex << h;
      continue;
    }
    ASSERT_EQ(lstm_opt_float_to_half(f), h) << std::hex << h;
  }
  EXPECT_EQ(lstm_opt_half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(lstm_opt_half_to_float(0xc000), -2.0f);
  EXPECT_EQ(lstm_opt_half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(lstm_opt_half_to_float(0x7bff), 65504.0f);
}

// Between two neighbouring halves a and b: the midpoint goes to the even one,
// anything below it to a, anything above it to b.
TEST(CUDNNRuntime, HalfRoundsToNearestEven) {
  for (uint32_t a = 0; a < 0x7bff; ++a) {
    uint32_t b = a + 1;
    double mid = (double(lstm_opt_half_to_float(uint16_t(a))) +
                  lstm_opt_half_to_float(uint16_t(b))) /
                 2;
    float m = float(mid);
    ASSERT_EQ(double(m), mid); // exact: halves have 11 significant bits
    uint16_t even = uint16_t((a & 1) ? b : a);
    ASSERT_EQ(lstm_opt_float_to_half(m), even) << std::hex << a;
    ASSERT_EQ(lstm_opt_float_to_half(-m), 0x8000 | even) << std::hex << a;
    ASSERT_EQ(lstm_opt_float_to_half(std::nextafter(m, 0.0f)), a)
        << std::hex << a;
    ASSERT_EQ(lstm_opt_float_to_half(std::nextafter(m, 1e9f)), b)
        << std::hex << a;
  }
  // Overflow: 65520 is the midpoint between 65504 and 2^16; 0x7bff is odd.
  EXPECT_EQ(lstm_opt_float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(lstm_opt_float_to_half(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(lstm_opt_float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(lstm_opt_float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(lstm_opt_float_to_half(-1e10f), 0xfc00);
  EXPECT_EQ(lstm_opt_float_to_half(std::numeric_limits<float>::infinity()),
            0x7c00);
  // Underflow: 2^-25 is the midpoint between 0 and the smallest subnormal.
  EXPECT_EQ(lstm_opt_float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(lstm_opt_float_to_half(
                std::nextafter(std::ldexp(1.0f, -25), 1.0f)),
            0x0001);
  EXPECT_EQ(lstm_opt_float_to_half(bitsToFloat(0x00000001)), 0x0000);
  EXPECT_EQ(lstm_opt_float_to_half(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(lstm_opt_half_to_float(
      lstm_opt_float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(
      lstm_opt_half_to_float(lstm_opt_float_to_half(bitsToFloat(0x7f800001)))));
}

// The bulk conversions (F16C where the CPU has it) give the scalar
// functions' bits: every half, and floats of every exponent with random
// mantissas, the rounding ties, the overflow edge, subnormals and NaNs.
TEST(CUDNNRuntime, BulkHalfConversionsMatchTheScalarOnes) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t h = 0; h < 65536; ++h)
    halves[h] = uint16_t(h);
  std::vector<float> floats(halves.size());
  lstm_opt_halves_to_floats(halves.data(), floats.data(), halves.size());
  for (uint32_t h = 0; h < 65536; ++h) {
    float want = lstm_opt_half_to_float(uint16_t(h));
    ASSERT_EQ(std::memcmp(&floats[h], &want, 4), 0) << "half 0x" << std::hex << h;
  }
  std::vector<uint32_t> bits = {0x00000000, 0x80000000, 0x00000001, 0x33000000,
                                0x33000001, 0x387fe000, 0x38800000, 0x477fe000,
                                0x477fefff, 0x477ff000, 0x7f800000, 0xff800000,
                                0x7f800001, 0x7fc00000, 0xffbfffff, 0x3f801000,
                                0x3f803000};
  uint32_t x = 12345;
  for (uint32_t e = 0; e < 256; ++e)
    for (int k = 0; k < 64; ++k) {
      x = x * 1664525u + 1013904223u;
      bits.push_back((e << 23) | (x >> 9) | (k & 1 ? 0x80000000u : 0u));
    }
  std::vector<float> in(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    std::memcpy(&in[i], &bits[i], 4);
  std::vector<uint16_t> out(in.size());
  lstm_opt_floats_to_halves(in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(out[i], lstm_opt_float_to_half(in[i])) << "float bits 0x" << std::hex
                                                     << bits[i];
}

} // namespace

//===- cudnn_device_test.cpp - the cuDNN runtime on a device --------------===//
//
// LstmOptCUDNNDeviceTest: a test program of libLstmOptCUDNNRuntime.
//
//   (no option)          creates LSTM, GRU and RNN layers from random
//                        weights, runs them on the device and compares with a
//                        plain CPU implementation of ONNX's semantics written
//                        here. Prints PASS/FAIL per case; exit 0 if all pass,
//                        1 on a failure, 77 ("SKIPPED") without a device.
//   --probe              exit 0 iff lstm_opt_cuda_device_available(), else 1
//                        (lit's `cuda-device` feature).
//   --no-device-check    needs no device: prints cudnnGetVersion() of the
//                        libcudnn the runtime loaded and the loaded libraries
//                        (/proc/self/maps), and a host-side error; proves the
//                        runtime links and loads the real libcudnn.so.9.
//   --bad-memref         calls the memref entry point with an invalid config:
//                        it must print its message and exit with code 1.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Runtime/CUDNNRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

/// MLIR's strided memref descriptor, as generated code passes it.
template <typename T, int N> struct MemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};

namespace {

//===----------------------------------------------------------------------===//
// The CPU reference: ONNX's LSTM/GRU(linear_before_reset=1)/RNN, stacked
//===----------------------------------------------------------------------===//

struct Model {
  lstm_opt_rnn_desc d;
  std::vector<float> W0, Wn, R, Bw, Br;
  int G() const { return d.cell == 0 ? 4 : d.cell == 1 ? 3 : 1; }
  int D() const { return d.bidirectional ? 2 : 1; }
  const float *wn() const { return Wn.empty() ? nullptr : Wn.data(); }
};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

/// x [T][B][I]; lens [B] or empty; h0/c0 [L*D][B][H] or empty.
/// y [T][D][B][H]; hn/cn [L*D][B][H].
void reference(const Model &m, const std::vector<float> &x,
               const std::vector<int32_t> &lens, const std::vector<float> &h0,
               const std::vector<float> &c0, std::vector<float> &y,
               std::vector<float> &hn, std::vector<float> &cn) {
  const int G = m.G(), D = m.D(), L = m.d.num_layers, H = m.d.hidden_size,
            T = m.d.seq_len, B = m.d.batch;
  std::vector<float> in = x;
  int inSize = m.d.input_size;
  hn.assign(size_t(L * D * B * H), 0.0f);
  cn.assign(size_t(L * D * B * H), 0.0f);
  std::vector<float> out;
  for (int l = 0; l < L; ++l) {
    out.assign(size_t(T * D * B * H), 0.0f);
    for (int d = 0; d < D; ++d) {
      const int ld = l * D + d;
      const float *W = l == 0 ? m.W0.data() + size_t(d * G * H * inSize)
                              : m.Wn.data() +
                                    size_t(((l - 1) * D + d) * G * H * inSize);
      const float *R = m.R.data() + size_t(ld * G * H * H);
      const float *bw = m.Bw.data() + size_t(ld * G * H);
      const float *br = m.Br.data() + size_t(ld * G * H);
      for (int b = 0; b < B; ++b) {
        const int len = lens.empty() ? T : lens[size_t(b)];
        std::vector<double> h(size_t(H), 0.0), c(size_t(H), 0.0);
        for (int j = 0; j < H; ++j) {
          size_t s = size_t((ld * B + b) * H + j);
          if (!h0.empty())
            h[size_t(j)] = h0[s];
          if (!c0.empty())
            c[size_t(j)] = c0[s];
        }
        std::vector<double> gx(size_t(G * H)), gh(size_t(G * H));
        for (int step = 0; step < len; ++step) {
          const int t = d == 0 ? step : len - 1 - step;
          const float *xt = in.data() + size_t((t * B + b) * inSize);
          for (int r = 0; r < G * H; ++r) {
            double sx = bw[r], sh = br[r];
            for (int k = 0; k < inSize; ++k)
              sx += double(W[size_t(r * inSize + k)]) * xt[k];
            for (int k = 0; k < H; ++k)
              sh += double(R[size_t(r * H + k)]) * h[size_t(k)];
            gx[size_t(r)] = sx;
            gh[size_t(r)] = sh;
          }
          for (int j = 0; j < H; ++j) {
            auto pre = [&](int gate) {
              return gx[size_t(gate * H + j)] + gh[size_t(gate * H + j)];
            };
            if (m.d.cell == LSTM_OPT_RNN_LSTM) {
              double i = sigmoid(pre(0)), f = sigmoid(pre(1)),
                     g = std::tanh(pre(2)), o = sigmoid(pre(3));
              c[size_t(j)] = f * c[size_t(j)] + i * g;
              h[size_t(j)] = o * std::tanh(c[size_t(j)]);
            } else if (m.d.cell == LSTM_OPT_RNN_GRU) {
              double r = sigmoid(pre(0)), z = sigmoid(pre(1));
              double n = std::tanh(gx[size_t(2 * H + j)] +
                                   r * gh[size_t(2 * H + j)]);
              h[size_t(j)] = (1 - z) * n + z * h[size_t(j)];
            } else if (m.d.cell == LSTM_OPT_RNN_TANH) {
              h[size_t(j)] = std::tanh(pre(0));
            } else {
              h[size_t(j)] = std::max(0.0, pre(0));
            }
          }
          for (int j = 0; j < H; ++j)
            out[size_t(((t * D + d) * B + b) * H + j)] = float(h[size_t(j)]);
        }
        for (int j = 0; j < H; ++j) {
          hn[size_t((ld * B + b) * H + j)] = float(h[size_t(j)]);
          cn[size_t((ld * B + b) * H + j)] = float(c[size_t(j)]);
        }
      }
    }
    // The next layer reads [T][B][D*H].
    in.assign(size_t(T * B * D * H), 0.0f);
    for (int t = 0; t < T; ++t)
      for (int d = 0; d < D; ++d)
        for (int b = 0; b < B; ++b)
          for (int j = 0; j < H; ++j)
            in[size_t((t * B + b) * D * H + d * H + j)] =
                out[size_t(((t * D + d) * B + b) * H + j)];
    inSize = D * H;
  }
  y = out;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

std::mt19937 rng(20240605);

std::vector<float> random(size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float &f : v)
    f = dist(rng);
  return v;
}

Model makeModel(const char *name, int cell, int D, int L, int I, int H, int T,
                int B, int dataType = 0, int algo = 0) {
  Model m;
  std::memset(&m.d, 0, sizeof m.d);
  m.d.cell = cell;
  m.d.bidirectional = D == 2;
  m.d.num_layers = L;
  m.d.input_size = I;
  m.d.hidden_size = H;
  m.d.seq_len = T;
  m.d.batch = B;
  m.d.data_type = dataType;
  m.d.algo = algo;
  m.d.name = name;
  const size_t G = size_t(m.G());
  const float scale = 1.0f / std::sqrt(float(H));
  m.W0 = random(size_t(D) * G * H * I, scale);
  if (L > 1)
    m.Wn = random(size_t(L - 1) * D * G * H * D * H, scale);
  m.R = random(size_t(L) * D * G * H * H, scale);
  m.Bw = random(size_t(L) * D * G * H, 0.1f);
  m.Br = random(size_t(L) * D * G * H, 0.1f);
  return m;
}

int failures = 0;

double maxAbsDiff(const std::vector<float> &a, const std::vector<float> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, double(std::fabs(a[i] - b[i])));
  return a.size() == b.size() ? m : INFINITY;
}

void report(const std::string &name, double err, double tol) {
  bool ok = err <= tol;
  std::printf("%s %s: max |device - reference| = %.3g (tolerance %.g)\n",
              ok ? "PASS" : "FAIL", name.c_str(), err, tol);
  failures += !ok;
}

/// Runs `m` through lstm_opt_rnn_create/forward and compares y, hn, cn.
/// Returns the create() message on a refusal instead of failing when
/// `mayRefuse`.
std::string runCase(const Model &m, bool withLens, bool withState, double tol,
                    bool mayRefuse = false) {
  const int L = m.d.num_layers, D = m.D(), H = m.d.hidden_size,
            T = m.d.seq_len, B = m.d.batch, I = m.d.input_size;
  const bool lstm = m.d.cell == LSTM_OPT_RNN_LSTM;
  std::vector<float> x = random(size_t(T * B * I), 1.0f);
  std::vector<int32_t> lens;
  if (withLens)
    for (int b = 0; b < B; ++b)
      lens.push_back(b == 0 ? T : 1 + (b * 5) % T); // the first is full
  std::vector<float> h0, c0;
  if (withState) {
    h0 = random(size_t(L * D * B * H), 0.5f);
    if (lstm)
      c0 = random(size_t(L * D * B * H), 0.5f);
  }
  std::vector<float> yRef, hnRef, cnRef;
  reference(m, x, lens, h0, c0, yRef, hnRef, cnRef);

  char err[1024];
  lstm_opt_rnn *rnn = nullptr;
  if (lstm_opt_rnn_create(&m.d, m.W0.data(), m.wn(), m.R.data(), m.Bw.data(),
                          m.Br.data(), &rnn, err, sizeof err)) {
    if (mayRefuse)
      return err;
    std::printf("FAIL %s: create: %s\n", m.d.name, err);
    ++failures;
    return "";
  }
  std::vector<float> y(yRef.size(), NAN), hn(hnRef.size(), NAN),
      cn(cnRef.size(), NAN);
  // Twice: the second call reuses the cached descriptors and workspace.
  for (int call = 0; call < 2; ++call) {
    if (lstm_opt_rnn_forward(rnn, x.data(),
                             lens.empty() ? nullptr : lens.data(),
                             h0.empty() ? nullptr : h0.data(),
                             c0.empty() ? nullptr : c0.data(), y.data(),
                             hn.data(), lstm ? cn.data() : nullptr, err,
                             sizeof err)) {
      lstm_opt_rnn_destroy(rnn);
      if (mayRefuse)
        return err;
      std::printf("FAIL %s: forward: %s\n", m.d.name, err);
      ++failures;
      return "";
    }
  }
  lstm_opt_rnn_destroy(rnn);
  double e = std::max(maxAbsDiff(y, yRef), maxAbsDiff(hn, hnRef));
  if (lstm)
    e = std::max(e, maxAbsDiff(cn, cnRef));
  report(m.d.name, e, tol);
  return "";
}

//===----------------------------------------------------------------------===//
// The memref entry point, called the way MLIR's C interface calls it
//===----------------------------------------------------------------------===//

template <typename T, int N>
MemRef<T, N> memref(T *data, std::initializer_list<int64_t> sizes) {
  MemRef<T, N> m;
  m.allocated = m.aligned = data;
  m.offset = 0;
  std::copy(sizes.begin(), sizes.end(), m.sizes);
  int64_t stride = 1;
  for (int i = N - 1; i >= 0; --i) {
    m.strides[i] = stride;
    stride *= m.sizes[i];
  }
  return m;
}

} // namespace

extern "C" void _mlir_ciface_lstm_opt_rnn_forward_memref(
    MemRef<int64_t, 1> *config, MemRef<int64_t, 1> *state,
    MemRef<float, 1> *W0, MemRef<float, 1> *Wn,
    MemRef<float, 1> *R, MemRef<float, 1> *Bw, MemRef<float, 1> *Br,
    MemRef<float, 3> *x, MemRef<int32_t, 1> *seq_lens, MemRef<float, 3> *h0,
    MemRef<float, 3> *c0, MemRef<float, 4> *y, MemRef<float, 3> *hn,
    MemRef<float, 3> *cn);

namespace {

void memrefCase() {
  Model m = makeModel("lstm-memref-entry", LSTM_OPT_RNN_LSTM, 2, 2, 6, 8, 5, 3);
  const int64_t L = 2, D = 2, G = 4, H = 8, I = 6, T = 5, B = 3;
  std::vector<int64_t> config = {0, 1, L, I, H, T, B, 0, 0, /*layer_id=*/42};
  std::vector<int32_t> lens = {5, 2, 4};
  auto cfg = memref<int64_t, 1>(config.data(), {10});
  int64_t slot = 0; // the layer's state: created by the first call
  auto st = memref<int64_t, 1>(&slot, {1});
  auto w0 = memref<float, 1>(m.W0.data(), {D * G * H * I});
  auto wn = memref<float, 1>(m.Wn.data(), {(L - 1) * D * G * H * D * H});
  auto r = memref<float, 1>(m.R.data(), {L * D * G * H * H});
  auto bw = memref<float, 1>(m.Bw.data(), {L * D * G * H});
  auto br = memref<float, 1>(m.Br.data(), {L * D * G * H});
  auto sl = memref<int32_t, 1>(lens.data(), {B});
  auto none = memref<float, 3>(nullptr, {0, B, H});
  double e = 0;
  // Two calls with different inputs: the second uses the cached layer.
  for (int call = 0; call < 2; ++call) {
    std::vector<float> x = random(size_t(T * B * I), 1.0f);
    std::vector<float> y(size_t(T * D * B * H), NAN), hn(size_t(L * D * B * H)),
        cn(hn.size());
    auto xm = memref<float, 3>(x.data(), {T, B, I});
    auto ym = memref<float, 4>(y.data(), {T, D, B, H});
    auto hnm = memref<float, 3>(hn.data(), {L * D, B, H});
    auto cnm = memref<float, 3>(cn.data(), {L * D, B, H});
    _mlir_ciface_lstm_opt_rnn_forward_memref(&cfg, &st, &w0, &wn, &r, &bw, &br, &xm,
                                             &sl, &none, &none, &ym, &hnm,
                                             &cnm);
    std::vector<float> yRef, hnRef, cnRef;
    reference(m, x, lens, {}, {}, yRef, hnRef, cnRef);
    e = std::max({e, maxAbsDiff(y, yRef), maxAbsDiff(hn, hnRef),
                  maxAbsDiff(cn, cnRef)});
  }
  report(m.d.name, e, 5e-3);
}

int deviceTests() {
  if (!lstm_opt_cuda_device_available()) {
    std::printf("SKIPPED: no usable CUDA device\n");
    return 77;
  }
  // fp32 tolerances allow for TF32 (CUDNN_DEFAULT_MATH may use it on
  // Ampere and later); a gate or layout mistake is off by ~0.1 or more.
  runCase(makeModel("lstm-bidirectional-2-layers-lens-state", 0, 2, 2, 8, 16, 7,
                    3),
          true, true, 5e-3);
  runCase(makeModel("lstm-forward-1-layer", 0, 1, 1, 5, 3, 4, 2), false, false,
          5e-3);
  runCase(makeModel("gru-forward-1-layer-state", 1, 1, 1, 5, 12, 6, 4), false,
          true, 5e-3);
  runCase(makeModel("gru-bidirectional-2-layers-lens", 1, 2, 2, 7, 9, 6, 4),
          true, true, 5e-3);
  runCase(makeModel("rnn-tanh-bidirectional", 2, 2, 1, 4, 6, 5, 3), true, true,
          5e-3);
  runCase(makeModel("rnn-relu-3-layers", 3, 1, 3, 4, 6, 5, 2), false, true,
          5e-3);
  runCase(makeModel("lstm-fp16-2-layers", 0, 1, 2, 16, 32, 5, 2,
                    /*dataType=*/1),
          true, true, 3e-2);
  runCase(makeModel("gru-fp16-bidirectional", 1, 2, 1, 8, 16, 4, 2, 1), false,
          true, 3e-2);
  memrefCase();

  // PERSIST_STATIC: run it if cuDNN takes it, else its refusal must say so.
  std::string refusal =
      runCase(makeModel("lstm-persist-static", 0, 1, 1, 16, 32, 6, 2, 0,
                        /*algo=*/1),
              false, true, 5e-3, /*mayRefuse=*/true);
  if (!refusal.empty()) {
    bool clear = refusal.find("layer 'lstm-persist-static'") == 0 &&
                 refusal.find("persistent") != std::string::npos;
    std::printf("%s lstm-persist-static: refused: %s\n",
                clear ? "PASS" : "FAIL", refusal.c_str());
    failures += !clear;
  }

  // PERSIST_STATIC_SMALL_H, and auto: small-h (H <= 192), persist-static
  // (batch <= 4) or standard, falling back to standard where cuDNN refuses.
  runCase(makeModel("gru-persist-small-h", 1, 1, 1, 16, 64, 6, 3, 0,
                    /*algo=*/2),
          false, true, 5e-3);
  runCase(makeModel("lstm-auto-small-h", 0, 1, 1, 16, 64, 6, 8, 0, 3), false,
          true, 5e-3);
  runCase(makeModel("lstm-auto-persist-static", 0, 1, 1, 32, 256, 5, 2, 0, 3),
          false, true, 5e-3);
  runCase(makeModel("rnn-auto-standard", 2, 2, 2, 8, 512, 4, 8, 0, 3), true,
          true, 5e-3);

  // A run-time error names the layer.
  Model m = makeModel("bad-lens", 0, 1, 1, 3, 4, 3, 2);
  char err[1024];
  lstm_opt_rnn *rnn = nullptr;
  if (lstm_opt_rnn_create(&m.d, m.W0.data(), nullptr, m.R.data(), m.Bw.data(),
                          m.Br.data(), &rnn, err, sizeof err) == 0) {
    std::vector<float> x(3 * 2 * 3, 0.0f), y(3 * 2 * 4), hn(2 * 4);
    int32_t lens[2] = {3, 4};
    int rc = lstm_opt_rnn_forward(rnn, x.data(), lens, nullptr, nullptr,
                                  y.data(), hn.data(), nullptr, err,
                                  sizeof err);
    bool ok = rc != 0 && std::string(err) ==
                             "layer 'bad-lens': sequence_lens[1] is 4, "
                             "expected 1..3 (cuDNN needs at least one step per "
                             "sequence)";
    std::printf("%s bad-lens: %s\n", ok ? "PASS" : "FAIL", err);
    failures += !ok;
    lstm_opt_rnn_destroy(rnn);
  } else {
    std::printf("FAIL bad-lens: create: %s\n", err);
    ++failures;
  }

  if (failures) {
    std::printf("%d device test(s) failed\n", failures);
    return 1;
  }
  std::printf("all device tests passed\n");
  return 0;
}

/// The loaded object whose path contains `name` (from /proc/self/maps).
std::string loaded(const std::string &name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash == std::string::npos)
      continue;
    std::string path = line.substr(slash);
    size_t base = path.rfind('/');
    if (path.compare(base + 1, name.size(), name) == 0)
      return path;
  }
  return "";
}

int linkCheck() {
  size_t v = lstm_opt_cudnn_version();
  std::printf("cuDNN library version %zu (%zu.%zu.%zu)\n", v, v / 10000,
              (v % 10000) / 100, v % 100);
  int rc = v >= 90000 ? 0 : 1;
  for (const char *lib :
       {"libLstmOptCUDNNRuntime.so", "libcudnn.so.", "libcudart.so."}) {
    std::string path = loaded(lib);
    std::printf("loaded %s\n", path.empty() ? "(not found)" : path.c_str());
    rc |= path.empty();
  }
  // Host-side validation, and the message format, on any machine.
  Model m = makeModel("link", 0, 1, 1, 3, 4, 3, 2);
  m.d.batch = 0;
  char err[512];
  lstm_opt_rnn *rnn = nullptr;
  if (lstm_opt_rnn_create(&m.d, m.W0.data(), nullptr, m.R.data(), m.Bw.data(),
                          m.Br.data(), &rnn, err, sizeof err) == 0) {
    std::printf("invalid layer: accepted\n");
    lstm_opt_rnn_destroy(rnn);
    rc = 1;
  } else {
    std::printf("invalid layer: %s\n", err);
  }
  // Informational only: whether a device is usable here.
  std::printf("CUDA device: %s\n",
              lstm_opt_cuda_device_available() ? "yes" : "no");
  return rc;
}

int badMemref() {
  std::vector<int64_t> config = {9, 0, 1, 3, 4, 3, 2, 0, 0, /*layer_id=*/7};
  float dummy = 0;
  int32_t lens = 0;
  auto cfg = memref<int64_t, 1>(config.data(), {10});
  int64_t slot = 0;
  auto st = memref<int64_t, 1>(&slot, {1});
  auto w = memref<float, 1>(&dummy, {1});
  auto s3 = memref<float, 3>(&dummy, {1, 1, 1});
  auto s4 = memref<float, 4>(&dummy, {1, 1, 1, 1});
  auto sl = memref<int32_t, 1>(&lens, {0});
  _mlir_ciface_lstm_opt_rnn_forward_memref(&cfg, &st, &w, &w, &w, &w, &w, &s3, &sl,
                                           &s3, &s3, &s4, &s3, &s3);
  std::printf("returned\n"); // not reached
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--probe")
    return lstm_opt_cuda_device_available() ? 0 : 1;
  if (mode == "--no-device-check")
    return linkCheck();
  if (mode == "--bad-memref")
    return badMemref();
  if (!mode.empty()) {
    std::fprintf(stderr,
                 "usage: %s [--probe | --no-device-check | --bad-memref]\n",
                 argv[0]);
    return 2;
  }
  return deviceTests();
}

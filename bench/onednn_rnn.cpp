// oneDNN's RNN primitive (LSTM, GRU, linear-before-reset GRU) on weights
// given in ONNX layout, for bench/cpu_backend.py.
//
//   onednn_rnn --dir D --cell lstm|gru|lbr_gru --T T --B B --I I --H H [--L L]
//              [--runs N] [--warmup W]
//
// Reads raw little-endian float32 files (C order) from D:
//   x.bin    [T, B, I]          the input sequence (time major)
//   W.bin    [L, G*H, I]        ONNX W per layer, ONNX gate order
//   R.bin    [L, G*H, H]        ONNX R per layer
//   B.bin    [L, 2*G*H]         ONNX B per layer (Wb then Rb)
//   h0.bin   [L, B, H]          initial hidden state per layer
//   c0.bin   [L, B, H]          initial cell state per layer (LSTM only)
// with G = 4 (LSTM, gates i, o, f, c) or 3 (GRU, gates z, r, h). L > 1
// stacks L layers in one primitive, which oneDNN allows only for I == H.
//
// Converts them to oneDNN's logical layouts (weights ldigo with oneDNN's gate
// order: LSTM i, f, c~, o; GRU u, r, o), reorders the weights once into the
// layout the primitive prefers (format any), runs W warm-up inferences and N
// timed ones (forward_inference, one at a time, stream wait included), and
// writes y.bin [T, B, H] (last layer), hn.bin [L, B, H] and, for LSTM,
// cn.bin [L, B, H] into D. Prints key: value lines ending with
// "median_ms: X min_ms: Y". Threads: OMP_NUM_THREADS (oneDNN is built with
// OpenMP in Debian's libdnnl).
//
// Build: g++ -O2 -std=c++17 -fopenmp onednn_rnn.cpp -ldnnl -o onednn_rnn
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

static std::vector<float> readf(const std::string &path, size_t n) {
  std::vector<float> v(n);
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  size_t got = std::fread(v.data(), sizeof(float), n, f);
  char extra;
  bool more = std::fread(&extra, 1, 1, f) == 1;
  std::fclose(f);
  if (got != n || more)
    throw std::runtime_error(path + ": expected " + std::to_string(n) + " floats");
  return v;
}

static void writef(const std::string &path, const float *p, size_t n) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  if (std::fwrite(p, sizeof(float), n, f) != n) throw std::runtime_error("short write " + path);
  std::fclose(f);
}

static void to_mem(const std::vector<float> &v, memory &m) {
  std::memcpy(m.get_data_handle(), v.data(), v.size() * sizeof(float));
}

static const char *isa_name(cpu_isa isa) {
  switch (isa) {
  case cpu_isa::sse41: return "sse41";
  case cpu_isa::avx: return "avx";
  case cpu_isa::avx2: return "avx2";
  case cpu_isa::avx2_vnni: return "avx2_vnni";
  case cpu_isa::avx512_core: return "avx512_core";
  case cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
  case cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
  case cpu_isa::avx512_core_amx: return "avx512_core_amx";
  default: return "other";
  }
}

int main(int argc, char **argv) {
  std::map<std::string, std::string> a{{"L", "1"}, {"runs", "20"}, {"warmup", "3"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0) {
      std::fprintf(stderr, "bad argument %s\n", argv[i]);
      return 2;
    }
    a[argv[i] + 2] = argv[i + 1];
  }
  for (const char *k : {"dir", "cell", "T", "B", "I", "H"})
    if (!a.count(k)) {
      std::fprintf(stderr, "missing --%s\n", k);
      return 2;
    }
  try {
    const std::string dir = a["dir"], cell = a["cell"];
    const memory::dim T = std::stol(a["T"]), B = std::stol(a["B"]), I = std::stol(a["I"]),
                      H = std::stol(a["H"]), L = std::stol(a["L"]);
    const int runs = std::stoi(a["runs"]), warmup = std::stoi(a["warmup"]);
    const bool lstm = cell == "lstm", lbr = cell == "lbr_gru";
    if (!lstm && cell != "gru" && !lbr) throw std::runtime_error("unknown --cell " + cell);
    if (L > 1 && I != H) throw std::runtime_error("oneDNN stacks layers only when I == H");
    const memory::dim G = lstm ? 4 : 3;  // gates
    const memory::dim GB = lbr ? 4 : G;  // bias "gates" (lbr_gru has one more)
    // oneDNN gate g takes ONNX gate perm[g]. LSTM: oneDNN (i, f, c~, o) <-
    // ONNX (i=0, o=1, f=2, c=3). GRU: oneDNN (u, r, o) <- ONNX (z, r, h).
    const int perm_lstm[4] = {0, 2, 3, 1}, perm_gru[3] = {0, 1, 2};
    const int *perm = lstm ? perm_lstm : perm_gru;

    auto W = readf(dir + "/W.bin", L * G * H * I);
    auto R = readf(dir + "/R.bin", L * G * H * H);
    auto Bo = readf(dir + "/B.bin", L * 2 * G * H);
    auto x = readf(dir + "/x.bin", T * B * I);
    auto h0 = readf(dir + "/h0.bin", L * B * H);
    std::vector<float> c0;
    if (lstm) c0 = readf(dir + "/c0.bin", L * B * H);

    // ONNX [l][g*H + o][i] -> ldigo [l][0][i][g][o], gates permuted.
    std::vector<float> wl(L * I * G * H), wi(L * H * G * H), bias(L * GB * H);
    for (memory::dim l = 0; l < L; ++l)
      for (memory::dim g = 0; g < G; ++g)
        for (memory::dim o = 0; o < H; ++o) {
          const memory::dim row = perm[g] * H + o;
          for (memory::dim i = 0; i < I; ++i)
            wl[((l * I + i) * G + g) * H + o] = W[(l * G * H + row) * I + i];
          for (memory::dim i = 0; i < H; ++i)
            wi[((l * H + i) * G + g) * H + o] = R[(l * G * H + row) * H + i];
          const float wb = Bo[l * 2 * G * H + row], rb = Bo[l * 2 * G * H + G * H + row];
          if (lbr && g == 2) {
            // o~ = tanh(W_o x + b_o + r * (U_o h + b_u')): the candidate's
            // recurrent bias stays inside the reset product, as bias gate 3.
            bias[(l * GB + 2) * H + o] = wb;
            bias[(l * GB + 3) * H + o] = rb;
          } else {
            bias[(l * GB + g) * H + o] = wb + rb;
          }
        }

    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    memory::desc src_layer_md({T, B, I}, dt::f32, tag::tnc);
    memory::desc dst_layer_md({T, B, H}, dt::f32, tag::tnc);
    memory::desc iter_md({L, 1, B, H}, dt::f32, tag::ldnc);
    memory::desc wl_user_md({L, 1, I, G, H}, dt::f32, tag::ldigo);
    memory::desc wi_user_md({L, 1, H, G, H}, dt::f32, tag::ldigo);
    memory::desc wl_any({L, 1, I, G, H}, dt::f32, tag::any);
    memory::desc wi_any({L, 1, H, G, H}, dt::f32, tag::any);
    memory::desc bias_md({L, 1, GB, H}, dt::f32, tag::ldgo);
    const auto fwd = prop_kind::forward_inference;
    const auto dir_l2r = rnn_direction::unidirectional_left2right;

    primitive prim;
    memory::desc wl_md, wi_md;
    std::string impl;
    if (lstm) {
      lstm_forward::desc d(fwd, dir_l2r, src_layer_md, iter_md, iter_md, wl_any, wi_any, bias_md,
                           dst_layer_md, iter_md, iter_md);
      lstm_forward::primitive_desc pd(d, eng);
      wl_md = pd.weights_layer_desc();
      wi_md = pd.weights_iter_desc();
      impl = pd.impl_info_str();
      prim = lstm_forward(pd);
    } else if (lbr) {
      lbr_gru_forward::desc d(fwd, dir_l2r, src_layer_md, iter_md, wl_any, wi_any, bias_md,
                              dst_layer_md, iter_md);
      lbr_gru_forward::primitive_desc pd(d, eng);
      wl_md = pd.weights_layer_desc();
      wi_md = pd.weights_iter_desc();
      impl = pd.impl_info_str();
      prim = lbr_gru_forward(pd);
    } else {
      gru_forward::desc d(fwd, dir_l2r, src_layer_md, iter_md, wl_any, wi_any, bias_md,
                          dst_layer_md, iter_md);
      gru_forward::primitive_desc pd(d, eng);
      wl_md = pd.weights_layer_desc();
      wi_md = pd.weights_iter_desc();
      impl = pd.impl_info_str();
      prim = gru_forward(pd);
    }

    memory wl_user(wl_user_md, eng), wi_user(wi_user_md, eng);
    to_mem(wl, wl_user);
    to_mem(wi, wi_user);
    memory wl_mem(wl_md, eng), wi_mem(wi_md, eng);
    reorder(wl_user, wl_mem).execute(s, wl_user, wl_mem);
    reorder(wi_user, wi_mem).execute(s, wi_user, wi_mem);
    s.wait();

    memory src_layer(src_layer_md, eng), dst_layer(dst_layer_md, eng);
    memory src_iter(iter_md, eng), dst_iter(iter_md, eng), bias_mem(bias_md, eng);
    memory src_iter_c(iter_md, eng), dst_iter_c(iter_md, eng);
    to_mem(x, src_layer);
    to_mem(h0, src_iter);
    to_mem(bias, bias_mem);
    if (lstm) to_mem(c0, src_iter_c);

    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC_LAYER, src_layer}, {DNNL_ARG_SRC_ITER, src_iter},
        {DNNL_ARG_WEIGHTS_LAYER, wl_mem}, {DNNL_ARG_WEIGHTS_ITER, wi_mem},
        {DNNL_ARG_BIAS, bias_mem},        {DNNL_ARG_DST_LAYER, dst_layer},
        {DNNL_ARG_DST_ITER, dst_iter}};
    if (lstm) {
      args.insert({DNNL_ARG_SRC_ITER_C, src_iter_c});
      args.insert({DNNL_ARG_DST_ITER_C, dst_iter_c});
    }

    for (int i = 0; i < warmup; ++i) prim.execute(s, args);
    s.wait();
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      prim.execute(s, args);
      s.wait();
      auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    // Outputs of a fresh run (inputs are not modified by execute).
    prim.execute(s, args);
    s.wait();
    writef(dir + "/y.bin", static_cast<float *>(dst_layer.get_data_handle()), T * B * H);
    writef(dir + "/hn.bin", static_cast<float *>(dst_iter.get_data_handle()), L * B * H);
    if (lstm)
      writef(dir + "/cn.bin", static_cast<float *>(dst_iter_c.get_data_handle()), L * B * H);

    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted.empty() ? 0
                    : sorted.size() % 2 ? sorted[sorted.size() / 2]
                                        : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
    const version_t *v = version();
    std::printf("onednn_version: %d.%d.%d (%s)\n", v->major, v->minor, v->patch, v->hash);
    std::printf("isa: %s\n", isa_name(get_effective_cpu_isa()));
    std::printf("threads: %d\n", omp_get_max_threads());
    std::printf("impl: %s\n", impl.c_str());
    std::printf("weights_layer_format: %s\n",
                wl_md.data.format_kind == dnnl_blocked ? "blocked" : "packed/other");
    std::printf("runs_ms:");
    for (double t : ms) std::printf(" %.4f", t);
    std::printf("\nmedian_ms: %.4f min_ms: %.4f\n", median, sorted.empty() ? 0 : sorted[0]);
  } catch (const dnnl::error &e) {
    std::fprintf(stderr, "oneDNN error: %s (status %d)\n", e.what(), int(e.status));
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

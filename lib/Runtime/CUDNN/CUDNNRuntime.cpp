//===- CUDNNRuntime.cpp - the cuDNN runtime of lstm-opt -------------------===//
//
// One recurrent layer stack on cuDNN 9's RNN API (cudnnRNNForward, inference).
// Plain C++17 against the CUDA runtime API: no kernels, so no nvcc. fp16 data
// is converted on the host (round to nearest even) and copied as halves.
//
// Every cuDNN/CUDA status is checked. Failures become one line naming the
// layer, the call and cuDNN's/CUDA's error string:
//   layer '/lstm/LSTM': cudnnSetRNNDescriptor_v8 failed: CUDNN_STATUS_BAD_PARAM (...)
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Runtime/CUDNNRuntime.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

//===----------------------------------------------------------------------===//
// Shapes and validation (host only)
//===----------------------------------------------------------------------===//

int gateCount(int cell) {
  switch (cell) {
  case LSTM_OPT_RNN_LSTM:
    return 4;
  case LSTM_OPT_RNN_GRU:
    return 3;
  default:
    return 1;
  }
}

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string s(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0)
    std::vsnprintf(&s[0], size_t(n) + 1, fmt, args);
  va_end(args);
  return s;
}

void writeError(char *err, size_t errLen, const std::string &msg) {
  if (!err || errLen == 0)
    return;
  size_t n = std::min(msg.size(), errLen - 1);
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

/// The label every message of a layer starts with.
std::string layerLabel(const lstm_opt_rnn_desc *desc) {
  const char *name =
      desc && desc->name && *desc->name ? desc->name : "<unnamed>";
  return std::string("layer '") + name + "'";
}

/// Element counts of the canonical arrays and of the activations.
struct Sizes {
  int64_t G, D, L, I, H, T, B;
  int64_t w0() const { return D * G * H * I; }
  int64_t wn() const { return (L - 1) * D * G * H * D * H; }
  int64_t r() const { return L * D * G * H * H; }
  int64_t bias() const { return L * D * G * H; }
  int64_t x() const { return T * B * I; }
  int64_t y() const { return T * D * B * H; }
  int64_t state() const { return L * D * B * H; }
};

Sizes sizesOf(const lstm_opt_rnn_desc &d) {
  Sizes s;
  s.G = gateCount(d.cell);
  s.D = d.bidirectional ? 2 : 1;
  s.L = d.num_layers;
  s.I = d.input_size;
  s.H = d.hidden_size;
  s.T = d.seq_len;
  s.B = d.batch;
  return s;
}

/// "" if `d` describes a layer stack this runtime can run, else why not.
std::string validateDesc(const lstm_opt_rnn_desc *d) {
  if (!d)
    return "no layer description (NULL)";
  if (d->cell < 0 || d->cell > 3)
    return format("cell is %d, expected 0 (LSTM), 1 (GRU), 2 (RNN tanh) or 3 "
                  "(RNN relu)",
                  d->cell);
  if (d->bidirectional != 0 && d->bidirectional != 1)
    return format("bidirectional is %d, expected 0 or 1", d->bidirectional);
  struct {
    const char *name;
    int32_t value;
  } positive[] = {{"num_layers", d->num_layers}, {"input_size", d->input_size},
                  {"hidden_size", d->hidden_size}, {"seq_len", d->seq_len},
                  {"batch", d->batch}};
  for (auto &p : positive)
    if (p.value < 1)
      return format("%s is %d, expected at least 1", p.name, p.value);
  if (d->data_type != 0 && d->data_type != 1)
    return format("data_type is %d, expected 0 (fp32) or 1 (fp16)",
                  d->data_type);
  if (d->algo < 0 || d->algo > 3)
    return format("algo is %d, expected 0 (CUDNN_RNN_ALGO_STANDARD), 1 "
                  "(CUDNN_RNN_ALGO_PERSIST_STATIC), 2 "
                  "(CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H) or 3 (auto)",
                  d->algo);
  // cuDNN takes sizes as int; keep every buffer well inside what it indexes.
  Sizes s = sizesOf(*d);
  const double limit = double(int64_t(1) << 40);
  double biggest = std::max({double(s.T) * s.B * std::max(s.I, s.D * s.H),
                             double(s.L) * s.D * s.G * s.H *
                                 std::max({s.I, s.D * s.H, s.H}),
                             double(s.L) * s.D * s.B * s.H});
  if (biggest > limit)
    return "the layer is too large (more than 2^40 elements in one buffer)";
  if (int64_t(s.G) * s.H > INT32_MAX || int64_t(s.D) * s.H > INT32_MAX ||
      int64_t(s.L) * s.D > INT32_MAX)
    return "the layer is too large for cuDNN's 32-bit sizes";
  return "";
}

//===----------------------------------------------------------------------===//
// fp16 <-> fp32 on the host
//===----------------------------------------------------------------------===//

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) {
    if (a > 0x7f800000u) // NaN: keep the top payload bits, make it quiet.
      return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    return uint16_t(sign | 0x7c00u);
  }
  // 65520 = 65504 + half an ulp: ties to even round up to infinity.
  if (a >= 0x477ff000u)
    return uint16_t(sign | 0x7c00u);
  if (a < 0x38800000u) { // below 2^-14: a half subnormal or zero
    if (a <= 0x33000000u) // at most 2^-25: rounds to zero (2^-25 is a tie)
      return uint16_t(sign);
    uint32_t exp = a >> 23;                    // 102 .. 112
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;                // 14 .. 24
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u)))
      ++q; // 0x400 is the smallest normal, which is right
    return uint16_t(sign | q);
  }
  uint32_t h = (a - 0x38000000u) >> 13; // rebias 127 -> 15, keep 10 bits
  uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h; // a carry into the exponent is right; overflow was handled above
  return uint16_t(sign | h);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) { // infinity, or a NaN made quiet (as F16C does)
    bits = sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --e;
      }
      mant &= 0x3ffu;
      bits = sign | (uint32_t(e + 112) << 23) | (mant << 13);
    }
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The bulk conversions of activations (every call of an fp16 layer): F16C's
// vcvtps2ph / vcvtph2ps where the CPU has it (8 values an instruction, the
// same bits as the scalar functions: round to nearest even, NaNs kept quiet),
// else the scalar functions.
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void floatsToHalvesF16C(const float *in,
                                                            uint16_t *out,
                                                            size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i),
                                     _MM_FROUND_TO_NEAREST_INT |
                                         _MM_FROUND_NO_EXC));
  for (; i < n; ++i)
    out[i] = floatToHalf(in[i]);
}

__attribute__((target("avx,f16c"))) void halvesToFloatsF16C(const uint16_t *in,
                                                            float *out,
                                                            size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(
                         reinterpret_cast<const __m128i *>(in + i))));
  for (; i < n; ++i)
    out[i] = halfToFloat(in[i]);
}

bool haveF16C() {
  static const bool yes =
      __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
#endif

void floatsToHalves(const float *in, uint16_t *out, size_t n) {
#if defined(__x86_64__)
  if (haveF16C())
    return floatsToHalvesF16C(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i)
    out[i] = floatToHalf(in[i]);
}

void halvesToFloats(const uint16_t *in, float *out, size_t n) {
#if defined(__x86_64__)
  if (haveF16C())
    return halvesToFloatsF16C(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i)
    out[i] = halfToFloat(in[i]);
}

//===----------------------------------------------------------------------===//
// Error strings
//===----------------------------------------------------------------------===//

std::string cudnnStatusText(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
#if CUDNN_MAJOR >= 9
  char detail[1024];
  detail[0] = '\0';
  cudnnGetLastErrorString(detail, sizeof detail);
  if (detail[0])
    text += std::string(" (") + detail + ")";
#endif
  return text;
}

std::string cudaErrorText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" +
         cudaGetErrorString(error) + ")";
}

} // namespace

//===----------------------------------------------------------------------===//
// The layer object
//===----------------------------------------------------------------------===//

struct lstm_opt_rnn {
  lstm_opt_rnn_desc desc{};
  std::string name;  // owned copy of desc.name
  std::string label; // "layer 'name'" or "layer 3": what messages start with
  Sizes s{};
  bool half = false;
  size_t elemSize = 4;
  cudnnDataType_t dataType = CUDNN_DATA_FLOAT;

  cudaStream_t stream = nullptr;
  cudnnHandle_t handle = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDescriptor_t rnnDesc = nullptr;
  cudnnRNNDataDescriptor_t xDesc = nullptr, yDesc = nullptr;
  cudnnTensorDescriptor_t hDesc = nullptr;

  void *weights = nullptr;
  size_t weightBytes = 0;
  void *work = nullptr;
  size_t workBytes = 0;
  void *reserve = nullptr;
  size_t reserveBytes = 0;
  void *dX = nullptr, *dY = nullptr, *dHx = nullptr, *dCx = nullptr,
       *dHy = nullptr, *dCy = nullptr;
  int32_t *dSeqLens = nullptr;

  /// The lengths the data descriptors and dSeqLens currently hold.
  std::vector<int32_t> seqLens;
  /// Host staging (fp16 conversion, y transposition); reused across calls.
  std::vector<uint16_t> halfIn, halfH, halfC, halfOut;
  std::vector<float> floatOut;
  std::mutex mutex;
  /// The message of the last failure (set by the fail* helpers).
  std::string error;

  int fail(const std::string &what) {
    error = label + ": " + what;
    return 1;
  }
  int failCuda(const char *call, cudaError_t e) {
    cudaGetLastError(); // clear a non-sticky error
    return fail(std::string(call) + " failed: " + cudaErrorText(e));
  }
  int failCudnn(const char *call, cudnnStatus_t st) {
    std::string msg = std::string(call) + " failed: " + cudnnStatusText(st);
    int category = int(st) / 1000;
    if ((desc.algo == 1 || desc.algo == 2) && (category == 2 || category == 3))
      msg += "; the persistent algorithms (algo 1, 2) work only for small "
             "batches and hidden sizes on a given GPU: use algo 0 "
             "(CUDNN_RNN_ALGO_STANDARD) or 3 (auto)";
    return fail(msg);
  }
};

// Checked calls: `CUDA_CALL(cudaMalloc, &p, n)` returns from the enclosing
// function with rnn->failCuda("cudaMalloc", status) on an error. The message
// names the API function, never a source file.
#define LSTM_OPT_CUDA_CALL(rnn, fn, ...)                                       \
  do {                                                                         \
    cudaError_t status_ = fn(__VA_ARGS__);                                     \
    if (status_ != cudaSuccess)                                                \
      return (rnn)->failCuda(#fn, status_);                                    \
  } while (0)
#define LSTM_OPT_CUDNN_CALL(rnn, fn, ...)                                      \
  do {                                                                         \
    cudnnStatus_t status_ = fn(__VA_ARGS__);                                   \
    if (status_ != CUDNN_STATUS_SUCCESS)                                       \
      return (rnn)->failCudnn(#fn, status_);                                   \
  } while (0)

namespace {

void destroyLayer(lstm_opt_rnn *rnn) {
  if (!rnn)
    return;
  // Errors are ignored: there is nothing left to report them to.
  if (rnn->stream)
    cudaStreamSynchronize(rnn->stream);
  for (void *p : {rnn->weights, rnn->work, rnn->reserve, rnn->dX, rnn->dY,
                  rnn->dHx, rnn->dCx, rnn->dHy, rnn->dCy,
                  static_cast<void *>(rnn->dSeqLens)})
    if (p)
      cudaFree(p);
  if (rnn->hDesc)
    cudnnDestroyTensorDescriptor(rnn->hDesc);
  if (rnn->xDesc)
    cudnnDestroyRNNDataDescriptor(rnn->xDesc);
  if (rnn->yDesc)
    cudnnDestroyRNNDataDescriptor(rnn->yDesc);
  if (rnn->rnnDesc)
    cudnnDestroyRNNDescriptor(rnn->rnnDesc);
  if (rnn->dropout)
    cudnnDestroyDropoutDescriptor(rnn->dropout);
  if (rnn->handle)
    cudnnDestroy(rnn->handle);
  if (rnn->stream)
    cudaStreamDestroy(rnn->stream);
  cudaGetLastError();
  delete rnn;
}

/// Sets the x/y data descriptors for `lens`, copies `lens` to the device and
/// makes sure the workspace is large enough.
int setSequenceLengths(lstm_opt_rnn *rnn, const std::vector<int32_t> &lens) {
  const Sizes &s = rnn->s;
  double zero = 0.0; // paddingFill: zero bits in any data type
  LSTM_OPT_CUDNN_CALL(rnn, cudnnSetRNNDataDescriptor, rnn->xDesc, rnn->dataType,
                      CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, int(s.T),
                      int(s.B), int(s.I), lens.data(), &zero);
  LSTM_OPT_CUDNN_CALL(rnn, cudnnSetRNNDataDescriptor, rnn->yDesc, rnn->dataType,
                      CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, int(s.T),
                      int(s.B), int(s.D * s.H), lens.data(), &zero);
  LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, rnn->dSeqLens, lens.data(),
                     lens.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                     rnn->stream);
  size_t workBytes = 0, reserveBytes = 0;
  LSTM_OPT_CUDNN_CALL(rnn, cudnnGetRNNTempSpaceSizes, rnn->handle, rnn->rnnDesc,
                      CUDNN_FWD_MODE_INFERENCE, rnn->xDesc, &workBytes,
                      &reserveBytes);
  if (workBytes > rnn->workBytes || reserveBytes > rnn->reserveBytes) {
    // The stream may still read the old buffers.
    LSTM_OPT_CUDA_CALL(rnn, cudaStreamSynchronize, rnn->stream);
    if (workBytes > rnn->workBytes) {
      if (rnn->work)
        cudaFree(rnn->work);
      rnn->work = nullptr;
      rnn->workBytes = 0;
      LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->work, workBytes);
      rnn->workBytes = workBytes;
    }
    if (reserveBytes > rnn->reserveBytes) {
      if (rnn->reserve)
        cudaFree(rnn->reserve);
      rnn->reserve = nullptr;
      rnn->reserveBytes = 0;
      LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->reserve, reserveBytes);
      rnn->reserveBytes = reserveBytes;
    }
  }
  rnn->seqLens = lens;
  return 0;
}

/// What the weight-packing callback needs in production: the weight space,
/// a zeroed host image of it, and the last request (for messages).
struct WeightSpaceCtx {
  lstm_opt_rnn *rnn = nullptr;
  float *image = nullptr; // weightBytes / elemSize floats
  size_t imageElems = 0;
  cudnnTensorDescriptor_t mDesc = nullptr, bDesc = nullptr;
  int pseudoLayer = -1, linLayerID = -1;
  int64_t matElems = -1, biasElems = -1;
  std::string error;
};

int64_t tensorElems(cudnnTensorDescriptor_t desc, cudnnStatus_t &status) {
  cudnnDataType_t type;
  int nbDims = 0;
  int dims[8], strides[8];
  status = cudnnGetTensorNdDescriptor(desc, 8, &type, &nbDims, dims, strides);
  if (status != CUDNN_STATUS_SUCCESS)
    return -1;
  int64_t n = 1;
  for (int i = 0; i < nbDims; ++i)
    n *= dims[i];
  return n;
}

/// lstm_opt_weight_dst_fn over cuDNN's weight space: asks
/// cudnnGetRNNWeightParams where (pseudo_layer, id) lives on the device and
/// returns the same offset in the host image.
int weightSpaceDst(void *opaque, int pseudoLayer, int linLayerID, float **mat,
                   int64_t *matElems, float **bias, int64_t *biasElems) {
  auto *c = static_cast<WeightSpaceCtx *>(opaque);
  lstm_opt_rnn *rnn = c->rnn;
  c->pseudoLayer = pseudoLayer;
  c->linLayerID = linLayerID;
  c->matElems = c->biasElems = -1;
  void *mAddr = nullptr, *bAddr = nullptr;
  cudnnStatus_t st = cudnnGetRNNWeightParams(
      rnn->handle, rnn->rnnDesc, pseudoLayer, rnn->weightBytes, rnn->weights,
      linLayerID, c->mDesc, &mAddr, c->bDesc, &bAddr);
  if (st != CUDNN_STATUS_SUCCESS) {
    rnn->failCudnn("cudnnGetRNNWeightParams", st);
    c->error = rnn->error;
    return 1;
  }
  auto place = [&](void *addr, cudnnTensorDescriptor_t desc, float **out,
                   int64_t *elems, const char *what) -> bool {
    if (!addr) {
      c->error = rnn->label + format(": cuDNN has no %s for pseudo-layer %d, "
                                     "linLayerID %d",
                                     what, pseudoLayer, linLayerID);
      return false;
    }
    cudnnStatus_t s2;
    int64_t n = tensorElems(desc, s2);
    if (s2 != CUDNN_STATUS_SUCCESS) {
      rnn->failCudnn("cudnnGetTensorNdDescriptor", s2);
      c->error = rnn->error;
      return false;
    }
    ptrdiff_t bytes = static_cast<char *>(addr) -
                      static_cast<char *>(rnn->weights);
    if (bytes < 0 || size_t(bytes) % rnn->elemSize != 0 ||
        size_t(bytes) / rnn->elemSize + size_t(n) > c->imageElems) {
      c->error = rnn->label +
                 format(": cudnnGetRNNWeightParams returned a %s outside the "
                        "weight space (pseudo-layer %d, linLayerID %d)",
                        what, pseudoLayer, linLayerID);
      return false;
    }
    *out = c->image + size_t(bytes) / rnn->elemSize;
    *elems = n;
    return true;
  };
  if (!place(mAddr, c->mDesc, mat, matElems, "matrix") ||
      !place(bAddr, c->bDesc, bias, biasElems, "bias"))
    return 1;
  c->matElems = *matElems;
  c->biasElems = *biasElems;
  return 0;
}

int buildLayer(lstm_opt_rnn *rnn, const float *W0, const float *Wn,
               const float *R, const float *Bw, const float *Br) {
  const Sizes &s = rnn->s;
  const lstm_opt_rnn_desc &d = rnn->desc;

  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return rnn->fail("no usable CUDA device: cudaGetDeviceCount failed: " +
                     cudaErrorText(e));
  }
  if (count < 1)
    return rnn->fail("no CUDA device");

  LSTM_OPT_CUDA_CALL(rnn, cudaStreamCreateWithFlags, &rnn->stream,
                     cudaStreamNonBlocking);
  LSTM_OPT_CUDNN_CALL(rnn, cudnnCreate, &rnn->handle);
  LSTM_OPT_CUDNN_CALL(rnn, cudnnSetStream, rnn->handle, rnn->stream);

  // No dropout (inference), but a set descriptor, as cuDNN expects one.
  LSTM_OPT_CUDNN_CALL(rnn, cudnnCreateDropoutDescriptor, &rnn->dropout);
  LSTM_OPT_CUDNN_CALL(rnn, cudnnSetDropoutDescriptor, rnn->dropout, rnn->handle,
                      0.0f, nullptr, 0, 0);

  static const cudnnRNNMode_t modes[] = {CUDNN_LSTM, CUDNN_GRU, CUDNN_RNN_TANH,
                                         CUDNN_RNN_RELU};
  LSTM_OPT_CUDNN_CALL(rnn, cudnnCreateRNNDescriptor, &rnn->rnnDesc);
  LSTM_OPT_CUDNN_CALL(
      rnn, cudnnSetRNNDescriptor_v8, rnn->rnnDesc,
      d.algo == 1   ? CUDNN_RNN_ALGO_PERSIST_STATIC
      : d.algo == 2 ? CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H
                    : CUDNN_RNN_ALGO_STANDARD,
      modes[d.cell], CUDNN_RNN_DOUBLE_BIAS,
      d.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
      CUDNN_LINEAR_INPUT, rnn->dataType, /*mathPrec=*/CUDNN_DATA_FLOAT,
      rnn->half ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH, int(s.I),
      int(s.H), /*projSize=*/int(s.H), int(s.L), rnn->dropout,
      CUDNN_RNN_PADDED_IO_ENABLED);

  LSTM_OPT_CUDNN_CALL(rnn, cudnnCreateRNNDataDescriptor, &rnn->xDesc);
  LSTM_OPT_CUDNN_CALL(rnn, cudnnCreateRNNDataDescriptor, &rnn->yDesc);
  LSTM_OPT_CUDNN_CALL(rnn, cudnnCreateTensorDescriptor, &rnn->hDesc);
  int dims[3] = {int(s.L * s.D), int(s.B), int(s.H)};
  int strides[3] = {int(s.B * s.H), int(s.H), 1};
  LSTM_OPT_CUDNN_CALL(rnn, cudnnSetTensorNdDescriptor, rnn->hDesc,
                      rnn->dataType, 3, dims, strides);

  // Activations and states, allocated once for T and B.
  const size_t es = rnn->elemSize;
  LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->dX, size_t(s.x()) * es);
  LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->dY, size_t(s.y()) * es);
  LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->dHx, size_t(s.state()) * es);
  LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->dHy, size_t(s.state()) * es);
  if (d.cell == LSTM_OPT_RNN_LSTM) {
    LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->dCx, size_t(s.state()) * es);
    LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->dCy, size_t(s.state()) * es);
  }
  LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, reinterpret_cast<void **>(&rnn->dSeqLens),
                     size_t(s.B) * sizeof(int32_t));
  if (setSequenceLengths(rnn, std::vector<int32_t>(size_t(s.B), int32_t(s.T))))
    return 1;

  // The weight space, filled once from a host image of it.
  LSTM_OPT_CUDNN_CALL(rnn, cudnnGetRNNWeightSpaceSize, rnn->handle,
                      rnn->rnnDesc, &rnn->weightBytes);
  LSTM_OPT_CUDA_CALL(rnn, cudaMalloc, &rnn->weights, rnn->weightBytes);
  std::vector<float> image(rnn->weightBytes / es, 0.0f);
  WeightSpaceCtx ctx;
  ctx.rnn = rnn;
  ctx.image = image.data();
  ctx.imageElems = image.size();
  cudnnStatus_t st = cudnnCreateTensorDescriptor(&ctx.mDesc);
  if (st == CUDNN_STATUS_SUCCESS)
    st = cudnnCreateTensorDescriptor(&ctx.bDesc);
  int packed = 0;
  if (st == CUDNN_STATUS_SUCCESS)
    packed = lstm_opt_rnn_pack_weights(&rnn->desc, W0, Wn, R, Bw, Br,
                                       weightSpaceDst, &ctx);
  if (ctx.mDesc)
    cudnnDestroyTensorDescriptor(ctx.mDesc);
  if (ctx.bDesc)
    cudnnDestroyTensorDescriptor(ctx.bDesc);
  if (st != CUDNN_STATUS_SUCCESS)
    return rnn->failCudnn("cudnnCreateTensorDescriptor", st);
  if (packed != 0) {
    if (!ctx.error.empty()) {
      rnn->error = ctx.error;
      return 1;
    }
    bool rec = ctx.linLayerID >= s.G;
    int64_t in = rec ? s.H : (ctx.pseudoLayer < s.D ? s.I : s.D * s.H);
    if (packed == 2)
      return rnn->fail(format(
          "cuDNN's weight matrix for pseudo-layer %d, linLayerID %d has %lld "
          "elements, the canonical layout gives %lld (%lld x %lld)",
          ctx.pseudoLayer, ctx.linLayerID, (long long)ctx.matElems,
          (long long)(s.H * in), (long long)s.H, (long long)in));
    if (packed == 3)
      return rnn->fail(format("cuDNN's bias for pseudo-layer %d, linLayerID %d "
                              "has %lld elements, expected %lld",
                              ctx.pseudoLayer, ctx.linLayerID,
                              (long long)ctx.biasElems, (long long)s.H));
    return rnn->fail(format("packing the weights failed (status %d)", packed));
  }
  if (rnn->half) {
    std::vector<uint16_t> halves(image.size());
    floatsToHalves(image.data(), halves.data(), image.size());
    LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, rnn->weights, halves.data(),
                       halves.size() * 2, cudaMemcpyHostToDevice, rnn->stream);
    LSTM_OPT_CUDA_CALL(rnn, cudaStreamSynchronize, rnn->stream);
  } else {
    LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, rnn->weights, image.data(),
                       image.size() * 4, cudaMemcpyHostToDevice, rnn->stream);
    LSTM_OPT_CUDA_CALL(rnn, cudaStreamSynchronize, rnn->stream);
  }
  return 0;
}

/// Copies `n` floats from the host to `dev`, as halves through `stage` when
/// the layer is fp16.
int copyIn(lstm_opt_rnn *rnn, void *dev, const float *host, int64_t n,
           std::vector<uint16_t> &stage) {
  if (!rnn->half) {
    LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, dev, host, size_t(n) * 4,
                       cudaMemcpyHostToDevice, rnn->stream);
    return 0;
  }
  stage.resize(size_t(n));
  floatsToHalves(host, stage.data(), size_t(n));
  LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, dev, stage.data(), size_t(n) * 2,
                     cudaMemcpyHostToDevice, rnn->stream);
  return 0;
}

/// algo 3 (auto) for `d`, from measurements on an H100 (bench/gpu_vs_torch.py,
/// docs/passes/convert-rnn-to-cudnn.md) and the thresholds PyTorch uses for
/// the small-h kernel: the persistent kernels win by 3-10x where they apply.
int32_t autoAlgo(const lstm_opt_rnn_desc &d) {
  bool gated = d.cell == LSTM_OPT_RNN_LSTM || d.cell == LSTM_OPT_RNN_GRU;
  if (d.hidden_size <= (gated ? 192 : 384))
    return 2;
  return d.batch <= 4 ? 1 : 0;
}

/// A layer for the (validated, resolved) description `d`, or an error.
int buildOrDiscard(const lstm_opt_rnn_desc &d, const std::string &label,
                   const float *W0, const float *Wn, const float *R,
                   const float *Bw, const float *Br, lstm_opt_rnn **out,
                   std::string &error) {
  auto *rnn = new lstm_opt_rnn();
  rnn->desc = d;
  rnn->name = d.name ? d.name : "";
  rnn->desc.name = rnn->name.c_str();
  rnn->label = label;
  rnn->s = sizesOf(d);
  rnn->half = d.data_type == 1;
  rnn->elemSize = rnn->half ? 2 : 4;
  rnn->dataType = rnn->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  if (buildLayer(rnn, W0, Wn, R, Bw, Br)) {
    error = rnn->error;
    destroyLayer(rnn);
    return 1;
  }
  *out = rnn;
  return 0;
}

int createLayer(const lstm_opt_rnn_desc *desc, const std::string &label,
                const float *W0, const float *Wn, const float *R,
                const float *Bw, const float *Br, lstm_opt_rnn **out,
                std::string &error) {
  if (out)
    *out = nullptr;
  std::string invalid = validateDesc(desc);
  if (!invalid.empty()) {
    error = label + ": invalid layer description: " + invalid;
    return 1;
  }
  if (!out) {
    error = label + ": no place for the result (out is NULL)";
    return 1;
  }
  const char *missing = !W0                            ? "W0"
                        : !R                           ? "R"
                        : !Bw                          ? "Bw"
                        : !Br                          ? "Br"
                        : (desc->num_layers > 1 && !Wn) ? "Wn"
                                                        : nullptr;
  if (missing) {
    error = label + ": the weight array " + missing + " is NULL";
    return 1;
  }
  lstm_opt_rnn_desc d = *desc;
  if (d.algo == 3)
    d.algo = autoAlgo(d);
  int status = buildOrDiscard(d, label, W0, Wn, R, Bw, Br, out, error);
  if (status && desc->algo == 3 && d.algo != 0) {
    // cuDNN refused the persistent choice on this GPU: the standard one.
    d.algo = 0;
    status = buildOrDiscard(d, label, W0, Wn, R, Bw, Br, out, error);
  }
  return status;
}

int forwardLayer(lstm_opt_rnn *rnn, const float *x, const int32_t *seqLens,
                 const float *h0, const float *c0, float *y, float *hn,
                 float *cn) {
  const Sizes &s = rnn->s;
  const bool lstm = rnn->desc.cell == LSTM_OPT_RNN_LSTM;
  if (!x || !y)
    return rnn->fail(!x ? "x is NULL" : "y is NULL");

  std::vector<int32_t> lens(size_t(s.B), int32_t(s.T));
  if (seqLens) {
    for (int64_t b = 0; b < s.B; ++b) {
      if (seqLens[b] < 1 || seqLens[b] > s.T)
        return rnn->fail(format("sequence_lens[%lld] is %d, expected 1..%lld "
                                "(cuDNN needs at least one step per sequence)",
                                (long long)b, seqLens[b], (long long)s.T));
      lens[size_t(b)] = seqLens[b];
    }
  }
  if (lens != rnn->seqLens && setSequenceLengths(rnn, lens))
    return 1;

  if (copyIn(rnn, rnn->dX, x, s.x(), rnn->halfIn))
    return 1;
  const void *hx = nullptr, *cx = nullptr;
  if (h0) {
    if (copyIn(rnn, rnn->dHx, h0, s.state(), rnn->halfH))
      return 1;
    hx = rnn->dHx;
  }
  if (lstm && c0) {
    if (copyIn(rnn, rnn->dCx, c0, s.state(), rnn->halfC))
      return 1;
    cx = rnn->dCx;
  }
  void *hy = hn ? rnn->dHy : nullptr;
  void *cy = lstm && cn ? rnn->dCy : nullptr;

  LSTM_OPT_CUDNN_CALL(rnn, cudnnRNNForward, rnn->handle, rnn->rnnDesc,
                      CUDNN_FWD_MODE_INFERENCE, rnn->dSeqLens, rnn->xDesc,
                      rnn->dX, rnn->yDesc, rnn->dY, rnn->hDesc, hx, hy,
                      rnn->hDesc, cx, cy, rnn->weightBytes, rnn->weights,
                      rnn->workBytes, rnn->work, rnn->reserveBytes,
                      rnn->reserve);

  // cuDNN's y is [T][B][D*H]; ONNX's is [T][D][B][H].
  const int64_t ny = s.y();
  const bool direct = !rnn->half && s.D == 1;
  if (direct) {
    LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, y, rnn->dY, size_t(ny) * 4,
                       cudaMemcpyDeviceToHost, rnn->stream);
  } else if (rnn->half) {
    rnn->halfOut.resize(size_t(ny));
    LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, rnn->halfOut.data(), rnn->dY,
                       size_t(ny) * 2, cudaMemcpyDeviceToHost, rnn->stream);
  } else {
    rnn->floatOut.resize(size_t(ny));
    LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, rnn->floatOut.data(), rnn->dY,
                       size_t(ny) * 4, cudaMemcpyDeviceToHost, rnn->stream);
  }
  std::vector<uint16_t> hnHalf, cnHalf;
  if (hn) {
    if (rnn->half) {
      hnHalf.resize(size_t(s.state()));
      LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, hnHalf.data(), rnn->dHy,
                         hnHalf.size() * 2, cudaMemcpyDeviceToHost,
                         rnn->stream);
    } else {
      LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, hn, rnn->dHy,
                         size_t(s.state()) * 4, cudaMemcpyDeviceToHost,
                         rnn->stream);
    }
  }
  if (cy) {
    if (rnn->half) {
      cnHalf.resize(size_t(s.state()));
      LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, cnHalf.data(), rnn->dCy,
                         cnHalf.size() * 2, cudaMemcpyDeviceToHost,
                         rnn->stream);
    } else {
      LSTM_OPT_CUDA_CALL(rnn, cudaMemcpyAsync, cn, rnn->dCy,
                         size_t(s.state()) * 4, cudaMemcpyDeviceToHost,
                         rnn->stream);
    }
  }
  // Kernel failures surface here.
  LSTM_OPT_CUDA_CALL(rnn, cudaStreamSynchronize, rnn->stream);

  if (!direct) {
    for (int64_t t = 0; t < s.T; ++t)
      for (int64_t b = 0; b < s.B; ++b)
        for (int64_t d = 0; d < s.D; ++d) {
          int64_t src = (t * s.B + b) * s.D * s.H + d * s.H;
          float *dst = y + ((t * s.D + d) * s.B + b) * s.H;
          if (rnn->half)
            halvesToFloats(&rnn->halfOut[size_t(src)], dst, size_t(s.H));
          else
            std::memcpy(dst, &rnn->floatOut[size_t(src)],
                        size_t(s.H) * sizeof(float));
        }
  }
  // ONNX: outputs past a sequence's end are zero (whatever cuDNN padded with).
  for (int64_t t = 0; t < s.T; ++t)
    for (int64_t d = 0; d < s.D; ++d)
      for (int64_t b = 0; b < s.B; ++b)
        if (t >= lens[size_t(b)])
          std::memset(y + ((t * s.D + d) * s.B + b) * s.H, 0,
                      size_t(s.H) * sizeof(float));
  halvesToFloats(hnHalf.data(), hn, hnHalf.size());
  halvesToFloats(cnHalf.data(), cn, cnHalf.size());
  return 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// The C ABI
//===----------------------------------------------------------------------===//

extern "C" {

int lstm_opt_rnn_pack_weights(const lstm_opt_rnn_desc *desc, const float *W0,
                              const float *Wn, const float *R, const float *Bw,
                              const float *Br, lstm_opt_weight_dst_fn dst,
                              void *ctx) {
  if (!dst || !validateDesc(desc).empty())
    return 1;
  const Sizes s = sizesOf(*desc);
  if (!W0 || !R || !Bw || !Br || (s.L > 1 && !Wn))
    return 1;
  const int64_t G = s.G, H = s.H, D = s.D;
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t in = l == 0 ? s.I : D * H;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t ld = l * D + d;
      // This (layer, direction)'s [G*H][in], [G*H][H] and [G*H] blocks.
      const float *w = l == 0 ? W0 + d * G * H * s.I
                              : Wn + ((l - 1) * D + d) * G * H * in;
      const float *r = R + ld * G * H * H;
      const float *bw = Bw + ld * G * H;
      const float *br = Br + ld * G * H;
      for (int64_t id = 0; id < 2 * G; ++id) {
        // IDs < G: input GEMM of gate id; IDs >= G: recurrent GEMM of gate
        // id - G. cuDNN's gate order is the canonical one.
        const bool rec = id >= G;
        const int64_t gate = rec ? id - G : id;
        const int64_t cols = rec ? H : in;
        const float *srcMat = (rec ? r : w) + gate * H * cols;
        const float *srcBias = (rec ? br : bw) + gate * H;
        float *mat = nullptr, *bias = nullptr;
        int64_t matElems = -1, biasElems = -1;
        if (dst(ctx, int(ld), int(id), &mat, &matElems, &bias, &biasElems) != 0)
          return 4;
        if (!mat || matElems != H * cols)
          return 2;
        if (!bias || biasElems != H)
          return 3;
        std::memcpy(mat, srcMat, size_t(H * cols) * sizeof(float));
        std::memcpy(bias, srcBias, size_t(H) * sizeof(float));
      }
    }
  }
  return 0;
}

int lstm_opt_rnn_create(const lstm_opt_rnn_desc *desc, const float *W0,
                        const float *Wn, const float *R, const float *Bw,
                        const float *Br, lstm_opt_rnn **out, char *err,
                        size_t err_len) {
  std::string error;
  int rc = createLayer(desc, layerLabel(desc), W0, Wn, R, Bw, Br, out, error);
  if (rc)
    writeError(err, err_len, error);
  else
    writeError(err, err_len, "");
  return rc;
}

int lstm_opt_rnn_forward(lstm_opt_rnn *rnn, const float *x,
                         const int32_t *seq_lens, const float *h0,
                         const float *c0, float *y, float *hn, float *cn,
                         char *err, size_t err_len) {
  if (!rnn) {
    writeError(err, err_len, "lstm_opt_rnn_forward: the layer is NULL");
    return 1;
  }
  std::lock_guard<std::mutex> lock(rnn->mutex);
  int rc = forwardLayer(rnn, x, seq_lens, h0, c0, y, hn, cn);
  writeError(err, err_len, rc ? rnn->error : std::string());
  return rc;
}

void lstm_opt_rnn_destroy(lstm_opt_rnn *rnn) { destroyLayer(rnn); }

int lstm_opt_cuda_device_available(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    cudaGetLastError();
    return 0;
  }
  // Creating the context is what fails on a broken driver.
  if (cudaFree(nullptr) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return 1;
}

size_t lstm_opt_cudnn_version(void) { return cudnnGetVersion(); }

uint16_t lstm_opt_float_to_half(float f) { return floatToHalf(f); }

void lstm_opt_floats_to_halves(const float *in, uint16_t *out, size_t n) {
  floatsToHalves(in, out, n);
}

void lstm_opt_halves_to_floats(const uint16_t *in, float *out, size_t n) {
  halvesToFloats(in, out, n);
}

float lstm_opt_half_to_float(uint16_t h) { return halfToFloat(h); }

} // extern "C"

//===----------------------------------------------------------------------===//
// The memref entry point of generated code
//===----------------------------------------------------------------------===//

namespace lstm_opt_cudnn {
/// MLIR's strided memref descriptor (the llvm.emit_c_interface ABI).
template <typename T, int N> struct StridedMemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};
} // namespace lstm_opt_cudnn

using lstm_opt_cudnn::StridedMemRef;

namespace {

[[noreturn]] void fatal(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "lstm-opt cuDNN runtime: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(1);
}

std::string shapeText(const int64_t *dims, int n) {
  std::string text = "[";
  for (int i = 0; i < n; ++i)
    text += (i ? "x" : "") + std::to_string(dims[i]);
  return text + "]";
}

/// The data of memref `m` named `what`, checked to be contiguous row-major
/// with `expected` sizes; nullptr for an allowed empty memref (`optional`).
template <typename T, int N>
T *checkedData(const std::string &label, const char *what,
               const StridedMemRef<T, N> *m, const int64_t (&expected)[N],
               bool optional) {
  if (!m)
    fatal(label + ": the " + what + " memref descriptor is NULL");
  int64_t elems = 1;
  for (int i = 0; i < N; ++i)
    elems *= m->sizes[i];
  if (optional && elems == 0)
    return nullptr;
  for (int i = 0; i < N; ++i)
    if (m->sizes[i] != expected[i])
      fatal(label + ": " + what + " has shape " + shapeText(m->sizes, N) +
            ", expected " + shapeText(expected, N) +
            (optional ? " (or size 0 for none)" : ""));
  int64_t stride = 1;
  for (int i = N - 1; i >= 0; --i) {
    if (m->sizes[i] > 1 && m->strides[i] != stride)
      fatal(label + ": " + what + " is not contiguous (strides " +
            shapeText(m->strides, N) + ")");
    stride *= m->sizes[i];
  }
  if (!m->aligned)
    fatal(label + ": " + what + " has no data");
  return m->aligned + m->offset;
}

template <typename T, int N>
int64_t elementCount(const StridedMemRef<T, N> *m) {
  if (!m)
    return 0;
  int64_t elems = 1;
  for (int i = 0; i < N; ++i)
    elems *= m->sizes[i];
  return elems;
}

/// What a layer's state slot points to. Never freed: a layer lives as long as
/// the process (destroying it at exit could run after the CUDA runtime is
/// torn down; a model unloaded with dlclose leaves its layers behind).
struct CachedLayer {
  int64_t config[9];
  lstm_opt_rnn *rnn;
};

std::mutex &cacheMutex() {
  static std::mutex *m = new std::mutex;
  return *m;
}

} // namespace

extern "C" LSTM_OPT_CUDNN_API void _mlir_ciface_lstm_opt_rnn_forward_memref(
    StridedMemRef<int64_t, 1> *config, StridedMemRef<int64_t, 1> *state,
    StridedMemRef<float, 1> *W0,
    StridedMemRef<float, 1> *Wn, StridedMemRef<float, 1> *R,
    StridedMemRef<float, 1> *Bw, StridedMemRef<float, 1> *Br,
    StridedMemRef<float, 3> *x, StridedMemRef<int32_t, 1> *seq_lens,
    StridedMemRef<float, 3> *h0, StridedMemRef<float, 3> *c0,
    StridedMemRef<float, 4> *y, StridedMemRef<float, 3> *hn,
    StridedMemRef<float, 3> *cn) {
  const int64_t *cfg =
      checkedData<int64_t, 1>("lstm_opt_rnn_forward_memref", "config", config,
                              {10}, /*optional=*/false);
  int64_t *slot = checkedData<int64_t, 1>("lstm_opt_rnn_forward_memref",
                                          "state", state, {1}, false);
  const int64_t layerId = cfg[9];
  const std::string label = "layer " + std::to_string(layerId);
  for (int i = 0; i < 9; ++i)
    if (cfg[i] < INT32_MIN || cfg[i] > INT32_MAX)
      fatal(label + format(": config[%d] = %lld does not fit in 32 bits", i,
                           (long long)cfg[i]));
  const std::string name = std::to_string(layerId);
  lstm_opt_rnn_desc desc;
  desc.cell = int32_t(cfg[0]);
  desc.bidirectional = int32_t(cfg[1]);
  desc.num_layers = int32_t(cfg[2]);
  desc.input_size = int32_t(cfg[3]);
  desc.hidden_size = int32_t(cfg[4]);
  desc.seq_len = int32_t(cfg[5]);
  desc.batch = int32_t(cfg[6]);
  desc.data_type = int32_t(cfg[7]);
  desc.algo = int32_t(cfg[8]);
  desc.name = name.c_str();
  std::string invalid = validateDesc(&desc);
  if (!invalid.empty())
    fatal(label + ": invalid configuration: " + invalid);
  const Sizes s = sizesOf(desc);
  const bool lstm = desc.cell == LSTM_OPT_RNN_LSTM;

  if (!lstm && (elementCount(c0) != 0 || elementCount(cn) != 0))
    fatal(label + ": c0 and cn must have size 0 for a GRU or RNN layer");
  const float *w0 = checkedData<float, 1>(label, "W0", W0, {s.w0()}, false);
  // One layer has no Wn; generated code passes whatever placeholder it has.
  const float *wn =
      s.L == 1 ? nullptr
               : checkedData<float, 1>(label, "Wn", Wn, {s.wn()}, false);
  const float *r = checkedData<float, 1>(label, "R", R, {s.r()}, false);
  const float *bw = checkedData<float, 1>(label, "Bw", Bw, {s.bias()}, false);
  const float *br = checkedData<float, 1>(label, "Br", Br, {s.bias()}, false);
  const float *xd =
      checkedData<float, 3>(label, "x", x, {s.T, s.B, s.I}, false);
  const int32_t *lens =
      checkedData<int32_t, 1>(label, "seq_lens", seq_lens, {s.B}, true);
  const int64_t stateShape[3] = {s.L * s.D, s.B, s.H};
  const float *h0d = checkedData<float, 3>(label, "h0", h0, stateShape, true);
  const float *c0d =
      lstm ? checkedData<float, 3>(label, "c0", c0, stateShape, true) : nullptr;
  float *yd = checkedData<float, 4>(label, "y", y, {s.T, s.D, s.B, s.H}, false);
  float *hnd = checkedData<float, 3>(label, "hn", hn, stateShape, false);
  float *cnd =
      lstm ? checkedData<float, 3>(label, "cn", cn, stateShape, true) : nullptr;

  lstm_opt_rnn *rnn = nullptr;
  {
    std::lock_guard<std::mutex> lock(cacheMutex());
    if (*slot) {
      auto *entry = reinterpret_cast<CachedLayer *>(*slot);
      if (!std::equal(cfg, cfg + 9, entry->config))
        fatal(label + ": called again with a different configuration; a "
                      "state slot belongs to one layer");
      rnn = entry->rnn;
    } else {
      // The first call: create the layer and run it before any other thread
      // can see it, so that a persistent algorithm auto chose and cuDNN
      // refuses to run for these shapes on this GPU can still be replaced
      // by the standard one.
      std::string error;
      // Lengths that differ between calls or rows: cuDNN's persistent
      // kernels may refuse them, on any call.
      if (desc.algo == 3 && lens)
        desc.algo = 0;
      if (createLayer(&desc, label, w0, wn, r, bw, br, &rnn, error))
        fatal(error);
      if (forwardLayer(rnn, xd, lens, h0d, c0d, yd, hnd, cnd)) {
        if (desc.algo != 3 || rnn->desc.algo == 0)
          fatal(rnn->error);
        destroyLayer(rnn);
        desc.algo = 0;
        if (createLayer(&desc, label, w0, wn, r, bw, br, &rnn, error))
          fatal(error);
        if (forwardLayer(rnn, xd, lens, h0d, c0d, yd, hnd, cnd))
          fatal(rnn->error);
      }
      auto *entry = new CachedLayer;
      std::copy(cfg, cfg + 9, entry->config);
      entry->rnn = rnn;
      *slot = reinterpret_cast<int64_t>(entry);
      return;
    }
  }
  std::lock_guard<std::mutex> lock(rnn->mutex);
  if (forwardLayer(rnn, xd, lens, h0d, c0d, yd, hnd, cnd))
    fatal(rnn->error);
}

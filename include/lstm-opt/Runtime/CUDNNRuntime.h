/*===- CUDNNRuntime.h - the cuDNN runtime of lstm-opt -------------*- C -*-===//
 *
 * A small C library (libLstmOptCUDNNRuntime.so) that runs one recurrent
 * layer stack of the `rnn` dialect (LSTM, GRU with linear_before_reset = 1,
 * RNN tanh/relu; 1 or 2 directions; L >= 1 layers) with cuDNN 9's RNN API
 * (cudnnRNNForward, inference). It is called from the host code
 * `convert-rnn-to-cudnn` generates (through the memref entry point below)
 * and from C.
 *
 * Weights come in the rnn dialect's canonical layout
 * (docs/Dialects/RNNRationale.md) and are copied into cuDNN's weight space
 * once, when a layer is created; a forward call only moves activations.
 * Every failure names the layer (the ONNX node) and the failing cuDNN/CUDA
 * call with its error string, e.g.
 *   layer '/lstm/LSTM': cudnnSetRNNDescriptor_v8 failed: CUDNN_STATUS_BAD_PARAM (...)
 *
 * docs/RuntimeABI.md ("cuDNN") describes the ABI and the weight mapping.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LSTM_OPT_RUNTIME_CUDNNRUNTIME_H
#define LSTM_OPT_RUNTIME_CUDNNRUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define LSTM_OPT_CUDNN_API
#else
#define LSTM_OPT_CUDNN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Cell kinds (lstm_opt_rnn_desc.cell). */
enum {
  LSTM_OPT_RNN_LSTM = 0,
  LSTM_OPT_RNN_GRU = 1,      /* linear_before_reset = 1 only: cuDNN's GRU */
  LSTM_OPT_RNN_TANH = 2,
  LSTM_OPT_RNN_RELU = 3
};

/* Static description of one recurrent layer stack (what the compiler knows). */
typedef struct {
  int32_t cell;          /* 0 LSTM, 1 GRU (linear_before_reset = 1 only: cuDNN's GRU), 2 RNN tanh, 3 RNN relu */
  int32_t bidirectional; /* 0/1 */
  int32_t num_layers;    /* >= 1; layer k > 0 reads layer k-1's output [T, B, D*H] */
  int32_t input_size;    /* I of layer 0 */
  int32_t hidden_size;   /* H */
  int32_t seq_len, batch;/* T, B (the compiled shapes) */
  int32_t data_type;     /* 0 fp32 data and math; 1 fp16 data with tensor-core math and fp32
                            accumulation (the runtime converts weights and activations to fp16
                            on the host, round to nearest even, and results back to fp32) */
  int32_t algo;          /* 0 CUDNN_RNN_ALGO_STANDARD, 1 CUDNN_RNN_ALGO_PERSIST_STATIC,
                            2 CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, 3 auto: small-h for
                            LSTM/GRU with H <= 192 and RNN with H <= 384, else
                            persist-static for batch <= 4, else standard; a persistent
                            choice cuDNN refuses on this GPU falls back to standard */
  const char *name;      /* layer name (the ONNX node), used in every error message; copied */
} lstm_opt_rnn_desc;

/* Canonical weights on the host, the rnn dialect's layout (gate order LSTM
   i,f,g,o; GRU r,z,n; RNN one gate; G gates, D directions, L layers):
     W0 [D][G*H][I]            layer 0 input weights
     Wn [L-1][D][G*H][D*H]     input weights of layers 1..L-1 (NULL if L == 1)
     R  [L][D][G*H][H]         recurrent weights
     Bw, Br [L][D][G*H]        input and recurrent biases                       */
typedef struct lstm_opt_rnn lstm_opt_rnn;

/* Creates the cuDNN handle and a stream, the descriptors
   (cudnnSetRNNDescriptor_v8 with double bias and padded I/O; RNN data
   descriptors in layout SEQ_MAJOR_UNPACKED), allocates the weight space and
   fills it ONCE through cudnnGetRNNWeightParams, and allocates the workspace
   (cudnnGetRNNTempSpaceSizes, inference) and the device buffers for T and B.
   The weights are not referenced after the call. Returns 0, or nonzero with a
   message naming the layer and the failing cuDNN/CUDA call and its error
   string in err (always NUL-terminated if err_len > 0); *out is then NULL. */
LSTM_OPT_CUDNN_API int lstm_opt_rnn_create(const lstm_opt_rnn_desc *desc,
                                           const float *W0, const float *Wn,
                                           const float *R, const float *Bw,
                                           const float *Br, lstm_opt_rnn **out,
                                           char *err, size_t err_len);

/* Inference on HOST buffers (copied in and out with cudaMemcpyAsync on the
   layer's stream; the call synchronises before it returns):
     x [T][B][I]; seq_lens [B] int32 in 1..T, or NULL (= all T);
     h0, c0 [L*D][B][H] or NULL (zeros);
     y [T][D][B][H] (ONNX's Y; rows t >= seq_lens[b] are zero);
     hn, cn [L*D][B][H] (the state after each sequence's last valid step;
     either may be NULL when not wanted; cn and c0 are ignored for GRU/RNN).
   Not reentrant for one layer (calls on one layer are serialised by a lock).
   Returns 0 or nonzero with a message in err. */
LSTM_OPT_CUDNN_API int lstm_opt_rnn_forward(lstm_opt_rnn *rnn, const float *x,
                                            const int32_t *seq_lens,
                                            const float *h0, const float *c0,
                                            float *y, float *hn, float *cn,
                                            char *err, size_t err_len);

/* Frees everything the layer holds. NULL is a no-op. */
LSTM_OPT_CUDNN_API void lstm_opt_rnn_destroy(lstm_opt_rnn *rnn);

/* 1 if a CUDA device is usable, else 0 (never fails). */
LSTM_OPT_CUDNN_API int lstm_opt_cuda_device_available(void);

/* cudnnGetVersion() of the loaded libcudnn (e.g. 91900 for 9.19.0); needs no
   device. */
LSTM_OPT_CUDNN_API size_t lstm_opt_cudnn_version(void);

/* Pure host function, no CUDA needed: copies canonical weights into cuDNN's
   per-(pseudo-layer, linLayerID) matrices and biases.
   `dst(ctx, pseudo_layer, lin_layer_id, &mat, &mat_elems, &bias, &bias_elems)`
   returns 0 and destination pointers (what cudnnGetRNNWeightParams gives, in
   production; a reference table in the tests), or nonzero to stop.
   cuDNN's linLayerIDs: LSTM 0-3 input matrices for gates i,f,g(c),o and 4-7
   recurrent; GRU 0-2 input r,z,h(n) and 3-5 recurrent; RNN 0 input,
   1 recurrent; pseudo_layer = layer*D + direction. Matrices are row-major
   [H][in] (in = I for layer 0, D*H above, H for recurrent IDs). Input biases
   [H] go with IDs < G, recurrent biases with IDs >= G. dst is called once per
   (pseudo_layer, id), pseudo-layers in order, IDs ascending.
   Returns 0; 1 for an invalid desc or a missing weight array; 2 if a
   matrix's mat_elems is not H*in (or mat is NULL); 3 if bias_elems is not H
   (or bias is NULL); 4 if dst returned nonzero. */
typedef int (*lstm_opt_weight_dst_fn)(void *ctx, int pseudo_layer,
                                      int lin_layer_id, float **mat,
                                      int64_t *mat_elems, float **bias,
                                      int64_t *bias_elems);
LSTM_OPT_CUDNN_API int lstm_opt_rnn_pack_weights(
    const lstm_opt_rnn_desc *desc, const float *W0, const float *Wn,
    const float *R, const float *Bw, const float *Br,
    lstm_opt_weight_dst_fn dst, void *ctx);

/* IEEE fp32 <-> fp16 (binary16 bits), round to nearest even, with
   subnormals, infinities and NaNs (kept quiet). What data_type 1 uses. */
LSTM_OPT_CUDNN_API uint16_t lstm_opt_float_to_half(float f);
LSTM_OPT_CUDNN_API float lstm_opt_half_to_float(uint16_t h);
/* The same over n values (F16C where the CPU has it; the same bits). */
LSTM_OPT_CUDNN_API void lstm_opt_floats_to_halves(const float *in,
                                                  uint16_t *out, size_t n);
LSTM_OPT_CUDNN_API void lstm_opt_halves_to_floats(const uint16_t *in,
                                                  float *out, size_t n);

/* The entry point of code generated by `convert-rnn-to-cudnn`, MLIR's
   llvm.emit_c_interface convention for a func.func declaration
   @lstm_opt_rnn_forward_memref with memref arguments:

     void _mlir_ciface_lstm_opt_rnn_forward_memref(
         memref<10xi64> *config, memref<1xi64> *state,
         memref<?xf32> *W0, memref<?xf32> *Wn,
         memref<?xf32> *R, memref<?xf32> *Bw, memref<?xf32> *Br,
         memref<TxBxIxf32> *x, memref<?xi32> *seq_lens,
         memref<L*DxBxHxf32> *h0, memref<L*DxBxHxf32> *c0,
         memref<TxDxBxHxf32> *y, memref<L*DxBxHxf32> *hn,
         memref<L*DxBxHxf32> *cn);

   each argument a pointer to MLIR's strided memref descriptor
   {T *allocated; T *aligned; int64_t offset; int64_t sizes[N]; int64_t strides[N];}
   (weights flattened to rank 1; every memref must be contiguous row-major).
   config holds the lstm_opt_rnn_desc fields in order (cell, bidirectional,
   num_layers, input_size, hidden_size, seq_len, batch, data_type, algo)
   followed by a layer_id (for messages). state is the layer's slot: a
   zero-initialised writable global of the caller, one per layer and per
   loaded copy of the model. The layer is created on the first call (slot 0),
   its handle kept in the slot for the life of the process (weights converted
   once, never per call); a later call whose config differs from the one the
   slot was created with is an error. A memref of size 0 means "none" for
   seq_lens, h0, c0 and cn (cn must be size 0 for GRU/RNN). Messages name the
   layer
   "layer <layer_id>". On any error it prints "lstm-opt cuDNN runtime:
   <message>" to stderr and exits with code 1 (generated code has no error
   channel). The descriptor structs are not declared here; see
   test/Runtime/CUDNN/cudnn_device_test.cpp for a C++ caller. */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LSTM_OPT_RUNTIME_CUDNNRUNTIME_H */

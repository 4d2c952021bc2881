/* Calls the AOT-compiled torch_lstm_lm model through _mlir_ciface_lstm_opt_model
   with descriptors whose data start at an offset into larger buffers (as a
   memref subview hands them over): reads 8x2 int64 tokens from argv[1],
   writes the 8x2x20 float log-probs to argv[2], and fails if an element
   before or after the output was written. Used by target-cpu.test. */
#include "lm.h"

#include <stdio.h>
#include <string.h>

enum { kTokOff = 5, kOutOff = 7, kOut = 8 * 2 * 20, kPad = 9 };

int main(int argc, char **argv) {
  int64_t tokens[kTokOff + 8 * 2];
  float logprobs[kOutOff + kOut + kPad];
  if (argc != 3)
    return 2;
  for (int i = 0; i < kTokOff; ++i)
    tokens[i] = -1; /* out of the vocabulary: read, they would show */
  FILE *in = fopen(argv[1], "rb");
  if (!in || fread(tokens + kTokOff, 8 * 2 * sizeof(int64_t), 1, in) != 1)
    return 3;
  fclose(in);
  for (int i = 0; i < kOutOff + kOut + kPad; ++i)
    logprobs[i] = 12345.0f;
  lstm_opt_memref_int64_2d t = {tokens, tokens, kTokOff, {8, 2}, {2, 1}};
  lstm_opt_memref_float_3d o = {logprobs, logprobs, kOutOff, {8, 2, 20},
                                {40, 20, 1}};
  const char *missing = lstm_opt_model_cpu_check();
  if (missing) {
    fprintf(stderr, "%s\n", missing);
    return 5;
  }
  _mlir_ciface_lstm_opt_model(&t, &o);
  for (int i = 0; i < kOutOff; ++i)
    if (logprobs[i] != 12345.0f)
      return fprintf(stderr, "element %d before the output written\n", i), 6;
  for (int i = kOutOff + kOut; i < kOutOff + kOut + kPad; ++i)
    if (logprobs[i] != 12345.0f)
      return fprintf(stderr, "element %d after the output written\n", i), 7;
  FILE *out = fopen(argv[2], "wb");
  if (!out || fwrite(logprobs + kOutOff, kOut * sizeof(float), 1, out) != 1)
    return 4;
  fclose(out);
  return 0;
}

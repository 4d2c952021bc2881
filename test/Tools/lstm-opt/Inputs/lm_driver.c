/* Calls the AOT-compiled torch_lstm_lm model through its generated header:
   reads 8x2 int64 tokens from argv[1], writes the 8x2x20 float log-probs to
   argv[2] (raw little-endian). Used by target-cpu.test. */
#include "lm.h"

#include <stdio.h>

int main(int argc, char **argv) {
  int64_t tokens[8 * 2];
  float logprobs[8 * 2 * 20];
  if (argc != 3)
    return 2;
  FILE *in = fopen(argv[1], "rb");
  if (!in || fread(tokens, sizeof tokens, 1, in) != 1)
    return 3;
  fclose(in);
  lstm_opt_model_run(tokens, logprobs);
  FILE *out = fopen(argv[2], "wb");
  if (!out || fwrite(logprobs, sizeof logprobs, 1, out) != 1)
    return 4;
  fclose(out);
  return 0;
}

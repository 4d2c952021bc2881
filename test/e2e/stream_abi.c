/* The stream C API of a stateful compiled model (lstm-opt --state), from C:
   built by test/e2e/stream.py with the model's header force-included.
   Usage: stream_abi IN_BYTES... / OUT_BYTES...  (the stream's inputs and
   outputs, in order). Checks: two streams fed the same chunks agree bit
   for bit; get_state/set_state round-trip; a stream reset and rerun gives
   the same outputs; run_chunks equals the runs; 4 threads each streaming
   their own stream agree with the same work done alone. Prints
   "stream_abi: ok" or what differed (exit 1). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 16
#define CHUNKS 6
static int nIn, nOut;
static long inBytes[MAXT], outBytes[MAXT];

static void fill(unsigned char *p, long n, unsigned seed) {
  /* Floats in [-1, 1] when the buffer holds floats; small integers are
     also harmless for the corpus models (all-float inputs). */
  float *f = (float *)p;
  for (long i = 0; i < n / 4; ++i) {
    seed = seed * 1103515245u + 12345u;
    f[i] = ((seed >> 8) & 0xffff) / 32768.f - 1.f;
  }
}

/* CHUNKS chunks of every input; outputs of every chunk. */
typedef struct {
  unsigned char *in[MAXT], *out[MAXT];
} Work;

static Work make(unsigned seed) {
  Work w;
  for (int i = 0; i < nIn; ++i) {
    w.in[i] = malloc(inBytes[i] * CHUNKS);
    fill(w.in[i], inBytes[i] * CHUNKS, seed + i);
  }
  for (int o = 0; o < nOut; ++o)
    w.out[o] = calloc(CHUNKS, outBytes[o]);
  return w;
}

static void drop(Work *w) {
  for (int i = 0; i < nIn; ++i)
    free(w->in[i]);
  for (int o = 0; o < nOut; ++o)
    free(w->out[o]);
}

static void stream_all(lstm_opt_stream *s, Work *w) {
  for (int c = 0; c < CHUNKS; ++c) {
    const void *in[MAXT];
    void *out[MAXT];
    for (int i = 0; i < nIn; ++i)
      in[i] = w->in[i] + c * inBytes[i];
    for (int o = 0; o < nOut; ++o)
      out[o] = w->out[o] + c * outBytes[o];
    lstm_opt_stream_run(s, in, out);
  }
}

static int same(Work *a, Work *b) {
  for (int o = 0; o < nOut; ++o)
    if (memcmp(a->out[o], b->out[o], outBytes[o] * CHUNKS))
      return 0;
  return 1;
}

static void *thread_main(void *arg) {
  Work *w = arg;
  lstm_opt_stream *s = lstm_opt_stream_create();
  for (int r = 0; r < 20; ++r) {
    lstm_opt_stream_reset(s);
    stream_all(s, w);
  }
  lstm_opt_stream_destroy(s);
  return NULL;
}

#define CHECK(cond, what)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("stream_abi: %s\n", what);                                       \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  int k = 1;
  for (; k < argc && strcmp(argv[k], "/"); ++k)
    inBytes[nIn++] = atol(argv[k]);
  for (++k; k < argc; ++k)
    outBytes[nOut++] = atol(argv[k]);
  CHECK(nIn <= MAXT && nOut <= MAXT, "too many tensors");
  CHECK(lstm_opt_model_cpu_check() == NULL, "this CPU cannot run the model");
  CHECK(lstm_opt_stream_num_states() > 0, "no state");
  CHECK(lstm_opt_stream_state_bytes(-1) == -1, "state_bytes(-1) is not -1");

  Work a = make(1), b = make(1);
  lstm_opt_stream *s = lstm_opt_stream_create(), *t = lstm_opt_stream_create();
  CHECK(s && t, "create failed");
  stream_all(s, &a);
  stream_all(t, &b);
  CHECK(same(&a, &b), "two streams on the same chunks differ");

  /* The state out and back in. */
  int ns = lstm_opt_stream_num_states();
  for (int j = 0; j < ns; ++j) {
    long n = lstm_opt_stream_state_bytes(j);
    unsigned char *x = malloc(n), *y = malloc(n);
    CHECK(lstm_opt_stream_get_state(s, j, x) == 0, "get_state failed");
    CHECK(lstm_opt_stream_set_state(t, j, x) == 0, "set_state failed");
    CHECK(lstm_opt_stream_get_state(t, j, y) == 0 && !memcmp(x, y, n),
          "set_state then get_state differ");
    free(x);
    free(y);
  }
  CHECK(lstm_opt_stream_get_state(s, ns, NULL) == -1, "get_state(out of range) is not -1");

  /* Reset, run_chunks == the runs. */
  Work c = make(1);
  lstm_opt_stream_reset(s);
  lstm_opt_stream_run_chunks(s, CHUNKS, (const void *const *)c.in, (void *const *)c.out);
  CHECK(same(&a, &c), "run_chunks differs from the runs");

  /* 4 threads, each its own stream and work, against the same alone. */
  Work w[4], alone[4];
  pthread_t th[4];
  for (int i = 0; i < 4; ++i) {
    w[i] = make(100 + i);
    alone[i] = make(100 + i);
  }
  for (int i = 0; i < 4; ++i)
    pthread_create(&th[i], NULL, thread_main, &w[i]);
  for (int i = 0; i < 4; ++i)
    pthread_join(th[i], NULL);
  for (int i = 0; i < 4; ++i) {
    lstm_opt_stream_reset(s);
    stream_all(s, &alone[i]);
    CHECK(same(&w[i], &alone[i]), "a stream on a thread differs from the same alone");
    drop(&w[i]);
    drop(&alone[i]);
  }
  lstm_opt_stream_destroy(s);
  lstm_opt_stream_destroy(t);
  lstm_opt_stream_destroy(NULL);
  drop(&a);
  drop(&b);
  drop(&c);
  printf("stream_abi: ok\n");
  return 0;
}

/* The library alternatives to lstm-opt's generated kernels (bench/gemm_choice.py):
 *   hoisted: one OpenBLAS sgemm P[T*B, 4H] = X[T*B, I] W^T (what lstm-opt's
 *            generated input GEMM does);
 *   stepped: T sgemm calls gates[B, 4H] = h[B, H] R^T, each followed by the
 *            LSTM pointwise update (what a library-GEMM recurrence does).
 * Usage: sgemm_paths T B I H THREADS REPS  -> prints "hoisted_ms X stepped_ms Y"
 * (medians over REPS). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void openblas_set_num_threads(int);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static float *randbuf(size_t n) {
  float *p = aligned_alloc(64, ((n * sizeof(float)) + 63) / 64 * 64);
  for (size_t i = 0; i < n; ++i)
    p[i] = (float)rand() / RAND_MAX - 0.5f;
  return p;
}

static float sigm(float x) { return 1.f / (1.f + expf(-x)); }

int main(int argc, char **argv) {
  if (argc != 7)
    return 2;
  int T = atoi(argv[1]), B = atoi(argv[2]), In = atoi(argv[3]), H = atoi(argv[4]);
  int threads = atoi(argv[5]), reps = atoi(argv[6]);
  openblas_set_num_threads(threads);
  int G = 4 * H;
  float *x = randbuf((size_t)T * B * In), *w = randbuf((size_t)G * In),
        *r = randbuf((size_t)G * H), *p = randbuf((size_t)T * B * G),
        *h = randbuf((size_t)B * H), *c = randbuf((size_t)B * H),
        *gates = randbuf((size_t)B * G);
  double *hoisted = malloc(sizeof(double) * reps), *stepped = malloc(sizeof(double) * reps);
  for (int rep = -2; rep < reps; ++rep) {
    double t0 = now_ms();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T * B, G, In, 1.f, x, In,
                w, In, 0.f, p, G);
    double t1 = now_ms();
    for (int t = 0; t < T; ++t) {
      memcpy(gates, p + (size_t)t * B * G, sizeof(float) * B * G);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, G, H, 1.f, h, H,
                  r, H, 1.f, gates, G);
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < H; ++j) {
          const float *g = gates + (size_t)b * G;
          float i_ = sigm(g[j]), f_ = sigm(g[H + j]), g_ = tanhf(g[2 * H + j]),
                o_ = sigm(g[3 * H + j]);
          float cn = f_ * c[b * H + j] + i_ * g_;
          c[b * H + j] = cn;
          h[b * H + j] = o_ * tanhf(cn);
        }
    }
    double t2 = now_ms();
    if (rep >= 0) {
      hoisted[rep] = t1 - t0;
      stepped[rep] = t2 - t1;
    }
  }
  qsort(hoisted, reps, sizeof(double), cmp);
  qsort(stepped, reps, sizeof(double), cmp);
  printf("hoisted_ms %.4f stepped_ms %.4f\n", hoisted[reps / 2], stepped[reps / 2]);
  return 0;
}

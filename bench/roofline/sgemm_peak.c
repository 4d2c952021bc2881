/* sgemm peak for the roofline floor of bench/cpu_backend.py.
 *
 *   sgemm_peak N THREADS REPS
 *
 * OpenBLAS cblas_sgemm on N x N x N (row major, no transposes) with
 * openblas_set_num_threads(THREADS): one warm-up call, then REPS timed calls.
 * Prints key: value lines; "gflops_best" is 2 N^3 / best time.
 *
 * Build: gcc -O2 sgemm_peak.c -I/usr/include/x86_64-linux-gnu/openblas-pthread -lopenblas -o sgemm_peak
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern void openblas_set_num_threads(int);
extern char *openblas_get_config(void);
extern char *openblas_get_corename(void);

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: sgemm_peak N THREADS REPS\n");
    return 2;
  }
  const int n = atoi(argv[1]), threads = atoi(argv[2]), reps = atoi(argv[3]);
  openblas_set_num_threads(threads);
  float *a = aligned_alloc(64, sizeof(float) * (size_t)n * n);
  float *b = aligned_alloc(64, sizeof(float) * (size_t)n * n);
  float *c = aligned_alloc(64, sizeof(float) * (size_t)n * n);
  if (!a || !b || !c) return 1;
  for (size_t i = 0; i < (size_t)n * n; ++i) {
    a[i] = (float)((i * 7) % 13) * 0.01f;
    b[i] = (float)((i * 5) % 11) * 0.01f;
    c[i] = 0.f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a, n, b, n, 0.f, c, n);
  double best = 1e30, sum = 0;
  for (int r = 0; r < reps; ++r) {
    double t0 = now_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a, n, b, n, 0.f, c, n);
    double t = now_s() - t0;
    sum += t;
    if (t < best) best = t;
  }
  const double flop = 2.0 * n * (double)n * n;
  printf("openblas_config: %s\n", openblas_get_config());
  printf("openblas_core: %s\n", openblas_get_corename());
  printf("n: %d\nthreads: %d\nreps: %d\n", n, threads, reps);
  printf("gflops_best: %.2f\ngflops_mean: %.2f\n", flop / best * 1e-9, flop / (sum / reps) * 1e-9);
  printf("checksum: %g\n", (double)c[(size_t)n * n / 2 + 1]);
  free(a);
  free(b);
  free(c);
  return 0;
}

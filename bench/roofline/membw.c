/* Memory and cache bandwidth for the roofline floor of bench/cpu_backend.py.
 *
 *   membw THREADS MAX_MIB [TRIAD_MIB]
 *
 * read sweep: for buffer sizes 16 KiB .. MAX_MIB MiB (powers of two and the
 *   midpoints between them), THREADS OpenMP threads each read their own
 *   contiguous share of one buffer (first touched by that thread), repeated
 *   until about 0.05 s; best of 5 trials. Prints "read BYTES GB/s" (bytes
 *   read per second by all threads together, 1 GB = 1e9 bytes).
 * triad: a[i] = b[i] + s * c[i] on three arrays of TRIAD_MIB/3 MiB each
 *   (default 1024 MiB in all), STREAM's byte count (3 x 4 bytes per element,
 *   no write-allocate traffic), best of 5. Prints "triad BYTES GB/s".
 *
 * Build: gcc -O3 -march=native -fopenmp membw.c -o membw
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Sum of n floats (n a multiple of 64) with 4 independent vector accumulators. */
static float read_sum(const float *p, size_t n) {
#if defined(__AVX512F__)
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_load_ps(p + i));
    s1 = _mm512_add_ps(s1, _mm512_load_ps(p + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_load_ps(p + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_load_ps(p + i + 48));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
#else
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
    s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
  }
  float t[8];
  _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
#endif
}

static volatile float sink;

/* GB/s reading `bytes` split over `threads` threads; best of 5 trials. */
static double read_bw(float *buf, size_t bytes, int threads) {
  const size_t per = (bytes / sizeof(float) / threads) & ~(size_t)63;
  if (per == 0) return 0;
  /* passes per trial so that a trial reads at least ~0.05 s worth (guess 20 GB/s) */
  size_t passes = (size_t)(0.05 * 20e9 / (double)(per * threads * sizeof(float)));
  if (passes < 1) passes = 1;
  double best = 0;
  for (int trial = 0; trial < 6; ++trial) {
    double t0 = 0, t1 = 0;
    float acc = 0;
#pragma omp parallel num_threads(threads) reduction(+ : acc)
    {
      const float *p = buf + (size_t)omp_get_thread_num() * per;
      acc += read_sum(p, per); /* warm the share */
#pragma omp barrier
#pragma omp master
      t0 = now_s();
#pragma omp barrier
      for (size_t r = 0; r < passes; ++r) {
        /* the "memory" clobber stops the compiler hoisting the (pure) sum out of the loop */
        __asm__ __volatile__("" : : "r"(p) : "memory");
        acc += read_sum(p, per);
      }
#pragma omp barrier
#pragma omp master
      t1 = now_s();
    }
    sink = acc;
    const double gbs = (double)passes * per * threads * sizeof(float) / (t1 - t0) * 1e-9;
    if (trial > 0 && gbs > best) best = gbs; /* trial 0: page faults, frequency ramp */
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: membw THREADS MAX_MIB [TRIAD_MIB]\n");
    return 2;
  }
  const int threads = atoi(argv[1]);
  const size_t max_bytes = (size_t)atol(argv[2]) << 20;
  const size_t triad_bytes = (argc > 3 ? (size_t)atol(argv[3]) : 1024) << 20;
  float *buf = aligned_alloc(4096, max_bytes);
  if (!buf) return 1;
  /* first touch by the thread that will read each share (for the largest size) */
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < max_bytes / sizeof(float); ++i) buf[i] = 1.0f;
  printf("threads: %d\n", threads);
  for (size_t s = 16 << 10; s <= max_bytes; s *= 2) {
    printf("read %zu %.2f\n", s, read_bw(buf, s, threads));
    fflush(stdout);
    if (s * 3 / 2 <= max_bytes && s * 2 <= max_bytes) {
      printf("read %zu %.2f\n", s * 3 / 2, read_bw(buf, s * 3 / 2, threads));
      fflush(stdout);
    }
  }
  free(buf);

  const size_t n = (triad_bytes / 3 / sizeof(float)) & ~(size_t)63;
  float *a = aligned_alloc(4096, n * sizeof(float));
  float *b = aligned_alloc(4096, n * sizeof(float));
  float *c = aligned_alloc(4096, n * sizeof(float));
  if (!a || !b || !c) return 1;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0.f;
    b[i] = 1.f;
    c[i] = 2.f;
  }
  double best = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const float s = 0.5f + trial;
    double t0 = now_s();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    double t = now_s() - t0;
    const double gbs = 3.0 * n * sizeof(float) / t * 1e-9;
    if (trial > 0 && gbs > best) best = gbs;
  }
  sink = a[n / 2];
  printf("triad %zu %.2f\n", 3 * n * sizeof(float), best);
  free(a);
  free(b);
  free(c);
  return 0;
}

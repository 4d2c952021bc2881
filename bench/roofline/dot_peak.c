/* Peak throughput of the dot-product instructions the CPU kernels use, for
 * the compute floor of the low-precision columns of bench/cpu_backend.py:
 *   f32   vfmadd231ps zmm/ymm  (2 flops per lane: reported as MAC/s)
 *   bf16  vdpbf16ps zmm        (AVX512_BF16: 32 bf16 MACs per instruction)
 *   int8  vpdpbusd zmm/ymm     (AVX512_VNNI / AVX-VNNI: 64 / 32 u8*s8 MACs)
 * Each thread runs 16 independent accumulator chains (enough to cover the
 * latency on every core seen) for REPS iterations; THREADS threads run at
 * once and the total is reported. Instructions the CPU lacks are skipped.
 *
 *   dot_peak THREADS [REPS]      -> one line per instruction: "name GMAC/s"
 *
 * Build: gcc -O2 -pthread dot_peak.c -o dot_peak
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long reps = 20000000;

#define CHAINS16(INSN)                                                         \
  INSN " %%zmm1,%%zmm0,%%zmm2\n" INSN " %%zmm1,%%zmm0,%%zmm3\n" INSN          \
       " %%zmm1,%%zmm0,%%zmm4\n" INSN " %%zmm1,%%zmm0,%%zmm5\n" INSN           \
       " %%zmm1,%%zmm0,%%zmm6\n" INSN " %%zmm1,%%zmm0,%%zmm7\n" INSN           \
       " %%zmm1,%%zmm0,%%zmm8\n" INSN " %%zmm1,%%zmm0,%%zmm9\n" INSN           \
       " %%zmm1,%%zmm0,%%zmm10\n" INSN " %%zmm1,%%zmm0,%%zmm11\n" INSN         \
       " %%zmm1,%%zmm0,%%zmm12\n" INSN " %%zmm1,%%zmm0,%%zmm13\n" INSN         \
       " %%zmm1,%%zmm0,%%zmm14\n" INSN " %%zmm1,%%zmm0,%%zmm15\n" INSN         \
       " %%zmm1,%%zmm0,%%zmm16\n" INSN " %%zmm1,%%zmm0,%%zmm17\n"
#define YCHAINS12(INSN)                                                        \
  INSN " %%ymm1,%%ymm0,%%ymm2\n" INSN " %%ymm1,%%ymm0,%%ymm3\n" INSN          \
       " %%ymm1,%%ymm0,%%ymm4\n" INSN " %%ymm1,%%ymm0,%%ymm5\n" INSN           \
       " %%ymm1,%%ymm0,%%ymm6\n" INSN " %%ymm1,%%ymm0,%%ymm7\n" INSN           \
       " %%ymm1,%%ymm0,%%ymm8\n" INSN " %%ymm1,%%ymm0,%%ymm9\n" INSN           \
       " %%ymm1,%%ymm0,%%ymm10\n" INSN " %%ymm1,%%ymm0,%%ymm11\n" INSN         \
       " %%ymm1,%%ymm0,%%ymm12\n" INSN " %%ymm1,%%ymm0,%%ymm13\n"

#define LOOP(BODY, ZERO)                                                       \
  long n = reps;                                                               \
  __asm__ volatile(ZERO "1:\n" BODY "dec %0\n jnz 1b\n"                        \
                   : "+r"(n)::"memory", "xmm0", "xmm1", "xmm2", "xmm3",        \
                     "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",  \
                     "xmm11", "xmm12", "xmm13", "xmm14", "xmm15")

__attribute__((target("avx512f"))) static void fma_zmm(void) {
  LOOP(CHAINS16("vfmadd231ps"),
       "vpxord %%zmm0,%%zmm0,%%zmm0\n vpxord %%zmm1,%%zmm1,%%zmm1\n");
}
__attribute__((target("avx2,fma"))) static void fma_ymm(void) {
  LOOP(YCHAINS12("vfmadd231ps"),
       "vpxor %%ymm0,%%ymm0,%%ymm0\n vpxor %%ymm1,%%ymm1,%%ymm1\n");
}
__attribute__((target("avx512bf16,avx512f"))) static void bf16_zmm(void) {
  LOOP(CHAINS16("vdpbf16ps"),
       "vpxord %%zmm0,%%zmm0,%%zmm0\n vpxord %%zmm1,%%zmm1,%%zmm1\n");
}
__attribute__((target("avx512vnni,avx512f"))) static void vnni_zmm(void) {
  LOOP(CHAINS16("vpdpbusd"),
       "vpxord %%zmm0,%%zmm0,%%zmm0\n vpxord %%zmm1,%%zmm1,%%zmm1\n");
}
__attribute__((target("avxvnni"))) static void vnni_ymm(void) {
  LOOP(YCHAINS12("%{vex%} vpdpbusd"),
       "vpxor %%ymm0,%%ymm0,%%ymm0\n vpxor %%ymm1,%%ymm1,%%ymm1\n");
}

struct kind {
  const char *name, *feature, *feature2;
  void (*fn)(void);
  double macsPerIter; /* per loop iteration (all chains) */
};

static void *worker(void *arg) {
  ((void (*)(void))arg)();
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dot_peak THREADS [REPS]\n");
    return 2;
  }
  int threads = atoi(argv[1]);
  if (argc > 2)
    reps = atol(argv[2]);
  if (threads < 1 || threads > 256 || reps < 1) {
    fprintf(stderr, "dot_peak: THREADS in [1, 256], REPS >= 1\n");
    return 2;
  }
  struct kind kinds[] = {
      {"f32_fma_zmm", "avx512f", NULL, fma_zmm, 16 * 16},
      {"f32_fma_ymm", "avx2", "fma", fma_ymm, 12 * 8},
      {"bf16_dpbf16ps_zmm", "avx512bf16", NULL, bf16_zmm, 16 * 32},
      {"int8_vpdpbusd_zmm", "avx512vnni", NULL, vnni_zmm, 16 * 64},
      {"int8_vpdpbusd_ymm", "avxvnni", NULL, vnni_ymm, 12 * 32},
  };
  __builtin_cpu_init();
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    struct kind *K = &kinds[k];
    int ok = 1;
    /* __builtin_cpu_supports needs literal names. */
    if (K->fn == fma_zmm) ok = __builtin_cpu_supports("avx512f");
    if (K->fn == fma_ymm) ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (K->fn == bf16_zmm) ok = __builtin_cpu_supports("avx512bf16");
    if (K->fn == vnni_zmm) ok = __builtin_cpu_supports("avx512vnni");
    if (K->fn == vnni_ymm) ok = __builtin_cpu_supports("avxvnni");
    if (!ok) {
      printf("%s n/a\n", K->name);
      continue;
    }
    pthread_t tid[256];
    double t0 = now();
    for (int t = 0; t < threads; ++t)
      pthread_create(&tid[t], NULL, worker, (void *)K->fn);
    for (int t = 0; t < threads; ++t)
      pthread_join(tid[t], NULL);
    double dt = now() - t0;
    printf("%s %.1f\n", K->name, threads * (double)reps * K->macsPerIter / dt / 1e9);
  }
  return 0;
}

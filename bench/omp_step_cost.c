/* What a step of a parallel time loop costs in synchronisation alone, with
 * LLVM's libomp: a team forked and joined per step (an `omp parallel for`
 * inside the time loop, what convert-scf-to-openmp makes of an scf.parallel
 * there) against one team for the whole loop with an OpenMP barrier per step
 * (what convert-rnn-to-cpu emits for a layer with threads > 1) and against a
 * hand-written spin barrier (a floor for any barrier). The work per step is a few additions, so the
 * figures are the synchronisation.
 *
 *   clang-22 -O2 -fopenmp=libomp bench/omp_step_cost.c -o /tmp/omp_step_cost \
 *     -L/usr/lib/llvm-22/lib -Wl,-rpath,/usr/lib/llvm-22/lib
 *   OMP_PLACES=cores /tmp/omp_step_cost [threads] [steps]
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static volatile float sink[64 * 16];
static void work(int i) {
  for (int k = 0; k < 50; k++)
    sink[i * 16] += k;
}

static _Atomic int arrived = 0, generation = 0;
static void spin_barrier(int n) {
  int g = atomic_load_explicit(&generation, memory_order_relaxed);
  if (atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel) == n - 1) {
    atomic_store_explicit(&arrived, 0, memory_order_relaxed);
    atomic_store_explicit(&generation, g + 1, memory_order_release);
  } else {
    while (atomic_load_explicit(&generation, memory_order_acquire) == g)
      __builtin_ia32_pause();
  }
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  int steps = argc > 2 ? atoi(argv[2]) : 100000;
  if (threads < 1 || threads > 64 || steps < 1) {
    fprintf(stderr, "usage: %s [threads 1..64] [steps]\n", argv[0]);
    return 2;
  }
  printf("threads %d, steps %d, us per step (3 repeats)\n", threads, steps);
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now_us();
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int i = 0; i < threads; i++)
        work(i);
    }
    double t1 = now_us();
#pragma omp parallel num_threads(threads)
    {
      int id = omp_get_thread_num();
      for (int s = 0; s < steps; s++) {
        work(id);
#pragma omp barrier
      }
    }
    double t2 = now_us();
#pragma omp parallel num_threads(threads)
    {
      int id = omp_get_thread_num(), n = omp_get_num_threads();
      for (int s = 0; s < steps; s++) {
        work(id);
        spin_barrier(n);
      }
    }
    double t3 = now_us();
    printf("team per step %.3f   one team + omp barrier %.3f   one team + spin "
           "barrier %.3f\n",
           (t1 - t0) / steps, (t2 - t1) / steps, (t3 - t2) / steps);
  }
  return 0;
}

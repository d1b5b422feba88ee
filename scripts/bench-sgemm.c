// bench-sgemm.c — OpenBLAS sgemm at a linear layer's shape and layout, for
// scripts/bench-gemm.sh: y[M,N] = x[M,K] W[N,K]^T, both row-major (x rows and
// W rows contiguous along K, as fluxcc's kernels read them). Prints one line
// per shape: M N K median_ms min_ms. Not part of fluxcc or the emitted project.
//   cc -O2 -o bench-sgemm scripts/bench-sgemm.c -l:libopenblas.so.0 -lm
//   ./bench-sgemm RUNS M,N,K [M,N,K...]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// cblas_sgemm with its enums as ints (CblasRowMajor 101, CblasNoTrans 111, CblasTrans 112)
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 0;
  if (argc < 3 || runs < 1 || runs > 1000) {
    fprintf(stderr, "usage: bench-sgemm RUNS M,N,K [M,N,K...]\n");
    return 2;
  }
  for (int a = 2; a < argc; a++) {
    int m, n, k;
    if (sscanf(argv[a], "%d,%d,%d", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
      fprintf(stderr, "bench-sgemm: '%s' is not M,N,K\n", argv[a]);
      return 2;
    }
    float *x = malloc(sizeof(float) * (size_t)m * k), *w = malloc(sizeof(float) * (size_t)n * k), *y = malloc(sizeof(float) * (size_t)m * n);
    double *t = malloc(sizeof(double) * (size_t)runs);
    if (!x || !w || !y || !t) return 3;
    for (size_t i = 0; i < (size_t)m * k; i++) x[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    for (size_t i = 0; i < (size_t)n * k; i++) w[i] = (float)((i * 40503u) % 1000) / 1000.0f - 0.5f;
    cblas_sgemm(101, 111, 112, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);  // warm-up
    for (int r = 0; r < runs; r++) {
      double t0 = now_ms();
      cblas_sgemm(101, 111, 112, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
      t[r] = now_ms() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("%d %d %d %.4f %.4f\n", m, n, k, runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2, t[0]);
    free(x), free(w), free(y), free(t);
  }
  return 0;
}

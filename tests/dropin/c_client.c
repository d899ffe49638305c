/* A C application of cuBLAS's DGEMM, as a C or Fortran code calls it, run with and without libks_dgemm.so
 * (preloaded, or linked before cuBLAS): odd shapes and leading dimensions, its own stream, alpha and beta in
 * device memory, a CUDA graph capture, the strided-batched and Ex entry points and their _64 forms. Every
 * result is checked on sampled elements against a host dot product with the suite's bound,
 *   |C - C_ref| <= 2 (K + 2) eps (|alpha| (|A||B|) + |beta| |C0|) + DBL_MIN.
 * Then the status codes of bad calls: each made through the entry point this program is bound to (the library's,
 * where it is in front) and through the real cuBLAS looked up in libcublas itself; they must be equal.
 * With KS_DGEMM_LOG set, the log must show calls routed to the suite and calls routed native.
 * `c_client cost`: instead, the host time per 64^3 call (a call the library sends native) through this program's
 * binding and through libcublas's own symbol, in alternating batches: the library's own cost per call.
 * Exit 0: all passed; 1: a failure (printed); 77: no GPU. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <float.h>
#include <math.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK_CUDA(x)                                                                  \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)
#define CHECK_BLAS(x)                                                                \
  do {                                                                               \
    cublasStatus_t s_ = (x);                                                         \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
      fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, (int)s_);    \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

/* A column-major rows x cols matrix with leading dimension ld (>= rows) on the host, filled with uniform values
 * (the padding too), and its device copy. */
typedef struct {
  int64_t rows, cols, ld;
  double *host, *dev;
} Matrix;

static Matrix matrix(int64_t rows, int64_t cols, int64_t ld) {
  Matrix m = {rows, cols, ld, NULL, NULL};
  size_t n = (size_t)(ld * cols);
  m.host = (double*)malloc(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) m.host[i] = uniform();
  CHECK_CUDA(cudaMalloc((void**)&m.dev, n * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(m.dev, m.host, n * sizeof(double), cudaMemcpyHostToDevice));
  return m;
}
static void release(Matrix* m) {
  free(m->host);
  cudaFree(m->dev);
}

/* Checks 200 sampled elements of C = alpha op(A) op(B) + beta C0 (op N or T), C read back from the device. */
static void check(const char* what, char ta, char tb, int64_t M, int64_t N, int64_t K, double alpha, const Matrix* A,
                  const Matrix* B, double beta, const double* C0, const Matrix* C) {
  size_t n = (size_t)(C->ld * C->cols);
  double* got = (double*)malloc(n * sizeof(double));
  CHECK_CUDA(cudaMemcpy(got, C->dev, n * sizeof(double), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int s = 0; s < 200; ++s) {
    int64_t i = (int64_t)((uniform() + 1) / 2 * M), j = (int64_t)((uniform() + 1) / 2 * N);
    if (s == 0) i = 0, j = 0;
    if (s == 1) i = M - 1, j = N - 1;
    long double ref = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      double a = ta == 'N' ? A->host[i + k * A->ld] : A->host[k + i * A->ld];
      double b = tb == 'N' ? B->host[k + j * B->ld] : B->host[j + k * B->ld];
      ref += (long double)a * b;
      mag += fabsl((long double)a * b);
    }
    double c0 = C0[i + j * C->ld];
    double r = (double)(alpha * ref + (beta != 0 ? beta * c0 : 0));
    double bound = 2.0 * (K + 2) * DBL_EPSILON * (fabs(alpha) * (double)mag + fabs(beta) * fabs(c0)) + DBL_MIN;
    double err = fabs(got[i + j * C->ld] - r);
    if (!(err <= bound)) {
      fprintf(stderr, "FAIL %s: C(%lld, %lld) = %.17g, expected %.17g (bound %.3g)\n", what, (long long)i,
              (long long)j, got[i + j * C->ld], r, bound);
      ++failures;
      break;
    }
    if (err / bound > worst) worst = err / bound;
  }
  /* Rows of C beyond M (the padding up to ldc) must be untouched. */
  for (int64_t j = 0; j < N && C->ld > M; j += N / 7 + 1)
    if (got[M + j * C->ld] != C0[M + j * C->ld]) {
      fprintf(stderr, "FAIL %s: C's padding row %lld written in column %lld\n", what, (long long)M, (long long)j);
      ++failures;
      break;
    }
  printf("%-44s %c%c %5lldx%5lldx%5lld  worst error %.3f of the bound\n", what, ta, tb, (long long)M, (long long)N,
         (long long)K, worst);
  free(got);
}

static double* snapshot(const Matrix* C) {
  size_t n = (size_t)(C->ld * C->cols);
  double* out = (double*)malloc(n * sizeof(double));
  memcpy(out, C->host, n * sizeof(double));
  return out;
}
static void reset(Matrix* C, const double* c0) {
  CHECK_CUDA(cudaMemcpy(C->dev, c0, (size_t)(C->ld * C->cols) * sizeof(double), cudaMemcpyHostToDevice));
}

/* One DGEMM through cublasDgemm_v2 on the handle's current stream and pointer mode. */
static void dgemm_case(cublasHandle_t h, const char* what, char ta, char tb, int M, int N, int K, int pad, double alpha,
                       double beta, int device_scalars) {
  Matrix A = ta == 'N' ? matrix(M, K, M + pad) : matrix(K, M, K + pad);
  Matrix B = tb == 'N' ? matrix(K, N, K + pad) : matrix(N, K, N + pad);
  Matrix C = matrix(M, N, M + pad);
  double* c0 = snapshot(&C);
  double* scalars = NULL;
  const double *pa = &alpha, *pb = &beta;
  if (device_scalars) {
    double s[2] = {alpha, beta};
    CHECK_CUDA(cudaMalloc((void**)&scalars, sizeof s));
    CHECK_CUDA(cudaMemcpy(scalars, s, sizeof s, cudaMemcpyHostToDevice));
    CHECK_BLAS(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    pa = scalars, pb = scalars + 1;
  }
  CHECK_BLAS(cublasDgemm_v2(h, ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, M, N, K,
                            pa, A.dev, (int)A.ld, B.dev, (int)B.ld, pb, C.dev, (int)C.ld));
  CHECK_CUDA(cudaDeviceSynchronize());
  if (device_scalars) {
    CHECK_BLAS(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    cudaFree(scalars);
  }
  check(what, ta, tb, M, N, K, alpha, &A, &B, beta, c0, &C);
  free(c0);
  release(&A), release(&B), release(&C);
}

/* The other entry points, on one shape: batched (2 members, strides with a gap), Ex, and the _64 forms. */
static void entry_point_cases(cublasHandle_t h) {
  const int M = 2305, N = 2050, K = 1031, lda = 2312, ldb = 1040, ldc = 2309;
  const double alpha = 0.75, beta = -0.5;
  const long long sA = (long long)lda * K + 64, sB = (long long)ldb * N + 32, sC = (long long)ldc * N + 8;
  /* Two members laid out as one tall matrix each (member b at offset b * stride). */
  Matrix A = matrix(sA, 2, sA), B = matrix(sB, 2, sB), C = matrix(sC, 2, sC);
  double* c0 = snapshot(&C);
  for (int form = 0; form < 4; ++form) {
    const char* what[] = {"cublasDgemmStridedBatched", "cublasDgemmStridedBatched_64", "cublasGemmStridedBatchedEx",
                          "cublasGemmStridedBatchedEx_64"};
    reset(&C, c0);
    if (form == 0)
      CHECK_BLAS(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, lda, sA, B.dev, ldb, sB,
                                           &beta, C.dev, ldc, sC, 2));
    else if (form == 1)
      CHECK_BLAS(cublasDgemmStridedBatched_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, lda, sA, B.dev, ldb,
                                              sB, &beta, C.dev, ldc, sC, 2));
    else if (form == 2)
      CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, CUDA_R_64F, lda, sA,
                                            B.dev, CUDA_R_64F, ldb, sB, &beta, C.dev, CUDA_R_64F, ldc, sC, 2,
                                            CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    else
      CHECK_BLAS(cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, CUDA_R_64F, lda,
                                               sA, B.dev, CUDA_R_64F, ldb, sB, &beta, C.dev, CUDA_R_64F, ldc, sC, 2,
                                               CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int b = 0; b < 2; ++b) {
      /* Member b as matrices of their own (host and device views into the tall ones). */
      Matrix Ab = {M, K, lda, A.host + b * sA, A.dev + b * sA}, Bb = {K, N, ldb, B.host + b * sB, B.dev + b * sB};
      Matrix Cb = {M, N, ldc, C.host + b * sC, C.dev + b * sC};
      char label[80];
      snprintf(label, sizeof label, "%s member %d", what[form], b);
      check(label, 'N', 'N', M, N, K, alpha, &Ab, &Bb, beta, c0 + b * sC, &Cb);
    }
  }
  for (int form = 0; form < 3; ++form) {
    const char* what[] = {"cublasGemmEx", "cublasGemmEx_64", "cublasDgemm_v2_64"};
    reset(&C, c0);
    if (form == 0)
      CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, CUDA_R_64F, lda, B.dev, CUDA_R_64F,
                              ldb, &beta, C.dev, CUDA_R_64F, ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    else if (form == 1)
      CHECK_BLAS(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, CUDA_R_64F, lda, B.dev,
                                 CUDA_R_64F, ldb, &beta, C.dev, CUDA_R_64F, ldc, CUBLAS_COMPUTE_64F_PEDANTIC,
                                 CUBLAS_GEMM_DEFAULT));
    else
      CHECK_BLAS(cublasDgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, lda, B.dev, ldb, &beta, C.dev,
                                   ldc));
    CHECK_CUDA(cudaDeviceSynchronize());
    Matrix A0 = {M, K, lda, A.host, A.dev}, B0 = {K, N, ldb, B.host, B.dev}, C0 = {M, N, ldc, C.host, C.dev};
    check(what[form], 'N', 'N', M, N, K, alpha, &A0, &B0, beta, c0, &C0);
  }
  free(c0);
  release(&A), release(&B), release(&C);
}

/* A capture into a CUDA graph on the handle's stream, then two launches of the graph. */
static void graph_case(cublasHandle_t h, cudaStream_t s) {
  const int M = 2048, N = 2048, K = 512;
  const double alpha = 1.0, beta = 0.0;
  Matrix A = matrix(M, K, M), B = matrix(K, N, K), C = matrix(M, N, M);
  double* c0 = snapshot(&C);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK_BLAS(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A.dev, M, B.dev, K, &beta, C.dev, M));
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
  CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 2; ++i) CHECK_CUDA(cudaGraphLaunch(ge, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  check("cublasDgemm_v2 captured into a graph", 'N', 'N', M, N, K, alpha, &A, &B, beta, c0, &C);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  free(c0);
  release(&A), release(&B), release(&C);
}

typedef cublasStatus_t (*DgemmFn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                                  const double*, int, const double*, int, const double*, double*, int);
typedef cublasStatus_t (*GemmExFn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                   const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                   cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*BatchedFn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const double*, const double*, int, long long, const double*, int, long long,
                                    const double*, double*, int, long long, int);

/* Bad calls, each through this program's binding and through libcublas's own symbol. */
static void status_cases(cublasHandle_t h) {
  void* lib = dlopen("libcublas.so.13", RTLD_NOLOAD | RTLD_LAZY);
  if (!lib) {
    fprintf(stderr, "FAIL status: libcublas.so.13 is not loaded\n");
    ++failures;
    return;
  }
  DgemmFn real = (DgemmFn)dlsym(lib, "cublasDgemm_v2");
  GemmExFn real_ex = (GemmExFn)dlsym(lib, "cublasGemmEx");
  BatchedFn real_b = (BatchedFn)dlsym(lib, "cublasDgemmStridedBatched");
  double *buf, one = 1;
  CHECK_CUDA(cudaMalloc((void**)&buf, 64 * 64 * sizeof(double)));
  struct {
    const char* what;
    cublasHandle_t h;
    int ta, tb, m, n, k, lda, ldb, ldc;
  } bad[] = {{"null handle", NULL, 0, 0, 8, 8, 8, 8, 8, 8},  {"m < 0", h, 0, 0, -1, 8, 8, 8, 8, 8},
             {"n < 0", h, 0, 0, 8, -1, 8, 8, 8, 8},          {"k < 0", h, 0, 0, 8, 8, -1, 8, 8, 8},
             {"lda < m", h, 0, 0, 8, 8, 8, 7, 8, 8},         {"lda < k (A transposed)", h, 1, 0, 8, 8, 9, 8, 9, 8},
             {"ldb < k", h, 0, 0, 8, 8, 9, 9, 8, 9},         {"ldb < n (B transposed)", h, 0, 1, 8, 9, 8, 8, 8, 8},
             {"ldc < m", h, 0, 0, 9, 8, 8, 9, 8, 8},         {"transa 99", h, 99, 0, 8, 8, 8, 8, 8, 8},
             {"lda 0, m 0", h, 0, 0, 0, 8, 8, 0, 8, 1},      {"all zero", h, 0, 0, 0, 0, 0, 0, 0, 0}};
  int checked = 0;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    cublasStatus_t ours = cublasDgemm_v2(bad[i].h, (cublasOperation_t)bad[i].ta, (cublasOperation_t)bad[i].tb,
                                         bad[i].m, bad[i].n, bad[i].k, &one, buf, bad[i].lda, buf, bad[i].ldb, &one,
                                         buf, bad[i].ldc);
    cublasStatus_t theirs = real(bad[i].h, (cublasOperation_t)bad[i].ta, (cublasOperation_t)bad[i].tb, bad[i].m,
                                 bad[i].n, bad[i].k, &one, buf, bad[i].lda, buf, bad[i].ldb, &one, buf, bad[i].ldc);
    cublasStatus_t ours_ex = cublasGemmEx(bad[i].h, (cublasOperation_t)bad[i].ta, (cublasOperation_t)bad[i].tb,
                                          bad[i].m, bad[i].n, bad[i].k, &one, buf, CUDA_R_64F, bad[i].lda, buf,
                                          CUDA_R_64F, bad[i].ldb, &one, buf, CUDA_R_64F, bad[i].ldc,
                                          CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t theirs_ex = real_ex(bad[i].h, (cublasOperation_t)bad[i].ta, (cublasOperation_t)bad[i].tb, bad[i].m,
                                       bad[i].n, bad[i].k, &one, buf, CUDA_R_64F, bad[i].lda, buf, CUDA_R_64F,
                                       bad[i].ldb, &one, buf, CUDA_R_64F, bad[i].ldc, CUBLAS_COMPUTE_64F,
                                       CUBLAS_GEMM_DEFAULT);
    cublasStatus_t ours_b = cublasDgemmStridedBatched(bad[i].h, (cublasOperation_t)bad[i].ta,
                                                      (cublasOperation_t)bad[i].tb, bad[i].m, bad[i].n, bad[i].k, &one,
                                                      buf, bad[i].lda, 0, buf, bad[i].ldb, 0, &one, buf, bad[i].ldc, 0,
                                                      i % 2 ? -1 : 1);
    cublasStatus_t theirs_b = real_b(bad[i].h, (cublasOperation_t)bad[i].ta, (cublasOperation_t)bad[i].tb, bad[i].m,
                                     bad[i].n, bad[i].k, &one, buf, bad[i].lda, 0, buf, bad[i].ldb, 0, &one, buf,
                                     bad[i].ldc, 0, i % 2 ? -1 : 1);
    if (ours != theirs || ours_ex != theirs_ex || ours_b != theirs_b) {
      fprintf(stderr, "FAIL status, %s: %d %d %d here, %d %d %d from the real cuBLAS\n", bad[i].what, (int)ours,
              (int)ours_ex, (int)ours_b, (int)theirs, (int)theirs_ex, (int)theirs_b);
      ++failures;
    }
    checked += 3;
  }
  /* A type the library does not take: an FP32 GemmEx on FP64 compute. */
  cublasStatus_t ours = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, buf, CUDA_R_32F, 8, buf, CUDA_R_32F, 8,
                                     &one, buf, CUDA_R_32F, 8, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  cublasStatus_t theirs = real_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, buf, CUDA_R_32F, 8, buf, CUDA_R_32F, 8,
                                  &one, buf, CUDA_R_32F, 8, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  if (ours != theirs) {
    fprintf(stderr, "FAIL status, FP32 data with FP64 compute: %d here, %d from the real cuBLAS\n", (int)ours,
            (int)theirs);
    ++failures;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaFree(buf);
  printf("status codes of %d bad calls: as the real cuBLAS's\n", checked + 1);
}

/* With KS_DGEMM_LOG: the log shows calls the suite ran and calls it declined (the lines this run appended, after
 * `from` bytes). */
static long log_size(void) {
  const char* path = getenv("KS_DGEMM_LOG");
  FILE* f = path && *path ? fopen(path, "r") : NULL;
  long n = 0;
  if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (f) fclose(f);
  return n;
}
static void log_check(long from) {
  const char* path = getenv("KS_DGEMM_LOG");
  if (!path || !*path || !getenv("KS_EXPECT_SUITE_ROUTES")) return;
  FILE* f = fopen(path, "r");
  int suite = 0, native = 0;
  char line[1024];
  if (f) fseek(f, from, SEEK_SET);
  while (f && fgets(line, sizeof line, f)) {
    if (strstr(line, "route=native")) ++native;
    else if (strstr(line, "route=")) ++suite;
  }
  if (f) fclose(f);
  printf("log: %d calls on the suite's kernels, %d native\n", suite, native);
  if (suite == 0 || native == 0) {
    fprintf(stderr, "FAIL log %s: %d suite routes, %d native (both expected)\n", path, suite, native);
    ++failures;
  }
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}
static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Host microseconds per 64^3 cublasDgemm_v2 call through `fn`: `calls` calls queued back to back on the handle's
 * stream, then a wait for the stream (outside the timed part). */
static double batch_us(DgemmFn fn, cublasHandle_t h, cudaStream_t s, const double* x, double* y, int calls) {
  const double one = 1, zero = 0;
  const double t = now_us();
  for (int i = 0; i < calls; ++i) CHECK_BLAS(fn(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, x, 64, x, 64, &zero, y, 64));
  const double per_call = (now_us() - t) / calls;
  CHECK_CUDA(cudaStreamSynchronize(s));
  return per_call;
}

/* The library's own cost per call: 21 alternating pairs of batches of 500 calls, through this program's binding
 * (the library's entry point where it is in front) and through libcublas's own symbol; the medians. */
static int cost(cublasHandle_t h, cudaStream_t s) {
  void* lib = dlopen("libcublas.so.13", RTLD_NOLOAD | RTLD_LAZY);
  DgemmFn real = lib ? (DgemmFn)dlsym(lib, "cublasDgemm_v2") : NULL;
  if (!real) {
    fprintf(stderr, "FAIL cost: libcublas.so.13's cublasDgemm_v2 is not loaded\n");
    return 1;
  }
  double *x, *y;
  CHECK_CUDA(cudaMalloc((void**)&x, 64 * 64 * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void**)&y, 64 * 64 * sizeof(double)));
  CHECK_CUDA(cudaMemset(x, 0, 64 * 64 * sizeof(double)));
  enum { kPairs = 21, kCalls = 500 };
  double bound[kPairs], own[kPairs];
  batch_us(cublasDgemm_v2, h, s, x, y, kCalls); /* warm-up: handles, kernels, the library's lookups */
  batch_us(real, h, s, x, y, kCalls);
  for (int i = 0; i < kPairs; ++i) { /* each pair in the other order than the last */
    if (i % 2 == 0) bound[i] = batch_us(cublasDgemm_v2, h, s, x, y, kCalls);
    own[i] = batch_us(real, h, s, x, y, kCalls);
    if (i % 2 == 1) bound[i] = batch_us(cublasDgemm_v2, h, s, x, y, kCalls);
  }
  qsort(bound, kPairs, sizeof(double), by_value);
  qsort(own, kPairs, sizeof(double), by_value);
  printf("host us per 64^3 cublasDgemm_v2 call (median of %d batches of %d): %.3f through this program's binding, "
         "%.3f through libcublas's own symbol: %+.3f us\n",
         kPairs, kCalls, bound[kPairs / 2], own[kPairs / 2], bound[kPairs / 2] - own[kPairs / 2]);
  cudaFree(x);
  cudaFree(y);
  return 0;
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no GPU: skipped\n");
    return 77;
  }
  if (argc == 2 && strcmp(argv[1], "cost") == 0) {
    cublasHandle_t h;
    cudaStream_t s;
    CHECK_BLAS(cublasCreate_v2(&h));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_BLAS(cublasSetStream_v2(h, s));
    const int rc = cost(h, s);
    cublasDestroy_v2(h);
    cudaStreamDestroy(s);
    return rc;
  }
  const long log_from = log_size();
  cublasHandle_t h;
  cudaStream_t s;
  CHECK_BLAS(cublasCreate_v2(&h));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_BLAS(cublasSetStream_v2(h, s));
  dgemm_case(h, "cublasDgemm_v2, even leading dimensions", 'N', 'N', 2305, 2051, 1031, 7, 0.75, -0.5, 0);
  dgemm_case(h, "cublasDgemm_v2, odd lda", 'N', 'N', 2304, 2304, 1024, 1, 1.0, 0.0, 0);
  dgemm_case(h, "cublasDgemm_v2, alpha and beta on the device", 'N', 'N', 2304, 2304, 1024, 0, 2.0, 1.0, 1);
  dgemm_case(h, "cublasDgemm_v2, A transposed", 'T', 'N', 777, 513, 1025, 3, 1.0, 0.25, 0);
  dgemm_case(h, "cublasDgemm_v2, both transposed", 'T', 'T', 130, 70, 33, 2, -1.0, 0.0, 0);
  dgemm_case(h, "cublasDgemm_v2, small", 'N', 'N', 64, 64, 64, 0, 1.0, 0.0, 0);
  dgemm_case(h, "cublasDgemm_v2, large (ozaki where its rule says)", 'N', 'N', 4096, 4096, 4096, 0, 1.0, 0.0, 0);
  entry_point_cases(h);
  graph_case(h, s);
  status_cases(h);
  log_check(log_from);
  cublasDestroy_v2(h);
  cudaStreamDestroy(s);
  printf(failures ? "c_client: %d FAILED\n" : "c_client: all passed\n", failures);
  return failures ? 1 : 0;
}

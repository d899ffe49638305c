// cublas: the anchor of the DGEMM ladder. cublasGemmEx with FP64 data and compute type CUBLAS_COMPUTE_64F, math mode
// CUBLAS_DEFAULT_MATH and host pointer mode, pinned on every call so that nothing set elsewhere on the
// handle changes what is measured. On sm_80+ cuBLAS uses the FP64 tensor cores (DMMA), which are IEEE FP64.
#include "gemm/gemm.hpp"

namespace ks::gemm {

extern const char* const kCublasConfig;
const char* const kCublasConfig =
    "cublasGemmEx CUDA_R_64F, CUBLAS_COMPUTE_64F, CUBLAS_DEFAULT_MATH, CUBLAS_GEMM_DEFAULT";

namespace {

void launch(const GemmArgs& a, ExecContext& ctx) {
  cublasHandle_t h = ctx.cublas();
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, a.M, a.N, a.K, &a.alpha, a.A, CUDA_R_64F, a.lda,
                            a.B, CUDA_R_64F, a.ldb, &a.beta, a.C, CUDA_R_64F, a.ldc, CUBLAS_COMPUTE_64F,
                            CUBLAS_GEMM_DEFAULT));
}

}  // namespace

KS_GEMM_VARIANT({.info = {.name = "cublas",
                          .summary = "cuBLAS DGEMM (cublasGemmEx, CUBLAS_COMPUTE_64F, default math): the anchor",
                          .anchor = true},
                 .launch = launch});

}  // namespace ks::gemm

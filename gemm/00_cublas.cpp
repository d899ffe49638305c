// cublas: the anchor of the DGEMM ladder, in all four op(A) op(B) combinations. cublasGemmEx with FP64 data and compute type CUBLAS_COMPUTE_64F, math mode
// CUBLAS_DEFAULT_MATH and host pointer mode, pinned on every call so that nothing set elsewhere on the
// handle changes what is measured. On sm_80+ cuBLAS uses the FP64 tensor cores (DMMA), which are IEEE FP64.
// Run: build/bench/kbench run --suite gemm --variants 'cublas.*' --sizes 1024,2048,4096
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
  CUBLAS_CHECK(cublasGemmEx(h, cublas_op(a.transa), cublas_op(a.transb), a.M, a.N, a.K, &a.alpha, a.A, CUDA_R_64F, a.lda,
                            a.B, CUDA_R_64F, a.ldb, &a.beta, a.C, CUDA_R_64F, a.ldc, CUBLAS_COMPUTE_64F,
                            CUBLAS_GEMM_DEFAULT));
}

// cuBLAS's own FP64 emulation on the integer tensor cores (CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, mantissa
// bits chosen at run time for native accuracy): the reference ozaki is held against. `strategy` DEFAULT lets
// cuBLAS run native where it judges emulation slower; EAGER emulates wherever it can. Its slices and products
// take more workspace than the handle's 32 MiB: int8 slices of A and B and wide products, given generously.
void launch_emulated(const GemmArgs& a, ExecContext& ctx, cublasEmulationStrategy_t strategy) {
  const std::size_t mk = static_cast<std::size_t>(a.M) * a.K, kn = static_cast<std::size_t>(a.K) * a.N,
                    mn = static_cast<std::size_t>(a.M) * a.N;
  cublasHandle_t h = ctx.cublas_with_workspace(8 * (mk + kn) + 16 * mn + (32u << 20));
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  CUBLAS_CHECK(cublasSetEmulationStrategy(h, strategy));
  const cublasStatus_t st = cublasGemmEx(h, cublas_op(a.transa), cublas_op(a.transb), a.M, a.N, a.K, &a.alpha, a.A, CUDA_R_64F, a.lda,
                                         a.B, CUDA_R_64F, a.ldb, &a.beta, a.C, CUDA_R_64F, a.ldc,
                                         CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, CUBLAS_GEMM_DEFAULT);
  CUBLAS_CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_DEFAULT));
  ctx.restore_cublas_workspace();
  CUBLAS_CHECK(st);
}

}  // namespace

KS_GEMM_VARIANT({.info = {.name = "cublas",
                          .summary = "cuBLAS DGEMM (cublasGemmEx, CUBLAS_COMPUTE_64F, default math): the anchor",
                          .anchor = true},
                 .launch = launch,
                 .suite_modes = SuiteModes::All,
                 .ops = kOpsAll});
KS_GEMM_VARIANT({.info = {.name = "cublas_emulated",
                          .summary = "cuBLAS's FP64 emulation (CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT), its default "
                                     "strategy: emulated where cuBLAS judges it faster"},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) {
                   launch_emulated(a, ctx, CUBLAS_EMULATION_STRATEGY_DEFAULT);
                 },
                 .ops = kOpsAll});
KS_GEMM_VARIANT({.info = {.name = "cublas_emulated_eager",
                          .summary = "cuBLAS's FP64 emulation, strategy eager: emulated wherever cuBLAS can"},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) {
                   launch_emulated(a, ctx, CUBLAS_EMULATION_STRATEGY_EAGER);
                 },
                 .ops = kOpsAll});

}  // namespace ks::gemm

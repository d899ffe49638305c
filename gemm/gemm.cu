// The DGEMM family's registry and entry point (gemm/gemm.hpp): argument checks and the BLAS rules that need
// no product, applied once here for every variant.
#include "gemm/kernel_common.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ks::gemm {

GemmRegistry& registry() {
  static GemmRegistry r("gemm");
  return r;
}

const std::vector<LeftOut>& hip_left_out() {
  static const std::vector<LeftOut> rows{
      {"gemm/00_cublas.cpp", {"cublas", "cublas_emulated", "cublas_emulated_eager"},
       "cuBLAS, NVIDIA's library (cuBLASXt, the host modes' anchor, likewise); Debian packages no rocBLAS to stand in"},
      {"gemm/05_warp_tiled.cu", {"warp_tiled_128x128"},
       "two 128x128 stages take 73 KiB of shared memory; a gfx9 block has 64 KiB of LDS"},
      {"gemm/06_dmma.cu",
       {"dmma", "dmma_128x128", "dmma_128x128_k32", "dmma_128x64", "dmma_64x64", "dmma_64x64_splitk",
        "dmma_128x128_m8n8k4"},
       "NVIDIA's FP64 tensor-core instruction (mma.sync f64) and cp.async; gfx90a's FP64 matrix instructions (MFMA) "
       "would need a kernel of their own, not written"},
      {"gemm/07_ozaki",
       {"ozaki", "ozaki_14", "ozaki_16", "ozaki_14_pipelined", "ozaki_14_cublaslt", "ozaki_norm_pow2",
        "ozaki_max_scaling", "ozaki_accurate", "ozaki_14_accurate"},
       "its INT8 products are cuBLASLt's, or Hopper's (wgmma, TMA)"},
      {"gemm/08_dmma_tma.cu",
       {"dmma_tma", "dmma_tma_128x128_k32", "dmma_tma_128x64_k32_w32", "dmma_tma_128x128", "dmma_tma_128x64",
        "dmma_tma_64x128_k32_w32", "dmma_tma_128x128_tmastore", "dmma_tma_128x32_k32_2g", "dmma_tma_32x128_k32_2g",
        "dmma_tma_128x64_k32_2g", "dmma_tma_64x128_k32_2g", "dmma_tma_128x128_k32_whole"},
       "Hopper's TMA, mbarriers and setmaxnreg, and FP64 tensor cores"},
      {"gemm/09_skinny.cu", {"skinny"},
       "dmma_tma's partner for thin C: cp.async, 32-lane shuffle sums, FP64 tensor cores, and Hopper's bulk copies"},
  };
  return rows;
}

std::string ops_names(unsigned ops) {
  std::string out;
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      if (ops & op_bit(a, b)) {
        if (!out.empty()) out += ',';
        out += ops_name(a, b);
      }
  return out;
}

Op parse_op(char c) {
  switch (c) {
    case 'N': case 'n': return Op::N;
    case 'T': case 't': case 'C': case 'c': return Op::T;
    default: throw std::invalid_argument(std::string("op '") + c + "' is not N, T or C");
  }
}

void check_args(const GemmArgs& a) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("DGEMM arguments: " + why); };
  const std::string dims = std::to_string(a.M) + ", " + std::to_string(a.N) + ", " + std::to_string(a.K);
  if (a.M < 0 || a.N < 0 || a.K < 0) fail("M, N, K must be >= 0 (got " + dims + ")");
  // The kernels index rows, columns and k in int and step past the last tile (i0 + BM, k0 + BK, ceil_div):
  // dimensions within kDimMargin of INT_MAX would overflow there.
  if (a.M > kMaxDim || a.N > kMaxDim || a.K > kMaxDim)
    fail("M, N, K must be <= " + std::to_string(kMaxDim) + " (got " + dims + ")");
  // As BLAS: the leading dimensions against the stored shapes (A is K x M for op T, B is N x K).
  const bool ta = a.transa == Op::T, tb = a.transb == Op::T;
  if (a.lda < std::max(1, a_rows(a)))
    fail("lda (" + std::to_string(a.lda) + ") < max(1, " + (ta ? "K) (K = " : "M) (M = ") + std::to_string(a_rows(a)) +
         (ta ? ", op(A) = A^T" : "") + ")");
  if (a.ldb < std::max(1, b_rows(a)))
    fail("ldb (" + std::to_string(a.ldb) + ") < max(1, " + (tb ? "N) (N = " : "K) (K = ") + std::to_string(b_rows(a)) +
         (tb ? ", op(B) = B^T" : "") + ")");
  if (a.ldc < std::max(1, a.M)) fail("ldc (" + std::to_string(a.ldc) + ") < max(1, M) (M = " + std::to_string(a.M) + ")");
  const bool empty = a.M == 0 || a.N == 0;
  const bool reads_ab = !empty && a.K > 0 && a.alpha != 0.0;
  if (reads_ab && (!a.A || !a.B)) fail("null A or B");
  if (!empty && !a.C) fail("null C");
}

namespace {

// C = beta * C over the M x N valid elements; C is not read when beta == 0.
__global__ void scale_c_kernel(GemmArgs a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= a.M) return;
  for (int j = blockIdx.y; j < a.N; j += gridDim.y) {
    double* c = a.C + i + static_cast<size_t>(j) * a.ldc;
    *c = a.beta == 0.0 ? 0.0 : a.beta * *c;
  }
}

}  // namespace

void run(const GemmVariant& v, const GemmArgs& a, ExecContext& ctx) {
  if (!v.runs(a.transa, a.transb))
    throw std::invalid_argument(v.info.name + " runs op(A) op(B) = " + ops_names(v.ops) + " only, not " +
                                ops_name(a.transa, a.transb) + " (no transposing copy is made for it)");
  check_args(a);
  if (a.M == 0 || a.N == 0) return;
  ctx.begin_launch();
  if (a.alpha == 0.0 || a.K == 0) {
    if (a.beta == 1.0) return;
    const dim3 grid(ceil_div(a.M, 256), std::min(a.N, 65535));
    scale_c_kernel<<<grid, 256, 0, ctx.stream()>>>(a);
    CUDA_CHECK_LAUNCH();
    return;
  }
  v.launch(a, ctx);
}

}  // namespace ks::gemm

#include "gemm/gemm.hpp"

#include <stdexcept>
#include <string>

namespace ks::gemm {

void check_args(const GemmArgs& a) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("DGEMM arguments: " + why); };
  if (a.M < 1 || a.N < 1 || a.K < 1)
    fail("M, N, K must be >= 1 (got " + std::to_string(a.M) + ", " + std::to_string(a.N) + ", " +
         std::to_string(a.K) + ")");
  // The kernels index rows, columns and k in int and step past the last tile (i0 + BM, k0 + BK, ceil_div):
  // dimensions within kDimMargin of INT_MAX would overflow there.
  if (a.M > kMaxDim || a.N > kMaxDim || a.K > kMaxDim)
    fail("M, N, K must be <= " + std::to_string(kMaxDim) + " (got " + std::to_string(a.M) + ", " +
         std::to_string(a.N) + ", " + std::to_string(a.K) + ")");
  if (a.lda < a.M) fail("lda (" + std::to_string(a.lda) + ") < M (" + std::to_string(a.M) + ")");
  if (a.ldb < a.K) fail("ldb (" + std::to_string(a.ldb) + ") < K (" + std::to_string(a.K) + ")");
  if (a.ldc < a.M) fail("ldc (" + std::to_string(a.ldc) + ") < M (" + std::to_string(a.M) + ")");
  if (!a.A || !a.B || !a.C) fail("null matrix pointer");
}

}  // namespace ks::gemm

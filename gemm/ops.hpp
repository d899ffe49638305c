// op(A) and op(B) of the DGEMM family, in a header of its own so that host-only code (the drop-in library's
// routing rule, the problem's description) reads the same names and bit sets as the variants without the CUDA
// headers.
#pragma once

#include <string>

namespace ks::gemm {

// op(X): X as stored (N) or its transpose (T). BLAS's C (conjugate transpose) is T for real data.
enum class Op : unsigned char { N, T };

// Sets of op(A) op(B) combinations, one bit each: bit 2 a + b for Op a, b.
constexpr unsigned op_bit(Op a, Op b) { return 1u << (2 * static_cast<unsigned>(a) + static_cast<unsigned>(b)); }
constexpr unsigned kOpsNN = op_bit(Op::N, Op::N);
constexpr unsigned kOpsAll = 0xFu;

// "NN", "NT", "TN", "TT": op(A) then op(B).
inline std::string ops_name(Op a, Op b) {
  const char name[3] = {a == Op::N ? 'N' : 'T', b == Op::N ? 'N' : 'T', '\0'};
  return name;
}

}  // namespace ks::gemm

// The DGEMM family's size limit, in a header of its own so that host-only code (kbench's parsers, the drop-in
// library's routing rule) reads the same number as the kernels without the CUDA headers.
#pragma once

namespace ks::gemm {

// The largest M, N or K: INT_MAX less a margin for the kernels' int tile arithmetic (i0 + BM past the last tile,
// k0 + BK, ceil_div).
constexpr int kDimMargin = 1024;
constexpr int kMaxDim = 2147483647 - kDimMargin;

}  // namespace ks::gemm

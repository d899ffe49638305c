// The FP64 tensor-core instruction that the dmma (gemm/06_dmma.cu) and dmma_tma (gemm/08_dmma_tma.cu) kernels
// issue: one 16x8x16 multiply-accumulate, as mma.sync.m16n8k16 (sm_90, DMMA.16x8x16) or as eight
// mma.sync.m8n8k4 (sm_80/86).
#pragma once

#include "gemm/dmma_shapes.hpp"

namespace ks::gemm::dmma {

// c += a * b for one 16x8x16 tile. Fragments (PTX ISA, "matrix fragments for mma.m16n8k16", f64): lane 4 g + t
// holds A(g + 8 (i % 2), t + 4 (i / 2)) in a[i], B(t + 4 i, g) in b[i], and C(g + 8 (r / 2), 2 t + r % 2) in c[r];
// the m8n8k4 path feeds the same fragments to eight m8n8k4 instructions.
template <Instr I>
__device__ __forceinline__ void mma_16x8x16(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
  if constexpr (I == Instr::K16) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    __trap();  // the host never launches K16 on code compiled below sm_90
#endif
  } else {
#if __CUDA_ARCH__ >= 800
#pragma unroll
    for (int j = 0; j < 4; ++j) {  // k = 4j .. 4j+3: rows 0-7 from a[2j], rows 8-15 from a[2j+1]
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                   : "+d"(c[0]), "+d"(c[1])
                   : "d"(a[2 * j]), "d"(b[j]));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                   : "+d"(c[2]), "+d"(c[3])
                   : "d"(a[2 * j + 1]), "d"(b[j]));
    }
#else
    __trap();
#endif
  }
}

}  // namespace ks::gemm::dmma

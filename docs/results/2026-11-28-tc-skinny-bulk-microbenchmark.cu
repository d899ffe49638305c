// Experiment (not in the tree): the skinny kernel's tensor-core dot form (C of at most 8 rows or columns, the large
// operand Y contiguous along k) with Y brought into shared memory by bulk copies (cp.async.bulk, one per column and
// stage, completing on an mbarrier) instead of each lane's 16-byte global loads; against the tree's form (global
// loads, optionally with an L2 prefetch-size hint), cublasDgemm and a read-ceiling kernel, in one process.
//   dot form: out^T(l, s) = sum_k Y(l, k) X(s, k) as m16n8k16 with M = 16 columns l, N = 8 rows s.
//   NN few rows:     C (S x L) = A (S x K) B (K x L): Y(l, k) = B(k, l), X(s, k) = A(s, k) (s contiguous).
//   TN few columns:  C (L x S) = A^T B, A (K x L), B (K x S): Y(l, k) = A(k, l), X(s, k) = B(k, s) (k contiguous).
// Build: nvcc -O3 -std=c++17 -arch=sm_90a tcbulk.cu -lcublas -o tcbulk; run: tcbulk [rounds] [shape (ncu: each once)]
// As recorded (docs/gemm-notes.md, step 61): the third run's shapes and variants. The first run's list had the tree's
// form with and without the L2::256B hint and tcbulk at 2-6 stages, 4 or 8 warps, with and without evict-first; the
// second added tcwide (its stage loop then without the turn, the same as ROT = 0 here). The fourth run's change
// (copying lanes and the stage release) is the -lanes-and-release.patch beside this file.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

struct P {
  const double* X;
  long long xrs, xcs;
  const double* Y;
  long long ldy;
  double* out;
  long long ors, ocs;  // out(s, l) at s ors + l ocs
  int S, L, K;
};

__device__ __forceinline__ void mma16(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
        "d"(b[2]), "d"(b[3]));
}

__device__ __forceinline__ double2 ld_hint(const double* p) {
  double2 v;
  asm volatile("ld.global.cs.L2::256B.v2.f64 {%0, %1}, [%2];\n" : "=d"(v.x), "=d"(v.y) : "l"(p));
  return v;
}

// ---- the tree's dot form (gemm/09_skinny.cu tc_dot_kernel, K unsplit): lane 4 g + t reads 8 contiguous k of
// columns g and g + 8 (four 16-byte loads each). HINT: the loads with the L2::256B prefetch-size hint. ----
template <int HINT, int ROT = 0>
__global__ void __launch_bounds__(256, 2) tcdot(P f) {
  constexpr int W = 8, CH = 8, KC = 32;
  __shared__ double red[W][16 * 8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = (f.L + 15) / 16, chunks = (f.K + KC - 1) / KC;
  for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int l0 = grp * 16;
    double c[4] = {};
    double2 y[2][CH / 2];
    double x[CH];
    const int rot = ROT ? (grp * ROT) % chunks : 0;  // each group starts its sweep of k elsewhere
    const auto load = [&](int ch) {
      ch = ch + rot < chunks ? ch + rot : ch + rot - chunks;
      const int k0 = ch * KC + CH * t;
      const bool whole = ch * KC + KC <= f.K;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int l = l0 + g + 8 * h;
        const double* p = f.Y + static_cast<long long>(l < f.L ? l : 0) * f.ldy + k0;
#pragma unroll
        for (int u = 0; u < CH / 2; ++u) {
          const int k = k0 + 2 * u;
          if (l >= f.L)
            y[h][u] = make_double2(0.0, 0.0);
          else if (whole)
            y[h][u] = HINT ? ld_hint(p + 2 * u) : __ldcs(reinterpret_cast<const double2*>(p + 2 * u));
          else
            y[h][u] = make_double2(k < f.K ? __ldcs(p + 2 * u) : 0.0, k + 1 < f.K ? __ldcs(p + 2 * u + 1) : 0.0);
        }
      }
#pragma unroll
      for (int e = 0; e < CH; ++e) x[e] = g < f.S && k0 + e < f.K ? __ldg(f.X + g * f.xrs + (k0 + e) * f.xcs) : 0.0;
    };
    const auto compute = [&] {
#pragma unroll
      for (int j = 0; j < CH / 4; ++j) {
        double a[8], b[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) b[q] = x[4 * j + q];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const double2 v = y[i % 2][(4 * j + i / 2) / 2];
          a[i] = (i / 2) % 2 ? v.y : v.x;
        }
        mma16(c, a, b);
      }
    };
    if (warp < chunks) load(warp);
    for (int ch = warp; ch < chunks; ch += W) {
      compute();
      if (ch + W < chunks) load(ch + W);
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) red[warp][(g + 8 * (r / 2)) * 8 + 2 * t + r % 2] = c[r];
    __syncthreads();
    for (int e = threadIdx.x; e < 128; e += 256) {
      double v = 0;
      for (int w = 0; w < W; ++w) v += red[w][e];
      if (e % 8 < f.S && l0 + e / 8 < f.L) f.out[(e % 8) * f.ors + (l0 + e / 8) * f.ocs] = v;
    }
    __syncthreads();
  }
}

// ---- bulk form: warp W (one lane) copies each stage's 16 columns x KS k of Y into shared memory (one
// cp.async.bulk a column, PITCH doubles apart: consecutive columns 64 bytes apart in the banks); W consumer warps
// each take KS / W of the stage's k, 32 at a time: lane 4 g + t reads k 2 t + 8 u (u = 0..3) of columns g and g + 8
// (16-byte shared loads, conflict-free) and X's row g at the same k from global memory. Element e of the lane is
// k 8 (e / 2) + 2 t + e % 2; MMA j takes elements 4 j .. 4 j + 3. EF: the copies with an L2 evict-first policy. ----
__device__ __forceinline__ uint32_t sa(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void bwait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

template <int KS, int NST, int W, int MINB, int EF>
__global__ void __launch_bounds__(32 * (W + 1), MINB) tcbulk(P f) {
  constexpr int PITCH = KS + 8, KW = KS / W;
  static_assert(KW % 32 == 0, "a warp's share of a stage is whole 32-k chunks");
  extern __shared__ __align__(128) double smem[];  // NST x 16 x PITCH, then red[W][128]
  __shared__ __align__(8) uint64_t full[NST], empty[NST];
  double* red = smem + NST * 16 * PITCH;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = (f.L + 15) / 16, stages = (f.K + KS - 1) / KS;
  if (threadIdx.x == 0) {
    for (int s = 0; s < NST; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sa(full + s)), "r"(1) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sa(empty + s)), "r"(W) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp == W) {
    if (lane == 0) {
      uint64_t policy = 0;
      if (EF) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
      int it = 0;
      for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        const int l0 = grp * 16, ncols = min(16, f.L - l0);
        for (int st = 0; st < stages; ++st, ++it) {
          const int s = it % NST;
          if (it >= NST) bwait(sa(empty + s), ((it / NST) & 1) ^ 1);
          const int k0 = st * KS, bytes = min(KS, f.K - k0) * 8;
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sa(full + s)),
                       "r"(bytes * ncols)
                       : "memory");
          for (int col = 0; col < ncols; ++col) {
            const double* src = f.Y + static_cast<long long>(l0 + col) * f.ldy + k0;
            const uint32_t dst = sa(smem + (s * 16 + col) * PITCH);
            if (EF)
              asm volatile(
                  "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, "
                  "[%3], %4;\n" ::"r"(dst),
                  "l"(src), "r"(bytes), "r"(sa(full + s)), "l"(policy)
                  : "memory");
            else
              asm volatile(
                  "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                      dst),
                  "l"(src), "r"(bytes), "r"(sa(full + s))
                  : "memory");
          }
        }
      }
    }
    return;
  }
  int it = 0;
  for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int l0 = grp * 16;
    double c[4] = {};
    for (int st = 0; st < stages; ++st, ++it) {
      const int s = it % NST;
      bwait(sa(full + s), (it / NST) & 1);
      const double* ys = smem + s * 16 * PITCH;
      const bool whole = (st + 1) * KS <= f.K;
#pragma unroll
      for (int sub = 0; sub < KW / 32; ++sub) {
        const int kk = warp * KW + sub * 32;  // within the stage
        const int kb = st * KS + kk + 2 * t;  // k of the lane's element 0
        double2 y[2][4];
        double x[8];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            y[h][u] = *reinterpret_cast<const double2*>(ys + (g + 8 * h) * PITCH + kk + 8 * u + 2 * t);
            if (!whole) {
              if (kb + 8 * u >= f.K) y[h][u].x = 0.0;
              if (kb + 8 * u + 1 >= f.K) y[h][u].y = 0.0;
            }
          }
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int k = kb + 8 * (e / 2) + e % 2;
          x[e] = g < f.S && k < f.K ? __ldg(f.X + g * f.xrs + static_cast<long long>(k) * f.xcs) : 0.0;
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          double a[8], b[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) b[q] = x[4 * j + q];
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const int e = 4 * j + i / 2;
            const double2 v = y[i % 2][e / 2];
            a[i] = e % 2 ? v.y : v.x;
          }
          mma16(c, a, b);
        }
      }
      __syncwarp();
      if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(sa(empty + s)) : "memory");
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) red[warp * 128 + (g + 8 * (r / 2)) * 8 + 2 * t + r % 2] = c[r];
    asm volatile("bar.sync 1, %0;\n" ::"n"(32 * W) : "memory");
    for (int e = threadIdx.x; e < 128; e += 32 * W) {
      double v = 0;
      for (int w = 0; w < W; ++w) v += red[w * 128 + e];
      if (e % 8 < f.S && l0 + e / 8 < f.L) f.out[(e % 8) * f.ors + (l0 + e / 8) * f.ocs] = v;
    }
    asm volatile("bar.sync 1, %0;\n" ::"n"(32 * W) : "memory");
  }
}


// ---- wide bulk form: as tcbulk, with CG tiles of 16 columns a group (each warp uses its X fragment for all of
// them: X read from L2 once a group of 16 CG columns), the producer warp's lanes issuing the copies, X loaded
// before the stage's wait, and X by 16-byte pairs where its rows are contiguous along k (TN). ----
template <int KS, int NST, int W, int CG, int MINB, int ROT = 0>
__global__ void __launch_bounds__(32 * (W + 1), MINB) tcwide(P f) {
  constexpr int PITCH = KS + 8, KW = KS / W, COLS = 16 * CG;
  static_assert(KW % 32 == 0, "a warp's share of a stage is whole 32-k chunks");
  extern __shared__ __align__(128) double smem[];  // NST x COLS x PITCH, then red[W][COLS * 8]
  __shared__ __align__(8) uint64_t full[NST], empty[NST];
  double* red = smem + NST * COLS * PITCH;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = (f.L + COLS - 1) / COLS, stages = (f.K + KS - 1) / KS;
  if (threadIdx.x == 0) {
    for (int s = 0; s < NST; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sa(full + s)), "r"(1) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sa(empty + s)), "r"(W) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp == W) {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    int it = 0;
    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
      const int l0 = grp * COLS, ncols = min(COLS, f.L - l0);
      const int rot = ROT ? (grp * ROT) % stages : 0;
      for (int i = 0; i < stages; ++i, ++it) {
        const int s = it % NST, st = i + rot < stages ? i + rot : i + rot - stages;
        if (it >= NST) bwait(sa(empty + s), ((it / NST) & 1) ^ 1);
        const int k0 = st * KS, bytes = min(KS, f.K - k0) * 8;
        if (lane == 0)
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sa(full + s)),
                       "r"(bytes * ncols)
                       : "memory");
        __syncwarp();
        for (int col = lane; col < ncols; col += 32) {
          const double* src = f.Y + static_cast<long long>(l0 + col) * f.ldy + k0;
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, "
              "[%3], %4;\n" ::"r"(sa(smem + (s * COLS + col) * PITCH)),
              "l"(src), "r"(bytes), "r"(sa(full + s)), "l"(policy)
              : "memory");
        }
      }
    }
    return;
  }
  const bool xpairs = f.xcs == 1 && f.xrs % 2 == 0 && reinterpret_cast<uintptr_t>(f.X) % 16 == 0;
  int it = 0;
  for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int l0 = grp * COLS;
    double c[CG][4] = {};
    const int rot = ROT ? (grp * ROT) % stages : 0;
    for (int i = 0; i < stages; ++i, ++it) {
      const int s = it % NST, st = i + rot < stages ? i + rot : i + rot - stages;
      const bool whole = (st + 1) * KS <= f.K;
      double x[KW / 32][8];
#pragma unroll
      for (int sub = 0; sub < KW / 32; ++sub) {
        const int kb = st * KS + warp * KW + sub * 32 + 2 * t;
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int k = kb + 8 * u;
          if (xpairs && whole) {
            const double2 v = g < f.S ? __ldg(reinterpret_cast<const double2*>(f.X + g * f.xrs + k)) : make_double2(0, 0);
            x[sub][2 * u] = v.x, x[sub][2 * u + 1] = v.y;
          } else {
            x[sub][2 * u] = g < f.S && k < f.K ? __ldg(f.X + g * f.xrs + static_cast<long long>(k) * f.xcs) : 0.0;
            x[sub][2 * u + 1] = g < f.S && k + 1 < f.K ? __ldg(f.X + g * f.xrs + static_cast<long long>(k + 1) * f.xcs) : 0.0;
          }
        }
      }
      bwait(sa(full + s), (it / NST) & 1);
      const double* ys = smem + s * COLS * PITCH;
#pragma unroll
      for (int sub = 0; sub < KW / 32; ++sub) {
        const int kk = warp * KW + sub * 32;
        const int kb = st * KS + kk + 2 * t;
#pragma unroll
        for (int cg = 0; cg < CG; ++cg) {
          double2 y[2][4];
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int u = 0; u < 4; ++u) {
              y[h][u] = *reinterpret_cast<const double2*>(ys + (16 * cg + g + 8 * h) * PITCH + kk + 8 * u + 2 * t);
              if (!whole) {
                if (kb + 8 * u >= f.K) y[h][u].x = 0.0;
                if (kb + 8 * u + 1 >= f.K) y[h][u].y = 0.0;
              }
            }
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            double a[8], b[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) b[q] = x[sub][4 * j + q];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
              const int e = 4 * j + i / 2;
              const double2 v = y[i % 2][e / 2];
              a[i] = e % 2 ? v.y : v.x;
            }
            mma16(c[cg], a, b);
          }
        }
      }
      __syncwarp();
      if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(sa(empty + s)) : "memory");
    }
#pragma unroll
    for (int cg = 0; cg < CG; ++cg)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[warp * COLS * 8 + (16 * cg + g + 8 * (r / 2)) * 8 + 2 * t + r % 2] = c[cg][r];
    asm volatile("bar.sync 1, %0;\n" ::"n"(32 * W) : "memory");
    for (int e = threadIdx.x; e < COLS * 8; e += 32 * W) {
      double v = 0;
      for (int w = 0; w < W; ++w) v += red[w * COLS * 8 + e];
      if (e % 8 < f.S && l0 + e / 8 < f.L) f.out[(e % 8) * f.ors + (l0 + e / 8) * f.ocs] = v;
    }
    asm volatile("bar.sync 1, %0;\n" ::"n"(32 * W) : "memory");
  }
}

// The read ceiling: every element of Y once, 16-byte streaming loads, four in flight a thread.
__global__ void __launch_bounds__(512) stream_kernel(const double2* p, long long n2, double* sink) {
  double s = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n2; i += 4 * stride) {
    double2 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    s += a.x + a.y + b.x + b.y + c.x + c.y + d.x + d.y;
  }
  for (; i < n2; i += stride) {
    double2 a = __ldcs(p + i);
    s += a.x + a.y;
  }
  if (s == 1234.5) sink[0] = s;
}

struct Var {
  std::string name;
  std::function<void(cudaStream_t)> run;
  bool checks = true;
  std::vector<float> ms;
};

template <class F>
int resident(F kernel, int threads, size_t smem) {
  int b = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads, smem));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return b * sms;
}
template <class F>
int regs(F kernel) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  return a.numRegs;
}

template <int HINT, int ROT = 0>
Var tree(const P& p) {
  const int fit = resident(tcdot<HINT, ROT>, 256, 0), groups = (p.L + 15) / 16;
  char nm[96];
  std::snprintf(nm, sizeof nm, "tree dot%s rot%d [%dr %d/SM]", HINT ? " L2::256B" : "", ROT, regs(tcdot<HINT, ROT>), fit / 132);
  return {nm, [=](cudaStream_t st) { tcdot<HINT, ROT><<<std::min(groups, fit), 256, 0, st>>>(p); }};
}

template <int KS, int NST, int W, int MINB, int EF>
Var bulk(const P& p) {
  const size_t smem = sizeof(double) * (NST * 16 * (KS + 8) + W * 128);
  auto k = tcbulk<KS, NST, W, MINB, EF>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const int fit = resident(k, 32 * (W + 1), smem), groups = (p.L + 15) / 16;
  char nm[96];
  std::snprintf(nm, sizeof nm, "bulk ks%d st%d w%d%s [%dr %zuKB %d/SM]", KS, NST, W, EF ? " ef" : "", regs(k),
                smem / 1024, fit / 132);
  return {nm, [=](cudaStream_t st) { k<<<std::min(groups, fit), 32 * (W + 1), smem, st>>>(p); }};
}

template <int KS, int NST, int W, int CG, int MINB, int ROT = 0>
Var wide(const P& p) {
  const size_t smem = sizeof(double) * (NST * 16 * CG * (KS + 8) + W * 16 * CG * 8);
  auto k = tcwide<KS, NST, W, CG, MINB, ROT>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const int fit = resident(k, 32 * (W + 1), smem), groups = (p.L + 16 * CG - 1) / (16 * CG);
  char nm[96];
  std::snprintf(nm, sizeof nm, "wide ks%d st%d w%d cg%d rot%d [%dr %zuKB %d/SM %.2fw]", KS, NST, W, CG, ROT, regs(k), smem / 1024,
                fit / 132, double(groups) / fit);
  return {nm, [=](cudaStream_t st) { k<<<std::min(groups, fit), 32 * (W + 1), smem, st>>>(p); }};
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  // {TN (1) or NN (0), S, L, K, Y's leading dimension over K}
  const int shapes[][5] = {{0, 8, 16384, 16384, 0}, {0, 8, 16384, 16384, 40}, {0, 8, 32768, 8192, 0},
                           {0, 4, 16384, 16384, 0}, {0, 8, 8192, 8192, 0},    {1, 8, 16384, 16384, 0},
                           {1, 8, 8192, 8192, 0},   {0, 5, 4608, 6144, 0}};
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int only = argc > 2 ? std::atoi(argv[2]) : -1;  // one shape, each variant once (for ncu)
  cublasHandle_t h;
  cublasCreate(&h);
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  cublasSetStream(h, st);
  for (int si = 0; si < static_cast<int>(std::size(shapes)); ++si) {
    if (only >= 0 && si != only) continue;
    const auto& sh = shapes[si];
    const bool tn = sh[0] == 1;
    const int S = sh[1], L = sh[2], K = sh[3], ldy = K + sh[4];
    const size_t ny = static_cast<size_t>(L) * ldy;
    double *X, *Y, *O, *R, *sink;
    CK(cudaMalloc(&X, sizeof(double) * S * K));
    CK(cudaMalloc(&Y, sizeof(double) * ny));
    CK(cudaMalloc(&O, sizeof(double) * S * L));
    CK(cudaMalloc(&R, sizeof(double) * S * L));
    CK(cudaMalloc(&sink, 8));
    {
      std::vector<double> hx(static_cast<size_t>(S) * K);
      unsigned long long z = 88172645463325252ull;
      auto rnd = [&] { z ^= z << 13; z ^= z >> 7; z ^= z << 17; return (z >> 11) * 0x1.0p-52 - 1.0; };
      for (auto& v : hx) v = rnd();
      CK(cudaMemcpy(X, hx.data(), sizeof(double) * hx.size(), cudaMemcpyHostToDevice));
      std::vector<double> hy(1 << 24);
      for (size_t o = 0; o < ny; o += hy.size()) {
        const size_t n = std::min(hy.size(), ny - o);
        for (size_t i = 0; i < n; ++i) hy[i] = rnd();
        CK(cudaMemcpy(Y + o, hy.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      }
    }
    const double one = 1, zero = 0;
    P p{};
    p.Y = Y, p.ldy = ldy, p.out = O, p.S = S, p.L = L, p.K = K, p.X = X;
    std::vector<Var> vars;
    if (!tn) {  // NN: A = X (S x K, lda S), B = Y^T (K x L, ldb K), C (S x L)
      p.xrs = 1, p.xcs = S, p.ors = 1, p.ocs = S;
      vars.push_back({"cublas NN", [&](cudaStream_t) { cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, L, K, &one, X, S, Y, ldy, &zero, R, S); }, false});
    } else {  // TN: A = Y^T (K x L, lda K), B = X^T (K x S, ldb K), C (L x S)
      p.xrs = K, p.xcs = 1, p.ors = L, p.ocs = 1;
      vars.push_back({"cublas TN", [&](cudaStream_t) { cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, L, S, K, &one, Y, ldy, X, K, &zero, R, L); }, false});
    }
    vars.push_back({"stream", [=](cudaStream_t s) { stream_kernel<<<prop.multiProcessorCount * 4, 512, 0, s>>>(reinterpret_cast<const double2*>(Y), ny / 2, sink); }, false});
    vars.push_back(tree<0>(p));
    vars.push_back(tree<0, 97>(p));
    vars.push_back(tree<0, 7>(p));
    vars.push_back(tree<0, 61>(p));
    vars.push_back(wide<256, 2, 8, 1, 2>(p));
    vars.push_back(wide<256, 2, 8, 1, 2, 13>(p));
    vars.push_back(wide<256, 2, 8, 2, 1, 13>(p));
    vars.push_back(wide<128, 3, 4, 2, 2, 13>(p));
    vars.push_back(wide<128, 3, 4, 2, 2, 29>(p));
    vars[0].run(st);
    CK(cudaStreamSynchronize(st));
    std::vector<double> ref(static_cast<size_t>(S) * L), got(ref.size());
    CK(cudaMemcpy(ref.data(), R, sizeof(double) * ref.size(), cudaMemcpyDeviceToHost));
    for (auto& v : vars) {
      if (!v.checks) {
        if (only >= 0) v.run(st);
        continue;
      }
      CK(cudaMemset(O, 0xff, sizeof(double) * S * L));  // NaN poison
      v.run(st);
      CK(cudaStreamSynchronize(st));
      CK(cudaGetLastError());
      CK(cudaMemcpy(got.data(), O, sizeof(double) * got.size(), cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::isfinite(got[i]) ? std::fabs(got[i] - ref[i]) : 1e300);
      if (worst > 1e-9 * std::sqrt(static_cast<double>(K))) std::printf("  %s: WRONG, max diff %.3g\n", v.name.c_str(), worst);
    }
    if (only >= 0) {
      CK(cudaStreamSynchronize(st));
      continue;
    }
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int w = 0; w < 2; ++w)
      for (auto& v : vars) v.run(st);
    for (int r = 0; r < rounds; ++r)
      for (auto& v : vars) {
        CK(cudaEventRecord(a, st));
        v.run(st);
        v.run(st);
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        v.ms.push_back(ms / 2);
      }
    auto med = [](std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    const double cub = med(vars[0].ms), gb = ny * 8.0 / 1e9;
    std::printf("%s %d x %d x %d, ldy %d (Y %.2f GB)\n", tn ? "TN few columns" : "NN few rows", S, L, K, ldy, gb);
    for (auto& v : vars) {
      const double m = med(v.ms);
      std::printf("  %-40s %8.1f us  %5.2f TB/s  %6.1f%% of cublas  (min %.1f max %.1f)\n", v.name.c_str(), m * 1e3, gb / m,
                  100 * cub / m, *std::min_element(v.ms.begin(), v.ms.end()) * 1e3,
                  *std::max_element(v.ms.begin(), v.ms.end()) * 1e3);
    }
    cudaFree(X); cudaFree(Y); cudaFree(O); cudaFree(R); cudaFree(sink);
  }
  return 0;
}

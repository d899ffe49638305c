// Experiment (not in the tree): C of at most 8 rows or columns on the FP64 tensor cores with the large operand
// streamed once, against cublasDgemm and a read-ceiling kernel in one process.
// Recorded for docs/gemm-notes.md, step 60: its output is 2026-11-28-h200-tc-skinny-microbenchmark-k-order.txt (the
// run1 output came from an earlier list of variants in main(); the kernels are the same).
//   dot form  (C = A (S x K) B (K x L), B's columns contiguous along k): out^T(l, s) = sum_k Y(l, k) X(s, k) as
//     m16n8k16 with M = 16 columns l, N = 8 rows s, the k order permuted so each lane reads CH consecutive k of
//     its two columns (16-byte loads) and the same k of its row of X;
//   axpy form (C = A (L x K) B (K x S), A's columns contiguous along l): M = 16 rows l, permuted so a lane reads
//     two consecutive l (one 16-byte load) for each of its k.
// Build: nvcc -O3 -std=c++17 -arch=sm_90a tcbench.cu -lcublas -o tcbench
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
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

__device__ __forceinline__ void mma16(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
        "d"(b[2]), "d"(b[3]));
}

// ---- dot form. Fragments (m16n8k16 f64): lane 4g + t holds A(g + 8 (i % 2), t + 4 (i / 2)) in a[i], B(t + 4 i, g)
// in b[i], C(g + 8 (r / 2), 2 t + r % 2) in c[r]. Logical k t + 4 q of MMA j is physical k0 + CH t + 4 j + q. ----
template <int CH, int RING, int W, int CG, int MINB = 1, int PERM = 0>
__global__ void __launch_bounds__(32 * W, MINB) tcdot(const double* X, long long xrs, long long xcs, const double* Y,
                                                long long ldy, double* out, long long ldo, int S, int L, int K) {
  constexpr int KC = 4 * CH, NM = CH / 4, COLS = 16 * CG;
  __shared__ double red[W][COLS * 8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = (L + COLS - 1) / COLS, chunks = (K + KC - 1) / KC;
  for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int l0 = grp * COLS;
    double c[CG][4] = {};
    double2 y[RING][CG][2][CH / 2];
    double x[RING][CH];
    const auto load = [&](int r, int ch) {
      const int k0 = ch * KC + (PERM ? 2 * t : CH * t);
      constexpr int US = PERM ? 8 : 2;  // element pair u at k0 + US u
      const bool whole = ch * KC + KC <= K && ldy % 2 == 0;
#pragma unroll
      for (int cg = 0; cg < CG; ++cg)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int l = l0 + 16 * cg + g + 8 * h;
          const double* p = Y + l * ldy + k0;
#pragma unroll
          for (int u = 0; u < CH / 2; ++u) {
            if (l >= L)
              y[r][cg][h][u] = make_double2(0, 0);
            else if (whole)
              y[r][cg][h][u] = __ldcs(reinterpret_cast<const double2*>(p + US * u));
            else
              y[r][cg][h][u] = make_double2(k0 + US * u < K ? __ldcs(p + US * u) : 0.0, k0 + US * u + 1 < K ? __ldcs(p + US * u + 1) : 0.0);
          }
        }
#pragma unroll
      for (int i = 0; i < CH; ++i) {
        const int k = k0 + US * (i / 2) + i % 2;
        x[r][i] = g < S && k < K ? __ldg(X + g * xrs + k * xcs) : 0.0;
      }
    };
    const auto compute = [&](int r) {
#pragma unroll
      for (int j = 0; j < NM; ++j) {
        double b[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) b[q] = x[r][4 * j + q];
#pragma unroll
        for (int cg = 0; cg < CG; ++cg) {
          double a[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const int e = 4 * j + i / 2;  // element of the lane's CH
            const double2 v = y[r][cg][i % 2][e / 2];
            a[i] = e % 2 ? v.y : v.x;
          }
          mma16(c[cg], a, b);
        }
      }
    };
#pragma unroll
    for (int r = 0; r < RING; ++r)
      if (warp + r * W < chunks) load(r, warp + r * W);
    for (int ch = warp; ch < chunks; ch += RING * W) {
#pragma unroll
      for (int r = 0; r < RING; ++r) {
        const int mine = ch + r * W;
        if (mine < chunks) {
          compute(r);
          if (mine + RING * W < chunks) load(r, mine + RING * W);
        }
      }
    }
#pragma unroll
    for (int cg = 0; cg < CG; ++cg)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[warp][(16 * cg + g + 8 * (r / 2)) * 8 + 2 * t + r % 2] = c[cg][r];
    __syncthreads();
    for (int e = threadIdx.x; e < COLS * 8; e += 32 * W) {
      const int lc = e / 8, s = e % 8;
      double sum = 0;
      for (int w = 0; w < W; ++w) sum += red[w][e];
      if (s < S && l0 + lc < L) out[s + (l0 + lc) * ldo] = sum;
    }
    __syncthreads();
  }
}

// ---- axpy form: Y(l, k) = A at l + ldy k. Row m of the MMA: g -> l 2g, g + 8 -> l 2g + 1 of the lane's 16-row
// group; logical k t + 4 q -> physical k0 + 4 t + q (the lane's four k consecutive). Warps: WL along l (LG groups of
// 16 rows each), WK along k (alternate chunks of 16 k); KS blocks along k add into out with atomics (the
// experiment's deterministic stand-in is not needed to time the stream). ----
template <int LG, int RING, int WK, int WL, int MINB = 1>
__global__ void __launch_bounds__(32 * WK * WL, MINB) tcaxpy(const double* X, long long xrs, long long xcs, const double* Y,
                                                       long long ldy, double* out, long long ldo, int S, int L, int K,
                                                       int ks) {
  constexpr int W = WK * WL, ROWS = 16 * LG * WL;
  __shared__ double red[W][16 * LG * 8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4, wk = warp % WK,
            wl = warp / WK;
  const int groups = (L + ROWS - 1) / ROWS, chunks = (K + 15) / 16;
  const int per = (chunks + ks - 1) / ks;
  for (int item = blockIdx.x; item < groups * ks; item += gridDim.x) {
    const int grp = item / ks, part = item % ks;
    const int c0 = part * per, c1 = chunks < c0 + per ? chunks : c0 + per;
    const int l0 = grp * ROWS + wl * 16 * LG;
    double c[LG][4] = {};
    double2 y[RING][LG][4];
    double x[RING][4];
    const auto load = [&](int r, int ch) {
      const int k0 = ch * 16 + 4 * t;
#pragma unroll
      for (int lg = 0; lg < LG; ++lg) {
        const int l = l0 + 16 * lg + 2 * g;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int k = k0 + q;
          const double* p = Y + l + static_cast<long long>(k) * ldy;
          if (k < K && l + 1 < L && ldy % 2 == 0)
            y[r][lg][q] = __ldcs(reinterpret_cast<const double2*>(p));
          else
            y[r][lg][q] = make_double2(k < K && l < L ? __ldcs(p) : 0.0, k < K && l + 1 < L ? __ldcs(p + 1) : 0.0);
        }
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) x[r][q] = g < S && k0 + q < K ? __ldg(X + g * xrs + (k0 + q) * xcs) : 0.0;
    };
    const auto compute = [&](int r) {
#pragma unroll
      for (int lg = 0; lg < LG; ++lg) {
        double a[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) a[i] = i % 2 ? y[r][lg][i / 2].y : y[r][lg][i / 2].x;
        mma16(c[lg], a, x[r]);
      }
    };
    const int first = c0 + wk;
#pragma unroll
    for (int r = 0; r < RING; ++r)
      if (first + r * WK < c1) load(r, first + r * WK);
    for (int ch = first; ch < c1; ch += RING * WK) {
#pragma unroll
      for (int r = 0; r < RING; ++r) {
        const int mine = ch + r * WK;
        if (mine < c1) {
          compute(r);
          if (mine + RING * WK < c1) load(r, mine + RING * WK);
        }
      }
    }
    // c[lg][r] = out^T(l0 + 16 lg + 2 g + r / 2, 2 t + r % 2)
#pragma unroll
    for (int lg = 0; lg < LG; ++lg)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[warp][(16 * lg + 2 * g + r / 2) * 8 + 2 * t + r % 2] = c[lg][r];
    __syncthreads();
    for (int e = threadIdx.x; e < WL * 16 * LG * 8; e += 32 * W) {
      const int s = e / (WL * 16 * LG), lr = e % (WL * 16 * LG), w_l = lr / (16 * LG), li = lr % (16 * LG);
      double sum = 0;
      for (int w = 0; w < WK; ++w) sum += red[w_l * WK + w][li * 8 + s];
      const int l = grp * ROWS + lr;
      if (s < S && l < L) {
        if (ks == 1)
          out[l + s * ldo] = sum;
        else
          atomicAdd(out + l + s * ldo, sum);
      }
    }
    __syncthreads();
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
int resident(F kernel, int threads) {
  int b = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return b * sms;
}
template <class F>
int regs(F kernel) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  return a.numRegs * 1000 + static_cast<int>(a.localSizeBytes);
}

template <int CH, int RING, int W, int CG, int MINB = 1, int PERM = 0>
Var dot(const double* X, const double* Y, double* O, int S, int L, int K, int gmul) {
  char nm[96];
  const int groups = (L + 16 * CG - 1) / (16 * CG);
  const int fit = resident(tcdot<CH, RING, W, CG, MINB, PERM>, 32 * W);
  const int blocks = std::min(groups, fit * gmul);
  const int rg = regs(tcdot<CH, RING, W, CG, MINB, PERM>);
  std::snprintf(nm, sizeof nm, "dot ch%d r%d w%d cg%d x%d m%d p%d [%dr %dB %d/SM]", CH, RING, W, CG, gmul, MINB, PERM, rg / 1000, rg % 1000, fit / 132);
  return {nm, [=](cudaStream_t st) {
            tcdot<CH, RING, W, CG, MINB, PERM><<<blocks, 32 * W, 0, st>>>(X, 1, S, Y, K, O, S, S, L, K);
          }};
}

template <int LG, int RING, int WK, int WL, int MINB = 1>
Var axpy(const double* X, const double* Y, double* O, int S, int L, int K, int ks) {
  char nm[96];
  const int groups = (L + 16 * LG * WL - 1) / (16 * LG * WL);
  const int fit = resident(tcaxpy<LG, RING, WK, WL, MINB>, 32 * WK * WL);
  const int blocks = std::min(groups * ks, fit);
  const int rg = regs(tcaxpy<LG, RING, WK, WL, MINB>);
  std::snprintf(nm, sizeof nm, "axpy lg%d r%d wk%d wl%d ks%d m%d [%dr %dB %.2fw]", LG, RING, WK, WL, ks, MINB, rg / 1000, rg % 1000,
                double(groups * ks) / fit);
  return {nm, [=](cudaStream_t st) {
            if (ks > 1) cudaMemsetAsync(O, 0, sizeof(double) * S * L, st);
            tcaxpy<LG, RING, WK, WL, MINB><<<blocks, 32 * WK * WL, 0, st>>>(X, K, 1, Y, L, O, L, S, L, K, ks);
          }};
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  // {dot (1) or axpy (0), S, L, K}
  const int shapes[][4] = {{1, 8, 16384, 16384}, {1, 8, 32768, 8192}, {1, 8, 8192, 8192}, {1, 4, 16384, 16384}, {1, 8, 4096, 8192}};
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  cublasHandle_t h;
  cublasCreate(&h);
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  cublasSetStream(h, st);
  for (auto& sh : shapes) {
    const bool isdot = sh[0] == 1;
    const int S = sh[1], L = sh[2], K = sh[3];
    const size_t ny = static_cast<size_t>(L) * K;
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
    std::vector<Var> vars;
    if (isdot)  // C (S x L) = A (S x K, lda S) B (K x L, ldb K): X = A, Y(l, k) = B(k, l)
      vars.push_back({"cublas", [&](cudaStream_t) { cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, L, K, &one, X, S, Y, K, &zero, R, S); }, false});
    else  // C (L x S) = A (L x K, lda L) B (K x S, ldb K): Y = A, X(s, k) = B(k, s)
      vars.push_back({"cublas", [&](cudaStream_t) { cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, L, S, K, &one, Y, L, X, K, &zero, R, L); }, false});
    vars.push_back({"stream", [=](cudaStream_t s) { stream_kernel<<<prop.multiProcessorCount * 4, 512, 0, s>>>(reinterpret_cast<const double2*>(Y), ny / 2, sink); }, false});
    if (isdot) {
      vars.push_back(dot<8, 1, 8, 1, 2, 0>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<8, 1, 8, 1, 2, 1>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<8, 1, 16, 1, 1, 0>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<8, 1, 16, 1, 1, 1>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<8, 1, 4, 1, 4, 0>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<8, 1, 12, 1, 1, 0>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<4, 2, 16, 1, 1, 0>(X, Y, O, S, L, K, 1));
      vars.push_back(dot<8, 1, 16, 1, 1, 0>(X, Y, O, S, L, K, 2));
    } else {
      const int ks_fill = std::max(1, 132 * 2 * 64 / L);  // roughly two blocks of 64 rows a SM
      vars.push_back(axpy<4, 1, 8, 1>(X, Y, O, S, L, K, 1));
      vars.push_back(axpy<2, 1, 4, 4>(X, Y, O, S, L, K, 2 * ks_fill));
      vars.push_back(axpy<2, 2, 8, 1, 2>(X, Y, O, S, L, K, 2 * ks_fill));
      vars.push_back(axpy<2, 1, 4, 1, 4>(X, Y, O, S, L, K, 1));
      vars.push_back(axpy<2, 1, 4, 1, 4>(X, Y, O, S, L, K, 2 * ks_fill));
      vars.push_back(axpy<2, 1, 4, 1, 4>(X, Y, O, S, L, K, 4 * ks_fill));
      vars.push_back(axpy<2, 1, 2, 2, 4>(X, Y, O, S, L, K, 2 * ks_fill));
      vars.push_back(axpy<1, 2, 4, 1, 4>(X, Y, O, S, L, K, 2 * ks_fill));
      vars.push_back(axpy<2, 1, 8, 1, 2>(X, Y, O, S, L, K, 2 * ks_fill));
      vars.push_back(axpy<2, 1, 4, 1, 4>(X, Y, O, S, L, K, 8 * ks_fill));
      vars.push_back(axpy<4, 1, 4, 1, 3>(X, Y, O, S, L, K, 2 * ks_fill));
    }
    vars[0].run(st);
    CK(cudaStreamSynchronize(st));
    std::vector<double> ref(static_cast<size_t>(S) * L), got(ref.size());
    CK(cudaMemcpy(ref.data(), R, sizeof(double) * ref.size(), cudaMemcpyDeviceToHost));
    for (auto& v : vars) {
      if (!v.checks) continue;
      CK(cudaMemset(O, 0xff, sizeof(double) * S * L));  // NaN poison
      v.run(st);
      CK(cudaStreamSynchronize(st));
      CK(cudaGetLastError());
      CK(cudaMemcpy(got.data(), O, sizeof(double) * got.size(), cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::isfinite(got[i]) ? std::fabs(got[i] - ref[i]) : 1e300);
      if (worst > 1e-9 * std::sqrt(static_cast<double>(K))) std::printf("  %s: WRONG, max diff %.3g\n", v.name.c_str(), worst);
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
    std::printf("%s %d x %d x %d (Y %.2f GB)\n", isdot ? "dot" : "axpy", S, L, K, gb);
    for (auto& v : vars) {
      const double m = med(v.ms);
      std::printf("  %-44s %8.1f us  %5.2f TB/s  %6.1f%% of cublas  (min %.1f max %.1f)\n", v.name.c_str(), m * 1e3, gb / m,
                  100 * cub / m, *std::min_element(v.ms.begin(), v.ms.end()) * 1e3,
                  *std::max_element(v.ms.begin(), v.ms.end()) * 1e3);
    }
    cudaFree(X); cudaFree(Y); cudaFree(O); cudaFree(R); cudaFree(sink);
  }
  return 0;
}

// Experiment record (docs/results, not built by the project; step 59 of docs/gemm-notes.md): the skinny kernel's dot form, out(s, l) = sum_k X(s, k) Y(l, k) with Y contiguous
// along k, for C = A (S x K) * B (K x L), column-major, against cublasDgemm in one process. Variants differ in how Y
// is streamed: columns a warp, k a lane a chunk, load width, chunks in flight, warps of a block along K.
// Build: nvcc -O3 -std=c++17 -arch=sm_90a dotbench.cu -lcublas -o dotbench
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#define CK(x)                                                                           \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));            \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

// ---- production's dot kernel (gemm/09_skinny.cu at a951c3a), X through shared memory by cp.async ----
__device__ __forceinline__ void cpa8(double* s, const double* g, int bytes) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(s));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(sa), "l"(g), "r"(bytes) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void waitg() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

constexpr int kDotWarps = 4, kDotCols = 4, kDotDepth = 4, kDotKc = 32 * kDotDepth, kDotPitch = kDotKc + 1;

template <int SMAX>
__device__ void copy_x(const double* X, int ldx, int S, int K, int k0, double* dst, int t, int threads) {
  for (int e = t; e < SMAX * kDotKc; e += threads) {
    const int s = e % SMAX, kk = e / SMAX;  // X's rows contiguous (ldx rows apart along k)
    const bool in = s < S && k0 + kk < K;
    cpa8(dst + s * kDotPitch + kk, in ? X + s + static_cast<long long>(k0 + kk) * ldx : X, in ? 8 : 0);
  }
}

template <int SMAX, int MINB>
__global__ void __launch_bounds__(32 * kDotWarps, MINB)
    prod_kernel(const double* X, int ldx, const double* Y, long long ldy, double* out, int ldo, int S, int L, int K) {
  __shared__ double xs[2][SMAX * kDotPitch];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int l0 = (blockIdx.x * kDotWarps + warp) * kDotCols;
  double acc[kDotCols][SMAX] = {};
  double y[kDotCols][kDotDepth], next[kDotCols][kDotDepth];
  const auto load_y = [&](double (&v)[kDotCols][kDotDepth], int k0) {
#pragma unroll
    for (int c = 0; c < kDotCols; ++c)
#pragma unroll
      for (int u = 0; u < kDotDepth; ++u) {
        const int l = l0 + c, k = k0 + lane + 32 * u;
        v[c][u] = l < L && k < K ? __ldcs(Y + l * ldy + k) : 0.0;
      }
  };
  const int chunks = (K + kDotKc - 1) / kDotKc;
  copy_x<SMAX>(X, ldx, S, K, 0, xs[0], threadIdx.x, 32 * kDotWarps);
  commit();
  if (chunks > 1) copy_x<SMAX>(X, ldx, S, K, kDotKc, xs[1], threadIdx.x, 32 * kDotWarps);
  commit();
  load_y(y, 0);
  for (int ch = 0; ch < chunks; ++ch) {
    if (ch + 1 < chunks) load_y(next, (ch + 1) * kDotKc);
    waitg<1>();
    __syncthreads();
    const double* x = xs[ch & 1];
#pragma unroll
    for (int u = 0; u < kDotDepth; ++u)
#pragma unroll
      for (int s = 0; s < SMAX; ++s) {
        const double xv = x[s * kDotPitch + lane + 32 * u];
#pragma unroll
        for (int c = 0; c < kDotCols; ++c) acc[c][s] = fma(xv, y[c][u], acc[c][s]);
      }
    __syncthreads();
    if (ch + 2 < chunks) copy_x<SMAX>(X, ldx, S, K, (ch + 2) * kDotKc, xs[ch & 1], threadIdx.x, 32 * kDotWarps);
    commit();
#pragma unroll
    for (int c = 0; c < kDotCols; ++c)
#pragma unroll
      for (int u = 0; u < kDotDepth; ++u) y[c][u] = next[c][u];
  }
#pragma unroll
  for (int c = 0; c < kDotCols; ++c) {
    double mine = 0;
#pragma unroll
    for (int s = 0; s < SMAX; ++s) {
      double v = acc[c][s];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == s) mine = v;
    }
    if (lane < S && l0 + c < L) out[lane + static_cast<long long>(l0 + c) * ldo] = mine;
  }
}


// ---- the candidate: the block's WARPS warps share kDotCols columns and take alternate KC-deep chunks of k (each
// column read in runs of WARPS x KC), X staged in shared memory a step (WARPS chunks) at a time; GS: a grid of the
// blocks that fit, each walking the column groups ----
template <int SMAX, int WARPS, int DEPTH>
__global__ void __launch_bounds__(32 * WARPS)
    ks_kernel(const double* X, int ldx, const double* Y, long long ldy, double* out, int ldo, int S, int L, int K) {
  constexpr int KC = 32 * DEPTH, KS = WARPS * KC, PITCH = KS + 1, COLS = kDotCols;
  __shared__ double xs[2][SMAX * PITCH];
  __shared__ double red[WARPS][COLS][SMAX];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int groups = (L + COLS - 1) / COLS, steps = (K + KS - 1) / KS;
  const auto copy = [&](int st, double* dst) {
    const int k0 = st * KS;
    for (int e = threadIdx.x; e < SMAX * KS; e += 32 * WARPS) {
      const int s = e % SMAX, kk = e / SMAX;
      const bool in = s < S && k0 + kk < K;
      cpa8(dst + s * PITCH + kk, in ? X + s + static_cast<long long>(k0 + kk) * ldx : X, in ? 8 : 0);
    }
  };
  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    const int l0 = g * COLS;
    double acc[COLS][SMAX] = {};
    double y[COLS][DEPTH], next[COLS][DEPTH];
    const auto load_y = [&](double (&v)[COLS][DEPTH], int st) {
#pragma unroll
      for (int c = 0; c < COLS; ++c)
#pragma unroll
        for (int u = 0; u < DEPTH; ++u) {
          const int l = l0 + c, k = st * KS + warp * KC + lane + 32 * u;
          v[c][u] = l < L && k < K ? __ldcs(Y + l * ldy + k) : 0.0;
        }
    };
    copy(0, xs[0]);
    commit();
    if (steps > 1) copy(1, xs[1]);
    commit();
    load_y(y, 0);
    for (int st = 0; st < steps; ++st) {
      if (st + 1 < steps) load_y(next, st + 1);
      waitg<1>();
      __syncthreads();
      const double* x = xs[st & 1] + warp * KC;
#pragma unroll
      for (int u = 0; u < DEPTH; ++u)
#pragma unroll
        for (int s = 0; s < SMAX; ++s) {
          const double xv = x[s * PITCH + lane + 32 * u];
#pragma unroll
          for (int c = 0; c < COLS; ++c) acc[c][s] = fma(xv, y[c][u], acc[c][s]);
        }
      __syncthreads();
      if (st + 2 < steps) copy(st + 2, xs[st & 1]);
      commit();
#pragma unroll
      for (int c = 0; c < COLS; ++c)
#pragma unroll
        for (int u = 0; u < DEPTH; ++u) y[c][u] = next[c][u];
    }
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      double mine = 0;
#pragma unroll
      for (int s = 0; s < SMAX; ++s) {
        double v = acc[c][s];
#pragma unroll
        for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == s) mine = v;
      }
      if (lane < SMAX) red[warp][c][lane] = mine;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < COLS * SMAX; e += 32 * WARPS) {
      const int c = e / SMAX, s = e % SMAX;
      double sum = 0;
      for (int w = 0; w < WARPS; ++w) sum += red[w][c][s];
      if (s < S && l0 + c < L) out[s + static_cast<long long>(l0 + c) * ldo] = sum;
    }
    __syncthreads();
  }
}

// ---- the variants: X from global memory (L1) in registers beside Y; RING chunks of Y in flight a warp; KSPLIT:
// the block's warps take alternate chunks of the same COLS columns and add their sums through shared memory ----
template <int VEC>
__device__ __forceinline__ auto load_stream(const double* p) {
  if constexpr (VEC == 2)
    return __ldcs(reinterpret_cast<const double2*>(p));
  else
    return __ldcs(p);
}
__device__ __forceinline__ double part(double v, int) { return v; }
__device__ __forceinline__ double part(double2 v, int e) { return e ? v.y : v.x; }

template <int SMAX, int WARPS, int COLS, int DEPTH, int VEC, int RING, bool KSPLIT>
__global__ void __launch_bounds__(32 * WARPS)
    gen_kernel(const double* X, int ldx, const double* Y, long long ldy, double* out, int ldo, int S, int L, int K) {
  using V = std::conditional_t<VEC == 2, double2, double>;
  constexpr int KC = 32 * DEPTH * VEC;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int groups = KSPLIT ? L / COLS : L / (COLS * WARPS);
  __shared__ double red[KSPLIT ? WARPS : 1][COLS][SMAX];
  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
  const int l0 = KSPLIT ? g * COLS : (g * WARPS + warp) * COLS;
  const int step = KSPLIT ? WARPS : 1, first = KSPLIT ? warp : 0;
  double acc[COLS][SMAX] = {};
  V y[RING][COLS][DEPTH];
  double x[RING][SMAX][DEPTH * VEC];
  const int chunks = K / KC;  // the experiment's shapes divide
  const auto load = [&](int r, int ch) {
    const int k0 = ch * KC;
#pragma unroll
    for (int c = 0; c < COLS; ++c)
#pragma unroll
      for (int u = 0; u < DEPTH; ++u) y[r][c][u] = load_stream<VEC>(Y + (l0 + c) * ldy + k0 + (lane + 32 * u) * VEC);
#pragma unroll
    for (int s = 0; s < SMAX; ++s)
#pragma unroll
      for (int u = 0; u < DEPTH; ++u)
#pragma unroll
        for (int e = 0; e < VEC; ++e)
          x[r][s][u * VEC + e] = s < S ? __ldg(X + s + static_cast<long long>(k0 + (lane + 32 * u) * VEC + e) * ldx) : 0.0;
  };
  const auto compute = [&](int r) {
#pragma unroll
    for (int u = 0; u < DEPTH; ++u)
#pragma unroll
      for (int e = 0; e < VEC; ++e)
#pragma unroll
        for (int s = 0; s < SMAX; ++s)
#pragma unroll
          for (int c = 0; c < COLS; ++c) acc[c][s] = fma(x[r][s][u * VEC + e], part(y[r][c][u], e), acc[c][s]);
  };
#pragma unroll
  for (int r = 0; r < RING; ++r)
    if (first + r * step < chunks) load(r, first + r * step);
  for (int ch = first; ch < chunks; ch += RING * step) {
#pragma unroll
    for (int r = 0; r < RING; ++r) {
      const int mine = ch + r * step;
      if (mine < chunks) {
        compute(r);
        if (mine + RING * step < chunks) load(r, mine + RING * step);
      }
    }
  }
#pragma unroll
  for (int c = 0; c < COLS; ++c) {
    double mine = 0;
#pragma unroll
    for (int s = 0; s < SMAX; ++s) {
      double v = acc[c][s];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == s) mine = v;
    }
    if constexpr (KSPLIT) {
      if (lane < SMAX) red[warp][c][lane] = mine;
    } else if (lane < S && l0 + c < L) {
      out[lane + static_cast<long long>(l0 + c) * ldo] = mine;
    }
  }
  if constexpr (KSPLIT) {
    __syncthreads();
    for (int e = threadIdx.x; e < COLS * SMAX; e += 32 * WARPS) {
      const int c = e / SMAX, s = e % SMAX;
      double sum = 0;
      for (int w = 0; w < WARPS; ++w) sum += red[w][c][s];
      if (s < S && l0 + c < L) out[s + static_cast<long long>(l0 + c) * ldo] = sum;
    }
    __syncthreads();
  }
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
  if (s == 1234.5) sink[0] = s;  // never, but the loads stay
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

template <int SMAX, int WARPS, int DEPTH, bool GS>
Var ks(const double* X, const double* Y, double* O, int S, int L, int K) {
  char nm[96];
  const int groups = (L + kDotCols - 1) / kDotCols;
  const int fit = resident(ks_kernel<SMAX, WARPS, DEPTH>, 32 * WARPS);
  const int blocks = GS ? std::min(groups, fit) : groups;
  std::snprintf(nm, sizeof nm, "KS w%d d%d%s %.2fw", WARPS, DEPTH, GS ? " gs" : "", double(groups) / fit);
  return {nm, [=](cudaStream_t st) { ks_kernel<SMAX, WARPS, DEPTH><<<blocks, 32 * WARPS, 0, st>>>(X, S, Y, K, O, S, S, L, K); }};
}

// GS: a grid of the blocks that fit at once, each walking the column groups; otherwise one block a group.
template <int SMAX, int WARPS, int COLS, int DEPTH, int VEC, int RING, bool KSPLIT, bool GS = false>
Var gen(const double* X, const double* Y, double* O, int S, int L, int K) {
  char nm[96];
  const int groups = KSPLIT ? L / COLS : L / (COLS * WARPS);
  const int fit = resident(gen_kernel<SMAX, WARPS, COLS, DEPTH, VEC, RING, KSPLIT>, 32 * WARPS);
  const int blocks = GS ? std::min(groups, fit) : groups;
  std::snprintf(nm, sizeof nm, "w%d c%d d%d v%d r%d%s%s %.2fw", WARPS, COLS, DEPTH, VEC, RING, KSPLIT ? " ks" : "",
                GS ? " gs" : "", double(groups) / fit);
  return {nm, [=](cudaStream_t st) {
            gen_kernel<SMAX, WARPS, COLS, DEPTH, VEC, RING, KSPLIT><<<blocks, 32 * WARPS, 0, st>>>(X, S, Y, K, O, S, S, L, K);
          }};
}

int main(int argc, char** argv) {
  int dev = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int shapes[][3] = {{1, 16384, 16384}, {1, 32768, 8192}, {1, 8192, 32768}, {2, 16384, 16384}, {4, 16384, 16384}, {8, 16384, 16384}, {16, 16384, 16384}, {1, 16384, 16383}, {3, 12345, 16001}};
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  cublasHandle_t h;
  cublasCreate(&h);
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  cublasSetStream(h, st);
  for (auto& sh : shapes) {
    const int S = sh[0], L = sh[1], K = sh[2];
    const size_t ny = static_cast<size_t>(L) * K;
    double *X, *Y, *O, *R, *sink;
    CK(cudaMalloc(&X, sizeof(double) * S * K));
    CK(cudaMalloc(&Y, sizeof(double) * ny));
    CK(cudaMalloc(&O, sizeof(double) * S * L));
    CK(cudaMalloc(&R, sizeof(double) * S * L));
    CK(cudaMalloc(&sink, 8));
    {  // uniform [-1, 1) from a hash, on the host in pieces
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
    // C (S x L) = A (S x K, lda = S) * B (K x L, ldb = K)
    std::vector<Var> vars;
    vars.push_back({"cublas", [&](cudaStream_t) { cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, L, K, &one, X, S, Y, K, &zero, R, S); }, false});
    vars.push_back({"stream", [=](cudaStream_t s) { stream_kernel<<<prop.multiProcessorCount * 4, 512, 0, s>>>(reinterpret_cast<const double2*>(Y), ny / 2, sink); }, false});
#define PROD(SM)                                                                                           \
  { char nm[64]; std::snprintf(nm, sizeof nm, "prod %.2fw", (L / 16.0) / resident(prod_kernel<SM, 1>, 128)); \
    vars.push_back({nm, [=](cudaStream_t s) { prod_kernel<SM, 1><<<(L + 15) / 16, 128, 0, s>>>(X, S, Y, K, O, S, S, L, K); }}); }
    const bool even = K % 256 == 0 && L % 32 == 0;
    const int smax = S <= 1 ? 1 : S <= 2 ? 2 : S <= 4 ? 4 : S <= 8 ? 8 : 16;
    if (smax == 1) {
      PROD(1)
      if (even) vars.push_back(gen<1, 4, 4, 4, 1, 1, false, true>(X, Y, O, S, L, K));
      if (even) vars.push_back(gen<1, 8, 2, 2, 2, 2, true, true>(X, Y, O, S, L, K));
      if (even) vars.push_back(gen<1, 8, 4, 2, 2, 1, true, true>(X, Y, O, S, L, K));
      vars.push_back(ks<1, 4, 4, false>(X, Y, O, S, L, K));
      vars.push_back(ks<1, 4, 4, true>(X, Y, O, S, L, K));
      vars.push_back(ks<1, 8, 4, false>(X, Y, O, S, L, K));
      vars.push_back(ks<1, 8, 4, true>(X, Y, O, S, L, K));
      vars.push_back(ks<1, 8, 2, true>(X, Y, O, S, L, K));
      vars.push_back(ks<1, 8, 8, true>(X, Y, O, S, L, K));
    } else if (smax == 2) {
      PROD(2)
      if (even) vars.push_back(gen<2, 8, 4, 2, 2, 1, true, true>(X, Y, O, S, L, K));
      vars.push_back(ks<2, 4, 4, false>(X, Y, O, S, L, K));
      vars.push_back(ks<2, 4, 4, true>(X, Y, O, S, L, K));
      vars.push_back(ks<2, 8, 4, false>(X, Y, O, S, L, K));
      vars.push_back(ks<2, 8, 4, true>(X, Y, O, S, L, K));
      vars.push_back(ks<2, 8, 2, true>(X, Y, O, S, L, K));
    } else if (smax == 4) {
      PROD(4)
      if (even) vars.push_back(gen<4, 4, 4, 4, 1, 1, false, true>(X, Y, O, S, L, K));
      vars.push_back(ks<4, 4, 4, false>(X, Y, O, S, L, K));
      vars.push_back(ks<4, 4, 4, true>(X, Y, O, S, L, K));
      vars.push_back(ks<4, 8, 2, false>(X, Y, O, S, L, K));
      vars.push_back(ks<4, 8, 2, true>(X, Y, O, S, L, K));
      vars.push_back(ks<4, 4, 2, true>(X, Y, O, S, L, K));
    } else if (smax == 8) {
      PROD(8)
      vars.push_back(ks<8, 4, 2, false>(X, Y, O, S, L, K));
      vars.push_back(ks<8, 4, 2, true>(X, Y, O, S, L, K));
      vars.push_back(ks<8, 8, 1, true>(X, Y, O, S, L, K));
      vars.push_back(ks<8, 4, 1, true>(X, Y, O, S, L, K));
    } else {
      PROD(16)
      vars.push_back(ks<16, 4, 1, false>(X, Y, O, S, L, K));
      vars.push_back(ks<16, 4, 1, true>(X, Y, O, S, L, K));
      vars.push_back(ks<16, 2, 2, true>(X, Y, O, S, L, K));
    }
    // reference and checks
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
    std::printf("%d x %d x %d (Y %.2f GB)\n", S, L, K, gb);
    for (auto& v : vars) {
      const double m = med(v.ms);
      std::printf("  %-22s %8.1f us  %5.2f TB/s  %6.1f%% of cublas  (min %.1f max %.1f)\n", v.name.c_str(), m * 1e3,
                  gb / m, 100 * cub / m, *std::min_element(v.ms.begin(), v.ms.end()) * 1e3,
                  *std::max_element(v.ms.begin(), v.ms.end()) * 1e3);
    }
    cudaFree(X); cudaFree(Y); cudaFree(O); cudaFree(R); cudaFree(sink);
  }
  return 0;
}

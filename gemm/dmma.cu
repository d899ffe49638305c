// dmma: DGEMM on the FP64 tensor cores through the warp-level mma.sync instruction (minimum CC 8.0).
//
// Work split. A block computes a BM x BN tile of C (128x128 with 8 warps, 128x64 or 64x64 with 4); each warp
// a 64x32 or 32x32 piece of it, as a grid of 16x8 mma tiles whose accumulators stay in registers for the
// whole K loop. On sm_90 one mma.sync.m16n8k16 f64 (SASS DMMA.16x8x16) multiplies a 16x16 piece of A by a
// 16x8 piece of B; on sm_80/86 the same fragments feed eight mma.sync.m8n8k4 (DMMA.8x8x4).
//
// Fragments (PTX ISA, "matrix fragments for mma.m16n8k16", f64): lane = 4 g + t holds A(g + 8 (i % 2),
// t + 4 (i / 2)) in a[i], B(t + 4 i, g) in b[i], and C(g + 8 (r / 2), 2 t + r % 2) in c[r]. The m8n8k4 layout
// is the same restricted to one 8x4 piece, so the K4 path reuses the K16 fragments unchanged.
//
// Shared memory. A's tile is stored k-major (As[k][m], m contiguous as in global memory) and B's n-major
// (Bs[n][k], k contiguous as in global memory), so every global-to-shared copy is a straight cp.async of 8
// or 16 bytes. Row pitches are padded to 4 (mod 16) doubles: a fragment load by a half-warp (g = 0..3,
// t = 0..3) touches word (4 t + g) mod 16 of A and (4 g + t) mod 16 of B, sixteen distinct 8-byte bank pairs,
// so the loads are conflict-free.
//
// Pipeline. STAGES k-tiles (16 or 32 deep) are in flight through cp.async (asynchronous global-to-shared copies
// that bypass the registers); each iteration waits for the oldest, multiplies it, and issues the copies of the
// next k-tile spread between its MMAs (a few after each group of MMAs), so that the copies' address arithmetic
// issues while the tensor cores are busy. One __syncthreads per k-tile both publishes the landed tile and
// retires the buffer the new copies overwrite.
//
// Any shape. A tile wholly inside C whose k-tile lies wholly inside the K range copies without any check (the
// common case, and the cheap one: two instructions per copy); any other zero-fills the elements outside A, B
// or the block's K range through cp.async's source-size operand, and stores are guarded. 16-byte copies need
// lda and ldb even and 16-byte aligned A and B; otherwise the 8-byte instantiation runs. Split-K (small or
// skinny C): blockIdx.z owns one range of K and writes its partial tile to scratch; a second kernel adds the
// partials in z order and applies alpha and beta, so the result is deterministic.
//
// Block order. Consecutive blocks cover kGroupM tile rows of one tile column before the next column, so the
// blocks resident at one time share A and B panels in L2.
//
// Measured, and what limits it: docs/gemm-notes.md.
#include "gemm/dmma.hpp"
#include "gemm/kernel_common.cuh"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>

namespace ks::gemm {
namespace dmma {

constexpr int kPad = 4;  // pitch = 4 (mod 16) doubles: conflict-free fragment loads

// The device code lives in a named (not anonymous) namespace: code compiled for sm_75 never uses most of
// it, and nvcc warns about unreferenced entities with internal linkage.
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int VEC_, Instr I_>
struct Tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
  static constexpr int VEC = VEC_;
  static constexpr Instr I = I_;
  static constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  static constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;  // warp tile
  static constexpr int MT = WTM / 16, NT = WTN / 8;               // mma tiles per warp
  static constexpr int LDA = BM + kPad, LDB = BK + kPad;
  static constexpr int kStageDoubles = BK * LDA + BN * LDB;
  static constexpr int kSmemBytes = STAGES * kStageDoubles * 8;
  static constexpr int kACopies = BK * BM / VEC / kThreads;  // cp.async per thread per stage
  static constexpr int kBCopies = BN * BK / VEC / kThreads;
  static_assert(BM % (16 * WARPS_M) == 0 && BN % (8 * WARPS_N) == 0, "warp tile must hold whole mma tiles");
  static_assert(BK % 16 == 0, "k-tiles hold whole 16-deep mma steps");
  static_assert(BK * BM / VEC % kThreads == 0 && BN * BK / VEC % kThreads == 0, "copies must divide evenly");
  static_assert(LDA % 16 == kPad && LDB % 16 == kPad, "pitches keep the fragment loads conflict-free");
};


// ---- the instructions ----

// Copies `src_bytes` (0, 8 or, for Bytes == 16, 16) from global to shared and zero-fills the rest of Bytes.
template <int Bytes>
__device__ __forceinline__ void cp_async(double* smem, const double* gmem, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
#endif
}

// Copies 16 (Bytes == 16) or 8 bytes that are known to lie inside the matrix: no source-size operand.
template <int Bytes>
__device__ __forceinline__ void cp_async_whole(double* smem, const double* gmem) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(gmem));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

// c += a * b for one 16x8x16 tile, fragments as in the header.
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

// ---- the kernel ----

// Block rasterization: consecutive blocks walk kGroupM tile rows of C before moving to the next tile column,
// so the blocks resident at one time share A and B panels in L2 (the plain x-fastest order streams all of A
// through L2 once per wave of tile columns).
constexpr int kGroupM = 8;

__device__ __forceinline__ void block_tile(int& tile_m, int& tile_n) {
  const long long tiles_m = gridDim.x, tiles_n = gridDim.y;
  const long long linear = static_cast<long long>(blockIdx.y) * tiles_m + blockIdx.x;
  const long long per_group = kGroupM * tiles_n;
  const long long first_m = linear / per_group * kGroupM;
  const long long rows = min(static_cast<long long>(kGroupM), tiles_m - first_m);  // the last group may be short
  const long long within = linear % per_group;
  tile_m = static_cast<int>(first_m + within % rows);
  tile_n = static_cast<int>(within / rows);
}

// `partial` null: C = alpha AB + beta C. Otherwise blockIdx.z's product over its K range goes to
// partial[z][j][i] (M x N, unscaled) for splitk_finish.
template <class T>
__global__ void __launch_bounds__(T::kThreads, 1) dmma_kernel(GemmArgs a, double* partial, int split_depth) {
#if __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) double smem[];
  double* const As = smem;                              // [STAGES][T::BK][LDA]
  double* const Bs = smem + T::STAGES * T::BK * T::LDA;   // [STAGES][BN][LDB]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp % T::WARPS_M, wn = warp / T::WARPS_M;
  int tile_m, tile_n;
  block_tile(tile_m, tile_n);
  const int i0 = tile_m * T::BM, j0 = tile_n * T::BN;
  const int kbeg = blockIdx.z * split_depth;
  const int kend = min(a.K, kbeg + split_depth);
  const int ktiles = ceil_div(kend - kbeg, T::BK);
  // Tiles wholly inside C whose k-tile is wholly inside the K range copy without bounds checks.
  const bool interior = i0 + T::BM <= a.M && j0 + T::BN <= a.N;
  const int whole_ktiles = (kend - kbeg) / T::BK;
  auto whole = [&](int kt) { return interior && kt < whole_ktiles; };

  // Copy r of thread tid is element c = tid + r * kThreads of the tile. A thread's copies share one row
  // (A) or one k (B) and step by a fixed number of columns: one base pointer per operand plus constant
  // offsets addresses all of them.
  constexpr int kAPerCol = T::BM / T::VEC, kBPerCol = T::BK / T::VEC;
  static_assert(T::kThreads % kAPerCol == 0 && T::kThreads % kBPerCol == 0, "copies keep their row");
  constexpr int kAStep = T::kThreads / kAPerCol, kBStep = T::kThreads / kBPerCol;  // columns between copies
  constexpr int kCopies = T::kACopies + T::kBCopies;
  const int a_m = (tid % kAPerCol) * T::VEC, a_k = tid / kAPerCol;
  const int b_k = (tid % kBPerCol) * T::VEC, b_n = tid / kBPerCol;
  const int a_rows = max(0, min(T::VEC, a.M - (i0 + a_m)));  // 0 .. VEC elements of the row pair exist
  const double* const a_src = a.A + (i0 + a_m) + static_cast<size_t>(kbeg + a_k) * a.lda;  // k-tile 0, copy 0
  const double* const b_src = a.B + (kbeg + b_k) + static_cast<size_t>(j0 + b_n) * a.ldb;
  const size_t a_copy_step = static_cast<size_t>(kAStep) * a.lda, b_copy_step = static_cast<size_t>(kBStep) * a.ldb;
  const size_t a_ktile_step = static_cast<size_t>(T::BK) * a.lda;

  // Copy c (A's copies first, then B's) of k-tile kt into `stage`. `unchecked` (std::true_type) where
  // whole(kt); otherwise every element outside A, B or the K range is zero-filled.
  auto copy = [&](auto unchecked, int c, int stage, int kt) {
    const int k0 = kbeg + kt * T::BK;
    if (c < T::kACopies) {
      const int r = c;
      double* dst = As + stage * T::BK * T::LDA + (a_k + r * kAStep) * T::LDA + a_m;
      const double* src = a_src + kt * a_ktile_step + r * a_copy_step;
      if constexpr (decltype(unchecked)::value) {
        cp_async_whole<8 * T::VEC>(dst, src);
      } else {
        const int n = k0 + a_k + r * kAStep < kend ? a_rows : 0;
        cp_async<8 * T::VEC>(dst, n ? src : a.A, 8 * n);
      }
    } else {
      const int r = c - T::kACopies;
      double* dst = Bs + stage * T::BN * T::LDB + (b_n + r * kBStep) * T::LDB + b_k;
      const double* src = b_src + static_cast<size_t>(kt) * T::BK + r * b_copy_step;
      if constexpr (decltype(unchecked)::value) {
        cp_async_whole<8 * T::VEC>(dst, src);
      } else {
        const int n = j0 + b_n + r * kBStep < a.N ? max(0, min(T::VEC, kend - (k0 + b_k))) : 0;
        cp_async<8 * T::VEC>(dst, n ? src : a.B, 8 * n);
      }
    }
  };
  auto copy_ktile = [&](int stage, int kt) {
    if (whole(kt)) {
#pragma unroll
      for (int c = 0; c < kCopies; ++c) copy(std::true_type{}, c, stage, kt);
    } else {
#pragma unroll
      for (int c = 0; c < kCopies; ++c) copy(std::false_type{}, c, stage, kt);
    }
  };

  double acc[T::MT][T::NT][4] = {};
#pragma unroll
  for (int s = 0; s < T::STAGES - 1; ++s) {
    if (s < ktiles) copy_ktile(s, s);
    cp_async_commit();  // empty groups too, so the wait count below holds
  }
  // This thread's fragment origins inside a stage.
  const int a_off = t * T::LDA + wm * T::WTM + g;
  const int b_off = (wn * T::WTN + g) * T::LDB + t;

  // One k-tile: the MMAs on stage kt % STAGES, with the copies of k-tile `next` spread between them (after
  // each mt group), so that the copies' address arithmetic issues while the tensor cores work rather than
  // in a block of its own between two k-tiles.
  constexpr int kGroups = T::BK / 16 * T::MT;
  constexpr int kCopiesPerGroup = (kCopies + kGroups - 1) / kGroups;
  auto ktile = [&](auto unchecked, int kt, int next, bool load) {
    const double* as = As + (kt % T::STAGES) * T::BK * T::LDA + a_off;
    const double* bs = Bs + (kt % T::STAGES) * T::BN * T::LDB + b_off;
#pragma unroll
    for (int ks = 0; ks < T::BK / 16; ++ks) {  // no barrier inside: loads of step ks + 1 overlap step ks
      double b[T::NT][4];
#pragma unroll
      for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) b[nt][i] = bs[nt * 8 * T::LDB + 16 * ks + 4 * i];
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt) {
        double af[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) af[i] = as[(16 * ks + 4 * (i / 2)) * T::LDA + mt * 16 + 8 * (i % 2)];
#pragma unroll
        for (int nt = 0; nt < T::NT; ++nt) mma_16x8x16<T::I>(acc[mt][nt], af, b[nt]);
#pragma unroll
        for (int q = 0; q < kCopiesPerGroup; ++q) {
          const int c = (ks * T::MT + mt) * kCopiesPerGroup + q;
          if (c < kCopies && load) copy(unchecked, c, next % T::STAGES, next);
        }
      }
    }
  };
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<T::STAGES - 2>();  // k-tile kt has landed (for this thread) ...
    __syncthreads();                 // ... for every thread; and everyone is done with k-tile kt - 1,
    const int next = kt + T::STAGES - 1;  // whose buffer k-tile `next` now overwrites
    if (whole(next))
      ktile(std::true_type{}, kt, next, true);
    else
      ktile(std::false_type{}, kt, next, next < ktiles);
    cp_async_commit();
  }
  cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits

  const size_t mn = static_cast<size_t>(a.M) * a.N;
#pragma unroll
  for (int mt = 0; mt < T::MT; ++mt) {
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = i0 + wm * T::WTM + mt * 16 + g + 8 * (r / 2);
        const int j = j0 + wn * T::WTN + nt * 8 + 2 * t + r % 2;
        if (i >= a.M || j >= a.N) continue;
        if (partial)
          partial[blockIdx.z * mn + i + static_cast<size_t>(j) * a.M] = acc[mt][nt][r];
        else
          store_c(a, i, j, acc[mt][nt][r]);
      }
    }
  }
#else
  __trap();  // the host refuses devices below CC 8.0
#endif
}

// C = alpha * (sum over z of partial[z], in z order) + beta * C.
__global__ void splitk_finish(GemmArgs a, const double* partial, int splits) {
  const size_t mn = static_cast<size_t>(a.M) * a.N;
  for (size_t e = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; e < mn;
       e += static_cast<size_t>(gridDim.x) * blockDim.x) {
    double s = 0.0;
    for (int z = 0; z < splits; ++z) s += partial[z * mn + e];
    store_c(a, static_cast<int>(e % a.M), static_cast<int>(e / a.M), s);
  }
}

}  // namespace dmma

// ---- host side ----

namespace {

using dmma::Config;
using dmma::dmma_kernel;
using dmma::Instr;
using dmma::splitk_finish;
using dmma::Tile;

// The most shared memory one block may ask for on `device`.
int smem_per_block(int device) {
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return optin;
}

// Raises dmma_kernel<T>'s dynamic shared-memory limit (above the default 48 KiB) on the current device, once
// per device switch rather than on every launch. Refuses, with the reason, a tile whose shared memory
// exceeds what this GPU gives one block.
template <class T>
void allow_dynamic_smem() {
  static std::atomic<int> set_for(-1);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (set_for.load() == device) return;
  const int optin = smem_per_block(device);
  if (T::kSmemBytes > optin)
    throw std::runtime_error("dmma: the " + std::to_string(T::BM) + "x" + std::to_string(T::BN) + "x" +
                             std::to_string(T::BK) + " tile needs " + std::to_string(T::kSmemBytes / 1024) +
                             " KiB of shared memory per block; this GPU allows " + std::to_string(optin / 1024));
  CUDA_CHECK(cudaFuncSetAttribute(dmma_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
  // All of the unified L1/shared storage as shared memory, so that as many blocks are resident as the
  // occupancy calculator (and the rule) assumes. Without it the split the SM runs with depends on the kernels
  // before: after a kernel with little shared memory, three 74 KiB 64x64 blocks did not fit (dmma at 1024^3:
  // 67% of cuBLAS in the default suite, 98% when it ran after cuBLAS). The copies bypass L1 anyway.
  CUDA_CHECK(cudaFuncSetAttribute(dmma_kernel<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  set_for.store(device);
}

template <class T>
void launch_tile(const GemmArgs& a, ExecContext& ctx, int splits) {
  const int depth = dmma::split_depth(a.K, splits);
  splits = ceil_div(a.K, depth);
  dim3 grid = tile_grid(a.M, T::BM, a.N, T::BN);  // (tile rows, tile columns); block_tile() orders them
  grid.z = splits;
  double* partial = nullptr;
  if (splits > 1)
    partial = static_cast<double*>(ctx.device_scratch(sizeof(double) * splits * static_cast<size_t>(a.M) * a.N));
  allow_dynamic_smem<T>();
  dmma_kernel<T><<<grid, T::kThreads, T::kSmemBytes, ctx.stream()>>>(a, partial, depth);
  CUDA_CHECK_LAUNCH();
  if (splits > 1) {
    const size_t mn = static_cast<size_t>(a.M) * a.N;
    const int blocks = static_cast<int>(std::min<size_t>((mn + 255) / 256, 4096));
    splitk_finish<<<blocks, 256, 0, ctx.stream()>>>(a, partial, splits);
    CUDA_CHECK_LAUNCH();
  }
}

// 16-byte copies: lda and ldb even, A and B 16-byte aligned.
bool wide_loads(const GemmArgs& a) {
  auto aligned16 = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return a.lda % 2 == 0 && a.ldb % 2 == 0 && aligned16(a.A) && aligned16(a.B);
}

// The tile shapes: block tile and k-tile depth; warps (M x N); stages from dmma::stages_for. Shared memory
// per block (dmma::smem_bytes): 128x128x16 4 stages 146 KiB; 128x128x32 3 stages 207 KiB; 128x64x16 4 stages
// 106 KiB; 64x64x16 4 stages 74 KiB.
// Warps: 2 x (BN / 32), so each warp holds a (BM / 2) x 32 piece of the block tile.
template <int BM, int BN, int BK, int VEC, Instr I>
using TileOf = Tile<BM, BN, BK, 2, BN / 32, dmma::stages_for(BM, BN, BK), VEC, I>;

template <int BM, int BN, int BK, Instr I>
void launch_shape(const GemmArgs& a, ExecContext& ctx, int splits) {
  static_assert(TileOf<BM, BN, BK, 2, I>::kSmemBytes == dmma::smem_bytes(BM, BN, BK), "one formula for both");
  if (wide_loads(a))
    launch_tile<TileOf<BM, BN, BK, 2, I>>(a, ctx, splits);
  else
    launch_tile<TileOf<BM, BN, BK, 1, I>>(a, ctx, splits);
}

template <Instr I>
void launch_instr(const GemmArgs& a, ExecContext& ctx, const Config& c) {
  if (c.bm == 128 && c.bn == 128 && c.bk == 16)
    launch_shape<128, 128, 16, I>(a, ctx, c.splits);
  else if (c.bm == 128 && c.bn == 128 && c.bk == 32)
    launch_shape<128, 128, 32, I>(a, ctx, c.splits);
  else if (c.bm == 128 && c.bn == 64 && c.bk == 16)
    launch_shape<128, 64, 16, I>(a, ctx, c.splits);
  else if (c.bm == 64 && c.bn == 64 && c.bk == 16)
    launch_shape<64, 64, 16, I>(a, ctx, c.splits);
  else
    throw std::invalid_argument("dmma: no " + dmma::to_string(c) + " tile configuration");
}

// Resident blocks per SM of tile T on `device` (0 when its shared memory does not fit).
template <class T>
int resident_blocks(int device) {
  if (T::kSmemBytes > smem_per_block(device)) return 0;
  allow_dynamic_smem<T>();
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dmma_kernel<T>, T::kThreads, T::kSmemBytes));
  return n;
}

template <Instr I>
void read_occupancy(dmma::Target& t, int device) {
  t.blocks_128x128 = resident_blocks<TileOf<128, 128, 32, 2, I>>(device);
  t.blocks_128x64 = resident_blocks<TileOf<128, 64, 16, 2, I>>(device);
  t.blocks_64x64 = resident_blocks<TileOf<64, 64, 16, 2, I>>(device);
}

// What the rule needs about the current device, read once per device.
dmma::Target target() {
  static std::mutex mutex;
  static std::map<int, dmma::Target> cache;  // device -> target
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it == cache.end()) {
    dmma::Target t;
    CUDA_CHECK(cudaDeviceGetAttribute(&t.sm_count, cudaDevAttrMultiProcessorCount, device));
    cudaFuncAttributes fa{};
    // The virtual architecture the code that runs here was compiled from (JIT from older PTX keeps it).
    CUDA_CHECK(cudaFuncGetAttributes(&fa, dmma_kernel<TileOf<64, 64, 16, 1, Instr::K4>>));
    t.code_arch = fa.ptxVersion;
    if (t.code_arch >= 90)
      read_occupancy<Instr::K16>(t, device);
    else if (t.code_arch >= 80)
      read_occupancy<Instr::K4>(t, device);
    it = cache.emplace(device, t).first;
  }
  return it->second;
}

// `t`: target() for the current device, which the caller has already read to choose `c`.
void run(const GemmArgs& a, ExecContext& ctx, const Config& c, const dmma::Target& t) {
  check_args(a);
  if (t.code_arch < 80)
    throw std::runtime_error("dmma needs FP64 tensor cores (compute capability 8.0+); this code is for compute_" +
                             std::to_string(t.code_arch));
  if (c.instr == Instr::K16 && t.code_arch < 90)
    throw std::runtime_error("dmma: mma.sync.m16n8k16 f64 needs code compiled for sm_90; this GPU runs compute_" +
                             std::to_string(t.code_arch) + " code (use the m8n8k4 configuration)");
  if (c.instr == Instr::K16)
    launch_instr<Instr::K16>(a, ctx, c);
  else
    launch_instr<Instr::K4>(a, ctx, c);
}

// A fixed configuration: `splits` >= 1 as given; -1: the rule's split count for this tile, but at least 2.
GemmLaunch fixed(int bm, int bn, int bk, int splits, std::optional<Instr> instr) {
  return [=](const GemmArgs& a, ExecContext& ctx) {
    const dmma::Target t = target();
    Config c;
    c.bm = bm;
    c.bn = bn;
    c.bk = bk;
    c.instr = instr.value_or(t.code_arch >= 90 ? Instr::K16 : Instr::K4);
    c.splits = splits >= 1 ? splits : dmma::split_count(a.M, a.N, a.K, bm, bn, t.sm_count);
    if (splits < 0) c.splits = std::max(2, c.splits);
    run(a, ctx, c, t);
  };
}

}  // namespace

dmma::Target dmma::current_target() { return target(); }

namespace {

constexpr int kDmmaCc = 80;

const auto& kRegistered = registry().add(
    {{"dmma", "FP64 tensor cores (mma.sync f64), cp.async multi-stage pipeline; tile and split-K chosen by shape",
      kDmmaCc, 50},
     [](const GemmArgs& a, ExecContext& ctx) {
       const dmma::Target t = target();
       run(a, ctx, dmma::choose(a.M, a.N, a.K, t, wide_loads(a)), t);
     }});

// The configurations the rule chooses from, each on its own, for autotuning and testing.
const auto& kRegistered128 = registry().add(
    {{"dmma_128x128", "dmma, 128x128x16 tiles (8 warps of 64x32), 4 stages, no split-K", kDmmaCc, 51, false, true,
      true},
     fixed(128, 128, 16, 1, std::nullopt)});
const auto& kRegistered128k32 = registry().add(
    {{"dmma_128x128_k32", "dmma, 128x128x32 tiles (8 warps of 64x32), 3 stages, no split-K", kDmmaCc, 52, false,
      true, true},
     fixed(128, 128, 32, 1, std::nullopt)});
const auto& kRegistered128x64 = registry().add(
    {{"dmma_128x64", "dmma, 128x64x16 tiles (4 warps of 64x32), 4 stages, 2 blocks/SM, no split-K", kDmmaCc, 53,
      false, true, true},
     fixed(128, 64, 16, 1, std::nullopt)});
const auto& kRegistered64 = registry().add(
    {{"dmma_64x64", "dmma, 64x64x16 tiles (4 warps of 32x32), 4 stages, no split-K", kDmmaCc, 54, false, true, true},
     fixed(64, 64, 16, 1, std::nullopt)});
const auto& kRegisteredSplit = registry().add(
    {{"dmma_64x64_splitk", "dmma, 64x64x16 tiles, split-K (at least 2 splits where K allows)", kDmmaCc, 55, false,
      true, true},
     fixed(64, 64, 16, -1, std::nullopt)});
const auto& kRegisteredK4 = registry().add(
    {{"dmma_128x128_m8n8k4", "dmma, 128x128x16 tiles on mma.sync.m8n8k4 (the sm_80/86 instruction)", kDmmaCc, 56,
      false, true, true},
     fixed(128, 128, 16, 1, Instr::K4)});

}  // namespace
}  // namespace ks::gemm

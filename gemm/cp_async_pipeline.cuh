// The multi-stage cp.async pipeline that the dmma (tensor-core) and warp_tiled (FFMA) kernels share: how a
// block's k-tiles of A and B sit in shared memory, the asynchronous copies that fill them, the loop that
// keeps STAGES - 1 k-tiles in flight, the order of the blocks, and the host-side launch checks.
//
// Shared memory. A's k-tile is stored k-major (As[k][m], m contiguous as in global memory) and B's n-major
// (Bs[n][k], k contiguous as in global memory), so every global-to-shared copy is a straight cp.async of 8
// or 16 bytes (cp.async copies global to shared memory without passing through registers; sm_80+). Row
// pitches are padded to 4 (mod 16) doubles, which keeps the kernels' shared loads conflict-free (each kernel
// says why for its own access pattern).
//
// Any shape. A tile wholly inside C whose k-tile lies wholly inside the K range copies without any check (the
// common case, and the cheap one: two instructions per copy); any other zero-fills the elements outside A, B
// or the K range through cp.async's source-size operand. 16-byte copies (VEC = 2) need lda and ldb even and
// 16-byte aligned A and B (wide_loads); otherwise the 8-byte instantiation (VEC = 1) runs.
//
// Pipeline. Each iteration waits for the oldest k-tile, multiplies it, and issues the copies of the k-tile
// STAGES - 1 ahead; the kernel spreads those copies between its multiplies, so that their address arithmetic
// issues while the math units are busy. One __syncthreads per k-tile both publishes the landed tile and
// retires the buffer the new copies overwrite.
#pragma once

#include "gemm/kernel_common.cuh"

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ks::gemm::pipeline {

constexpr int kPad = 4;  // pitch = 4 (mod 16) doubles

// Shared-memory layout and copy split of one block: BM x BN tile of C, BK-deep k-tiles, STAGES of them,
// VEC doubles per copy, THREADS threads.
template <int BM_, int BN_, int BK_, int STAGES_, int VEC_, int THREADS_>
struct Layout {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, VEC = VEC_, kThreads = THREADS_;
  static constexpr int LDA = BM + kPad, LDB = BK + kPad;
  static constexpr int kStageDoubles = BK * LDA + BN * LDB;
  static constexpr int kSmemBytes = STAGES * kStageDoubles * 8;
  static constexpr int kACopies = BK * BM / VEC / kThreads;  // cp.async per thread per stage
  static constexpr int kBCopies = BN * BK / VEC / kThreads;
  static constexpr int kCopies = kACopies + kBCopies;
  static_assert(BK * BM / VEC % kThreads == 0 && BN * BK / VEC % kThreads == 0, "copies must divide evenly");
  static_assert(LDA % 16 == kPad && LDB % 16 == kPad, "pitches are 4 (mod 16) doubles");
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

// ---- block order ----

// The grid is (tile rows, tile columns); blocks take tiles in the grouped order of grouped_tile().
__device__ __forceinline__ void block_tile(int& tile_m, int& tile_n) {
  grouped_tile(static_cast<long long>(blockIdx.y) * gridDim.x + blockIdx.x, gridDim.x, gridDim.y, tile_m, tile_n);
}

// ---- the copies of one block ----

// The copies of the BM x BN tile at (i0, j0), over the K range [kbeg, kend), into `smem`: STAGES stages of
// As[BK][LDA] followed by STAGES stages of Bs[BN][LDB].
template <class L>
class KTileCopier {
 public:
  __device__ __forceinline__ KTileCopier(const GemmArgs& a, double* smem, int i0, int j0, int kbeg, int kend)
      : a_(a),
        as_(smem),
        bs_(smem + L::STAGES * L::BK * L::LDA),
        j0_(j0),
        kbeg_(kbeg),
        kend_(kend),
        ktiles_(ceil_div(kend - kbeg, L::BK)),
        whole_ktiles_(i0 + L::BM <= a.M && j0 + L::BN <= a.N ? (kend - kbeg) / L::BK : 0),
        a_m_((threadIdx.x % kAPerCol) * L::VEC),
        a_k_(threadIdx.x / kAPerCol),
        b_k_((threadIdx.x % kBPerCol) * L::VEC),
        b_n_(threadIdx.x / kBPerCol),
        a_rows_(max(0, min(L::VEC, a.M - (i0 + a_m_)))),
        a_src_(a.A + (i0 + a_m_) + static_cast<size_t>(kbeg + a_k_) * a.lda),
        b_src_(a.B + (kbeg + b_k_) + static_cast<size_t>(j0 + b_n_) * a.ldb),
        a_copy_step_(static_cast<size_t>(kAStep) * a.lda),
        b_copy_step_(static_cast<size_t>(kBStep) * a.ldb),
        a_ktile_step_(static_cast<size_t>(L::BK) * a.lda) {}

  __device__ __forceinline__ int ktiles() const { return ktiles_; }
  // k-tile kt of a tile wholly inside C lies wholly inside the K range: its copies need no checks.
  __device__ __forceinline__ bool whole(int kt) const { return kt < whole_ktiles_; }
  __device__ __forceinline__ const double* a_stage(int stage) const { return as_ + stage * L::BK * L::LDA; }
  __device__ __forceinline__ const double* b_stage(int stage) const { return bs_ + stage * L::BN * L::LDB; }

  // This thread's copy c (A's copies first, then B's; c < L::kCopies) of k-tile kt into `stage`.
  // `unchecked` (std::true_type) where whole(kt); otherwise every element outside A, B or the K range is
  // zero-filled.
  template <class Unchecked>
  __device__ __forceinline__ void copy(Unchecked, int c, int stage, int kt) const {
    const int k0 = kbeg_ + kt * L::BK;
    if (c < L::kACopies) {
      const int r = c;
      double* dst = as_ + stage * L::BK * L::LDA + (a_k_ + r * kAStep) * L::LDA + a_m_;
      const double* src = a_src_ + kt * a_ktile_step_ + r * a_copy_step_;
      if constexpr (Unchecked::value) {
        cp_async_whole<8 * L::VEC>(dst, src);
      } else {
        const int n = k0 + a_k_ + r * kAStep < kend_ ? a_rows_ : 0;
        cp_async<8 * L::VEC>(dst, n ? src : a_.A, 8 * n);
      }
    } else {
      const int r = c - L::kACopies;
      double* dst = bs_ + stage * L::BN * L::LDB + (b_n_ + r * kBStep) * L::LDB + b_k_;
      const double* src = b_src_ + static_cast<size_t>(kt) * L::BK + r * b_copy_step_;
      if constexpr (Unchecked::value) {
        cp_async_whole<8 * L::VEC>(dst, src);
      } else {
        const int n = j0_ + b_n_ + r * kBStep < a_.N ? max(0, min(L::VEC, kend_ - (k0 + b_k_))) : 0;
        cp_async<8 * L::VEC>(dst, n ? src : a_.B, 8 * n);
      }
    }
  }

  // All of this thread's copies of k-tile kt.
  __device__ __forceinline__ void copy_ktile(int stage, int kt) const {
    if (whole(kt)) {
#pragma unroll
      for (int c = 0; c < L::kCopies; ++c) copy(std::true_type{}, c, stage, kt);
    } else {
#pragma unroll
      for (int c = 0; c < L::kCopies; ++c) copy(std::false_type{}, c, stage, kt);
    }
  }

 private:
  // Copy r of thread tid is element tid + r * kThreads of the tile. A thread's copies share one row (A) or one
  // k (B) and step by a fixed number of columns: one base pointer per operand plus constant offsets address
  // all of them.
  static constexpr int kAPerCol = L::BM / L::VEC, kBPerCol = L::BK / L::VEC;
  static_assert(L::kThreads % kAPerCol == 0 && L::kThreads % kBPerCol == 0, "copies keep their row");
  static constexpr int kAStep = L::kThreads / kAPerCol, kBStep = L::kThreads / kBPerCol;  // columns between copies

  const GemmArgs& a_;
  double* const as_;
  double* const bs_;
  const int j0_, kbeg_, kend_, ktiles_, whole_ktiles_;
  const int a_m_, a_k_, b_k_, b_n_, a_rows_;
  const double* const a_src_;  // k-tile 0, copy 0
  const double* const b_src_;
  const size_t a_copy_step_, b_copy_step_, a_ktile_step_;
};

// The main loop. `ktile(unchecked, kt, next, load)` multiplies k-tile kt (in stage kt % STAGES) and, when
// `load`, issues copier.copy(unchecked, c, next % STAGES, next) for every c < L::kCopies, spread between its
// multiplies. Returns when no copy is still writing shared memory.
template <class L, class KTile>
__device__ __forceinline__ void run(const KTileCopier<L>& copier, KTile&& ktile) {
  const int ktiles = copier.ktiles();
#pragma unroll
  for (int s = 0; s < L::STAGES - 1; ++s) {
    if (s < ktiles) copier.copy_ktile(s, s);
    cp_async_commit();  // empty groups too, so the wait count below holds
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<L::STAGES - 2>();  // k-tile kt has landed (for this thread) ...
    __syncthreads();                 // ... for every thread; and everyone is done with k-tile kt - 1,
    const int next = kt + L::STAGES - 1;  // whose buffer k-tile `next` now overwrites
    if (copier.whole(next))
      ktile(std::true_type{}, kt, next, true);
    else
      ktile(std::false_type{}, kt, next, next < ktiles);
    cp_async_commit();
  }
  cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits
}

// ---- host side ----

// The most shared memory one block may ask for on `device`.
inline int smem_per_block(int device) {
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return optin;
}

// 16-byte copies: lda and ldb even, A and B 16-byte aligned.
inline bool wide_loads(const GemmArgs& a) {
  auto aligned16 = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return a.lda % 2 == 0 && a.ldb % 2 == 0 && aligned16(a.A) && aligned16(a.B);
}

// Readies `Kernel` (one instantiation of a pipeline kernel with layout L) for launch on the current device,
// once per device switch rather than on every launch: refuses, with the reason, code compiled below compute_80
// (cp.async) and a tile whose shared memory exceeds what this GPU gives one block; raises the dynamic
// shared-memory limit above the default 48 KiB; and asks for all of the unified L1/shared storage as shared
// memory, so that as many blocks are resident as the occupancy calculator says: without the carveout the split
// the SM runs with depends on the kernels that ran before (docs/gemm-notes.md shows what that cost).
// The copies bypass L1 anyway. `name`: the variant, for the messages.
template <class L, auto Kernel>
void prepare(const char* name) {
  static std::atomic<int> set_for(-1);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (set_for.load() == device) return;
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, Kernel));
  const std::string tile = std::to_string(L::BM) + "x" + std::to_string(L::BN) + "x" + std::to_string(L::BK);
  if (fa.ptxVersion < 80)
    throw std::runtime_error(std::string(name) + " needs cp.async (code compiled for compute_80 or later); this GPU runs compute_" +
                             std::to_string(fa.ptxVersion) + " code");
  const int optin = smem_per_block(device);
  if (L::kSmemBytes > optin)
    throw std::runtime_error(std::string(name) + ": the " + tile + " tile needs " +
                             std::to_string(L::kSmemBytes / 1024) + " KiB of shared memory per block; this GPU allows " +
                             std::to_string(optin / 1024));
  CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes));
  CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  set_for.store(device);
}

// Resident blocks per SM of `Kernel` (layout L) on `device`; 0 when its shared memory does not fit.
template <class L, auto Kernel>
int blocks_per_sm(int device, const char* name) {
  if (L::kSmemBytes > smem_per_block(device)) return 0;
  prepare<L, Kernel>(name);
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, Kernel, L::kThreads, L::kSmemBytes));
  return n;
}

}  // namespace ks::gemm::pipeline

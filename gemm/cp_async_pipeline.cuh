// The multi-stage cp.async pipeline that the dmma (tensor-core) and warp_tiled (FFMA) kernels share: how a
// block's k-tiles of A and B sit in shared memory, the asynchronous copies that fill them, the loop that
// keeps STAGES - 1 k-tiles in flight, the order of the blocks, and the host-side launch checks.
//
// Shared memory. Each operand's k-tile keeps the orientation it has in global memory, so every global-to-shared
// copy is a straight cp.async of 8 or 16 bytes (cp.async copies global to shared memory without passing through
// registers; sm_80+): with op N, A's k-tile is stored k-major (As[k][m], m contiguous) and B's n-major (Bs[n][k],
// k contiguous); op(A) = A^T is stored m-major (As[m][k]) and op(B) = B^T k-major (Bs[k][n]). The transposition
// is absorbed in the kernels' shared-memory reads (OperandTile::at), not done by a pass over A or B. Row
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
//
// AMD GPUs (the HIP build) have no asynchronous global-to-shared copy: there each copy is a plain load and a
// shared-memory store, complete when it is issued, and commit and wait are empty. The one barrier per k-tile
// still orders every access (a stage is overwritten only after all threads passed the barrier that retired it),
// so the kernels and their layouts are the same; the latency of the loads is hidden only as far as the
// compiler schedules them among the multiplies.
#pragma once

#include "gemm/kernel_common.cuh"

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ks::gemm::pipeline {

constexpr int kPad = 4;  // pitch = 4 (mod 16) doubles

// One operand's k-tile in shared memory: R x BK (R = BM rows of op(A), or BN columns of op(B)), stored as in
// global memory: k contiguous (KCONTIG: op(A) = A^T, op(B) = B) in R lines of BK + kPad doubles, or R contiguous
// in BK lines of R + kPad. Element (x, k) of the tile (x < R, k < BK) sits at at(x, k).
template <int R, int BK, int VEC, int THREADS, bool KCONTIG>
struct OperandTile {
  static constexpr bool kKContig = KCONTIG;
  static constexpr int kLine = KCONTIG ? BK : R;   // doubles along the contiguous direction
  static constexpr int kLines = KCONTIG ? R : BK;
  static constexpr int kPitch = kLine + kPad;
  static constexpr int kStageDoubles = kLines * kPitch;
  static constexpr int kCopies = R * BK / VEC / THREADS;  // cp.async per thread per stage
  static constexpr int kPerLine = kLine / VEC;             // threads per line
  static constexpr int kStep = THREADS / kPerLine;         // lines between one thread's copies
  static_assert(R * BK / VEC % THREADS == 0, "copies must divide evenly");
  static_assert(THREADS % kPerLine == 0, "copies keep their line");
  static_assert(kPitch % 16 == kPad, "pitches are 4 (mod 16) doubles");
  __host__ __device__ static constexpr int at(int x, int k) { return KCONTIG ? x * kPitch + k : k * kPitch + x; }
};

// Shared-memory layout and copy split of one block: BM x BN tile of C, BK-deep k-tiles, STAGES of them,
// VEC doubles per copy, THREADS threads; op(A) = A^T where TA, op(B) = B^T where TB.
template <int BM_, int BN_, int BK_, int STAGES_, int VEC_, int THREADS_, bool TA_ = false, bool TB_ = false>
struct Layout {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, VEC = VEC_, kThreads = THREADS_;
  static constexpr bool TA = TA_, TB = TB_;
  using TileA = OperandTile<BM, BK, VEC, kThreads, TA>;
  using TileB = OperandTile<BN, BK, VEC, kThreads, !TB>;
  static constexpr int LDA = TileA::kPitch, LDB = TileB::kPitch;  // NN: BM + 4 (As[k][m]) and BK + 4 (Bs[n][k])
  static constexpr int kAStageDoubles = TileA::kStageDoubles, kBStageDoubles = TileB::kStageDoubles;
  static constexpr int kStageDoubles = kAStageDoubles + kBStageDoubles;
  static constexpr int kSmemBytes = STAGES * kStageDoubles * 8;
  static constexpr int kACopies = TileA::kCopies, kBCopies = TileB::kCopies;
  static constexpr int kCopies = kACopies + kBCopies;
};

// ---- the instructions ----

// cp.async needs compute capability 8.0, and code compiled for compute_80 or later: below that the copies
// below compile to nothing. The HIP build's plain copies need nothing.
#if defined(KS_HIP)
constexpr int kCpAsyncCc = 0;
#else
constexpr int kCpAsyncCc = 80;
#endif

// 1 in a compilation pass that has the copies: CUDA device code for compute_80 or later, or any HIP pass. A
// pipeline kernel's body is compiled only where this holds.
#if defined(KS_HIP) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)
#define KS_PIPELINE_COPIES 1
#else
#define KS_PIPELINE_COPIES 0
#endif

// Throws, naming `name`, where the code this GPU runs for `kernel` was compiled below compute_80 (the copies
// would be empty and shared memory would hold garbage).
inline void require_cp_async(const char* name, const void* kernel) {
  if (kCpAsyncCc == 0) return;
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  if (fa.ptxVersion < kCpAsyncCc)
    throw std::runtime_error(std::string(name) + " needs cp.async (code compiled for compute_80 or later); this GPU runs compute_" +
                             std::to_string(fa.ptxVersion) + " code");
}

// Copies `src_bytes` (0, 8 or, for Bytes == 16, 16) from global to shared and zero-fills the rest of Bytes.
template <int Bytes>
__device__ __forceinline__ void cp_async(double* smem, const double* gmem, int src_bytes) {
#if defined(KS_HIP)
  if constexpr (Bytes == 16) {
    double2 v{0.0, 0.0};
    if (src_bytes == 16)
      v = *reinterpret_cast<const double2*>(gmem);
    else if (src_bytes == 8)
      v.x = *gmem;
    *reinterpret_cast<double2*>(smem) = v;
  } else {
    *smem = src_bytes ? *gmem : 0.0;
  }
#elif __CUDA_ARCH__ >= 800
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
#if defined(KS_HIP)
  if constexpr (Bytes == 16)
    *reinterpret_cast<double2*>(smem) = *reinterpret_cast<const double2*>(gmem);
  else
    *smem = *gmem;
#elif __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(gmem));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if !defined(KS_HIP) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
#if !defined(KS_HIP) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

// ---- block order ----

// The grid is (tile rows, tile columns); blocks take tiles in the grouped order of grouped_tile().
__device__ __forceinline__ void block_tile(int& tile_m, int& tile_n) {
  grouped_tile(static_cast<long long>(blockIdx.y) * gridDim.x + blockIdx.x, gridDim.x, gridDim.y, tile_m, tile_n);
}

// ---- the copies of one block ----

// One thread's copies of one operand's k-tiles (OperandTile `Tile`, BK deep, VEC doubles per copy) for the block
// whose tile starts at row (column) x0 of op(A) (op(B)), over the K range from kbeg. Copy r of thread tid is
// element tid + r * kThreads of the tile, in line order: a thread's copies share their place along the line and
// step by a fixed number of lines, so one base pointer and constant offsets address all of them.
template <class Tile, int BK, int VEC>
class OperandCopier {
 public:
  // base, ld: the operand as stored; limit: M (op(A)) or N (op(B)).
  __device__ __forceinline__ OperandCopier(const double* base, int ld, int x0, int limit, int kbeg)
      : base_(base),
        c_((threadIdx.x % Tile::kPerLine) * VEC),
        line_(threadIdx.x / Tile::kPerLine),
        k_first_(kbeg + (Tile::kKContig ? c_ : line_)),
        fixed_(Tile::kKContig ? limit - (x0 + line_) : max(0, min(VEC, limit - (x0 + c_)))),
        src_(Tile::kKContig ? base + k_first_ + static_cast<size_t>(x0 + line_) * ld
                            : base + (x0 + c_) + static_cast<size_t>(k_first_) * ld),
        copy_step_(static_cast<size_t>(Tile::kStep) * ld),
        ktile_step_(static_cast<size_t>(BK) * ld) {}

  // Copy r of k-tile kt into `stage` (this operand's part of a stage). Unchecked: the k-tile lies inside the
  // operand and the K range; otherwise what lies outside the operand or at k >= kend is zero-filled.
  template <bool Unchecked>
  __device__ __forceinline__ void copy(double* stage, int r, int kt, int kend) const {
    double* dst = stage + (line_ + r * Tile::kStep) * Tile::kPitch + c_;
    const double* src = src_ + kt * (Tile::kKContig ? static_cast<size_t>(BK) : ktile_step_) + r * copy_step_;
    if constexpr (Unchecked) {
      cp_async_whole<8 * VEC>(dst, src);
    } else {
      const int k = k_first_ + kt * BK;
      int n;
      if constexpr (Tile::kKContig)
        n = r * Tile::kStep < fixed_ ? max(0, min(VEC, kend - k)) : 0;  // line inside, then how much of k
      else
        n = k + r * Tile::kStep < kend ? fixed_ : 0;  // k inside, then how much of the line
      cp_async<8 * VEC>(dst, n ? src : base_, 8 * n);
    }
  }

 private:
  const double* const base_;
  const int c_, line_;  // this thread's place along a line, and its first line
  const int k_first_;   // k of its first element in k-tile 0
  const int fixed_;     // kKContig: lines left in the operand from its first; else: valid doubles of its copies
  const double* const src_;  // k-tile 0, copy 0
  const size_t copy_step_, ktile_step_;  // ktile_step_: where k runs across lines (else BK)
};

// The copies of the BM x BN tile at (i0, j0), over the K range [kbeg, kend), into `smem`: STAGES stages of A's
// tile followed by STAGES stages of B's (L::TileA, L::TileB).
template <class L>
class KTileCopier {
 public:
  __device__ __forceinline__ KTileCopier(const GemmArgs& a, double* smem, int i0, int j0, int kbeg, int kend)
      : as_(smem),
        bs_(smem + L::STAGES * L::kAStageDoubles),
        kend_(kend),
        ktiles_(ceil_div(kend - kbeg, L::BK)),
        whole_ktiles_(i0 + L::BM <= a.M && j0 + L::BN <= a.N ? (kend - kbeg) / L::BK : 0),
        a_(a.A, a.lda, i0, a.M, kbeg),
        b_(a.B, a.ldb, j0, a.N, kbeg) {}

  __device__ __forceinline__ int ktiles() const { return ktiles_; }
  // k-tile kt of a tile wholly inside C lies wholly inside the K range: its copies need no checks.
  __device__ __forceinline__ bool whole(int kt) const { return kt < whole_ktiles_; }
  __device__ __forceinline__ const double* a_stage(int stage) const { return as_ + stage * L::kAStageDoubles; }
  __device__ __forceinline__ const double* b_stage(int stage) const { return bs_ + stage * L::kBStageDoubles; }

  // This thread's copy c (A's copies first, then B's; c < L::kCopies) of k-tile kt into `stage`.
  // `unchecked` (std::true_type) where whole(kt); otherwise every element outside A, B or the K range is
  // zero-filled.
  template <class Unchecked>
  __device__ __forceinline__ void copy(Unchecked, int c, int stage, int kt) const {
    if (c < L::kACopies)
      a_.template copy<Unchecked::value>(as_ + stage * L::kAStageDoubles, c, kt, kend_);
    else
      b_.template copy<Unchecked::value>(bs_ + stage * L::kBStageDoubles, c - L::kACopies, kt, kend_);
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
  double* const as_;
  double* const bs_;
  const int kend_, ktiles_, whole_ktiles_;
  const OperandCopier<typename L::TileA, L::BK, L::VEC> a_;
  const OperandCopier<typename L::TileB, L::BK, L::VEC> b_;
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
#if defined(KS_HIP)  // no opt-in on AMD GPUs: a block may have all of a compute unit's LDS (64 KiB on gfx9)
  CUDA_CHECK(hipDeviceGetAttribute(&optin, hipDeviceAttributeMaxSharedMemoryPerBlock, device));
#else
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
#endif
  return optin;
}

// 16-byte copies: lda and ldb even, A and B 16-byte aligned (wide_operand: one operand so).
inline bool wide_operand(const double* p, int ld) { return ld % 2 == 0 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
inline bool wide_loads(const GemmArgs& a) { return wide_operand(a.A, a.lda) && wide_operand(a.B, a.ldb); }

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
  require_cp_async(name, reinterpret_cast<const void*>(Kernel));
  const std::string tile = std::to_string(L::BM) + "x" + std::to_string(L::BN) + "x" + std::to_string(L::BK);
  const int optin = smem_per_block(device);
  if (L::kSmemBytes > optin)
    throw std::runtime_error(std::string(name) + ": the " + tile + " tile needs " +
                             std::to_string(L::kSmemBytes / 1024) + " KiB of shared memory per block; this GPU allows " +
                             std::to_string(optin / 1024));
#if !defined(KS_HIP)  // AMD GPUs: LDS is not carved out of L1, and a block may use all of it without asking
  CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes));
  CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
#endif
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

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
// Shared memory, copies, pipeline and block order: gemm/cp_async_pipeline.cuh, shared with warp_tiled
// (STAGES k-tiles 16 or 32 deep in flight; tiles wholly inside C copy without checks, edge tiles zero-fill;
// grouped block order for L2 reuse). All four op(A) op(B) combinations run natively: each operand's k-tile keeps
// its global orientation in shared memory and the fragment loads read it through OperandTile::at. With the
// 4 (mod 16) pitches, a fragment load by a half-warp (g = 0..3, t = 0..3) touches word (4 t + g) mod 16 of an
// operand stored with M (N) contiguous and (4 g + t) mod 16 of one stored with k contiguous, sixteen distinct
// 8-byte bank pairs either way: conflict-free. The copies of the next k-tile are spread between the MMAs (a few after each group of MMAs).
// Stores are guarded, so any M, N, K works. The tile shapes are the rows of dmma::kShapes (gemm/dmma_shapes.hpp).
//
// Split-K (small or skinny C): blockIdx.z owns one range of K and writes its partial tile to scratch; a second
// kernel adds the partials in z order and applies alpha and beta, so the result is deterministic.
//
// Measurements, and what limits it: docs/gemm-notes.md.
// Run: build/bench/kbench run --suite gemm --variants dmma --sizes 1024,2048,4096
#include "common/device_info.hpp"
#include "common/dispatch.hpp"
#include "common/per_device.hpp"
#include "gemm/cp_async_pipeline.cuh"
#include "gemm/dmma_mma.cuh"
#include "gemm/dmma_shapes.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace ks::gemm {
namespace dmma {

// The device code lives in a named (not anonymous) namespace: code compiled for sm_75 never uses most of
// it, and nvcc warns about unreferenced entities with internal linkage.
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int VEC_, Instr I_, bool TA_ = false,
          bool TB_ = false>
struct Tile : pipeline::Layout<BM_, BN_, BK_, STAGES_, VEC_, 32 * WARPS_M_ * WARPS_N_, TA_, TB_> {
  using L = pipeline::Layout<BM_, BN_, BK_, STAGES_, VEC_, 32 * WARPS_M_ * WARPS_N_, TA_, TB_>;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr Instr I = I_;
  static constexpr int WTM = L::BM / WARPS_M, WTN = L::BN / WARPS_N;  // warp tile
  static constexpr int MT = WTM / 16, NT = WTN / 8;                   // mma tiles per warp
  static_assert(L::BM % (16 * WARPS_M) == 0 && L::BN % (8 * WARPS_N) == 0, "warp tile must hold whole mma tiles");
  static_assert(L::BK % 16 == 0, "k-tiles hold whole 16-deep mma steps");
};

// ---- the kernel ----

// The block's tile, for dmma_kernel below.
template <class T>
__device__ __forceinline__ void dmma_tile(GemmArgs a, double* partial, int split_depth) {
  extern __shared__ __align__(16) double smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp % T::WARPS_M, wn = warp / T::WARPS_M;
  int tile_m, tile_n;
  pipeline::block_tile(tile_m, tile_n);
  const int i0 = tile_m * T::BM, j0 = tile_n * T::BN;
  const int kbeg = blockIdx.z * split_depth;
  const pipeline::KTileCopier<T> copier(a, smem, i0, j0, kbeg, min(a.K, kbeg + split_depth));

  double acc[T::MT][T::NT][4] = {};
  // This thread's fragment origins inside a stage: A(wm WTM + g, t) and B(t, wn WTN + g).
  using TA = typename T::TileA;
  using TB = typename T::TileB;
  const int a_off = TA::at(wm * T::WTM + g, t);
  const int b_off = TB::at(wn * T::WTN + g, t);

  // One k-tile: the MMAs on stage kt % STAGES, with the copies of k-tile `next` spread between them (after
  // each mt group), so that the copies' address arithmetic issues while the tensor cores work rather than
  // in a block of its own between two k-tiles.
  constexpr int kGroups = T::BK / 16 * T::MT;
  constexpr int kCopiesPerGroup = (T::kCopies + kGroups - 1) / kGroups;
  pipeline::run(copier, [&](auto unchecked, int kt, int next, bool load) {
    const double* as = copier.a_stage(kt % T::STAGES) + a_off;
    const double* bs = copier.b_stage(kt % T::STAGES) + b_off;
#pragma unroll
    for (int ks = 0; ks < T::BK / 16; ++ks) {  // no barrier inside: loads of step ks + 1 overlap step ks
      double b[T::NT][4];
#pragma unroll
      for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) b[nt][i] = bs[TB::at(nt * 8, 16 * ks + 4 * i)];
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt) {
        double af[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) af[i] = as[TA::at(mt * 16 + 8 * (i % 2), 16 * ks + 4 * (i / 2))];
#pragma unroll
        for (int nt = 0; nt < T::NT; ++nt) mma_16x8x16<T::I>(acc[mt][nt], af, b[nt]);
#pragma unroll
        for (int q = 0; q < kCopiesPerGroup; ++q) {
          const int c = (ks * T::MT + mt) * kCopiesPerGroup + q;
          if (c < T::kCopies && load) copier.copy(unchecked, c, next % T::STAGES, next);
        }
      }
    }
  });

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
}

// `partial` null: C = alpha AB + beta C. Otherwise blockIdx.z's product over its K range goes to
// partial[z][j][i] (M x N, unscaled) for splitk_finish. Only the code that can run is compiled: the host
// refuses devices below CC 8.0, launches the K16 tiles on sm_90 code only, and K4 tiles on sm_90 code only for
// the m8n8k4 tuning configuration's shape (dmma::k4_on_sm90). The rest are traps: half of the sm_86 code and
// three eighths of the sm_90 code this file would otherwise build, never launched.
template <class T>
__global__ void __launch_bounds__(T::kThreads, 1) dmma_kernel(GemmArgs a, double* partial, int split_depth) {
#if __CUDA_ARCH__ >= 900
  constexpr bool kLaunched = T::I == Instr::K16 || dmma::k4_on_sm90(dmma::shape_index(T::BM, T::BN, T::BK));
#elif __CUDA_ARCH__ >= 800
  constexpr bool kLaunched = T::I == Instr::K4;
#else
  constexpr bool kLaunched = false;
#endif
  if constexpr (kLaunched)
    dmma_tile<T>(a, partial, split_depth);
  else
    __trap();
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
using dmma::kShapes;
using dmma::splitk_finish;

// The kernel's tile for row S of dmma::kShapes, with VEC doubles per copy, instruction I, and op(A) = A^T where
// TA, op(B) = B^T where TB.
template <int S, int VEC, Instr I, bool TA = false, bool TB = false>
using TileOf = dmma::Tile<kShapes[S].bm, kShapes[S].bn, kShapes[S].bk, kShapes[S].warps_m, kShapes[S].warps_n,
                          kShapes[S].stages, VEC, I, TA, TB>;

// Calls f(std::integral_constant<int, S>{}) for the row S == shape.
template <class F>
void with_shape(int shape, F&& f) {
  with_index<dmma::kShapeCount>(shape, std::forward<F>(f), "dmma tile shapes");
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
  pipeline::prepare<T, dmma_kernel<T>>("dmma");
  dmma_kernel<T><<<grid, T::kThreads, T::kSmemBytes, ctx.stream()>>>(a, partial, depth);
  CUDA_CHECK_LAUNCH();
  if (splits > 1) {
    const size_t mn = static_cast<size_t>(a.M) * a.N;
    const int blocks = static_cast<int>(std::min<size_t>((mn + 255) / 256, 4096));
    splitk_finish<<<blocks, 256, 0, ctx.stream()>>>(a, partial, splits);
    CUDA_CHECK_LAUNCH();
  }
}

template <int S, Instr I, bool TA, bool TB>
void launch_shape(const GemmArgs& a, ExecContext& ctx, int splits) {
  static_assert(TileOf<S, 2, I>::kSmemBytes == dmma::smem_bytes(kShapes[S]), "one formula for both");
  if (pipeline::wide_loads(a))
    launch_tile<TileOf<S, 2, I, TA, TB>>(a, ctx, splits);
  else
    launch_tile<TileOf<S, 1, I, TA, TB>>(a, ctx, splits);
}

template <Instr I>
void launch_instr(const GemmArgs& a, ExecContext& ctx, const Config& c) {
  with_ops(a, [&](auto ta, auto tb) {
    with_shape(c.shape, [&](auto s) {
      launch_shape<decltype(s)::value, I, decltype(ta)::value, decltype(tb)::value>(a, ctx, c.splits);
    });
  });
}

template <Instr I>
void read_blocks_per_sm(dmma::Target& t, int device) {
  for (int shape = 0; shape < dmma::kShapeCount; ++shape)
    with_shape(shape, [&](auto s) {
      using T = TileOf<decltype(s)::value, 2, I>;
      t.blocks_per_sm[shape] = pipeline::blocks_per_sm<T, dmma_kernel<T>>(device, "dmma");
    });
}

// What the rule needs about a device.
dmma::Target read_target(int device) {
  dmma::Target t;
  CUDA_CHECK(cudaDeviceGetAttribute(&t.sm_count, cudaDevAttrMultiProcessorCount, device));
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  t.l2_bytes = l2;
  int mem_khz = 0, bus_bits = 0, sm_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device));
  if (sm_khz > 0 && t.sm_count > 0)
    t.dram_bytes_per_sm_cycle = dram_bandwidth_gbs(mem_khz, bus_bits) * 1e9 / (sm_khz * 1e3 * t.sm_count);
  cudaFuncAttributes fa{};
  // The virtual architecture the code that runs here was compiled from (JIT from older PTX keeps it).
  CUDA_CHECK(cudaFuncGetAttributes(&fa, dmma_kernel<TileOf<dmma::split_k_shape(), 1, Instr::K4>>));
  t.code_arch = fa.ptxVersion;
  if (t.code_arch >= 90)
    read_blocks_per_sm<Instr::K16>(t, device);
  else if (t.code_arch >= 80)
    read_blocks_per_sm<Instr::K4>(t, device);
  return t;
}

// The current device's, read once per device.
dmma::Target target() {
  static PerDevice<dmma::Target> targets(read_target);
  return targets.get();
}

// `t`: target() for the current device, which the caller has already read to choose `c`.
void run_config(const GemmArgs& a, ExecContext& ctx, const Config& c, const dmma::Target& t) {
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

// One fixed configuration of `shape`: `splits` >= 1 as given; -1: the rule's split count for this shape, but at
// least 2. k4: mma.sync.m8n8k4 whatever the architecture.
GemmLaunch fixed(int shape, int splits, bool k4) {
  return [=](const GemmArgs& a, ExecContext& ctx) {
    const dmma::Target t = target();
    Config c;
    c.shape = shape;
    c.instr = k4 || t.code_arch < 90 ? Instr::K4 : Instr::K16;
    const dmma::Shape& s = kShapes[shape];
    c.splits = splits >= 1 ? splits
                           : std::max(2, dmma::split_count(a.M, a.N, a.K, s.bm, s.bn, t.sm_count, t.blocks_per_sm[shape]));
    run_config(a, ctx, c, t);
  };
}

std::string shape_summary(int shape) {
  const dmma::Shape& s = kShapes[shape];
  return "dmma, " + dmma::shape_name(shape) + " tiles (" + std::to_string(s.warps_m * s.warps_n) + " warps of " +
         std::to_string(s.bm / s.warps_m) + "x" + std::to_string(s.bn / s.warps_n) + "), " +
         std::to_string(s.stages) + " stages, no split-K";
}

constexpr int kDmmaCc = 80;

}  // namespace

dmma::Target dmma::current_target() { return target(); }

void dmma::run_rule(const GemmArgs& a, ExecContext& ctx) {
  const dmma::Target t = target();
  run_config(a, ctx, dmma::choose(a.M, a.N, a.K, t, pipeline::wide_loads(a)), t);
}

KS_GEMM_VARIANT({.info = {.name = "dmma",
                          .summary = "FP64 tensor cores (mma.sync f64), cp.async multi-stage pipeline; tile and split-K "
                                     "chosen by shape",
                          .min_cc = kDmmaCc},
                 .launch = dmma::run_rule,
                 .suite_modes = SuiteModes::Pipelined,
                 .ops = kOpsAll});

// The configurations the rule chooses from, each on its own, for autotuning and testing: one per row of
// dmma::kShapes, then dmma::kExtras.
KS_GEMM_VARIANTS([] {
  std::vector<GemmVariant> out;
  for (int shape = 0; shape < dmma::kShapeCount; ++shape)
    out.push_back({.info = {.name = dmma::variant_name(shape), .summary = shape_summary(shape), .min_cc = kDmmaCc,
                            .tuning = true},
                   .launch = fixed(shape, 1, false),
                   .ops = kOpsAll});
  for (const dmma::Extra& e : dmma::kExtras)
    out.push_back({.info = {.name = dmma::variant_name(e.shape) + e.suffix, .summary = e.summary, .min_cc = kDmmaCc,
                            .tuning = true},
                   .launch = fixed(e.shape, e.splits, e.k4),
                   .ops = kOpsAll});
  return out;
});

}  // namespace ks::gemm

// The FP64 tensor-core DGEMM's tile shapes (gemm/06_dmma.cu), in one table, and the rule that picks a
// configuration per product. Host-only declarations, so the choice can be tested and printed without a GPU.
//
// Everything that depends on the shapes reads kShapes: the kernels' instantiations, the resident-block query,
// the rule's candidates and its split-K shape, the tuning variants (dmma_128x128, ...), `kbench autotune`'s
// printout and the tests. Adding a shape is adding one row.
#pragma once

#include "gemm/gemm.hpp"
#include "gemm/skinny.hpp"

#include <array>
#include <concepts>
#include <iterator>
#include <string>

namespace ks::gemm::dmma {

// Which warp-level instruction does the multiply. K16: mma.sync.m16n8k16 f64 (sm_90: DMMA.16x8x16, full
// rate). K4: mma.sync.m8n8k4 f64, eight of them per 16x8x16 step (sm_80/86; on sm_90 it runs at half rate).
enum class Instr { K16, K4 };

struct Shape {
  int bm, bn, bk;        // block tile of C; depth of one pipeline stage (a multiple of 16)
  int warps_m, warps_n;  // warps per block along M and N; each holds a (bm / warps_m) x (bn / warps_n) piece
  int stages;            // k-tiles in flight in shared memory
  // The rule's view of the shape: its full-GPU rate relative to the fastest shape with 16-byte copies, with
  // 16-byte copies (wide) and with 8-byte ones (narrow), from `kbench autotune` on an H100 at 4096^3, 8192^3
  // and 4095^3 (docs/gemm-notes.md). 0: the rule does not pick this shape.
  double speed_wide = 0, speed_narrow = 0;
  bool split_k = false;  // the shape the rule splits K with when even its tiles leave SMs idle
};

inline constexpr Shape kShapes[] = {
    {.bm = 128, .bn = 128, .bk = 16, .warps_m = 2, .warps_n = 4, .stages = 4},
    {.bm = 128, .bn = 128, .bk = 32, .warps_m = 2, .warps_n = 4, .stages = 3, .speed_wide = 1.0, .speed_narrow = 0.95},
    {.bm = 128, .bn = 64, .bk = 16, .warps_m = 2, .warps_n = 2, .stages = 4, .speed_wide = 0.95, .speed_narrow = 0.86},
    {.bm = 64, .bn = 64, .bk = 16, .warps_m = 2, .warps_n = 2, .stages = 4, .speed_wide = 0.92, .speed_narrow = 0.80,
     .split_k = true},
};
inline constexpr int kShapeCount = static_cast<int>(sizeof(kShapes) / sizeof(kShapes[0]));

// The row of a bm x bn x bk shape; -1 when the table has none.
constexpr int shape_index(int bm, int bn, int bk) {
  for (int i = 0; i < kShapeCount; ++i)
    if (kShapes[i].bm == bm && kShapes[i].bn == bn && kShapes[i].bk == bk) return i;
  return -1;
}
constexpr int split_k_shape() {
  for (int i = 0; i < kShapeCount; ++i)
    if (kShapes[i].split_k) return i;
  return -1;
}
static_assert(split_k_shape() >= 0, "one shape is the rule's split-K shape");

// Dynamic shared memory of a block: `stages` k-tiles of A (bk rows of bm + 4 doubles) and B (bn rows of bk + 4).
constexpr int smem_bytes(const Shape& s) { return s.stages * (s.bk * (s.bm + 4) + s.bn * (s.bk + 4)) * 8; }

std::string shape_name(int shape);    // "128x128x32"
std::string variant_name(int shape);  // the tuning variant of the shape alone: "dmma_128x128_k32"

// Tuning variants besides one per shape: a shape with a fixed split-K or instruction.
struct Extra {
  const char* suffix;  // appended to the shape's variant name
  int shape;
  int splits;          // >= 1 as given; -1: the rule's split count for the shape, but at least 2
  bool k4;             // mma.sync.m8n8k4 whatever the architecture
  const char* summary;
};
inline constexpr Extra kExtras[] = {
    {"_splitk", shape_index(64, 64, 16), -1, false, "dmma, 64x64x16 tiles, split-K (at least 2 splits where K allows)"},
    {"_m8n8k4", shape_index(128, 128, 16), 1, true,
     "dmma, 128x128x16 tiles on mma.sync.m8n8k4 (the sm_80/86 instruction)"},
};

// Whether a configuration runs mma.sync.m8n8k4 with this row of kShapes on sm_90 code (a k4 row of kExtras): the
// rule and the other configurations run m16n8k16 there, so gemm/06_dmma.cu compiles the other shapes' m8n8k4
// tiles for sm_90 as traps.
constexpr bool k4_on_sm90(int shape) {
  for (const Extra& e : kExtras)
    if (e.k4 && e.shape == shape) return true;
  return false;
}

struct Config {
  int shape = 0;   // row of kShapes
  int splits = 1;  // split-K: blocks along K, summed in a fixed order by a second kernel
  Instr instr = Instr::K16;
};

// ---- dmma_tma's tiles (gemm/08_dmma_tma.cu) as the rules see them (Target counts per tile) ----

// The TMA kernels, in one table: the kernels' instantiations, the rule's candidates, the tuning variants (one per
// row, dmma_tma_<variant>, then kTmaExtras) and the tests read it. Each runs a persistent grid; `speed` is its
// full-GPU rate relative to the same reference as Shape::speed_wide, 0 for a kernel the rule does not pick:
//   128 x 128 x 32: 1.05 (kbench on an H100: 0.982-0.988 of cuBLAS at 4096^3 against dmma 128x128x32's
//     0.937-0.938, docs/gemm-notes.md).
//   128 x 64 x 32, eight consumer warps of 32 x 32 pieces of C, all reading every stage (cuBLAS's form at 1024^3):
//     1.00, as the two-group form it replaced (0.956 of the 128 x 128 kernel at 8192^3 in one run, where both fill
//     the GPU: more TMA bytes per flop). It wins where 128 x 128 tiles are too few: 1024^3 is 128 of its tiles,
//     one per SM, against 64 tiles split two ways with a partial each. On an H200 it ran 1.6-5.5 points of cuBLAS
//     above the two-group form (two groups of four 64 x 32 warps taking alternate stages, then adding their
//     accumulators through shared memory; now a tuning variant) where the rule took that (1024^3: 99.7-100.0%
//     against 97.7-97.8%; docs/gemm-notes.md, step 62).
//   128 x 128 x 16 (6 stages) and 128 x 64 x 16 (two blocks per SM): slower than the k32 kernels with deep K
//     (4095^3: 98.4% and 90.6% of the 128 x 128 x 32 kernel's rate), kept as tuning variants there. With K of at
//     most kTmaShallowDepth, where writing C is most of the time, the 128 x 128 x 16 kernel ran 1.6-5.8% faster
//     than the 128 x 128 x 32 one (K = 32, 64, 128, 200; docs/gemm-notes.md, step 34): shallow speed 1.10.
//   128 x 128 x 16 with C staged in shared memory and written by TMA stores (3 stages beside the 128 KB of
//     staging): 93.8% of cuBLAS at 4096 x 4096 x 32 against the 6-stage tile's 91.0%, but 1-7 points behind it
//     from K = 128 to 256 on an H100 (docs/gemm-notes.md, step 35). No score of its own: the rule runs it in the
//     6-stage tile's place where tma_store_swap says (measured on an H200 with A and B evict-last, step 75).
//   64 x 128 x 32, eight 32 x 32 warps: the 128 x 64 kernel's transpose (the same bytes per flop, the same warp tile
//     and shared memory), for C of at most 64 rows (64 x 16384 is 128 of its tiles, one per SM, where 128-row tiles
//     would be half padding): 1.00, as the 128 x 64 kernel (its two-group form 106.0% of cuBLAS at 64 x 16384 x
//     16384, where the rule ran the 128 x 64 one at 95.3% before; docs/gemm-notes.md, step 28).
//   128 x 32 x 32 and 32 x 128 x 32, two k-groups of four warps with 32 x 32 pieces of C: for C of 9 to 32 columns
//     or rows, where the product streams the large operand from DRAM and a 64-wide tile would double the tensor
//     cores' work on padding (8192 x 32 x 8192: 98.8% of cuBLAS against the 128 x 64 kernel's 92.8%; 32 x 8192 x
//     8192: 100.8% against 92.8%). 0.85: 84.6% and 78.1-86.2% of cuBLAS at 4096^3 against the 128 x 128 kernel's
//     103%, where they read three times the bytes per flop from L2. The rule takes them only where they read
//     each operand once from DRAM (tma_reads_once); docs/gemm-notes.md, step 37.
struct TmaTile {
  int bm, bn, bk;
  int stages;
  int min_blocks;       // resident blocks per SM the kernel is compiled for (1: one per SM)
  int kgroups;          // consumer warp groups taking alternate stages of one tile
  bool store_tma;       // C through shared memory and TMA stores (kgroups 1 only; tma_c_staged)
  double speed;         // the rule's view; 0: the rule does not pick it
  double shallow_speed; // the same where K is at most kTmaShallowDepth
  const char* name;     // as in the notes dmma_tma_path
  const char* variant;  // its tuning variant: dmma_tma_<variant>
  const char* summary;  // the tuning variant's
  int warp_rows = 0;    // rows of a consumer warp's piece of C (x 32 columns); 0: 64, or 32 in the 32-wide tiles
};
inline constexpr TmaTile kTmaTiles[] = {
    {128, 128, 32, 3, 1, 1, false, 1.05, 1.05, "128x128x32", "128x128_k32",
     "dmma_tma, 128x128x32 tiles, 3 stages, stream-K last wave"},
    {128, 64, 32, 4, 1, 1, false, 1.00, 1.00, "128x64x32, 32x32 warps", "128x64_k32_w32",
     "dmma_tma, 128x64x32 tiles, 4 stages, eight consumer warps of 32 x 32 warp tiles reading every stage, one block "
     "per SM", 32},
    {128, 128, 16, 6, 1, 1, false, 0, 1.10, "128x128x16", "128x128",
     "dmma_tma, 128x128x16 tiles, 6 stages (the rule's where K is shallow)"},
    {128, 64, 16, 4, 2, 1, false, 0, 0, "128x64x16", "128x64", "dmma_tma, 128x64x16 tiles, 4 stages, two blocks per SM"},
    {64, 128, 32, 4, 1, 1, false, 1.00, 1.00, "64x128x32, 32x32 warps", "64x128_k32_w32",
     "dmma_tma, 64x128x32 tiles, 4 stages, eight consumer warps of 32 x 32 warp tiles reading every stage, one block "
     "per SM", 32},
    {128, 128, 16, 3, 1, 1, true, 0, 0, "128x128x16, TMA store", "128x128_tmastore",
     "dmma_tma, 128x128x16 tiles, 3 stages, C staged in shared memory and written by TMA stores"},
    {128, 32, 32, 4, 1, 2, false, 0.85, 0.85, "128x32x32, 2 k-groups", "128x32_k32_2g",
     "dmma_tma, 128x32x32 tiles, 4 stages, two consumer warpgroups of 32 x 32 warp tiles taking alternate k-tiles "
     "(C of 9 to 32 columns)"},
    {32, 128, 32, 4, 1, 2, false, 0.85, 0.85, "32x128x32, 2 k-groups", "32x128_k32_2g",
     "dmma_tma, 32x128x32 tiles, 4 stages, two consumer warpgroups of 32 x 32 warp tiles taking alternate k-tiles "
     "(C of 9 to 32 rows)"},
    {128, 64, 32, 4, 1, 2, false, 0, 0, "128x64x32, 2 k-groups", "128x64_k32_2g",
     "dmma_tma, 128x64x32 tiles, 4 stages, two consumer warpgroups taking alternate k-tiles, one block per SM"},
    {64, 128, 32, 4, 1, 2, false, 0, 0, "64x128x32, 2 k-groups", "64x128_k32_2g",
     "dmma_tma, 64x128x32 tiles, 4 stages, two consumer warpgroups taking alternate k-tiles, one block per SM"},
};
inline constexpr int kTmaShallowDepth = 256;
// The 32-wide tiles' side (128 x 32 and 32 x 128; the kernel's warps hold 32 x 32 pieces of C there).
inline constexpr int kTmaThinSide = 32;
// The 32-wide tiles' speed where their plan splits K (C has fewer tiles than SMs) and their 128-long side has no
// partial tile (tma_thin_full_speed): the 128 x 64 tiles', not the 0.85 of C of 9 to 32 columns. Measured on an H100
// (docs/gemm-notes.md, step 53; every candidate tile on 95 small-C shapes): there they ran at 1.0 or more of the
// best other tile on 60 of 121 cells (256 x 1024 x 4096 100.4% of cuBLAS against 93.6% for 128 x 64, 512 x 512 x
// 4096 108.3 against 92.9 for 64 x 128); where the 128-long side pads, below 0.9 of it on 43 of 69 (200 x 1024 x
// 8192, 128 x 32: 76.5% against 99.0), so there they keep 0.85.
inline constexpr double kTmaThinSplitSpeed = 1.00;
inline constexpr int kTmaTileCount = static_cast<int>(std::size(kTmaTiles));

// What the rule needs to know about the GPU.
struct Target {
  int sm_count = 0;
  int code_arch = 0;  // the architecture the loaded kernel code was compiled for (e.g. 90, 86, 80)
  // Resident blocks per SM of each shape (0: does not fit on this GPU), from the CUDA occupancy calculator.
  std::array<int, kShapeCount> blocks_per_sm{};
  // Blocks of each TMA tile's kernel resident at once in clusters of stream_k::kClusterSize (split-K in clusters;
  // 0: none, the Fenwick tree only). Filled by dmma_tma's rule from the occupancy calculator, as its launches plan
  // with them (an H100: 30 clusters of 4 for the one-block-per-SM tiles).
  std::array<int, kTmaTileCount> tma_cluster_slots{};
  long long l2_bytes = 0;  // the L2 cache (0: unknown, taken as none)
  // What the device memory delivers per SM and SM clock at their peaks, bytes (0: unknown): 12.8 on an H100 SXM
  // (3.35 TB/s, 132 SMs at 1980 MHz), 18.4 on an H200 (4.81 TB/s, a bus of 6016 bits).
  double dram_bytes_per_sm_cycle = 0;
};

// The tile configuration for an M x N x K product (the "dmma" variant's rule). Each shape with a speed is
// scored as
//     speed x (M N) / (waves x slots x tile area),  slots = SMs x resident blocks, waves = ceil(tiles / slots),
// i.e. its full-GPU rate times the share of the launched tile slots that hold useful elements of C (wave
// quantization and the padding of edge tiles); the highest score wins. `wide_loads`: 16-byte copies (lda and
// ldb even, A and B 16-byte aligned). When even the split-K shape's tiles do not reach one block per SM, that
// shape with split-K (split_count). The instruction is K16 where the code was compiled for sm_90, K4 otherwise.
Config choose(int M, int N, int K, const Target& t, bool wide_loads = true);

// The score above (0 for a shape the rule does not pick or that does not fit).
double score(int M, int N, int shape, const Target& t, bool wide_loads);

// The same for a split-K configuration (c.splits blocks per tile of c.shape): speed x the share of the launched
// slots its blocks fill (ceil(blocks / slots) waves) x the share of the tiles' area inside C. The second kernel that
// sums the splits is not priced.
double split_score(int M, int N, const Config& c, const Target& t, bool wide_loads);

// Split count for split-K with bm x bn tiles, blocks_per_sm of them resident per SM: as many splits as fill
// every resident slot in one wave (floor(sm_count x blocks_per_sm / tiles)), at least one block per SM
// (ceil(sm_count / tiles)), capped so every split keeps at least kMinSplitDepth of K, and at most kMaxSplits.
// 1 when the tiles already fill the GPU.
int split_count(int M, int N, int K, int bm, int bn, int sm_count, int blocks_per_sm);
constexpr int kMinSplitDepth = 256;
constexpr int kMaxSplits = 16;

// Depth of each split: ceil(K / splits) rounded up to the 16-deep k-tile; the last split takes the rest.
int split_depth(int K, int splits);

std::string to_string(const Config& c);

// The registered tuning variant that runs `c` on its own (dmma_128x128, dmma_64x64_splitk, ...).
std::string variant_for(const Config& c);

// The current device's Target (needs a GPU; gemm/06_dmma.cu).
Target current_target();

// ---- dmma_tma (gemm/08_dmma_tma.cu): its rule ----

// The tuning variant that runs TMA tile `tile` alone: "dmma_tma_" + its `variant`.
std::string tma_variant_name(int tile);

// Tuning variants besides one per TMA tile: a tile without stream-K (whole tiles only).
struct TmaExtra {
  const char* suffix;  // appended to the tile's variant name
  int tile;
  const char* name;    // as in the notes dmma_tma_path
  const char* summary;
};
inline constexpr TmaExtra kTmaExtras[] = {
    {"_whole", 0, "128x128x32, whole tiles", "dmma_tma, 128x128x32 tiles, whole tiles only (no stream-K)"},
};

// Its shared-memory layout (the kernel's header says why; a test checks every fragment load is conflict-free):
// the shared-memory row (0..15 within a 16-deep step) holding the mma's k index t + 4 j, and the index in
// doubles of element (column c of 16, row r) of a box of 128-byte rows under the TMA's 128-byte swizzle.
constexpr int tma_kperm(int t, int j) { return 8 * (t / 2) + t % 2 + 2 * ((j + t) % 4); }
constexpr int tma_swizzled(int r, int c) { return r * 16 + 2 * ((c / 2) ^ (r % 8)) + c % 2; }
// A tile with store_tma stages each consumer warp's 64 x 32 piece of C in four boxes of 16 rows x 32 columns, each
// column of a box one 128-byte row under the same swizzle: the index in doubles of the piece's element (row i of 64,
// column j of 32). Fragment stores (lane 4g + t writes rows g, g + 8 of columns 2t, 2t + 1) are conflict-free.
constexpr int tma_c_staged(int i, int j) { return (i / 16) * 512 + tma_swizzled(j, i % 16); }

// Operands the TMA cannot describe as stored (an odd leading dimension: the TMA's strides are multiples of 16
// bytes; or a base not 16-byte aligned) are copied first, each into device scratch with its leading dimension
// rounded up to kTmaCopyPitch doubles (a copy kernel on the launch's stream), where the rule says the copy pays
// (tma_copy_factor); the notes dmma_tma_path and dmma_tma_copies say so.
inline constexpr int kTmaCopyPitch = 16;
// The copy's price against the product, as the FP64 tensor cores' rate at score 1.0 over the rate of a pitched
// device-to-device copy (bytes read plus written): on an H100, about 58 TFLOP/s (dmma_tma at 4096^3 and
// 778 x 1234 x 5556 over its scores) against about 2.6 TB/s; docs/gemm-notes.md, step 34.
inline constexpr double kTmaFlopsPerCopiedByte = 22.0;
inline constexpr const char* kTmaOperandsRefused =
    "lda or ldb odd, or A or B not 16-byte aligned (the TMA needs 16-byte strides)";

// What copying `copied` elements of the operands first leaves of a TMA tile's score `tma` for an M x N x K
// product: tma / (1 + copy time / product time), the product's time 2 M N K / (tma x rate) and the copy's
// 16 bytes an element (read and written) at the rate kTmaFlopsPerCopiedByte says. 1 where nothing is copied.
double tma_copy_factor(int M, int N, int K, double tma, long long copied);

// TMA tile `tile`'s score (0 for a tile with no speed), as score() for dmma's shapes but over its schedule (gemm/stream_k.hpp, one block
// per SM): speed (shallow_speed where K <= kTmaShallowDepth; kTmaThinSplitSpeed for a 32-wide tile whose plan splits
// K, tma_thin_full_speed) x useful k-tiles / (SMs x the longest block's predicted k-tiles, stream_k::predicted_k_tiles);
// without stream-K this is speed x the wave fill. 0 where it cannot run: `tma_ready` false (no sm_90a code for
// this GPU, or the kernel does not load), or operands the TMA cannot describe (`tma_operands`: lda and ldb even,
// A and B 16-byte aligned).
double tma_score(int M, int N, int K, const Target& t, bool tma_ready, bool tma_operands, int tile = 0);
// Whether TMA tile `tile` is a 32-wide tile whose 128-long side divides C's (M for 128 x 32, N for 32 x 128): where
// its plan splits K it runs at kTmaThinSplitSpeed.
bool tma_thin_full_speed(int M, int N, int tile);

// Where C is too small for a tile per SM, both dmma and the TMA kernels split K: dmma in a second kernel, the TMA
// kernels in a Fenwick tree inside the kernel (gemm/stream_k.hpp), whose chain of partial reads costs about 4.5 us
// a level on an H100 whatever the depth of the shares. Measured (docs/gemm-notes.md): at 256 x 256 x 16384 (16
// ways, 32 k-tiles a share, the combine a third of the predicted time) dmma's split-K ran 6% faster; at
// 256 x 256 x 65536 (a ninth) the TMA kernel 16% faster. The rule keeps the TMA kernel's split-K to where its
// combine is at most this share of its predicted time.
inline constexpr double kMaxCombineShare = 0.25;
// ... unless the TMA kernel scores more than this many times dmma's split-K (priced, kDmmaSplitKPrice): there dmma's
// 64 x 64 tiles, split at most kMaxSplits ways, fill a fraction of the SMs, and even a combine twice as long as
// priced leaves the TMA kernel ahead. Measured on an H100 (docs/gemm-notes.md, step 53; 24 shapes the cap sent to
// dmma, both kernels in alternating processes): at a lead of 3.3 to 9.2 the TMA kernel ran ahead on all nine (64 x
// 128 x 16384 80% of cuBLAS against 43%, 128 x 128 x 16384 76-83% against 54%); at 1.05 to 2.7 dmma on 11 of 15 (1024
// x 64 x 4096 92% against 70%).
inline constexpr double kCombineCapLead = 3.0;
// dmma's split-K score counts only how its blocks fill the GPU; its second kernel (6 us at 256 x 256, 16 ways) and
// its 64 x 64 tiles' rate on a small grid are not in it. tma_pick multiplies it by this before comparing: fitted to
// seven small-C shapes measured in one process (H100, docs/gemm-notes.md step 36), where any factor from 0.82 to
// 0.91 picks the faster kernel in all seven (e.g. 128 x 1024 x 16384: TMA 103.9% against dmma's 93.7% of cuBLAS;
// 256 x 256 x 8192: dmma 97.9% against 75.4%).
inline constexpr double kDmmaSplitKPrice = 0.87;

// Whether the rule may run TMA tile `tile` for an M x N x K product as far as DRAM traffic goes: a 32-wide tile
// (kTmaThinSide) reads the other operand once per tile along its 32-wide side, each at its own point of K under a
// stream-K or split-K schedule, so where C has more than one such tile that operand must fit in the L2
// (Target::l2_bytes). Measured on an H100 (docs/gemm-notes.md, step 37): 32 x 128 tiles at 96 x 8192 x 8192 ran 67.6%
// of cuBLAS (B, 537 MB, read three times) where 128 x 64 ones ran 106.8%; at 256 x 256 x 16384 (A and B 34 MB each)
// 128 x 32 tiles ran 94.2-96.4% against dmma's 86.8-87.1%.
bool tma_reads_once(int M, int N, int K, const Target& t, int tile);

// Whether the TMA kernels read A and B with an L2 evict-last policy for an M x N x K product: where the two fit in
// the L2 together (8 (MK + KN) bytes at most Target::l2_bytes). The tiles of one row or column of C read the same
// panels again, and C's write stream through the L2 evicted them between the readings: on an H200 16384 x 16384 x 32
// ran 120.5% of cuBLAS against 100.4% with plain loads, 8192 x 8192 x 32 118.2% against 106.5% (docs/gemm-notes.md,
// step 74). Where they do not fit it gained nothing measurable (4096^3, 8192 x 8192 x 512), and lines so marked may
// keep their priority after the kernel, crowding the L2 for what runs next: the bound keeps them within its size.
bool tma_keeps_ab(int M, int N, int K, const Target& t);

// dmma_tma's rule: the TMA tile with the best score among those that read their operands once (tma_reads_once) where
// it beats every dmma configuration's (choose() with wide loads) and, where both split K, its combine is short
// enough (kMaxCombineShare) or its lead large enough (kCombineCapLead); -1 for dmma's choice.
// `ready[i]`: whether tile i's kernel loads on this device. `copied`: the elements of the operands the TMA cannot
// describe as stored (0: none), which the TMA tiles copy first, so that their score is times tma_copy_factor and
// dmma's is with its 8-byte copies. `why` (when not null) gets the reason in words, for the row's note.
int tma_pick(int M, int N, int K, const Target& t, const bool (&ready)[kTmaTileCount], long long copied,
             std::string* why = nullptr);
// (A bool where `copied` goes is the old signature's "operands describable": refused rather than read as 0 or 1.)
template <class B>
  requires std::same_as<B, bool>
int tma_pick(int M, int N, int K, const Target& t, const bool (&ready)[kTmaTileCount], B, std::string* = nullptr) = delete;

// The rows of kTmaTiles that tma_store_swap trades: the rule's 128 x 128 x 16 tile for shallow K (register stores of
// C, 6 stages) and the TMA-store tile of the same shape (3 stages beside 128 KB of C's staging).
constexpr int tma_shallow_tile() {
  for (int i = 0; i < kTmaTileCount; ++i)
    if (kTmaTiles[i].bk == 16 && kTmaTiles[i].shallow_speed > 0 && !kTmaTiles[i].store_tma) return i;
  return -1;
}
constexpr int tma_store_tile() {
  const TmaTile& shallow = kTmaTiles[tma_shallow_tile()];
  for (int i = 0; i < kTmaTileCount; ++i)
    if (kTmaTiles[i].store_tma && kTmaTiles[i].bm == shallow.bm && kTmaTiles[i].bn == shallow.bn &&
        kTmaTiles[i].bk == shallow.bk)
      return i;
  return -1;
}
static_assert(tma_shallow_tile() >= 0 && tma_store_tile() >= 0, "the shallow tile and its TMA-store form");

// Where tma_pick picked the shallow tile, the TMA-store tile runs in its place where C's stores can be the TMA's
// (`c_by_tma`: ldc even, C 16-byte aligned and M even, as the kernel's launch asks), its kernel loads, K is above
// kTmaStoreMinDepth (and at most kTmaShallowDepth, where the shallow tile is picked), and C has more than one of its
// tiles a SM and at most kTmaStoreMaxTilesPerSm, or K is at most kTmaStoreAnyTilesDepth. The TMA stores let the
// consumers start the next tile while C's last one is still being written (with one tile a SM or fewer no block has
// a next tile, and that was not measured); the 3 stages they leave hurt where C has many tiles a SM. Measured on
// an H200 with A and B evict-last (docs/gemm-notes.md, step 75; 42 shallow shapes, two processes, % of cuBLAS,
// the TMA-store tile against the shallow tile where the rule picks that): K = 48 to 64 ahead by 0.9 to
// 13.0 points at 2048^2 to 12288^2 (2 to 70 tiles a SM; 4096 x 4096 x 64 +5.1, 5000 x 3000 x 50 +3.1); K = 96 to 256
// with at most 17.5 tiles a SM by -0.5 to +5.1 (4096 x 4096 x 96 +5.1, 5000 x 3000 x 200 +3.2); with 31 or 70 a SM
// (8192^2, 12288^2) by -4.6 to +1.8, below 0 in six of eight. At K = 32 with many tiles (step 74: 8192^2 and 16384^2)
// it trailed by 4.3 to 9.2. Not measured on an H100, nor with beta nonzero.
inline constexpr int kTmaStoreMinDepth = 32;
inline constexpr int kTmaStoreAnyTilesDepth = 64;
inline constexpr int kTmaStoreMaxTilesPerSm = 20;
// `pick` (tma_pick's), or the TMA-store tile where the above says so.
int tma_store_swap(int M, int N, int K, const Target& t, const bool (&ready)[kTmaTileCount], int pick, bool c_by_tma);

// dmma_tma's rule for thin C: the skinny kernel (gemm/skinny.hpp, the large operand streamed once) where C has at
// most kSkinnyMaxSide rows or columns, the other side gives every SM at least a boundary's worth of it and K is at
// least kSkinnyMinDepth (the stream of the large operand, not the launch and the write of C, is the time).
// 1 or 2 rows or columns run its FP64 FMA forms, measured on an H100 at S x 16384 x 16384 (docs/gemm-notes.md, step
// 29: 95.6-100.8% of cuBLAS in both forms against the 64 x 128 TMA tile's 82.8-94.0%), from kSkinnyLongPerSm a SM
// (the kernels' blocks take 16 or 32 of it: two or more blocks per SM). 3 to 8 run its tensor-core forms
// (skinny::tc_form), with boundaries that depend on how fast the memory is for the SMs.
//
// Where it delivers at least kSkinnyTcBytesPerSmCycle a SM and clock (between the H100's 12.8 and the H200's 18.4),
// the tensor-core forms' own boundaries, measured on an H200 against the 32-wide TMA tiles (32 x 128, 128 x 32) in
// one process, S = 3, 4, 5, 8, K = 8192 and 16384 (steps 60 and 61):
// - the axpy form (op(B) = B^T for few rows, op(A) = A for few columns) streams at the read ceiling (16384 x 8 x 16384
//   at 4.44 TB/s) and led the tile at every long side from 2048 (15.5 a SM), by 1.9 to 18.1 points; at 1024 it ran
//   86.2% where the rule's dmma ran 85.4%: it takes C from kSkinnyTcAxpyLongPerSm a SM;
// - the dot form (op(B) = B for few rows, op(A) = A^T for few columns), by bulk copies on Hopper, led the tile and the
//   rule's tile or dmma at every long side measured, from 1024 (7.8 a SM: 8 x 1024 x 8192 95.9% of cuBLAS against the
//   rule's 85.1%, 1024 x 8 x 8192 TN 114.9% against 96.4%) to 16384 (16384 x 8 x 16384 TN 109.5% against 90.6%), in
//   NN, TN and TT: it takes C from kSkinnyTcDotLongPerSm a SM, whichever operand runs along k. Where the large
//   operand's columns are off 16-byte boundaries the register dot form runs instead (in TN it trailed the tile on
//   aligned operands, 82.5-90.3% against 95.9-98.6%, step 60); such operands the tiles must copy first (12345 x 6 x
//   8191 TN: the rule's dmma 61.0%, the skinny kernel 130.8%).
// Elsewhere (an H100) the boundaries measured there with the FMA forms, which the tensor-core forms have not been
// measured against (step 50's tensor-core dot form tied the FMA form on an H100): 3 and 4 from kSkinnyLongPerSm; 5 to
// 8 (the FMA kernels' 8-wide instantiation) where the 32-wide TMA tiles do not beat it (step 50, S x L x K on an
// H100): in the dot form at L = 16384 the tile led by 2.4-4.4 points (8 x 16384^2: 100.4% against 96.0%), at 32768 by
// 2.3 and at 8448 by 14-16, while at L = 65536 the skinny kernel led by 0.5-1.5, so the dot form needs
// kSkinnyDotLongPerSm; the axpy form tied the tile at L = 16384 (within 1.4 points either way), led by 3.7-3.8 at
// 65536 and trailed by 9-11 at 8448, so it needs kSkinnyAxpyLongPerSm (between the measured 64 and 124 a SM).
constexpr int kSkinnyMaxSide = 8;
constexpr int kSkinnyLongPerSm = 64;
constexpr int kSkinnyMinDepth = 1024;
constexpr double kSkinnyTcBytesPerSmCycle = 15.0;
constexpr int kSkinnyTcAxpyLongPerSm = 12;
constexpr int kSkinnyTcDotLongPerSm = 7;
constexpr int kSkinnyNarrowSide = 4;
constexpr int kSkinnyDotLongPerSm = 256;
constexpr int kSkinnyAxpyLongPerSm = 96;
bool skinny_pick(int M, int N, int K, Op transa, Op transb, const Target& t);

// The skinny kernel's split dot form (skinny::split_form: C of 1 or 2 rows or columns, the large operand contiguous
// along k with its columns 16-byte aligned, the small one's loads coalesced) streams the large operand at about the
// memory's read rate from shorter long sides than skinny_pick asks. On an H200 (docs/gemm-notes.md, step 59) it ran
// 91.4-139.7% of cuBLAS at long sides of 1024 to 8192 (1 x 1024 x 16384 111.1%, 1 x 2048 x 1024 91.4%,
// 2 x 1024 x 16384 139.7%) where the TMA rule's tile or dmma ran 34.1-111.2% (64.3, 34.1, 111.2); so the rule takes
// it from kSkinnySplitLongPerSm of the long side a SM (the lowest measured, 1024, is 7.8 a SM), K at least
// kSkinnyMinDepth.
constexpr int kSkinnySplitLongPerSm = 7;
bool skinny_split_pick(const GemmArgs& a, int sm_count);

// Whether dmma_tma's rule would run a TMA tile for `a` on the current device (false: it would run dmma's
// configuration), for callers that route between dmma_tma and another library (the drop-in, dropin/).
bool tma_rule_runs_tma(const GemmArgs& a);

// Enqueues the product as the `dmma` variant does (choose() on the current device); for variants that fall
// back to it (gemm/08_dmma_tma.cu).
void run_rule(const GemmArgs& a, ExecContext& ctx);

}  // namespace ks::gemm::dmma

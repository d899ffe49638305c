// The FP64 tensor-core DGEMM's tile configurations and the rule that picks one per shape (gemm/dmma.cu).
// Host-only declarations, so the choice can be tested and printed without a GPU.
#pragma once

#include <string>
#include <vector>

namespace ks::gemm::dmma {

// Which warp-level instruction does the multiply. K16: mma.sync.m16n8k16 f64 (sm_90: DMMA.16x8x16, full
// rate). K4: mma.sync.m8n8k4 f64, eight of them per 16x8x16 step (sm_80/86; on sm_90 it runs at half rate).
enum class Instr { K16, K4 };

struct Config {
  int bm = 128, bn = 128;  // block tile of C
  int bk = 16;             // depth of one pipeline stage
  int splits = 1;          // split-K: blocks along K, summed in a fixed order by a second kernel
  Instr instr = Instr::K16;
};

// Pipeline stages of each tile shape (one place for the kernels and the rule) and its dynamic shared memory:
// STAGES k-tiles of A (BK rows of BM + 4 doubles) and B (BN rows of BK + 4 doubles).
constexpr int stages_for(int bm, int bn, int bk) { return bm == 128 && bn == 128 && bk == 32 ? 3 : 4; }
constexpr int smem_bytes(int bm, int bn, int bk) {
  return stages_for(bm, bn, bk) * (bk * (bm + 4) + bn * (bk + 4)) * 8;
}

// What the rule needs to know about the GPU. The defaults are an H100/H200 (132 SMs, sm_90 code).
struct Target {
  int sm_count = 132;
  int code_arch = 90;  // the architecture the loaded kernel code was compiled for (e.g. 90, 86, 80)
  // Resident blocks per SM of the three shapes the rule picks from (0: does not fit on this GPU), from the
  // CUDA occupancy calculator: registers and shared memory. On sm_90: 128x128x32 1 (256 threads x ~250
  // registers, 207 KiB), 128x64x16 2 (registers, 106 KiB), 64x64x16 3 (shared memory, 74 KiB).
  int blocks_128x128 = 1, blocks_128x64 = 2, blocks_64x64 = 3;
};

// t's resident blocks per SM of the bm x bn x bk tile: one of the three fields above; 0 (not read) for any
// other shape.
int resident(const Target& t, int bm, int bn, int bk);

// The tile configuration for an M x N x K product (the "dmma" variant's rule), from `kbench autotune` on an
// H100 (docs/gemm-notes.md has the tables). Each of 128x128x32, 128x64x16 and 64x64x16 is scored as
//     speed x (M N) / (waves x resident blocks x tile area),  waves = ceil(tiles / resident blocks),
// i.e. its full-GPU rate times the share of the launched tile slots that hold useful elements of C (wave
// quantization and the padding of edge tiles); the highest score wins. The rates, relative to 128x128x32
// with 16-byte copies (measured at 4096^3, 8192^3 and 4095^3): 1, 0.95, 0.92 with 16-byte copies
// (`wide_loads`: lda and ldb even, A and B 16-byte aligned) and 0.95, 0.86, 0.80 with 8-byte ones. When even
// 64x64 tiles do not reach one block per SM, 64x64 with split-K (split_count). The instruction is K16 where
// the code was compiled for sm_90, K4 otherwise.
Config choose(int M, int N, int K, const Target& t, bool wide_loads = true);

// Split count for split-K with bm x bn tiles, blocks_per_sm of them resident per SM: as many splits as fill
// every resident slot in one wave (floor(sm_count x blocks_per_sm / tiles)), at least one block per SM
// (ceil(sm_count / tiles)), capped so every split keeps at least kMinSplitDepth of K, and at most kMaxSplits.
// 1 when the tiles already fill the GPU. (Filling the slots rather than the SMs: +4% to +42% over one block
// per SM on the skinny shapes measured on an H100, docs/gemm-notes.md step 11.)
int split_count(int M, int N, int K, int bm, int bn, int sm_count, int blocks_per_sm);
constexpr int kMinSplitDepth = 256;
constexpr int kMaxSplits = 16;

// Depth of each split: ceil(K / splits) rounded up to the 16-deep k-tile; the last split takes the rest.
int split_depth(int K, int splits);

std::string to_string(const Config& c);

// The current device's Target (needs a GPU; gemm/dmma.cu).
Target current_target();

// The registered variant that runs `c` on its own (the tuning configurations: dmma_128x128, ...).
std::string variant_for(const Config& c);

}  // namespace ks::gemm::dmma

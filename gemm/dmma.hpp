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

// What the rule needs to know about the GPU.
struct Target {
  int sm_count = 132;
  int code_arch = 90;  // the architecture the loaded kernel code was compiled for (e.g. 90, 86, 80)
};

// The tile configuration for an M x N x K product (the "dmma" variant's rule), from `kbench autotune` on an
// H100 (docs/gemm-notes.md has the table). `wide_loads`: lda and ldb even and A, B 16-byte aligned, so the
// 16-byte copies run.
//  * very large C (128x128 tiles >= 16 waves) with wide loads: 128x128x32, which moves the fewest bytes;
//  * C that fills the GPU with 128x64 tiles, wide loads: 128x64x16 (two blocks per SM);
//  * else 64x64x16 (three blocks per SM) when its tiles fill the GPU; with 8-byte copies, always this one;
//  * else 64x64 with split-K: enough splits to reach one block per SM, each split at least 256 deep.
// The instruction is K16 where the code was compiled for sm_90, K4 otherwise.
Config choose(int M, int N, int K, const Target& t, bool wide_loads = true);

// Split count for split-K with bm x bn tiles: ceil(sm_count / tiles), capped so every split keeps at least
// kMinSplitDepth of K, and at most kMaxSplits. 1 when the tiles already fill the GPU.
int split_count(int M, int N, int K, int bm, int bn, int sm_count);
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

// The dmma variant's tile-configuration rule (gemm/dmma.hpp); host code only.
#include "gemm/dmma.hpp"

#include <algorithm>

namespace ks::gemm::dmma {

namespace {
long long tiles(int M, int N, int bm, int bn) {
  return static_cast<long long>((M + bm - 1) / bm) * ((N + bn - 1) / bn);
}
}  // namespace

int split_count(int M, int N, int K, int bm, int bn, int sm_count, int blocks_per_sm) {
  const long long t = tiles(M, N, bm, bn);
  if (t >= sm_count) return 1;
  const long long one_per_sm = (sm_count + t - 1) / t;
  const long long one_wave = static_cast<long long>(sm_count) * std::max(1, blocks_per_sm) / t;  // fills the slots
  const long long want = std::max(one_per_sm, one_wave);
  const long long deep_enough = std::max(1, K / kMinSplitDepth);
  return static_cast<int>(std::min<long long>({want, deep_enough, kMaxSplits}));
}

int split_depth(int K, int splits) {
  const int s = std::max(1, splits);
  const int depth = (K + s - 1) / s;
  return (depth + 15) / 16 * 16;
}

int resident(const Target& t, int bm, int bn, int bk) {
  if (bm == 128 && bn == 128 && bk == 32) return t.blocks_128x128;
  if (bm == 128 && bn == 64 && bk == 16) return t.blocks_128x64;
  if (bm == 64 && bn == 64 && bk == 16) return t.blocks_64x64;
  return 0;
}

Config choose(int M, int N, int K, const Target& t, bool wide_loads) {
  struct Candidate {
    int bm, bn, bk, blocks_per_sm;
    double speed;  // full-GPU rate relative to 128x128x32 with 16-byte copies (H100 autotune)
  };
  const Candidate candidates[] = {{128, 128, 32, resident(t, 128, 128, 32), wide_loads ? 1.0 : 0.95},
                                  {128, 64, 16, resident(t, 128, 64, 16), wide_loads ? 0.95 : 0.86},
                                  {64, 64, 16, resident(t, 64, 64, 16), wide_loads ? 0.92 : 0.80}};
  Config c;
  c.instr = t.code_arch >= 90 ? Instr::K16 : Instr::K4;
  c.bm = c.bn = 64;  // the fallback when nothing else fits
  double best = -1.0;
  for (const Candidate& k : candidates) {
    if (k.blocks_per_sm <= 0) continue;
    const long long slots = static_cast<long long>(k.blocks_per_sm) * t.sm_count;
    const long long waves = (tiles(M, N, k.bm, k.bn) + slots - 1) / slots;
    const double useful = static_cast<double>(M) * N / (static_cast<double>(waves * slots) * k.bm * k.bn);
    if (k.speed * useful > best) {
      best = k.speed * useful;
      c.bm = k.bm;
      c.bn = k.bn;
      c.bk = k.bk;
    }
  }
  if (tiles(M, N, 64, 64) < t.sm_count) {
    c.bm = c.bn = 64;
    c.bk = 16;
    c.splits = split_count(M, N, K, 64, 64, t.sm_count, resident(t, 64, 64, 16));
  }
  return c;
}

std::string to_string(const Config& c) {
  std::string s = std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" + std::to_string(c.bk);
  if (c.splits > 1) s += ", split-K " + std::to_string(c.splits);
  s += c.instr == Instr::K16 ? ", m16n8k16" : ", m8n8k4";
  return s;
}

std::string variant_for(const Config& c) {
  std::string v = "dmma_" + std::to_string(c.bm) + "x" + std::to_string(c.bn);
  if (c.bk != 16) v += "_k" + std::to_string(c.bk);
  if (c.splits > 1) v += "_splitk";
  return v;
}

}  // namespace ks::gemm::dmma

// The dmma variant's tile-configuration rule (gemm/dmma.hpp); host code only.
#include "gemm/dmma.hpp"

#include <algorithm>

namespace ks::gemm::dmma {

namespace {
long long tiles(int M, int N, int bm, int bn) {
  return static_cast<long long>((M + bm - 1) / bm) * ((N + bn - 1) / bn);
}
}  // namespace

int split_count(int M, int N, int K, int bm, int bn, int sm_count) {
  const long long t = tiles(M, N, bm, bn);
  if (t >= sm_count) return 1;
  const long long want = (sm_count + t - 1) / t;
  const long long deep_enough = std::max(1, K / kMinSplitDepth);
  return static_cast<int>(std::min<long long>({want, deep_enough, kMaxSplits}));
}

int split_depth(int K, int splits) {
  const int s = std::max(1, splits);
  const int depth = (K + s - 1) / s;
  return (depth + 15) / 16 * 16;
}

Config choose(int M, int N, int K, const Target& t, bool wide_loads) {
  Config c;
  c.instr = t.code_arch >= 90 ? Instr::K16 : Instr::K4;
  if (wide_loads && tiles(M, N, 128, 128) >= 16LL * t.sm_count) {
    c.bk = 32;
    return c;
  }
  if (wide_loads && tiles(M, N, 128, 64) >= t.sm_count) {
    c.bn = 64;
    return c;
  }
  c.bm = c.bn = 64;
  c.splits = split_count(M, N, K, 64, 64, t.sm_count);
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

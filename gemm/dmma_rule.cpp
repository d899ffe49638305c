// The dmma variant's tile-configuration rule (gemm/dmma_shapes.hpp); host code only.
#include "gemm/dmma_shapes.hpp"
#include "gemm/stream_k.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace ks::gemm::dmma {

namespace {
long long tiles(int M, int N, int bm, int bn) {
  return static_cast<long long>((M + bm - 1) / bm) * ((N + bn - 1) / bn);
}
}  // namespace

std::string shape_name(int shape) {
  const Shape& s = kShapes[shape];
  return std::to_string(s.bm) + "x" + std::to_string(s.bn) + "x" + std::to_string(s.bk);
}

std::string tma_variant_name(int tile) { return std::string("dmma_tma_") + kTmaTiles[tile].variant; }

std::string variant_name(int shape) {
  const Shape& s = kShapes[shape];
  std::string v = "dmma_" + std::to_string(s.bm) + "x" + std::to_string(s.bn);
  if (s.bk != 16) v += "_k" + std::to_string(s.bk);
  return v;
}

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

namespace {
// speed x the share of the launched slots that hold useful elements of C: `splits` blocks per tile of `shape`, in
// ceil(blocks / slots) waves (score() is splits = 1, split_score() dmma's split-K).
double fill_score(int M, int N, int shape, int splits, const Target& t, bool wide_loads) {
  const Shape& s = kShapes[shape];
  const double speed = wide_loads ? s.speed_wide : s.speed_narrow;
  const int blocks = t.blocks_per_sm[shape];
  if (speed <= 0 || blocks <= 0) return 0;
  const long long slots = static_cast<long long>(blocks) * t.sm_count;
  const long long waves = (tiles(M, N, s.bm, s.bn) * splits + slots - 1) / slots;
  return speed * static_cast<double>(M) * N * splits / (static_cast<double>(waves * slots) * s.bm * s.bn);
}
}  // namespace

double score(int M, int N, int shape, const Target& t, bool wide_loads) { return fill_score(M, N, shape, 1, t, wide_loads); }

double split_score(int M, int N, const Config& c, const Target& t, bool wide_loads) {
  return fill_score(M, N, c.shape, std::max(1, c.splits), t, wide_loads);
}

Config choose(int M, int N, int K, const Target& t, bool wide_loads) {
  Config c;
  c.instr = t.code_arch >= 90 ? Instr::K16 : Instr::K4;
  c.shape = split_k_shape();  // the fallback when nothing else fits
  double best = 0;
  for (int s = 0; s < kShapeCount; ++s) {
    const double v = score(M, N, s, t, wide_loads);
    if (v > best) {
      best = v;
      c.shape = s;
    }
  }
  const Shape& split = kShapes[split_k_shape()];
  if (tiles(M, N, split.bm, split.bn) < t.sm_count) {
    c.shape = split_k_shape();
    c.splits = split_count(M, N, K, split.bm, split.bn, t.sm_count, t.blocks_per_sm[c.shape]);
  }
  return c;
}

namespace {
stream_k::Plan tma_plan(int M, int N, int K, const Target& t, int tile) {
  const TmaTile& s = kTmaTiles[tile];
  return stream_k::plan(tiles(M, N, s.bm, s.bn), std::max(1, (K + s.bk - 1) / s.bk), t.sm_count, stream_k::kPartialCost,
                        true, t.tma_cluster_slots[static_cast<std::size_t>(tile)]);
}

// The share of split-K's predicted time that the Fenwick tree's combine takes (0 without split-K).
double tma_combine_share(int M, int N, int K, const Target& t, int tile) {
  const stream_k::Plan p = tma_plan(M, N, K, t, tile);
  if (p.splits() == 0) return 0;
  const double longest = stream_k::predicted_k_tiles(p, stream_k::kPartialCost);
  return longest > 0 ? (longest - static_cast<double>(p.longest_share())) / longest : 0;
}
}  // namespace

double tma_score(int M, int N, int K, const Target& t, bool tma_ready, bool tma_operands, int tile) {
  if (!tma_ready || !tma_operands || t.sm_count <= 0) return 0;
  const TmaTile& s = kTmaTiles[tile];
  const stream_k::Plan p = tma_plan(M, N, K, t, tile);
  const double longest = stream_k::predicted_k_tiles(p, stream_k::kPartialCost);
  if (longest <= 0) return 0;  // empty C
  const double useful = static_cast<double>(M) * N / (s.bm * s.bn) * p.k_tiles;
  const double speed = p.splits() > 0 && tma_thin_full_speed(M, N, tile) ? kTmaThinSplitSpeed
                       : K <= kTmaShallowDepth                          ? s.shallow_speed
                                                                        : s.speed;
  return speed * useful / (t.sm_count * longest);
}

bool tma_thin_full_speed(int M, int N, int tile) {
  const TmaTile& s = kTmaTiles[tile];
  if (s.bn == kTmaThinSide) return M % s.bm == 0;
  return s.bm == kTmaThinSide && N % s.bn == 0;
}

double tma_copy_factor(int M, int N, int K, double tma, long long copied) {
  if (copied <= 0 || tma <= 0) return 1;
  const double product_flops = 2.0 * M * N * K;
  return 1 / (1 + 16.0 * static_cast<double>(copied) * kTmaFlopsPerCopiedByte * tma / product_flops);
}

namespace {
// Whether `doubles` elements fit in the L2 (Target::l2_bytes, 0 where unknown).
bool l2_holds(long long doubles, const Target& t) { return 8 * doubles <= t.l2_bytes; }
}  // namespace

bool tma_reads_once(int M, int N, int K, const Target& t, int tile) {
  const TmaTile& s = kTmaTiles[tile];
  const auto fits = [&](long long rows, long long cols) { return l2_holds(rows * cols, t); };
  if (s.bm == kTmaThinSide && (M + s.bm - 1) / s.bm > 1 && !fits(K, N)) return false;  // B again per row of tiles
  if (s.bn == kTmaThinSide && (N + s.bn - 1) / s.bn > 1 && !fits(M, K)) return false;  // A again per column of tiles
  return true;
}

bool tma_keeps_ab(int M, int N, int K, const Target& t) {
  return l2_holds(static_cast<long long>(M) * K + static_cast<long long>(K) * N, t);
}

int tma_pick(int M, int N, int K, const Target& t, const bool (&ready)[kTmaTileCount], long long copied,
             std::string* why) {
  int best = -1;
  double tma = 0;
  for (int i = 0; i < kTmaTileCount; ++i) {
    if (!tma_reads_once(M, N, K, t, i)) continue;
    const double v = tma_score(M, N, K, t, ready[i], true, i);
    if (v > tma) {
      tma = v;
      best = i;
    }
  }
  const double copy_factor = tma_copy_factor(M, N, K, tma, copied);
  tma *= copy_factor;
  const bool wide = copied <= 0;
  const Config c = choose(M, N, K, t, wide);
  const double other = c.splits > 1 ? kDmmaSplitKPrice * split_score(M, N, c, t, wide) : score(M, N, c.shape, t, wide);
  // Where both split K, the TMA kernel's split only where its combine is at most kMaxCombineShare of its predicted
  // time or it leads dmma by more than kCombineCapLead (gemm/dmma_shapes.hpp).
  const double combine = c.splits > 1 && best >= 0 ? tma_combine_share(M, N, K, t, best) : 0;
  const bool combine_too_long = combine > kMaxCombineShare && tma <= kCombineCapLead * other;
  const int pick = tma > other && !combine_too_long ? best : -1;
  if (why) {
    char buf[512];  // the longest note, with the copies' clause and kTmaOperandsRefused, is under 300 bytes
    const bool any_ready = std::any_of(std::begin(ready), std::end(ready), [](bool r) { return r; });
    // What the copies cost, where the operands need them.
    char copies[120] = "";
    if (!wide)
      std::snprintf(copies, sizeof copies, " after copying the operands it cannot describe (%.0f%% of its time)",
                    100 * (1 / copy_factor - 1));
    if (!any_ready)
      *why = "dmma " + to_string(c) + ": no sm_90a code for this GPU (the TMA kernel runs on compute capability 9.0)";
    else if (pick >= 0) {
      std::snprintf(buf, sizeof buf, "tma %s%s (score %.3f against dmma %s's %.3f)", kTmaTiles[pick].name, copies, tma,
                    to_string(c).c_str(), other);
      *why = buf;
    } else if (!wide && !combine_too_long) {
      std::snprintf(buf, sizeof buf, "dmma %s (score %.3f with 8-byte copies: %s; the TMA kernels' best %.3f%s)",
                    to_string(c).c_str(), other, kTmaOperandsRefused, tma, copies);
      *why = buf;
    } else if (c.splits > 1 && tma <= other) {
      std::snprintf(buf, sizeof buf, "dmma %s (split-K score %.3f; the TMA kernels' best %.3f: K too shallow to split "
                    "them as far)", to_string(c).c_str(), other, tma);
      *why = buf;
    } else if (combine_too_long) {
      std::snprintf(buf, sizeof buf, "dmma %s (the TMA kernels' best %.3f splits K too finely: its combine would be "
                    "%.0f%% of the time)", to_string(c).c_str(), tma, 100 * combine);
      *why = buf;
    } else {
      std::snprintf(buf, sizeof buf, "dmma %s (score %.3f; the TMA kernels' best %.3f)", to_string(c).c_str(), other, tma);
      *why = buf;
    }
  }
  return pick;
}

int tma_store_swap(int M, int N, int K, const Target& t, const bool (&ready)[kTmaTileCount], int pick, bool c_by_tma) {
  const int store = tma_store_tile();
  if (pick != tma_shallow_tile() || !c_by_tma || !ready[store] || K <= kTmaStoreMinDepth || K > kTmaShallowDepth)
    return pick;
  const long long c_tiles = tiles(M, N, kTmaTiles[store].bm, kTmaTiles[store].bn);
  if (c_tiles <= t.sm_count) return pick;  // no block has a next tile to start while its last one is written
  const bool few_tiles = c_tiles <= static_cast<long long>(kTmaStoreMaxTilesPerSm) * t.sm_count;
  return few_tiles || K <= kTmaStoreAnyTilesDepth ? store : pick;
}

namespace {
// C of 3 to 8 rows or columns where the memory is fast for the SMs: the tensor-core forms' boundaries (skinny_pick).
bool tc_boundaries(long long small, const Target& t) {
  return small >= skinny::kTcMinS && small <= kSkinnyMaxSide && t.dram_bytes_per_sm_cycle >= kSkinnyTcBytesPerSmCycle;
}
// Whether the long side gives every SM per_sm of it and K is deep enough for the skinny kernel.
bool long_and_deep(long long large, int per_sm, int K, int sm_count) {
  return large >= static_cast<long long>(per_sm) * sm_count && K >= kSkinnyMinDepth;
}
}  // namespace

bool skinny_pick(int M, int N, int K, Op transa, Op transb, const Target& t) {
  const long long small = std::min(M, N), large = std::max(M, N);
  if (small < 1 || small > kSkinnyMaxSide) return false;
  const bool dot = skinny::dot_form(M, N, transa, transb);
  int per_sm = kSkinnyLongPerSm;
  if (tc_boundaries(small, t))
    per_sm = dot ? kSkinnyTcDotLongPerSm : kSkinnyTcAxpyLongPerSm;
  else if (small > kSkinnyNarrowSide)
    per_sm = dot ? kSkinnyDotLongPerSm : kSkinnyAxpyLongPerSm;
  return long_and_deep(large, per_sm, K, t.sm_count);
}

bool skinny_split_pick(const GemmArgs& a, int sm_count) {
  const skinny::Form f = skinny::canonical(a);
  return skinny::split_form(f) && long_and_deep(f.L, kSkinnySplitLongPerSm, a.K, sm_count);
}

std::string to_string(const Config& c) {
  std::string s = shape_name(c.shape);
  if (c.splits > 1) s += ", split-K " + std::to_string(c.splits);
  s += c.instr == Instr::K16 ? ", m16n8k16" : ", m8n8k4";
  return s;
}

std::string variant_for(const Config& c) {
  for (const Extra& e : kExtras)
    if (e.shape == c.shape && (e.splits != 1) == (c.splits > 1) && !e.k4) return variant_name(c.shape) + e.suffix;
  return variant_name(c.shape);
}

}  // namespace ks::gemm::dmma

// The host side of ozaki (see ozaki.hpp): Chinese-remainder constants, the scaling bits, the rule.
#include "gemm/07_ozaki/ozaki.hpp"
#include "gemm/gemm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace ks::gemm::ozaki {
namespace {

using Limbs = std::array<std::uint32_t, kLimbs>;

Limbs times(const Limbs& x, std::uint32_t f) {
  Limbs r{};
  std::uint64_t carry = 0;
  for (int t = 0; t < kLimbs; ++t) {
    const std::uint64_t v = std::uint64_t(x[t]) * f + carry;
    r[t] = static_cast<std::uint32_t>(v);
    carry = v >> 32;
  }
  if (carry) throw std::logic_error("ozaki: CRT constant overflows its limbs");
  return r;
}

// x / d and x mod d.
Limbs divide(const Limbs& x, std::uint32_t d, std::uint32_t& rem) {
  Limbs q{};
  std::uint64_t r = 0;
  for (int t = kLimbs - 1; t >= 0; --t) {
    const std::uint64_t v = (r << 32) | x[t];
    q[t] = static_cast<std::uint32_t>(v / d);
    r = v % d;
  }
  rem = static_cast<std::uint32_t>(r);
  return q;
}

double to_double(const Limbs& x) {
  double v = 0;
  for (int t = kLimbs - 1; t >= 0; --t) v = v * 4294967296.0 + x[t];
  return v;
}

Crt make_crt(int n) {
  Crt c;
  c.n = n;
  Limbs P{};
  P[0] = 1;
  for (int l = 0; l < n; ++l) P = times(P, static_cast<std::uint32_t>(modulus(l)));
  for (int l = 0; l < n; ++l) {
    const std::uint32_t m = static_cast<std::uint32_t>(modulus(l));
    std::uint32_t unused = 0, r = 0;
    const Limbs Pl = divide(P, m, unused);
    divide(Pl, m, r);  // r = (P / m) mod m, invertible: the moduli are coprime
    std::uint32_t y = 0;
    for (std::uint32_t t = 1; t < m; ++t)
      if (std::uint64_t(r) * t % m == 1) y = t;
    if (y == 0) throw std::logic_error("ozaki: moduli not coprime");
    const Limbs w = times(Pl, y);
    for (int t = 0; t < kLimbs; ++t) c.w[l][t] = w[t];
  }
  for (int t = 0; t < kLimbs; ++t) c.P[t] = P[t];
  // Bits [40 t, 40 t + 40) of x, as a double (exact).
  auto piece = [](const std::uint32_t* x, int t) {
    std::uint64_t v = 0;
    for (int b = 0; b < kPieceBits; ++b) {
      const int bit = kPieceBits * t + b;
      if (bit < 32 * kLimbs && (x[bit / 32] >> (bit % 32) & 1u)) v |= std::uint64_t{1} << b;
    }
    return static_cast<double>(v);
  };
  for (int t = 0; t < kMaxPieces; ++t) {
    c.pd[t] = piece(c.P, t);
    for (int l = 0; l < n; ++l) c.wd[l][t] = piece(c.w[l], t);
  }
  double log2_P = 0;
  for (int l = 0; l < n; ++l) log2_P += std::log2(static_cast<double>(modulus(l)));
  c.log2_P = log2_P - 1e-9;
  c.inv_P = 1.0 / to_double(P);
  return c;
}

}  // namespace

const Crt& crt(int n) {
  if (n < 1 || n > kMaxModuli) throw std::invalid_argument("ozaki: moduli count out of range");
  static std::array<Crt, kMaxModuli + 1> table;
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 1; i <= kMaxModuli; ++i) table[i] = make_crt(i);
  });
  return table[n];
}

int scale_bits(int n, int K) {
  const double S = std::floor(crt(n).log2_P - 1.0 - std::log2(static_cast<double>(std::max(K, 1))) - 1e-9);
  return static_cast<int>(std::clamp(S, 0.0, 124.0));
}

std::pair<int, int> split_bits(const Stats& s, int S) {
  const double lean = std::log2((s.rho_a * s.tau_b) / (s.rho_b * s.tau_a));  // the extra bits A's side wants
  int qa = static_cast<int>(std::lround((S + (std::isfinite(lean) ? lean : 0.0)) / 2.0));
  const int least = s.norm ? kNormMinBits : 0, most = s.norm ? 62 - kNormMaxGap : 62;
  if (S < 2 * least)
    throw std::logic_error("ozaki: " + std::to_string(S) + " bits leave a norm-scaled split fewer than " +
                           std::to_string(least) + " a side");
  // where S exceeds twice the most, each side takes the most (fewer bits than S: the product stays below P / 2)
  const int lo = std::clamp(S - most, least, most), hi = std::clamp(S - least, least, most);
  qa = std::clamp(qa, lo, hi);
  if (S - qa > most) return {most, most};
  return {qa, S - qa};
}

bool Stats::binned() const {
  const auto any = [](const RhoBins& b) {
    return std::any_of(b.count, b.count + kRhoBins, [](double c) { return c > 0; });
  };
  return any(bins_a) && any(bins_b);
}

namespace {

// The level t that sum_p n_p exp(-t^2 / (2 s_p^2)) reaches 1 at, over the pairs of bins (ozaki.hpp), and at least
// sqrt(2 ln 2) s of the largest s. In u = t^2, g(u) = ln sum_p n_p exp(-u / (2 s_p^2)) is convex and decreasing, so
// Newton's method from a u where g <= 0 (each pair's term at most 1 / (pairs): u = max_p 2 s_p^2 ln(pairs n_p))
// steps once past the root and then climbs to it from below; it stops within 1e-6 of u (4 to 6 steps).
// variance(p, q) is s_pq^2 for A's bin p and B's bin q.
template <class Variance>
double binned_level(const Stats& s, Variance variance) {
  struct Pair {
    double log_n, a;  // ln n_p and 1 / (2 s_p^2)
  };
  int used_a[kRhoBins], used_b[kRhoBins], na = 0, nb = 0;
  double log_a[kRhoBins], log_b[kRhoBins];
  for (int p = 0; p < kRhoBins; ++p) {
    if (s.bins_a.count[p] > 0) log_a[na] = std::log(s.bins_a.count[p]), used_a[na++] = p;
    if (s.bins_b.count[p] > 0) log_b[nb] = std::log(s.bins_b.count[p]), used_b[nb++] = p;
  }
  Pair pairs[kRhoBins * kRhoBins];
  int count = 0;
  double v_max = 0;  // the largest s_p^2
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j) {
      const double v = variance(used_a[i], used_b[j]);
      pairs[count++] = {log_a[i] + log_b[j], 1 / (2 * v)};
      v_max = std::max(v_max, v);
    }
  if (!(v_max > 0) || !std::isfinite(v_max)) return std::sqrt(v_max);
  const double floor = 2 * std::log(2.0) * v_max, log_count = std::log(count);
  double u = floor;
  for (int i = 0; i < count; ++i) u = std::max(u, (log_count + pairs[i].log_n) / pairs[i].a);
  for (int step = 0; step < 50; ++step) {
    // g and g' with the largest exponent factored out (log-sum-exp)
    double top = -INFINITY;
    for (int i = 0; i < count; ++i) top = std::max(top, pairs[i].log_n - u * pairs[i].a);
    double sum = 0, slope = 0;
    for (int i = 0; i < count; ++i) {
      const double w = std::exp(pairs[i].log_n - u * pairs[i].a - top);
      sum += w;
      slope += pairs[i].a * w;
    }
    const double next = u + (top + std::log(sum)) * sum / slope;
    const bool done = std::abs(next - u) <= 1e-6 * u;
    u = next;
    if (done) break;
  }
  return std::sqrt(std::max(u, floor));
}

}  // namespace

double predicted_ratio(const Stats& s, int M, int N, int K, int qa, int qb) {
  const double root = std::sqrt(12.0 * std::max(K, 1));
  const double ka = std::ldexp(1.0, 53 - qa) / root, kb = std::ldexp(1.0, 53 - qb) / root;
  const double z = std::sqrt(2.0 * std::log(std::max(static_cast<double>(M) * N, 2.0)));
  const double first = z * std::hypot(s.rho_a * s.tau_b * ka, s.rho_b * s.tau_a * kb);
  const double second = std::ldexp(1.0, 53 - qa - qb) * s.rho_a * s.rho_b / 4.0;
  // The bins' maxima are the rows' (each row in one bin), so the binned level is never above `first`.
  if (!s.binned()) return first + second;
  const double level = binned_level(s, [&](int p, int q) {
    const double x = s.bins_a.rho[p] * s.bins_b.tau[q] * ka, y = s.bins_b.rho[q] * s.bins_a.tau[p] * kb;
    return x * x + y * y;
  });
  return std::min(first, level) + second;
}

double target_ratio(const Stats& s, int M, int N) {
  if (!s.binned() || !(std::max(s.tau_a, s.tau_b) <= kGrowthTauLimit)) return kTargetRatio;
  const double native = binned_level(s, [&](int p, int q) {
    const double v = s.bins_a.tau[p] * s.bins_b.tau[q];
    return v * v;
  });
  // uniform data: one bin a side, M and N rows at tau^2 = 4 / 3; its level is z tau^2 (n exp(-z^2 / 2) = 1)
  const double uniform = std::sqrt(2.0 * std::log(std::max(static_cast<double>(M) * N, 2.0))) * 4.0 / 3.0;
  const double growth = std::max(1.0, native / uniform);
  return kTargetRatio * std::min(kMaxTargetGrowth, growth);
}

double predicted_time_ratio(int M, int N, int K, int n, bool accurate) {
  const double m = std::max(M, 1), nn = std::max(N, 1), k = std::max(K, 1);
  if (accurate) n += kAccurateModuli;
  return n * (kSpeedInt8 + kSpeedPerModulus * (1 / m + 1 / nn + 8 / k)) + kSpeedFixed * (2 / m + 2 / nn + 1 / k);
}

namespace {

// Fast scaling's split of S for n moduli and the error it predicts.
Decision fast_estimate(const Stats& s, int M, int N, int K, int n) {
  Decision e;
  e.moduli = n;
  std::tie(e.qa, e.qb) = split_bits(s, scale_bits(n, K));
  e.predicted_ratio = predicted_ratio(s, M, N, K, e.qa, e.qb);
  return e;
}

}  // namespace

std::string native_by_shape(int M, int N, int K, int fixed_moduli, bool accurate) {
  if (K > kMaxK) return "native: K above 2^17, where one INT8 product's INT32 sums could overflow";
  if (fixed_moduli > 0) return {};
  if (K < kMinDepth) return "native: K below 1024, where the INT32 products' traffic outweighs the arithmetic they save";
  // The fewest moduli any inputs could need: the count for rho = tau = 1, below which no statistics go.
  const Stats ideal{1, 1, 1, 1};
  int fewest = kMinModuli;
  while (fewest < kMaxModuli && fast_estimate(ideal, M, N, K, fewest).predicted_ratio > kTargetRatio) ++fewest;
  const double t = predicted_time_ratio(M, N, K, fewest, accurate);
  if (!(t <= kSpeedMargin)) {
    std::ostringstream why;
    why.precision(3);
    why << "native: even " << fewest << " moduli (what the best-conditioned inputs would need) would take about " << t
        << " x native DGEMM's time at this shape (the speed model; emulation from " << kSpeedMargin << ")";
    return why.str();
  }
  return {};
}

Decision decide(int M, int N, int K, const Stats& s, int fixed_moduli, const Shifts* shifts) {
  Decision d;
  d.reason = native_by_shape(M, N, K, fixed_moduli, shifts != nullptr);
  if (!d.reason.empty()) return d;
  auto estimate = [&](int n) {
    if (!shifts) return fast_estimate(s, M, N, K, n);
    Decision e;
    e.moduli = n;
    const int S = scale_bits(n, K);
    e.accurate = true;
    e.predicted_ratio = INFINITY;
    for (int qa = std::max(0, S - 62); qa <= std::min(62, S); ++qa) {
      const auto [ca, cb] = shift_caps(qa, S - qa);
      // unbinned: the bins hold the rows' rho before their shifts
      const Stats t{std::max(shifts->rho_a[ca], 1.0), s.tau_a, std::max(shifts->rho_b[cb], 1.0), s.tau_b};
      const double r = predicted_ratio(t, M, N, K, qa, S - qa);
      if (r < e.predicted_ratio) {
        e.predicted_ratio = r;
        e.qa = qa;
        e.qb = S - qa;
        e.cap_a = ca;
        e.cap_b = cb;
      }
    }
    return e;
  };
  std::ostringstream why;
  why.precision(3);
  if (fixed_moduli > 0) {
    const Decision e = estimate(fixed_moduli);
    const double forbid = kBoundFactor * (K + 2.0) / 4.0;
    if (!(s.largest_spread() <= kMaxFixedRho)) {
      why << "native: the rows' largest elements sit " << s.largest_spread() << " x above their mean (above "
          << kMaxFixedRho << ", where the estimate is not trusted for a fixed count)";
      d.reason = why.str();
      return d;
    }
    if (!(e.predicted_ratio <= forbid)) {
      why << "native: " << fixed_moduli << " moduli would err by about " << e.predicted_ratio
          << " x 2^-53 |A||B| on these inputs, above an eighth of the element-wise bound (" << forbid << ")";
      d.reason = why.str();
      return d;
    }
    d = e;
    why << fixed_moduli << " moduli (fixed)";
  } else {
    // The speed model's time grows with the count and the estimate falls as moduli are added (more bits for both
    // operands; a host test checks it), so the most moduli the model allows at this shape decide alone where they
    // miss the target: no count both fast and accurate enough, one estimate. Otherwise the fewest that meet it, which
    // the model then allows. On the path between the statistics' read-back and native DGEMM's enqueue this was 10-12
    // of the 15-16 us (H200; docs/gemm-notes.md, step 55), where the fewest accurate count was searched first.
    const bool accurate = shifts != nullptr;
    // native_by_shape() let the fewest count any inputs could need through, so kMinModuli is allowed
    int most_fast = kMinModuli;
    while (most_fast < kMaxModuli && predicted_time_ratio(M, N, K, most_fast + 1, accurate) <= kSpeedMargin)
      ++most_fast;
    const Decision most = estimate(most_fast);
    const double target = target_ratio(s, M, N);
    if (!(most.predicted_ratio <= target)) {
      d.target = target;
      if (most_fast == kMaxModuli)
        why << "native: no count up to " << kMaxModuli << " moduli meets the accuracy target of " << target
            << " (predicted " << most.predicted_ratio << " x 2^-53 |A||B| at " << kMaxModuli << ")";
      else
        why << "native: " << most_fast << " moduli, the most the speed model allows at this shape (about "
            << predicted_time_ratio(M, N, K, most_fast, accurate) << " x native DGEMM's time; it emulates at up to "
            << kSpeedMargin << "), would err by about " << most.predicted_ratio << " x 2^-53 |A||B|, above the target of "
            << target;
      d.reason = why.str();
      return d;
    }
    for (int n = kMinModuli; n < most_fast && d.moduli == 0; ++n) {
      const Decision e = estimate(n);
      if (e.predicted_ratio <= target) d = e;
    }
    if (d.moduli == 0) d = most;
    d.target = target;
    why << d.moduli << " moduli: the fewest with a predicted error under " << target
        << " x 2^-53 |A||B|; predicted " << predicted_time_ratio(M, N, K, d.moduli, accurate)
        << " x native DGEMM's time";
  }
  if (shifts) why << ", accurate scaling";
  d.reason = why.str();
  return d;
}

std::string workspace_refusal(const Workspace& w, int n, std::size_t free_bytes, std::size_t scratch_bytes) {
  if (w.bytes <= free_bytes + scratch_bytes) return {};
  std::ostringstream os;
  os << "ozaki: ";
  if (n > 0) os << n << " moduli";
  else os << "accurate scaling's coarse product";
  os << (n > 0 ? " need " : " needs ") << (w.bytes + 1048575) / 1048576 << " MiB of workspace (int8 residues of A "
     << "and B, int32 products); the device has " << free_bytes / 1048576 << " MiB free";
  if (scratch_bytes) os << " and this context holds " << scratch_bytes / 1048576 << " MiB of scratch";
  return os.str();
}

int pipeline_width(int M, int N, int K, bool always) {
  if (!always && std::min({M, N, K}) < kPipelineFrom) return N;
  const int width = (N + kPipelineBlocks - 1) / kPipelineBlocks;
  return std::min(N, (width + kPipelineAlign - 1) / kPipelineAlign * kPipelineAlign);
}

Workspace workspace(int M, int N, int K, int n, bool accurate, bool byte_products) {
  auto up = [](std::size_t x, std::size_t a) { return (x + a - 1) / a * a; };
  Workspace w;
  w.Kp = static_cast<int>(up(static_cast<std::size_t>(std::max(K, 1)), 16));
  w.ldp = static_cast<int>(up(static_cast<std::size_t>(std::max(M, 1)), 4));
  w.a_stride = up(static_cast<std::size_t>(w.ldp) * w.Kp, 256);  // the products take ldp rows (products.hpp)
  w.b_stride = up(static_cast<std::size_t>(N) * w.Kp, 256);
  w.p_stride = up(static_cast<std::size_t>(w.ldp) * N * 4, 256);
  // The coarse product (accurate scaling) is one INT32 plane whatever the route.
  const int sets = n + (accurate ? 1 : 0);
  w.bytes = static_cast<std::size_t>(sets) * (w.a_stride + w.b_stride) + (accurate ? w.p_stride : 0) +
            static_cast<std::size_t>(n) * (byte_products ? w.p_stride / 4 : w.p_stride);
  return w;
}

}  // namespace ks::gemm::ozaki

// ozaki (gemm/07_ozaki): the rule and its constants without a GPU; accuracy against native DGEMM, Inf and NaN,
// and widely scaled rows on the GPU. Every variant's shapes, modes and BLAS cases: test_gemm's Variants tests.
#include "gemm/07_ozaki/ozaki.hpp"
#include "gemm/07_ozaki/products.hpp"
#include "gemm/gemm.hpp"
#include "gemm/host/modes.hpp"
#include "gemm/host/problem.hpp"
#include "gpu_test.hpp"

#include "common/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ks::gemm::ozaki {
namespace {

// ---- host-only ----

TEST(OzakiRule, ModuliArePairwiseCoprimeAndTheirResiduesFitInt8) {
  for (int l = 0; l < kMaxModuli; ++l) {
    EXPECT_LE(modulus(l), 256);
    EXPECT_GE(modulus(l), 129) << "a smaller modulus wastes int8 range";
    for (int k = 0; k < l; ++k) EXPECT_EQ(std::gcd(modulus(l), modulus(k)), 1) << modulus(l) << " " << modulus(k);
  }
}

// w_l is 1 modulo m_l and 0 modulo every other modulus, and below P (each limb reduced on the host).
TEST(OzakiRule, CrtWeightsSelectTheirModulus) {
  for (int n = 1; n <= kMaxModuli; ++n) {
    const Crt& c = crt(n);
    ASSERT_EQ(c.n, n);
    for (int l = 0; l < n; ++l)
      for (int j = 0; j < n; ++j) {
        const unsigned m = static_cast<unsigned>(modulus(j));
        unsigned long long r = 0;
        for (int t = kLimbs - 1; t >= 0; --t) r = ((r << 32) | c.w[l][t]) % m;
        EXPECT_EQ(r, l == j ? 1u : 0u) << "n " << n << ", w_" << l << " mod " << m;
      }
    double p = 0;
    for (int t = kLimbs - 1; t >= 0; --t) p = p * 4294967296.0 + c.P[t];
    EXPECT_NEAR(std::log2(p), c.log2_P, 1e-6);
    EXPECT_NEAR(c.inv_P * p, 1.0, 1e-15);
  }
  EXPECT_LT(crt(kMaxModuli).log2_P, 32.0 * kLimbs) << "the host's limbs hold P";
}

// The residues kernel's arithmetic (residue_pieces, reduce, residue_plus_128): the multiply-high remainder
// equals y % m for every y below 2^31 it is tried on (both sides of every multiple of m near 2^31 included), and
// the byte is a residue of v in [-128, 128) for integers up to 2^62 in magnitude; the FP64 form (fp64_residue), for
// every odd modulus, gives the same v a residue in [-(m - 1)/2, (m - 1)/2] in its low word, whose low byte is it as
// int8.
TEST(OzakiRule, ResiduesWithoutA64BitRemainderAreExact) {
  std::mt19937_64 rng(20261123);
  for (int l = 0; l < kMaxModuli; ++l) {
    const unsigned m = static_cast<unsigned>(modulus(l));
    std::vector<unsigned> ys = {0u, 1u, m - 1, m, m + 1, (1u << 31) - 1, (1u << 30) + (1u << 22)};
    for (unsigned q = (1u << 31) / m - 64; q <= (1u << 31) / m; ++q)
      for (const unsigned y : {q * m - 1, q * m, q * m + m - 1})
        if (y < (1u << 31)) ys.push_back(y);
    for (int i = 0; i < 100000; ++i) ys.push_back(static_cast<unsigned>(rng() >> 33));
    for (const unsigned y : ys) ASSERT_EQ(reduce(y, l), y % m) << "y " << y << " mod " << m;

    const long long big = 1ll << 62;
    std::vector<long long> vs = {0, 1, -1, 127, 128, -128, -129, big, -big, big - 1, 1 - big, 1ll << 42, -(1ll << 42),
                                 (1ll << 42) - 1, (1ll << 21) - 1, -(1ll << 21), (1ll << 32) - 1, 1ll << 32,
                                 -(1ll << 32), -(1ll << 32) - 1};
    for (int i = 0; i < 100000; ++i) vs.push_back(static_cast<long long>(rng() % (2 * static_cast<unsigned long long>(big) + 1)) - big);
    for (const long long v : vs) {
      unsigned w = 0, v1 = 0, v0 = 0;
      residue_pieces(v, w, v1, v0);
      ASSERT_LE(w, 1u << 21);
      const unsigned r = residue_plus_128(w, v1, v0, l);
      ASSERT_LT(r, m) << "v " << v << " mod " << m;
      const long long residue = static_cast<long long>(r) - 128;  // the byte r ^ 0x80 as int8
      ASSERT_EQ(static_cast<signed char>(static_cast<unsigned char>(r ^ 0x80u)), residue);
      ASSERT_EQ((v - residue) % static_cast<long long>(m), 0) << "v " << v << " mod " << m;
      if (m % 2 == 1) {
        const double h = static_cast<double>(v >> 32), u = static_cast<double>(v & 0xFFFFFFFFll);
        const auto bits = std::bit_cast<unsigned long long>(fp64_residue(h, u, fp64_residue_constants(l)));
        const long long centred = static_cast<int>(static_cast<unsigned>(bits));  // the low word, two's complement
        ASSERT_LE(std::abs(centred), (static_cast<long long>(m) - 1) / 2) << "v " << v << " mod " << m;
        ASSERT_EQ((v - centred) % static_cast<long long>(m), 0) << "v " << v << " mod " << m;
        ASSERT_EQ(static_cast<signed char>(bits & 0xFF), centred);
      }
    }
  }
}

// The products' epilogue's arithmetic (product_residue): x mod m_l for every INT32 x it is tried on, the extremes,
// both sides of every multiple of 2^21 and of m_l near zero and near the ends included; the intermediate y stays
// below 2^22, where the multiply-high quotient is exact.
TEST(OzakiRule, ProductResiduesAreExactForEveryInt32) {
  std::mt19937_64 rng(20261127);
  for (int l = 0; l < kMaxModuli; ++l) {
    const ProductResidueConstants k = product_residue_constants(l);
    const long long m = modulus(l);
    std::vector<long long> xs;
    for (long long x = -2147483648ll; x <= 2147483647ll; x += 1 << 21)
      for (long long d = -3; d <= 3; ++d)
        if (x + d >= -2147483648ll && x + d <= 2147483647ll) xs.push_back(x + d);
    for (long long d = 0; d < 4 * m; ++d) xs.insert(xs.end(), {d, -d, 2147483647ll - d, -2147483648ll + d});
    for (int i = 0; i < 200000; ++i) xs.push_back(static_cast<int>(static_cast<unsigned>(rng())));
    for (const long long x : xs) {
      const int xi = static_cast<int>(x);
      ASSERT_LT(product_residue_fold(xi, k), 1u << 22) << "x " << x << " mod " << m;
      ASSERT_EQ(product_residue(xi, k), static_cast<unsigned>(((x % m) + m) % m)) << "x " << x << " mod " << m;
    }
  }
}

// The recombination's 40-bit pieces (Crt): they are w_l and P exactly, those from pieces(n) up are zero, and every
// piece's sum over the moduli, sum_l r_l wd[l][t] with r_l < 256, stays below 2^53 (exact in FP64).
TEST(OzakiRule, PiecesHoldTheRecombinationSumsExactly) {
  // x's 32-bit limbs from the pieces, each piece an integer below 2^40.
  auto limbs_of = [](const double* pieces) {
    std::array<std::uint64_t, kLimbs> x{};
    for (int t = 0; t < kMaxPieces; ++t) {
      const double d = pieces[t];
      EXPECT_TRUE(d >= 0 && d < 0x1p40 && d == std::floor(d)) << d;
      const auto v = static_cast<std::uint64_t>(d);
      for (int b = 0; b < kPieceBits; ++b)
        if (v >> b & 1u) {
          const int bit = kPieceBits * t + b;
          if (bit < 32 * kLimbs) x[bit / 32] |= std::uint64_t{1} << (bit % 32);
          else ADD_FAILURE() << "bit " << bit << " beyond the limbs";
        }
    }
    return x;
  };
  for (int n = 1; n <= kMaxModuli; ++n) {
    const Crt& c = crt(n);
    EXPECT_LE(c.log2_P, kPieceBits * pieces(n)) << n << " moduli";
    const auto P = limbs_of(c.pd);
    for (int t = 0; t < kLimbs; ++t) EXPECT_EQ(P[t], c.P[t]) << n << " moduli, limb " << t << " of P";
    for (int t = pieces(n); t < kMaxPieces; ++t) EXPECT_EQ(c.pd[t], 0.0) << n << " moduli";
    for (int t = 0; t < kMaxPieces; ++t) {
      double sum = 0;
      for (int l = 0; l < n; ++l) sum += 255.0 * c.wd[l][t];
      EXPECT_LT(sum, 0x1p53) << n << " moduli, piece " << t;
    }
    for (int l = 0; l < n; ++l) {
      const auto w = limbs_of(c.wd[l]);
      for (int t = 0; t < kLimbs; ++t) EXPECT_EQ(w[t], c.w[l][t]) << n << " moduli, w_" << l << " limb " << t;
      for (int t = pieces(n); t < kMaxPieces; ++t) EXPECT_EQ(c.wd[l][t], 0.0) << n << " moduli, w_" << l;
    }
  }
  EXPECT_EQ(pieces(14), 3) << "the default count's sums take 3 pieces";
}

TEST(OzakiRule, ScaleBitsKeepTheIntegerProductBelowHalfP) {
  for (int n = kMinModuli; n <= kMaxModuli; ++n)
    for (int K : {1, 16, 1000, 4096, 65536, kMaxK}) {
      const int S = scale_bits(n, K);  // |A'| <= 2^qa, |B'| <= 2^qb: |X| <= K 2^S < P / 2
      const long double log2_half_p = crt(n).log2_P - 1.0L;
      EXPECT_LT(S + std::log2(static_cast<long double>(K)), log2_half_p) << n << " moduli, K " << K;
      if (S < 124) {  // 2 x 62: the residues' 64-bit intermediate caps each side
        EXPECT_GT(S + 1 + std::log2(static_cast<long double>(K)), log2_half_p - 1e-6L) << "the largest such S";
      }
    }
}

// The split gives the extra bits to the side whose rounding weighs more, keeps each in [0, 62] and sums to S.
TEST(OzakiRule, SplitFavoursTheSideWhoseRoundingCostsMore) {
  const Stats even{2, std::sqrt(2.0), 2, std::sqrt(2.0)};
  EXPECT_EQ(split_bits(even, 96), std::make_pair(48, 48));
  const auto [qa, qb] = split_bits(even, 97);
  EXPECT_EQ(qa + qb, 97);
  EXPECT_LE(std::abs(qa - qb), 1);
  const Stats wide_a{64, 8, 2, std::sqrt(2.0)};  // A's rows spread: B's rounding is multiplied by rho_a
  const auto [wa, wb] = split_bits(wide_a, 96);
  EXPECT_EQ(wa + wb, 96);
  EXPECT_GT(wa, wb);
  EXPECT_LT(predicted_ratio(wide_a, 4096, 4096, 4096, wa, wb), predicted_ratio(wide_a, 4096, 4096, 4096, 48, 48));
  const Stats extreme{1e300, 1, 1, 1};
  const auto [ea, eb] = split_bits(extreme, 110);
  EXPECT_EQ(ea, 62);
  EXPECT_EQ(eb, 48);
}

TEST(OzakiRule, PicksMoreModuliForWiderExponentsAndNativeWhereNoneSuffices) {
  const Stats uniform{2, std::sqrt(2.0), 2, std::sqrt(2.0)};
  for (int K : {4096, 8192, 16384}) {
    const Decision u = decide(K, K, K, uniform);
    ASSERT_GT(u.moduli, 0) << u.reason;
    EXPECT_EQ(u.moduli, 14) << "uniform data, K " << K << ": the count docs/gemm-notes.md derives";
    EXPECT_LE(u.predicted_ratio, kTargetRatio);
    EXPECT_EQ(u.qa + u.qb, scale_bits(u.moduli, K));
    const auto [qa, qb] = split_bits(uniform, scale_bits(u.moduli - 1, K));
    EXPECT_GT(predicted_ratio(uniform, K, K, K, qa, qb), kTargetRatio) << "the fewest moduli that meet the target";
  }
  const Decision u = decide(16384, 16384, 16384, uniform);
  const Stats wide{64, 8, 64, 8};
  const Decision w = decide(16384, 16384, 16384, wide);
  EXPECT_GT(w.moduli, u.moduli) << w.reason;
  const Stats hopeless{1e30, 1e15, 1e30, 1e15};
  const Decision h = decide(16384, 16384, 16384, hopeless);
  EXPECT_EQ(h.moduli, 0);
  EXPECT_NE(h.reason.find("no count"), std::string::npos) << h.reason;
  const Decision h4 = decide(4096, 4096, 4096, hopeless);  // the speed model allows 18 there
  EXPECT_EQ(h4.moduli, 0);
  EXPECT_NE(h4.reason.find("the most the speed model allows"), std::string::npos) << h4.reason;
  const Decision hf = decide(4096, 4096, 4096, Stats{kMaxFixedRho, 1e8, kMaxFixedRho, 1e8}, 14);
  EXPECT_EQ(hf.moduli, 0) << "a fixed count still refuses data it would get wrong";
  EXPECT_NE(hf.reason.find("element-wise bound"), std::string::npos) << hf.reason;
  EXPECT_EQ(decide(4096, 4096, kMaxK + 1, uniform).moduli, 0);
  EXPECT_EQ(decide(4096, 4096, kMaxK + 1, uniform, 14).moduli, 0) << "even a fixed count cannot exceed 2^17";
  const Decision small = decide(512, 512, 512, uniform);
  EXPECT_EQ(small.moduli, 0);
  EXPECT_NE(small.reason.find("native"), std::string::npos);
  const Decision shallow = decide(65536, 65536, 512, uniform);
  EXPECT_EQ(shallow.moduli, 0) << "K below kMinDepth";
  EXPECT_NE(shallow.reason.find("K below"), std::string::npos) << shallow.reason;
  const Decision spread = decide(512, 512, 512, Stats{kMaxFixedRho * 2, 2, 2, 1.4}, 16);
  EXPECT_EQ(spread.moduli, 0) << "a fixed count on data spread beyond what its estimate is trusted for";
  EXPECT_NE(spread.reason.find("above their mean"), std::string::npos) << spread.reason;
  const Decision fixed = decide(512, 512, 512, uniform, 14);
  EXPECT_EQ(fixed.moduli, 14);
  EXPECT_EQ(fixed.qa + fixed.qb, scale_bits(14, 512));
}

// Bin b holds rho in [2^(b/2), 2^((b+1)/2)): the edges exact, everything below 1 in the first bin and everything
// past the last edge in the last.
TEST(OzakiRule, RhoBinsAreHalfOctaves) {
  for (int b = 0; b < kRhoBins; ++b) {
    const double edge = std::pow(2.0, b / 2.0);
    EXPECT_EQ(rho_bin(edge * (1 + 1e-12)), b) << "just above 2^(" << b << "/2)";
    if (b > 0) {
      EXPECT_EQ(rho_bin(edge * (1 - 1e-12)), b - 1) << "just below 2^(" << b << "/2)";
    }
  }
  EXPECT_EQ(rho_bin(0.25), 0);
  EXPECT_EQ(rho_bin(1e300), kRhoBins - 1);
  EXPECT_EQ(rho_bin(2.0 * kMaxK), 36) << "the largest rho of a row that can be emulated";
}

// `rows` rows of the given rho and tau into their bin.
void add_rows(RhoBins& b, double rho, double tau, double rows) {
  const int i = rho_bin(rho);
  b.count[i] += rows;
  b.rho[i] = std::max(b.rho[i], rho);
  b.tau[i] = std::max(b.tau[i], tau);
}

// Bins of rows for a test: (largest rho, largest tau, rows) per bin.
RhoBins make_bins(std::initializer_list<std::tuple<double, double, double>> bins) {
  RhoBins b;
  for (const auto& [rho, tau, rows] : bins) add_rows(b, rho, tau, rows);
  return b;
}

// Statistics of 1 to 6 random bins a side, rho up to 2^max_log2_rho, tau between 1 and sqrt(rho), up to 5000 rows a
// bin; each side's rho and tau the largest of its bins'.
Stats random_binned_stats(std::mt19937_64& rng, double max_log2_rho) {
  std::uniform_real_distribution<double> u(0, 1);
  Stats r{1, 1, 1, 1};
  for (RhoBins* b : {&r.bins_a, &r.bins_b}) {
    const int bins = 1 + static_cast<int>(u(rng) * 6);
    for (int i = 0; i < bins; ++i) {
      const double rho = std::pow(2.0, u(rng) * max_log2_rho), tau = 1 + u(rng) * (std::sqrt(rho) - 1);
      add_rows(*b, rho, tau, std::floor(1 + u(rng) * 5000));
      double& side_rho = b == &r.bins_a ? r.rho_a : r.rho_b;
      double& side_tau = b == &r.bins_a ? r.tau_a : r.tau_b;
      side_rho = std::max(side_rho, rho);
      side_tau = std::max(side_tau, tau);
    }
  }
  return r;
}

// The binned estimate (ozaki.hpp): one bin per side gives the unbinned estimate; it is never above it; a few rows
// of wider spread weigh by their count. The PHI 0.5 bins are those of 8192 x 8192 operands drawn as exp:0.5 draws
// (a simulation of the statistics, docs/gemm-notes.md step 42): 15 moduli binned, 16 from the worst row and column.
TEST(OzakiRule, BinnedEstimateWeighsTheRowsOfWideSpreadByTheirCount) {
  Stats one{2, 1.16, 2, 1.16};
  one.bins_a = make_bins({{2, 1.16, 8192}});
  one.bins_b = make_bins({{2, 1.16, 8192}});
  const Stats plain{2, 1.16, 2, 1.16};
  EXPECT_FALSE(plain.binned());
  ASSERT_TRUE(one.binned());
  for (int S : {90, 96, 104})
    EXPECT_NEAR(predicted_ratio(one, 8192, 8192, 8192, S / 2, S - S / 2),
                predicted_ratio(plain, 8192, 8192, 8192, S / 2, S - S / 2),
                2e-3 * predicted_ratio(plain, 8192, 8192, 8192, S / 2, S - S / 2)) << S;
  EXPECT_EQ(decide(8192, 8192, 8192, one).moduli, 14);

  Stats phi{29.0, 1.34, 28.8, 1.34};
  phi.bins_a = make_bins({{7.3, 1.32, 377}, {14.6, 1.34, 7712}, {29.0, 1.34, 103}});
  phi.bins_b = make_bins({{7.3, 1.32, 380}, {14.5, 1.34, 7700}, {28.8, 1.34, 112}});
  const Stats worst{phi.rho_a, phi.tau_a, phi.rho_b, phi.tau_b};
  const Decision binned = decide(8192, 8192, 8192, phi), unbinned = decide(8192, 8192, 8192, worst);
  EXPECT_EQ(binned.moduli, 15) << binned.reason;
  EXPECT_EQ(unbinned.moduli, 16) << unbinned.reason;
  EXPECT_LE(binned.predicted_ratio, kTargetRatio);

  // Never above the worst row against the worst column, with random bins and splits.
  std::mt19937_64 rng(choose_seed());
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < 200; ++t) {
    const Stats r = random_binned_stats(rng, 12);
    const Stats w{r.rho_a, r.tau_a, r.rho_b, r.tau_b};
    const int S = 80 + static_cast<int>(u(rng) * 30), qa = S / 2 + static_cast<int>(u(rng) * 9) - 4;
    EXPECT_LE(predicted_ratio(r, 20000, 20000, 4096, qa, S - qa), predicted_ratio(w, 20000, 20000, 4096, qa, S - qa))
        << "trial " << t;
  }

  // A bin whose rho is infinite (a row whose statistics overflowed) makes the estimate infinite: native.
  Stats inf = phi;
  inf.bins_a.rho[kRhoBins - 1] = INFINITY;
  inf.bins_a.count[kRhoBins - 1] = 1;
  inf.rho_a = INFINITY;
  EXPECT_EQ(decide(8192, 8192, 8192, inf).moduli, 0);
}

// The estimate falls as moduli are added, which lets decide() go native after one estimate, that of the most moduli
// the speed model allows: every count from kMinModuli to kMaxModuli, unbinned and binned statistics of several
// spreads, several shapes.
TEST(OzakiRule, EstimateFallsAsModuliAreAdded) {
  std::vector<Stats> all;
  for (double rho : {1.0, 2.0, 30.0, 300.0, 5000.0, 1e5}) {
    all.push_back(Stats{rho, std::sqrt(rho), rho / 2, std::sqrt(rho) / 2});
    Stats b{rho, std::sqrt(rho), rho, std::sqrt(rho)};
    for (int bin = 0; bin <= rho_bin(rho); bin += 3) {  // rows spread over the bins up to rho
      const double r = std::min(rho, std::ldexp(1.0, bin / 2));
      b.bins_a.count[rho_bin(r)] += 100 + bin;
      b.bins_a.rho[rho_bin(r)] = std::max(b.bins_a.rho[rho_bin(r)], r);
      b.bins_a.tau[rho_bin(r)] = std::max(b.bins_a.tau[rho_bin(r)], std::sqrt(r));
    }
    b.bins_b = b.bins_a;
    ASSERT_TRUE(b.binned());
    all.push_back(b);
  }
  for (const Stats& s : all)
    for (const auto& [M, N, K] : {std::tuple{2816, 2816, 2816}, {4096, 2048, 16384}, {16384, 16384, 1024}})
      for (int n = kMinModuli; n < kMaxModuli; ++n) {
        const auto [qa, qb] = split_bits(s, scale_bits(n, K));
        const auto [qa1, qb1] = split_bits(s, scale_bits(n + 1, K));
        EXPECT_LE(predicted_ratio(s, M, N, K, qa1, qb1), predicted_ratio(s, M, N, K, qa, qb))
            << n + 1 << " moduli against " << n << " at rho " << s.rho_a << (s.binned() ? ", binned" : "");
      }
}

// The speed side: the model reproduces the measurements it was fitted to (docs/gemm-notes.md, step 54: one H100
// host, `ozaki_14` and `ozaki_16` x native cuBLAS, uniform data) within 10%; it sends to native every shape
// measured more than 3% slower than native and emulates every one measured more than 12% faster; and the rule
// sends the shapes and counts it predicts above kSpeedMargin of native's time to native, saying so. Left out:
// 3584^3 with 16 moduli, measured 0.957x and predicted 0.922 of native's time (the products kernel runs below its
// rate at 4096^3 at that size, which the model does not see).
TEST(OzakiRule, SpeedModelSendsWhatWouldBeSlowerToNative) {
  struct Measured {
    int n, M, N, K;
    double x_native;
  };
  const Measured measured[] = {
      {14, 2048, 2048, 2048, 0.854},    {16, 2048, 2048, 2048, 0.755},    {14, 2304, 2304, 2304, 0.909},
      {16, 2304, 2304, 2304, 0.826},    {14, 2560, 2560, 2560, 1.102},    {16, 2560, 2560, 2560, 0.957},
      {14, 2816, 2816, 2816, 1.132},    {16, 2816, 2816, 2816, 0.952},    {14, 3072, 3072, 3072, 1.080},
      {16, 3072, 3072, 3072, 0.967},    {14, 3584, 3584, 3584, 1.098},    {14, 4096, 4096, 4096, 1.302},
      {16, 4096, 4096, 4096, 1.146},    {14, 5120, 5120, 5120, 1.402},    {16, 5120, 5120, 5120, 1.235},
      {14, 6144, 6144, 6144, 1.475},    {16, 6144, 6144, 6144, 1.361},    {14, 8192, 8192, 8192, 1.590},
      {16, 8192, 8192, 8192, 1.409},    {14, 12288, 12288, 12288, 1.684}, {16, 12288, 12288, 12288, 1.475},
      {14, 16384, 16384, 16384, 1.782}, {16, 16384, 16384, 16384, 1.549}, {14, 4096, 4096, 16384, 1.486},
      {16, 4096, 4096, 16384, 1.325},   {14, 16384, 16384, 2048, 1.363}, {16, 16384, 16384, 2048, 1.191},
      {14, 8192, 2048, 8192, 1.328},    {16, 8192, 2048, 8192, 1.179},    {14, 2048, 8192, 4096, 1.234},
      {16, 2048, 8192, 4096, 1.102},    {14, 3072, 3072, 8192, 1.276},    {16, 3072, 3072, 8192, 1.144},
      {14, 8192, 8192, 1024, 1.002},    {16, 8192, 8192, 1024, 0.832},    {14, 2048, 2048, 16384, 1.161},
      {16, 2048, 2048, 16384, 1.041},   {14, 2560, 2560, 8192, 1.286},    {16, 2560, 2560, 8192, 1.154},
      {14, 4096, 2560, 2560, 1.103},    {16, 4096, 2560, 2560, 0.945},    {14, 3072, 3072, 2048, 1.011},
      {16, 3072, 3072, 2048, 0.914},    {14, 6144, 6144, 2048, 1.174},    {16, 6144, 6144, 2048, 0.995},
      {14, 2048, 4096, 3072, 1.090},    {16, 2048, 4096, 3072, 0.966}};
  for (const Measured& m : measured) {
    const double t = predicted_time_ratio(m.M, m.N, m.K, m.n);
    const std::string at = std::to_string(m.n) + " moduli at " + std::to_string(m.M) + " x " + std::to_string(m.N) +
                           " x " + std::to_string(m.K);
    EXPECT_NEAR(t * m.x_native, 1.0, 0.10) << at;
    if (m.x_native < 0.97) {
      EXPECT_GT(t, kSpeedMargin) << at << ": measured slower than native, emulated";
    }
    if (m.x_native > 1.12) {
      EXPECT_LE(t, kSpeedMargin) << at << ": measured faster than native, not emulated";
    }
  }
  // Uniform data in [-1, 1): rho 2 (the largest power of two over the mean magnitude 1/2), tau 2 / sqrt(3).
  const Stats uniform{2, 2 / std::sqrt(3.0), 2, 2 / std::sqrt(3.0)};
  const Decision small = decide(2560, 2560, 2560, uniform);
  EXPECT_EQ(small.moduli, 0) << "2560^3: 14 moduli predicted 0.98 of native's time, within the model's error";
  EXPECT_NE(small.reason.find("native DGEMM's time"), std::string::npos) << small.reason;
  EXPECT_EQ(decide(2816, 2816, 2816, uniform).moduli, 14) << "2816^3 measured 1.132x native with 14 moduli";
  EXPECT_EQ(decide(3072, 3072, 3072, uniform).moduli, 14) << "3072^3 measured 1.080x native with 14 moduli";
  EXPECT_NE(native_by_shape(2560, 2560, 2560, 0), "") << "too small for any count: no statistics needed";
  EXPECT_EQ(native_by_shape(2048, 2048, 2048, 14), "") << "a fixed count runs its count";
  EXPECT_EQ(native_by_shape(2816, 2816, 2816, 0), "");
  // accurate scaling counts kAccurateModuli more: 14 moduli with it measured 0.900x native at 3072^3, 1.081x at
  // 4096^3
  EXPECT_NE(native_by_shape(3072, 3072, 3072, 0, true), "");
  EXPECT_EQ(native_by_shape(4096, 4096, 4096, 0, true), "");
  const Decision ok = decide(4096, 4096, 4096, uniform);
  EXPECT_EQ(ok.moduli, 14);
  EXPECT_NE(ok.reason.find("x native DGEMM's time"), std::string::npos) << ok.reason;
  // statistics that need 16 moduli at 3072^3: slower than native there (16 moduli measured 0.967x; the model allows
  // 15), faster at 8192^3
  Stats spread = uniform;
  for (double rho = 2; rho < 1e3 && decide(3072, 3072, 3072, spread).moduli != 0; rho *= 1.02)
    spread = Stats{rho, std::sqrt(rho), rho, std::sqrt(rho)};
  const Decision at3 = decide(3072, 3072, 3072, spread), at8 = decide(8192, 8192, 8192, spread);
  ASSERT_GE(at8.moduli, 16) << at8.reason;
  EXPECT_EQ(at3.moduli, 0) << at3.reason;
  EXPECT_NE(at3.reason.find("native: 15 moduli, the most the speed model allows"), std::string::npos) << at3.reason;
  const auto [qa, qb] = split_bits(spread, scale_bits(16, 3072));
  EXPECT_LE(predicted_ratio(spread, 3072, 3072, 3072, qa, qb), kTargetRatio) << "16 would have met the target";
  EXPECT_EQ(decide(3072, 3072, 3072, spread, 17).moduli, 17) << "a fixed count is not sent native for speed";
}

// The accuracy target follows native DGEMM's own error (target_ratio, ozaki.hpp): kTargetRatio on uniform data and
// where the statistics are not binned; higher as the rows' tau grow, at most kMaxTargetGrowth times; kTargetRatio
// again where a row's tau passes kGrowthTauLimit. The PHI 1 bins are those of kbench's 16384^3 exp:1 operands on the
// H100 (docs/results/2026-11-28-h100-sm90-interleave-ozaki-exp1-0a098c47eb8f.json: two rows of A at rho 615 took 17
// moduli), each bin's tau from a simulation of such operands (docs/results/...-ozaki-native-error-growth-simulation.py):
// 16 moduli for the target these inputs get.
TEST(OzakiRule, TargetFollowsNativesOwnErrorGrowth) {
  const int n = 16384;
  Stats uniform{2.05, 1.16, 2.05, 1.16};
  uniform.bins_a = make_bins({{2.0, 1.16, n / 2}, {2.05, 1.16, n / 2}});
  uniform.bins_b = uniform.bins_a;
  EXPECT_NEAR(target_ratio(uniform, n, n), kTargetRatio, 0.02 * kTargetRatio);
  EXPECT_EQ(target_ratio(Stats{2.05, 1.16, 2.05, 1.16}, n, n), kTargetRatio) << "unbinned";
  Stats flat{2, 1, 2, 1};
  flat.bins_a = flat.bins_b = make_bins({{2, 1, n}});
  EXPECT_EQ(target_ratio(flat, n, n), kTargetRatio) << "never below it";

  Stats phi05{29.0, 1.34, 28.8, 1.34};
  phi05.bins_a = make_bins({{7.3, 1.32, 377}, {14.6, 1.34, 7712}, {29.0, 1.34, 103}});
  phi05.bins_b = make_bins({{7.3, 1.32, 380}, {14.5, 1.34, 7700}, {28.8, 1.34, 112}});
  const double t05 = target_ratio(phi05, 8192, 8192);
  EXPECT_GT(t05, 1.2 * kTargetRatio);
  EXPECT_LT(t05, 1.5 * kTargetRatio) << "PHI 0.5: native's error grows by about 1.3";
  EXPECT_EQ(decide(8192, 8192, 8192, phi05).moduli, 15) << "14 would err 16 times more";

  Stats phi1{614.7, 3.53, 311.9, 2.88};
  phi1.bins_a = make_bins({{20.1, 1.9, 1}, {40.8, 2.0, 6756}, {81.6, 2.12, 8861}, {160.2, 2.29, 730},
                           {314.2, 2.67, 34}, {614.7, 3.53, 2}});
  phi1.bins_b = make_bins({{20.2, 1.9, 1}, {40.6, 2.0, 6770}, {80.8, 2.12, 8843}, {160.4, 2.3, 739}, {311.9, 2.88, 31}});
  const double t1 = target_ratio(phi1, n, n);
  EXPECT_DOUBLE_EQ(t1, kMaxTargetGrowth * kTargetRatio) << "PHI 1: native's error grows by 4-6 by the model, capped";
  const Decision d = decide(n, n, n, phi1);
  EXPECT_EQ(d.moduli, 16) << d.reason;
  EXPECT_DOUBLE_EQ(d.target, t1);
  EXPECT_GT(d.predicted_ratio, kTargetRatio) << "kTargetRatio alone would take 17";
  EXPECT_EQ(d.reason.find("under 3 x 2^-53"), std::string::npos) << "the reason names the target it used: " << d.reason;

  // The same data scaled by the norms: the H200's 16384^3 exp:1 operands at 9c46d85 (six rows of A and eight columns
  // of B a half-octave bin above the rest; docs/results/2026-11-28-h200-sm90-ozaki-norm-scaling-exp1-9c46d85b524d.json),
  // each bin's tau from a simulation of such operands (docs/gemm-notes.md, step 67) and the widest row's as measured.
  // 14 moduli: under this target, not under the square root's of step 57 (kTargetRatio times 2).
  Stats phi1_norm{4.90, 4.67, 4.80, 2.86};
  phi1_norm.norm = true;
  phi1_norm.bins_a = make_bins({{2.55, 2.42, 16378}, {4.90, 4.67, 6}});
  phi1_norm.bins_b = make_bins({{2.55, 2.42, 16376}, {4.80, 2.86, 8}});
  const Decision dn = decide(n, n, n, phi1_norm);
  EXPECT_DOUBLE_EQ(dn.target, kMaxTargetGrowth * kTargetRatio);
  EXPECT_EQ(dn.moduli, 14) << dn.reason;
  EXPECT_GT(dn.predicted_ratio, 2 * kTargetRatio) << dn.reason;

  Stats wide = phi1;  // PHI 2: a row's tau past the limit
  wide.tau_a = kGrowthTauLimit * 1.01;
  wide.bins_a.tau[rho_bin(614.7)] = wide.tau_a;
  EXPECT_EQ(target_ratio(wide, n, n), kTargetRatio);
  EXPECT_EQ(decide(n, n, n, wide).moduli, 17);
  EXPECT_NE(decide(n, n, n, wide).reason.find("under 3 x 2^-53"), std::string::npos);

  // Wider spreads never lower the target; random bins stay within [kTargetRatio, kMaxTargetGrowth kTargetRatio].
  std::mt19937_64 rng(choose_seed());
  for (int t = 0; t < 200; ++t) {
    Stats r = random_binned_stats(rng, 6);
    const double before = target_ratio(r, 4096, 8192);
    EXPECT_GE(before, kTargetRatio);
    EXPECT_LE(before, kMaxTargetGrowth * kTargetRatio);
    for (RhoBins* b : {&r.bins_a, &r.bins_b})
      for (double& tau : b->tau) tau *= 1.05;
    r.tau_a *= 1.05;
    r.tau_b *= 1.05;
    if (std::max(r.tau_a, r.tau_b) <= kGrowthTauLimit) {
      EXPECT_GE(target_ratio(r, 4096, 8192), before) << "trial " << t;
    }
  }
}

// decide() estimates the most moduli the speed model allows first and stops there where they miss the target; that
// gives the decisions of the full search (the fewest count from kMinModuli to kMaxModuli that meets the target,
// native where none does or where the speed model puts that count above kSpeedMargin), on random binned statistics
// and shapes on both sides of the crossover.
TEST(OzakiRule, SpeedModelFirstGivesTheFullSearchsDecisions) {
  auto full_search = [](int M, int N, int K, const Stats& s) {
    if (!native_by_shape(M, N, K, 0).empty()) return 0;
    for (int n = kMinModuli; n <= kMaxModuli; ++n) {
      const auto [qa, qb] = split_bits(s, scale_bits(n, K));
      if (predicted_ratio(s, M, N, K, qa, qb) <= target_ratio(s, M, N))
        return predicted_time_ratio(M, N, K, n) <= kSpeedMargin ? n : 0;
    }
    return 0;
  };
  std::mt19937_64 rng(choose_seed());
  int emulated = 0, native = 0;
  for (int t = 0; t < 300; ++t) {
    const Stats r = random_binned_stats(rng, 10);
    for (const auto& [M, N, K] : {std::tuple{2816, 2816, 2816}, {3072, 3072, 3072}, {3584, 3584, 3584},
                                  {4096, 4096, 4096}, {8192, 8192, 1024}, {2048, 8192, 4096}, {16384, 16384, 16384}}) {
      const Decision d = decide(M, N, K, r);
      const int want = full_search(M, N, K, r);
      EXPECT_EQ(d.moduli, want) << "trial " << t << " at " << M << " x " << N << " x " << K << ": " << d.reason;
      (want ? emulated : native) += 1;
      if (d.moduli) {
        const auto [qa, qb] = split_bits(r, scale_bits(d.moduli, K));
        EXPECT_EQ(d.qa, qa);
        EXPECT_EQ(d.qb, qb);
      }
    }
  }
  EXPECT_GT(emulated, 100) << "the draws reach both sides";
  EXPECT_GT(native, 100) << "the draws reach both sides";
}

// Accurate scaling: the shifts a split leaves room for (qa + s_i <= 62, s_i <= qb - 8), and a rule that takes
// the coarse product's gain where it lowers the count, never more moduli than fast scaling.
TEST(OzakiRule, AccurateScalingTakesTheShiftsTheSplitLeavesRoomFor) {
  for (int qa = 0; qa <= 62; ++qa)
    for (int qb = 0; qb <= 62; ++qb) {
      const auto [ca, cb] = shift_caps(qa, qb);
      EXPECT_TRUE(ca >= 0 && ca <= kShiftCap && cb >= 0 && cb <= kShiftCap);
      EXPECT_LE(qa + ca, 62);
      EXPECT_LE(qb + cb, 62);
      EXPECT_TRUE(ca == 0 || ca <= qb - 8) << qa << " " << qb;
      EXPECT_TRUE(cb == 0 || cb <= qa - 8) << qa << " " << qb;
    }
  EXPECT_EQ(shift_caps(50, 50), std::make_pair(kShiftCap, kShiftCap));
  const Stats wide{40, std::sqrt(40.0), 40, std::sqrt(40.0)};
  Shifts none, gain;
  for (int c = 0; c <= kShiftCap; ++c) {
    none.rho_a[c] = none.rho_b[c] = 40;
    gain.rho_a[c] = gain.rho_b[c] = std::max(1.0, std::ldexp(40.0, -c));
  }
  for (int K : {8192, 16384}) {  // sizes where the speed model lets 19 moduli emulate (17 and 2 for accuracy)
    const Decision fast = decide(K, K, K, wide), flat = decide(K, K, K, wide, 0, &none),
                   acc = decide(K, K, K, wide, 0, &gain);
    ASSERT_GT(fast.moduli, 0) << fast.reason;
    EXPECT_EQ(flat.moduli, fast.moduli) << "no gain, no fewer moduli; " << flat.reason;
    EXPECT_LT(acc.moduli, fast.moduli) << acc.reason;
    EXPECT_TRUE(acc.accurate);
    EXPECT_NE(acc.reason.find("accurate scaling"), std::string::npos) << acc.reason;
    EXPECT_EQ(acc.qa + acc.qb, scale_bits(acc.moduli, K));
    EXPECT_EQ(std::make_pair(acc.cap_a, acc.cap_b), shift_caps(acc.qa, acc.qb));
    EXPECT_LE(acc.predicted_ratio, kTargetRatio);
  }
  EXPECT_EQ(coarse_shift(0, 100), kShiftCap) << "a zero row takes the whole cap";
  for (int K : {1, 77, 4096})
    for (unsigned long long w : {1ull, 63ull, 64ull * 64 * K / 3, 64ull * 64 * K}) {
      const int s = coarse_shift(w, K);
      const unsigned long long budget = static_cast<unsigned long long>(kCoarseBudget) * K;
      if (s > 0) {  // at s = 0 (and t = 0) the plain bound K 2^S holds without the coarse one
        EXPECT_LE(w << s, budget) << w << " " << K;
      }
      if (s < kShiftCap) {
        EXPECT_GT(w << (s + 1), budget) << "the largest such shift";
      }
    }
}

// The proof in ozaki.hpp, checked on data: with the shifts the device would take (coarse product, rows first,
// then columns given the rows' shifts), the integer product X = A' B' stays within K 2^S, so below P / 2.
__extension__ using Int128 = __int128;  // exact sums of K products of 62-bit integers

TEST(OzakiRule, AccurateShiftsKeepTheIntegerProductExact) {
  std::mt19937_64 rng(choose_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g;
  const int M = 24, N = 20, K = 96;
  for (int trial = 0; trial < 30; ++trial) {
    const double phi = trial % 3;  // uniform, exp:1, exp:2 with rows of other scales
    Eigen::MatrixXd A(M, K), B(K, N);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) A(i, k) = u(rng) * std::exp(phi * g(rng)) * std::ldexp(1.0, i % 5 - 2);
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) B(k, j) = u(rng) * std::exp(phi * g(rng));
    if (trial % 4 == 1) A.row(3).setZero();
    auto exponent = [](double amax) { int e = 0; std::frexp(amax, &e); return e; };
    std::vector<int> e(M), f(N);
    for (int i = 0; i < M; ++i) e[i] = exponent(A.row(i).cwiseAbs().maxCoeff());
    for (int j = 0; j < N; ++j) f[j] = exponent(B.col(j).cwiseAbs().maxCoeff());
    Eigen::MatrixXi U(M, K), V(K, N);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) U(i, k) = static_cast<int>(std::ceil(std::ldexp(std::fabs(A(i, k)), kCoarseBits - e[i])));
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) V(k, j) = static_cast<int>(std::ceil(std::ldexp(std::fabs(B(k, j)), kCoarseBits - f[j])));
    ASSERT_LE(std::max(U.maxCoeff(), V.maxCoeff()), 64);
    const Eigen::MatrixXi W = U * V;
    std::vector<int> s(M), t(N);
    for (int i = 0; i < M; ++i) s[i] = coarse_shift(static_cast<unsigned long long>(W.row(i).maxCoeff()), K);
    for (int j = 0; j < N; ++j) {
      unsigned long long m = 0;
      for (int i = 0; i < M; ++i) m = std::max(m, static_cast<unsigned long long>(W(i, j)) << s[i]);
      t[j] = coarse_shift(m, K);
    }
    const int n = 12 + trial % 3, S = scale_bits(n, K);
    const int qa = S / 2 + trial % 7 - 3, qb = S - qa;
    const auto [ca, cb] = shift_caps(qa, qb);
    for (int& x : s) x = std::min(x, ca);  // what the launch applies: t_j came from the uncapped s_i
    for (int& x : t) x = std::min(x, cb);
    int gained = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        Int128 x = 0;
        for (int k = 0; k < K; ++k) {
          const long long a = std::llrint(std::ldexp(A(i, k), qa + s[i] - e[i]));
          const long long b = std::llrint(std::ldexp(B(k, j), qb + t[j] - f[j]));
          x += static_cast<Int128>(a) * b;
        }
        const long double mag = std::fabs(static_cast<long double>(x));
        ASSERT_LT(mag, std::ldexp(static_cast<long double>(K), S)) << "trial " << trial << ", (" << i << ", " << j << ")";
        gained = std::max(gained, s[i] + t[j]);
      }
    EXPECT_GT(gained, 0) << "trial " << trial << ": the coarse product gave no row or column a bit";
  }
}

// rho and tau of a view's rows (A's rows, B's columns) as the device's statistics define them: the largest over
// the finite non-zero rows, tau measured where a row's largest magnitude lies in [2^-400, 2^400], else its bound
// sqrt(rho); 1 where no row counts. With norm scaling, rho at each measured row's norm exponent (norm_exponent) and,
// exactly, its factor (norm_factor), and spread the largest magnitudes' rho (otherwise the same as rho). Each
// counted row's rho and tau into *each, each row's exponent and factor into *exponents and *factors (when given).
struct HostStats {
  double rho = 1, tau = 1, spread = 1;
};
HostStats host_rho_tau(const Eigen::MatrixXd& rows, Scaling scaling,
                       std::vector<std::pair<double, double>>* each = nullptr, std::vector<int>* exponents = nullptr,
                       std::vector<double>* factors = nullptr) {
  HostStats h;
  const double K = static_cast<double>(rows.cols());
  const bool norm = scaling != Scaling::kLargest;
  if (exponents) exponents->assign(rows.rows(), 0);
  if (factors) factors->assign(rows.rows(), 1.0);
  for (Eigen::Index r = 0; r < rows.rows(); ++r) {
    const double amax = rows.row(r).cwiseAbs().maxCoeff(), sum = rows.row(r).cwiseAbs().sum();
    if (!(amax > 0) || !std::isfinite(amax)) continue;
    int e = 0;
    std::frexp(amax, &e);
    const double spread_r = std::ldexp(K / sum, e);
    double tau_r = std::sqrt(spread_r);
    const bool measured = amax >= 0x1p-400 && amax <= 0x1p400;
    const double sumsq = measured ? rows.row(r).squaredNorm() : 0;
    if (measured) tau_r = std::min(tau_r, std::sqrt(K * sumsq) / sum);
    const int used = norm && measured ? norm_exponent(std::sqrt(sumsq / K), e) : e;
    const double m = scaling == Scaling::kNormExact && measured ? norm_factor(std::sqrt(sumsq / K), used, e) : 1.0;
    const double rho_r = std::ldexp(K / sum, used) / m;
    h.rho = std::max(h.rho, rho_r);
    h.tau = std::max(h.tau, tau_r);
    h.spread = std::max(h.spread, spread_r);
    if (each) each->emplace_back(rho_r, tau_r);
    if (exponents) (*exponents)[r] = used;
    if (factors) (*factors)[r] = m;
  }
  return h;
}

// The statistics the rule reads for A and B (unbinned), as host_rho_tau has them.
Stats host_stats(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, Scaling scaling) {
  const HostStats a = host_rho_tau(A, scaling), b = host_rho_tau(B.transpose(), scaling);
  Stats s{a.rho, a.tau, b.rho, b.tau};
  s.spread_a = a.spread;
  s.spread_b = b.spread;
  s.norm = scaling != Scaling::kLargest;
  return s;
}

// Norm scaling (ozaki.hpp): each row's exponent from its root mean square, at a power of two or times its exact
// factor (norm_factor, rounded by round_scaled), keeps the exact integer product below K 2^S (Cauchy and Schwarz) and
// every scaled element within the residues' 2^62, on uniform, exp:1 and exp:2 data with rows of other scales, a zero
// row, a row of one large element among tiny ones (norm_exponent's cap on the gap) and K up to 2^17, at the split's
// two extremes and its middle; it lowers some row's exponent below its largest magnitude's, and the factors lie in
// [1, 2], above 1 for some row.
TEST(OzakiRule, NormScalingKeepsTheIntegerProductBelowHalfP) {
  std::mt19937_64 rng(choose_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g;
  const std::tuple<int, int, int> shapes[] = {{24, 20, 96}, {6, 5, 4096}, {3, 2, kMaxK}};
  for (int trial = 0; trial < 24; ++trial) {
    const auto [M, N, K] = shapes[trial % 3];
    const double phi = trial / 3 % 3;  // uniform, exp:1, exp:2
    Eigen::MatrixXd A(M, K), B(K, N);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) A(i, k) = u(rng) * std::exp(phi * g(rng)) * std::ldexp(1.0, i % 5 - 2);
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) B(k, j) = u(rng) * std::exp(phi * g(rng));
    if (trial % 4 == 1) A.row(M - 1).setZero();
    if (trial % 4 == 2) {  // one element 2^40 above the rest: at K = 2^17 the gap reaches the cap
      A.row(0) *= 0x1p-40;
      A(0, K / 2) = 1.0;
    }
    auto exponents = [](const Eigen::MatrixXd& rows, std::vector<int>& e, std::vector<int>& en,
                        std::vector<double>& m) {
      for (Eigen::Index r = 0; r < rows.rows(); ++r) {
        const double amax = rows.row(r).cwiseAbs().maxCoeff(), rms = std::sqrt(rows.row(r).squaredNorm() / rows.cols());
        int x = 0;
        std::frexp(amax, &x);
        e.push_back(x);
        en.push_back(amax > 0 ? norm_exponent(rms, x) : x);
        m.push_back(amax > 0 ? norm_factor(rms, en.back(), x) : 1.0);
      }
    };
    std::vector<int> e, en, f, fn;
    std::vector<double> ma, mb;
    exponents(A, e, en, ma);
    exponents(B.transpose(), f, fn, mb);
    int lowered = 0, multiplied = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
      ASSERT_LE(en[i], e[i]);
      ASSERT_GE(en[i], e[i] - kNormMaxGap);
      ASSERT_GE(ma[i], 1.0);
      ASSERT_LE(ma[i], 2.0);
      ASSERT_EQ(std::ldexp(ma[i], kFactorBits - 1), std::floor(std::ldexp(ma[i], kFactorBits - 1))) << "its bits";
      lowered += en[i] < e[i];
      multiplied += ma[i] > 1;
    }
    if (phi < 2) {  // exp:2 rows at K = 2^17 sit at the gap's cap, where the factor is 1
      EXPECT_GT(multiplied, 0) << "trial " << trial << ": no row of A with a factor";
    }
    if (phi > 0 || trial % 4 == 2) {  // uniform rows sit within a factor 2 of their largest magnitude
      EXPECT_GT(lowered, 0) << "trial " << trial << ": no row of A below its largest magnitude's exponent";
    }
    if (trial % 4 == 2) {  // sqrt(K) x its root mean square: the gap (about log2(sqrt(K)) + 1) is capped at K = 2^17
      if (K == kMaxK) {
        EXPECT_EQ(en[0], e[0] - kNormMaxGap) << "trial " << trial;
      } else {
        EXPECT_LT(en[0], e[0] - 2) << "trial " << trial << ", K " << K;
      }
    }
    Stats s{1, 1, 1, 1};
    s.norm = true;
    const int n = 12 + trial % 4, S = scale_bits(n, K);
    const auto [q0, unused] = split_bits(s, S);
    // the split's extremes and its middle: every one the bounds let through
    for (const int want : {0, q0, 62}) {
      Stats lean = s;
      lean.rho_a = want == 0 ? 1e-30 : want == 62 ? 1e30 : 1;
      const auto [qa, qb] = split_bits(lean, S);
      ASSERT_GE(std::min(qa, qb), kNormMinBits);
      ASSERT_LE(std::max(qa, qb), 62 - kNormMaxGap);
      for (const bool exact : {false, true})
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            Int128 x = 0;
            for (int k = 0; k < K; ++k) {
              const long long sa = round_scaled(std::ldexp(A(i, k), qa - en[i]), exact ? ma[i] : 1.0);
              const long long sb = round_scaled(std::ldexp(B(k, j), qb - fn[j]), exact ? mb[j] : 1.0);
              ASSERT_LE(std::llabs(sa), 1ll << 62);
              ASSERT_LE(std::llabs(sb), 1ll << 62);
              x += static_cast<Int128>(sa) * sb;
            }
            const long double mag = std::fabs(static_cast<long double>(x));
            ASSERT_LT(mag, std::ldexp(static_cast<long double>(K), qa + qb))
                << "trial " << trial << ", (" << i << ", " << j << "), split " << qa << " + " << qb
                << (exact ? ", exact factors" : "");
          }
    }
  }
}

// The norm scaling's split: each side within [kNormMinBits, 62 - kNormMaxGap] whatever the statistics, the bits
// beyond twice the most left unused; norm_exponent at and around powers of two, and its cap.
TEST(OzakiRule, NormScalingSplitKeepsBothSidesInBounds) {
  Stats even{2, 1.2, 2, 1.2};
  even.norm = true;
  const int most = 62 - kNormMaxGap;
  for (int S : {77, 96, 108, 111, 124}) {
    for (double lean : {1e-30, 1.0, 1e30}) {
      Stats s = even;
      s.rho_a = lean;
      const auto [qa, qb] = split_bits(s, S);
      EXPECT_GE(std::min(qa, qb), kNormMinBits) << S << ", lean " << lean;
      EXPECT_LE(std::max(qa, qb), most) << S << ", lean " << lean;
      EXPECT_EQ(qa + qb, std::min(S, 2 * most)) << S << ", lean " << lean;
    }
  }
  EXPECT_EQ(split_bits(even, 96), std::make_pair(48, 48));
  EXPECT_THROW(split_bits(even, 2 * kNormMinBits - 1), std::logic_error);
  EXPECT_EQ(norm_exponent(0.5, 3), 0) << "0.5 (1 + margin) lies above 2^-1";
  EXPECT_EQ(norm_exponent(0.49, 3), -1);
  EXPECT_EQ(norm_exponent(0.99, 0), 0);
  EXPECT_EQ(norm_exponent(1.0, 0), 0) << "never above the largest magnitude's exponent";
  EXPECT_EQ(norm_exponent(0x1p-20, 0), -kNormMaxGap) << "capped";
}

// Exact norm scaling's rounding (round_scaled): the nearest integer to y m within 1/2 + 2^-54, checked exactly in
// 128-bit integers, for factors of kFactorBits bits in [1, 2] and |y m| from 2^-8 to 2^62, near-ties included (y the
// double nearest (k + 1/2) / m); with m = 1, y's nearest integer as llrint has it. And norm_factor: kFactorBits bits,
// the largest with rms m (1 + kNormMargin) <= 2^e, 1 at the caps, and the largest element's bound kept:
// m 2^(emax - e) <= 2^kNormMaxGap.
TEST(OzakiRule, ExactFactorsRoundToTheNearestInteger) {
  std::mt19937_64 rng(20261128);
  for (int i = 0; i < 300000; ++i) {
    const double m =
        i % 5 == 0 ? 1.0 : std::ldexp(static_cast<double>((1ull << 19) + rng() % ((1ull << 19) + 1)), 1 - kFactorBits);
    double y = 0;
    if (i % 3 == 0) {  // near a tie: (k + 1/2) / m, rounded
      y = (static_cast<double>(rng() >> (14 + rng() % 40)) + 0.5) / m * (rng() & 1 ? 1 : -1);
    } else {  // y = Y 2^ey, Y of 53 bits: |y| in [2^-8, 2^61)
      const long long Y = static_cast<long long>((1ull << 52) | (rng() >> 12)) * (rng() & 1 ? 1 : -1);
      y = std::ldexp(static_cast<double>(Y), -60 + static_cast<int>(rng() % 69));
    }
    const long long n = round_scaled(y, m);
    if (m == 1) {
      ASSERT_EQ(n, std::llrint(y)) << y;
    }
    int ey = 0;
    const Int128 Y = static_cast<Int128>(std::ldexp(std::frexp(y, &ey), 53));  // y = Y 2^(ey - 53)
    const Int128 P = Y * static_cast<Int128>(std::ldexp(m, kFactorBits - 1));    // y m = P 2^sh
    const int sh = ey - 53 - (kFactorBits - 1);
    if (sh >= 0) {
      ASSERT_EQ(static_cast<Int128>(n), P << sh) << y << " x " << m;
    } else {
      // within 1/2 + 2^-54 of y m: 2 |y m - n| 2^-sh <= 2^-sh + 2^(-sh - 53)
      const Int128 d = P - (static_cast<Int128>(n) << -sh), twice = 2 * (d < 0 ? -d : d);
      ASSERT_LE(twice, (Int128{1} << -sh) + (-sh >= 53 ? Int128{1} << (-sh - 53) : 0)) << y << " x " << m << ": " << n;
    }
  }
  for (int i = 0; i < 100000; ++i) {
    const double rms = std::ldexp(1.0 + static_cast<double>(rng() >> 11) * 0x1p-53, static_cast<int>(rng() % 9) - 4);
    int own = 0;
    std::frexp(rms * (1 + kNormMargin), &own);
    const int emax = own + static_cast<int>(rng() % (kNormMaxGap + 2)) - 1;  // one below rms's own to past the cap
    const int e = norm_exponent(rms, emax);
    const double m = norm_factor(rms, e, emax);
    ASSERT_GE(m, 1.0);
    ASSERT_LE(m, 2.0);
    ASSERT_EQ(std::ldexp(m, kFactorBits - 1), std::floor(std::ldexp(m, kFactorBits - 1)));
    ASSERT_LE(std::ldexp(m, emax - e), std::ldexp(1.0, kNormMaxGap)) << rms << ", " << e << ", " << emax;
    if (m > 1) {
      ASSERT_LE(static_cast<long double>(rms) * m * (1 + kNormMargin), std::ldexp(1.0L, e)) << rms << ", " << m;
      ASSERT_GT(static_cast<long double>(rms) * (m + std::ldexp(1.0, 1 - kFactorBits)) * (1 + kNormMargin),
                std::ldexp(1.0L, e))
          << rms << ", " << m << ": not the largest";
    }
    if (e == own && emax - e < kNormMaxGap) {  // room for a factor unless rms (1 + margin) is within 2^-19 of 2^e
      if (rms * (1 + kNormMargin) * (1 + std::ldexp(1.0, 1 - kFactorBits)) < std::ldexp(1.0, e)) {
        EXPECT_GT(m, 1.0) << rms << ", " << e;
      }
    } else {
      EXPECT_EQ(m, 1.0) << rms << ", " << e << ", " << emax;
    }
  }
}

// The rule on the statistics of simulated operands (4096 x 4096 x 4096, drawn as kbench's exp:PHI draws: uniform
// times exp(PHI N(0, 1))): norm scaling never needs more moduli than the scaling by the largest magnitudes, and at
// PHI 0.5 and 1 fewer; its exact factors never more than its powers of two, with a lower rho; a fixed count still
// refuses data whose largest magnitudes sit far above their mean.
TEST(OzakiRule, NormScalingNeedsFewerModuliWhereMagnitudesSpread) {
  std::mt19937_64 rng(choose_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g;
  const int K = 4096, rows = 256;  // 256 rows a side stand for 4096: the maxima of the rows' statistics
  for (double phi : {0.0, 0.5, 1.0}) {
    Eigen::MatrixXd A(rows, K), B(K, rows);
    for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = u(rng) * std::exp(phi * g(rng));
    for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = u(rng) * std::exp(phi * g(rng));
    const Stats by_max = host_stats(A, B, Scaling::kLargest), by_pow2 = host_stats(A, B, Scaling::kNormPow2),
                by_norm = host_stats(A, B, Scaling::kNormExact);
    EXPECT_LE(by_pow2.rho_a, by_max.rho_a);
    EXPECT_LT(by_norm.rho_a, by_pow2.rho_a);
    EXPECT_EQ(by_norm.spread_a, by_max.rho_a);
    const Decision dm = decide(K, K, K, by_max), dp = decide(K, K, K, by_pow2), dn = decide(K, K, K, by_norm);
    std::cout << "PHI " << phi << ": largest magnitudes " << dm.moduli << " moduli (rho " << by_max.rho_a
              << "), norms at powers of two " << dp.moduli << " (rho " << by_pow2.rho_a << "), exactly " << dn.moduli
              << " (rho " << by_norm.rho_a << ", predicted " << dn.predicted_ratio << " against " << dp.predicted_ratio
              << ")\n";
    ASSERT_GT(dn.moduli, 0) << dn.reason;
    ASSERT_GT(dp.moduli, 0) << dp.reason;
    EXPECT_LE(dn.moduli, dp.moduli) << "PHI " << phi;
    if (dm.moduli > 0) {
      EXPECT_LE(dp.moduli, dm.moduli) << "PHI " << phi;
      if (phi > 0) {
        EXPECT_LT(dp.moduli, dm.moduli) << "PHI " << phi;
      }
    }
  }
  Stats spread{3, 1.5, 3, 1.5};
  spread.spread_a = 2 * kMaxFixedRho;
  spread.norm = true;
  EXPECT_EQ(decide(4096, 4096, 4096, spread, 14).moduli, 0) << "the fixed count's guard reads the spread";
}

// The estimate against the error it estimates (predicted_ratio, ozaki.hpp; docs/gemm-notes.md, steps 67 and 68):
// operands scaled by the norms (at powers of two, and exactly) and rounded as the device rounds them, the error of the
// rounded operands' exact product formed directly (E = dA B + A dB + dA dB; the recombination is exact and C's own
// rounding is not counted) over every element of C, against the rule's binned estimate from the same rows'
// statistics. The estimate is the level the largest of M N sums is expected to reach, so the largest error may pass
// it a little: over 100 seeds (600 cases a scaling) the estimate was 0.77-1.74 times the largest error at powers of
// two and 0.89-1.70 times with exact factors. Past 1.5 times the estimate the model would have gone wrong (the
// chance of a largest error there is about 1e-6 a case); below 1 / 2.5 of it the estimate would cost moduli for
// nothing.
TEST(OzakiRule, EstimateFollowsTheErrorOfTheRoundedOperands) {
  std::mt19937_64 rng(choose_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g;
  const int M = 128, N = 128, K = 2048;
  for (double phi : {0.0, 0.5, 1.0}) {
    Eigen::MatrixXd A(M, K), B(K, N);
    for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = u(rng) * std::exp(phi * g(rng));
    for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = u(rng) * std::exp(phi * g(rng));
    const Eigen::MatrixXd AB = A.cwiseAbs() * B.cwiseAbs();
    for (const Scaling scaling : {Scaling::kNormPow2, Scaling::kNormExact}) {
      const char* how = scaling == Scaling::kNormExact ? "exact factors" : "powers of two";
      std::vector<std::pair<double, double>> rows_a, rows_b;
      std::vector<int> ea, eb;
      std::vector<double> ma, mb;
      const HostStats a = host_rho_tau(A, scaling, &rows_a, &ea, &ma);
      const HostStats b = host_rho_tau(B.transpose(), scaling, &rows_b, &eb, &mb);
      Stats s{a.rho, a.tau, b.rho, b.tau};
      s.norm = true;
      for (const auto& [rho, tau] : rows_a) add_rows(s.bins_a, rho, tau, 1);
      for (const auto& [rho, tau] : rows_b) add_rows(s.bins_b, rho, tau, 1);
      // x's rounding: (round_scaled(x 2^(q - e), m) 2^(e - q) - x m) / m, the difference formed by one FMA
      auto rounding = [](double x, int q, int e, double m) {
        const double back = std::ldexp(static_cast<double>(round_scaled(std::ldexp(x, q - e), m)), e - q);
        return -std::fma(x, m, -back) / m;
      };
      for (int n : {13, 14}) {
        const auto [qa, qb] = split_bits(s, scale_bits(n, K));
        const double estimate = predicted_ratio(s, M, N, K, qa, qb);
        Eigen::MatrixXd dA(M, K), dB(K, N);  // each element's rounding
        for (int k = 0; k < K; ++k) {
          for (int i = 0; i < M; ++i) dA(i, k) = rounding(A(i, k), qa, ea[i], ma[i]);
          for (int j = 0; j < N; ++j) dB(k, j) = rounding(B(k, j), qb, eb[j], mb[j]);
        }
        const Eigen::MatrixXd E = dA * B + A * dB + dA * dB;
        const double largest = (E.cwiseAbs().array() / AB.array()).maxCoeff() / 0x1p-53;  // in u, as the estimate
        std::cout << "PHI " << phi << ", " << how << ", " << n << " moduli: estimate " << estimate
                  << ", largest error " << largest << " x 2^-53 (|A||B|)_ij\n";
        EXPECT_LE(largest, 1.5 * estimate) << "PHI " << phi << ", " << how << ", " << n << " moduli";
        EXPECT_GE(2.5 * largest, estimate) << "PHI " << phi << ", " << how << ", " << n << " moduli";
      }
    }
  }
}

TEST(OzakiRule, AccurateWorkspaceHoldsOneMoreSet) {
  const Workspace f = workspace(1000, 300, 77, 14), a = workspace(1000, 300, 77, 14, true);
  EXPECT_EQ(a.bytes, 15 * (f.a_stride + f.b_stride + f.p_stride));
  const std::string r = workspace_refusal(workspace(1000, 300, 77, 0, true), 0, 1 << 20, 0);
  EXPECT_NE(r.find("coarse product needs"), std::string::npos) << r;
}

TEST(OzakiRule, WorkspaceHoldsResiduesAndProducts) {
  const Workspace w = workspace(1000, 300, 77, 14);
  EXPECT_EQ(w.Kp, 80);
  EXPECT_EQ(w.ldp, 1000);
  EXPECT_EQ(w.a_stride % 256, 0u);
  EXPECT_GE(w.a_stride, 1000u * 80);
  EXPECT_GE(w.b_stride, 300u * 80);
  EXPECT_GE(w.p_stride, 1000u * 300 * 4);
  EXPECT_EQ(w.bytes, 14 * (w.a_stride + w.b_stride + w.p_stride));
  // residue_products' bytes: a quarter of each INT32 plane; accurate scaling's coarse product stays INT32
  EXPECT_EQ(workspace(1000, 300, 77, 14, false, true).bytes, 14 * (w.a_stride + w.b_stride + w.p_stride / 4));
  EXPECT_EQ(workspace(1000, 300, 77, 14, true, true).bytes,
            15 * (w.a_stride + w.b_stride) + w.p_stride + 14 * (w.p_stride / 4));
  EXPECT_EQ(workspace(5, 5, 5, 8).ldp, 8);
  // The products take ldp rows (M rounded up to 4), so each plane of A's residues holds that many.
  const Workspace odd = workspace(4095, 300, 77, 14);
  EXPECT_EQ(odd.ldp, 4096);
  EXPECT_GE(odd.a_stride, 4096u * 80);
}

TEST(OzakiRule, PipelinesFrom16384InColumnBlocksOfWholeMultiplesOf256) {
  EXPECT_EQ(pipeline_width(8192, 8192, 8192, false), 8192) << "measured no faster at 8192^3: one block";
  EXPECT_EQ(pipeline_width(16384, 16384, 16384, false), 2048);
  EXPECT_EQ(pipeline_width(16384, 20000, 16384, false), 2560) << "2500 rounded up to 256: 7 blocks and 2080";
  EXPECT_EQ(pipeline_width(16384, 16384, 8192, false), 16384) << "K below the measured size";
  EXPECT_EQ(pipeline_width(300, 700, 200, true), 256) << "forced: 256, 256 and 188";
  EXPECT_EQ(pipeline_width(300, 200, 200, true), 200) << "forced, but one block holds it";
}

TEST(OzakiRule, RefusesAWorkspaceThatDoesNotFitWithTheBytesInTheMessage) {
  const Workspace w = workspace(16384, 16384, 16384, 14);
  EXPECT_GT(w.bytes, 14ull * 16384 * 16384 * 4) << "the int32 products alone";
  EXPECT_EQ(workspace_refusal(w, 14, w.bytes, 0), "");
  EXPECT_EQ(workspace_refusal(w, 14, w.bytes - 4096, 8192), "") << "the context's own scratch is reused";
  const std::string r = workspace_refusal(w, 14, w.bytes / 2, 1 << 20);
  ASSERT_NE(r, "");
  EXPECT_NE(r.find("14 moduli need " + std::to_string((w.bytes + 1048575) / 1048576) + " MiB"), std::string::npos) << r;
  EXPECT_NE(r.find(std::to_string(w.bytes / 2 / 1048576) + " MiB free"), std::string::npos) << r;
}

// ---- GPU ----


// max |C - C_ref| / (eps (|A||B|)_ij) over `samples` elements (kbench's max_error_eps_ab: the sampled check's
// positions, from the problem's seed, against long-double dot products; C is M x N, its ldc M).
double error_ratio(const GemmProblem& p, const Eigen::MatrixXd& C, int samples) {
  if (C.rows() != p.shape.ldc) throw std::invalid_argument("error_ratio: C's rows are not ldc");
  return worst_in_eps_ab(validate_sampled(p, C.data(), samples).worst, p.shape.K);
}

// The elements of C where the largest errors sit: every column of the `count` rows of A, and every row of the
// `count` columns of B, whose rho at the norms' scaling is largest, and likewise for the largest magnitudes' rho
// (a row's rounding unit is 2^(e_i - qa) = rho_i 2^-qa mean |a_i|, so each scaling's error peaks on its own lines;
// native's peaks on the rows of the widest tau, which rank with the first).
std::vector<std::pair<int, int>> widest_lines(const GemmProblem& p, int count) {
  auto widest = [count](const Eigen::MatrixXd& rows) {
    std::vector<std::pair<double, int>> by_norm, by_spread;
    for (Eigen::Index r = 0; r < rows.rows(); ++r) {
      const HostStats h = host_rho_tau(rows.row(r), Scaling::kNormExact);
      by_norm.push_back({h.rho, static_cast<int>(r)});
      by_spread.push_back({h.spread, static_cast<int>(r)});
    }
    std::vector<int> lines;
    for (auto* v : {&by_norm, &by_spread}) {
      const auto top = v->begin() + std::min<std::ptrdiff_t>(count, std::ssize(*v));
      std::partial_sort(v->begin(), top, v->end(), std::greater<>());
      for (auto it = v->begin(); it != top; ++it)
        if (std::find(lines.begin(), lines.end(), it->second) == lines.end()) lines.push_back(it->second);
    }
    return lines;
  };
  std::vector<std::pair<int, int>> at;
  for (int i : widest(p.A))
    for (int j = 0; j < p.shape.N; ++j) at.push_back({i, j});
  for (int j : widest(p.B.transpose()))
    for (int i = 0; i < p.shape.M; ++i) at.push_back({i, j});
  return at;
}

Eigen::MatrixXd device_result(const char* variant, const GemmProblem& p, ExecContext& ctx,
                              std::string* moduli = nullptr) {
  Runner runner(*registry().find(variant), Mode::Device, p, ctx);
  runner.reset_output();
  runner.run();
  Eigen::MatrixXd c = runner.result();
  if (moduli) {
    const auto& n = ctx.notes();
    *moduli = n.count("ozaki_moduli") ? n.at("ozaki_moduli") : "";
    if (n.count("ozaki_predicted_error")) std::cout << "predicted " << n.at("ozaki_predicted_error") << "; ";
  }
  return c;
}

// The accuracy rule at a size the test suite affords: ozaki's largest error relative to eps (|A||B|) at most
// native cuBLAS's on the same inputs and elements, with magnitudes of several spreads and with rows of A and
// columns of B scaled by powers of two far apart; on 20,000 sampled elements (kbench's check) and on the lines of
// C where the largest errors sit (widest_lines: 4 rows and 4 columns a measure, 32,768-65,536 elements).
TEST(Ozaki, AsAccurateAsNativeDgemm) {
  KS_REQUIRE_GPU();
  if (test::small_sizes_only()) GTEST_SKIP() << "a 4096 x 4096 x 8192 product";
  Stream stream;
  ExecContext ctx(stream.get());
  for (const char* dist : {"uniform", "exp:0.5", "exp:1", "exp:2", "uniform,pow2:100"}) {
    const std::uint64_t seed = choose_seed();
    // large enough that the speed model lets the rule emulate up to 17 moduli (PHI 1)
    const GemmProblem p = make_problem({4096, 4096, 8192}, 1.0, 0.0, seed, parse_operands(dist));
    const std::vector<std::pair<int, int>> lines = widest_lines(p, 4);
    auto on_lines = [&](const Eigen::MatrixXd& C) {
      return worst_in_eps_ab(validate_at(p, C.data(), lines).worst, p.shape.K);
    };
    const Eigen::MatrixXd native = device_result("cublas", p, ctx);
    const double n = error_ratio(p, native, 20000), nl = on_lines(native);
    for (const char* v : {"ozaki", "ozaki_max_scaling", "ozaki_accurate"}) {
      std::string moduli;
      const Eigen::MatrixXd emulated = device_result(v, p, ctx, &moduli);
      const double e = error_ratio(p, emulated, 20000), el = on_lines(emulated);
      std::cout << dist << ": " << v << " (" << moduli << " moduli) " << e << ", cublas " << n
                << "; on the widest lines " << el << ", cublas " << nl << " (x 2^-52 |A||B|)\n";
      EXPECT_LE(e, n) << v << ", " << dist << ", seed " << seed << ", " << moduli << " moduli";
      EXPECT_LE(el, nl) << v << ", " << dist << ", seed " << seed << ", " << moduli << " moduli, the widest lines";
      if (std::string(dist) != "exp:1" && std::string(dist) != "exp:2") {  // wider spreads may run native
        EXPECT_NE(moduli, "0") << v << " emulated on " << dist;
      }
    }
  }
}

// Inf and NaN reach C as in native DGEMM: the same elements are NaN, the same are infinite with the same sign.
TEST(Ozaki, InfAndNaNReachCAsInNativeDgemm) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  GemmProblem p = make_problem({300, 200, 100}, 1.0, 0.5, choose_seed());
  const double inf = std::numeric_limits<double>::infinity();
  p.A(5, 7) = inf;
  p.A(9, 3) = std::nan("");
  p.B(4, 11) = -inf;
  p.A(20, 0) = inf;
  p.B(0, 30) = 0.0;  // Inf * 0: NaN at (20, 30)
  const Eigen::MatrixXd n = device_result("cublas", p, ctx);
  for (const char* v : {"ozaki_14", "ozaki_14_accurate"}) {
    const Eigen::MatrixXd e = device_result(v, p, ctx);
    long specials = 0;
    for (int j = 0; j < p.shape.N; ++j)
      for (int i = 0; i < p.shape.M; ++i) {
        const double a = e(i, j), b = n(i, j);
        ASSERT_EQ(std::isnan(a), std::isnan(b)) << "C(" << i << ", " << j << "): " << a << " vs " << b;
        ASSERT_EQ(std::isinf(a), std::isinf(b)) << "C(" << i << ", " << j << "): " << a << " vs " << b;
        if (std::isinf(a)) {
          EXPECT_EQ(std::signbit(a), std::signbit(b));
        } else if (std::isfinite(a)) {
          EXPECT_NEAR(a, b, 1e-10 * (1 + std::fabs(b)));
        }
        specials += !std::isfinite(b);
      }
    EXPECT_GT(specials, 400) << v;  // rows 5, 9, 20 and column 11
  }
}

// The pipeline moves where and when the products run, not what they are: the bits of the one-block launch, with
// Inf and NaN in the last block's columns, in NN and TT; and the phases and notes say what ran.
TEST(Ozaki, PipelineGivesTheBitsOfTheOneBlockLaunch) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  for (const Op op : {Op::N, Op::T}) {
    GemmProblem p = make_problem(GemmShape{257, 700, 300}.with_ops(op, op), 1.25, -0.5, choose_seed());
    const double inf = std::numeric_limits<double>::infinity();
    double& b_inf = op == Op::N ? p.B(3, 600) : p.B(600, 3);  // op(B)(3, 600): the third block's column 600
    double& a_nan = op == Op::N ? p.A(7, 2) : p.A(2, 7);      // op(A)(7, 2): row 7, every block
    b_inf = inf;
    a_nan = std::nan("");
    const Eigen::MatrixXd one = device_result("ozaki_14", p, ctx);
    EXPECT_EQ(ctx.notes().count("ozaki_pipeline"), 0u);
    ctx.time_phases(true);
    const Eigen::MatrixXd blocks = device_result("ozaki_14_pipelined", p, ctx);
    const auto phases = ctx.phase_ms();
    ctx.time_phases(false);
    EXPECT_NE(ctx.notes()["ozaki_pipeline"].find("3 column blocks of 256"), std::string::npos)
        << ctx.notes()["ozaki_pipeline"];
    ASSERT_EQ(phases.size(), 3u);
    const char* names[] = {"scaling", "residues", "products_and_recombination"};
    for (int i = 0; i < 3; ++i) EXPECT_EQ(phases[i].first, names[i]);
    long differ = 0, specials = 0;
    for (int j = 0; j < p.shape.N; ++j)
      for (int i = 0; i < p.shape.M; ++i) {
        const double x = blocks(i, j), y = one(i, j);
        specials += !std::isfinite(y);
        if (std::isnan(x) != std::isnan(y) || (!std::isnan(x) && x != y)) {
          if (differ++ < 5) ADD_FAILURE() << "C(" << i << ", " << j << "): " << x << " vs one block's " << y;
        }
      }
    EXPECT_EQ(differ, 0);
    EXPECT_EQ(specials, p.shape.M + p.shape.N - 1) << "row 7 NaN, column 600 Inf or NaN";
    EXPECT_TRUE(validate(p, blocks).ok || specials > 0);
  }
}

// The products by ozaki's own kernel (residue_products: each reduced to a byte before it is stored) give C's bits
// of cuBLASLt's INT32 products: edges of its 128 x 256 x 128 tiles in M, N and K, M not a multiple of 4, K deep
// enough for products near 2^27, both operands' orientations, a NaN row and an Inf column. Where the kernel does not
// run (no sm_90a code, or not compute capability 9.0) ozaki_14 runs cuBLASLt's and says why.
TEST(Ozaki, OwnProductsGiveTheBitsOfCublasLt) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  const std::string refusal = ozaki::residue_products_refusal();
  const GemmShape shapes[] = {{257, 700, 300}, {130, 513, 1029}, {1000, 260, 8200}};
  for (const GemmShape& shape : shapes)
    for (const Op op : {Op::N, Op::T}) {
      GemmProblem p = make_problem(shape.with_ops(op, op), 0.75, 0.5, choose_seed());
      double& a_nan = op == Op::N ? p.A(7, 2) : p.A(2, 7);  // op(A)(7, 2)
      double& b_inf = op == Op::N ? p.B(3, 200) : p.B(200, 3);  // op(B)(3, 200)
      a_nan = std::nan("");
      b_inf = std::numeric_limits<double>::infinity();
      const Eigen::MatrixXd lt = device_result("ozaki_14_cublaslt", p, ctx);
      const Eigen::MatrixXd own = device_result("ozaki_14", p, ctx);
      if (!refusal.empty()) {
        EXPECT_EQ(ctx.notes()["ozaki_own_products"], "not run: " + refusal);
      } else {
        EXPECT_NE(ctx.notes()["ozaki_products"].find("residue_products"), std::string::npos)
            << ctx.notes()["ozaki_products"];
      }
      long differ = 0;
      for (int j = 0; j < p.shape.N; ++j)
        for (int i = 0; i < p.shape.M; ++i) {
          const double x = own(i, j), y = lt(i, j);
          if (std::isnan(x) != std::isnan(y) || (!std::isnan(x) && x != y))
            if (differ++ < 5) ADD_FAILURE() << shape.M << " x " << shape.N << " x " << shape.K << " C(" << i << ", " << j
                                            << "): " << x << " against cuBLASLt's " << y;
        }
      EXPECT_EQ(differ, 0);
    }
}

// Rows and columns scaled by powers of two far apart: each row's own exponent keeps every element accurate.
TEST(Ozaki, RowsAndColumnsOfVeryDifferentScale) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  GemmProblem p = make_problem({257, 130, 520}, -1.5, 0.25, choose_seed());
  for (int i = 0; i < p.shape.M; ++i) p.A.row(i) *= std::ldexp(1.0, (i % 7 - 3) * 150);
  for (int j = 0; j < p.shape.N; ++j) p.B.col(j) *= std::ldexp(1.0, (j % 5 - 2) * 100);
  for (const char* v : {"ozaki_14", "ozaki_16", "ozaki_14_accurate"}) {
    const GemmCheck c = validate(p, device_result(v, p, ctx));
    EXPECT_TRUE(c.ok) << v << ": " << c.report;
  }
}

// The device's rho bins of one operand (the ozaki_rho_bins note: "largest rho:rows" per bin, A's, then B's after
// " |") against the host's rows: every counted row in one bin, each bin's rows and largest rho as the host has
// them, except that a row whose rho lies within 1e-9 of a bin's edge may fall on either side of it.
void expect_bins_match(const std::string& noted, bool b_side, const std::vector<std::pair<double, double>>& rows,
                       const char* what) {
  std::istringstream in(noted.substr(b_side ? noted.find('|') + 1 : 0,
                                     b_side ? std::string::npos : noted.find('|')));
  std::vector<double> count(kRhoBins, 0), rho(kRhoBins, 0), slack(kRhoBins, 0);
  std::string item;
  double total = 0;
  while (in >> item) {
    double r = 0, c = 0;
    ASSERT_EQ(std::sscanf(item.c_str(), "%lf:%lf", &r, &c), 2) << what << ": " << noted;
    count[rho_bin(r)] += c;
    rho[rho_bin(r)] = std::max(rho[rho_bin(r)], r);
    total += c;
  }
  EXPECT_EQ(total, static_cast<double>(rows.size())) << what << ": every counted row in one bin: " << noted;
  std::vector<double> host_count(kRhoBins, 0), host_rho(kRhoBins, 0);
  for (const auto& [r, t] : rows) {
    const int b = rho_bin(r);
    host_count[b] += 1;
    host_rho[b] = std::max(host_rho[b], r);
    if (rho_bin(r * (1 + 1e-9)) != b || rho_bin(r * (1 - 1e-9)) != b) slack[b] += 1;  // near an edge
  }
  for (int b = 0; b < kRhoBins; ++b) {
    const double near = slack[b] + (b > 0 ? slack[b - 1] : 0) + (b + 1 < kRhoBins ? slack[b + 1] : 0);
    EXPECT_LE(std::abs(count[b] - host_count[b]), near) << what << ", bin " << b << ": " << noted;
    if (near == 0 && host_count[b] > 0) {
      EXPECT_NEAR(rho[b], host_rho[b], 1e-5 * host_rho[b]) << what << ", bin " << b;
    }
  }
}

// The statistics the rule decides from (the launch's ozaki_inputs and ozaki_rho_bins notes) against the host's: for
// three spreads of magnitude, with one row of A scaled by 2^300 (measured), one column of B by 2^-600 (its squares
// underflow: it keeps the bound) and a zero column of B (not counted).
TEST(Ozaki, MeasuresTheSpreadOfItsInputs) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  for (const char* dist : {"uniform", "exp:0.5", "exp:1"}) {
    GemmProblem p = make_problem({300, 200, 1100}, 1.0, 0.0, choose_seed(), parse_operands(dist));
    p.A.row(7) *= std::ldexp(1.0, 300);
    p.B.col(11) *= std::ldexp(1.0, -600);
    p.B.col(5).setZero();
    for (const bool norm : {true, false}) {  // ozaki_14 scales by the norms, accurate scaling by the largest magnitudes
      const char* v = norm ? "ozaki_14" : "ozaki_14_accurate";
      const Scaling scaling = norm ? Scaling::kNormExact : Scaling::kLargest;
      device_result(v, p, ctx);
      ASSERT_TRUE(ctx.notes().count("ozaki_inputs")) << dist << ", " << v;
      const std::string noted = ctx.notes().at("ozaki_inputs");
      double d[6] = {};
      ASSERT_EQ(std::sscanf(noted.c_str(), "rho_a=%lf rho_b=%lf tau_a=%lf tau_b=%lf", &d[0], &d[1], &d[2], &d[3]), 4)
          << noted;
      std::vector<std::pair<double, double>> rows_a, rows_b;  // each counted row's rho and tau, for the bins below
      const HostStats a = host_rho_tau(p.A, scaling, &rows_a), b = host_rho_tau(p.B.transpose(), scaling, &rows_b);
      std::vector<double> host = {a.rho, b.rho, a.tau, b.tau};
      if (norm) {
        const std::size_t at = noted.find("rho_a=", 1);
        ASSERT_NE(at, std::string::npos) << noted;
        ASSERT_EQ(std::sscanf(noted.c_str() + at, "rho_a=%lf rho_b=%lf", &d[4], &d[5]), 2) << noted;
        host.push_back(a.spread);
        host.push_back(b.spread);
        // every distribution's rows sit below their largest magnitudes' scale, uniform data's too: its root mean
        // square, 0.58 of the largest magnitude, shares that magnitude's power of two, and only the factor lowers it
        EXPECT_LT(a.rho, 0.9 * a.spread) << dist << ": the rows of A scaled below their largest magnitudes";
      }
      for (std::size_t t = 0; t < host.size(); ++t)
        EXPECT_NEAR(d[t], host[t], 1e-5 * host[t]) << dist << ", " << v << ": " << noted << " (slot " << t << ")";
      EXPECT_LT(a.tau, std::sqrt(a.spread) * 0.99) << dist << ": tau measured, not the bound";
      ASSERT_TRUE(ctx.notes().count("ozaki_rho_bins")) << dist;
      EXPECT_EQ(rows_b.size(), 199u) << "the zero column is not counted";
      expect_bins_match(ctx.notes().at("ozaki_rho_bins"), false, rows_a, dist);
      expect_bins_match(ctx.notes().at("ozaki_rho_bins"), true, rows_b, dist);
    }
  }
}

// Bitwise the same run to run, as the registry declares (deterministic): the residues and the INT8 products are exact,
// the recombination has no atomics, and the statistics take maxima and add each row's sums in k order
// (sum_slots_kernel; docs/gemm-notes.md, step 67), so C and the statistics themselves repeat. Five launches each of
// ozaki_14 (norm scaling) and ozaki_14_accurate (the largest magnitudes, then the coarse product's shifts) on PHI 1
// data, with a launch on other data between them (other scratch contents, other decisions remembered).
TEST(Ozaki, RepeatedLaunchesGiveTheSameBits) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  const GemmProblem p = make_problem({700, 500, 4100}, 1.0, 0.0, choose_seed(), parse_operands("exp:1"));
  const GemmProblem other = make_problem({600, 700, 3000}, 1.0, 0.0, choose_seed(), parse_operands("exp:0.5"));
  for (const char* v : {"ozaki_14", "ozaki_14_accurate"}) {
    const Eigen::MatrixXd first = device_result(v, p, ctx);
    const std::string inputs = ctx.notes().at("ozaki_inputs"), bins = ctx.notes().at("ozaki_rho_bins");
    for (int again = 0; again < 4; ++again) {
      device_result(v, other, ctx);
      const Eigen::MatrixXd c = device_result(v, p, ctx);
      long differ = 0;
      for (Eigen::Index i = 0; i < c.size(); ++i)
        if (std::memcmp(&c.data()[i], &first.data()[i], sizeof(double)) != 0 && differ++ < 3)
          ADD_FAILURE() << v << ", element " << i << ": " << c.data()[i] << " against " << first.data()[i];
      EXPECT_EQ(differ, 0) << v << ", launch " << again + 2;
      // rho and tau to 17 digits: the rows' sums bit for bit (sums added in the order the blocks ran would differ
      // in their last bits from launch to launch)
      EXPECT_EQ(ctx.notes().at("ozaki_inputs"), inputs) << v << ", launch " << again + 2;
      EXPECT_EQ(ctx.notes().at("ozaki_rho_bins"), bins) << v << ", launch " << again + 2;
    }
  }
}

// The launch's phases, timed by the context's marks: the four of an emulated product in order, each taking time.
TEST(Ozaki, MarksItsPhases) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  const GemmProblem p = make_problem({512, 384, 640}, 1.0, 0.0, choose_seed());
  ctx.time_phases(true);
  const Eigen::MatrixXd c = device_result("ozaki_14", p, ctx);
  const auto phases = ctx.phase_ms();
  EXPECT_TRUE(validate(p, c).ok);
  ASSERT_EQ(phases.size(), 4u);
  const char* names[] = {"scaling", "residues", "int8_products", "recombination"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(phases[i].first, names[i]);
    EXPECT_GT(phases[i].second, 0.0) << names[i];
  }
  ctx.time_phases(false);
  device_result("ozaki_14", p, ctx);
  EXPECT_TRUE(ctx.phase_ms().empty()) << "no marks while phase timing is off";
}

// The speculation (launch() in ozaki.cu): a launch on operands that a launch before decided for enqueues that
// decision's residues before it reads its own statistics back, keeps them where its own decision has the same count
// and split, and computes them again where not. One set of device buffers holds p1's data twice (the second launch
// keeps), then p2's, whose split differs by a few bits (not kept), then p2's again (kept); every result passes
// validation and has the bits of a launch on buffers of its own.
TEST(Ozaki, SpeculatedResiduesAreKeptOnlyForTheSameDecision) {
  KS_REQUIRE_GPU();
  Stream stream;
  ExecContext ctx(stream.get());
  const GemmShape shape{333, 444, 1100};
  // With exact norm scaling every measured row's rho sits at its tau (within 2^-19), which leaves the split at S / 2
  // whatever the data's scale. A row whose largest magnitude lies below 2^-400 keeps its largest magnitude's scale and
  // tau's bound sqrt(rho) (the statistics do not measure it): such a row of wide spread (rho about 32, one element in
  // 16 at full size; a fixed count runs native above kMaxFixedRho = 64) in p1's A leans p1's split by about
  // log2 sqrt(32) = 2.5 bits to A's side, and a column in p2's B p2's as far to B's.
  GemmProblem p1 = make_problem(shape, 1.0, 0.0, choose_seed());
  GemmProblem p2 = make_problem(shape, 1.0, 0.0, choose_seed());
  auto widen = [](auto&& line) {
    for (Eigen::Index k = 0; k < line.size(); ++k) line(k) *= k % 16 == 0 ? 0x1p-450 : 0x1p-460;
  };
  widen(p1.A.row(3));
  widen(p2.B.col(5));
  auto qa_of = [&](const GemmProblem& p) {
    return split_bits(host_stats(p.A, p.B, Scaling::kNormExact), scale_bits(14, shape.K)).first;
  };
  ASSERT_GE(qa_of(p1) - qa_of(p2), 2) << "the two problems must decide different splits";
  const GemmVariant& v = *registry().find("ozaki_14");
  DeviceBuffer<double> A(p1.A.size()), B(p1.B.size()), C(static_cast<std::size_t>(shape.M) * shape.N);
  const GemmArgs args{shape.M, shape.N, shape.K, 1.0, A.data(), shape.M, B.data(), shape.K, 0.0, C.data(), shape.M};
  struct Step {
    const GemmProblem* p;
    const char* speculated;  // the ozaki_speculated note's start, or "" where the launch has none
  };
  const Step steps[] = {{&p1, ""}, {&p1, "kept"}, {&p2, "not kept"}, {&p2, "kept"}};
  for (const Step& step : steps) {
    const GemmProblem& p = *step.p;
    CUDA_CHECK(cudaMemcpy(A.data(), p.A.data(), A.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(B.data(), p.B.data(), B.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(C.data(), 0xff, C.bytes()));  // NaN
    run(v, args, ctx);
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    const std::string note = ctx.notes().count("ozaki_speculated") ? ctx.notes().at("ozaki_speculated") : "";
    EXPECT_EQ(note.rfind(step.speculated, 0), 0u) << "expected \"" << step.speculated << "\", noted \"" << note << '"';
    if (std::string(step.speculated).empty()) {
      EXPECT_EQ(note, "");
    }
    Eigen::MatrixXd c(shape.M, shape.N);
    CUDA_CHECK(cudaMemcpy(c.data(), C.data(), C.bytes(), cudaMemcpyDeviceToHost));
    const GemmCheck check = validate(p, c);
    EXPECT_TRUE(check.ok) << check.report;
    const Eigen::MatrixXd fresh = device_result("ozaki_14", p, ctx);
    long differ = 0;
    for (Eigen::Index i = 0; i < c.size(); ++i)
      if (c.data()[i] != fresh.data()[i] && differ++ < 5)
        ADD_FAILURE() << "element " << i << ": " << c.data()[i] << " against " << fresh.data()[i];
    EXPECT_EQ(differ, 0) << step.speculated;
  }
}

}  // namespace
}  // namespace ks::gemm::ozaki

// ozaki: DGEMM emulated on the INT8 tensor cores by the Ozaki scheme II (Ozaki, Uchino and Imamura, 2025:
// "Ozaki Scheme II: A GEMM-oriented emulation of floating-point matrix multiplication using an integer modular
// technique"). The host side of the variant: the moduli, the Chinese-remainder constants, the scaling and the
// rule that picks the number of moduli; all of it testable without a GPU.
//
// The scheme. Row i of A is scaled by 2^(qa - e_i), where 2^e_i is the smallest power of two above the row's
// largest magnitude, and rounded to the nearest integer A'_ik (|A'_ik| <= 2^qa); column j of B likewise with
// f_j and qb. The integer product X = A' B' is exact as long as |X| < P / 2, P the product of the moduli:
// K 2^(qa + qb) < P / 2 fixes S = qa + qb. X is never formed: per modulus m_l, the residues of A' and B'
// (int8, symmetric) are multiplied by one INT8 GEMM with INT32 accumulation (exact for K <= 2^17), and the
// Chinese remainder theorem recombines the residues of X into X itself: X = sum_l w_l (X mod m_l) mod P, with
// w_l = (P / m_l) ((P / m_l)^-1 mod m_l), the sum held exactly in 40-bit pieces of FP64 (Crt below). Then
// C_ij = alpha 2^(e_i + f_j - qa - qb) X_ij + beta C_ij.
//
// The error is the rounding: each A'_ik is off by at most half a unit, 2^(e_i - qa - 1) of a_ik, so
// |C - C_exact|_ij <= 2^-qa-1 2^e_i |b_j|_1 + 2^-qb-1 2^f_j |a_i|_1 + K 2^(e_i + f_j - S - 2) (the norm-wise
// bound of the "fast" scaling). The rule estimates the largest error relative to eps (|A||B|)_ij from four
// statistics of the inputs (rho and tau below), splits S between A and B where it lowers that estimate, and
// takes the fewest moduli that keep it under a target; where none up to kMaxModuli can, or where the product
// is too small to gain (the INT8 products then cost more than the FP64 one), it runs native DGEMM instead and
// says so.
//
// Norm scaling (the rule's, and every variant's but ozaki_max_scaling and accurate scaling's): 2^e_i is instead
// the smallest power of two at or above the row's root mean square |a_i|_2 / sqrt(K) (with a margin of
// kNormMargin; never above the largest magnitude's power, norm_exponent), so that |A'_i|_2 <= 2^qa sqrt(K) and,
// by Cauchy and Schwarz, |X_ij| <= |A'_i|_2 |B'_j|_2 <= K 2^S < P / 2: the same S, with each row's rounding unit
// 2^(e_i - qa) smaller by its largest element's distance above its root mean square, which is where spread
// magnitudes lose their bits (the 2-norm scaling GEMMul8's fast mode computes, which it credits to Kawakami and
// Takahashi, 2026). The elements above the root mean square then exceed 2^qa, by at most 2^kNormMaxGap (e_i is
// kept within kNormMaxGap of the largest magnitude's exponent), so the split keeps qa <= 62 - kNormMaxGap for the
// residues' 64-bit intermediate, whatever the data (a decision remembered for a CUDA graph meets new data on every
// replay), and qa >= kNormMinBits, where each element's rounding (half a unit) fits in the margin.
//
// Exact norm scaling (the rule's, and every variant's but ozaki_norm_pow2, ozaki_max_scaling and accurate
// scaling's): row i is further multiplied by m_i in [1, 2] (norm_factor), so that its root mean square lands just
// under 2^e_i rather than anywhere in (2^(e_i - 1), 2^e_i]: each row's rounding unit shrinks by m_i (on uniform
// data, whose root mean square is 0.58 of its largest magnitude, by 1.73; by 1.4 on average elsewhere) at the
// same S. m_i has kFactorBits bits, so that m_i n_j is exact; the product a_ik 2^(qa - e_i) m_i is rounded to the
// nearest integer exactly (round_scaled), and the recombination divides X_ij by m_i n_j (one more rounding of C, a
// half unit of C_ij, which is far below the truncation's error wherever |C_ij| is below (|A||B|)_ij).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace ks::gemm::ozaki {

constexpr int kMinModuli = 12;
constexpr int kMaxModuli = 20;
constexpr int kLimbs = 6;          // 32-bit limbs of the host's exact CRT constants: P < 2^157 < 2^192
constexpr int kPieceBits = 40;     // the recombination's pieces (Crt below)
constexpr int kMaxPieces = 4;
constexpr int kMaxK = 1 << 17;     // K 128^2 < 2^31: the INT32 accumulation of one INT8 GEMM is exact

// Norm scaling (above): the margin on the root mean square and the fewest bits a side then needs. With
// rms (1 + kNormMargin) <= 2^e (the statistics' sum of squares is within 2^-40 of the exact one for K <= 2^17),
// |a_i|_2 <= 2^e sqrt(K) (1 - 2^-21); the rounded row A'_i = a_i 2^(qa - e) + r (|r_k| <= 1/2, or 1/2 + 2^-54 with
// exact factors: round_scaled) then has |A'_i|_2 <= 2^qa sqrt(K) (1 - 2^-21) + sqrt(K) (1/2 + 2^-54) <= 2^qa sqrt(K)
// where qa >= 20.
constexpr double kNormMargin = 0x1p-20;
constexpr int kNormMinBits = 21;
// How far below the largest magnitude's exponent a row's norm exponent may sit: the largest element of a row sits
// at most sqrt(K) <= 2^8.5 above its root mean square, and a gap of 8 keeps PHI 1 data's (about 5) whole.
constexpr int kNormMaxGap = 8;
// The norm scaling's exponent of a row whose root mean square is rms (> 0) and whose largest magnitude lies
// below 2^e: the smallest power of two at or above rms (1 + kNormMargin), at most e (where it would exceed e,
// |A'_ik| <= 2^qa holds element by element, which bounds the norm as well) and at least e - kNormMaxGap.
__host__ __device__ inline int norm_exponent(double rms, int e) {
  int ex = 0;
  frexp(rms * (1 + kNormMargin), &ex);  // rms (1 + margin) = f 2^ex, f in [1/2, 1): below 2^ex
  return ex > e ? e : ex < e - kNormMaxGap ? e - kNormMaxGap : ex;
}

// Exact norm scaling's factor of a row (above): the largest m with kFactorBits significant bits and
// rms m (1 + kNormMargin) <= 2^e, in [1, 2]; 1 where rms (1 + kNormMargin) lies above 2^e (norm_exponent capped e
// at the largest magnitude's exponent emax: the rows' elements are then bounded one by one) or where e sits
// kNormMaxGap below emax (the row's elements then reach the residues' bound, 2^(qa + kNormMaxGap), already). Elsewhere
// emax - e <= kNormMaxGap - 1, so the largest element, below 2^(qa + emax - e) m <= 2^(qa + kNormMaxGap), keeps
// that bound. rms (1 + kNormMargin) m <= 2^e is the bound norm_exponent gives at m = 1, so the margin's argument
// (kNormMinBits) holds unchanged.
constexpr int kFactorBits = 20;
__host__ __device__ inline double norm_factor(double rms, int e, int emax) {
  if (emax - e >= kNormMaxGap) return 1;
  const double x = ldexp(1.0, e) / (rms * (1 + kNormMargin));  // in (1, 2] where e is rms's own exponent
  if (!(x > 1)) return 1;
  return fmin(2.0, ldexp(floor(ldexp(x, kFactorBits - 1)), 1 - kFactorBits));
}

// The integer nearest y m for |y m| <= 2^62 (y = a_ik 2^(q - e_i), exact; m a row's factor), within 1/2 + 2^-54: y m
// = p + r exactly (p the rounded product, r its error by an FMA), so y m = n + ((p - n) + r) for p's nearest integer
// n, and the integer nearest that remainder is added: from 2^53 on p is n and the remainder r exactly (up to half
// p's unit); below, it is -1, 0 or 1, and its sum rounds only where p's fraction is a half and r, of the other sign,
// is below 2^-54 (the sum then reads as the half). Where m = 1 it is the nearest integer to y, as the power-of-two
// scalings round.
__host__ __device__ inline long long round_scaled(double y, double m) {
  const double p = y * m, r = fma(y, m, -p);
#ifdef __CUDA_ARCH__
  const long long n = __double2ll_rn(p);
  return n + __double2ll_rn((p - static_cast<double>(n)) + r);
#else
  const long long n = std::llrint(p);
  return n + std::llrint((p - static_cast<double>(n)) + r);
#endif
}

// The moduli: pairwise coprime, the largest at most 256, so that a residue fits int8 in [-128, 127].
__host__ __device__ constexpr int modulus(int l) {
  constexpr int m[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227,
                                 223, 217, 211, 199, 197, 193, 191, 181, 179, 173};
  return m[l];
}

// The residue of an integer |v| <= 2^62 modulo m_l without a 64-bit remainder. With v = v2 2^42 + v1 2^21 + v0
// (v2 in [-2^20, 2^20], v1 and v0 in [0, 2^21)) and w = v2 + 2^20 >= 0,
//   y = w (2^42 mod m) + v1 (2^21 mod m) + v0 + c,   c = (128 - 2^62 mod m) mod m,
// is congruent to v + 128 modulo m, non-negative and below 2^30 + 2^22; y mod m = y - m floor(y / m), with
// floor(y / m) = (y magic) >> (32 + shift) exact for every y < 2^31 (magic = ceil(2^(32 + shift) / m),
// 2^shift < m <= 2^(shift + 1): magic m = 2^(32 + shift) + d with d < m, and y d < 2^(32 + shift)). The
// residue of v in [-128, m - 128), as int8, is then the byte (y mod m) XOR 0x80.
struct ResidueConstants {
  unsigned c42, c21, c, magic;
  int shift;
};
__host__ __device__ constexpr ResidueConstants residue_constants(int l) {
  const unsigned m = static_cast<unsigned>(modulus(l));
  // a chain of conditionals rather than a loop, so that the device code folds it for a constant l
  const int shift = m > 128 ? 7 : m > 64 ? 6 : m > 32 ? 5 : m > 16 ? 4 : m > 8 ? 3 : m > 4 ? 2 : m > 2 ? 1 : 0;
  const unsigned m62 = static_cast<unsigned>((1ull << 62) % m);
  return {static_cast<unsigned>((1ull << 42) % m), static_cast<unsigned>((1ull << 21) % m), (128 + m - m62) % m,
          static_cast<unsigned>(((1ull << (32 + shift)) + m - 1) / m), shift};
}
// v's three pieces, w = v2 + 2^20 first.
__host__ __device__ constexpr void residue_pieces(long long v, unsigned& w, unsigned& v1, unsigned& v0) {
  w = static_cast<unsigned>(static_cast<int>(v >> 42) + (1 << 20));
  v1 = static_cast<unsigned>(v >> 21) & 0x1FFFFFu;
  v0 = static_cast<unsigned>(v) & 0x1FFFFFu;
}
// y mod m_l for y < 2^31, by the multiply-high above.
__host__ __device__ constexpr unsigned reduce(unsigned y, int l) {
  const ResidueConstants k = residue_constants(l);
#ifdef __CUDA_ARCH__
  const unsigned q = __umulhi(y, k.magic) >> k.shift;
#else
  const unsigned q = static_cast<unsigned>((static_cast<unsigned long long>(y) * k.magic) >> 32) >> k.shift;
#endif
  return y - q * static_cast<unsigned>(modulus(l));
}
// (v + 128) mod m_l in [0, m_l), from the pieces.
__host__ __device__ constexpr unsigned residue_plus_128(unsigned w, unsigned v1, unsigned v0, int l) {
  const ResidueConstants k = residue_constants(l);
  return reduce(w * k.c42 + v1 * k.c21 + v0 + k.c, l);
}

// The same residue on the FP64 units, for an odd modulus (every one but 256). With v = h 2^32 + u (h = v >> 32 in
// [-2^30, 2^30], u in [0, 2^32)), y = h (2^32 mod m) + u is congruent to v, an integer below 2^38.1 in magnitude, so
// one FMA gives it exactly; n = y (1/m) + 1.5 2^52, rounded once by an FMA, is round(y / m) + 1.5 2^52, because
// y (1/m) lies within 2^-22 of y / m, whose fraction j / m (m odd) stays at least 1/(2m) > 2^-9 away from a half;
// r = y - round(y / m) m, in [-(m - 1)/2, (m - 1)/2], is then exact, and the double 1.5 2^52 + r holds r in the
// two's complement of its low word, whose low byte is r as int8. Five FP64 operations a modulus where the integer
// form above costs four multiplications on the integer multiplier (one a multiply-high at half its rate), an add
// and a shift: where FP64 runs at half the FP32 rate, the residues kernel gives half of each thread's values to each
// form, so that both units work (docs/gemm-notes.md, step 70).
constexpr double kRoundMagic = 0x1.8p52;
// a b rounded once to the nearest integer (|a b| below 2^51): the FMA rounds a b + 1.5 2^52 to an integer, and taking
// 1.5 2^52 away again is exact.
__host__ __device__ inline double rounded_product(double a, double b) { return fma(a, b, kRoundMagic) - kRoundMagic; }
struct Fp64ResidueConstants {
  double c32, inv_m, m;
};
__host__ __device__ constexpr Fp64ResidueConstants fp64_residue_constants(int l) {
  const int m = modulus(l);
  return {static_cast<double>((1ull << 32) % static_cast<unsigned>(m)), 1.0 / m, static_cast<double>(m)};
}
// 1.5 2^52 + (v's residue), from v's halves h and u as doubles (exact).
__host__ __device__ inline double fp64_residue(double h, double u, const Fp64ResidueConstants& k) {
  const double y = fma(h, k.c32, u);
  const double n = rounded_product(y, k.inv_m);
  return fma(-n, k.m, y) + kRoundMagic;
}

// An INT32 product's residue in five operations (the products' epilogue, int8_wgmma.cu): with x = hi 2^21 + lo
// (hi = x >> 21 in [-1024, 1024), lo in [0, 2^21)),
//   y = hi (c21 - 2^21) + x + offset = hi c21 + lo + offset,   offset = 1024 c21 + (-2^31 mod m),
// is congruent to x modulo m and in [0, 2^22); floor(y / m) = umulhi(y, magic0) with magic0 = ceil(2^32 / m)
// exactly, since magic0 m = 2^32 + e with e < m <= 256 and y e < 2^32. No shift follows the multiply-high and the
// last multiply-add takes -m, so that the compiler's sequence is one shift, one add and three multiply-adds.
struct ProductResidueConstants {
  int fold;           // c21 - 2^21
  unsigned offset;    // 1024 c21 + (-2^31 mod m)
  unsigned magic0;    // ceil(2^32 / m)
  int neg_m;          // -m
};
__host__ __device__ constexpr ProductResidueConstants product_residue_constants(int l) {
  const unsigned m = static_cast<unsigned>(modulus(l)), c21 = (1u << 21) % m;
  return {static_cast<int>(c21) - (1 << 21), 1024u * c21 + (m - (1u << 31) % m) % m,
          static_cast<unsigned>(((1ull << 32) + m - 1) / m), -static_cast<int>(m)};
}
// y above for an INT32 x. Unsigned arithmetic: the terms wrap, their sum is y exactly.
__host__ __device__ constexpr unsigned product_residue_fold(int x, const ProductResidueConstants& k) {
  return static_cast<unsigned>(x >> 21) * static_cast<unsigned>(k.fold) + static_cast<unsigned>(x) + k.offset;
}
// x mod m_l in [0, m_l) for every INT32 x.
__host__ __device__ constexpr unsigned product_residue(int x, const ProductResidueConstants& k) {
  const unsigned y = product_residue_fold(x, k);
#ifdef __CUDA_ARCH__
  const unsigned q = __umulhi(y, k.magic0);
#else
  const unsigned q = static_cast<unsigned>((static_cast<unsigned long long>(y) * k.magic0) >> 32);
#endif
  return y + q * static_cast<unsigned>(k.neg_m);
}

// Everything the recombination needs for n moduli: w_l and P exactly in 32-bit limbs (least significant first),
// and the same in 40-bit pieces as doubles, w_l = sum_t wd[l][t] 2^(40 t), which the device sums in FP64: with
// r_l < 256 each r_l wd[l][t] is below 2^48 and the sum over at most 20 moduli below 2^53, so every piece's sum
// is exact (the top piece's too: w_l < P < 2^(40 pieces(n))).
struct Crt {
  int n = 0;
  std::uint32_t w[kMaxModuli][kLimbs] = {};
  std::uint32_t P[kLimbs] = {};
  double wd[kMaxModuli][kMaxPieces] = {};
  double pd[kMaxPieces] = {};
  double log2_P = 0;  // rounded down
  double inv_P = 0;   // 1 / P, rounded
};
// The 40-bit pieces the recombination keeps for n moduli: P < 256^n <= 2^(40 pieces).
__host__ __device__ constexpr int pieces(int n) { return n <= 15 ? 3 : 4; }
const Crt& crt(int n);  // n in [1, kMaxModuli]; computed once per n

// The scaling's total S = qa + qb for n moduli and depth K: the largest with K 2^S < P / 2.
int scale_bits(int n, int K);

// How rho spreads over an operand's rows: bin b holds the rows with rho in [2^(b/2), 2^((b+1)/2)) (half-octaves; the
// last bin everything above), its count and the largest rho and tau among them.
constexpr int kRhoBins = 40;  // rho <= 2K < 2^18 wherever emulation can run: 36 bins used
__host__ __device__ inline int rho_bin(double rho) {
  int ex = 0;
  const double f = frexp(rho, &ex);  // rho = f 2^ex, f in [1/2, 1): log2 rho in [ex - 1, ex)
  const int b = 2 * (ex - 1) + (f >= 0.70710678118654752 ? 1 : 0);
  return b < 0 ? 0 : b >= kRhoBins ? kRhoBins - 1 : b;
}
struct RhoBins {
  double count[kRhoBins] = {};
  double rho[kRhoBins] = {};
  double tau[kRhoBins] = {};
};

// How the rows of A and columns of B are scaled (above): at their norms with exact factors (the rule's), at their
// norms by powers of two, or by their largest magnitudes (as accurate scaling does, before its shifts).
enum class Scaling { kNormExact, kNormPow2, kLargest };

// Statistics of the inputs, from the device: over the rows of A (columns of B) that are finite and not zero,
// rho = max 2^e / mean |x| (>= 1: how far the row's largest exponent sits above its typical element) and
// tau = max rms(x) / mean |x| (>= 1: the spread of the magnitudes; measured from the rows' sums of squares where a
// row's largest magnitude lies in [2^-400, 2^400], else that row's bound sqrt(rho): rms^2 <= max |x| mean |x|);
// and, where the device binned them, how rho and tau spread over the rows (bins_a) and columns (bins_b).
// With norm scaling (norm) rho is taken at the rows' norm exponents (2^e_i / mean |x|, e_i from norm_exponent; with
// exact norm scaling 2^e_i / (m_i mean |x|), m_i from norm_factor) and binned by that; spread keeps the rho of the
// largest magnitudes (the data's own spread, which decides whether a fixed count is trusted).
struct Stats {
  double rho_a = 1, tau_a = 1, rho_b = 1, tau_b = 1;
  RhoBins bins_a, bins_b;  // all counts zero: not binned
  double spread_a = 0, spread_b = 0;  // 0: rho's (the largest magnitudes' scaling)
  bool norm = false;                  // norm scaling: the split's bounds (split_bits)
  Stats() = default;
  Stats(double ra, double ta, double rb, double tb) : rho_a(ra), tau_a(ta), rho_b(rb), tau_b(tb) {}
  bool binned() const;
  double largest_spread() const {
    return std::max(spread_a > 0 ? spread_a : rho_a, spread_b > 0 ? spread_b : rho_b);
  }
};

// The estimated max over C of |C - C_exact|_ij / (u (|A||B|)_ij) with qa and qb scaling bits, u = 2^-53 (the unit
// roundoff, half of the eps = 2^-52 that kbench's max_error_eps_ab and the tests' error ratios count in). The
// first-order error of element (i, j) is a sum of K terms of random sign, each a rounding (uniform in half a unit:
// variance 1/12 unit^2) times an element of the other operand: its standard deviation against (|A||B|)_ij, of about K
// mean|a_i| mean|b_j|, is sqrt((rho_a tau_b 2^(53 - qa))^2 + (rho_b tau_a 2^(53 - qb))^2) / sqrt(12 K) in units of u;
// the largest of M N such sums lies within about z = sqrt(2 ln(M N)) deviations (the level that one of the M N sums is
// expected to exceed). Where the statistics are binned, the same level is taken over the pairs of bins instead of the
// worst row against the worst column: the t with sum_pq n_p n_q exp(-t^2 / (2 s_pq^2)) = 1, s_pq the deviation above
// for the largest rho and tau of A's bin p and B's bin q, and at least sqrt(2 ln 2) deviations of the worst pair, as z
// is. It is never above the unbinned estimate, and sharper where a few rows hold the extreme elements (at PHI 0.5 to 1,
// 1.3-2x; docs/gemm-notes.md, step 42). The second-order term is bounded outright: 2^(53 - qa - qb) rho_a rho_b / 4.
double predicted_ratio(const Stats& s, int M, int N, int K, int qa, int qb);

// Accurate scaling (the paper's second mode: one extra, coarse INT8 product). The bound K 2^S above assumes
// every |A'_ik B'_kj| at its largest; the coarse product measures it instead. With u_ik = ceil(|a_ik| 2^(6 - e_i))
// and v_kj likewise (integers in [0, 64]), W = U V (one INT8 GEMM, exact) bounds
//   |X_ij| <= sum_k (u_ik 2^(qa + s_i - 6) + 1/2)(v_kj 2^(qb + t_j - 6) + 1/2)
//          <= 2^(S + s_i + t_j - 12) W_ij + K (2^(qa + s_i - 1) + 2^(qb + t_j - 1) + 1/4)
// for row i of A scaled by 2^s_i more and column j of B by 2^t_j more. With 2^(s_i + t_j) W_ij <= 4032 K
// (4096 K (1 - 2^-6)), s_i <= qb - 8 and t_j <= qa - 8, this is below K 2^S < P / 2: X stays exact (where
// s_i = t_j = 0 the plain bound |A'| <= 2^qa, |B'| <= 2^qb holds whatever W_ij). The device takes s_i as the
// largest with 2^s_i max_j W_ij <= 4032 K, then t_j the largest with 2^t_j max_i 2^s_i W_ij <= 4032 K, both at
// most kShiftCap; lowering either later keeps the bound. Rows and columns whose magnitudes sit below their
// largest element gain the most (on uniform data about one bit, at PHI 1 several). The split of S decides how
// much of each shift fits (shift_caps); the device reports, for every cap c, the largest rho_i 2^-min(s_i, c)
// (the rows' error scales by 2^-s_i), which the rule uses in place of rho; tau stays that of the data.
constexpr int kCoarseBits = 6;
constexpr int kShiftCap = 8;
constexpr int kCoarseBudget = 4032;  // per unit of K: 4096 (1 - 2^-6)

// The largest shift s <= kShiftCap with 2^s w <= kCoarseBudget K (w a row's or column's largest coarse value;
// kShiftCap where it is zero).
__host__ __device__ constexpr int coarse_shift(unsigned long long w, int K) {
  const unsigned long long budget = static_cast<unsigned long long>(kCoarseBudget) * static_cast<unsigned>(K);
  int s = 0;
  while (s < kShiftCap && (w << (s + 1)) <= budget) ++s;
  return s;
}

// The most of the shifts a split leaves room for: qa + s_i <= 62 (the residues' 64-bit intermediate) and
// s_i <= qb - 8 (the bound above); likewise for t_j.
constexpr std::pair<int, int> shift_caps(int qa, int qb) {
  auto cap = [](int q, int other) { return std::max(0, std::min({kShiftCap, 62 - q, other - 8})); };
  return {cap(qa, qb), cap(qb, qa)};
}

// What the coarse product gave: the largest rho_i 2^-min(s_i, c) over A's rows (B's columns), c = 0..kShiftCap.
struct Shifts {
  double rho_a[kShiftCap + 1] = {};
  double rho_b[kShiftCap + 1] = {};
};

// The split of S = scale_bits(n, K) between qa and qb that minimises the first-order estimate (the two terms
// equal: qa - qb = log2(rho_a tau_b / (rho_b tau_a))), each in [0, 62] (the residues' 64-bit intermediate), or with
// norm scaling in [kNormMinBits, 62 - kNormMaxGap].
std::pair<int, int> split_bits(const Stats& s, int S);

// The ratio the rule keeps under on uniform data, in units of u = 2^-53 (1.5 eps): native cuBLAS DGEMM's own largest
// sampled error there is 1.16-1.97 eps at K = 4096 to 16384 (and its largest over all of C more). The estimate above
// runs 1.1-1.35x above the largest error over C that it predicts (simulated with the device's rounding,
// docs/gemm-notes.md, step 67), so at the target ozaki's largest error over C is about 1.1-1.35 eps: at or below
// native's largest on 20,000 samples.
constexpr double kTargetRatio = 3.0;

// The target for these inputs: kTargetRatio times how much native DGEMM's own largest error grows on them against
// uniform data, at most kMaxTargetGrowth times kTargetRatio: ozaki's largest error at most native's on the same inputs.
// Native's error of element (i, j), a rounded running sum, has a standard deviation of about c tau_i tau_j eps
// (|A||B|)_ij: simulated sums in FP64 (one rounding a term, or one a 4-deep block as a tensor-core step) gave the same
// root mean square of error / (tau_i tau_j) at PHI 0, 0.5 and 1 to within 2% (docs/gemm-notes.md, step 57). The growth
// is the level that one of the M N sums is expected to exceed over the pairs of bins with s_pq = tau_p tau_q (the
// binned estimate's solve), over the same level for uniform data (every row at tau = 2 / sqrt(3)); at least 1. The
// model puts it at 1.3 at PHI 0.5 and 4-6 at PHI 1; cuBLAS's sampled errors, against uniform data's in the same
// sessions, were about 1.2-1.5x and 3-4x there (a sample of 20,000 elements seldom meets the few rows of widest tau
// that the model's level rests on), so the growth is capped at 4. Step 57 took its square root, which at PHI 1 held
// ozaki's sampled largest error 10-50 times below native's with a modulus more than this target needs (step 67). Only
// where the statistics are binned and every row's tau is at most kGrowthTauLimit (the widest row of PHI 1 operands of
// 4096-16384 rows: 2.7-5.0; of PHI 2: 46-61): beyond it a row's mean is set by a few elements, the estimate above is
// not trusted to follow the error, and native's error grew less than the model says (20-50x at PHI 2 against the
// model's 590-1170).
constexpr double kMaxTargetGrowth = 4.0;
constexpr double kGrowthTauLimit = 8.0;
double target_ratio(const Stats& s, int M, int N);

struct Decision {
  int moduli = 0;  // 0: native DGEMM
  bool accurate = false;  // the coarse product's shifts, at most cap_a and cap_b bits
  int qa = 0, qb = 0;
  int cap_a = 0, cap_b = 0;
  double predicted_ratio = 0;
  double target = kTargetRatio;  // the accuracy target the count was chosen for (target_ratio)
  std::string reason;  // why native, or the count's reason
};

// The rule: fixed_moduli > 0 takes that count (tuning variants), native only where K or the data forbid emulation: rho
// above kMaxFixedRho, or a predicted ratio above an eighth of the project's element-wise bound, kBoundFactor (K + 2)
// eps = 2 kBoundFactor (K + 2) u (the tuning variants must stay correct on every distribution, and on short dot
// products of heavy-tailed data one product can dominate (|A||B|)_ij, which the mean-based estimate does not see: at
// exp:4 and K = 131 the errors were 10^3 times the estimate). Otherwise the fewest moduli whose predicted ratio is at
// most target_ratio(), native where none is, where K is below kMinDepth (the INT32 products, 4 bytes per modulus per
// element of C, then cost more than the arithmetic they save), or where the speed model below predicts that count (or,
// from the shape alone, the count of the best-conditioned inputs) above kSpeedMargin of native's time.
constexpr int kMinDepth = 1024;
constexpr double kMaxFixedRho = 64.0;
// The speed side of the rule: emulation's time over native DGEMM's with n moduli, a model fitted to H100
// measurements (docs/gemm-notes.md, step 54: 48 points, 14 and 16 moduli, cubes 2048^3-16384^3 and twelve other
// shapes, one GPU host, the kernels of step 47; root mean square error 4.4%, largest 12%):
//   n (kSpeedInt8 + kSpeedPerModulus (1/M + 1/N + 8/K)) + kSpeedFixed (2/M + 2/N + 1/K).
// Per modulus, the INT8 product at 0.034 of native's time (about the FP64 over the INT8 tensor rate) and its
// traffic ((M + N) K bytes of residues, M N bytes of reduced products) relative to native's 2 M N K flops; once,
// the passes over A, B and C, the statistics' read-back and the latencies. The rule emulates where the model
// predicts at most kSpeedMargin of native's time: with its error and the spread between GPU hosts (2-9% at one
// size, step 46), about half of the calls it put just under 1 would run slower than native. With `accurate`,
// accurate scaling counts as kAccurateModuli more (its coarse product and passes; with 14 moduli measured 0.900x /
// 1.081x / 1.497x native at 3072^3 / 4096^3 / 8192^3 in step 46, where the model puts 16 moduli at 0.98 / 0.87 /
// 0.71 of native's time).
constexpr double kSpeedInt8 = 0.034;
constexpr double kSpeedPerModulus = 3.19;
constexpr double kSpeedFixed = 169.0;
constexpr double kSpeedMargin = 0.97;
constexpr int kAccurateModuli = 2;
double predicted_time_ratio(int M, int N, int K, int n, bool accurate = false);
// With shifts (accurate scaling), each count's split is the one with the lowest estimate given the shifts it
// leaves room for (every qa tried).
Decision decide(int M, int N, int K, const Stats& s, int fixed_moduli = 0, const Shifts* shifts = nullptr);
// The part of the rule the shape alone decides: why native whatever the data (K above 2^17; for the rule's own
// count, K below kMinDepth or a shape where even the count of the best-conditioned inputs (rho = tau = 1; plus
// kAccurateModuli with accurate scaling) is predicted slower than native), or empty where the statistics
// decide. decide() starts with it; the launch skips the statistics where it is not empty.
std::string native_by_shape(int M, int N, int K, int fixed_moduli, bool accurate = false);

// The pipeline: C in column blocks, each block's INT8 products on a priority stream and its recombination on
// the launch's stream, beside the next block's products wherever those leave an SM free. Measured on an H100
// (docs/gemm-notes.md, step 33): 2-4% faster at 16384^3 in every op combination (three A/B runs), no faster at
// 8192^3, 20% slower at 4096^3; so the rule pipelines from M, N and K of kPipelineFrom up (sizes between 8192
// and 16384 and other shapes not measured).
constexpr int kPipelineFrom = 16384;
constexpr int kPipelineBlocks = 8;
constexpr int kPipelineAlign = 256;  // block widths are multiples of it (aligned residue rows and products)
// The width of the column blocks: N itself (no pipeline) unless the rule or `always` asks for one; then N over
// kPipelineBlocks rounded up to kPipelineAlign (the last block takes what is left).
int pipeline_width(int M, int N, int K, bool always);

// Device workspace of one product with n moduli: the int8 residues of A and B and the int32 products; with
// accurate scaling one more set of each (the coarse U, V and W).
struct Workspace {
  int Kp = 0;                // K rounded up to 16 (zero residues beyond K)
  int ldp = 0;               // rows of the products and the A planes, and the products' leading dimension (M rounded up to 4)
  std::size_t a_stride = 0;  // bytes between moduli, 256-aligned
  std::size_t b_stride = 0;
  std::size_t p_stride = 0;
  std::size_t bytes = 0;     // the three arrays for n moduli (n + 1 with accurate scaling)
};
// byte_products: the products as residue_products stores them, one byte an element (a quarter of p_stride a
// modulus), else INT32 planes.
Workspace workspace(int M, int N, int K, int n, bool accurate = false, bool byte_products = false);

// n = 0: the coarse product alone (accurate scaling, before the count is known).
// Empty where the workspace fits what the device has free plus the scratch this context already holds (which
// the launch reuses); otherwise the message the launch throws: the bytes needed and free.
std::string workspace_refusal(const Workspace& w, int n, std::size_t free_bytes, std::size_t scratch_bytes);

}  // namespace ks::gemm::ozaki

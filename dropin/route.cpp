#include "dropin/route.hpp"

#include "gemm/limits.hpp"
#include "gemm/ops.hpp"

#include <algorithm>
#include <stdexcept>

namespace ks::dropin {

std::string Policy::str() const {
  switch (kind) {
    case PolicyKind::Auto: return "auto";
    case PolicyKind::Native: return "native";
    case PolicyKind::Fp64: return "fp64";
    case PolicyKind::Ozaki: return "ozaki";
    case PolicyKind::Variant: return variant;
  }
  return "?";
}

Policy parse_policy(const char* value, const std::function<unsigned(const std::string&)>& known) {
  const std::string v = value ? value : "";
  if (v.empty() || v == "auto") return {};
  if (v == "native" || v == "cublas") return {PolicyKind::Native, {}};
  if (v == "fp64") return {PolicyKind::Fp64, {}};
  if (v == "ozaki") return {PolicyKind::Ozaki, {}};
  if (v.size() <= 64)
    if (const unsigned ops = known(v)) return {PolicyKind::Variant, v, ops};
  std::string shown = v.substr(0, 64);
  for (char& ch : shown)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  throw std::invalid_argument("KS_DGEMM='" + shown + (v.size() > 64 ? "...'" : "'") +
                              " is not auto, native, fp64, ozaki or a DGEMM variant's name (kbench list)");
}

bool blas_valid(const Call& c) {
  auto op_known = [](char t) { return t == 'N' || t == 'T' || t == 'C'; };
  if (!c.handle || !op_known(c.transa) || !op_known(c.transb)) return false;
  if (c.M < 0 || c.N < 0 || c.K < 0 || c.batch < 0) return false;
  const std::int64_t a_rows = c.transa == 'N' ? c.M : c.K;
  const std::int64_t b_rows = c.transb == 'N' ? c.K : c.N;
  return c.lda >= std::max<std::int64_t>(1, a_rows) && c.ldb >= std::max<std::int64_t>(1, b_rows) &&
         c.ldc >= std::max<std::int64_t>(1, c.M);
}

namespace {
// Below the measured wins of kTmaMinSide, kTmaMinDepth, kTmaFullDepth and kTmaShallowMinArea (M N compared without
// forming it: the _64 entry points' sizes may be as large as 2^63 - 1).
bool below_measured_wins(const Call& c) {
  if (std::min(c.M, c.N) < kTmaMinSide || c.K < kTmaMinDepth) return true;
  const std::int64_t min_m = kTmaShallowMinArea / c.N + (kTmaShallowMinArea % c.N != 0);  // ceil(area / N)
  return c.K < kTmaFullDepth && c.M < min_m;
}
constexpr const char* kMeasuredWins = "min(M, N) >= 2048, and K >= 768, or K >= 256 with M N >= 8192^2";
static_assert(kTmaMinSide == 2048 && kTmaFullDepth == 768 && kTmaMinDepth == 256 && kTmaShallowMinArea == 8192LL * 8192,
              "kMeasuredWins, the routes' reason, states the bounds: change both together");
}  // namespace

bool native_by_policy_and_size(const Call& c, const Policy& p) {
  return p.kind == PolicyKind::Native ||
         ((p.kind == PolicyKind::Auto || p.kind == PolicyKind::Fp64) && below_measured_wins(c));
}

Route route(const Call& c, const Policy& p, const std::function<Facts()>& facts) {
  auto native = [](std::string why) { return Route{{}, std::move(why)}; };
  if (!c.types_fp64) return native("not FP64 (A, B, C CUDA_R_64F with CUBLAS_COMPUTE_64F)");
  if (!blas_valid(c)) return native("arguments cuBLAS refuses: its own status is returned");
  if (c.M == 0 || c.N == 0 || c.K == 0 || c.batch == 0) return native("nothing to multiply (BLAS quick return)");
  if (p.kind == PolicyKind::Native) return native("KS_DGEMM=native");
  if (!c.host_scalars)
    return native("alpha and beta in device memory: the suite's kernels take them by value, reading them would wait");
  if (c.pedantic) return native("pedantic math requested");
  if (c.capturing) return native("stream capture: the suite's routes may allocate scratch or wait, never while capturing");
  if (std::max({c.M, c.N, c.K, c.lda, c.ldb, c.ldc}) > gemm::kMaxDim)
    return native("a size or leading dimension above 2^31");
  if (p.kind == PolicyKind::Variant) {
    // blas_valid above: each op is N, T or C (C is T for real data).
    const gemm::Op ta = c.transa == 'N' ? gemm::Op::N : gemm::Op::T, tb = c.transb == 'N' ? gemm::Op::N : gemm::Op::T;
    if (!(p.variant_ops & gemm::op_bit(ta, tb)))
      return native("KS_DGEMM=" + p.variant + " does not take op(A) op(B) = " + gemm::ops_name(ta, tb));
    return {p.variant, "KS_DGEMM=" + p.variant};
  }
  if (p.kind == PolicyKind::Ozaki) return {"ozaki", "KS_DGEMM=ozaki (its rule may still pick native for the inputs)"};
  // Below these sizes neither dmma_tma nor ozaki was measured ahead of cuBLAS: decided without the device, so a
  // small call costs the library next to nothing.
  if (native_by_policy_and_size(c, p))
    return native(std::string("below the suite's measured wins (") + kMeasuredWins + ")");
  const Facts f = facts();
  if (p.kind == PolicyKind::Auto && f.ozaki_by_shape.empty())
    return {"ozaki", "ozaki's speed model predicts a win at this shape; its accuracy rule checks the inputs"};
  if (!f.tma_runs) return native("dmma_tma's rule would not run a TMA tile here (device, alignment or shape)");
  return {"dmma_tma", std::string("dmma_tma at or above cuBLAS here (") + kMeasuredWins + ")"};
}

}  // namespace ks::dropin

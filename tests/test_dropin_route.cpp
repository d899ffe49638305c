// The drop-in library's routing rules and its policy variable (dropin/route.hpp), without a GPU: which calls
// reach the suite's kernels, which go to the real cuBLAS, and that the device is asked only when it matters.
#include "dropin/route.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace ks::dropin {
namespace {

unsigned known(const std::string& name) {
  if (name == "naive") return 1u;  // NN only
  return std::set<std::string>{"dmma_tma", "ozaki_14"}.count(name) ? 0xFu : 0u;
}

TEST(DropinPolicy, ParsesEveryDocumentedValue) {
  EXPECT_EQ(parse_policy(nullptr, known).kind, PolicyKind::Auto);
  EXPECT_EQ(parse_policy("", known).kind, PolicyKind::Auto);
  EXPECT_EQ(parse_policy("auto", known).kind, PolicyKind::Auto);
  EXPECT_EQ(parse_policy("native", known).kind, PolicyKind::Native);
  EXPECT_EQ(parse_policy("fp64", known).kind, PolicyKind::Fp64);
  EXPECT_EQ(parse_policy("ozaki", known).kind, PolicyKind::Ozaki);
  const Policy v = parse_policy("ozaki_14", known);
  EXPECT_EQ(v.kind, PolicyKind::Variant);
  EXPECT_EQ(v.variant, "ozaki_14");
  EXPECT_EQ(v.str(), "ozaki_14");
}

TEST(DropinPolicy, RefusesAnythingElseWithOneLine) {
  for (const char* bad : {"Auto", "dmma", " auto", "auto ", "fp32", "native,ozaki", "\x01\xff", "x\ny"}) {
    try {
      parse_policy(bad, known);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      EXPECT_NE(m.find("KS_DGEMM="), std::string::npos) << m;
    }
  }
  EXPECT_THROW(parse_policy(std::string(10000, 'a').c_str(), known), std::invalid_argument);
}

Call big(std::int64_t m = 8192, std::int64_t n = 8192, std::int64_t k = 8192) {
  Call c;
  c.entry = "cublasDgemm_v2";
  c.M = m, c.N = n, c.K = k, c.lda = m, c.ldb = k, c.ldc = m;
  return c;
}

TEST(DropinRoute, BlasArgumentRulesFollowTheStoredShapes) {
  EXPECT_TRUE(blas_valid(big()));
  Call c = big(100, 50, 30);
  c.lda = 99;
  EXPECT_FALSE(blas_valid(c));  // A is M x K: lda >= M
  c.transa = 'T', c.lda = 30;
  EXPECT_TRUE(blas_valid(c));   // A stored K x M: lda >= K
  c.lda = 29;
  EXPECT_FALSE(blas_valid(c));
  c = big(100, 50, 30);
  c.ldb = 29;
  EXPECT_FALSE(blas_valid(c));  // B is K x N: ldb >= K
  c.transb = 'C', c.ldb = 50;
  EXPECT_TRUE(blas_valid(c));   // stored N x K: ldb >= N
  c = big(100, 50, 30);
  c.ldc = 99;
  EXPECT_FALSE(blas_valid(c));
  c = big(0, 0, 0);
  c.lda = c.ldb = c.ldc = 1;
  EXPECT_TRUE(blas_valid(c));   // empty, with leading dimensions of at least 1
  c.lda = 0;
  EXPECT_FALSE(blas_valid(c));
  for (auto f : {&Call::M, &Call::N, &Call::K, &Call::batch}) {
    c = big();
    c.*f = -1;
    EXPECT_FALSE(blas_valid(c));
  }
  c = big();
  c.transa = '?';
  EXPECT_FALSE(blas_valid(c));
  c = big();
  c.handle = false;
  EXPECT_FALSE(blas_valid(c));
}

// Facts that fail the test when asked: the rule must decide without the device.
Facts never() {
  ADD_FAILURE() << "the device was asked";
  return {};
}
Facts tma_only() { return {true, "native: below the speed model's crossover"}; }
Facts ozaki_pays() { return {true, ""}; }

TEST(DropinRoute, DeclinesWhatTheSuiteDoesNotRun) {
  const Policy autop{};
  auto native_why = [&](const Call& c, const Policy& p = {}) {
    const Route r = route(c, p, never);
    EXPECT_TRUE(r.native()) << r.variant;
    return r.why;
  };
  Call c = big();
  c.types_fp64 = false;
  EXPECT_NE(native_why(c).find("not FP64"), std::string::npos);
  c = big();
  c.lda = 1;
  EXPECT_NE(native_why(c).find("own status"), std::string::npos);
  c = big(0, 8192, 8192);
  c.lda = c.ldc = 1;
  EXPECT_NE(native_why(c).find("quick return"), std::string::npos);
  c = big();
  c.batch = 0;
  EXPECT_NE(native_why(c).find("quick return"), std::string::npos);
  EXPECT_EQ(native_why(big(), {PolicyKind::Native, {}}), "KS_DGEMM=native");
  // A named variant that takes NN only serves NN calls alone.
  const Policy naive = parse_policy("naive", known);
  for (char t : {'T', 'C'}) {
    c = big();
    c.transb = t;
    c.ldb = c.N;
    EXPECT_EQ(native_why(c, naive), "KS_DGEMM=naive does not take op(A) op(B) = NT");
  }
  c = big();
  c.host_scalars = false;
  EXPECT_NE(native_why(c).find("device memory"), std::string::npos);
  c = big();
  c.pedantic = true;
  EXPECT_NE(native_why(c).find("pedantic"), std::string::npos);
  c = big();
  c.capturing = true;
  EXPECT_NE(native_why(c, {PolicyKind::Variant, "dmma_tma"}).find("capture"), std::string::npos);
  c = big(1LL << 31, 16, 16);
  EXPECT_NE(native_why(c).find("2^31"), std::string::npos);
}

TEST(DropinRoute, AutoTakesOzakiWhereItsModelPredictsAWinAndDmmaTmaWhereMeasuredAhead) {
  EXPECT_EQ(route(big(), {}, ozaki_pays).variant, "ozaki");
  EXPECT_EQ(route(big(), {PolicyKind::Fp64, {}}, ozaki_pays).variant, "dmma_tma");  // fp64: never the emulation
  EXPECT_EQ(route(big(), {}, tma_only).variant, "dmma_tma");
  // The measured wins' boundaries: K from 768 at any C of sides from 2048, from 256 where M N is at least 8192^2.
  EXPECT_EQ(route(big(2048, 2048, 768), {}, tma_only).variant, "dmma_tma");
  EXPECT_TRUE(route(big(2048, 2048, 767), {}, tma_only).native());
  EXPECT_TRUE(route(big(6144, 6144, 256), {}, tma_only).native());
  EXPECT_EQ(route(big(8192, 8192, 256), {}, tma_only).variant, "dmma_tma");
  EXPECT_EQ(route(big(16384, 4096, 256), {}, tma_only).variant, "dmma_tma");  // M N = 8192^2 exactly
  EXPECT_TRUE(route(big(16383, 4096, 256), {}, tma_only).native());
  EXPECT_TRUE(route(big(8192, 8192, 255), {}, tma_only).native());
  EXPECT_NE(route(big(8192, 8191, 767), {}, tma_only).why.find("K >= 768"), std::string::npos);
  EXPECT_TRUE(route(big(2047, 8192, 8192), {}, never).native());  // small: decided without the device
  EXPECT_TRUE(route(big(8192, 2047, 8192), {}, never).native());
  EXPECT_TRUE(route(big(8192, 8192, 255), {}, never).native());
  EXPECT_TRUE(route(big(64, 64, 64), {PolicyKind::Fp64, {}}, never).native());
  EXPECT_TRUE(route(big(), {}, [] { return Facts{false, "native"}; }).native());  // no TMA tile: dmma would run
  EXPECT_EQ(route(big(64, 64, 64), {PolicyKind::Variant, "naive"}, never).variant, "naive");
  EXPECT_EQ(route(big(64, 64, 64), {PolicyKind::Ozaki, {}}, never).variant, "ozaki");
  // Transposed operands route as NN ones do (the fast variants take all four combinations).
  for (const auto& [ta, tb] : {std::pair{'T', 'N'}, {'N', 'C'}, {'C', 'T'}}) {
    Call c = big();
    c.transa = ta, c.transb = tb;
    EXPECT_EQ(route(c, {}, ozaki_pays).variant, "ozaki") << ta << tb;
    EXPECT_EQ(route(c, {PolicyKind::Fp64, {}}, tma_only).variant, "dmma_tma") << ta << tb;
    EXPECT_EQ(route(c, parse_policy("dmma_tma", known), never).variant, "dmma_tma") << ta << tb;
  }
}

// The library hands a call to cuBLAS before reading the handle where native_by_policy_and_size says so: route()
// must then say native too, whatever the handle and the device would have said.
TEST(DropinRoute, NativeByPolicyAndSizeIsNativeWhateverTheRestSays) {
  const Policy policies[] = {{}, {PolicyKind::Native, {}}, {PolicyKind::Fp64, {}}, {PolicyKind::Ozaki, {}},
                             parse_policy("dmma_tma", known)};
  const std::int64_t sides[] = {-1, 0, 64, 255, 256, 2047, 2048, 8192};
  int early = 0;
  for (const Policy& p : policies)
    for (std::int64_t m : sides)
      for (std::int64_t n : sides)
        for (std::int64_t k : sides) {
          Call c = big(m, n, k);
          if (!native_by_policy_and_size(c, p)) continue;
          ++early;
          EXPECT_TRUE(p.kind == PolicyKind::Native || p.kind == PolicyKind::Auto || p.kind == PolicyKind::Fp64);
          for (bool host : {true, false})
            for (bool pedantic : {false, true}) {
              c.host_scalars = host, c.pedantic = pedantic;
              EXPECT_TRUE(route(c, p, ozaki_pays).native()) << m << " " << n << " " << k << " " << p.str();
              EXPECT_TRUE(route(c, p, tma_only).native()) << m << " " << n << " " << k << " " << p.str();
            }
        }
  EXPECT_GT(early, 0);
  EXPECT_FALSE(native_by_policy_and_size(big(), {}));
  EXPECT_FALSE(native_by_policy_and_size(big(64, 64, 64), {PolicyKind::Ozaki, {}}));
  EXPECT_TRUE(native_by_policy_and_size(big(2048, 2048, 255), {}));
  EXPECT_TRUE(native_by_policy_and_size(big(2048, 2048, 256), {}));
  // M N is not formed: sizes of the _64 entry points near 2^63 neither overflow nor wrap to a small product.
  const std::int64_t huge = INT64_MAX;
  EXPECT_FALSE(native_by_policy_and_size(big(huge, huge, 256), {}));
  EXPECT_FALSE(native_by_policy_and_size(big(huge, 2048, 256), {}));
  EXPECT_TRUE(native_by_policy_and_size(big(2048, 2048, 256), {PolicyKind::Fp64, {}}));
}

}  // namespace
}  // namespace ks::dropin

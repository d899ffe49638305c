// Every registered DGEMM variant: the registry, then every variant in every launch mode on odd shapes, the BLAS
// cases, every input distribution, and indices past 2^31, in every op(A) op(B) combination it declares.
// Parameterised from the registry: a new variant is tested everywhere with no edit here.
#include "gemm_fixtures.hpp"
#if !defined(KS_HIP)
#include "gemm/dmma_shapes.hpp"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace ks::gemm {
namespace {

#if defined(KS_HIP)
// The HIP build: the teaching steps 01-05, no anchor (no vendor DGEMM), nothing that needs NVIDIA's hardware.
TEST(GemmRegistryTest, HoldsTheTeachingStepsAndNoAnchor) {
  std::vector<std::string> names;
  for (const GemmVariant* v : registry().all()) names.push_back(v->info.name);
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "shared", "coalesced", "register_tiled", "warp_tiled"}));
  for (const GemmVariant* v : registry().all()) EXPECT_EQ(v->info.min_cc, 0) << v->info.name;
  EXPECT_EQ(registry().anchor(), nullptr);
  for (const LeftOut& l : hip_left_out())
    for (const std::string& name : l.names) EXPECT_EQ(registry().find(name), nullptr) << name;
}
#else
TEST(GemmRegistryTest, HoldsTheLadderAndTheAnchor) {
  for (const char* name : {"naive", "shared", "coalesced", "register_tiled", "warp_tiled", "dmma", "cublas"})
    EXPECT_NE(registry().find(name), nullptr) << name;
  // cp.async and the FP64 tensor cores: compute capability 8.0; the FFMA register tiling runs everywhere.
  EXPECT_EQ(registry().find("register_tiled")->info.min_cc, 0);
  EXPECT_EQ(registry().find("warp_tiled")->info.min_cc, 80);
  EXPECT_EQ(registry().find("dmma")->info.min_cc, 80);
  ASSERT_NE(registry().anchor(), nullptr);
  EXPECT_EQ(registry().anchor()->info.name, "cublas");
  EXPECT_EQ(registry().all().front()->info.name, "cublas");  // step 00
}

// The HIP build's list of what it leaves out names every variant of this build outside the steps it builds, under
// the entry that declares it, and nothing this build lacks.
TEST(GemmRegistryTest, TheHipBuildsLeftOutListIsComplete) {
  const std::set<std::string> built{"naive", "shared", "coalesced", "register_tiled", "warp_tiled"};
  std::map<std::string, std::string> entry_of;
  for (const LeftOut& l : hip_left_out())
    for (const std::string& name : l.names) {
      EXPECT_TRUE(entry_of.emplace(name, l.entry).second) << name << " listed twice";
      EXPECT_NE(registry().find(name), nullptr) << name << " is listed but not declared";
    }
  for (const GemmVariant* v : registry().all()) {
    if (built.count(v->info.name)) continue;
    const LadderPlace place = registry().place(*v);
    const std::string& entry = place.entry.empty() ? place.file : place.entry;
    auto it = entry_of.find(v->info.name);
    ASSERT_NE(it, entry_of.end()) << v->info.name << " (" << entry << ") is neither built for HIP nor listed as left out";
    EXPECT_EQ(it->second, entry) << v->info.name;
  }
}
#endif

// Every numbered file (or folder) of gemm/ declares a variant, and no name is declared twice.
TEST(GemmRegistryTest, EveryLadderEntryDeclaresAndNoNameTwice) {
  test::expect_ladder_declared(registry(), {
#include "ladder/gemm_entries.inc"
  });
}

// ---- GPU: every variant x mode over odd shapes ----

struct ShapeCase {
  GemmShape shape;
  bool beta_zero;
};

const std::vector<ShapeCase>& shape_cases() {
  static const std::vector<ShapeCase> c{
      {{1, 1, 1}, false},           {{17, 33, 9}, true},          {{100, 100, 100}, false},
      {{127, 129, 131}, true},      {{256, 256, 256}, false},     {{1000, 1000, 1000}, false},
      {{2048, 64, 512}, true},      {{64, 2048, 512}, false},     {{33, 17, 45, 40, 50, 37}, false},
      {{100, 90, 80, 128, 96, 101}, true},
      // Deep K on a small C: the dmma rule splits K (16 splits here; 3 uneven ones below, odd lda).
      {{96, 80, 5000}, false},      {{70, 50, 1001, 71, 1002, 70}, true},
  };
  return c;
}

std::vector<std::string> variant_names() { return registry().names(); }

// The op(A) op(B) combinations by index: 0 NN, 1 NT, 2 TN, 3 TT.
struct Ops {
  Op a, b;
};
Ops ops_of(int index) { return {index / 2 ? Op::T : Op::N, index % 2 ? Op::T : Op::N}; }
std::vector<int> declared_ops(const std::string& name) {
  std::vector<int> out;
  for (int o = 0; o < 4; ++o)
    if (registry().find(name)->runs(ops_of(o).a, ops_of(o).b)) out.push_back(o);
  return out;
}

// The shape case every launch mode runs in each op combination besides NN (padded leading dimensions, beta != 0);
// the others run those in device mode (the modes move the stored arrays, whatever their orientation).
constexpr std::size_t kEveryModeCase = 9;

using Param = std::tuple<std::string, Mode, std::size_t, int>;  // variant, mode, case, ops

// Every variant x mode x case (of `count`) x declared op combination: NN in every mode, the others in device mode
// and, for case `every_mode` (when below `count`), in every mode too.
std::vector<Param> variant_cases(std::size_t count, std::size_t every_mode) {
  std::vector<Param> out;
  for (const std::string& name : variant_names())
    for (int o : declared_ops(name))
      for (Mode mode : all_modes())
        for (std::size_t i = 0; i < count; ++i)
          if (o == 0 || mode == Mode::Device || i == every_mode) out.emplace_back(name, mode, i, o);
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [name, mode, index, o] = info.param;
  return test::sanitize(name + "_" + to_string(mode) + "_" +
                        shape_cases()[index].shape.with_ops(ops_of(o).a, ops_of(o).b).str());
}

class GemmCase : public ::testing::TestWithParam<Param> {};

// Shape case `index`'s problem in op combination `o`, built once per process: every variant and mode checks
// against the same inputs and the same Eigen reference. alpha and beta are drawn from the seed and the case.
const GemmProblem& shape_problem(std::size_t index, int o) {
  return shared_problem("shape " + std::to_string(index) + " ops " + std::to_string(o), [index, o] {
    const ShapeCase& sc = shape_cases()[index];
    const std::uint64_t seed = process_seed();
    std::mt19937_64 rng(seed + index);
    std::uniform_real_distribution<double> scalar(-2.0, 2.0);
    const double alpha = scalar(rng);
    const double beta = sc.beta_zero ? 0.0 : scalar(rng);
    return make_problem(sc.shape.with_ops(ops_of(o).a, ops_of(o).b), alpha, beta, seed);
  });
}

TEST_P(GemmCase, MatchesEigenReference) {
  KS_REQUIRE_GPU();
  const auto& [name, mode, shape_index, o] = GetParam();
  KS_VARIANT_OR_SKIP(v, name);
  const GemmProblem& p = shape_problem(shape_index, o);
  const GemmCheck c = run_once(*v, mode, p);
  EXPECT_TRUE(c.ok) << name << " / " << to_string(mode) << " / " << p.shape.str() << ": " << c.report;
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmCase, ::testing::ValuesIn(variant_cases(shape_cases().size(), kEveryModeCase)),
                         case_name);

// A variant that takes only NN is refused the others, in every mode, with the reason (no silent transposing copy).
TEST(GemmOps, TeachingStepsRefuseTransposedOperands) {
  KS_REQUIRE_GPU();
  for (const GemmVariant* v : registry().all()) {
    if (v->runs(Op::T, Op::T) || test::current_cc() < v->info.min_cc) continue;
    const GemmProblem& p = shape_problem(2, 3);
    for (Mode mode : {Mode::Device, Mode::Pinned, Mode::PinnedPipelined}) {
      try {
        run_once(*v, mode, p);
        ADD_FAILURE() << v->info.name << " ran TT in " << to_string(mode);
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("not TT"), std::string::npos) << e.what();
      }
    }
  }
}

// BLAS semantics in every variant and mode: alpha == 0 reads neither A nor B (NaN there must not reach C), and a
// zero M, N or K is a quick return (K == 0: C = beta C).
struct BlasCase {
  GemmShape shape;
  double alpha, beta;
  Operands ab;
  const char* what;
};

const std::vector<BlasCase>& blas_cases() {
  static const std::vector<BlasCase> c{
      {{200, 150, 300}, 0.0, 2.0, Operands::nan(), "alpha0_beta2_nan_ab"},
      {{37, 41, 53}, 0.0, 0.0, Operands::nan(), "alpha0_beta0_nan_ab"},
      {{0, 17, 9}, 1.5, 0.5, Operands::uniform(), "M0"},
      {{17, 0, 9}, 1.5, 0.5, Operands::uniform(), "N0"},
      {{17, 33, 0}, 1.5, 0.5, Operands::uniform(), "K0"},
      {{17, 33, 0}, 1.5, 0.0, Operands::uniform(), "K0_beta0"},
  };
  return c;
}

using BlasParam = Param;

class GemmBlas : public ::testing::TestWithParam<BlasParam> {};

TEST_P(GemmBlas, QuickReturnsAndAlphaZero) {
  KS_REQUIRE_GPU();
  const auto& [name, mode, index, o] = GetParam();
  KS_VARIANT_OR_SKIP(v, name);
  const BlasCase& bc = blas_cases()[index];
  const GemmShape shape = bc.shape.with_ops(ops_of(o).a, ops_of(o).b);
  const GemmCheck c = run_once(*v, mode, make_problem(shape, bc.alpha, bc.beta, choose_seed(), bc.ab));
  EXPECT_TRUE(c.ok) << name << " / " << to_string(mode) << " / " << bc.what << " " << shape.str() << ": " << c.report;
}

std::string blas_case_name(const ::testing::TestParamInfo<BlasParam>& info) {
  const auto& [name, mode, index, o] = info.param;
  std::string out = name + "_" + to_string(mode) + "_" + blas_cases()[index].what;
  if (o) {
    out += '_';
    out += ops_name(ops_of(o).a, ops_of(o).b);
  }
  return test::sanitize(out);
}

// NN in every mode; the other declared combinations in device mode (no case runs in every mode).
INSTANTIATE_TEST_SUITE_P(Variants, GemmBlas,
                         ::testing::ValuesIn(variant_cases(blas_cases().size(), blas_cases().size())), blas_case_name);

// Every variant on every input distribution kbench's --dist offers (device mode; the modes move bytes, not
// values): wider exponents (exp:PHI) and rows of A and columns of B scaled far apart (pow2) must still meet
// the element-wise bound, whose |A||B| term follows the data.
class GemmDist : public ::testing::TestWithParam<std::string> {};

// Distribution `dist`'s problem in op combination `o`, built once per process, as shape_problem's are (a function
// returning shared_problem's reference: bound at the call's site to a call with temporary arguments, GCC 13 warned
// of a dangling reference).
const GemmProblem& dist_problem(const char* dist, int o) {
  return shared_problem(std::string("dist ") + dist + " ops " + std::to_string(o), [dist, o] {
    const GemmShape shape = GemmShape{127, 129, 131, 130, 0, 0}.with_ops(ops_of(o).a, ops_of(o).b);
    return make_problem(shape, 1.25, -0.5, process_seed(), parse_operands(dist));
  });
}

TEST_P(GemmDist, EveryDistributionMeetsTheBound) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, GetParam());
  for (int o : declared_ops(GetParam()))
    for (const char* dist : {"uniform", "exp:0.5", "exp:1", "exp:2", "exp:4", "exp:2,pow2:300", "uniform,pow2:400"}) {
      const GemmProblem& p = dist_problem(dist, o);
      const GemmCheck c = run_once(*v, Mode::Device, p);
      EXPECT_TRUE(c.ok) << GetParam() << " on " << dist << " " << p.shape.str() << ": " << c.report;
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmDist, ::testing::ValuesIn(variant_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test::sanitize(info.param); });

// Index arithmetic beyond 32 bits: A has M * K = 65536 * 32769 > 2^31 elements, so its last column starts
// at element 2^31. Every variant must index it with 64-bit arithmetic (or be refused); none may be silently
// wrong. Then TT (A stored K x M and B N x K: the same counts indexed the other way) for the variants with
// transposed code of their own (cuBLAS's emulation, whose workspace would take 17 GB more, left out). Needs about
// 18 GiB of device memory and 20 GiB of host memory per problem, one problem at a time.
bool transposed_pass(const GemmVariant& v) { return v.info.name.rfind("cublas_emulated", 0) != 0; }

TEST(GemmLargeIndex, EveryVariantPastTwoToThe31Elements) {
  KS_REQUIRE_GPU();
  if (test::small_sizes_only()) GTEST_SKIP() << "KS_SMALL_SIZES: large sizes skipped";
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < (24ull << 30)) GTEST_SKIP() << "needs 24 GiB of free device memory, " << (free_bytes >> 30) << " GiB free";
  for (int o : {0, 3}) {
    const GemmShape shape = GemmShape{65536, 4, 32769}.with_ops(ops_of(o).a, ops_of(o).b);
    ASSERT_GT(static_cast<long long>(shape.M) * shape.K, 1LL << 31);
    const GemmProblem p = make_problem(shape, 1.0, 0.5, choose_seed());
    for (const GemmVariant* v : registry().all()) {
      if (v->info.tuning || test::current_cc() < v->info.min_cc || !v->runs(shape.transa, shape.transb)) continue;
      if (o != 0 && !transposed_pass(*v)) continue;
      const GemmCheck c = run_once(*v, Mode::Device, p);
      EXPECT_TRUE(c.ok) << v->info.name << " " << p.shape.str() << ": " << c.report;
    }
  }
}

#if !defined(KS_HIP)  // the TMA and skinny kernels: the CUDA build only
// The same for the TMA kernels, which the test above never reaches (K odd there: ldb odd, dmma runs): K even,
// and each kernel of dmma::kTmaTiles forced through its tuning variant (dmma_tma's rule would pick dmma for a
// 4-column C).
TEST(GemmLargeIndex, TmaKernelPastTwoToThe31Elements) {
  KS_REQUIRE_GPU();
  if (test::small_sizes_only()) GTEST_SKIP() << "KS_SMALL_SIZES: large sizes skipped";
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < (24ull << 30)) GTEST_SKIP() << "needs 24 GiB of free device memory, " << (free_bytes >> 30) << " GiB free";
  for (int o : {0, 3}) {
    const GemmShape shape = GemmShape{65536, 4, 32770}.with_ops(ops_of(o).a, ops_of(o).b);
    ASSERT_GT(static_cast<long long>(shape.M) * shape.K, 1LL << 31);
    const GemmProblem p = make_problem(shape, 1.0, 0.5, choose_seed());
    for (int tile = 0; tile < dmma::kTmaTileCount; ++tile) {
      const std::string name = dmma::tma_variant_name(tile);
      const GemmVariant* v = registry().find(name);
      ASSERT_NE(v, nullptr) << name;
      const GemmCheck c = run_once(*v, Mode::Device, p);
      EXPECT_TRUE(c.ok) << name << " " << p.shape.str() << ": " << c.report;
    }
  }
}

// The path dmma_tma's rule took (its notes) for a shape skinny_pick or skinny_split_pick takes: the skinny kernel, in
// the split dot form exactly where skinny::split_form holds (operands at 16-byte-aligned addresses, as the problems'
// allocations are), in a tensor-core form exactly where skinny::tc_form does, and by bulk copies exactly where
// skinny::bulk_form does from compute capability 9.0 with code compiled for it. Returns whether the split dot form
// ran.
bool expect_skinny_path(const GemmShape& shape, std::map<std::string, std::string> notes) {
  const std::string& path = notes["dmma_tma_path"];
  alignas(16) static const double base[2] = {};
  GemmProblem layout;
  layout.shape = shape.resolved();
  const skinny::Form f = skinny::canonical(layout.args(base, base, nullptr));
  EXPECT_EQ(path.rfind("skinny", 0), 0u) << shape.str() << ": " << path;
  EXPECT_EQ(path.find("split dot form") != std::string::npos, skinny::split_form(f)) << shape.str() << ": " << path;
  EXPECT_EQ(path.find("tensor-core") != std::string::npos, skinny::tc_form(f)) << shape.str() << ": " << path;
  const bool bulk_code = test::current_cc() >= 90 && dmma::current_target().code_arch >= 90;  // as skinny's bulk_runs
  EXPECT_EQ(path.find("bulk copies") != std::string::npos, skinny::bulk_form(f) && bulk_code)
      << shape.str() << ": " << path;
  return path.find("split dot form") != std::string::npos;
}

// dmma_tma on C of at most 8 rows or columns runs the skinny kernel (the rule, gemm/dmma_shapes.hpp): both of its
// forms (dot: the large operand contiguous along k; axpy: along the long side of C) in all four op combinations,
// a side of 1 to 8 (3 to 8 in the tensor-core forms; 1 and 2 also in the split dot form, and in the FMA dot form
// where the large operand's leading dimension is odd), K tails of every chunk size, an odd lda of 1, padded leading
// dimensions, beta != 0 and beta == 0 over a poisoned C; twice per product on one context.
TEST(DmmaTmaSkinny, ThinCRunsTheSkinnyKernel) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, "dmma_tma");
  const dmma::Target target = dmma::current_target();
  const int sms = target.sm_count;
  const int L = dmma::kSkinnyLongPerSm * sms + 37, W = dmma::kSkinnyDotLongPerSm * sms + 37;  // past every boundary
  const std::tuple<GemmShape, double> cases[] = {
      {{3, L, 1025, 5, 1027, 4}, 0.5}, {{W, 8, 1100, W + 2, 1101, W + 1}, 0.0}, {{1, L, 2048}, 0.0},
      {{L, 1, 1500}, -1.0},           {{8, W, 1031}, 0.0},                      {{W, 5, 1057}, 0.25},
      // 5 to 8 rows or columns with even leading dimensions (those above are odd), K a multiple of 16 or odd; 4 and 5
      // with K a multiple of neither chunk and of both.
      {{6, W, 1040}, 0.0},            {{7, W, 1031, 7, 1032, 7}, -0.5},         {{W, 8, 2050}, 1.0},
      {{4, L, 4103}, 0.5},            {{W, 5, 8192}, 0.0},
      // 1 and 2 rows or columns in the split dot form (even leading dimensions of the large operand; K tails, odd
      // and even), and 1 row where its leading dimension is odd (the dot form).
      {{1, L, 2051, 1, 2052, 1}, 0.5}, {{2, L, 1030, 2, 1032, 2}, 0.0},        {{L, 2, 1030, L + 2, 1032, L}, -1.0},
      {{L, 1, 2051, L + 1, 2052, L + 3}, 0.0}, {{1, L, 1031}, 0.0},
  };
  int split = 0;
  for (const auto& [base, beta] : cases)
    for (int o = 0; o < 4; ++o) {
      const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
      ASSERT_TRUE(dmma::skinny_pick(shape.M, shape.N, shape.K, shape.transa, shape.transb, target)) << shape.str();
      split += expect_skinny_path(shape, expect_repeated_runs(*v, make_problem(shape, -1.5, beta, choose_seed()), 2));
    }
  EXPECT_GE(split, 10) << "products in the split dot form";
}

// C of 1 or 2 rows or columns with a long side under skinny_pick's boundary and over the split dot form's
// (dmma::skinny_split_pick): the split dot form where its layout holds (even leading dimensions of the large operand,
// K tails), a TMA tile in the other op combinations; each against the reference.
TEST(DmmaTmaSkinny, SplitDotFormUnderTheSkinnyBoundary) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, "dmma_tma");
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernels run on compute capability 9.0";
  const int sms = dmma::current_target().sm_count;
  const int L = dmma::kSkinnySplitLongPerSm * sms + 37;
  ASSERT_LT(L, dmma::kSkinnyLongPerSm * sms);
  int split = 0;
  for (const GemmShape& base : {GemmShape{1, L, 2051, 1, 2052, 1}, GemmShape{L, 2, 1030, L + 2, 1032, L}})
    for (int o = 0; o < 4; ++o) {
      const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
      ASSERT_FALSE(dmma::skinny_pick(shape.M, shape.N, shape.K, shape.transa, shape.transb, dmma::current_target()))
          << shape.str();
      const auto notes = expect_repeated_runs(*v, make_problem(shape, 0.75, o % 2 ? 0.0 : -0.5, choose_seed()), 2);
      const std::string path = notes.count("dmma_tma_path") ? notes.at("dmma_tma_path") : "";
      if (path.rfind("skinny", 0) == 0) {
        ++split;
        expect_skinny_path(shape, notes);
        EXPECT_NE(path.find("split dot form"), std::string::npos) << shape.str() << ": " << path;
      }
    }
  EXPECT_EQ(split, 3) << "products in the split dot form (1 row: NN, TN; 2 columns: TN)";
}

// Where the memory is fast for the SMs, C of 3 to 8 rows or columns with a long side just under the tensor-core form's
// boundary (the axpy form's or the dot form's, as the ops make it) keeps the tensor-core rule (a TMA tile, split-K
// where the tiles are few, or dmma); each checked against the reference in every op combination.
TEST(DmmaTmaSkinny, UnderTheTensorCoreFormsBoundaryTheTileRuleRuns) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, "dmma_tma");
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernels run on compute capability 9.0";
  const dmma::Target target = dmma::current_target();
  if (target.dram_bytes_per_sm_cycle < dmma::kSkinnyTcBytesPerSmCycle)
    GTEST_SKIP() << "the tensor-core forms' boundaries are the fast-memory rule's";
  const int sms = target.sm_count;
  for (const bool rows : {true, false})
    for (int o = 0; o < 4; ++o) {
      const Op ta = ops_of(o).a, tb = ops_of(o).b;
      const int K = rows ? 1040 : 1031;
      const bool dot = skinny::dot_form(rows ? 8 : 1 << 20, rows ? 1 << 20 : 8, ta, tb);
      const int L = (dot ? dmma::kSkinnyTcDotLongPerSm : dmma::kSkinnyTcAxpyLongPerSm) * sms - 1;
      const int lda = std::max(L, K) + 3;  // past A's stored rows (L, or K where op(A) = A^T)
      const GemmShape shape = rows ? GemmShape{8, L, K, 0, 0, 0, ta, tb} : GemmShape{L, 6, K, lda, 1032, L + 1, ta, tb};
      ASSERT_FALSE(dmma::skinny_pick(shape.M, shape.N, K, ta, tb, target)) << shape.str();
      ASSERT_TRUE(dmma::skinny_pick(rows ? 8 : L + 1, rows ? L + 1 : 6, K, ta, tb, target))
          << shape.str() << ": one more of the long side is the skinny kernel's";
      auto notes = expect_repeated_runs(*v, make_problem(shape, 1.0, 0.5, choose_seed()), 2);
      EXPECT_NE(notes["dmma_tma_path"].rfind("skinny", 0), 0u) << shape.str() << ": " << notes["dmma_tma_path"];
    }
}

// `v` on `p` on two fresh contexts gives the same bits in all of C (ldc x N, the rows past M still poisoned).
void expect_same_bits_on_fresh_contexts(const GemmVariant& v, const GemmProblem& p) {
  const auto fresh_run = [&] {
    Stream stream;
    ExecContext ctx(stream.get());
    Runner runner(v, Mode::Device, p, ctx);
    runner.reset_output();
    runner.run();
    return runner.result();
  };
  const Eigen::MatrixXd one = fresh_run(), two = fresh_run();
  EXPECT_EQ(std::memcmp(one.data(), two.data(), sizeof(double) * one.size()), 0) << v.info.name << " " << p.shape.str();
}

// The skinny variant's tensor-core forms where C's groups are few (K split across blocks, the parts added by the last
// to arrive): 3 to 8 rows or columns over long sides from 1 to a thousand, both forms, K tails, padded leading
// dimensions; three runs per product on one context (expect_repeated_runs: the tickets zero again after each), and
// the same bits from two fresh contexts.
TEST(DmmaTmaSkinny, TensorCoreFormsSplitKDeterministically) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, "skinny");
  const std::tuple<GemmShape, double> cases[] = {
      {{3, 8, 4099}, 0.0},   {{3, 37, 8192}, 0.5},  {{8, 300, 2063}, -1.0}, {{5, 129, 6000, 7, 6001, 6}, 0.0},
      {{300, 8, 2063}, 0.0}, {{37, 4, 8191}, 0.25}, {{1000, 7, 4096, 1001, 4097, 1003}, 0.0},
  };
  for (const auto& [base, beta] : cases)
    for (int o = 0; o < 4; ++o) {
      const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
      const GemmProblem p = make_problem(shape, 0.5, beta, choose_seed());
      expect_repeated_runs(*v, p, 3);
      expect_same_bits_on_fresh_contexts(*v, p);
    }
}

// dmma's split-K: each block's partial tile in scratch, summed in split order by a second kernel. Edge tiles both
// ways, a K tail, padded leading dimensions, all four op combinations, beta 0 over a poisoned C and beta != 0; three
// times per product on one context, and the same bits from a second context.
TEST(DmmaSplitK, PartialsSummedInSplitOrder) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, "dmma_64x64_splitk");
  const std::tuple<GemmShape, double> cases[] = {
      {{100, 70, 4099}, 0.0}, {{65, 129, 2051, 67, 2053, 66}, -0.5}, {{256, 256, 16384}, 0.0}};
  for (const auto& [base, beta] : cases)
    for (int o = 0; o < 4; ++o) {
      const GemmProblem p = make_problem(base.with_ops(ops_of(o).a, ops_of(o).b), 1.25, beta, choose_seed());
      expect_repeated_runs(*v, p, 3);
      expect_same_bits_on_fresh_contexts(*v, p);
    }
}

// `v` on `p` once on `ctx`, with A, B and C each `*_off` doubles (0 or 1: off a 16-byte boundary) past the start of
// its device buffer, C from NaN (beta 0 must not read it); checked against the reference.
GemmCheck run_offset(const GemmVariant& v, const GemmProblem& p, ExecContext& ctx, int a_off, int b_off, int c_off) {
  DeviceBuffer<double> a(static_cast<std::size_t>(p.A.size()) + a_off), b(static_cast<std::size_t>(p.B.size()) + b_off),
      c(p.c_count() + c_off);
  CUDA_CHECK(cudaMemcpy(a.data() + a_off, p.A.data(), sizeof(double) * p.A.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b.data() + b_off, p.B.data(), sizeof(double) * p.B.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(c.data(), 0xff, sizeof(double) * (p.c_count() + c_off)));
  run(v, p.args(a.data() + a_off, b.data() + b_off, c.data() + c_off), ctx);
  Eigen::MatrixXd result(p.shape.ldc, p.shape.N);
  CUDA_CHECK(cudaMemcpyAsync(result.data(), c.data() + c_off, sizeof(double) * p.c_count(), cudaMemcpyDeviceToHost,
                             ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return validate(p, result);
}

// The skinny kernel's tensor-core dot form by bulk copies (compute capability 9.0, the large operand's columns on
// 16-byte boundaries): C of 3 to 8 rows or columns, long sides not a multiple of its 32-column groups, K a multiple of
// its 128-k stages and not (odd, and one past a stage: a last stage of one element), beta 0 over a poisoned C and
// beta != 0, every op combination (the dot form's NN and TN for few rows, TN and TT for few columns); twice per
// product on one context. Then the same shapes (beta 0) with A and B 8 bytes past a 16-byte boundary, where the dot
// form loads Y itself (and X element by element); each against the reference.
TEST(SkinnyBulkDotForm, AlignedAndNot) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, "skinny");
  const std::tuple<GemmShape, double> cases[] = {
      {{8, 1000, 4096}, 0.0},     {{5, 333, 4098, 6, 4098, 6}, 0.5}, {{3, 64, 4097}, -1.0},
      {{1000, 6, 4095}, 0.0},     {{77, 4, 2175, 78, 2176, 80}, 0.25},
  };
  for (const auto& [base, beta] : cases)
    for (int o = 0; o < 4; ++o) {
      const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
      expect_repeated_runs(*v, make_problem(shape, 0.75, beta, choose_seed()), 2);
      Stream stream;
      ExecContext ctx(stream.get());
      const GemmProblem p = make_problem(shape, 0.75, 0.0, choose_seed());  // run_offset's C is NaN: beta 0
      const GemmCheck off = run_offset(*v, p, ctx, 1, 1, 0);
      EXPECT_TRUE(off.ok) << p.shape.str() << ", A and B 8 bytes off: " << off.report;
    }
}

// The TMA kernels with C through shared memory and TMA stores (store_tma tiles): several tiles per block (the
// staging is written again only after the last stores have read it), edge tiles in both directions (the TMA clips
// them; the rows of ldc past M must keep their poison), a split K (the owner stores), stream-K (partials handed on,
// then the owner's TMA stores), all four op combinations, beta 0 over a poisoned C and beta != 0, twice per product on
// one context; with M odd (the TMA's stores wrote row M), ldc odd, or C 8 bytes past a 16-byte boundary, the register
// stores run instead and the note dmma_tma_c says so.
TEST(DmmaTmaStores, CThroughSharedMemoryAndTmaStores) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  for (int tile = 0; tile < dmma::kTmaTileCount; ++tile) {
    if (!dmma::kTmaTiles[tile].store_tma) continue;
    const std::string name = dmma::tma_variant_name(tile);
    KS_VARIANT_OR_SKIP(v, name);
    const std::tuple<GemmShape, double, const char*> cases[] = {
        {{2000, 2100, 40, 2000, 2112, 2002}, 0.0, "TMA stores"},    // 16 x 17 tiles, ldc two past M
        {{2000, 2100, 40, 2000, 2112, 2000}, -0.5, "TMA stores"},
        {{1999, 2100, 72, 1999, 2112, 2000}, 0.0, "register stores (M odd)"},
        {{1030, 2310, 70, 1030, 71, 1031}, 0.0, "register stores"},  // ldc odd (ldb odd: B copied)
        {{200, 300, 5000}, 0.75, "TMA stores"},                       // 6 tiles, K split
        {{2304, 2304, 1000}, -1.0, "TMA stores"},                     // 324 tiles: stream-K
    };
    for (const auto& [base, beta, stores] : cases)
      for (int o = 0; o < 4; ++o) {
        const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
        expect_repeated_runs(*v, make_problem(shape, 1.25, beta, choose_seed()), 2, "dmma_tma_c", stores);
      }
    // C one double past a 16-byte boundary (ldc even): the register stores.
    const GemmProblem p = make_problem(GemmShape{1000, 1000, 64}, -0.75, 0.0, choose_seed());
    Stream stream;
    ExecContext ctx(stream.get());
    const GemmCheck check = run_offset(*v, p, ctx, 0, 0, 1);
    EXPECT_TRUE(check.ok) << check.report;
    EXPECT_EQ(ctx.notes()["dmma_tma_c"].rfind("register stores", 0), 0u) << ctx.notes()["dmma_tma_c"];
  }
}

// dmma_tma's rule runs the TMA-store tile in the shallow tile's place where dmma::tma_store_swap says so (the path's
// note says so and dmma_tma_c that C went by TMA stores), and the shallow tile where K is 32, M is odd or ldc is odd:
// each against the reference, beta 0 over a poisoned C and beta != 0, all four op combinations.
TEST(DmmaTmaStores, TheRuleRunsTheTmaStoreTileInTheShallowTilesPlace) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  KS_VARIANT_OR_SKIP(v, "dmma_tma");
  const dmma::Target t = dmma::current_target();
  bool ready[dmma::kTmaTileCount];
  std::fill(std::begin(ready), std::end(ready), true);
  const std::tuple<GemmShape, double, bool> cases[] = {
      {{2048, 2040, 40}, 0.0, true},                     // 16 x 16 tiles, the last column of tiles partial
      {{2048, 2040, 200, 2048, 2052, 2050}, -0.5, true},
      {{2048, 2040, 32}, 0.0, false},                    // K at kTmaStoreMinDepth
      {{2047, 2040, 72, 2048, 2052, 2048}, 0.0, false},  // M odd, ldc even
      {{2048, 2040, 72, 2048, 2052, 2049}, 0.5, false},  // ldc odd
  };
  for (const auto& [base, beta, swapped] : cases) {
    std::string why;
    ASSERT_EQ(dmma::tma_pick(base.M, base.N, base.K, t, ready, 0, &why), dmma::tma_shallow_tile()) << why;
    for (int o = 0; o < 4; ++o) {
      const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
      const auto notes = expect_repeated_runs(*v, make_problem(shape, 1.25, beta, choose_seed()), 2);
      const std::string path = notes.count("dmma_tma_path") ? notes.at("dmma_tma_path") : "";
      EXPECT_EQ(path.find("TMA store in its place") != std::string::npos, swapped) << shape.str() << ": " << path;
      EXPECT_EQ(notes.count("dmma_tma_c") ? notes.at("dmma_tma_c") : "", swapped ? "TMA stores" : "")
          << shape.str() << ": " << path;
    }
  }
}

// The TMA kernels read A and B with an L2 evict-last policy where the two fit in the L2 together, and plainly
// otherwise (the note dmma_tma_l2 says which): both forms, all four op combinations, against the reference. The
// second shape's A and B exceed this GPU's L2 by a little (C of 1024 x 1024, so the reference stays cheap).
TEST(DmmaTmaL2, AAndBEvictLastWhereTheyFitInTheL2) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  KS_VARIANT_OR_SKIP(v, dmma::tma_variant_name(0));
  const dmma::Target t = dmma::current_target();
  const int deep = static_cast<int>(t.l2_bytes / (8 * 2048) / 16 * 16 + 48);  // 8 (1024 deep + deep 1024) bytes > L2
  ASSERT_TRUE(dmma::tma_keeps_ab(1000, 1100, 200, t));
  ASSERT_FALSE(dmma::tma_keeps_ab(1024, 1024, deep, t));
  const std::pair<GemmShape, const char*> cases[] = {
      {{1000, 1100, 200}, "A and B evict-last"},
      {{1024, 1024, deep}, "A and B evict-normal"},
  };
  for (const auto& [base, policy] : cases)
    for (int o = 0; o < 4; ++o) {
      const GemmShape shape = base.with_ops(ops_of(o).a, ops_of(o).b);
      expect_repeated_runs(*v, make_problem(shape, 1.0, 0.5, choose_seed()), 1, "dmma_tma_l2", policy);
    }
}

// Whether dmma_tma's rule copies on this GPU (its SM count sets the scores): the cases below are chosen so that
// it does on the 132-SM H100 and H200.
bool rule_copies(const GemmShape& s, long long copied, std::string* why) {
  bool ready[dmma::kTmaTileCount];
  std::fill(std::begin(ready), std::end(ready), true);
  return dmma::tma_pick(s.M, s.N, s.K, dmma::current_target(), ready, copied, why) >= 0;
}

void expect_copied_run(const GemmVariant& v, const GemmProblem& p, ExecContext& ctx, const std::string& copies) {
  EXPECT_EQ(ctx.notes()["dmma_tma_path"].rfind("tma ", 0), 0u) << p.shape.str() << ": " << ctx.notes()["dmma_tma_path"];
  EXPECT_NE(ctx.notes()["dmma_tma_path"].find("after copying"), std::string::npos) << ctx.notes()["dmma_tma_path"];
  EXPECT_EQ(ctx.notes()["dmma_tma_copies"], copies) << v.info.name << " " << p.shape.str();
}

// dmma_tma on operands the TMA cannot describe as stored, which its rule copies first where the copy pays
// (gemm/dmma_shapes.hpp, tma_copy_factor): odd leading dimensions (both operands, or A alone with padding) in all
// four op combinations, beta 0 over a poisoned C and beta != 0, twice per product on one context; then A and B one
// double past a 16-byte boundary with even leading dimensions. The note dmma_tma_copies names what was copied.
TEST(DmmaTmaCopies, OperandsTheTmaCannotDescribeAreCopiedFirst) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  KS_VARIANT_OR_SKIP(v, "dmma_tma");
  // 1001^3: lda and ldb odd, both copied. 1000 x 1100 x 900 with lda one past A's rows (odd: copied), ldb two past
  // B's (even) and ldc 1003.
  for (const bool both : {true, false})
    for (int o = 0; o < 4; ++o) {
      const GemmShape base = both ? GemmShape{1001, 1001, 1001} : GemmShape{1000, 1100, 900, 1001, 902, 1003};
      const GemmProblem p = make_problem(base.with_ops(ops_of(o).a, ops_of(o).b), 1.25, both ? 0.0 : 0.5, choose_seed());
      const GemmShape& sh = p.shape;
      auto named = [](const char* name, int rows, int cols, int ld) {
        return std::string(name) + " (" + std::to_string(rows) + " x " + std::to_string(cols) + ", ld " +
               std::to_string(ld) + " -> " + std::to_string((rows + 15) / 16 * 16) + ")";
      };
      std::string copies = named("A", sh.a_rows(), sh.a_cols(), sh.lda);
      if (both) copies += ", " + named("B", sh.b_rows(), sh.b_cols(), sh.ldb);
      std::string why;
      if (!rule_copies(sh, static_cast<long long>(sh.M) * sh.K + (both ? static_cast<long long>(sh.K) * sh.N : 0), &why))
        GTEST_SKIP() << "dmma_tma's rule does not copy " << sh.str() << " on this GPU: " << why;
      Stream stream;
      ExecContext ctx(stream.get());
      Runner runner(*v, Mode::Device, p, ctx);
      for (int run = 0; run < 2; ++run) {
        runner.reset_output();
        runner.run();
        const GemmCheck c = validate(p, runner.result());
        EXPECT_TRUE(c.ok) << sh.str() << " run " << run << ": " << c.report;
        expect_copied_run(*v, p, ctx, copies);
      }
    }
  // Even leading dimensions, A and B 8 bytes past a 16-byte boundary.
  const GemmProblem p = make_problem(GemmShape{1024, 1024, 1024}, -0.75, 0.0, choose_seed());
  std::string why;
  if (!rule_copies(p.shape, 2LL * 1024 * 1024, &why)) GTEST_SKIP() << "dmma_tma's rule does not copy here: " << why;
  Stream stream;
  ExecContext ctx(stream.get());
  const GemmCheck check = run_offset(*v, p, ctx, 1, 1, 0);
  EXPECT_TRUE(check.ok) << check.report;
  expect_copied_run(*v, p, ctx, "A (1024 x 1024, ld 1024 -> 1024), B (1024 x 1024, ld 1024 -> 1024)");
}
#endif

}  // namespace
}  // namespace ks::gemm

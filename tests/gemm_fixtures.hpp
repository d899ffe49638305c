// What the DGEMM test programs share: running a variant once in a mode from a poisoned C, skipping a variant this
// GPU is too old for, and problems built once per process so that their Eigen reference is computed once for
// every variant and mode checked against it.
#pragma once

#include "common/random.hpp"
#include "gemm/gemm.hpp"
#include "gemm/host/modes.hpp"
#include "gemm/host/problem.hpp"
#include "gpu_test.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ks::gemm {

inline void PrintTo(Mode m, std::ostream* os) { *os << to_string(m); }

// The variants a test runs where any correct product will do: kTrusted, one outside the ladder's teaching steps
// (cuBLAS), and kFast, the build's fastest step for a large product (dmma). The HIP build has neither cuBLAS nor
// the FP64 tensor cores: the register-tiled step serves as both there.
#if defined(KS_HIP)
inline constexpr const char* kTrusted = "register_tiled";
inline constexpr const char* kFast = "register_tiled";
#else
inline constexpr const char* kTrusted = "cublas";
inline constexpr const char* kFast = "dmma";
#endif

// `v` in `mode` on `p` once, from a poisoned C, checked against the reference.
inline GemmCheck run_once(const GemmVariant& v, Mode mode, const GemmProblem& p) {
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(v, mode, p, ctx);
  runner.reset_output();
  runner.run();
  return validate(p, runner.result());
}

// `v` on `p` in device mode `runs` times on one context, each from a poisoned C and checked against the
// reference (the repeats catch state a launch leaves behind for the next: flags, counters), with the context's
// device scratch poisoned (NaN) between runs, so that a partial read before its writer stored it cannot pass for
// the previous run's identical one, and the context's zeroed counters checked to be zero again after each run (as
// ExecContext::zeroed_counters asks of the kernels that use them); where `note` is given, every launch's note of
// that name must start with `prefix`. Returns the last launch's notes.
inline std::map<std::string, std::string> expect_repeated_runs(const GemmVariant& v, const GemmProblem& p, int runs,
                                                               const char* note = nullptr,
                                                               const std::string& prefix = {}) {
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(v, Mode::Device, p, ctx);
  std::map<std::string, std::string> notes;
  for (int run = 0; run < runs; ++run) {
    runner.reset_output();
    runner.run();
    const GemmCheck c = validate(p, runner.result());
    EXPECT_TRUE(c.ok) << v.info.name << " " << p.shape.str() << " run " << run << ": " << c.report;
    if (note != nullptr) {
      EXPECT_EQ(ctx.notes()[note].rfind(prefix, 0), 0u) << v.info.name << " " << p.shape.str() << ": " << ctx.notes()[note];
    }
    notes = ctx.notes();
    const std::vector<unsigned> counters = test::zeroed_counters_now(ctx);
    EXPECT_EQ(static_cast<std::size_t>(std::count(counters.begin(), counters.end(), 0u)), counters.size())
        << v.info.name << " " << p.shape.str() << " run " << run << ": counters left non-zero";
    ctx.begin_launch();
    // All of the scratch the next launch starts from (whole 256-byte units, so that taking it allocates nothing).
    if (const std::size_t bytes = ctx.device_scratch_room() / 256 * 256; bytes > 0) {
      CUDA_CHECK(cudaMemsetAsync(ctx.device_scratch(bytes), 0xff, bytes, ctx.stream()));
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    }
  }
  return notes;
}

// The seed of this process's shared problems: KS_SEED, else a fresh one; every failure's report prints it.
inline std::uint64_t process_seed() {
  static const std::uint64_t seed = choose_seed();
  return seed;
}

// The problem `make` builds, built once per process under `key` and then shared by every test that asks for it
// (its inputs must not change after the first use).
inline const GemmProblem& shared_problem(const std::string& key, const std::function<GemmProblem()>& make) {
  static std::map<std::string, GemmProblem> problems;
  auto it = problems.find(key);
  if (it == problems.end()) it = problems.emplace(key, make()).first;
  return it->second;
}

}  // namespace ks::gemm

// The registered variant `name`, or a skip where this GPU is too old for it.
#define KS_VARIANT_OR_SKIP(v, name)                                                                            \
  const ::ks::gemm::GemmVariant* v = ::ks::gemm::registry().find(name);                                        \
  ASSERT_NE(v, nullptr) << name;                                                                               \
  if (::ks::test::current_cc() < v->info.min_cc) GTEST_SKIP() << name << " needs compute capability " << v->info.min_cc

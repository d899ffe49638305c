// GPU tests skip, with the reason, where no GPU is visible (CI, development machines).
#pragma once

#include "common/device_info.hpp"
#include "common/exec_context.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#define KS_REQUIRE_GPU()                                              \
  do {                                                                \
    std::string ks_why_;                                              \
    if (!::ks::gpu_available(&ks_why_)) GTEST_SKIP() << ks_why_;      \
  } while (0)

namespace ks::test {

// The current device's compute capability as 10 * major + minor.
inline int current_cc() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  const DeviceFacts d = query_device(dev);
  return d.cc();
}

// The context's zeroed counters as they stand once the work queued on its stream is done: the kernels that use them
// must leave them zero (ExecContext::zeroed_counters). Empty before the context's first request.
inline std::vector<unsigned> zeroed_counters_now(ExecContext& ctx) {
  std::vector<unsigned> words(ctx.zeroed_counter_count());
  if (words.empty()) return words;
  CUDA_CHECK(cudaMemcpyAsync(words.data(), ctx.zeroed_counters(words.size()), words.size() * sizeof(unsigned),
                             cudaMemcpyDeviceToHost, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return words;
}

// KS_SMALL_SIZES set (tests/sanitize_gpu.sh): the GPU tests keep to small sizes, so that they finish under
// compute-sanitizer, which slows kernels by one to two orders of magnitude.
inline bool small_sizes_only() { return std::getenv("KS_SMALL_SIZES") != nullptr; }

// `sizes` without the ones above `limit` when small_sizes_only().
template <class C>
C small_if_asked(C sizes, std::size_t limit = 4097) {
  if (!small_sizes_only()) return sizes;
  C out;
  for (const auto& n : sizes)
    if (static_cast<std::size_t>(n) <= limit) out.insert(out.end(), n);
  return out;
}

// Every numbered entry the build found (generated/ladder/<family>_entries.inc) declares a variant, no name is
// declared twice, nothing is declared outside an entry, and the registry lists the variants in the tree's order.
template <class Registry>
void expect_ladder_declared(const Registry& registry, const std::vector<std::string>& entries) {
  ASSERT_FALSE(entries.empty());
  for (const std::string& p : registry.problems(entries)) ADD_FAILURE() << p;
  int last_step = -1;
  for (const auto* v : registry.all()) {
    EXPECT_GE(registry.place(*v).step, last_step) << v->info.name;
    last_step = registry.place(*v).step;
  }
}

// gtest parameter names allow only [A-Za-z0-9_].
inline std::string sanitize(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace ks::test

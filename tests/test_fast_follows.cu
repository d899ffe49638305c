// The fast reductions launch with programmatic dependent launch on sm_90 and ask the L2 for their first loads
// before they wait for the kernel before them (reduce/13_fast.cu, follow_predecessor), so those lines can reach
// the L2 while that kernel is still writing them. Here the kernel before is a writer that lets its dependents
// launch at once, spins for tens of microseconds and only then writes the input: every reduction must return
// the sum of what the writer wrote, never of what the buffer held before.
#include "reduce/reduce.hpp"
#include "reduce/runner.hpp"
#include "gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace ks::reduce {
namespace {

// x[i] = base + i % 7 for i < n, after about `spin` clock cycles; its dependents may launch before it starts.
template <class T>
__global__ void late_writer(T* x, std::size_t n, T base, long long spin) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x[i] = base + static_cast<T>(i % 7);
}

// The sum late_writer leaves: n base + sum of i % 7 (exact in double for these n and bases).
double written_sum(std::size_t n, double base) {
  const std::size_t whole = n / 7, rest = n % 7;
  return static_cast<double>(n) * base + static_cast<double>(whole * 21 + rest * (rest - 1) / 2);
}

template <class T>
void check_follows(DType t, const std::string& variant) {
  const ReduceVariant& v = *registry().find(variant);
  Stream stream;
  ExecContext ctx(stream.get());
  DeviceBuffer<std::int64_t> out(1);
  // One block of 256 and of 1024 threads, one cluster, the grid in one step and over several (grid-stride).
  const std::size_t lengths[] = {1000, 3 * 1024 + 5, 40000 + 1, (std::size_t(1) << 18) + 3, (std::size_t(1) << 22) + 9};
  DeviceBuffer<T> x(lengths[4]);
  int round = 0;
  for (std::size_t n : lengths) {
    // Three rounds per length, each writing values the round before did not.
    for (int r = 0; r < 3; ++r, ++round) {
      const T base = static_cast<T>(round % 2 == 0 ? round + 1 : -round);
      late_writer<T><<<8, 256, 0, stream.get()>>>(x.data(), n, base, 60000);
      CUDA_CHECK_LAUNCH();
      run(v, ReduceCall{t, Op::Sum, x.data(), n, out.data(), kDefaultBlock}, ctx);
      const Value got = read_value(t, out.data(), stream.get());
      const double want = written_sum(n, static_cast<double>(base));
      const double value = t == DType::F64 ? got.f : static_cast<double>(got.i);
      ASSERT_EQ(value, want) << variant << " " << to_string(t) << " n " << n << " round " << r;
    }
  }
}

class FastFollows : public ::testing::TestWithParam<std::string> {};

TEST_P(FastFollows, SumsWhatTheKernelBeforeWrote) {
  KS_REQUIRE_GPU();
  check_follows<double>(DType::F64, GetParam());
  check_follows<std::int32_t>(DType::I32, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Variants, FastFollows,
                         ::testing::Values("fast", "fast_compensated", "fast_grid", "fast_grid_counted", "fast_cluster",
                                           "fast_no_prefetch"));

}  // namespace
}  // namespace ks::reduce

// Kernels that launch with programmatic dependent launch on sm_90 may start while the kernel before them in the
// stream is still running, and must not read what it writes before it has finished: the fast reductions, which also
// ask the L2 for their first loads before they wait (reduce/13_fast.cu, follow_predecessor), and dmma_tma's TMA
// kernels (gemm/08_dmma_tma.cu), whose launch overlaps the tail of the kernel before. Here the kernel before is a
// writer that lets its dependents launch at once, spins for tens of microseconds and only then writes the input:
// every result must be that of what the writer wrote, never of what the buffers held before.
#include "gemm/gemm.hpp"
#include "reduce/reduce.hpp"
#include "reduce/runner.hpp"
#include "gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ks {
namespace {

// x[i] = base + (i / period) % 7 for i < n.
template <class T>
struct Fill {
  T* x = nullptr;
  std::size_t n = 0, period = 1;
  T base{};
};

// Writes f, then g, after about `spin` clock cycles; its dependents may launch before it starts.
template <class T>
__global__ void late_writer(Fill<T> f, Fill<T> g, long long spin) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  const Fill<T> fills[2] = {f, g};
  for (const Fill<T>& h : fills)
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < h.n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
      h.x[i] = h.base + static_cast<T>(i / h.period % 7);
}

template <class T>
void write_late(cudaStream_t stream, Fill<T> f, Fill<T> g = {}) {
  late_writer<T><<<8, 256, 0, stream>>>(f, g, 60000);
  CUDA_CHECK_LAUNCH();
}

// Sum of base + i % 7 over i < n (exact in double for these n and bases).
double written_sum(std::size_t n, double base) {
  const std::size_t whole = n / 7, rest = n % 7;
  return static_cast<double>(n) * base + static_cast<double>(whole * 21 + rest * (rest - 1) / 2);
}

template <class T>
void check_reduction_follows(reduce::DType t, const std::string& variant) {
  using namespace reduce;
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
      write_late<T>(stream.get(), {x.data(), n, 1, base});
      run(v, ReduceCall{t, Op::Sum, x.data(), n, out.data(), kDefaultBlock}, ctx);
      const Value got = read_value(t, out.data(), stream.get());
      const double value = t == DType::F64 ? got.f : static_cast<double>(got.i);
      ASSERT_EQ(value, written_sum(n, static_cast<double>(base))) << variant << " " << to_string(t) << " n " << n
                                                                   << " round " << r;
    }
  }
}

class FastFollows : public ::testing::TestWithParam<std::string> {};

TEST_P(FastFollows, SumsWhatTheKernelBeforeWrote) {
  KS_REQUIRE_GPU();
  check_reduction_follows<double>(reduce::DType::F64, GetParam());
  check_reduction_follows<std::int32_t>(reduce::DType::I32, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Variants, FastFollows,
                         ::testing::Values("fast", "fast_compensated", "fast_grid", "fast_grid_counted", "fast_cluster",
                                           "fast_no_prefetch"));

// dmma_tma's schedules (whole tiles, stream-K, split-K in the tree and in clusters) on A(i, k) = a + k % 7 and
// B(k, j) = b + j % 7 written late, so that C(i, j) = (b + j % 7) (K a + sum of k % 7): exact in double.
TEST(DmmaTmaFollows, MultipliesWhatTheKernelBeforeWrote) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernels run on compute capability 9.0";
  Stream stream;
  ExecContext ctx(stream.get());
  struct Shape {
    const char* variant;
    int M, N, K;
  };
  // The rule's 128 whole tiles, stream-K's last wave, 16 tiles split 8 ways in the tree; 2 tiles split 60 ways in
  // clusters (the 128 x 128 kernel).
  for (const Shape s : {Shape{"dmma_tma", 1024, 1024, 1024}, Shape{"dmma_tma", 2900, 3000, 300},
                        Shape{"dmma_tma", 256, 256, 16384}, Shape{"dmma_tma_128x128_k32", 200, 100, 30000}}) {
    const gemm::GemmVariant& v = *gemm::registry().find(s.variant);
    DeviceBuffer<double> A(static_cast<std::size_t>(s.M) * s.K), B(static_cast<std::size_t>(s.K) * s.N),
        C(static_cast<std::size_t>(s.M) * s.N);
    std::vector<double> c(static_cast<std::size_t>(s.M) * s.N);
    for (int r = 0; r < 3; ++r) {
      const double a = r + 1, b = 2 - r;
      write_late<double>(stream.get(), {A.data(), A.size(), static_cast<std::size_t>(s.M), a},
                         {B.data(), B.size(), static_cast<std::size_t>(s.K), b});
      const gemm::GemmArgs g{.M = s.M, .N = s.N, .K = s.K, .A = A.data(), .lda = s.M, .B = B.data(), .ldb = s.K,
                             .C = C.data(), .ldc = s.M};
      gemm::run(v, g, ctx);
      CUDA_CHECK(cudaMemcpyAsync(c.data(), C.data(), c.size() * sizeof(double), cudaMemcpyDeviceToHost, stream.get()));
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      const double column = written_sum(static_cast<std::size_t>(s.K), a);
      for (int j = 0; j < s.N; ++j)
        for (int i = 0; i < s.M; ++i)
          ASSERT_EQ(c[i + static_cast<std::size_t>(j) * s.M], (b + j % 7) * column)
              << s.variant << " " << s.M << " x " << s.N << " x " << s.K << " round " << r << ": C(" << i << ", " << j << ")";
    }
  }
}

}  // namespace
}  // namespace ks

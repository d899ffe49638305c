// The tutorial's elementwise y = a*x^2 + b*x + c on the host, single thread and OpenMP: the CPU's side of the
// bandwidth ceiling (bytes read + written over the median time).
#include "bench/ceilings.hpp"

#include "bench/host_timing.hpp"

#include <vector>

namespace ks::bench {

namespace {
double elementwise_gbs(const char* name, const std::vector<float>& x, std::vector<float>& y, bool parallel,
                      int repetitions) {
  const float a = 0.5f, b = 0.25f, c = 1.0f;
  const long n = static_cast<long>(x.size());
  const TimingStats t = time_on_host(name, {.warmup = 1, .repetitions = repetitions}, [&] {
    if (parallel) {
#pragma omp parallel for
      for (long i = 0; i < n; ++i) y[i] = a * x[i] * x[i] + b * x[i] + c;
    } else {
      for (long i = 0; i < n; ++i) y[i] = a * x[i] * x[i] + b * x[i] + c;
    }
  });
  return 2.0 * n * sizeof(float) / (t.median_ms * 1e6);
}
}  // namespace

void measure_host_ceilings(Ceilings& c, int repetitions, std::size_t n) {
  std::vector<float> x(n, 1.5f), y(n);
  c.host_single_thread_gbs = elementwise_gbs("host_elementwise_single_thread", x, y, false, repetitions);
  c.host_openmp_gbs = elementwise_gbs("host_elementwise_openmp", x, y, true, repetitions);
}

}  // namespace ks::bench

// Host work timed by Google Benchmark: the host reference rows (Eigen DGEMM, the host sums) and the host
// ceilings are CPU benchmarks, its home ground. It picks the iterations of each repetition (enough for
// min_time_s, as its --benchmark_min_time), repeats, and times real and CPU time per iteration; each repetition
// becomes one sample of a TimingStats (median, spread, noise), the statistics the GPU rows report. GPU work is
// timed by CUDA events instead (common/timing.hpp): Google Benchmark's timers measure the host, not the stream.
#pragma once

#include "common/timing.hpp"

#include <functional>
#include <string>

namespace ks::bench {

struct HostTiming {
  int warmup = 0;          // untimed calls before Google Benchmark's own
  int repetitions = 3;     // its repetitions: one sample each
  double min_time_s = 0.05;  // each repetition runs at least this long (whole iterations; one at the least)
};

// Times `run` as the benchmark `name`. An exception from `run` is rethrown after the benchmark stops.
TimingStats time_on_host(const std::string& name, const HostTiming& t, const std::function<void()>& run);

}  // namespace ks::bench

#include "bench/host_timing.hpp"

#include <benchmark/benchmark.h>

#include <exception>
#include <stdexcept>
#include <vector>

namespace ks::bench {
namespace {

// Collects each repetition's real and CPU time per iteration, in ms; prints nothing.
class Collector : public benchmark::BenchmarkReporter {
 public:
  std::vector<double> real_ms, cpu_ms;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.iterations <= 0) continue;
      const double to_ms = 1e3 / benchmark::GetTimeUnitMultiplier(r.time_unit);
      real_ms.push_back(r.GetAdjustedRealTime() * to_ms);
      cpu_ms.push_back(r.GetAdjustedCPUTime() * to_ms);
    }
  }
};

}  // namespace

TimingStats time_on_host(const std::string& name, const HostTiming& t, const std::function<void()>& run) {
  if (t.repetitions < 1 || t.warmup < 0 || !(t.min_time_s > 0))
    throw std::invalid_argument("time_on_host: repetitions >= 1, warmup >= 0 and min_time_s > 0 needed");
  for (int i = 0; i < t.warmup; ++i) run();
  std::exception_ptr failure;
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark(name.c_str(),
                               [&](benchmark::State& st) {
                                 for (auto _ : st) {
                                   try {
                                     run();
                                   } catch (...) {
                                     failure = std::current_exception();
                                     st.SkipWithError("the timed call threw");
                                     break;
                                   }
                                 }
                               })
      ->Repetitions(t.repetitions)
      ->MinTime(t.min_time_s)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector, ".");  // registered just now: this one alone
  benchmark::ClearRegisteredBenchmarks();
  if (failure) std::rethrow_exception(failure);
  if (collector.real_ms.empty()) throw std::runtime_error("time_on_host: Google Benchmark reported no run of " + name);
  TimingStats stats = TimingStats::from_samples(collector.real_ms);
  stats.cpu_ms = TimingStats::from_samples(collector.cpu_ms).median_ms;
  return stats;
}

}  // namespace ks::bench

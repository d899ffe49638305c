#include "bench/kbench/context.hpp"

#include "common/build_info.hpp"
#include "common/cuda_check.hpp"

#include <ctime>
#include <fstream>

#if defined(KS_HIP)
#include <rocprim/rocprim_version.hpp>  // the reduction anchor's version, for the results file
#endif

#if !defined(KS_HIP)
namespace ks::gemm {
extern const char* const kCublasConfig;  // gemm/00_cublas.cpp
}
#endif

namespace ks::bench {
namespace {

std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The vendor DGEMM's version; the HIP build has none.
std::string cublas_version() {
#if defined(KS_HIP)
  return "";
#else
  int major = 0, minor = 0, patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
#endif
}

void write_gpu(json::Writer& w, const DeviceFacts& d, const GpuState& g) {
  w.begin_object("gpu")
      .value("name", d.name)
      .value("index", d.index)
      .value("pci_bus_id", d.pci_bus_id)
      .value("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor))
      .value("sm_count", d.sm_count)
      .value("sm_clock_peak_mhz", d.sm_clock_khz / 1000)
      .value("memory_clock_peak_mhz", d.mem_clock_khz / 1000)
      .value("theoretical_bandwidth_gbs", d.theoretical_bandwidth_gbs())
      .value("l2_bytes", d.l2_bytes)
      .value("global_memory_bytes", static_cast<std::uint64_t>(d.global_mem_bytes));
  w.begin_object("at_start");
  if (g.known) {
    w.value("sm_clock_mhz", static_cast<int>(g.sm_clock_mhz))
        .value("memory_clock_mhz", static_cast<int>(g.memory_clock_mhz))
        .value("temperature_c", static_cast<int>(g.temperature_c))
        .value("power_w", g.power_w)
        .value("slowdown_reasons", slowdown_reasons(g.throttle_reasons));
  } else {
    w.value("unknown", g.why);
  }
  w.end_object().end_object();
}

void write_ceilings(json::Writer& w, const Ceilings& c) {
  w.begin_object("ceilings");
  for (const CeilingField& f : kCeilingFields) w.value(f.key, c.*f.value);
  w.end_object();
}

void write_timing(json::Writer& w, const RunContext& c) {
  const TimingOptions& t = c.timing;
  w.begin_object("timing")
      .value("method", "CUDA events around samples queued behind a blocking kernel; warm-up, then samples until "
                       "stddev/median <= noise_target or time_budget_s is spent (at least min_repetitions); "
                       "launches under batch_below_ms timed in batches; the row's time is the median per launch; with "
                       "interleave, a row's samples alternate with its anchor's, and its vs_anchor is the ratio of "
                       "the two medians so taken")
      .value("warmup", t.warmup)
      .value("min_repetitions", t.min_repetitions)
      .value("noise_target", t.noise_target)
      .value("time_budget_s", t.time_budget_s)
      .value("batch_below_ms", t.batch_below_ms)
      .value("blocking", t.blocking)
      .value("graph_batches", t.graph_batches)
      .value("gemm_l2", c.gemm_l2)
      .value("reduce_l2", c.reduce_l2)
      .value("interleave", c.interleave)
      .end_object();
}

}  // namespace

RunContext collect_context(const DeviceFacts& d, const GpuState& at_start, const Plan& plan,
                           const std::string& command_line) {
  RunContext c;
  c.date = utc_now();
  c.command_line = command_line;
  c.host_cpu = host_cpu();
  c.gpu = d;
  c.at_start = at_start;
  c.cublas_version = cublas_version();
  c.timing = plan.timing;
  c.gemm_l2 = plan.gemm_cold ? "cold" : "warm";
  c.reduce_l2 = plan.reduce_cold ? "cold" : "warm";
  c.interleave = plan.interleave;
  return c;
}

void write_context(json::Writer& w, const RunContext& c) {
  const ImageVerdict v = image_for_device(compiled_images(), c.gpu);
  w.begin_object("context")
      .value("kbench_version", KS_VERSION)
      .value("git_revision", KS_GIT_REVISION)
      .value("build_type", KS_BUILD_TYPE)
      .value("date", c.date)
      .value("command_line", c.command_line)
      .value("host_cpu", c.host_cpu);
  write_gpu(w, c.gpu, c.at_start);
  w.begin_object("software");
#if defined(KS_HIP)
  w.value("hip_driver", std::to_string(c.gpu.driver_version))
      .value("hip_runtime", std::to_string(c.gpu.runtime_version))
      .value("rocprim_version", std::to_string(ROCPRIM_VERSION_MAJOR) + "." + std::to_string(ROCPRIM_VERSION_MINOR) +
                                    "." + std::to_string(ROCPRIM_VERSION_PATCH));
#else
  w.value("cuda_driver", format_version(c.gpu.driver_version))
      .value("cuda_runtime", format_version(c.gpu.runtime_version))
      .value("cublas_version", c.cublas_version)
      .value("cublas_config", gemm::kCublasConfig);
#endif
  w.end_object();
  w.begin_object("binary")
      .value("cuda_architectures", KS_CUDA_ARCHITECTURES_SETTING)
      .value("images", KS_CUDA_ARCHS)
      .value("image_for_gpu", v.text)
      .end_object();
  if (c.ceilings) write_ceilings(w, *c.ceilings);
  write_timing(w, c);
  if (!c.interrupted.empty()) w.value("interrupted", c.interrupted);
  if (!c.stopped_early.empty()) w.value("stopped_early", c.stopped_early);
  w.end_object();
}

}  // namespace ks::bench

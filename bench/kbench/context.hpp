// The context of a run, recorded with its results: the GPU and its state at the start, the software, what the
// binary embeds, the measured ceilings, the timing options, the host, the revision and the command line, and
// whether the run was interrupted or stopped early.
#pragma once

#include "bench/ceilings.hpp"
#include "bench/clocks.hpp"
#include "bench/kbench/plan.hpp"
#include "common/device_info.hpp"
#include "common/json.hpp"

#include <optional>
#include <string>

namespace ks::bench {

struct RunContext {
  std::string date;          // ISO 8601, UTC
  std::string command_line;
  std::string host_cpu;
  DeviceFacts gpu;
  GpuState at_start;
  std::string cublas_version;
  std::optional<Ceilings> ceilings;  // absent with --skip-ceilings
  TimingOptions timing;
  std::string gemm_l2, reduce_l2;  // warm or cold
  bool interleave = false;         // --interleave
  std::string interrupted;   // the signal's name, when a signal stopped the run
  std::string stopped_early; // why the remaining rows were not run
};

// What can be read before any row runs (needs the device).
RunContext collect_context(const DeviceFacts& d, const GpuState& at_start, const Plan& plan,
                           const std::string& command_line);

void write_context(json::Writer& w, const RunContext& c);

}  // namespace ks::bench

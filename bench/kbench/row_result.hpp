// What one benchmark row measured: its axes (written as fields of the result) and its result.
#pragma once

#include "common/timing.hpp"

#include <limits>
#include <map>
#include <string>

namespace ks::bench {

// The axes of a row. Strings left empty and numbers left at -1 do not apply to the row's family.
struct RowAxes {
  std::string family;   // gemm, reduce, integral, host
  std::string variant;  // registry name, or the host baseline's name
  std::string mode;     // GEMM launch mode
  std::string dtype, op;
  long long M = -1, N = -1, K = -1, lda = -1, ldb = -1, ldc = -1;
  double alpha = std::numeric_limits<double>::quiet_NaN(), beta = std::numeric_limits<double>::quiet_NaN();
  long long n = -1;
  int block = -1;
  std::string distribution;
  std::string group;    // rows of one group share an anchor (the anchor row runs first)
  bool anchor = false;
};

struct RowResult {
  std::string name;
  RowAxes axes;
  std::string status = "not_run";  // ok, failed, skipped, not_run
  std::string error;               // why, when not ok
  TimingStats timing;
  std::string rate_unit;           // TFLOP/s, GB/s, Gpoints/s
  double rate = 0;
  double vs_anchor = -1;           // anchor's median / this row's median; < 0: none
  double of_ceiling = -1;          // rate / the measured ceiling; < 0: none
  std::map<std::string, double> extra;        // graph_setup_ms, rel_error, ...
  std::map<std::string, std::string> labels;  // pipelined_plan, pageable_method, ...
  // The GPU around the row (NVML).
  unsigned sm_clock_before_mhz = 0, sm_clock_after_mhz = 0;
  bool throttled = false;
  std::string throttle;
  bool ok() const { return status == "ok"; }
};

}  // namespace ks::bench

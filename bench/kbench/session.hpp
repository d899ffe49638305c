// A run of rows, and what happens around each: SIGINT/SIGTERM let the row being measured finish and mark the rest
// not run; a sticky CUDA error (the context is lost) fails its row and stops the run; NVML is read before and
// after every row (a row during which the GPU throttled is flagged); each row's ratio to its group's anchor,
// measured earlier in the same process.
#pragma once

#include "bench/clocks.hpp"
#include "bench/kbench/plan.hpp"
#include "bench/kbench/row_env.hpp"
#include "bench/kbench/rows.hpp"
#include "bench/pattern.hpp"
#include "common/device_info.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ks::bench {

// Installs the SIGINT/SIGTERM handlers for its lifetime. A second signal kills as usual.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
};
int interrupting_signal();  // the signal received under a SignalGuard, 0 if none
const char* signal_name(int sig);

class Session {
 public:
  // `progress`: print a line per row on stderr.
  Session(const Plan& p, const DeviceFacts& d, bool progress);

  RowEnv env;
  Nvml nvml;
  std::optional<Pattern> fault;  // KS_BENCH_FAULT: rows matching it launch a trapping kernel first
  int total = 0;                    // rows in the run, for the progress lines

  // Runs one row (the guards above) and keeps its result.
  void run_row(const Row& row);
  const std::vector<RowResult>& results() const { return results_; }
  bool failed() const;
  const std::string& stopped() const { return stopped_; }  // why the remaining rows were not run

 private:
  void measure(const Row& row, RowResult& r);
  void relate_to_anchor(RowResult& r);
  bool progress_;
  std::map<std::string, double> anchor_ms_;  // group -> anchor's median
  std::vector<RowResult> results_;
  std::string stopped_;
  int started_ = 0;
};

}  // namespace ks::bench

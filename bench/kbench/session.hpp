// What every row of a run shares, and what happens around each row: SIGINT/SIGTERM let the row being measured
// finish and mark the rest not run; a sticky CUDA error (the context is lost) fails its row and stops the run;
// NVML is read before and after every row (a row during which the GPU throttled is flagged); each row's ratio
// to its group's anchor, measured earlier in the same process.
#pragma once

#include "bench/ceilings.hpp"
#include "bench/clocks.hpp"
#include "bench/kbench/options.hpp"
#include "bench/kbench/plan.hpp"
#include "bench/kbench/rows.hpp"
#include "common/device_info.hpp"
#include "common/exec_context.hpp"
#include "common/timing.hpp"

#include <climits>
#include <map>
#include <optional>
#include <regex>
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
  Session(const RunOptions& o, const Plan& p, const DeviceFacts& d);

  const RunOptions& opt;
  const Plan& plan;
  const DeviceFacts device;
  Stream stream;
  ExecContext ctx{stream.get()};
  L2Flusher flusher;
  Ceilings ceilings;
  Nvml nvml;
  std::optional<std::regex> fault;  // KS_BENCH_FAULT: rows matching it launch a trapping kernel first
  int total = 0;                    // rows in the run, for the progress lines

  // Times `work` with the run's timing options; at most `max_repetitions` samples.
  TimingStats time(const StreamWork& work, int max_repetitions = INT_MAX) const;

  // Validates once (unless --no-validate), times, validates again (the timed runs must not have disturbed the
  // result). `runner` has reset_output() and run(); `check()` returns something with `ok` and `report`. Returns
  // nothing when a check failed: the row is then marked failed with the report.
  template <class Runner, class Check>
  std::optional<TimingStats> checked_timing(RowResult& r, Runner& runner, Check&& check, const StreamWork& work,
                                            int max_repetitions = INT_MAX) {
    auto checked = [&](const char* when) {
      if (opt.no_validate) return true;
      runner.reset_output();
      runner.run();
      const auto c = check();
      if (!c.ok) fail(r, std::string("validation failed ") + when + ": " + c.report);
      return c.ok;
    };
    if (!checked("before timing")) return std::nullopt;
    TimingStats t = time(work, max_repetitions);
    if (!checked("after timing")) return std::nullopt;
    return t;
  }

  // Records `t` as the row's measurement: the rate at the median (rate_numerator / median seconds), the ratio to
  // the group's anchor, and the fraction of `ceiling` (same unit as the rate; 0: none applies).
  void report(RowResult& r, const TimingStats& t, const std::string& unit, double rate_numerator, double ceiling);
  void fail(RowResult& r, const std::string& why);
  void skip(RowResult& r, const std::string& why);

  // Runs one row (the guards above) and keeps its result.
  void run_row(const Row& row);
  const std::vector<RowResult>& results() const { return results_; }
  bool failed() const { return failed_; }
  const std::string& stopped() const { return stopped_; }  // why the remaining rows were not run

 private:
  void measure(const Row& row, RowResult& r);
  std::map<std::string, double> anchor_ms_;  // group -> anchor's median
  std::vector<RowResult> results_;
  std::string stopped_;
  bool failed_ = false;
  int started_ = 0;
};

}  // namespace ks::bench

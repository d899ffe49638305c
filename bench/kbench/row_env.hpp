// What every row measures with: the plan, the device, one stream and execution context, the L2 flusher and the
// measured ceilings; the timing engine with the run's options, validation around the timed runs, and how a row
// records its measurement, failure or skip. Rows (rows.hpp) see only this; the session (session.hpp) owns it and
// relates the rows to each other (anchors, signals, a lost context).
#pragma once

#include "bench/ceilings.hpp"
#include "bench/kbench/plan.hpp"
#include "bench/kbench/row_result.hpp"
#include "common/device_info.hpp"
#include "common/exec_context.hpp"
#include "common/timing.hpp"

#include <climits>
#include <optional>
#include <string>

namespace ks::bench {

class RowEnv {
 public:
  RowEnv(const Plan& p, const DeviceFacts& d);

  const Plan& plan;
  const DeviceFacts device;
  Stream stream;
  ExecContext ctx{stream.get()};
  L2Flusher flusher;
  Ceilings ceilings;

  // Times `work` with the run's timing options; at most `max_repetitions` samples.
  TimingStats time(const StreamWork& work, int max_repetitions = INT_MAX) const;
  // --interleave: times `work` and its group's anchor (`anchor`, the same problem) in turn (time_interleaved) and
  // returns the row's measurement; the anchor's goes into the row's extras (interleaved_anchor_ms and _noise,
  // vs_anchor_rounds: the median over the rounds of the anchor's sample / the row's), from which the session
  // takes the row's ratio.
  TimingStats time_beside(RowResult& r, const StreamWork& work, const StreamWork& anchor,
                          int max_repetitions = INT_MAX) const;

  // Validates once (unless the plan skips validation), times, validates again (the timed runs must not have
  // disturbed the result). `runner` has reset_output() and run(); `check()` returns something with `ok` and
  // `report`. Returns nothing when a check failed: the row is then marked failed with the report. With `anchor`,
  // timed by time_beside().
  template <class Runner, class Check>
  std::optional<TimingStats> checked_timing(RowResult& r, Runner& runner, Check&& check, const StreamWork& work,
                                            int max_repetitions = INT_MAX, const StreamWork* anchor = nullptr) const {
    auto checked = [&](const char* when) {
      if (plan.validation == Validation::None) return true;
      runner.reset_output();
      runner.run();
      const auto c = check();
      if (!c.ok) fail(r, std::string("validation failed ") + when + ": " + c.report);
      return c.ok;
    };
    if (!checked("before timing")) return std::nullopt;
    TimingStats t = anchor ? time_beside(r, work, *anchor, max_repetitions) : time(work, max_repetitions);
    if (!checked("after timing")) return std::nullopt;
    return t;
  }

  // Records `t` as the row's measurement: the rate at the median (rate_numerator / median seconds) and the fraction
  // of `ceiling` (same unit as the rate; 0: none applies). The ratio to the group's anchor is the session's.
  static void report(RowResult& r, const TimingStats& t, const std::string& unit, double rate_numerator,
                     double ceiling);
  static void fail(RowResult& r, const std::string& why);
  static void skip(RowResult& r, const std::string& why);
};

}  // namespace ks::bench

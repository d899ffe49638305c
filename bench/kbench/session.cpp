#include "bench/kbench/session.hpp"

#include "common/cuda_check.hpp"

#if !defined(KS_HIP)
#include <nvtx3/nvToolsExt.h>
#endif

#include <algorithm>
#include <csignal>
#include <cstdio>

namespace ks::bench {

void trap_kernel_launch(cudaStream_t stream);  // bench/fault.cu

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) {
  g_signal = sig;
  std::signal(sig, SIG_DFL);
}

// Each row an NVTX range, so that Nsight Systems shows which row a kernel belongs to. The HIP build has none.
struct NvtxRange {
#if defined(KS_HIP)
  explicit NvtxRange(const std::string&) {}
#else
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
#endif
};

}  // namespace

SignalGuard::SignalGuard() {
  g_signal = 0;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

SignalGuard::~SignalGuard() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

int interrupting_signal() { return g_signal; }
const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

RowEnv::RowEnv(const Plan& p, const DeviceFacts& d) : plan(p), device(d), flusher(d.index) {}

namespace {
TimingOptions capped(TimingOptions t, int max_repetitions) {
  t.max_repetitions = std::max(1, std::min(t.max_repetitions, max_repetitions));
  t.min_repetitions = std::min(t.min_repetitions, t.max_repetitions);
  return t;
}
}  // namespace

TimingStats RowEnv::time(const StreamWork& work, int max_repetitions) const {
  return time_on_stream(stream.get(), capped(plan.timing, max_repetitions), work);
}

TimingStats RowEnv::time_beside(RowResult& r, const StreamWork& work, const StreamWork& anchor,
                                int max_repetitions) const {
  // The anchor's sample first in each round: the row's sample then follows it, as its row follows the anchor's.
  std::vector<TimingStats> t = time_interleaved(stream.get(), capped(plan.timing, max_repetitions), {anchor, work});
  const TimingStats& a = t[0];
  std::vector<double> rounds;
  for (std::size_t i = 0; i < a.samples_ms.size(); ++i) rounds.push_back(a.samples_ms[i] / t[1].samples_ms[i]);
  r.extra["interleaved_anchor_ms"] = a.median_ms;
  r.extra["interleaved_anchor_noise"] = a.noise;
  r.extra["vs_anchor_rounds"] = TimingStats::from_samples(std::move(rounds)).median_ms;
  return std::move(t[1]);
}

void RowEnv::report(RowResult& r, const TimingStats& t, const std::string& unit, double rate_numerator,
                    double ceiling) {
  r.status = "ok";
  r.timing = t;
  r.rate_unit = unit;
  r.rate = rate_numerator / (t.median_ms / 1e3);
  if (ceiling > 0) r.of_ceiling = r.rate / ceiling;
}

void RowEnv::fail(RowResult& r, const std::string& why) {
  r.status = "failed";
  r.error = why;
}

void RowEnv::skip(RowResult& r, const std::string& why) {
  r.status = "skipped";
  r.error = why;
}

Session::Session(const Plan& p, const DeviceFacts& d, bool progress)
    : env(p, d), nvml(d.pci_bus_id), progress_(progress) {}

bool Session::failed() const {
  return std::any_of(results_.begin(), results_.end(), [](const RowResult& r) { return r.status == "failed"; });
}

// The anchor's median is kept for its group; any measured row of the group gets anchor / own median. A row timed
// in turn with the anchor (--interleave) takes its ratio from the anchor's samples of its own rounds, and keeps the
// ratio to the anchor's row as vs_anchor_alone.
void Session::relate_to_anchor(RowResult& r) {
  if (!r.ok()) return;
  if (r.axes.anchor) anchor_ms_[r.axes.group] = r.timing.median_ms;
  const auto it = anchor_ms_.find(r.axes.group);
  if (it != anchor_ms_.end()) r.vs_anchor = it->second / r.timing.median_ms;
  const auto beside = r.extra.find("interleaved_anchor_ms");
  if (beside == r.extra.end()) return;
  if (r.vs_anchor >= 0) r.extra["vs_anchor_alone"] = r.vs_anchor;
  r.vs_anchor = beside->second / r.timing.median_ms;
}

void Session::measure(const Row& row, RowResult& r) {
  NvtxRange range(row.name);
  try {
    if (fault && fault->found_in(row.name)) trap_kernel_launch(env.stream.get());
    row.body(env, r);
  } catch (const CudaError& e) {
    RowEnv::fail(r, e.what());
    // The context is gone: every later CUDA call would fail. Keep what was measured and stop.
    if (e.sticky()) stopped_ = std::string("an earlier row left a sticky CUDA error (") + e.what() + ")";
  } catch (const std::exception& e) {
    RowEnv::fail(r, e.what());
  }
}

void Session::run_row(const Row& row) {
  RowResult r;
  r.name = row.name;
  r.axes = row.axes;
  ++started_;
  if (progress_) std::fprintf(stderr, "[%d/%d] %s\n", started_, total, row.name.c_str());
  if (const int sig = interrupting_signal()) {
    r.error = std::string("not run: interrupted by ") + signal_name(sig);
  } else if (!stopped_.empty()) {
    r.error = "not run: " + stopped_;
  } else {
    const GpuState before = nvml.read();
    measure(row, r);
    relate_to_anchor(r);
    if (stopped_.empty()) {
      const GpuState after = nvml.read();
      r.sm_clock_before_mhz = before.sm_clock_mhz;
      r.sm_clock_after_mhz = after.sm_clock_mhz;
      const Throttle t = throttle_between(before, after);
      r.throttled = t.throttled;
      r.throttle = t.why;
    }
  }
  results_.push_back(std::move(r));
}

}  // namespace ks::bench

#include "common/timing.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>
#include <optional>
#include <stdexcept>

namespace ks {

TimingStats TimingStats::from_samples(std::vector<double> samples, double noise_target) {
  if (samples.empty()) throw std::invalid_argument("TimingStats: no samples");
  TimingStats s;
  s.samples_ms = samples;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median_ms = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min_ms = samples.front();
  s.max_ms = samples.back();
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(n);
  double var = 0;
  for (double x : samples) var += (x - mean) * (x - mean);
  s.stddev_ms = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;
  s.noise = s.median_ms > 0 ? s.stddev_ms / s.median_ms : 0.0;
  s.noise_met = s.noise <= noise_target;
  return s;
}

L2Flusher::L2Flusher(int device) {
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  buffer_ = DeviceBuffer<unsigned char>(2 * static_cast<std::size_t>(std::max(l2, 1 << 20)));
}

void L2Flusher::flush(cudaStream_t stream) const {
  CUDA_CHECK(cudaMemsetAsync(buffer_.data(), 0x5a, buffer_.bytes(), stream));
}

double EventTimer::elapsed_ms() const {
  CUDA_CHECK(cudaEventSynchronize(stop_.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  return ms;
}

namespace {

#if defined(KS_HIP)
// The GPU's constant-rate wall clock (s_memrealtime), which counts at 100 MHz on the gfx9 GPUs the HIP build
// targets (HIP 5.2 has no attribute to ask; the timeout below is only a safety bound).
__device__ __forceinline__ unsigned long long global_ticks() {
#if defined(__HIP_DEVICE_COMPILE__)
  return __builtin_amdgcn_s_memrealtime();
#else
  return 0;  // the host pass: never called
#endif
}

unsigned long long ticks_of_ns(double ns) { return static_cast<unsigned long long>(ns / 10); }
#else
// The GPU's global nanosecond timer.
__device__ __forceinline__ unsigned long long global_ticks() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

unsigned long long ticks_of_ns(double ns) { return static_cast<unsigned long long>(ns); }
#endif

// Spins until the host sets flags[0], or until `timeout` ticks of global_ticks() have passed (then flags[1] = 1).
__global__ void blocking_kernel(volatile int* flags, unsigned long long timeout) {
  const unsigned long long start = global_ticks();
  while (flags[0] == 0) {
    if (global_ticks() - start > timeout) {
      flags[1] = 1;
      return;
    }
  }
}

// CPU time of the calling thread, ms.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

int l2_bytes_of_current_device() {
  int device = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return std::max(l2, 1 << 20);
}

// The samples one work has taken in a timed region: per launch, and the host CPU time per launch of each.
struct Taken {
  std::vector<double> ms, cpu;
  void clear() {
    ms.clear();
    cpu.clear();
  }
};

// `batch` launches of `work`, rotating over `copies` inputs, captured into one graph; an empty GraphExec where the
// work cannot be captured (it then runs as stream launches).
GraphExec capture_batch(cudaStream_t stream, const StreamWork& work, int batch, int copies) {
  cudaGraph_t g = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  bool captured = true;
  try {
    for (int b = 0; b < batch; ++b) work.run(b % copies);
  } catch (const CudaError&) {
    captured = false;
  }
  captured = cudaStreamEndCapture(stream, &g) == cudaSuccess && captured && g;
  (void)cudaGetLastError();
  Graph owned(g);
  if (!captured) return {};
  try {
    return GraphExec(owned);
  } catch (const CudaError&) {
    (void)cudaGetLastError();
    return {};
  }
}

}  // namespace

StreamBlocker::StreamBlocker(double timeout_ms) : flags_(2), timeout_ms_(timeout_ms) {}

void StreamBlocker::block(cudaStream_t stream) {
  volatile int* f = flags_.data();
  f[0] = 0;
  f[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  blocking_kernel<<<1, 1, 0, stream>>>(flags_.device_data(), ticks_of_ns(timeout_ms_ * 1e6));
  CUDA_CHECK_LAUNCH();
}

void StreamBlocker::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  volatile int* f = flags_.data();
  f[0] = 1;
}

bool StreamBlocker::timed_out() const {
  const volatile int* f = flags_.data();
  return f[1] != 0;
}

namespace {

// The samples of one timed region: how each is taken (batch size, rotation, graph, blocker) and what changes
// when the blocking kernel times out.
class Sampling {
 public:
  Sampling(cudaStream_t stream, const TimingOptions& opts, const StreamWork& work)
      : stream_(stream), opts_(opts), work_(work), cold_(static_cast<bool>(work.flush)) {
    if (opts.blocking && !work.blocks_host) blocker_.emplace();
  }

  // One sample of `batch_` launches into `per_launch_ms`, and the host CPU time this thread spent on it (enqueueing
  // and waiting) per launch into `cpu_ms`; false when the blocking kernel timed out (the sample is not trusted).
  bool sample(double& per_launch_ms, double& cpu_ms) {
    if (cold_ && batch_ == 1) work_.flush();
    const double cpu0 = thread_cpu_ms();
    if (blocker_) blocker_->block(stream_);
    timer_.start(stream_);
    if (graph_) {
      graph_.launch(stream_);
    } else {
      for (int b = 0; b < batch_; ++b) {
        work_.run(next_copy_);
        next_copy_ = (next_copy_ + 1) % copies_;
      }
    }
    timer_.stop(stream_);
    if (blocker_) blocker_->release();
    per_launch_ms = timer_.elapsed_ms() / batch_;
    cpu_ms = (thread_cpu_ms() - cpu0) / batch_;
    return !(blocker_ && blocker_->timed_out());
  }

  // The first sample, retried without the blocker if it keeps timing out.
  double first_sample(double& cpu_ms) {
    double ms = 0;
    for (int tries = 1; !sample(ms, cpu_ms); ++tries)
      if (tries == 3) blocker_.reset();
    return ms;
  }

  // Batches for launches shorter than opts.batch_below_ms; cold ones rotate over input copies that hold
  // rotate_l2_multiple times the L2 (every copy in each batch), or are not batched where they cannot. True
  // when the batch changed (earlier samples no longer compare).
  bool choose_batch(double first_ms) {
    if (!blocker_ || first_ms >= opts_.batch_below_ms) return false;
    batch_ = static_cast<int>(std::clamp(std::ceil(opts_.batch_ms / std::max(first_ms, 1e-4)), 2.0,
                                         static_cast<double>(std::max(2, opts_.max_batch))));
    if (cold_) {
      const double l2 = l2_bytes_of_current_device();
      const int wanted = work_.bytes_per_copy
                             ? static_cast<int>(std::ceil(opts_.rotate_l2_multiple * l2 / work_.bytes_per_copy))
                             : 0;
      copies_ = work_.make_copies && wanted > 1 ? work_.make_copies(wanted) : 1;
      if (copies_ < 2 || static_cast<double>(copies_) * work_.bytes_per_copy < 2 * l2) batch_ = copies_ = 1;
    }
    if (batch_ == 1) return false;
    batch_ = std::max(batch_, copies_);
    if (opts_.graph_batches) graph_ = capture_batch(stream_, work_, batch_, copies_);
    return true;
  }

  // The blocker gave up before a sample was queued: smaller batches, and after repeated failures none.
  void after_timeout() {
    if (batch_ > 1) {
      batch_ = std::max(1, batch_ / 2);
      if (batch_ == 1) copies_ = 1;
      graph_ = batch_ > 1 && opts_.graph_batches ? capture_batch(stream_, work_, batch_, copies_) : GraphExec();
    } else if (++timeouts_ >= 3) {
      blocker_.reset();
    }
    next_copy_ = 0;
  }

  void describe(TimingStats& stats) const {
    stats.batch = batch_;
    stats.graph = static_cast<bool>(graph_);
    stats.blocked = blocker_.has_value();
    stats.l2 = !cold_ ? "warm" : copies_ > 1 ? "rotate:" + std::to_string(copies_) : "flush";
  }

 private:
  cudaStream_t stream_;
  const TimingOptions& opts_;
  const StreamWork& work_;
  bool cold_;
  EventTimer timer_;
  std::optional<StreamBlocker> blocker_;
  GraphExec graph_;  // the batch as one graph, once captured
  int batch_ = 1, copies_ = 1, next_copy_ = 0, timeouts_ = 0;
};

}  // namespace

std::vector<TimingStats> time_interleaved(cudaStream_t stream, const TimingOptions& opts,
                                          const std::vector<StreamWork>& works) {
  if (works.empty()) throw std::invalid_argument("time_interleaved: no work to time");
  if (opts.min_repetitions < 1 || opts.max_repetitions < opts.min_repetitions)
    throw std::invalid_argument("time_interleaved: need 1 <= min_repetitions <= max_repetitions");
  for (const StreamWork& work : works)
    for (int i = 0; i < opts.warmup; ++i) {
      if (work.flush) work.flush();
      work.run(0);
    }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::size_t n = works.size();
  std::vector<std::unique_ptr<Sampling>> arms;  // Sampling holds its events and blocker in place
  std::vector<Taken> taken(n);
  bool batched = false;  // some work's first sample was taken at another batch size than the rest will be
  for (std::size_t i = 0; i < n; ++i) {
    arms.push_back(std::make_unique<Sampling>(stream, opts, works[i]));
    double cpu = 0;
    const double first = arms[i]->first_sample(cpu);
    batched |= arms[i]->choose_batch(first);
    taken[i].ms.push_back(first);
    taken[i].cpu.push_back(cpu);
  }
  if (batched)
    for (Taken& t : taken) t.clear();  // every work's samples start together, so the i-th of each are one round
  const auto start = std::chrono::steady_clock::now();
  auto done = [&] {
    const int rounds = static_cast<int>(taken[0].ms.size());
    if (rounds >= opts.max_repetitions) return true;
    if (rounds < opts.min_repetitions) return false;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (spent >= opts.time_budget_s * static_cast<double>(n)) return true;
    return std::all_of(taken.begin(), taken.end(), [&](const Taken& t) {
      return TimingStats::from_samples(t.ms, opts.noise_target).noise_met;
    });
  };
  std::vector<double> ms(n), cpu(n);
  while (!done()) {
    bool trusted = true;
    for (std::size_t i = 0; i < n; ++i)
      if (!arms[i]->sample(ms[i], cpu[i])) {
        arms[i]->after_timeout();
        trusted = false;
      }
    if (!trusted) {  // a blocker gave up: no sample of this round is trusted, and the rounds start again
      for (Taken& t : taken) t.clear();
      continue;
    }
    for (std::size_t i = 0; i < n; ++i) {
      taken[i].ms.push_back(ms[i]);
      taken[i].cpu.push_back(cpu[i]);
    }
  }
  std::vector<TimingStats> out;
  for (std::size_t i = 0; i < n; ++i) {
    TimingStats stats = TimingStats::from_samples(std::move(taken[i].ms), opts.noise_target);
    stats.cpu_ms = TimingStats::from_samples(std::move(taken[i].cpu)).median_ms;
    arms[i]->describe(stats);
    out.push_back(std::move(stats));
  }
  return out;
}

TimingStats time_on_stream(cudaStream_t stream, const TimingOptions& opts, const StreamWork& work) {
  return time_interleaved(stream, opts, {work}).front();
}

int fastest_once(int n, const std::function<void(int)>& run, std::vector<double>* ms) {
  if (n < 1) throw std::invalid_argument("fastest_once: no candidate");
  run(0);
  std::vector<double> times;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run(i);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const int best = static_cast<int>(std::min_element(times.begin(), times.end()) - times.begin());
  if (ms) *ms = std::move(times);
  return best;
}

}  // namespace ks

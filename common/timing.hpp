// Timing with CUDA events, after the model of nvbench:
// - warm-up runs first (module load, lazy allocations and handle creation stay out of the numbers);
// - each sample is bracketed by events on the stream, with a blocking kernel in front, so that everything the
//   sample enqueues is queued before the GPU starts it and launch gaps on the host do not count;
// - samples repeat until their relative noise (standard deviation / median) is at most a target, or a time
//   budget is spent, and never fewer than a minimum;
// - a launch shorter than about 50 us is timed in batches (many launches per event pair, the time per launch
//   reported), so that event resolution and launch overhead do not decide the figure;
// - cold L2: an L2 flush before each sample, outside the timed region, or, for a batch, launches that rotate
//   over enough copies of their inputs that none is still in L2 when it comes round again.
#pragma once

#include "common/resources.hpp"

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace ks {

struct TimingStats {
  double median_ms = 0;  // per launch
  double min_ms = 0;
  double max_ms = 0;
  double stddev_ms = 0;
  double noise = 0;      // stddev / median
  int batch = 1;         // launches per sample
  bool graph = false;    // each batch was one CUDA graph launch
  bool noise_met = false;
  bool blocked = false;  // samples were queued behind the blocking kernel
  std::string l2 = "warm";  // "warm", "flush" (before each sample) or "rotate:R" (R input copies per batch)
  std::vector<double> samples_ms;  // per launch, one per sample
  // Median over the samples of the host CPU time the timing thread spent per launch (enqueueing and waiting for
  // the events): Google Benchmark's cpu_time, for its tools. Host threads a launch starts are not counted.
  double cpu_ms = 0;

  // Median (mean of the two middle values for an even count), min, max, standard deviation and noise of
  // per-launch samples; throws std::invalid_argument on no samples.
  static TimingStats from_samples(std::vector<double> samples_ms, double noise_target = 0);
  int repetitions() const { return static_cast<int>(samples_ms.size()); }
};

struct TimingOptions {
  int warmup = 2;
  int min_repetitions = 10;
  int max_repetitions = 100000;
  double noise_target = 0.01;   // stddev / median
  double time_budget_s = 0.5;   // per timed region, warm-up excluded
  double batch_below_ms = 0.05; // launches shorter than this are timed in batches ...
  double batch_ms = 1.0;        // ... of about this long ...
  int max_batch = 256;          // ... and at most this many launches
  bool blocking = true;         // false: no blocking kernel and no batches, one launch per sample
  bool graph_batches = true;    // a batch is one CUDA graph of its launches (stream launches where capture fails)
  // Cold-L2 batches rotate over input copies of at least this many times the L2's size in all: no copy is still
  // cached when it comes round, and the batch's time averages over where the copies happen to lie in memory.
  double rotate_l2_multiple = 3;
};

// Evicts the L2 cache by writing a device buffer twice the L2's size, so memory-bound work reads its inputs
// from device memory, not from cache.
class L2Flusher {
 public:
  explicit L2Flusher(int device);
  void flush(cudaStream_t stream) const;
  std::size_t bytes() const noexcept { return buffer_.bytes(); }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

// Records a start and a stop event on one stream.
class EventTimer {
 public:
  void start(cudaStream_t stream) const { start_.record(stream); }
  void stop(cudaStream_t stream) const { stop_.record(stream); }
  // Waits for the stop event and returns the milliseconds from start to stop.
  double elapsed_ms() const;
  // stop() then elapsed_ms().
  double stop_ms(cudaStream_t stream) const {
    stop(stream);
    return elapsed_ms();
  }

 private:
  Event start_;
  Event stop_;
};

// Holds a stream behind a spinning kernel until release(), so that work enqueued meanwhile runs back to back.
// The kernel gives up after `timeout_ms` (a host that enqueues for that long, or a full launch queue), and
// timed_out() then says so: the sample is not trusted.
class StreamBlocker {
 public:
  explicit StreamBlocker(double timeout_ms = 1000);
  void block(cudaStream_t stream);
  void release();
  bool timed_out() const;  // after the stream has passed the blocker

 private:
  MappedBuffer<int> flags_;  // [0]: release, written by the host; [1]: timed out, written by the kernel
  double timeout_ms_;
};

// What time_on_stream() times.
struct StreamWork {
  // Enqueues one launch on the stream, reading input copy `copy` (0 unless make_copies gave more).
  std::function<void(int copy)> run{};
  // Cold L2: enqueues an L2 flush. Empty: warm L2, launches may find their inputs in cache.
  std::function<void()> flush{};
  // run() waits for the device (a host step, a pageable copy): no blocking kernel, no batches.
  bool blocks_host = false;
  // Cold-L2 batches rotate over input copies: makes `wanted` copies of what one launch reads and returns how
  // many there are (1: it cannot); `bytes_per_copy` is their size. Empty: no rotation, so no cold batches.
  std::function<int(int wanted)> make_copies{};
  std::size_t bytes_per_copy = 0;
};

// Times `work` on `stream` as described at the top.
TimingStats time_on_stream(cudaStream_t stream, const TimingOptions& opts, const StreamWork& work);

// Times several works with their samples interleaved: each round takes one sample of every work, in the order
// given, until every work's samples are quiet (the noise target) or the time budget, multiplied by the number of
// works, is spent, and never fewer than min_repetitions rounds. Each work keeps its own batch size, graph and
// blocker. A blocker's timeout restarts the rounds of all of them, so that samples_ms[i] of every result was taken
// in round i: works compared this way see the GPU in the same states (its clock, lowered by the power controller
// as a long row runs on, above all), where rows timed one after another may not. One work: time_on_stream.
std::vector<TimingStats> time_interleaved(cudaStream_t stream, const TimingOptions& opts,
                                          const std::vector<StreamWork>& works);

// For a choice made once at set-up between ways of doing the same work (how pageable operands cross, cuBLASXt's
// tile size): one untimed warm-up run of the first candidate, then each of the `n` candidates run once on the
// host's wall clock (`run(i)` returns when its work is complete). Returns the index of the fastest (the first of
// equals); `ms`, when given, receives each candidate's milliseconds.
int fastest_once(int n, const std::function<void(int)>& run, std::vector<double>* ms = nullptr);

}  // namespace ks

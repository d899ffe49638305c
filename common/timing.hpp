// Timing with CUDA events: warm-up runs first (module load, lazy allocations and handle creation stay out of
// the numbers), then `repetitions` timed runs, each bracketed by events on the stream, each optionally
// preceded by an untimed `prepare` step (an L2 flush, restoring inputs). Reported: median, min, max.
#pragma once

#include "common/resources.hpp"

#include <cstddef>
#include <functional>
#include <vector>

namespace ks {

struct TimingStats {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::vector<double> samples_ms;

  // Median (mean of the two middle values for an even count), min and max; throws on no samples.
  static TimingStats from_samples(std::vector<double> samples_ms);
};

// Evicts the L2 cache by writing a device buffer twice the L2's size before a timed repetition, so
// memory-bound work reads its inputs from device memory, not from cache.
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
  // Records the stop event, waits for it and returns the elapsed milliseconds.
  double stop_ms(cudaStream_t stream) const;

 private:
  Event start_;
  Event stop_;
};

struct TimingOptions {
  int warmup = 3;
  int repetitions = 20;
};

// Times `run` (which enqueues work on `stream`) as described above.
TimingStats time_on_stream(cudaStream_t stream, const TimingOptions& opts, const std::function<void()>& run,
                           const std::function<void()>& prepare = {});

// The same for host work, timed with the steady clock: `opts.warmup` untimed runs, then `opts.repetitions`.
TimingStats time_on_host(const TimingOptions& opts, const std::function<void()>& run);

}  // namespace ks

#include "common/timing.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace ks {

TimingStats TimingStats::from_samples(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("TimingStats: no samples");
  TimingStats s;
  s.samples_ms = samples;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median_ms = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min_ms = samples.front();
  s.max_ms = samples.back();
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

double EventTimer::stop_ms(cudaStream_t stream) const {
  stop_.record(stream);
  CUDA_CHECK(cudaEventSynchronize(stop_.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  return ms;
}

TimingStats time_on_stream(cudaStream_t stream, const TimingOptions& opts, const std::function<void()>& run,
                           const std::function<void()>& prepare) {
  if (opts.repetitions < 1) throw std::invalid_argument("time_on_stream: repetitions must be >= 1");
  for (int i = 0; i < opts.warmup; ++i) {
    if (prepare) prepare();
    run();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EventTimer timer;
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(opts.repetitions));
  for (int i = 0; i < opts.repetitions; ++i) {
    if (prepare) prepare();
    timer.start(stream);
    run();
    samples.push_back(timer.stop_ms(stream));
  }
  return TimingStats::from_samples(std::move(samples));
}

TimingStats time_on_host(const TimingOptions& opts, const std::function<void()>& run) {
  if (opts.repetitions < 1) throw std::invalid_argument("time_on_host: repetitions must be >= 1");
  for (int i = 0; i < opts.warmup; ++i) run();
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(opts.repetitions));
  for (int i = 0; i < opts.repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return TimingStats::from_samples(std::move(samples));
}

}  // namespace ks

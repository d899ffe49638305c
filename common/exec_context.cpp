#include "common/exec_context.hpp"

namespace ks {

#if !defined(KS_HIP)  // cuBLAS: the CUDA build only
cublasHandle_t ExecContext::cublas() {
  if (!cublas_) {
    cublas_ = std::make_unique<CublasHandle>();
    CUBLAS_CHECK(cublasSetStream(cublas_->get(), stream_));
    // An explicit workspace keeps cuBLAS from allocating during stream capture (CUDA graphs); 32 MiB is
    // what cuBLAS documents for Hopper. Zeroed once, so that its contents are defined whatever cuBLAS reads.
    cublas_workspace_ = DeviceBuffer<unsigned char>(32u << 20);
    CUDA_CHECK(cudaMemsetAsync(cublas_workspace_.data(), 0, cublas_workspace_.bytes(), stream_));
    CUBLAS_CHECK(cublasSetWorkspace(cublas_->get(), cublas_workspace_.data(), cublas_workspace_.bytes()));
  }
  return cublas_->get();
}

cublasHandle_t ExecContext::cublas_with_workspace(std::size_t bytes) {
  cublasHandle_t h = cublas();
  if (bytes > cublas_workspace_.bytes()) CUBLAS_CHECK(cublasSetWorkspace(h, device_scratch(bytes), bytes));
  return h;
}

void ExecContext::restore_cublas_workspace() {
  CUBLAS_CHECK(cublasSetWorkspace(cublas(), cublas_workspace_.data(), cublas_workspace_.bytes()));
}

std::pair<void*, std::size_t> ExecContext::cublas_workspace() {
  cublas();
  return {cublas_workspace_.data(), cublas_workspace_.bytes()};
}

cublasLtHandle_t ExecContext::cublaslt() {
  if (!cublaslt_) cublaslt_ = std::make_unique<CublasLtHandle>();
  return cublaslt_->get();
}
#endif

void ExecContext::begin_launch() {
  auto wait = [this] { CUDA_CHECK(cudaStreamSynchronize(stream_)); };
  device_scratch_.begin_launch(wait);
  pinned_scratch_.begin_launch(wait);
  notes_.clear();
  phase_names_.clear();
  phase_marks_ = 0;
  if (time_phases_) mark_phase(nullptr);
}

void ExecContext::mark_phase(const char* name) {
  if (!time_phases_) return;
  if (phase_events_.size() <= phase_marks_) phase_events_.emplace_back(cudaEventDefault);
  phase_events_[phase_marks_++].record(stream_);
  if (name) phase_names_.emplace_back(name);
}

std::vector<std::pair<std::string, double>> ExecContext::phase_ms() {
  std::vector<std::pair<std::string, double>> out;
  if (phase_marks_ < 2) return out;
  CUDA_CHECK(cudaEventSynchronize(phase_events_[phase_marks_ - 1].get()));
  for (std::size_t i = 1; i < phase_marks_; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, phase_events_[i - 1].get(), phase_events_[i].get()));
    out.emplace_back(phase_names_[i - 1], ms);
  }
  return out;
}

unsigned* ExecContext::zeroed_counters(std::size_t count) {
  if (counters_.size() < count) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    counters_ = DeviceBuffer<unsigned>(count);
    CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.bytes(), stream_));
  }
  return counters_.data();
}

const std::vector<Stream>& ExecContext::extra_streams(std::size_t count) {
  while (streams_.size() < count) streams_.emplace_back();
  return streams_;
}

cudaStream_t ExecContext::priority_stream() {
  if (!priority_stream_) priority_stream_ = std::make_unique<Stream>(Stream::Greatest{});
  return priority_stream_->get();
}

const std::vector<Event>& ExecContext::sync_events(std::size_t count) {
  while (events_.size() < count) events_.emplace_back(cudaEventDisableTiming);
  return events_;
}

}  // namespace ks

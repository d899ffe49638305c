#include "dropin/backend.hpp"

#include "common/exec_context.hpp"
#include "gemm/07_ozaki/ozaki.hpp"
#include "gemm/dmma_shapes.hpp"
#include "gemm/gemm.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#define KS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void copy_out(const std::string& s, char* out, std::size_t cap) {
  if (!out || cap == 0) return;
  const std::size_t n = std::min(s.size(), cap - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

ks::gemm::GemmArgs member(const KsDgemmArgs& a, long long b) {
  ks::gemm::GemmArgs g;
  g.M = a.M, g.N = a.N, g.K = a.K, g.alpha = a.alpha, g.beta = a.beta;
  g.A = a.A + b * a.strideA, g.lda = a.lda;
  g.B = a.B + b * a.strideB, g.ldb = a.ldb;
  g.C = a.C + b * a.strideC, g.ldc = a.ldc;
  g.transa = ks::gemm::parse_op(a.transa), g.transb = ks::gemm::parse_op(a.transb);
  return g;
}

// An execution context per device and stream (scratch, cuBLAS handles), each used by one call at a time, kept for
// the life of the process. The per-thread default stream is a different stream in each thread: its contexts are
// per thread too.
struct Slot {
  std::mutex mutex;
  std::unique_ptr<ks::ExecContext> ctx;
};
Slot& slot_for(int device, cudaStream_t stream) {
  static std::mutex mutex;
  using Key = std::tuple<int, cudaStream_t, std::thread::id>;
  static auto* slots = new std::map<Key, std::unique_ptr<Slot>>;  // never destroyed: calls may come during exit
  const std::thread::id thread = stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id{};
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Slot>& s = (*slots)[Key{device, stream, thread}];
  if (!s) {
    s = std::make_unique<Slot>();
    s->ctx = std::make_unique<ks::ExecContext>(stream);
  }
  return *s;
}

}  // namespace

KS_EXPORT unsigned ks_dgemm_backend_known(const char* name) {
  const ks::gemm::GemmVariant* v = name ? ks::gemm::registry().find(name) : nullptr;
  return v ? v->ops : 0;
}

KS_EXPORT int ks_dgemm_backend_capturing(void* stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e != cudaSuccess || status != cudaStreamCaptureStatusNone ? 1 : 0;
}

KS_EXPORT void ks_dgemm_backend_facts(const KsDgemmArgs* a, int* tma_runs, char* ozaki_why, std::size_t cap) {
  *tma_runs = 0;
  try {
    *tma_runs = ks::gemm::dmma::tma_rule_runs_tma(member(*a, 0)) ? 1 : 0;
    copy_out(ks::gemm::ozaki::native_by_shape(a->M, a->N, a->K, 0), ozaki_why, cap);
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    copy_out(std::string("native: ") + e.what(), ozaki_why, cap);
  }
}

KS_EXPORT long long ks_dgemm_backend_run(const char* variant, const KsDgemmArgs* a, char* error, std::size_t cap) {
  long long b = 0;
  try {
    const ks::gemm::GemmVariant* v = ks::gemm::registry().find(variant);
    if (!v) throw std::invalid_argument(std::string("no DGEMM variant ") + variant);
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) throw std::runtime_error("cudaGetDevice failed");
    Slot& s = slot_for(device, static_cast<cudaStream_t>(a->stream));
    std::lock_guard<std::mutex> lock(s.mutex);
    for (; b < a->batch; ++b) ks::gemm::run(*v, member(*a, b), *s.ctx);
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    copy_out(e.what(), error, cap);
  }
  return b;
}

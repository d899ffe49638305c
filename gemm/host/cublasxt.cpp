#include "gemm/host/cublasxt.hpp"

#include "common/cuda_check.hpp"
#include "common/resources.hpp"
#include "common/timing.hpp"

namespace ks::gemm {

// cuBLASXt switches the calling thread's current device to the ones it drives; every call restores it.
CublasXt::CublasXt(const std::vector<int>& devices) {
  const CurrentDevice restore;
  CUBLAS_CHECK(cublasXtCreate(&handle_));
  std::vector<int> ids = devices;
  cublasStatus_t s = cublasXtDeviceSelect(handle_, static_cast<int>(ids.size()), ids.data());
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasXtGetBlockDim(handle_, &block_dim_);
  if (s != CUBLAS_STATUS_SUCCESS) {  // the destructor does not run for a constructor that throws
    cublasXtDestroy(handle_);
    CUBLAS_CHECK(s);
  }
}

CublasXt::~CublasXt() {
  const CurrentDevice restore;
  if (handle_) cublasXtDestroy(handle_);
}

void CublasXt::set_block_dim(int block_dim) {
  CUBLAS_CHECK(cublasXtSetBlockDim(handle_, block_dim));
  block_dim_ = block_dim;
}

void CublasXt::run(const GemmArgs& a) {
  const CurrentDevice restore;
  CUBLAS_CHECK(cublasXtDgemm(handle_, cublas_op(a.transa), cublas_op(a.transb), a.M, a.N, a.K, &a.alpha, a.A, a.lda,
                             a.B, a.ldb, &a.beta, a.C, a.ldc));
}

const std::vector<int>& CublasXt::block_dims() {
  static const std::vector<int> b{1024, 2048, 4096, 8192};
  return b;
}

std::map<int, double> CublasXt::choose_block_dim(const std::function<void()>& run) {
  const std::vector<int>& dims = block_dims();
  std::vector<double> ms;
  const int best = fastest_once(static_cast<int>(dims.size()), [&](int i) {
    set_block_dim(dims[static_cast<std::size_t>(i)]);
    run();
  }, &ms);
  set_block_dim(dims[static_cast<std::size_t>(best)]);
  std::map<int, double> out;
  for (std::size_t i = 0; i < dims.size(); ++i) out[dims[i]] = ms[i];
  return out;
}

}  // namespace ks::gemm

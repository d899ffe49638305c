// Error handling for CUDA runtime and cuBLAS calls.
//
// CUDA_CHECK(expr) / CUBLAS_CHECK(expr) throw ks::CudaError / ks::CublasError carrying the failing
// expression, file and line. CUDA_CHECK_LAUNCH() follows every kernel launch. The _NOEXCEPT form is for
// destructors: it reports to stderr and never throws.
#pragma once

#include "common/gpu_runtime.hpp"

#if !defined(KS_HIP)  // cuBLAS: the CUDA build only
#include <cublas_v2.h>
#endif

#include <stdexcept>
#include <string>

namespace ks {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }
  // A sticky error corrupts the context: every later call in this process fails too.
  bool sticky() const noexcept;

 private:
  cudaError_t code_;
};

#if !defined(KS_HIP)
class CublasError : public std::runtime_error {
 public:
  CublasError(cublasStatus_t status, const std::string& what)
      : std::runtime_error(what), status_(status) {}
  cublasStatus_t status() const noexcept { return status_; }

 private:
  cublasStatus_t status_;
};

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line);
#endif
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line);
void report_cuda_error(cudaError_t code, const char* expr, const char* file, int line) noexcept;

}  // namespace ks

#define CUDA_CHECK(expr)                                                         \
  do {                                                                           \
    const cudaError_t ks_status_ = (expr);                                       \
    if (ks_status_ != cudaSuccess) {                                             \
      ::ks::throw_cuda_error(ks_status_, #expr, __FILE__, __LINE__);             \
    }                                                                            \
  } while (0)

#define CUDA_CHECK_NOEXCEPT(expr)                                                \
  do {                                                                           \
    const cudaError_t ks_status_ = (expr);                                       \
    if (ks_status_ != cudaSuccess) {                                             \
      ::ks::report_cuda_error(ks_status_, #expr, __FILE__, __LINE__);            \
    }                                                                            \
  } while (0)

// After every kernel launch: catches bad configurations at once (asynchronous faults surface at the next
// synchronising call, which is checked too).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#if !defined(KS_HIP)
#define CUBLAS_CHECK(expr)                                                       \
  do {                                                                           \
    const cublasStatus_t ks_status_ = (expr);                                    \
    if (ks_status_ != CUBLAS_STATUS_SUCCESS) {                                   \
      ::ks::throw_cublas_error(ks_status_, #expr, __FILE__, __LINE__);           \
    }                                                                            \
  } while (0)
#endif

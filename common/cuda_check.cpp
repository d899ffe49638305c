#include "common/cuda_check.hpp"

#include <cstdio>
#include <sstream>

namespace ks {
namespace {
std::string where(const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << " in `" << expr << "` at " << file << ":" << line;
  return os.str();
}
}  // namespace

bool CudaError::sticky() const noexcept {
  switch (code_) {
#if defined(KS_HIP)
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorAssert:
    case hipErrorLaunchTimeOut:
    case hipErrorECCNotCorrectable:
#else
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
#endif
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  throw CudaError(code, std::string("CUDA error ") + cudaGetErrorName(code) + " (" +
                            cudaGetErrorString(code) + ")" + where(expr, file, line));
}

#if !defined(KS_HIP)
void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
  throw CublasError(status, std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" +
                                cublasGetStatusString(status) + ")" + where(expr, file, line));
}
#endif

void report_cuda_error(cudaError_t code, const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "warning: CUDA error %s (%s) in `%s` at %s:%d\n", cudaGetErrorName(code),
               cudaGetErrorString(code), expr, file, line);
}

}  // namespace ks

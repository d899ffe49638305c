// cuBLASXt: NVIDIA's DGEMM on host pointers (cublasXtDgemm), which tiles the product and pipelines the tiles
// over streams and devices itself: the anchor of the host-memory modes beside the plain copy sequences. Its
// tile size (cublasXtSetBlockDim) matters; choose_block_dim() sweeps it. gemm::Runner runs it in the pinned and
// pageable modes, on the same host buffers as the variants' copy sequences.
#pragma once

#include "gemm/gemm.hpp"

#include <cublasXt.h>

#include <functional>
#include <map>
#include <vector>

namespace ks::gemm {

class CublasXt {
 public:
  explicit CublasXt(const std::vector<int>& devices);
  ~CublasXt();
  CublasXt(const CublasXt&) = delete;
  CublasXt& operator=(const CublasXt&) = delete;

  void set_block_dim(int block_dim);
  int block_dim() const { return block_dim_; }
  // C = alpha op(A) op(B) + beta C on host arrays (a's pointers); returns when C is complete on the host.
  void run(const GemmArgs& a);
  // Candidates for the sweep.
  static const std::vector<int>& block_dims();
  // Times `run` (one complete product) once per candidate after a warm-up, keeps the fastest block size, and
  // returns each candidate's milliseconds.
  std::map<int, double> choose_block_dim(const std::function<void()>& run);

 private:
  cublasXtHandle_t handle_ = nullptr;
  int block_dim_ = 0;
};

}  // namespace ks::gemm

// The suite's side of the drop-in library: libks_dgemm_backend.so, loaded by libks_dgemm.so (dropin/ks_dgemm.cpp)
// on first need, which sees only these C functions; the suite's C++ libraries stay behind them.
#pragma once

#include <cstddef>

extern "C" {

// One call's operands: members b in [0, batch) at A + b strideA, B + b strideB, C + b strideC (elements).
struct KsDgemmArgs {
  int M, N, K;
  double alpha, beta;
  const double* A;
  int lda;
  const double* B;
  int ldb;
  double* C;
  int ldc;
  long long strideA, strideB, strideC, batch;
  void* stream;         // cudaStream_t
  char transa, transb;  // 'N', 'T' or 'C' (C as T)
};

// The op(A) op(B) combinations the DGEMM variant of that name runs (gemm::op_bit's bits), 0 where none has it.
unsigned ks_dgemm_backend_known(const char* name);
// 1 where the stream is being captured into a CUDA graph, or the query fails.
int ks_dgemm_backend_capturing(void* stream);
// What the routing rule asks of the device (dropin::Facts): whether dmma_tma's rule would run a TMA tile, and
// ozaki's shape gate (empty where the inputs decide), written into `ozaki_why` (cut at `cap`).
void ks_dgemm_backend_facts(const KsDgemmArgs* a, int* tma_runs, char* ozaki_why, std::size_t cap);
// Enqueues the members of `a` with the variant on a.stream; returns how many it enqueued (all, unless an error
// stopped it: then its text is in `error`).
long long ks_dgemm_backend_run(const char* variant, const KsDgemmArgs* a, char* error, std::size_t cap);
}

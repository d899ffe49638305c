// The drop-in library's routing rules (libks_dgemm.so, dropin/ks_dgemm.cpp): which DGEMM calls that reach it
// through cuBLAS's entry points run on the suite's kernels and which go to the real cuBLAS, and why. Pure
// functions of the call and of a few facts about the device, so that they are tested without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace ks::dropin {

// KS_DGEMM: auto (the default), native (every call to the real cuBLAS), fp64 (never the INT8 emulation), ozaki
// (the emulation wherever it may run; its own rule may still pick native for the inputs), or a DGEMM variant's
// name (that variant wherever it may run).
enum class PolicyKind { Auto, Native, Fp64, Ozaki, Variant };
struct Policy {
  PolicyKind kind = PolicyKind::Auto;
  std::string variant;  // PolicyKind::Variant only
  unsigned variant_ops = 0xF;  // the op(A) op(B) combinations it runs (gemm::op_bit's bits; all four by default)
  std::string str() const;
};
// Unset or empty is auto. `known(name)`: the op combinations the DGEMM variant of that name runs (as
// Policy::variant_ops), 0 where there is none. Throws std::invalid_argument with one line naming the value and
// the accepted ones.
Policy parse_policy(const char* value, const std::function<unsigned(const std::string&)>& known);

// One call as it arrived (the _64 forms' sizes as they are; batch 1 for the non-batched entry points).
struct Call {
  const char* entry = "";
  char transa = 'N', transb = 'N';  // as given: 'N', 'T', 'C', or '?' for a value that is none of them
  std::int64_t M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0, batch = 1;
  bool handle = true;         // a non-null handle
  bool host_scalars = true;   // CUBLAS_POINTER_MODE_HOST: alpha and beta in host memory
  bool pedantic = false;      // CUBLAS_PEDANTIC_MATH, or CUBLAS_COMPUTE_64F_PEDANTIC
  bool types_fp64 = true;     // cublasGemmEx: A, B and C CUDA_R_64F with a 64F compute type
  bool capturing = false;     // the handle's stream is being captured into a CUDA graph
};

// What the device says, asked only when the rule gets that far.
struct Facts {
  bool tma_runs = false;          // dmma_tma's rule would run a TMA tile (gemm::dmma::tma_rule_runs_tma)
  std::string ozaki_by_shape;     // ozaki's shape gate: empty where the inputs decide (gemm::ozaki::native_by_shape)
};

// Where a call goes: a DGEMM variant of the suite, or the real cuBLAS (variant empty), and the reason in words.
struct Route {
  std::string variant;
  std::string why;
  bool native() const { return variant.empty(); }
};

// dmma_tma runs where it was measured at or above cuBLAS, and ozaki is considered there too (H100, issue 36's table: 2048^3 101%, 4096^3 103%,
// 8192x8192x256 102%, 3000x5000x7000 108%; below: 1024^3 98%, 4096x4096x64 97.5%, 64x16384x16384 95%,
// 256x256x65536 82%): min(M, N) of at least kTmaMinSide, and K of at least kTmaFullDepth, or of at least kTmaMinDepth
// where C has at least kTmaShallowMinArea elements. On an H200 (docs/gemm-notes.md, step 75; dmma_tma against
// cuBLAS at M = N of 2048 to 8192, two processes) K of 256 to 512 ran 92.4-99.8% at 2048^2 to 6144^2 (3072 x 3072 x
// 256 92.4-92.9%, 2048 x 2048 x 256 94.3-94.6%, 6144 x 6144 x 256 97.7-98.1%; 4096^2 and 6144^2 from K = 384 above
// 100) and 101.7-109.2% at 8192^2; from K = 768, 98.8-103.8% at every size, 100% or more in 25 of 30 readings.
constexpr std::int64_t kTmaMinSide = 2048;                  // min(M, N)
constexpr std::int64_t kTmaMinDepth = 256;                  // K, where M N >= kTmaShallowMinArea
constexpr std::int64_t kTmaFullDepth = 768;                 // K, any M N
constexpr std::int64_t kTmaShallowMinArea = 8192LL * 8192;  // M N

// Whether the policy sends this call to the real cuBLAS whatever the handle's state and the device say: KS_DGEMM
// native, or a call below the measured wins under auto or fp64. route() agrees; the library uses it to hand
// such calls over before reading the handle's state (a small call then costs it a few comparisons).
bool native_by_policy_and_size(const Call& c, const Policy& p);

// BLAS's argument rules for the call (what the real cuBLAS checks): sizes not negative, the leading dimensions
// at least the stored rows of op's operand (A is M x K when transa is N, K x M otherwise), known op values.
bool blas_valid(const Call& c);

Route route(const Call& c, const Policy& p, const std::function<Facts()>& facts);

}  // namespace ks::dropin

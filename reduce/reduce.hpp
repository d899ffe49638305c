// Parallel reduction variants: the sum (or sum of squares) of n >= 1 elements of int32, int64, float or
// double. int32 sums into int64; int64 sums wrap as two's complement (as the host reference does); float and
// double sum in their own type. Inputs are const: every variant leaves them untouched.
#pragma once

#include "common/exec_context.hpp"
#include "common/gpu_runtime.hpp"
#include "reduce/warp.hpp"
#include "common/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace ks::reduce {

enum class DType { I32, I64, F32, F64 };
// The block size a variant runs with when none is asked for.
constexpr int kDefaultBlock = 256;
enum class Op { Sum, SumSquares };

const std::vector<DType>& all_dtypes();
std::string to_string(DType t);
std::string to_string(Op op);
DType parse_dtype(const std::string& s);  // int32|int64|float|double; throws std::invalid_argument
Op parse_op(const std::string& s);        // sum|sumsq
std::size_t size_of(DType t);             // bytes per input element
std::size_t result_size(DType t);         // bytes of the result: int64 for both integer types

struct ReduceCall {
  DType dtype = DType::F64;
  Op op = Op::Sum;
  const void* in = nullptr;  // device memory, or pinned host memory for variants with input_on_host
  std::size_t n = 0;
  void* out = nullptr;       // device memory for one result (int64, float or double)
  int block_size = kDefaultBlock;  // threads per block, for variants that take one
};

// Midpoint rule for the integral of f over [a, b] with n points: sum over i of f(a + (i + 1/2) h) * h.
struct IntegralCall {
  DType dtype = DType::F64;  // F32 or F64: the arithmetic type throughout
  double a = 0, b = 1;
  std::int64_t n = 0;
  void* out = nullptr;       // device memory for one float/double
  int block_size = kDefaultBlock;
};

using ReduceLaunch = std::function<void(const ReduceCall&, ExecContext&)>;
using IntegralLaunch = std::function<void(const IntegralCall&, ExecContext&)>;

// The block sizes every tree-shaped variant takes: the powers of two from two warps (a tree's last steps are
// the first warp's, reading the second warp's values) to 1024: 64 to 1024 on NVIDIA GPUs, 128 to 1024 where a
// wavefront has 64 lanes.
inline constexpr auto kPowerOfTwoBlockSizes = kTreeBlocks<kWarpSize>;
inline const std::vector<int> kPowerOfTwoBlocks(std::begin(kPowerOfTwoBlockSizes), std::end(kPowerOfTwoBlockSizes));
struct ReduceVariant {
  VariantInfo info{};
  std::vector<int> block_sizes{};  // what --block may ask for; empty: the variant chooses its own
  bool input_on_host = false;    // reads a pinned host array (copies inside the timed region)
  bool blocks_host = false;      // the launch waits for the device (a step on the host): never timed in batches
  // Every variant takes both operations (sum, sum of squares): the element transform is shared code.
  ReduceLaunch launch{};
  // The integral workload, where the technique fits (empty otherwise), and the precisions it fits.
  IntegralLaunch integral{};
  std::vector<DType> integral_types{DType::F32, DType::F64};

  bool takes_integral(DType t) const;
  bool takes_block(int block) const;  // any block when block_sizes is empty (the variant ignores it)
  std::string block_sizes_text() const;  // "64, 128, 256, 512 or 1024"; "its own" when empty
};

using ReduceRegistry = Registry<ReduceVariant>;
ReduceRegistry& registry();

// Checks the call (n >= 1, pointers, a block size the variant takes; else std::invalid_argument) and
// enqueues the variant on ctx.stream() (a new launch of the context: its scratch starts over).
void run(const ReduceVariant& v, const ReduceCall& c, ExecContext& ctx);
void run_integral(const ReduceVariant& v, const IntegralCall& c, ExecContext& ctx);

}  // namespace ks::reduce

// Declares a reduction variant from this file: KS_REDUCE_VARIANT({.info = {.name = ..., ...}, .launch = ...});
#define KS_REDUCE_VARIANT(...) KS_DECLARE_VARIANT(::ks::reduce::registry(), ::ks::reduce::ReduceVariant __VA_ARGS__)

// Running one reduction variant on one input, for tests and benchmarks alike.
#pragma once

#include "common/exec_context.hpp"
#include "common/resources.hpp"
#include "common/timing.hpp"
#include "reduce/reduce.hpp"
#include "reduce/reference.hpp"

#include <cstdint>
#include <vector>

namespace ks::reduce {

// Copies one result (result_size(t) bytes) from device memory on `stream`, waits for it, and decodes it.
Value read_value(DType t, const void* device, cudaStream_t stream);

// Seeded random elements (integers over their whole range, signs included; floating point uniform in
// [-1, 1)), the host reference, and device / pinned copies made on first use and then shared by every
// variant that reduces this input. Cold-L2 batches rotate over several device copies (device_copies).
class ReduceData {
 public:
  ReduceData(DType t, Op op, std::size_t n, std::uint64_t seed);
  DType dtype() const { return dtype_; }
  Op op() const { return op_; }
  std::size_t n() const { return n_; }
  std::uint64_t seed() const { return seed_; }
  std::size_t bytes() const { return n_ * size_of(dtype_); }
  const void* host() const { return host_.data(); }
  const Reference& reference() const { return ref_; }
  const void* device(int copy = 0);  // uploads on first call; copy < device_copies()
  const void* pinned();              // copies into pinned memory on first call
  // Makes up to `wanted` device copies in all, as many as a quarter of the free device memory holds (at least
  // one), and returns how many there are.
  int device_copies(int wanted);

 private:
  DType dtype_;
  Op op_;
  std::size_t n_;
  std::uint64_t seed_;
  std::vector<unsigned char> host_;
  Reference ref_;
  std::vector<DeviceBuffer<unsigned char>> device_;
  PinnedBuffer<unsigned char> pinned_;
};

class ReduceRunner {
 public:
  ReduceRunner(const ReduceVariant& v, ReduceData& data, int block, ExecContext& ctx);
  void reset_output();      // poisons the result (NaN or the integer sentinel); untimed
  void run(int copy = 0);   // enqueues the variant on device input copy `copy` (see ReduceData)
  Value result();           // waits and reads the result
  ReduceCheck check();      // result() against the reference
  // What the timing engine times: this runner's launches; cold L2 when `flusher` is given (flushed before each
  // sample, or input copies rotated in batches), warm otherwise.
  StreamWork work(const L2Flusher* flusher);
 private:
  const ReduceVariant& v_;
  ReduceData& data_;
  ExecContext& ctx_;
  ReduceCall call_;
  DeviceBuffer<std::int64_t> out_;
};

struct IntegralResult {
  Value value;
  double exact = 0, bound = 0, error = 0;
  bool ok = false;
  std::string report;
};

// Runs the integral once through `v` and checks it against the closed form (see reference.hpp).
class IntegralRunner {
 public:
  IntegralRunner(const ReduceVariant& v, DType t, double a, double b, std::int64_t n, int block, ExecContext& ctx);
  void run();
  IntegralResult check();

 private:
  const ReduceVariant& v_;
  ExecContext& ctx_;
  IntegralCall call_;
  DeviceBuffer<std::int64_t> out_;
};

}  // namespace ks::reduce

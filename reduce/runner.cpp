#include "reduce/runner.hpp"

#include "common/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace ks::reduce {

Value read_value(DType t, const void* device, cudaStream_t stream) {
  std::int64_t bits = 0;
  CUDA_CHECK(cudaMemcpyAsync(&bits, device, result_size(t), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return value_from_bytes(t, &bits);
}

ReduceData::ReduceData(DType t, Op op, std::size_t n, std::uint64_t seed)
    : dtype_(t), op_(op), n_(n), seed_(seed), host_(n * size_of(t)) {
  void* p = host_.data();
  switch (t) {
    case DType::I32: fill_random(static_cast<std::int32_t*>(p), n, seed, std::int32_t(0), std::int32_t(0)); break;
    case DType::I64: fill_random(static_cast<std::int64_t*>(p), n, seed, std::int64_t(0), std::int64_t(0)); break;
    case DType::F32: fill_random(static_cast<float*>(p), n, seed); break;
    case DType::F64: fill_random(static_cast<double*>(p), n, seed); break;
  }
  ref_ = host_reference(t, op, p, n);
}

const void* ReduceData::device(int copy) {
  if (device_.empty()) device_copies(1);
  return device_.at(static_cast<std::size_t>(copy)).data();
}

int ReduceData::device_copies(int wanted) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t room = host_.size() ? free_bytes / 4 / host_.size() : 0;
  const std::size_t want = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(std::max(wanted, 1)),
                                                                        device_.size() + room));
  while (device_.size() < want) {
    device_.emplace_back(host_.size());
    upload_now(device_.back().data(), host_.data(), host_.size());
  }
  return static_cast<int>(device_.size());
}

const void* ReduceData::pinned() {
  if (pinned_.empty()) {
    pinned_ = PinnedBuffer<unsigned char>(host_.size());
    std::memcpy(pinned_.data(), host_.data(), host_.size());
  }
  return pinned_.data();
}

ReduceRunner::ReduceRunner(const ReduceVariant& v, ReduceData& data, int block, ExecContext& ctx)
    : v_(v), data_(data), ctx_(ctx), out_(1) {
  call_.dtype = data.dtype();
  call_.op = data.op();
  call_.in = v.input_on_host ? data.pinned() : data.device(0);
  call_.n = data.n();
  call_.out = out_.data();
  call_.block_size = block;
}

void ReduceRunner::reset_output() {
  CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
  const std::int64_t poison_bits = data_.dtype() == DType::F32   ? 0x7fc000007fc00000ll  // NaN as float
                                   : data_.dtype() == DType::F64 ? 0x7ff8000000000000ll  // NaN as double
                                                                 : poison_value<std::int64_t>();
  upload_now(out_.data(), &poison_bits, sizeof poison_bits);
}

void ReduceRunner::run(int copy) {
  if (!v_.input_on_host) call_.in = data_.device(copy);
  reduce::run(v_, call_, ctx_);
}

StreamWork ReduceRunner::work(const L2Flusher* flusher) {
  StreamWork w;
  w.run = [this](int copy) { run(copy); };
  w.blocks_host = v_.blocks_host;
  if (!flusher) return w;
  w.flush = [this, flusher] { flusher->flush(ctx_.stream()); };
  if (!v_.input_on_host) {
    w.make_copies = [this](int wanted) { return data_.device_copies(wanted); };
    w.bytes_per_copy = data_.bytes();
  }
  return w;
}

Value ReduceRunner::result() { return read_value(data_.dtype(), out_.data(), ctx_.stream()); }

ReduceCheck ReduceRunner::check() {
  return check_result(data_.reference(), result(), data_.n(), data_.seed());
}

IntegralRunner::IntegralRunner(const ReduceVariant& v, DType t, double a, double b, std::int64_t n, int block,
                               ExecContext& ctx)
    : v_(v), ctx_(ctx), out_(1) {
  call_.dtype = t;
  call_.a = a;
  call_.b = b;
  call_.n = n;
  call_.out = out_.data();
  call_.block_size = block;
}

void IntegralRunner::run() { run_integral(v_, call_, ctx_); }

IntegralResult IntegralRunner::check() {
  IntegralResult r;
  r.value = read_value(call_.dtype, out_.data(), ctx_.stream());
  r.exact = integral_exact(call_.a, call_.b);
  r.bound = integral_bound(call_.dtype, call_.a, call_.b, call_.n);
  if (call_.dtype == DType::F32) r.bound = std::min(r.bound, kFloatIntegralRelTol * std::fabs(r.exact));
  r.error = std::fabs(r.value.f - r.exact);
  r.ok = std::isfinite(r.value.f) && r.error <= r.bound;
  std::ostringstream os;
  os.precision(10);
  os << v_.info.name << " " << to_string(call_.dtype) << " integral: got " << r.value.f << ", exact " << r.exact
     << ", error " << r.error << ", bound " << r.bound;
  r.report = os.str();
  return r;
}

}  // namespace ks::reduce

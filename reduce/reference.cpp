#include "reduce/reference.hpp"

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

namespace ks::reduce {

std::string Value::str() const {
  std::ostringstream os;
  if (dtype == DType::I32 || dtype == DType::I64) {
    os << i;
  } else {
    os.precision(dtype == DType::F32 ? 9 : 17);
    os << f;
  }
  return os.str();
}

bool Value::bitwise_equal(const Value& o) const {
  if (dtype != o.dtype) return false;
  if (dtype == DType::I32 || dtype == DType::I64) return i == o.i;
  if (dtype == DType::F32) {
    const float a = static_cast<float>(f), b = static_cast<float>(o.f);
    return std::memcmp(&a, &b, sizeof a) == 0;
  }
  return std::memcmp(&f, &o.f, sizeof f) == 0;
}

Value value_from_bytes(DType t, const void* bytes) {
  Value v;
  v.dtype = t;
  if (t == DType::I32 || t == DType::I64) {
    std::memcpy(&v.i, bytes, 8);
  } else if (t == DType::F32) {
    float x;
    std::memcpy(&x, bytes, 4);
    v.f = x;
  } else {
    std::memcpy(&v.f, bytes, 8);
  }
  return v;
}

namespace {

template <class T>
Reference integer_reference(const T* x, std::size_t n, Op op) {
  std::uint64_t s = 0;  // unsigned: wraps exactly like the device's two's complement sums
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::uint64_t>(static_cast<std::int64_t>(x[i]));
    s += op == Op::Sum ? v : v * v;
  }
  Reference r;
  r.value.dtype = std::is_same_v<T, std::int32_t> ? DType::I32 : DType::I64;
  r.value.i = static_cast<std::int64_t>(s);
  return r;
}

template <class T>
Reference float_reference(const T* x, std::size_t n, Op op) {
  long double sum = 0, comp = 0, abs_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const long double v = op == Op::Sum ? static_cast<long double>(x[i])
                                        : static_cast<long double>(x[i]) * static_cast<long double>(x[i]);
    const long double t = sum + v;  // Neumaier: compensate whichever operand lost bits
    comp += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
    abs_sum += std::fabs(v);
  }
  Reference r;
  r.value.dtype = std::is_same_v<T, float> ? DType::F32 : DType::F64;
  r.exact = sum + comp;
  r.abs_sum = abs_sum;
  r.value.f = static_cast<double>(static_cast<T>(r.exact));
  return r;
}

}  // namespace

Reference host_reference(DType t, Op op, const void* data, std::size_t n) {
  switch (t) {
    case DType::I32: return integer_reference(static_cast<const std::int32_t*>(data), n, op);
    case DType::I64: return integer_reference(static_cast<const std::int64_t*>(data), n, op);
    case DType::F32: return float_reference(static_cast<const float*>(data), n, op);
    case DType::F64: return float_reference(static_cast<const double*>(data), n, op);
  }
  return {};
}

ReduceCheck check_result(const Reference& ref, const Value& got, std::size_t n, std::uint64_t seed) {
  ReduceCheck c;
  std::ostringstream os;
  os.precision(17);
  const DType t = ref.value.dtype;
  if (t == DType::I32 || t == DType::I64) {
    c.ok = got.i == ref.value.i;
    if (!c.ok) os << "got " << got.i << ", want exactly " << ref.value.i;
  } else {
    const double eps = t == DType::F32 ? std::numeric_limits<float>::epsilon()
                                       : std::numeric_limits<double>::epsilon();
    const long double bound = static_cast<long double>(n) * eps * ref.abs_sum;
    const long double err = std::fabs(static_cast<long double>(got.f) - ref.exact);
    c.ok = std::isfinite(got.f) && err <= bound;
    if (!c.ok)
      os << "got " << got.str() << ", want " << static_cast<double>(ref.exact) << " +- "
         << static_cast<double>(bound) << " (error " << static_cast<double>(err) << ")";
  }
  if (!c.ok) c.report = os.str() + " (n " + std::to_string(n) + ", seed " + std::to_string(seed) + ")";
  return c;
}

double integral_exact(double a, double b) {
  auto F = [](double x) {
    return x / 4 + std::sin(2 * x) / 16 - std::sin(4 * x) / 16 - std::sin(6 * x) / 48;
  };
  return F(b) - F(a);
}

double integral_bound(DType t, double a, double b, std::int64_t n) {
  const double eps = t == DType::F32 ? std::numeric_limits<float>::epsilon()
                                     : std::numeric_limits<double>::epsilon();
  const double len = std::fabs(b - a), h = len / static_cast<double>(n);
  const double xmax = std::max(std::fabs(a), std::fabs(b));
  const double e_mid = len * h * h / 24 * 16;
  const double e_eval = len * (3 * 4 * eps * xmax + 8 * eps);
  const double e_sum = static_cast<double>(n - 1) * eps * len;
  return e_mid + e_eval + e_sum;
}

double host_recursive_interleaved(const double* x, std::size_t n) {
  std::vector<double> v(x, x + n);
  std::size_t size = n;
  while (size > 1) {
    const std::size_t half = size / 2;
    for (std::size_t i = 0; i < half; ++i) v[i] += v[i + half];
    if (size % 2) v[0] += v[size - 1];  // the odd element out
    size = half;
  }
  return n ? v[0] : 0.0;
}

double host_eigen_sum(const double* x, std::size_t n) {
  return Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(n)).sum();
}

double host_openmp_sum(const double* x, std::size_t n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

}  // namespace ks::reduce

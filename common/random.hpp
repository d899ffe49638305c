// Seeded random inputs and poisoned outputs.
//
// Every check draws fresh inputs from a seed; the seed is printed with any failure (KS_SEED=<n> in the
// environment replays it). Outputs are poisoned before a checked run so an element the kernel never
// wrote fails validation: NaN for floating point, a fixed sentinel for integers.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

namespace ks {

// KS_SEED from the environment when set (to replay a failure), otherwise a fresh random seed. A KS_SEED that
// is not a whole number from 0 to 2^64 - 1 (decimal digits only) throws std::invalid_argument saying so.
std::uint64_t choose_seed();
std::uint64_t parse_seed(const std::string& text);

// Uniform in [lo, hi] for floating point; for integers, the whole range of T unless lo < hi is given.
template <class T>
void fill_random(T* p, std::size_t n, std::uint64_t seed, T lo = T(-1), T hi = T(1)) {
  std::mt19937_64 rng(seed);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(lo, hi);
    for (std::size_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else {
    const bool full = !(lo < hi);
    std::uniform_int_distribution<T> dist(full ? std::numeric_limits<T>::min() : lo,
                                          full ? std::numeric_limits<T>::max() : hi);
    for (std::size_t i = 0; i < n; ++i) p[i] = dist(rng);
  }
}

template <class T>
constexpr T poison_value() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0x5A5A5A5A5A5A5A5Aull));
  }
}

template <class T>
void poison(T* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = poison_value<T>();
}

}  // namespace ks

// From a run-time index to a template argument: the row of a constexpr table (a kernel's tile shape) chosen at run
// time, instantiated at compile time for every row.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ks {

namespace detail {
template <class F, int... I>
void with_index(int i, F&& f, std::integer_sequence<int, I...>) {
  ((i == I ? f(std::integral_constant<int, I>{}) : void()), ...);
}
}  // namespace detail

// Calls f(std::integral_constant<int, I>{}) for the I in [0, N) that equals i; std::invalid_argument naming `what`
// when there is none.
template <int N, class F>
void with_index(int i, F&& f, const char* what) {
  if (i < 0 || i >= N) throw std::invalid_argument(std::string(what) + ": no row " + std::to_string(i));
  detail::with_index(i, std::forward<F>(f), std::make_integer_sequence<int, N>{});
}

}  // namespace ks

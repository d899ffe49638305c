// A bounded randomized test of every parser that takes user input (kbench's sizes, types, modes, lists):
// strings built from digits, separators, suffixes, signs, exponents, spaces, control and non-ASCII bytes, and
// long digit runs (overflow). Each must either parse to values inside their documented range or throw
// std::invalid_argument; anything else (another exception, a crash, a sanitizer report) fails. Fixed seed per
// run printed on failure; a fixed budget of iterations keeps it under a second.
#include "bench/parse.hpp"
#include "gemm/host/modes.hpp"
#include "reduce/reduce.hpp"

#include "common/random.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ks::bench {
namespace {

std::string random_input(std::mt19937_64& rng) {
  static const std::vector<std::string> pieces{
      "0", "1", "7", "9", "64", "1024", "4095", "2^", "^", "x", "X", ",", ",,", "K", "M", "G", "k", "-", "+",
      ".", "e", "E30", " ", "\t", "\n", "\x01", "\xc3\xa9", "\xff", "\xe2\x80\x8b", "2^64", "2^40", "2^41",
      "18446744073709551616", "99999999999999999999999", "2147483648", "int32", "double", "device", "sum", "(",
      "nan", "inf", "0x10"};
  std::uniform_int_distribution<int> count(0, 8);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::string s;
  for (int i = count(rng); i > 0; --i) s += pieces[pick(rng)];
  return s;
}

template <class F>
void expect_parses_or_rejects(const std::string& input, std::uint64_t seed, F&& parse) {
  try {
    parse(input);
  } catch (const std::invalid_argument&) {
    // a clear rejection: fine
  } catch (const std::exception& e) {
    ADD_FAILURE() << "input '" << input << "' (seed " << seed << ") threw " << typeid(e).name() << ": " << e.what();
  }
}

TEST(ParserFuzz, EveryInputParsesWithinRangeOrIsRejected) {
  const std::uint64_t seed = choose_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const std::string in = random_input(rng);
    expect_parses_or_rejects(in, seed, [&](const std::string& s) {
      for (std::size_t n : parse_counts(s)) {
        ASSERT_GE(n, 1u) << s;
        ASSERT_LE(n, std::size_t(1) << 40) << s;
      }
    });
    expect_parses_or_rejects(in, seed, [&](const std::string& s) {
      for (const GemmSize& g : parse_gemm_sizes(s)) ASSERT_TRUE(g.M >= 1 && g.N >= 1 && g.K >= 1) << s;
    });
    expect_parses_or_rejects(in, seed, [](const std::string& s) { split_list(s); });
    expect_parses_or_rejects(in, seed, [](const std::string& s) { reduce::parse_dtype(s); });
    expect_parses_or_rejects(in, seed, [](const std::string& s) { reduce::parse_op(s); });
    expect_parses_or_rejects(in, seed, [](const std::string& s) { gemm::parse_mode(s); });
  }
}

}  // namespace
}  // namespace ks::bench

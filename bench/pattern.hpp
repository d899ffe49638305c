// A regular expression from the user (--variants, --benchmark_filter, resources --filter, KS_BENCH_FAULT) or one
// run over a tool's output, matched by RE2: time linear in the text and no recursion, whatever the pattern
// (std::regex backtracks: '(.*)*z' over a few hundred row names never finished, and long lines exhausted its
// stack). RE2's syntax is Perl's without backreferences and lookaround (github.com/google/re2/wiki/Syntax).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace ks::bench {

constexpr std::size_t kMaxPatternLength = 256;

class Pattern {
 public:
  // Throws std::invalid_argument naming `option` when the pattern is longer than kMaxPatternLength or RE2 cannot
  // compile it.
  Pattern(const std::string& pattern, const std::string& option);
  // Does the whole of `s` match?
  bool matches_whole(std::string_view s) const;
  // Does some part of `s` match?
  bool found_in(std::string_view s) const;
  // The first group of the first match in `s`, or nothing (false).
  bool first_group(std::string_view s, std::string& group) const;
  // `s` with every match replaced by `with`.
  std::string replaced(std::string s, std::string_view with) const;

 private:
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace ks::bench

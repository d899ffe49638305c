#include "bench/pattern.hpp"

#include <re2/re2.h>

#include <stdexcept>

namespace ks::bench {

Pattern::Pattern(const std::string& pattern, const std::string& option) {
  const std::string shown = pattern.size() > 40 ? pattern.substr(0, 40) + "..." : pattern;
  if (pattern.size() > kMaxPatternLength)
    throw std::invalid_argument(option + " pattern of " + std::to_string(pattern.size()) +
                                " characters is too long (at most " + std::to_string(kMaxPatternLength) + ")");
  RE2::Options o;
  o.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, o);
  if (!re->ok())
    throw std::invalid_argument(option + " '" + shown + "' is not a valid regular expression (RE2 syntax): " +
                                re->error());
  re_ = std::move(re);
}

bool Pattern::matches_whole(std::string_view s) const { return RE2::FullMatch(s, *re_); }
bool Pattern::found_in(std::string_view s) const { return RE2::PartialMatch(s, *re_); }

bool Pattern::first_group(std::string_view s, std::string& group) const {
  return RE2::PartialMatch(s, *re_, &group);
}

std::string Pattern::replaced(std::string s, std::string_view with) const {
  RE2::GlobalReplace(&s, *re_, re2::StringPiece(with.data(), with.size()));
  return s;
}

}  // namespace ks::bench

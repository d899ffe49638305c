// Fuzz target: user patterns (--variants, --benchmark_filter, resources --filter, KS_BENCH_FAULT) matched
// against text. The input's first line is the pattern, the rest the text. Every pattern either compiles or is
// a std::invalid_argument, and matching takes time linear in the text (libFuzzer's -timeout catches a hang).
#include "tests/fuzz/fuzz_check.hpp"

#include "bench/pattern.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ks;
  const std::string in(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = in.find('\n');
  const std::string pattern = in.substr(0, cut);
  const std::string text = cut == std::string::npos ? std::string() : in.substr(cut + 1);
  fuzz::parses_or_rejects("Pattern", pattern, [&](const std::string& p) {
    const bench::Pattern re(p, "--variants");
    fuzz::require(p.size() <= bench::kMaxPatternLength, "a pattern over the length limit compiled", p);
    const bool whole = re.matches_whole(text);
    const bool found = re.found_in(text);
    fuzz::require(!whole || found, "matches the whole text but is not found in it", p);
    std::string group;
    re.first_group(text, group);
    fuzz::require(group.size() <= text.size(), "a group longer than the text", p);
    re.replaced(text, "");
  });
  return 0;
}

// What every fuzz target here asserts: a parser of untrusted text either returns values inside its documented
// range or throws std::invalid_argument; any other exception, an out-of-range value, a crash or a sanitizer
// report is a finding (libFuzzer saves the input; keep it in corpus/<target>/ as a regression case).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace ks::fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

inline void require(bool ok, const char* what, const std::string& input) {
  if (!ok) finding(what, input.substr(0, 200));
}

// Runs `parse(input)`; a std::invalid_argument is a clear rejection, any other exception a finding.
template <class F>
void parses_or_rejects(const char* parser, const std::string& input, F&& parse) {
  try {
    parse(input);
  } catch (const std::invalid_argument&) {
  } catch (const std::exception& e) {
    finding(parser, std::string("threw ") + typeid(e).name() + ": " + e.what());
  }
}

}  // namespace ks::fuzz

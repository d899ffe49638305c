#include "bench/cli.hpp"

#include "common/build_info.hpp"

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace ks::cli {

int handle_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_name() == "CallForHelp" || e.get_name() == "CallForAllHelp" || e.get_name() == "CallForVersion")
    return app.exit(e);
  std::cerr << app.get_name() << ": " << e.what() << "\n";
  std::cerr << "Run with --help for usage.\n";
  return kUsage;
}

int guarded(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kUsage;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kFailure;
  }
}

int finish(const char* program, int rc) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good();
  if (!failed) return rc;
  const int err = errno;
  std::fprintf(stderr, "%s: cannot write standard output%s%s\n", program, err ? ": " : "", err ? std::strerror(err) : "");
  return rc == kOk ? kFailure : rc;
}

void ignore_sigpipe() { std::signal(SIGPIPE, SIG_IGN); }

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& n : items) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string version_line(const char* program) {
  return std::string(program) + " " + KS_VERSION + " (git " + KS_GIT_REVISION + ", " + KS_BUILD_TYPE + ")";
}

CLI::Validator whole_number(long long min, long long max) {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& s) -> std::string {
        const std::string want = "must be a whole number from " + range + " (got '" + s + "')";
        if (s.empty() || s.size() > 18) return want;
        for (char c : s)
          if (c < '0' || c > '9') return want;
        const long long v = std::stoll(s);
        return v < min || v > max ? want : std::string();
      },
      "INT " + range);
}

CLI::Validator positive_number(double max) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", max);
  const std::string limit = buf;
  return CLI::Validator(
      [max, limit](std::string& s) -> std::string {
        const std::string want = "must be a number above 0 and at most " + limit + " (got '" + s + "')";
        // Decimal or exponent forms (0.5, 1e-3, 2.5E+2); no signs before the digits, no inf or nan.
        if (s.empty() || s.size() > 32 || s.find_first_not_of("0123456789.eE+-") != std::string::npos ||
            (!std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '.'))
          return want;
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          return want;
        }
        return used != s.size() || !(v > 0) || v > max ? want : std::string();
      },
      "NUMBER in (0, " + limit + "]");
}

}  // namespace ks::cli

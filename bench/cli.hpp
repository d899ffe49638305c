// Shared conventions of the suite's command-line programs (CLI11 front):
// exit 0 on success and for --help, 1 when no usable GPU (or a run failed), 2 for bad usage.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <stdexcept>

namespace ks::cli {

enum ExitCode : int { kOk = 0, kFailure = 1, kUsage = 2 };

// Maps a CLI11 parse outcome to the suite's exit codes: help prints and succeeds; anything else prints the
// error and the usage line and exits 2.
inline int handle_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_name() == "CallForHelp" || e.get_name() == "CallForAllHelp" ||
      e.get_name() == "CallForVersion") {
    return app.exit(e);
  }
  std::cerr << app.get_name() << ": " << e.what() << "\n";
  std::cerr << "Run with --help for usage.\n";
  return kUsage;
}

// Runs a program's body and maps what escapes it to one line on stderr and the suite's exit code: bad input
// (std::invalid_argument) exits 2; no GPU (NoDeviceError) or any other failure exits 1.
template <class Body>
int guarded(const char* program, Body&& body) {
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

}  // namespace ks::cli

// The suite's command-line programs' exit codes and the handling around a program's body, without the CLI11
// front (bench/cli.hpp), so that the sources that only report or exit need not compile CLI11's headers:
// exit 0 on success and for --help/--version, 1 when no usable GPU, a failed row or a write error, 2 for bad
// input (before any GPU work), 128 + N after signal N.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ks::cli {

enum ExitCode : int { kOk = 0, kFailure = 1, kUsage = 2 };

// Runs a program's body and maps what escapes it to one line on stderr and the suite's exit code: bad input
// (std::invalid_argument) exits 2; no GPU (NoDeviceError) or any other failure exits 1.
int guarded(const char* program, const std::function<int()>& body);

// Ends a program: flushes standard output and, where that failed (a full disk, a closed pipe), says so in one
// line and turns a success into exit 1.
int finish(const char* program, int rc);

// Makes a write to a closed pipe fail with EPIPE (reported by finish()) instead of killing the program.
void ignore_sigpipe();

// "kbench 0.2.0 (git abc123def456, Release)"
std::string version_line(const char* program);

// Names for a message or a listing, comma separated: "a, b, c".
std::string joined(const std::vector<std::string>& items);

}  // namespace ks::cli

// Shared conventions of the suite's command-line programs, the CLI11 front: the exit codes and the handling around
// a program's body are in bench/program.hpp (exit 0 on success and for --help/--version, 1 when no usable GPU, a
// failed row or a write error, 2 for bad input, 128 + N after signal N).
#pragma once

#include "bench/program.hpp"

#include <CLI/CLI.hpp>

namespace ks::cli {

// Maps a CLI11 parse outcome to the suite's exit codes: help and version print and succeed; anything else
// prints the error and the usage line and exits 2.
int handle_parse_error(const CLI::App& app, const CLI::ParseError& e);

// Validators whose messages say what is accepted: a whole number in [min, max] (digits only), a decimal
// number in (0, max].
CLI::Validator whole_number(long long min, long long max);
CLI::Validator positive_number(double max);

}  // namespace ks::cli

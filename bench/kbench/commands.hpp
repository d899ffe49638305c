// kbench's subcommands, one file each (bench/kbench/cmd_*.cpp); bench/kbench/main.cpp wires them to CLI11.
// Each returns the program's exit code (bench/cli.hpp) and may throw: std::invalid_argument for bad input
// (exit 2), anything else for a runtime failure (exit 1).
#pragma once

#include "bench/kbench/options.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ks::bench {

class Session;

// kbench run: validates and times the plan's rows; `after` (console and md formats) gets the session once the
// table is printed.
int run_command(const RunOptions& o, const std::string& command_line,
                const std::function<void(const Session&)>& after = {});
// kbench list [gemm|reduce] [--format console|md]
int list_command(const std::string& family, const std::string& format);
// kbench autotune: every dmma tile configuration against cuBLAS, and the rule's pick per size.
int autotune_command(RunOptions o, const std::string& command_line);
// kbench compare: hands the files to bench/compare.py.
int compare_command(const std::vector<std::string>& files, const std::string& plots_dir);
// kbench pipeline: the pipelined modes' tile rule for the given products, link and rates; no GPU.
int pipeline_command(const PipelineOptions& o);
// kbench resources: registers, shared memory, spills and occupancy of every kernel, from cuobjdump.
int resources_command(const ResourcesOptions& o);

}  // namespace ks::bench

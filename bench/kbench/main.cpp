// kbench: the suite's benchmark runner. CLI11 front; GPU rows timed by CUDA events after nvbench's model
// (common/timing.hpp), host rows by Google Benchmark (bench/host_timing.hpp).
//   kbench list [gemm|reduce] [--format console|md]
//   kbench run [options]                 validate and time variants against the anchors (kbench run --help)
//   kbench autotune [--sizes LIST] ...   every dmma tile configuration against cuBLAS, and the rule's pick
//   kbench compare A.json B.json ... [--plots DIR]
//   kbench resources [--threads N] [--filter REGEX] [--all] [--cuobjdump PATH]
//   kbench pipeline --sizes LIST --h2d GB/s --tflops LIST ...  the pipelined modes' plan, no GPU
// This file wires the options to the subcommands (bench/kbench/cmd_*.cpp); exit codes: bench/cli.hpp.
#include "bench/cli.hpp"
#include "bench/kbench/commands.hpp"
#include "common/registry.hpp"
#include "gemm/gemm.hpp"
#include "gemm/host/modes.hpp"
#include "reduce/reduce.hpp"

#include <iostream>

namespace {

using ks::bench::PipelineOptions;
using ks::bench::ResourcesOptions;
using ks::bench::RunOptions;
namespace cli = ks::cli;

// The launch modes by name, for help texts.
std::string mode_names() {
  std::string s;
  for (ks::gemm::Mode m : ks::gemm::all_modes()) s += (s.empty() ? "" : ", ") + ks::gemm::to_string(m);
  return s;
}

// The options run and autotune share: timing and output.
void add_timing_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--repetitions", o.repetitions, "Minimum timed repetitions per row (default 10)")
      ->check(cli::whole_number(1, 100000));
  cmd->add_option("--warmup", o.warmup, "Untimed runs before timing (default 2)")->check(cli::whole_number(0, 100000));
  cmd->add_option("--noise", o.noise_percent,
                  "Repeat a row until the standard deviation of its samples is at most this % of their median "
                  "(default 1)")
      ->check(cli::positive_number(100));
  cmd->add_option("--time-budget", o.time_budget_s, "... or until this many seconds are spent on it (default 0.5)")
      ->check(cli::positive_number(3600));
  cmd->add_option("--out", o.out, "Write the results (JSON with the run's context) to this file");
  cmd->add_option("--device", o.device, "CUDA device index (default 0)")->check(cli::whole_number(0, 1023));
  cmd->add_flag("--no-blocking", o.no_blocking,
                "One launch per sample, without the blocking kernel in front and without batches");
  cmd->add_flag("--stream-batches", o.stream_batches, "Batches of short launches as stream launches, not one CUDA graph");
}

void add_run_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--suite", o.suite,
                  "gemm, reduce, integral or all (default); shapes: the named sweep of DGEMM shape classes (dmma_tma "
                  "against cuBLAS, or warp_tiled in the HIP build, unless --variants says otherwise; --sizes replaces the sweep), with each class's "
                  "geometric mean")
      ->check(CLI::IsMember({"gemm", "reduce", "integral", "all", "shapes"}));
  cmd->add_option("--variants", o.variants, "Regular expression over variant and host-row names (the anchor always runs)");
  cmd->add_option("--types", o.types, "Reduction types: int32,int64,float,double (default int64,double)");
  cmd->add_option("--sizes", o.sizes, "GEMM: 1024,2048 or MxNxK; reductions/integral: counts like 1000, 2^24, 16M");
  cmd->add_option("--mode", o.modes, "GEMM launch modes, a list of " + mode_names() + " (default device)");
  cmd->add_option("--l2", o.l2, "warm or cold L2 for every row (default: GEMM warm, reductions cold)")
      ->check(CLI::IsMember({"warm", "cold"}));
  cmd->add_option("--device-memory", o.device_memory,
                  "The pipelined modes' device-memory budget per device, e.g. 8G (default: what is free)");
  cmd->add_option("--devices", o.devices, "The pipelined modes' devices, e.g. 0,1 (default: --device)");
  cmd->add_option("--pageable", o.pageable,
                  "How pageable_pipelined's operands cross: stage (pinned buffers filled by host threads), register "
                  "(cudaHostRegister per run), or auto (default: one run each way at set-up, the faster kept)")
      ->check(CLI::IsMember({"stage", "register", "auto"}));
  cmd->add_option("--dist", o.dist,
                  "GEMM operands A and B: uniform (default, [-1, 1)), exp:PHI ((u - 0.5) exp(PHI g), g standard "
                  "normal: wider exponents with PHI, 0 to 8), either followed by ,pow2:S (rows of A and columns of B "
                  "scaled by 2^s, s in [-S, S], S up to 400)");
  cmd->add_option("--ops", o.ops,
                  "GEMM op(A) op(B) combinations, a list of NN, NT, TN, TT (C as T; default NN): every size runs in "
                  "each, A stored K x M where op(A) = A^T, B stored N x K where op(B) = B^T; a variant that takes "
                  "only NN reports the others skipped");
  cmd->add_option("--validate", o.validate,
                  "GEMM validation: full (the whole Eigen reference), sampled (4096 elements, every element of a "
                  "smaller C, against long-double dot products) or auto (default: sampled above 2^37 multiply-adds)")
      ->check(CLI::IsMember({"full", "sampled", "auto"}));
  cmd->add_option("--block", o.block, "Threads per block for the reductions that take one")
      ->check(cli::whole_number(1, 1024));
  cmd->add_flag("--interleave", o.interleave,
                "Time each device-mode GEMM row and each reduction row with samples of its group's anchor "
                "(cuBLAS, CUB) taken in turn with its own, and take its ratio from those: both then run at the same "
                "clocks. The anchor's own row is timed as usual; the ratio to it is kept as vs_anchor_alone");
  cmd->add_flag("--no-validate", o.no_validate, "Skip validation (not recommended)");
  cmd->add_flag("--skip-ceilings", o.skip_ceilings, "Do not measure the ceilings (no % of ceiling column)");
  cmd->add_option("--format", o.format, "console (default), md, csv or json (the results document, on stdout)")
      ->check(CLI::IsMember({"console", "md", "csv", "json"}));
  add_timing_options(cmd, o);
  cmd->allow_extras();
}

// The options given on the command line (so that an empty value or an option foreign to the suite is seen).
std::vector<std::string> given_options(const CLI::App* cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : cmd->get_options())
    if (opt->count() > 0) out.push_back(opt->get_name());
  return out;
}

// Declarations that went wrong (a name declared twice) make every result suspect: refuse to run.
int check_registries() {
  std::vector<std::string> problems = ks::gemm::registry().problems();
  for (const std::string& p : ks::reduce::registry().problems()) problems.push_back(p);
  for (const std::string& p : problems) std::cerr << "kbench: " << p << "\n";
  return problems.empty() ? cli::kOk : cli::kFailure;
}

int dispatch(int argc, char** argv) {
  CLI::App app{"kbench: DGEMM and reduction variants, validated and timed against cuBLAS and CUB"};
  app.name("kbench");
  app.set_version_flag("--version", cli::version_line("kbench"));
  app.require_subcommand(1, 1);
  std::string family, list_format = "console";
  auto* list_cmd = app.add_subcommand("list", "List the declared variants in ladder order");
  list_cmd->add_option("family", family, "gemm or reduce (default both)")->check(CLI::IsMember({"gemm", "reduce"}));
  list_cmd->add_option("--format", list_format, "console (default) or md (the README's tables)")
      ->check(CLI::IsMember({"console", "md"}));
  std::vector<std::string> compare_files;
  std::string plots_dir;
  auto* compare_cmd = app.add_subcommand("compare", "Compare result files: a markdown table, and plots with --plots");
  compare_cmd->add_option("files", compare_files, "kbench results files (from --out)")->required()->check(CLI::ExistingFile);
  compare_cmd->add_option("--plots", plots_dir, "Write PNG and SVG plots into this directory (needs matplotlib)");
  ResourcesOptions ro;
  auto* resources_cmd =
      app.add_subcommand("resources", "Registers, shared memory, spills and occupancy of every kernel, per architecture");
  resources_cmd->add_option("--threads", ro.threads, "Threads per block for the occupancy column (default 256)")
      ->check(cli::whole_number(32, 1024));
  resources_cmd->add_option("--filter", ro.filter, "Regular expression over kernel or source names");
  resources_cmd->add_flag("--all", ro.all, "Include the library kernels (CUB) too");
  resources_cmd->add_option("--cuobjdump", ro.cuobjdump, "Path to cuobjdump");
  PipelineOptions po;
  auto* pipeline_cmd = app.add_subcommand(
      "pipeline", "The pipelined modes' plan for products from host memory: the tile rule's choice and predicted time "
                  "for a given link and rate (no GPU)");
  pipeline_cmd->add_option("--sizes", po.sizes, "GEMM sizes: 8192,60000 or MxNxK")->required();
  pipeline_cmd->add_option("--h2d", po.h2d_gbs, "The link to each device, GB/s (kbench run measures it: H2D pinned)")
      ->required()
      ->check(cli::positive_number(100000));
  pipeline_cmd->add_option("--d2h", po.d2h_gbs, "The link back, GB/s (default: --h2d)")
      ->check(cli::positive_number(100000));
  pipeline_cmd->add_option("--tflops", po.tflops, "The compute step's rate on one device, TFLOP/s; a list: 60,64")
      ->required()
      ->delimiter(',')
      ->check(cli::positive_number(1000000));
  pipeline_cmd->add_option("--device-memory", po.device_memory,
                           "Device-memory budget per device, e.g. 24G (default 80G, an H100's)");
  pipeline_cmd->add_option("--gpus", po.gpus, "Devices that split the product (default 1)")
      ->check(cli::whole_number(1, 64));
  pipeline_cmd->add_flag("--beta", po.beta_nonzero, "beta is not 0: C crosses to the device too");
  pipeline_cmd->add_option("--nt", po.nt, "Panel width (default: the rule's)")->check(cli::whole_number(1, 1 << 30));
  pipeline_cmd->add_option("--lead", po.lead, "Lead panels (default: the rule's)")->check(cli::whole_number(1, 1 << 30));
  pipeline_cmd->add_option("--chunks", po.chunks, "A's chunks per block (default: the rule's)")
      ->check(cli::whole_number(1, 1 << 30));
  pipeline_cmd->add_option("--format", po.format, "console (default) or md")->check(CLI::IsMember({"console", "md"}));
  RunOptions o;
  auto* run_cmd = app.add_subcommand("run", "Run the benchmark suite (no options: the default suite)");
  add_run_options(run_cmd, o);
  RunOptions to;
  auto* tune_cmd = app.add_subcommand(
      "autotune", "Time every dmma tile configuration against cuBLAS on this GPU and print the fastest per size");
  add_timing_options(tune_cmd, to);
  tune_cmd->add_option("--sizes", to.sizes, "GEMM sizes: 1024,2048 or MxNxK (default: a square, odd and skinny mix)");
  tune_cmd->add_option("--format", to.format, "The run's table: console (default), md, csv or json")
      ->check(CLI::IsMember({"console", "md", "csv", "json"}));
  run_cmd->footer("Also Google Benchmark's flags --benchmark_filter=REGEX (rows whose name matches, RE2 syntax) and "
                  "--benchmark_list_tests (list the rows; no GPU needed).");
  try {
    app.parse(argc, argv);
    for (const std::string& extra : run_cmd->remaining()) {
      if (extra.rfind("--benchmark_", 0) != 0) throw CLI::ExtrasError({extra});
      o.benchmark_flags.push_back(extra);
    }
  } catch (const CLI::ParseError& e) {
    return cli::handle_parse_error(app, e);
  }
  if (const int rc = check_registries()) return rc;
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  if (*list_cmd) return ks::bench::list_command(family, list_format);
  if (*compare_cmd) return cli::guarded("kbench", [&] { return ks::bench::compare_command(compare_files, plots_dir); });
  if (*pipeline_cmd) return cli::guarded("kbench", [&] { return ks::bench::pipeline_command(po); });
  if (*resources_cmd) return cli::guarded("kbench", [&] { return ks::bench::resources_command(ro); });
  if (*tune_cmd) {
    to.given = given_options(tune_cmd);
    return cli::guarded("kbench", [&] { return ks::bench::autotune_command(to, command_line); });
  }
  o.given = given_options(run_cmd);
  return cli::guarded("kbench", [&] { return ks::bench::run_command(o, command_line); });
}

}  // namespace

int main(int argc, char** argv) {
  cli::ignore_sigpipe();
  return cli::finish("kbench", dispatch(argc, argv));
}

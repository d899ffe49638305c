// kbench run: check all input, open the device, measure the ceilings, run every row (GPU rows timed by CUDA
// events, common/timing.hpp; host rows by Google Benchmark, bench/host_timing.hpp), write the results file and
// print the table.
#include "bench/kbench/commands.hpp"
#include "bench/kbench/context.hpp"
#include "bench/kbench/plan.hpp"
#include "bench/kbench/results.hpp"
#include "bench/kbench/session.hpp"
#include "bench/kbench/table.hpp"
#include "bench/program.hpp"
#include "common/random.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include "bench/pattern.hpp"

namespace ks::bench {
namespace {

// The --benchmark_* flags kbench takes, named as Google Benchmark names them so that scripts written for its
// programs work: a filter over row names and a listing of the rows. Others (output, format, repetitions, timing)
// would contradict kbench's own options and are refused.
struct BenchmarkFlags {
  std::optional<Pattern> filter;
  bool list = false;
};

BenchmarkFlags parse_benchmark_flags(const std::vector<std::string>& flags) {
  BenchmarkFlags out;
  for (const std::string& f : flags) {
    const auto eq = f.find('=');
    const std::string name = f.substr(0, eq), value = eq == std::string::npos ? "" : f.substr(eq + 1);
    if (name == "--benchmark_filter") {
      if (value.empty()) throw std::invalid_argument("--benchmark_filter needs a value: --benchmark_filter=REGEX");
      out.filter.emplace(value, "--benchmark_filter");
    } else if (name == "--benchmark_list_tests") {
      if (value != "" && value != "true" && value != "false")
        throw std::invalid_argument("--benchmark_list_tests takes true or false, not '" + value + "'");
      out.list = value != "false";
    } else {
      throw std::invalid_argument("kbench takes --benchmark_filter=REGEX and --benchmark_list_tests of Google "
                                  "Benchmark's flags, not " + name + " (kbench run --help lists its own options)");
    }
  }
  return out;
}

// Test hooks of the failure paths (tests/failures_gpu.sh), read and checked before any GPU work:
//   KS_BENCH_RESERVE_GIB=N   hold N GiB of device memory first, as another job on a shared GPU would;
//   KS_BENCH_FAULT=REGEX     rows whose name matches launch a kernel that traps (a sticky CUDA error) first.
struct TestHooks {
  double reserve_gib = 0;
  std::optional<Pattern> fault;
};

TestHooks read_test_hooks() {
  TestHooks h;
  if (const char* gib = std::getenv("KS_BENCH_RESERVE_GIB")) {
    char* end = nullptr;
    h.reserve_gib = std::strtod(gib, &end);
    if (!*gib || *end || !(h.reserve_gib >= 0) || h.reserve_gib > 1e6)
      throw std::invalid_argument(std::string("KS_BENCH_RESERVE_GIB='") + gib + "' is not a number of GiB");
  }
  if (const char* f = std::getenv("KS_BENCH_FAULT")) {
    h.fault.emplace(f, "KS_BENCH_FAULT");
  }
  return h;
}

void print_ceilings(const Ceilings& c) {
  std::string line = "ceilings:";
  char b[128];
  for (const CeilingField& f : kCeilingFields) {
    std::snprintf(b, sizeof b, "%s %s %.1f %s", &f == kCeilingFields ? "" : ",", f.label, c.*f.value, f.unit);
    line += b;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

void print_table(const RunOptions& o, const DeviceFacts& d, const std::vector<RowResult>& rows) {
  if (o.format == "json") return;
  if (o.format == "csv") {
    std::cout << render_table(rows, TableFormat::Csv);
    return;
  }
  std::cout << "GPU " << d.index << ": " << d.name << " (compute capability " << d.cc_major << "." << d.cc_minor << ", "
            << d.sm_count << " SMs), driver " << format_version(d.driver_version) << ", runtime "
            << format_version(d.runtime_version) << "\n\n"
            << render_table(rows, o.format == "md" ? TableFormat::Markdown : TableFormat::Console)
            << render_class_means(rows, o.format == "md");
}

}  // namespace

int run_command(const RunOptions& o, const std::string& command_line, const std::function<void(const Session&)>& after) {
  // Every input first: a bad one exits 2 before a device is opened.
  const Plan plan = make_plan(o);
  (void)choose_seed();  // a malformed KS_SEED
  const TestHooks hooks = read_test_hooks();
  const BenchmarkFlags flags = parse_benchmark_flags(o.benchmark_flags);
  std::optional<ResultsFile> out;
  if (!o.out.empty()) out.emplace(o.out);
  std::vector<Row> all_rows = build_rows(plan);
  std::vector<const Row*> rows;
  for (const Row& r : all_rows)
    if (!flags.filter || flags.filter->found_in(r.name)) rows.push_back(&r);
  if (rows.empty() && !all_rows.empty())
    throw std::invalid_argument("--benchmark_filter matches none of the " + std::to_string(all_rows.size()) +
                                " rows of this run (--benchmark_list_tests lists them)");
  if (flags.list) {
    for (const Row* r : rows) std::cout << r->name << "\n";
    return cli::kOk;
  }

  require_device(o.device);
  CUDA_CHECK(cudaSetDevice(o.device));
  const DeviceFacts d = query_device(o.device);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  check_memory(plan, free_bytes, total_bytes);
  DeviceBuffer<unsigned char> reserved(static_cast<std::size_t>(hooks.reserve_gib * (1ull << 30)));

  Session session(plan, d, o.format != "json" && o.format != "csv");
  session.fault = hooks.fault;
  session.total = static_cast<int>(rows.size());
  RunContext context = collect_context(d, session.nvml.read(), plan, command_line);  // before the GPU warms up
  if (!o.skip_ceilings) {
    session.env.ceilings = measure_ceilings(session.env.stream.get(), 10);
    context.ceilings = session.env.ceilings;
    if (o.format != "json" && o.format != "csv") print_ceilings(session.env.ceilings);
  }
  {
    SignalGuard guard;
    for (const Row* row : rows) session.run_row(*row);
    if (const int sig = interrupting_signal()) context.interrupted = signal_name(sig);
  }
  context.stopped_early = session.stopped();
  if (out) {
    out->commit(context, session.results());
    if (o.format != "json") std::fprintf(stderr, "results: %s\n", out->path().c_str());
  }
  if (o.format == "json") write_results(std::cout, context, session.results());
  print_table(o, d, session.results());
  if (after && (o.format == "console" || o.format == "md")) after(session);
  if (!context.interrupted.empty()) {
    std::fprintf(stderr, "kbench: interrupted by %s; the rows measured before it are kept\n", context.interrupted.c_str());
    return 128 + interrupting_signal();
  }
  if (!session.stopped().empty()) std::fprintf(stderr, "kbench: stopped early: %s\n", session.stopped().c_str());
  return session.failed() ? cli::kFailure : cli::kOk;
}

}  // namespace ks::bench

// kbench: the suite's benchmark runner. CLI11 front, Google Benchmark measurement.
//   kbench list [gemm|reduce]
//   kbench compare A.json B.json ... [--plots DIR]   (bench/compare.py: tables, and plots with matplotlib)
//   kbench autotune [--sizes LIST] [--repetitions N] [--warmup N] [--out FILE.json]
//   kbench resources [--threads N] [--filter REGEX] [--all] [--cuobjdump PATH]
//   kbench run [--suite gemm|reduce|integral|all] [--variants REGEX] [--sizes LIST] [--types LIST]
//              [--mode LIST] [--block N] [--repetitions N] [--warmup N] [--no-validate]
//              [--out FILE.json] [--format console|md|csv|json] [--benchmark_* ...]
// Every row is validated once before it is timed (and again after), timed with CUDA events (warm-up, then
// the median of the repetitions, the L2 flushed before each repetition of memory-bound work), and reported
// with its rate and its ratio to the anchor (cuBLAS / CUB) measured in the same process.
// Exit codes: 0 all rows valid, 1 a row failed or no GPU, 2 bad usage.
#include "bench/ceilings.hpp"
#include "bench/cli.hpp"
#include "bench/clocks.hpp"
#include "bench/parse.hpp"
#include "bench/report.hpp"
#include "bench/resources.hpp"
#include "common/build_info.hpp"
#include "common/device_info.hpp"
#include "common/json.hpp"
#include "common/random.hpp"
#include "common/timing.hpp"
#include "gemm/dmma.hpp"
#include "gemm/modes.hpp"
#include "reduce/runner.hpp"

#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>

namespace ks::gemm {
extern const char* const kCublasConfig;
}

namespace ks::bench {
void trap_kernel_launch(cudaStream_t stream);  // bench/fault.cu

namespace {

struct Options {
  std::string suite = "all";
  std::string variants = ".*";
  std::string sizes;
  std::string types;
  std::string modes;
  int block = 256;
  int repetitions = 10;
  int warmup = 2;
  bool no_validate = false;
  bool skip_ceilings = false;
  std::string out;
  std::string format = "console";
  int device = 0;
  std::vector<std::string> benchmark_flags;
};

// A value built on first use and dropped after its last user, so large inputs live one group at a time.
template <class T>
class Shared {
 public:
  explicit Shared(std::function<std::unique_ptr<T>()> make) : make_(std::move(make)) {}
  void add_user() { ++users_; }

  // One user's turn: builds the value if needed; drops it when the last user's turn ends.
  class Use {
   public:
    explicit Use(Shared& s) : s_(s) {}
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    ~Use() {
      if (--s_.users_ <= 0) s_.obj_.reset();
    }
    T& get() {
      if (!s_.obj_) s_.obj_ = s_.make_();
      return *s_.obj_;
    }

   private:
    Shared& s_;
  };

 private:
  std::function<std::unique_ptr<T>()> make_;
  std::unique_ptr<T> obj_;
  int users_ = 0;
};

// SIGINT/SIGTERM: the row being measured finishes, the remaining rows are reported as not run, and the
// results file is completed (valid JSON whose context says "interrupted"). A second signal kills as usual.
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) {
  g_signal = sig;
  std::signal(sig, SIG_DFL);
}

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

// What every row shares while the suite runs.
struct Session {
  Options opt;
  DeviceFacts device;
  Stream stream;
  ExecContext ctx{stream.get()};
  L2Flusher flusher;
  Ceilings ceilings;
  std::map<std::string, double> anchor_ms;  // anchor group -> anchor's median
  int total = 0, started = 0;
  bool failed = false;
  std::string stopped;  // why the remaining rows do not run (a sticky CUDA error); empty: running
  explicit Session(const Options& o, const DeviceFacts& d) : opt(o), device(d), flusher(d.index) {}
};

// Rows of one group share an anchor; the anchor row runs first.
struct RowKey {
  std::string group;
  bool anchor = false;
};

struct Row {
  std::string name;
  RowKey key;
  std::function<void(benchmark::State&, Session&)> body;
};

void progress(Session& s, const std::string& name) {
  ++s.started;
  if (s.opt.format == "json" || s.opt.format == "csv") return;
  std::fprintf(stderr, "[%d/%d] %s\n", s.started, s.total, name.c_str());
}

struct NvtxRange {
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
};

void fail(benchmark::State& st, Session& s, const std::string& why) {
  s.failed = true;
  st.SkipWithError(why.c_str());
  for (auto _ : st) {
  }
}

// A row that cannot run here (e.g. a newer GPU needed): reported with the reason, not a failure.
void skip(benchmark::State& st, const std::string& why) {
  st.SkipWithError(why.c_str());
  for (auto _ : st) {
  }
}

// Reports `stats` as the row's time (the median) and its counters: the rate at the median, the ratio to
// the group's anchor, and the fraction of `ceiling` (same unit as the rate; 0: none applies).
void report(benchmark::State& st, Session& s, const RowKey& row, const TimingStats& t, const std::string& rate_name,
            double rate_numerator, double ceiling) {
  for (auto _ : st) st.SetIterationTime(t.median_ms / 1e3);
  st.counters["min_ms"] = t.min_ms;
  st.counters["max_ms"] = t.max_ms;
  st.counters["reps"] = static_cast<double>(t.samples_ms.size());
  st.counters[rate_name] = rate_numerator / (t.median_ms / 1e3);
  if (row.anchor) s.anchor_ms[row.group] = t.median_ms;
  const auto it = s.anchor_ms.find(row.group);
  if (it != s.anchor_ms.end()) st.counters["vs_anchor"] = it->second / t.median_ms;
  if (ceiling > 0) st.counters["of_ceiling"] = rate_numerator / (t.median_ms / 1e3) / ceiling;
}

TimingOptions timing(const Session& s, int max_reps = 1 << 30) {
  return {s.opt.warmup, std::min(s.opt.repetitions, max_reps)};
}

// Host baselines are slow: at most 3 repetitions, no warm-up.
TimingOptions host_timing(const Session& s) { return {0, std::max(1, std::min(3, s.opt.repetitions))}; }

// The body every validated row shares: check once (unless --no-validate), time, check again (repetition must
// not have disturbed the result). `runner` has reset_output() and run(); `check()` returns something with
// `ok` and `report`. Returns nothing when a check failed; the row is then marked failed with the report.
template <class Runner, class Check>
std::optional<TimingStats> checked_timing(benchmark::State& st, Session& s, Runner& runner, Check&& check,
                                          const TimingOptions& opt, const std::function<void()>& prepare = {}) {
  auto checked = [&](const char* when) {
    if (s.opt.no_validate) return true;
    runner.reset_output();
    runner.run();
    const auto c = check();
    if (!c.ok) fail(st, s, std::string("validation failed ") + when + ": " + c.report);
    return c.ok;
  };
  if (!checked("before timing")) return std::nullopt;
  const TimingStats t = time_on_stream(s.stream.get(), opt, [&] { runner.run(); }, prepare);
  if (!checked("after timing")) return std::nullopt;
  return t;
}

// ---- GEMM rows ----

struct GemmInput {
  gemm::GemmProblem problem;
};

void add_gemm_rows(std::vector<Row>& rows, const std::vector<GemmSize>& sizes,
                   const std::vector<gemm::Mode>& device_modes, const std::vector<gemm::Mode>& extra_modes_at_largest,
                   const std::vector<const gemm::GemmVariant*>& variants, bool with_eigen) {
  const GemmSize largest = sizes.back();
  for (const GemmSize& size : sizes) {
    auto input = std::make_shared<Shared<GemmInput>>([size] {
      auto in = std::make_unique<GemmInput>();
      in->problem = gemm::make_problem({size.M, size.N, size.K}, 1.0, 0.0, choose_seed());
      return in;
    });
    std::vector<gemm::Mode> modes = device_modes;
    if (size.M == largest.M && size.N == largest.N && size.K == largest.K)
      modes.insert(modes.end(), extra_modes_at_largest.begin(), extra_modes_at_largest.end());
    for (gemm::Mode mode : modes) {
      const bool extra = std::find(device_modes.begin(), device_modes.end(), mode) == device_modes.end();
      for (const gemm::GemmVariant* v : variants) {
        if (extra && v->info.name != "cublas" && v->info.name != "coalesced") continue;
        const RowKey key{"gemm/" + gemm::to_string(mode) + "/" + size.str(), v->info.anchor};
        Row row{"gemm/" + v->info.name + "/" + gemm::to_string(mode) + "/" + size.str(), key, {}};
        input->add_user();
        row.body = [v, mode, input, size, key](benchmark::State& st, Session& s) {
          Shared<GemmInput>::Use use(*input);
          if (s.device.cc() < v->info.min_cc)
            return skip(st, "skipped: needs compute capability " + std::to_string(v->info.min_cc));
          const gemm::GemmProblem& p = use.get().problem;
          gemm::Runner runner(*v, mode, p, s.ctx);
          // Zero-copy reads cross the bus for every access: a few repetitions say enough.
          const auto t = checked_timing(st, s, runner, [&] { return gemm::validate(p, runner.result()); },
                                        timing(s, mode == gemm::Mode::Mapped ? 3 : 1 << 30));
          if (!t) return;
          // The FP64 FMA ceiling: variants on the tensor cores (cuBLAS on sm_80+) can exceed it.
          report(st, s, key, *t, "TFLOP/s", gemm::flops(size.M, size.N, size.K) / 1e12, s.ceilings.fp64_fma_tflops);
          if (mode == gemm::Mode::Graph) st.counters["graph_setup_ms"] = runner.setup_ms();
        };
        rows.push_back(std::move(row));
      }
    }
    if (with_eigen && static_cast<double>(size.M) * size.N * size.K <= 2048.0 * 2048 * 2048) {
      input->add_user();
      const RowKey key{"gemm/device/" + size.str(), false};
      Row row{"host/eigen_dgemm/" + size.str(), key, {}};
      row.body = [input, size, key](benchmark::State& st, Session& s) {
        Shared<GemmInput>::Use use(*input);
        const gemm::GemmProblem& p = use.get().problem;
        Eigen::MatrixXd c(size.M, size.N);
        const TimingStats t = time_on_host(host_timing(s), [&] { c.noalias() = p.A * p.B; });
        report(st, s, key, t, "TFLOP/s", gemm::flops(size.M, size.N, size.K) / 1e12, 0);
      };
      rows.push_back(std::move(row));
    }
  }
}

// ---- reduction rows ----

void add_reduce_rows(std::vector<Row>& rows, const std::vector<std::size_t>& counts,
                     const std::vector<reduce::DType>& types, const std::vector<const reduce::ReduceVariant*>& variants,
                     bool with_host) {
  for (reduce::DType t : types) {
    for (std::size_t n : counts) {
      auto input = std::make_shared<Shared<reduce::ReduceData>>(
          [t, n] { return std::make_unique<reduce::ReduceData>(t, reduce::Op::Sum, n, choose_seed()); });
      const std::string group = "reduce/" + reduce::to_string(t) + "/n=" + std::to_string(n);
      for (const reduce::ReduceVariant* v : variants) {
        input->add_user();
        const RowKey key{group, v->info.anchor};
        Row row{"reduce/" + v->info.name + "/" + reduce::to_string(t) + "/n=" + std::to_string(n), key, {}};
        row.body = [v, input, key](benchmark::State& st, Session& s) {
          Shared<reduce::ReduceData>::Use use(*input);
          reduce::ReduceData& data = use.get();
          const int block = v->block_sizes.empty() ? 256 : s.opt.block;
          reduce::ReduceRunner runner(*v, data, block, s.ctx);
          const auto tm = checked_timing(st, s, runner, [&] { return runner.check(); }, timing(s),
                                         [&] { s.flusher.flush(s.stream.get()); });
          if (!tm) return;
          report(st, s, key, *tm, "GB/s", static_cast<double>(data.bytes()) / 1e9,
                 v->input_on_host ? s.ceilings.h2d_pinned_gbs : s.ceilings.device_read_bandwidth_gbs);
        };
        rows.push_back(std::move(row));
      }
      if (with_host && t == reduce::DType::F64) {
        using HostFn = double (*)(const double*, std::size_t);
        const std::pair<const char*, HostFn> host_fns[] = {{"recursive_interleaved", reduce::host_recursive_interleaved},
                                                           {"eigen_sum", reduce::host_eigen_sum},
                                                           {"openmp_sum", reduce::host_openmp_sum}};
        for (const auto& [name, fn] : host_fns) {
          input->add_user();
          const RowKey key{group, false};
          Row row{std::string("host/") + name + "/double/n=" + std::to_string(n), key, {}};
          row.body = [fn = fn, input, key](benchmark::State& st, Session& s) {
            Shared<reduce::ReduceData>::Use use(*input);
            reduce::ReduceData& data = use.get();
            const auto* x = static_cast<const double*>(data.host());
            double result = 0;
            const TimingStats t = time_on_host(host_timing(s), [&] { result = fn(x, data.n()); });
            reduce::Value v;
            v.dtype = reduce::DType::F64;
            v.f = result;
            const reduce::ReduceCheck c = reduce::check_result(data.reference(), v, data.n(), data.seed());
            if (!c.ok) return fail(st, s, "validation failed: " + c.report);
            report(st, s, key, t, "GB/s", static_cast<double>(data.bytes()) / 1e9, 0);
          };
          rows.push_back(std::move(row));
        }
      }
    }
  }
}

// ---- integral rows ----

void add_integral_rows(std::vector<Row>& rows, const std::vector<std::size_t>& counts,
                       const std::vector<reduce::DType>& types,
                       const std::vector<const reduce::ReduceVariant*>& variants) {
  constexpr double kB = 40000 * M_PI;
  for (reduce::DType t : types) {
    if (t != reduce::DType::F32 && t != reduce::DType::F64) continue;
    for (std::size_t n : counts) {
      const std::string group = "integral/" + reduce::to_string(t) + "/n=" + std::to_string(n);
      for (const reduce::ReduceVariant* v : variants) {
        if (!v->takes_integral(t)) continue;
        const RowKey key{group, v->info.anchor};
        Row row{"integral/" + v->info.name + "/" + reduce::to_string(t) + "/n=" + std::to_string(n), key, {}};
        row.body = [v, t, n, key](benchmark::State& st, Session& s) {
          const int block = v->block_sizes.empty() ? 256 : s.opt.block;
          reduce::IntegralRunner runner(*v, t, 0.0, kB, static_cast<std::int64_t>(n), block, s.ctx);
          runner.run();
          const reduce::IntegralResult r = runner.check();
          if (!s.opt.no_validate && !r.ok) return fail(st, s, "validation failed: " + r.report);
          const TimingStats tm = time_on_stream(s.stream.get(), timing(s), [&] { runner.run(); });
          report(st, s, key, tm, "Gpoints/s", static_cast<double>(n) / 1e9, 0);
          st.counters["rel_error"] = r.error / std::fabs(r.exact);
        };
        rows.push_back(std::move(row));
      }
    }
  }
}

// ---- the plan ----

// Tuning configurations (VariantInfo::tuning) run only when --variants is given (not the default pattern).
template <class Variant>
std::vector<const Variant*> select(const Registry<Variant>& reg, const std::regex& pattern, bool explicit_pattern) {
  std::vector<const Variant*> out;
  for (const Variant* v : reg.all()) {
    if (v->info.tuning && !explicit_pattern) continue;
    if (v->info.anchor || std::regex_match(v->info.name, pattern)) out.push_back(v);
  }
  // The anchor always runs, first in each group, so every row has its ratio.
  std::stable_partition(out.begin(), out.end(), [](const Variant* v) { return v->info.anchor; });
  return out;
}

// What --suite, --sizes, --types, --mode and --variants ask for, parsed without touching the GPU.
struct Plan {
  bool gemm = false, reduce = false, integral = false;
  std::vector<GemmSize> gemm_sizes;
  std::vector<gemm::Mode> modes, extra_modes;  // extra: only at the largest size (the default suite)
  std::vector<std::size_t> reduce_counts, integral_counts;
  std::vector<reduce::DType> reduce_types, integral_types;
  std::vector<const gemm::GemmVariant*> gemm_variants;
  std::vector<const reduce::ReduceVariant*> reduce_variants;
};

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

Plan parse_plan(const Options& o) {
  Plan p;
  const bool all = o.suite == "all";
  const bool defaults = o.sizes.empty();
  const bool explicit_pattern = o.variants != Options{}.variants;
  p.gemm = all || o.suite == "gemm";
  p.reduce = all || o.suite == "reduce";
  p.integral = all || o.suite == "integral";
  std::regex pattern;
  try {
    pattern = std::regex(o.variants);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--variants '" + o.variants + "' is not a valid regular expression: " + e.what());
  }
  bool matched = false;
  for (const std::string& n : gemm::registry().names()) matched |= p.gemm && std::regex_match(n, pattern);
  for (const std::string& n : reduce::registry().names()) matched |= (p.reduce || p.integral) && std::regex_match(n, pattern);
  if (!matched) {
    throw std::invalid_argument("--variants '" + o.variants + "' matches no variant. gemm: " +
                                joined(gemm::registry().names()) + ". reduce: " + joined(reduce::registry().names()));
  }
  std::vector<reduce::DType> types;
  if (!o.types.empty())
    for (const std::string& t : split_list(o.types)) types.push_back(reduce::parse_dtype(t));
  if (p.gemm) {
    p.gemm_variants = select(gemm::registry(), pattern, explicit_pattern);
    p.gemm_sizes = parse_gemm_sizes(defaults ? "1024,2048,4096" : o.sizes);
    p.modes = {gemm::Mode::Device};
    if (!o.modes.empty()) {
      p.modes.clear();
      for (const std::string& m : split_list(o.modes)) p.modes.push_back(gemm::parse_mode(m));
    } else if (defaults) {
      p.extra_modes = {gemm::Mode::Pageable, gemm::Mode::Pinned, gemm::Mode::Graph, gemm::Mode::Mapped};
    }
  }
  if (p.reduce || p.integral) p.reduce_variants = select(reduce::registry(), pattern, explicit_pattern);
  if (p.reduce) {
    p.reduce_counts = parse_counts(defaults ? "2^20,2^24,2^28" : o.sizes);
    p.reduce_types = types.empty() ? std::vector<reduce::DType>{reduce::DType::I64, reduce::DType::F64} : types;
  }
  if (p.integral) {
    p.integral_counts = parse_counts(defaults ? "100000000" : o.sizes);
    p.integral_types = types.empty() ? std::vector<reduce::DType>{reduce::DType::F32, reduce::DType::F64} : types;
  }
  return p;
}

std::size_t gemm_bytes(const GemmSize& s) {
  return 8 * (static_cast<std::size_t>(s.M) * s.K + static_cast<std::size_t>(s.K) * s.N +
              static_cast<std::size_t>(s.M) * s.N);
}

// A size that can never fit this device is a usage error, refused before any allocation. One that fits the
// device but not what is free now (another job holds memory) is tried: its row fails with the allocation
// error and the run goes on.
void require_memory(const std::string& what, double need_bytes, std::size_t free_bytes, std::size_t total_bytes) {
  char buf[256];
  if (need_bytes > 0.95 * static_cast<double>(total_bytes)) {
    std::snprintf(buf, sizeof buf, "%s needs about %.2f GiB of device memory; this GPU has %.2f GiB", what.c_str(),
                  need_bytes / (1 << 30), static_cast<double>(total_bytes) / (1 << 30));
    throw std::invalid_argument(buf);
  }
  if (need_bytes > static_cast<double>(free_bytes))
    std::fprintf(stderr, "kbench: %s needs about %.2f GiB of device memory, more than the %.2f GiB free now; its rows "
                 "will fail if it cannot be allocated\n", what.c_str(), need_bytes / (1 << 30),
                 static_cast<double>(free_bytes) / (1 << 30));
}

// Checks the sizes against the device's free memory (before any allocation), then builds the rows.
std::vector<Row> build_rows(const Plan& p) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  for (const GemmSize& s : p.gemm_sizes)
    require_memory("GEMM " + s.str(), 1.0 * gemm_bytes(s), free_bytes, total_bytes);
  for (std::size_t n : p.reduce_counts)
    for (reduce::DType t : p.reduce_types)
      require_memory("reduction of " + std::to_string(n) + " " + reduce::to_string(t),
                     2.2 * static_cast<double>(n) * reduce::size_of(t), free_bytes, total_bytes);
  std::vector<Row> rows;
  if (p.gemm) add_gemm_rows(rows, p.gemm_sizes, p.modes, p.extra_modes, p.gemm_variants, true);
  if (p.reduce) add_reduce_rows(rows, p.reduce_counts, p.reduce_types, p.reduce_variants, true);
  if (p.integral) add_integral_rows(rows, p.integral_counts, p.integral_types, p.reduce_variants);
  return rows;
}

std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

void add_context(const DeviceFacts& d, const GpuState& g, const std::string& command_line) {
  int cublas_version = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &cublas_version));
  int minor = 0, patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  const ImageVerdict v = image_for_device(compiled_images(), d.cc_major, d.cc_minor);
  benchmark::AddCustomContext("gpu_name", d.name);
  benchmark::AddCustomContext("gpu_compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
  benchmark::AddCustomContext("gpu_sm_count", std::to_string(d.sm_count));
  benchmark::AddCustomContext("gpu_sm_clock_peak_mhz", std::to_string(d.sm_clock_khz / 1000));
  benchmark::AddCustomContext("gpu_memory_clock_peak_mhz", std::to_string(d.mem_clock_khz / 1000));
  benchmark::AddCustomContext("gpu_theoretical_bandwidth_gbs", std::to_string(d.theoretical_bandwidth_gbs()));
  // What the GPU ran at when the run started (it may boost or throttle later: compare runs with care).
  if (g.known) {
    benchmark::AddCustomContext("gpu_sm_clock_at_start_mhz", std::to_string(g.sm_clock_mhz));
    benchmark::AddCustomContext("gpu_memory_clock_at_start_mhz", std::to_string(g.memory_clock_mhz));
    benchmark::AddCustomContext("gpu_temperature_at_start_c", std::to_string(g.temperature_c));
    benchmark::AddCustomContext("gpu_power_at_start_w", std::to_string(g.power_w));
  } else {
    benchmark::AddCustomContext("gpu_clocks_at_start", "unknown: " + g.why);
  }
  benchmark::AddCustomContext("cuda_driver", format_version(d.driver_version));
  benchmark::AddCustomContext("cuda_runtime", format_version(d.runtime_version));
  benchmark::AddCustomContext("cublas_version", std::to_string(cublas_version) + "." + std::to_string(minor) + "." +
                                                    std::to_string(patch));
  benchmark::AddCustomContext("cublas_config", gemm::kCublasConfig);
  benchmark::AddCustomContext("cuda_architectures", KS_CUDA_ARCHITECTURES_SETTING);
  benchmark::AddCustomContext("binary_images", KS_CUDA_ARCHS);
  benchmark::AddCustomContext("binary_image_for_gpu", v.text);
  benchmark::AddCustomContext("git_revision", KS_GIT_REVISION);
  benchmark::AddCustomContext("build_type", KS_BUILD_TYPE);
  benchmark::AddCustomContext("host_cpu_model", host_cpu());
  benchmark::AddCustomContext("command_line", command_line);
  benchmark::AddCustomContext("timing", "CUDA events; warm-up, then the median of the repetitions; L2 flushed "
                                        "before each repetition of reductions");
}

// Adds "interrupted" / "stopped_early" to the context of a finished Google Benchmark JSON file (its context
// object opens the file: `{ "context": {`), so a reader knows the rows after that point were not measured.
void mark_incomplete(const std::string& path, int sig, const std::string& stopped) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\"context\": {";
  const auto at = text.find(key);
  if (at == std::string::npos) return;
  std::string add;
  if (sig) add += std::string("\n    \"interrupted\": \"") + signal_name(sig) + "\",";
  if (!stopped.empty()) add += "\n    \"stopped_early\": \"" + json::escape(stopped) + "\",";
  text.insert(at + key.size(), add);
  std::ofstream(path, std::ios::trunc) << text;
}

int run(const Options& o, const std::string& command_line, AfterTable after = {}) {
  const Plan plan = parse_plan(o);  // bad input is a usage error, GPU or not
  require_device(o.device);
  CUDA_CHECK(cudaSetDevice(o.device));
  const DeviceFacts d = query_device(o.device);
  std::vector<Row> rows = build_rows(plan);
  // Test hooks, for the tests of the failure paths on a GPU host (tests/failures_gpu.sh):
  //   KS_BENCH_RESERVE_GIB=N   take N GiB of device memory first, as another job on a shared GPU would;
  //   KS_BENCH_FAULT=REGEX     rows whose name matches launch a kernel that traps (a sticky CUDA error) first.
  DeviceBuffer<unsigned char> reserved;
  if (const char* gib = std::getenv("KS_BENCH_RESERVE_GIB"))
    reserved = DeviceBuffer<unsigned char>(static_cast<std::size_t>(std::stod(gib) * (1ull << 30)));
  std::optional<std::regex> fault;
  if (const char* f = std::getenv("KS_BENCH_FAULT")) fault.emplace(f);
  const GpuState at_start = read_gpu_state(d.pci_bus_id);  // before the ceilings warm the GPU up
  Session session(o, d);
  session.total = static_cast<int>(rows.size());
  if (!o.skip_ceilings) session.ceilings = measure_ceilings(session.stream.get(), 10);
  if (o.format != "json" && o.format != "csv" && !o.skip_ceilings)
    std::fprintf(stderr,
                 "ceilings: device read %.0f GB/s, elementwise read+write %.0f GB/s, FP64 FMA %.1f TFLOP/s, "
                 "H2D pinned %.1f GB/s, pageable %.1f GB/s; host elementwise %.1f GB/s (1 thread), %.1f GB/s (OpenMP)\n",
                 session.ceilings.device_read_bandwidth_gbs, session.ceilings.device_bandwidth_gbs,
                 session.ceilings.fp64_fma_tflops, session.ceilings.h2d_pinned_gbs, session.ceilings.h2d_pageable_gbs,
                 session.ceilings.host_single_thread_gbs, session.ceilings.host_openmp_gbs);
  for (Row& row : rows) {
    auto body = std::move(row.body);
    const std::string name = row.name;
    benchmark::RegisterBenchmark(name.c_str(), [body, name, &session, &fault](benchmark::State& st) {
      progress(session, name);
      if (g_signal) return skip(st, std::string("not run: interrupted by ") + signal_name(g_signal));
      if (!session.stopped.empty()) return skip(st, "not run: " + session.stopped);
      NvtxRange range(name);
      try {
        if (fault && std::regex_search(name, *fault)) trap_kernel_launch(session.stream.get());
        body(st, session);
      } catch (const CudaError& e) {
        fail(st, session, e.what());
        // The context is gone: every later CUDA call would fail. Keep what was measured and stop.
        if (e.sticky()) session.stopped = std::string("an earlier row left a sticky CUDA error (") + e.what() + ")";
      } catch (const std::exception& e) {
        fail(st, session, e.what());
      }
    })->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  }
  add_context(d, at_start, command_line);
  benchmark::AddCustomContext("ceiling_device_bandwidth_gbs", std::to_string(session.ceilings.device_bandwidth_gbs));
  benchmark::AddCustomContext("ceiling_device_read_bandwidth_gbs",
                              std::to_string(session.ceilings.device_read_bandwidth_gbs));
  benchmark::AddCustomContext("ceiling_fp64_fma_tflops", std::to_string(session.ceilings.fp64_fma_tflops));
  benchmark::AddCustomContext("ceiling_h2d_pinned_gbs", std::to_string(session.ceilings.h2d_pinned_gbs));
  benchmark::AddCustomContext("ceiling_h2d_pageable_gbs", std::to_string(session.ceilings.h2d_pageable_gbs));
  benchmark::AddCustomContext("ceiling_host_elementwise_single_thread_gbs",
                              std::to_string(session.ceilings.host_single_thread_gbs));
  benchmark::AddCustomContext("ceiling_host_elementwise_openmp_gbs", std::to_string(session.ceilings.host_openmp_gbs));

  std::vector<std::string> args{"kbench"};
  const std::string tmp = o.out.empty() ? "" : o.out + ".tmp";
  if (!tmp.empty()) {
    args.push_back("--benchmark_out=" + tmp);
    args.push_back("--benchmark_out_format=json");
  }
  args.insert(args.end(), o.benchmark_flags.begin(), o.benchmark_flags.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) return cli::kUsage;

  std::unique_ptr<benchmark::BenchmarkReporter> display = make_display_reporter(o.format, d, std::move(after));
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  benchmark::RunSpecifiedBenchmarks(display.get());
  benchmark::Shutdown();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const int sig = g_signal;
  if (!tmp.empty() && (sig || !session.stopped.empty())) mark_incomplete(tmp, sig, session.stopped);
  if (!tmp.empty()) {
    if (std::rename(tmp.c_str(), o.out.c_str()) != 0) throw std::runtime_error("cannot write " + o.out);
    if (o.format != "json") std::fprintf(stderr, "results: %s\n", o.out.c_str());
  }
  if (sig) {
    std::fprintf(stderr, "kbench: interrupted by %s; the rows measured before it are kept\n", signal_name(sig));
    return 128 + sig;
  }
  if (!session.stopped.empty()) std::fprintf(stderr, "kbench: stopped early: %s\n", session.stopped.c_str());
  return session.failed ? cli::kFailure : cli::kOk;
}

// `kbench autotune`: every dmma tile configuration against cuBLAS, then per size the fastest one and what the
// dmma variant's rule (gemm/dmma.hpp) picks there.
void print_tuning(const std::vector<TableRow>& rows) {
  struct Best {
    std::string variant;
    double rate = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Best> best;
  std::map<std::string, double> anchor, rate_of;
  const std::regex row_name("gemm/([a-z0-9_]+)/device/([0-9]+)x([0-9]+)x([0-9]+)");
  for (const TableRow& r : rows) {
    std::smatch m;
    if (!r.error.empty() || !std::regex_match(r.name, m, row_name)) continue;
    const std::string size = m[2].str() + "x" + m[3].str() + "x" + m[4].str(), variant = m[1];
    if (std::find(order.begin(), order.end(), size) == order.end()) order.push_back(size);
    rate_of[variant + "/" + size] = r.rate;
    if (variant == "cublas") {
      anchor[size] = r.rate;
    } else if (r.rate > best[size].rate) {
      best[size] = {variant, r.rate};
    }
  }
  const gemm::dmma::Target target = gemm::dmma::current_target();
  std::printf("\nthe rule's view of this GPU: %d SMs, compute_%d code; resident blocks per SM: 128x128x32 %d, "
              "128x64x16 %d, 64x64x16 %d\n",
              target.sm_count, target.code_arch, target.blocks_128x128, target.blocks_128x64, target.blocks_64x64);
  std::printf("\nautotune: the fastest dmma configuration per size (TFLOP/s, %% of cuBLAS), and the rule's pick\n");
  std::printf("| size | fastest | TFLOP/s | vs cuBLAS | rule picks | its TFLOP/s |\n|---|---|---:|---:|---|---:|\n");
  for (const std::string& size : order) {
    const auto it = best.find(size);
    if (it == best.end()) continue;
    const GemmSize s = parse_gemm_sizes(size).front();
    // kbench allocates A and B aligned with lda = M, ldb = K: 16-byte copies when both are even.
    const gemm::dmma::Config pick = gemm::dmma::choose(s.M, s.N, s.K, target, s.M % 2 == 0 && s.K % 2 == 0);
    const std::string picked = gemm::dmma::variant_for(pick);
    const double a = anchor.count(size) ? anchor[size] : 0;
    const double pr = rate_of.count(picked + "/" + size) ? rate_of[picked + "/" + size] : 0;
    std::printf("| %s | %s | %.2f | %s | %s (%s) | %.2f |\n", size.c_str(), it->second.variant.c_str(),
                it->second.rate, a > 0 ? (std::to_string(static_cast<int>(100 * it->second.rate / a + 0.5)) + "%").c_str() : "-",
                picked.c_str(), gemm::dmma::to_string(pick).c_str(), pr);
  }
}

// Hands over to bench/compare.py (the source tree's copy) under python3.
int compare(const std::vector<std::string>& files, const std::string& plots_dir) {
  std::vector<std::string> args{"python3", std::string(KS_SOURCE_DIR) + "/bench/compare.py"};
  args.insert(args.end(), files.begin(), files.end());
  if (!plots_dir.empty()) {
    args.push_back("--plots");
    args.push_back(plots_dir);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "kbench: cannot run python3 %s: %s\n", args[1].c_str(), std::strerror(errno));
  return cli::kFailure;
}

struct ResourcesOptions {
  int threads = 256;
  std::string filter = ".*";
  bool all = false;
  std::string cuobjdump;
};

// Finds cuobjdump: the option, then PATH, then the toolkit's usual places.
std::string find_cuobjdump(const std::string& given) {
  if (!given.empty()) {
    if (std::system(("command -v '" + given + "' >/dev/null 2>&1").c_str()) != 0)
      throw std::invalid_argument("--cuobjdump '" + given + "' is not an executable");
    return given;
  }
  std::vector<std::string> candidates{"cuobjdump"};
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/bin/cuobjdump");
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const std::string& c : candidates)
    if (std::system(("command -v '" + c + "' >/dev/null 2>&1").c_str()) == 0) return c;
  throw std::runtime_error(
      "cuobjdump not found: it comes with the CUDA Toolkit (add its bin/ to PATH), or from PyPI as "
      "nvidia-cuda-cuobjdump with nvidia-cuda-nvdisasm; or pass --cuobjdump PATH");
}

// Shortens a demangled kernel name: the suite's namespaces and anonymous namespaces go.
std::string short_name(std::string n) {
  n = std::regex_replace(n, std::regex("ks::[a-z_]+::\\(anonymous namespace\\)::"), "");
  n = std::regex_replace(n, std::regex("ks::[a-z_]+::"), "");
  return n;
}

int resources(const ResourcesOptions& o) {
  const std::string tool = find_cuobjdump(o.cuobjdump);
  char self[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);  // this binary, not cuobjdump's
  if (len <= 0) throw std::runtime_error("cannot find this program's own file (/proc/self/exe)");
  const std::string cmd = "'" + tool + "' --dump-resource-usage '" + std::string(self, len) + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + tool);
  std::string dump;
  char buf[4096];
  for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, pipe.get())) > 0;) dump.append(buf, got);
  std::vector<KernelResources> kernels = parse_resource_usage(dump);
  if (kernels.empty()) throw std::runtime_error(tool + " found no kernel resources in this binary");
  const std::regex filter(o.filter);
  std::stable_sort(kernels.begin(), kernels.end(), [](const KernelResources& a, const KernelResources& b) {
    return std::tie(a.arch, a.source, a.name) < std::tie(b.arch, b.source, b.name);
  });
  std::printf("| arch | source | kernel | registers | shared B | stack B | local B | occupancy at %d threads |\n",
              o.threads);
  std::printf("|---|---|---|---:|---:|---:|---:|---|\n");
  for (const KernelResources& k : kernels) {
    if (!o.all && k.mangled.rfind("_ZN2ks", 0) != 0) continue;  // the suite's own kernels
    const std::string name = short_name(k.name);
    if (!std::regex_search(name, filter) && !std::regex_search(k.source, filter)) continue;
    std::string occ = "unknown architecture";
    if (const SmLimits* l = sm_limits(k.arch)) {
      const Occupancy oc = occupancy(*l, k, o.threads);
      char b[96];
      std::snprintf(b, sizeof b, "%.0f%% (%d blocks/SM, by %s)", 100 * oc.fraction, oc.blocks, oc.limited_by.c_str());
      occ = b;
    }
    std::printf("| sm_%d | %s | %s | %d | %d | %d | %d | %s |\n", k.arch, k.source.c_str(), name.c_str(), k.registers,
                k.shared, k.stack, k.local, occ.c_str());
  }
  return cli::kOk;
}

int list(const std::string& family) {
  if (family.empty() || family == "gemm") {
    std::cout << "gemm variants (modes: device, pageable, pinned, graph, mapped):\n";
    for (const auto* v : gemm::registry().all())
      std::printf("  %-20s cc>=%-4s %s%s\n", v->info.name.c_str(),
                  v->info.min_cc ? std::to_string(v->info.min_cc / 10.0).substr(0, 3).c_str() : "any",
                  v->info.summary.c_str(), v->info.tuning ? " [tuning: runs when --variants names it]" : "");
  }
  if (family.empty() || family == "reduce") {
    std::cout << "reduce variants (types: int32, int64, float, double; ops: sum, sumsq):\n";
    for (const auto* v : reduce::registry().all()) {
      std::string notes = v->input_on_host ? "host input" : "device input";
      notes += v->info.deterministic ? ", deterministic" : ", non-deterministic";
      if (v->integral) notes += ", integral";
      std::printf("  %-16s cc>=%-4s %s [%s]\n", v->info.name.c_str(),
                  v->info.min_cc ? std::to_string(v->info.min_cc / 10.0).substr(0, 3).c_str() : "any",
                  v->info.summary.c_str(), notes.c_str());
    }
  }
  return cli::kOk;
}

}  // namespace
}  // namespace ks::bench

int main(int argc, char** argv) {
  using namespace ks::bench;
  CLI::App app{"kbench: DGEMM and reduction variants, validated and timed against cuBLAS and CUB"};
  app.name("kbench");
  app.require_subcommand(1, 1);
  std::string family;
  auto* list_cmd = app.add_subcommand("list", "List the registered variants");
  list_cmd->add_option("family", family, "gemm or reduce")->check(CLI::IsMember({"gemm", "reduce"}));
  std::vector<std::string> compare_files;
  std::string plots_dir;
  auto* compare_cmd = app.add_subcommand("compare", "Compare result files: a markdown table, and plots with --plots");
  compare_cmd->add_option("files", compare_files, "kbench results files (from --out)")->required()->check(CLI::ExistingFile);
  compare_cmd->add_option("--plots", plots_dir, "Write PNG and SVG plots into this directory");
  ResourcesOptions ro;
  auto* resources_cmd =
      app.add_subcommand("resources", "Registers, shared memory, spills and occupancy of every kernel, per architecture");
  resources_cmd->add_option("--threads", ro.threads, "Threads per block for the occupancy column")
      ->check(CLI::Range(32, 1024));
  resources_cmd->add_option("--filter", ro.filter, "Regular expression over kernel or source names");
  resources_cmd->add_flag("--all", ro.all, "Include the library kernels (CUB) too");
  resources_cmd->add_option("--cuobjdump", ro.cuobjdump, "Path to cuobjdump");
  Options o;
  auto* run_cmd = app.add_subcommand("run", "Run the benchmark suite (no options: the default suite)");
  run_cmd->add_option("--suite", o.suite, "gemm, reduce, integral or all")
      ->check(CLI::IsMember({"gemm", "reduce", "integral", "all"}));
  run_cmd->add_option("--variants", o.variants, "Regular expression over variant names (the anchor always runs)");
  run_cmd->add_option("--sizes", o.sizes,
                      "GEMM: 1024,2048 or MxNxK; reductions/integral: counts like 1000, 2^24, 16M");
  run_cmd->add_option("--types", o.types, "Reduction types: int32,int64,float,double");
  run_cmd->add_option("--mode", o.modes, "GEMM launch modes: device,pageable,pinned,graph,mapped");
  run_cmd->add_option("--block", o.block, "Threads per block for reductions")->check(CLI::IsMember({64, 128, 256, 512, 1024}));
  run_cmd->add_option("--repetitions", o.repetitions, "Timed repetitions per row")->check(CLI::Range(1, 100000));
  run_cmd->add_option("--warmup", o.warmup, "Untimed runs before timing")->check(CLI::Range(0, 100000));
  run_cmd->add_flag("--no-validate", o.no_validate, "Skip validation (not recommended)");
  run_cmd->add_flag("--skip-ceilings", o.skip_ceilings, "Do not measure the ceilings (no % of ceiling column)");
  run_cmd->add_option("--out", o.out, "Write Google Benchmark JSON with context to this file");
  run_cmd->add_option("--format", o.format, "console, md, csv or json")
      ->check(CLI::IsMember({"console", "md", "csv", "json"}));
  run_cmd->add_option("--device", o.device, "CUDA device index")->check(CLI::NonNegativeNumber);
  run_cmd->allow_extras();
  Options to;
  auto* tune_cmd = app.add_subcommand(
      "autotune", "Time every dmma tile configuration against cuBLAS on this GPU and print the fastest per size");
  tune_cmd->add_option("--sizes", to.sizes, "GEMM sizes: 1024,2048 or MxNxK (default: a square, odd and skinny mix)");
  tune_cmd->add_option("--repetitions", to.repetitions, "Timed repetitions per row")->check(CLI::Range(1, 100000));
  tune_cmd->add_option("--warmup", to.warmup, "Untimed runs before timing")->check(CLI::Range(0, 100000));
  tune_cmd->add_option("--out", to.out, "Write Google Benchmark JSON with context to this file");
  tune_cmd->add_option("--device", to.device, "CUDA device index")->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
    for (const std::string& extra : run_cmd->remaining()) {
      if (extra.rfind("--benchmark_", 0) != 0) throw CLI::ExtrasError({extra});
      o.benchmark_flags.push_back(extra);
    }
    if (o.suite == "all" && !o.sizes.empty() && o.sizes.find('x') != std::string::npos)
      throw CLI::ValidationError("--sizes", "MxNxK sizes need --suite gemm");
  } catch (const CLI::ParseError& e) {
    return ks::cli::handle_parse_error(app, e);
  }
  if (*list_cmd) return list(family);
  if (*compare_cmd) return compare(compare_files, plots_dir);
  if (*resources_cmd) {
    try {
      std::regex check(ro.filter);
    } catch (const std::regex_error& e) {
      std::cerr << "kbench: --filter '" << ro.filter << "' is not a valid regular expression\n";
      return ks::cli::kUsage;
    }
    return ks::cli::guarded("kbench", [&] { return resources(ro); });
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  if (*tune_cmd) {
    to.suite = "gemm";
    to.variants = "dmma_.*";
    to.modes = "device";
    to.skip_ceilings = true;
    if (to.sizes.empty()) to.sizes = "1024,2048,4096,8192,4095,4097,3000,256x256x4096,64x4096x4096,4096x64x4096";
    return ks::cli::guarded("kbench", [&] { return run(to, command_line, print_tuning); });
  }
  return ks::cli::guarded("kbench", [&] { return run(o, command_line); });
}

#include "bench/kbench/plan.hpp"

#include "bench/pattern.hpp"
#include "bench/program.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace ks::bench {

bool RunOptions::given_option(const std::string& name) const {
  return std::find(given.begin(), given.end(), name) != given.end();
}

namespace {

// A list option that names one value twice would give two rows of one name: refused, naming the value.
template <class T, class Text>
void refuse_duplicates(const std::vector<T>& values, const char* option, Text&& text) {
  std::set<std::string> seen;
  for (const T& v : values)
    if (!seen.insert(text(v)).second)
      throw std::invalid_argument(std::string(option) + " names " + text(v) + " twice");
}

// Tuning configurations (VariantInfo::tuning) run only when --variants is given (not the default pattern).
template <class Variant>
std::vector<const Variant*> select(const Registry<Variant>& reg, const Pattern& pattern, bool explicit_pattern) {
  return reg.matching([&](const Variant& v) {
    if (v.info.tuning && !explicit_pattern) return false;
    return v.info.anchor || pattern.matches_whole(v.info.name);
  });  // the anchor is step 00: first in every group, so every row has its ratio
}

// Options given with an empty value, and options that do not apply to the suite asked for.
void check_given(const RunOptions& o, bool gemm, bool reductions) {
  const std::pair<const char*, const std::string*> texts[] = {
      {"--sizes", &o.sizes},       {"--types", &o.types},     {"--mode", &o.modes},
      {"--out", &o.out},           {"--variants", &o.variants}, {"--device-memory", &o.device_memory},
      {"--devices", &o.devices},   {"--dist", &o.dist},       {"--ops", &o.ops}};
  for (const auto& [name, value] : texts)
    if (o.given_option(name) && value->empty())
      throw std::invalid_argument(std::string(name) + " was given an empty value");
  for (const char* name : {"--mode"})
    if (o.given_option(name) && !gemm)
      throw std::invalid_argument(std::string(name) + " applies to GEMM rows only, and --suite " + o.suite + " has none");
  for (const char* name : {"--device-memory", "--devices", "--validate", "--dist", "--ops"})
    if (o.given_option(name) && !gemm)
      throw std::invalid_argument(std::string(name) + " applies to GEMM rows only, and --suite " + o.suite + " has none");
  for (const char* name : {"--types", "--block"})
    if (o.given_option(name) && !reductions)
      throw std::invalid_argument(std::string(name) + " applies to reduction and integral rows only, and --suite " +
                                  o.suite + " has none");
}

void check_block(const Plan& p) {
  if (!p.block) return;
  std::vector<std::string> refused;
  for (const reduce::ReduceVariant* v : p.reduce_variants)
    if (!v->block_sizes.empty() && !v->takes_block(p.block))
      refused.push_back(v->info.name + " takes " + v->block_sizes_text());
  if (!refused.empty())
    throw std::invalid_argument("--block " + std::to_string(p.block) + " does not suit every variant asked for: " +
                                cli::joined(refused));
  const bool any = std::any_of(p.reduce_variants.begin(), p.reduce_variants.end(),
                               [](const reduce::ReduceVariant* v) { return !v->block_sizes.empty(); });
  if (!any) throw std::invalid_argument("--block: none of the variants asked for takes a block size");
}

// Whether the plan times GEMM rows in device mode (the rows --interleave times in turn with the anchor).
bool has_device_mode(const Plan& p) {
  return std::find(p.modes.begin(), p.modes.end(), gemm::Mode::Device) != p.modes.end();
}

TimingOptions timing_options(const RunOptions& o) {
  TimingOptions t;
  t.warmup = o.warmup;
  t.min_repetitions = o.repetitions;
  t.noise_target = o.noise_percent / 100.0;
  t.time_budget_s = o.time_budget_s;
  t.blocking = !o.no_blocking;
  t.graph_batches = !o.stream_batches;
  return t;
}

// The host rows `pattern` names among those of the plan's suites: the Eigen row (not in the shapes sweep), and the
// host sums (reductions).
bool eigen_row_named(const Pattern& pattern, const Plan& p) {
  return p.gemm && !p.shape_suite && pattern.matches_whole(kEigenDgemmRow);
}
std::vector<std::string> host_sums_named(const Pattern& pattern, const Plan& p) {
  std::vector<std::string> named;
  for (const char* name : kHostSumRows)
    if (p.reduce && pattern.matches_whole(name)) named.push_back(name);
  return named;
}

// The regular expression of --variants, which must match some variant or host row of the chosen suites (--suite
// shapes without --variants: kShapeSuiteVariant).
Pattern variant_pattern(const RunOptions& o, const Plan& p) {
  const Pattern pattern(p.shape_suite && !o.given_option("--variants") ? kShapeSuiteVariant : o.variants, "--variants");
  bool matched = false;
  for (const std::string& n : gemm::registry().names()) matched |= p.gemm && pattern.matches_whole(n);
  for (const std::string& n : reduce::registry().names())
    matched |= (p.reduce || p.integral) && pattern.matches_whole(n);
  matched |= eigen_row_named(pattern, p) || !host_sums_named(pattern, p).empty();
  if (matched) return pattern;
  std::vector<std::string> host{kEigenDgemmRow};
  host.insert(host.end(), kHostSumRows.begin(), kHostSumRows.end());
  throw std::invalid_argument("--variants '" + o.variants + "' matches no variant of --suite " + o.suite +
                              ". gemm: " + cli::joined(gemm::registry().names()) + ". reduce: " +
                              cli::joined(reduce::registry().names()) + ". host: " + cli::joined(host));
}

// GEMM sizes and launch modes; the default run adds every other mode at its first size.
void plan_gemm(const RunOptions& o, const Pattern& pattern, Plan& p) {
  const bool defaults = o.sizes.empty();
  p.gemm_variants = select(gemm::registry(), pattern, o.given_option("--variants"));
  p.eigen_dgemm = eigen_row_named(pattern, p);
  std::vector<GemmSize> sizes;
  if (p.shape_suite && defaults) {
    for (const ShapeCase& c : kShapeSuite) sizes.push_back({.M = c.M, .N = c.N, .K = c.K, .shape_class = c.shape_class});
  } else {
    sizes = parse_gemm_sizes(defaults ? "1024,2048,4096" : o.sizes);
  }
  refuse_duplicates(sizes, "--sizes", [](const GemmSize& s) { return s.str(); });
  std::vector<std::string> ops{"NN"};
  if (!o.ops.empty()) {
    try {
      ops = parse_gemm_ops(o.ops);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--ops: ") + e.what());
    }
    refuse_duplicates(ops, "--ops", [](const std::string& x) { return x; });
  }
  // Each size in each op combination, in the order given (a size's combinations together).
  for (GemmSize s : sizes)
    for (const std::string& x : ops) {
      s.ops = x;
      p.gemm_sizes.push_back(s);
    }
  p.modes = {gemm::Mode::Device};
  if (!o.modes.empty()) {
    p.modes.clear();
    for (const std::string& m : split_list(o.modes)) p.modes.push_back(gemm::parse_mode(m));
    refuse_duplicates(p.modes, "--mode", [](gemm::Mode m) { return gemm::to_string(m); });
  } else if (defaults && !p.shape_suite) {
    p.extra_modes = {gemm::Mode::Pageable,        gemm::Mode::Pinned,           gemm::Mode::Graph,
                     gemm::Mode::Mapped,          gemm::Mode::PinnedPipelined,  gemm::Mode::PageablePipelined};
  }
}

// The options of the pipelined modes, refused where no pipelined mode runs.
void plan_pipelined(const RunOptions& o, Plan& p) {
  const bool pipelined = std::any_of(p.modes.begin(), p.modes.end(), gemm::is_pipelined);
  for (const char* name : {"--device-memory", "--devices", "--pageable"})
    if (o.given_option(name) && !pipelined)
      throw std::invalid_argument(std::string(name) + " applies to the pipelined modes only (--mode pinned_pipelined or "
                                                      "pageable_pipelined)");
  if (!o.device_memory.empty()) p.device_memory = parse_bytes(o.device_memory, "--device-memory");
  p.devices = {o.device};
  if (!o.devices.empty()) {
    p.devices.clear();
    const std::vector<std::string> listed = split_list(o.devices);
    if (listed.size() > kMaxDevices)
      throw std::invalid_argument("--devices lists " + std::to_string(listed.size()) + " devices; at most " +
                                  std::to_string(kMaxDevices));
    for (const std::string& d : listed) {
      const std::size_t index = parse_index(d, "--devices");
      if (index >= kMaxDevices)
        throw std::invalid_argument("--devices: device " + d + " is beyond the " + std::to_string(kMaxDevices) +
                                    " a host can have");
      p.devices.push_back(static_cast<int>(index));
    }
    refuse_duplicates(p.devices, "--devices", [](int d) { return "device " + std::to_string(d); });
  }
  // A budget that cannot hold the smallest plan of a size is refused now, not when its rows run: the plan's
  // memory does not depend on the link or the rates (nominal ones here).
  if (p.device_memory && pipelined)
    for (const GemmSize& s : p.gemm_sizes) {
      try {
        (void)gemm::pipelined::plan({.M = s.M, .N = s.N, .K = s.K, .budget_bytes = p.device_memory, .h2d_gbs = 25,
                                     .d2h_gbs = 25, .tflops = 50, .devices = static_cast<int>(p.devices.size())});
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--device-memory " + o.device_memory + " for " + s.str() + ": " + e.what());
      }
    }
  if (o.pageable == "stage") p.pageable = gemm::pipelined::Pageable::Stage;
  if (o.pageable == "register") p.pageable = gemm::pipelined::Pageable::Register;
}

Validation validation(const RunOptions& o) {
  if (o.no_validate) return Validation::None;
  if (o.validate == "full") return Validation::Full;
  if (o.validate == "sampled") return Validation::Sampled;
  return Validation::Auto;
}

// Reduction and integral counts and element types.
void plan_reduce(const RunOptions& o, const Pattern& pattern, Plan& p) {
  const bool defaults = o.sizes.empty();
  std::vector<reduce::DType> types;
  if (!o.types.empty())
    for (const std::string& t : split_list(o.types)) types.push_back(reduce::parse_dtype(t));
  refuse_duplicates(types, "--types", [](reduce::DType t) { return reduce::to_string(t); });
  if (p.reduce || p.integral) p.reduce_variants = select(reduce::registry(), pattern, o.given_option("--variants"));
  if (p.reduce) {
    p.reduce_counts = parse_counts(defaults ? "2^20,2^24,2^28" : o.sizes);
    refuse_duplicates(p.reduce_counts, "--sizes", [](std::size_t n) { return std::to_string(n); });
    p.reduce_types = types.empty() ? std::vector<reduce::DType>{reduce::DType::I64, reduce::DType::F64} : types;
    p.host_sums = host_sums_named(pattern, p);
  }
  if (p.integral) {
    p.integral_counts = parse_counts(defaults ? "100000000" : o.sizes);
    refuse_duplicates(p.integral_counts, "--sizes", [](std::size_t n) { return std::to_string(n); });
    p.integral_types = types.empty() ? std::vector<reduce::DType>{reduce::DType::F32, reduce::DType::F64} : types;
  }
}

}  // namespace

// Issue 36's classes: C square; a rank-k update (K from 32 to 512); a small C over a deep K (16k to 256k); C of 1
// to 128 rows, or columns, with the other sides from 4k to 32k; odd sizes. About four minutes on an H100 with
// dmma_tma and the anchor (each row validated: the whole Eigen reference below 2^37 multiply-adds).
const std::vector<ShapeCase> kShapeSuite = {
    {"square", 1024, 1024, 1024},          {"square", 2048, 2048, 2048},
    {"square", 4096, 4096, 4096},          {"square", 8192, 8192, 8192},
    {"rank-k", 4096, 4096, 32},            {"rank-k", 4096, 4096, 64},
    {"rank-k", 8192, 8192, 128},           {"rank-k", 8192, 8192, 256},
    {"rank-k", 8192, 8192, 512},           {"small C, deep K", 128, 128, 262144},
    {"small C, deep K", 256, 256, 16384},  {"small C, deep K", 256, 256, 65536},
    {"small C, deep K", 512, 512, 65536},  {"small C, deep K", 1024, 1024, 32768},
    {"few rows", 8, 16384, 16384},         {"few rows", 32, 8192, 8192},
    {"few rows", 64, 16384, 16384},        {"few rows", 128, 4096, 4096},
    {"few rows", 128, 32768, 8192},        {"few columns", 16384, 8, 16384},
    {"few columns", 8192, 32, 8192},       {"few columns", 16384, 64, 16384},
    {"few columns", 4096, 128, 4096},      {"few columns", 32768, 128, 8192},
    {"matrix-vector", 1, 16384, 16384},    {"matrix-vector", 16384, 1, 16384},
    {"odd", 3000, 5000, 7000},             {"odd", 4095, 4095, 4095},
    {"odd", 777, 1234, 5555},              {"odd", 5000, 3000, 200},
};

Plan make_plan(const RunOptions& o) {
  Plan p;
  const bool all = o.suite == "all";
  p.shape_suite = o.suite == "shapes";
  p.gemm = all || o.suite == "gemm" || p.shape_suite;
  p.reduce = all || o.suite == "reduce";
  p.integral = all || o.suite == "integral";
  check_given(o, p.gemm, p.reduce || p.integral);
  const Pattern pattern = variant_pattern(o, p);
  if (all && !o.sizes.empty() && o.sizes.find('x') != std::string::npos)
    throw std::invalid_argument("--sizes: MxNxK sizes need --suite gemm");
  if (p.gemm) plan_gemm(o, pattern, p);
  p.gemm_cold = o.l2 == "cold";
  p.reduce_cold = o.l2 != "warm";
  plan_pipelined(o, p);
  p.validation = validation(o);
  if (!o.dist.empty()) {
    try {
      p.operands = gemm::parse_operands(o.dist);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--dist: ") + e.what());
    }
  }
  plan_reduce(o, pattern, p);
  p.block = o.block;
  check_block(p);
  p.timing = timing_options(o);
  p.interleave = o.interleave;
  if (p.interleave && !p.gemm && !p.reduce)
    throw std::invalid_argument("--interleave applies to GEMM and reduction rows, and --suite " + o.suite + " has none");
  if (p.interleave && !p.reduce && !has_device_mode(p))
    throw std::invalid_argument("--interleave applies to device-mode GEMM rows and reduction rows, and this run has "
                                "neither (add device to --mode)");
  return p;
}

int block_for(const reduce::ReduceVariant& v, const Plan& plan) {
  if (v.block_sizes.empty()) return reduce::kDefaultBlock;
  return plan.block ? plan.block : v.takes_block(reduce::kDefaultBlock) ? reduce::kDefaultBlock : v.block_sizes.front();
}

double gemm_bytes(const GemmSize& s) {
  return 8.0 * (static_cast<double>(s.M) * s.K + static_cast<double>(s.K) * s.N + static_cast<double>(s.M) * s.N);
}

double reduce_bytes(std::size_t n, reduce::DType t) { return static_cast<double>(n) * reduce::size_of(t); }

namespace {
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
}  // namespace

void check_memory(const Plan& plan, std::size_t free_bytes, std::size_t total_bytes) {
  // The pipelined modes hold tiles, not operands: only the other modes need A, B and C on the device.
  const bool on_device = std::any_of(plan.modes.begin(), plan.modes.end(), [](gemm::Mode m) { return !gemm::is_pipelined(m); });
  // --interleave holds the anchor's A, B and C beside the row's.
  const bool twice = plan.interleave && has_device_mode(plan);
  for (const GemmSize& s : plan.gemm_sizes)
    if (on_device)
      require_memory("GEMM " + s.str() + (twice ? " with --interleave (the anchor's copy beside the row's)" : ""),
                     (twice ? 2 : 1) * gemm_bytes(s), free_bytes, total_bytes);
  for (std::size_t n : plan.reduce_counts)
    for (reduce::DType t : plan.reduce_types)
      require_memory("reduction of " + std::to_string(n) + " " + reduce::to_string(t), 2.2 * reduce_bytes(n, t),
                     free_bytes, total_bytes);
}

}  // namespace ks::bench

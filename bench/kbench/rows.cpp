// The rows of a plan: GEMM (every variant x mode x size, and Eigen on the host), reductions (every variant x
// type x n, and the host baselines) and the midpoint integral.
#include "bench/kbench/rows.hpp"

#include "bench/host_timing.hpp"
#include "bench/kbench/lazy_input.hpp"
#include "common/random.hpp"
#if !defined(KS_HIP)
#include "gemm/host/cublasxt.hpp"  // the CUDA build only
#endif
#include "gemm/host/problem.hpp"
#include "reduce/runner.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>

namespace ks::bench {
namespace {

// Host baselines are slow: Google Benchmark's repetitions, at most 3, no warm-up beyond its own iterations.
HostTiming host_timing(const Plan& p) { return {.repetitions = std::max(1, std::min(3, p.timing.min_repetitions))}; }

std::string size_axis(const GemmSize& s) { return s.key(); }

gemm::Op op_a(const GemmSize& s) { return gemm::parse_op(s.ops[0]); }
gemm::Op op_b(const GemmSize& s) { return gemm::parse_op(s.ops[1]); }

// The plain sequence a pipelined mode is compared with: its rows share that mode's group (and anchor).
gemm::Mode plain_mode(gemm::Mode m) {
  if (m == gemm::Mode::PinnedPipelined) return gemm::Mode::Pinned;
  if (m == gemm::Mode::PageablePipelined) return gemm::Mode::Pageable;
  return m;
}

// Full validation against the Eigen reference, or on samples for products too large for it.
bool sampled_validation(const Plan& p, const GemmSize& s) {
  if (p.validation == Validation::Full) return false;
  if (p.validation == Validation::Sampled) return true;
  return static_cast<double>(s.M) * s.N * s.K > gemm::kFullValidationLimit;
}
constexpr int kValidationSamples = 4096;

template <class Runner>
gemm::GemmCheck check_gemm(const Plan& plan, const GemmSize& size, const gemm::GemmProblem& p, Runner& runner) {
  if (!sampled_validation(plan, size)) return gemm::validate(p, runner.result());
  if (const double* c = runner.host_result()) return gemm::validate_sampled(p, c, kValidationSamples);
  const Eigen::MatrixXd c = runner.result();
  return gemm::validate_sampled(p, c.data(), kValidationSamples);
}

gemm::PipelineOptions pipeline_options(const RowEnv& s) {
  gemm::PipelineOptions o;
  o.config.devices = s.plan.devices;
  o.config.budget_bytes = s.plan.device_memory;
  if (s.ceilings.h2d_pinned_gbs > 0) o.config.h2d_gbs = s.ceilings.h2d_pinned_gbs;
  if (s.ceilings.d2h_pinned_gbs > 0) o.config.d2h_gbs = s.ceilings.d2h_pinned_gbs;
  o.pageable_method = s.plan.pageable;
  return o;
}

// A product whose A, B and C together do not fit the device: only the pipelined modes can run it.
bool exceeds_device(const RowEnv& s, const GemmSize& size) {
  return gemm_bytes(size) > 0.95 * static_cast<double>(s.device.global_mem_bytes);
}

// What a pipelined row reports besides its time: the plan, the link bound, and for pageable operands how they
// crossed and what one run took each way.
void report_pipeline(RowEnv& s, RowResult& r, const gemm::Runner& runner, const GemmSize& size) {
  const gemm::pipelined::Product* product = runner.product();
  if (!product) return;
  const gemm::pipelined::Plan& plan = product->plan();
  r.labels["pipelined_plan"] = plan.str();
  r.labels["pipelined_timeline"] = product->timeline();
  r.extra["pipelined_predicted_ms"] = plan.predicted_ms;
  if (s.ceilings.h2d_pinned_gbs > 0) r.extra["link_bound_ms"] = plan.h2d_bytes / (s.ceilings.h2d_pinned_gbs * 1e6);
  if (!runner.pageable_method().empty()) {
    r.labels["pageable_method"] = runner.pageable_method();
    if (runner.staged_ms() > 0) r.extra["pageable_staged_ms"] = runner.staged_ms();
    if (runner.registered_ms() > 0) r.extra["pageable_registered_ms"] = runner.registered_ms();
  }
  std::fprintf(stderr, "  %s %s: %s\n", r.axes.variant.c_str(), size.str().c_str(), plan.str().c_str());
}

RowAxes gemm_axes(const std::string& family, const std::string& variant, const std::string& mode, const GemmSize& s,
                  bool anchor) {
  RowAxes a;
  a.family = family;
  a.variant = variant;
  a.mode = mode;
  a.M = s.M;
  a.N = s.N;
  a.K = s.K;
  a.op = s.ops;
  a.lda = op_a(s) == gemm::Op::N ? s.M : s.K;
  a.ldb = op_b(s) == gemm::Op::N ? s.K : s.N;
  a.ldc = s.M;
  a.alpha = 1.0;
  a.beta = 0.0;
  a.distribution = "uniform";
  a.group = "gemm/" + (mode.empty() ? std::string("device") : mode) + "/" + size_axis(s);
  a.anchor = anchor;
  return a;
}

// A variant that marks its phases (ozaki) gets one more launch, untimed by the row, with the context's phase
// timing on: each phase's time goes into the row as phase_ms_<name>.
void report_phases(RowEnv& s, RowResult& r, gemm::Runner& runner) {
  s.ctx.time_phases(true);
  runner.run();
  const auto phases = s.ctx.phase_ms();
  s.ctx.time_phases(false);
  for (const auto& [name, ms] : phases) r.extra["phase_ms_" + name] = ms;
}

// Validates and times `runner` (the row's mode on its problem `p`; in turn with `anchor` where given) and records
// the rate against the FP64 FMA ceiling (variants on the tensor cores, cuBLAS on sm_80+, can exceed it) and, for
// sampled validation, the largest error. False when the row failed.
bool measure_gemm(RowEnv& s, RowResult& r, gemm::Runner& runner, const gemm::GemmProblem& p, const GemmSize& size,
                  gemm::Mode mode, gemm::Runner* anchor = nullptr) {
  double worst = 0;  // of the checks, in units of the bound
  auto check = [&] {
    const gemm::GemmCheck c = check_gemm(s.plan, size, p, runner);
    worst = std::max(worst, c.worst);
    return c;
  };
  // Zero-copy reads cross the bus for every access: a few repetitions say enough.
  const L2Flusher* flusher = s.plan.gemm_cold ? &s.flusher : nullptr;
  const StreamWork anchor_work = anchor ? anchor->work(flusher) : StreamWork{};
  const auto t = s.checked_timing(r, runner, check, runner.work(flusher), mode == gemm::Mode::Mapped ? 3 : INT_MAX,
                                  anchor ? &anchor_work : nullptr);
  if (!t) return false;
  s.report(r, *t, "TFLOP/s", gemm::flops(size.M, size.N, size.K) / 1e12, s.ceilings.fp64_fma_tflops);
  // Against long-double dot products (sampled validation), the largest error in units of
  // eps (|alpha| |A||B| + |beta| |C0|).
  if (sampled_validation(s.plan, size) && s.plan.validation != Validation::None)
    r.extra["max_error_eps_ab"] = gemm::worst_in_eps_ab(worst, size.K);
  return true;
}

// --interleave: the anchor that a device-mode row of `v` is timed in turn with (none for the anchor itself, other
// modes, or an anchor that cannot run the row's shape here).
const gemm::GemmVariant* interleaved_anchor(const RowEnv& s, const gemm::GemmVariant& v, gemm::Mode mode,
                                            const GemmSize& size) {
  if (!s.plan.interleave || mode != gemm::Mode::Device || v.info.anchor) return nullptr;
  const gemm::GemmVariant* a = gemm::registry().anchor();
  if (!a || s.device.cc() < a->info.min_cc || !a->runs(op_a(size), op_b(size))) return nullptr;
  return a;
}

Row gemm_row(const gemm::GemmVariant* v, gemm::Mode mode, const GemmSize& size,
             const std::shared_ptr<LazyInput<gemm::GemmProblem>>& input) {
  const std::string m = gemm::to_string(mode);
  RowAxes axes = gemm_axes("gemm", v->info.name, m, size, v->info.anchor && !gemm::is_pipelined(mode));
  axes.group = "gemm/" + gemm::to_string(plain_mode(mode)) + "/" + size.key();
  Row row{"gemm/" + v->info.name + "/" + m + "/" + size.key(), axes, {}};
  input->add_user();
  row.body = [v, mode, input, size](RowEnv& s, RowResult& r) {
    LazyInput<gemm::GemmProblem>::Use use(*input);
    if (!size.shape_class.empty()) r.labels["shape_class"] = size.shape_class;
    if (s.device.cc() < v->info.min_cc)
      return s.skip(r, "skipped: needs compute capability " + std::to_string(v->info.min_cc));
    if (!v->runs(op_a(size), op_b(size)))
      return s.skip(r, "skipped: " + v->info.name + " takes op(A) op(B) = " + gemm::ops_names(v->ops) + " only");
    if (!gemm::is_pipelined(mode) && exceeds_device(s, size))
      return s.skip(r, "skipped: A, B and C do not fit this device; only the pipelined modes run this product");
    const gemm::GemmProblem& p = use.get();
    s.ctx.notes().clear();
    gemm::Runner runner(*v, mode, p, s.ctx, pipeline_options(s));
    std::optional<gemm::Runner> anchor;  // --interleave: the anchor on its own copy of the problem
    if (const gemm::GemmVariant* a = interleaved_anchor(s, *v, mode, size)) anchor.emplace(*a, mode, p, s.ctx);
    if (!measure_gemm(s, r, runner, p, size, mode, anchor ? &*anchor : nullptr)) return;
    if (mode == gemm::Mode::Graph) r.extra["graph_setup_ms"] = runner.setup_ms();
    for (const auto& [key, value] : s.ctx.notes()) r.labels[key] = value;  // what the variant chose (ozaki)
    report_pipeline(s, r, runner, size);
    if (mode == gemm::Mode::Device && v->info.phases) report_phases(s, r, runner);
  };
  return row;
}

#if !defined(KS_HIP)
// cuBLASXt on the group's host memory (pinned or pageable), its block size swept once and the fastest kept: the
// anchor the pipelined modes are held against.
Row cublasxt_row(gemm::Mode mode, const GemmSize& size, const std::shared_ptr<LazyInput<gemm::GemmProblem>>& input) {
  const std::string m = gemm::to_string(mode);
  Row row{"gemm/cublasxt/" + m + "/" + size.key(), gemm_axes("gemm", "cublasxt", m, size, false), {}};
  input->add_user();
  row.body = [mode, input, size](RowEnv& s, RowResult& r) {
    LazyInput<gemm::GemmProblem>::Use use(*input);
    if (exceeds_device(s, size))
      return s.skip(r, "skipped: cuBLASXt is not swept on products that exceed the device's memory");
    const gemm::GemmProblem& p = use.get();
    gemm::CublasXt xt(s.plan.devices);
    gemm::Runner runner(xt, mode, p, s.ctx);
    const std::map<int, double> sweep = xt.choose_block_dim([&] { runner.run(); });
    if (!measure_gemm(s, r, runner, p, size, mode)) return;
    r.extra["block_dim"] = xt.block_dim();
    for (const auto& [bd, ms] : sweep) r.extra["sweep_ms_block_" + std::to_string(bd)] = ms;
  };
  return row;
}
#endif

Row eigen_row(const GemmSize& size, const std::shared_ptr<LazyInput<gemm::GemmProblem>>& input) {
  Row row{std::string("host/") + kEigenDgemmRow + "/" + size.key(), gemm_axes("host", kEigenDgemmRow, "", size, false),
          {}};
  input->add_user();
  row.body = [input, size](RowEnv& s, RowResult& r) {
    LazyInput<gemm::GemmProblem>::Use use(*input);
    const gemm::GemmProblem& p = use.get();
    Eigen::MatrixXd c(size.M, size.N);
    const bool ta = op_a(size) == gemm::Op::T, tb = op_b(size) == gemm::Op::T;
    const TimingStats t = time_on_host(r.name, host_timing(s.plan), [&] {
      if (ta && tb) c.noalias() = p.A.transpose() * p.B.transpose();
      else if (ta) c.noalias() = p.A.transpose() * p.B;
      else if (tb) c.noalias() = p.A * p.B.transpose();
      else c.noalias() = p.A * p.B;
    });
    s.report(r, t, "TFLOP/s", gemm::flops(size.M, size.N, size.K) / 1e12, 0);
  };
  return row;
}

// The modes of one size in row order: a pipelined mode right after its plain sequence, which is added (its anchor
// row alone) when not asked for, so that the pipelined rows have their ratio to it.
std::vector<std::pair<gemm::Mode, bool>> ordered_modes(const std::vector<gemm::Mode>& asked) {
  std::vector<std::pair<gemm::Mode, bool>> out;  // (mode, anchor only)
  auto has = [&](gemm::Mode m) { return std::any_of(out.begin(), out.end(), [&](const auto& x) { return x.first == m; }); };
  for (gemm::Mode m : asked) {
    if (gemm::is_pipelined(m) && !has(plain_mode(m))) {
      const bool asked_plain = std::find(asked.begin(), asked.end(), plain_mode(m)) != asked.end();
      out.push_back({plain_mode(m), !asked_plain});
    }
    if (!has(m)) out.push_back({m, false});
  }
  return out;
}

// Whether the default suite times `v` in `mode` beside device mode (its declaration says).
bool in_suite_mode(const gemm::GemmVariant& v, gemm::Mode mode) {
  return v.suite_modes == gemm::SuiteModes::All || (v.suite_modes == gemm::SuiteModes::Pipelined && gemm::is_pipelined(mode));
}

void add_gemm_rows(std::vector<Row>& rows, const Plan& p) {
  const GemmSize largest = p.gemm_sizes.back();
  for (const GemmSize& size : p.gemm_sizes) {
    auto input = std::make_shared<LazyInput<gemm::GemmProblem>>([size, ops = p.operands] {
      const gemm::GemmShape shape = gemm::GemmShape{size.M, size.N, size.K}.with_ops(op_a(size), op_b(size));
      return std::make_unique<gemm::GemmProblem>(gemm::make_problem(shape, 1.0, 0.0, choose_seed(), ops));
    });
    std::vector<gemm::Mode> asked = p.modes;
    const bool is_largest = size.str() == largest.str();
    if (is_largest) asked.insert(asked.end(), p.extra_modes.begin(), p.extra_modes.end());
    for (const auto& [mode, anchor_only] : ordered_modes(asked)) {
      const bool extra = std::find(p.modes.begin(), p.modes.end(), mode) == p.modes.end();
      for (const gemm::GemmVariant* v : p.gemm_variants) {
        if (anchor_only && !v->info.anchor) continue;
        if (extra && !in_suite_mode(*v, mode)) continue;
        rows.push_back(gemm_row(v, mode, size, input));
#if !defined(KS_HIP)
        // cuBLASXt beside the plain sequences of host memory, right after their anchor.
        if (v->info.anchor && (mode == gemm::Mode::Pinned || mode == gemm::Mode::Pageable))
          rows.push_back(cublasxt_row(mode, size, input));
#endif
      }
    }
    if (p.eigen_dgemm && static_cast<double>(size.M) * size.N * size.K <= 2048.0 * 2048 * 2048)
      rows.push_back(eigen_row(size, input));
  }
  for (Row& r : rows)
    if (r.axes.family == "gemm" || r.axes.variant == kEigenDgemmRow) r.axes.distribution = p.operands.str();
}

RowAxes reduce_axes(const std::string& family, const std::string& variant, reduce::DType t, std::size_t n, int block,
                    bool anchor) {
  RowAxes a;
  a.family = family;
  a.variant = variant;
  a.dtype = reduce::to_string(t);
  a.op = family == "integral" ? "" : "sum";
  a.n = static_cast<long long>(n);
  a.block = block;
  a.distribution = family == "integral" ? "" : t == reduce::DType::I32 || t == reduce::DType::I64 ? "full-range" : "uniform";
  a.group = (family == "integral" ? "integral/" : "reduce/") + a.dtype + "/n=" + std::to_string(n);
  a.anchor = anchor;
  return a;
}

Row reduce_row(const reduce::ReduceVariant* v, reduce::DType t, std::size_t n, int block,
               const std::shared_ptr<LazyInput<reduce::ReduceData>>& input) {
  Row row{"reduce/" + v->info.name + "/" + reduce::to_string(t) + "/n=" + std::to_string(n),
          reduce_axes("reduce", v->info.name, t, n, block, v->info.anchor), {}};
  input->add_user();
  row.body = [v, input, block](RowEnv& s, RowResult& r) {
    LazyInput<reduce::ReduceData>::Use use(*input);
    reduce::ReduceData& data = use.get();
    reduce::ReduceRunner runner(*v, data, block, s.ctx);
    const L2Flusher* flusher = s.plan.reduce_cold ? &s.flusher : nullptr;
    // --interleave: the anchor (CUB) on the same input, timed in turn with the row.
    const reduce::ReduceVariant* a = s.plan.interleave && !v->info.anchor ? reduce::registry().anchor() : nullptr;
    std::optional<reduce::ReduceRunner> anchor;
    if (a) anchor.emplace(*a, data, block_for(*a, s.plan), s.ctx);
    const StreamWork anchor_work = anchor ? anchor->work(flusher) : StreamWork{};
    const auto t = s.checked_timing(r, runner, [&] { return runner.check(); }, runner.work(flusher), INT_MAX,
                                    anchor ? &anchor_work : nullptr);
    if (!t) return;
    s.report(r, *t, "GB/s", static_cast<double>(data.bytes()) / 1e9,
             v->input_on_host ? s.ceilings.h2d_pinned_gbs : s.ceilings.device_read_bandwidth_gbs);
  };
  return row;
}

using HostFn = double (*)(const double*, std::size_t);

Row host_reduce_row(const char* name, HostFn fn, std::size_t n, const std::shared_ptr<LazyInput<reduce::ReduceData>>& input) {
  Row row{std::string("host/") + name + "/double/n=" + std::to_string(n),
          reduce_axes("host", name, reduce::DType::F64, n, -1, false), {}};
  input->add_user();
  row.body = [fn, input](RowEnv& s, RowResult& r) {
    LazyInput<reduce::ReduceData>::Use use(*input);
    reduce::ReduceData& data = use.get();
    const auto* x = static_cast<const double*>(data.host());
    double result = 0;
    const TimingStats t = time_on_host(r.name, host_timing(s.plan), [&] { result = fn(x, data.n()); });
    reduce::Value v;
    v.dtype = reduce::DType::F64;
    v.f = result;
    const reduce::ReduceCheck c = reduce::check_result(data.reference(), v, data.n(), data.seed());
    if (!c.ok) return s.fail(r, "validation failed: " + c.report);
    s.report(r, t, "GB/s", static_cast<double>(data.bytes()) / 1e9, 0);
  };
  return row;
}

void add_reduce_rows(std::vector<Row>& rows, const Plan& p) {
  for (reduce::DType t : p.reduce_types) {
    for (std::size_t n : p.reduce_counts) {
      auto input = std::make_shared<LazyInput<reduce::ReduceData>>(
          [t, n] { return std::make_unique<reduce::ReduceData>(t, reduce::Op::Sum, n, choose_seed()); });
      for (const reduce::ReduceVariant* v : p.reduce_variants)
        rows.push_back(reduce_row(v, t, n, block_for(*v, p), input));
      if (t != reduce::DType::F64) continue;
      const HostFn host_fns[] = {reduce::host_recursive_interleaved, reduce::host_eigen_sum, reduce::host_openmp_sum};
      static_assert(std::size(host_fns) == kHostSumRows.size(), "one function per name, in kHostSumRows' order");
      for (std::size_t i = 0; i < kHostSumRows.size(); ++i)
        if (std::find(p.host_sums.begin(), p.host_sums.end(), kHostSumRows[i]) != p.host_sums.end())
          rows.push_back(host_reduce_row(kHostSumRows[i], host_fns[i], n, input));
    }
  }
}

void add_integral_rows(std::vector<Row>& rows, const Plan& p) {
  constexpr double kB = 40000 * M_PI;
  for (reduce::DType t : p.integral_types) {
    if (t != reduce::DType::F32 && t != reduce::DType::F64) continue;
    for (std::size_t n : p.integral_counts) {
      for (const reduce::ReduceVariant* v : p.reduce_variants) {
        if (!v->takes_integral(t)) continue;
        const int block = block_for(*v, p);
        Row row{"integral/" + v->info.name + "/" + reduce::to_string(t) + "/n=" + std::to_string(n),
                reduce_axes("integral", v->info.name, t, n, block, v->info.anchor), {}};
        row.body = [v, t, n, block](RowEnv& s, RowResult& r) {
          reduce::IntegralRunner runner(*v, t, 0.0, kB, static_cast<std::int64_t>(n), block, s.ctx);
          runner.run();
          const reduce::IntegralResult res = runner.check();
          if (s.plan.validation != Validation::None && !res.ok) return s.fail(r, "validation failed: " + res.report);
          const TimingStats tm = s.time({.run = [&](int) { runner.run(); }});
          s.report(r, tm, "Gpoints/s", static_cast<double>(n) / 1e9, 0);
          r.extra["rel_error"] = res.error / std::fabs(res.exact);
        };
        rows.push_back(std::move(row));
      }
    }
  }
}

}  // namespace

std::vector<Row> build_rows(const Plan& p) {
  std::vector<Row> rows;
  if (p.gemm) add_gemm_rows(rows, p);
  if (p.reduce) add_reduce_rows(rows, p);
  if (p.integral) add_integral_rows(rows, p);
  return rows;
}

}  // namespace ks::bench

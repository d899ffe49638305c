// The rows of a plan: GEMM (every variant x mode x size, and Eigen on the host), reductions (every variant x
// type x n, and the host baselines) and the midpoint integral.
#include "bench/kbench/rows.hpp"

#include "bench/kbench/lazy_input.hpp"
#include "bench/kbench/plan.hpp"
#include "bench/kbench/session.hpp"
#include "common/random.hpp"
#include "gemm/problem.hpp"
#include "reduce/runner.hpp"

#include <algorithm>
#include <cmath>

namespace ks::bench {
namespace {

// Host baselines are slow: at most 3 repetitions, no warm-up.
TimingOptions host_timing(const Plan& p) {
  return {.warmup = 0, .min_repetitions = std::max(1, std::min(3, p.timing.min_repetitions))};
}

std::string size_axis(const GemmSize& s) { return s.str(); }

RowAxes gemm_axes(const std::string& family, const std::string& variant, const std::string& mode, const GemmSize& s,
                  bool anchor) {
  RowAxes a;
  a.family = family;
  a.variant = variant;
  a.mode = mode;
  a.M = s.M;
  a.N = s.N;
  a.K = s.K;
  a.lda = s.M;
  a.ldb = s.K;
  a.ldc = s.M;
  a.alpha = 1.0;
  a.beta = 0.0;
  a.distribution = "uniform";
  a.group = "gemm/" + (mode.empty() ? std::string("device") : mode) + "/" + size_axis(s);
  a.anchor = anchor;
  return a;
}

Row gemm_row(const gemm::GemmVariant* v, gemm::Mode mode, const GemmSize& size,
             const std::shared_ptr<LazyInput<gemm::GemmProblem>>& input) {
  const std::string m = gemm::to_string(mode);
  Row row{"gemm/" + v->info.name + "/" + m + "/" + size.str(), gemm_axes("gemm", v->info.name, m, size, v->info.anchor), {}};
  input->add_user();
  row.body = [v, mode, input, size](Session& s, RowResult& r) {
    LazyInput<gemm::GemmProblem>::Use use(*input);
    if (s.device.cc() < v->info.min_cc)
      return s.skip(r, "skipped: needs compute capability " + std::to_string(v->info.min_cc));
    const gemm::GemmProblem& p = use.get();
    gemm::Runner runner(*v, mode, p, s.ctx);
    // Zero-copy reads cross the bus for every access: a few repetitions say enough.
    const auto t = s.checked_timing(r, runner, [&] { return gemm::validate(p, runner.result()); },
                                    runner.work(s.plan.gemm_cold ? &s.flusher : nullptr),
                                    mode == gemm::Mode::Mapped ? 3 : INT_MAX);
    if (!t) return;
    // The FP64 FMA ceiling: variants on the tensor cores (cuBLAS on sm_80+) can exceed it.
    s.report(r, *t, "TFLOP/s", gemm::flops(size.M, size.N, size.K) / 1e12, s.ceilings.fp64_fma_tflops);
    if (mode == gemm::Mode::Graph) r.extra["graph_setup_ms"] = runner.setup_ms();
  };
  return row;
}

Row eigen_row(const GemmSize& size, const std::shared_ptr<LazyInput<gemm::GemmProblem>>& input) {
  Row row{"host/eigen_dgemm/" + size.str(), gemm_axes("host", "eigen_dgemm", "", size, false), {}};
  input->add_user();
  row.body = [input, size](Session& s, RowResult& r) {
    LazyInput<gemm::GemmProblem>::Use use(*input);
    const gemm::GemmProblem& p = use.get();
    Eigen::MatrixXd c(size.M, size.N);
    const TimingStats t = time_on_host(host_timing(s.plan), [&] { c.noalias() = p.A * p.B; });
    s.report(r, t, "TFLOP/s", gemm::flops(size.M, size.N, size.K) / 1e12, 0);
  };
  return row;
}

void add_gemm_rows(std::vector<Row>& rows, const Plan& p) {
  const GemmSize largest = p.gemm_sizes.back();
  for (const GemmSize& size : p.gemm_sizes) {
    auto input = std::make_shared<LazyInput<gemm::GemmProblem>>([size] {
      return std::make_unique<gemm::GemmProblem>(gemm::make_problem({size.M, size.N, size.K}, 1.0, 0.0, choose_seed()));
    });
    std::vector<gemm::Mode> modes = p.modes;
    const bool is_largest = size.M == largest.M && size.N == largest.N && size.K == largest.K;
    if (is_largest) modes.insert(modes.end(), p.extra_modes.begin(), p.extra_modes.end());
    for (gemm::Mode mode : modes) {
      const bool extra = std::find(p.modes.begin(), p.modes.end(), mode) == p.modes.end();
      for (const gemm::GemmVariant* v : p.gemm_variants) {
        if (extra && v->info.name != "cublas" && v->info.name != "coalesced") continue;
        rows.push_back(gemm_row(v, mode, size, input));
      }
    }
    if (static_cast<double>(size.M) * size.N * size.K <= 2048.0 * 2048 * 2048) rows.push_back(eigen_row(size, input));
  }
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
  row.body = [v, input, block](Session& s, RowResult& r) {
    LazyInput<reduce::ReduceData>::Use use(*input);
    reduce::ReduceData& data = use.get();
    reduce::ReduceRunner runner(*v, data, block, s.ctx);
    const auto t = s.checked_timing(r, runner, [&] { return runner.check(); },
                                    runner.work(s.plan.reduce_cold ? &s.flusher : nullptr));
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
  row.body = [fn, input](Session& s, RowResult& r) {
    LazyInput<reduce::ReduceData>::Use use(*input);
    reduce::ReduceData& data = use.get();
    const auto* x = static_cast<const double*>(data.host());
    double result = 0;
    const TimingStats t = time_on_host(host_timing(s.plan), [&] { result = fn(x, data.n()); });
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
      const std::pair<const char*, HostFn> host_fns[] = {{"recursive_interleaved", reduce::host_recursive_interleaved},
                                                         {"eigen_sum", reduce::host_eigen_sum},
                                                         {"openmp_sum", reduce::host_openmp_sum}};
      for (const auto& [name, fn] : host_fns) rows.push_back(host_reduce_row(name, fn, n, input));
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
        row.body = [v, t, n, block](Session& s, RowResult& r) {
          reduce::IntegralRunner runner(*v, t, 0.0, kB, static_cast<std::int64_t>(n), block, s.ctx);
          runner.run();
          const reduce::IntegralResult res = runner.check();
          if (!s.opt.no_validate && !res.ok) return s.fail(r, "validation failed: " + res.report);
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

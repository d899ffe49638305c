// kbench autotune: every dmma tile configuration (gemm/dmma_shapes.hpp) against cuBLAS on this GPU, then per size
// the fastest configuration and the one the dmma rule picks.
#include "bench/kbench/commands.hpp"
#include "bench/kbench/session.hpp"
#include "bench/parse.hpp"

#include <stdexcept>

#if defined(KS_HIP)

namespace ks::bench {

int autotune_command(RunOptions, const std::string&) {
  throw std::invalid_argument("autotune times the dmma tile configurations (FP64 tensor cores), which the HIP build "
                              "does not have");
}

}  // namespace ks::bench

#else

#include "gemm/dmma_shapes.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace ks::bench {
namespace {

void print_target(const gemm::dmma::Target& t) {
  std::printf("\nthe rule's view of this GPU: %d SMs, compute_%d code; resident blocks per SM:", t.sm_count,
              t.code_arch);
  for (int s = 0; s < gemm::dmma::kShapeCount; ++s)
    std::printf("%s %s %d", s ? "," : "", gemm::dmma::shape_name(s).c_str(), t.blocks_per_sm[s]);
  std::printf("\n");
}

void print_tuning(const Session& session) {
  struct Size {
    GemmSize dims{};
    double anchor = 0, best = 0;
    std::string best_variant{};
    std::map<std::string, double> rate{};  // variant -> TFLOP/s
  };
  std::vector<Size> sizes;
  for (const RowResult& r : session.results()) {
    if (!r.ok() || r.axes.family != "gemm" || r.axes.mode != "device") continue;
    const GemmSize dims{static_cast<int>(r.axes.M), static_cast<int>(r.axes.N), static_cast<int>(r.axes.K)};
    auto it = std::find_if(sizes.begin(), sizes.end(), [&](const Size& s) { return s.dims.str() == dims.str(); });
    if (it == sizes.end()) it = sizes.insert(sizes.end(), Size{dims});
    it->rate[r.axes.variant] = r.rate;
    if (r.axes.anchor) {
      it->anchor = r.rate;
    } else if (r.rate > it->best) {
      it->best = r.rate;
      it->best_variant = r.axes.variant;
    }
  }
  const gemm::dmma::Target target = gemm::dmma::current_target();
  print_target(target);
  std::printf("\nautotune: the fastest dmma configuration per size (TFLOP/s, %% of cuBLAS), and the rule's pick\n");
  std::printf("| size | fastest | TFLOP/s | vs cuBLAS | rule picks | its TFLOP/s |\n|---|---|---:|---:|---|---:|\n");
  for (const Size& s : sizes) {
    if (s.best_variant.empty()) continue;
    // kbench allocates A and B aligned with lda = M, ldb = K: 16-byte copies when both are even.
    const auto pick = gemm::dmma::choose(s.dims.M, s.dims.N, s.dims.K, target, s.dims.M % 2 == 0 && s.dims.K % 2 == 0);
    const std::string picked = gemm::dmma::variant_for(pick);
    const auto pr = s.rate.find(picked);
    std::printf("| %s | %s | %.2f | %s | %s (%s) | %.2f |\n", s.dims.str().c_str(), s.best_variant.c_str(), s.best,
                s.anchor > 0 ? (std::to_string(static_cast<int>(100 * s.best / s.anchor + 0.5)) + "%").c_str() : "-",
                picked.c_str(), gemm::dmma::to_string(pick).c_str(), pr == s.rate.end() ? 0.0 : pr->second);
  }
}

}  // namespace

int autotune_command(RunOptions o, const std::string& command_line) {
  o.suite = "gemm";
  o.variants = "dmma_.*";
  o.given.push_back("--variants");
  o.modes = "device";
  o.skip_ceilings = true;
  if (o.sizes.empty()) o.sizes = "1024,2048,4096,8192,4095,4097,3000,256x256x4096,64x4096x4096,4096x64x4096";
  return run_command(o, command_line, print_tuning);
}

}  // namespace ks::bench

#endif

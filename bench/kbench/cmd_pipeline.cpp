// kbench pipeline: the pipelined modes' plan (gemm/host/pipelined_plan.hpp) for products and rates given on the command line,
// without a GPU: the tile rule's choice, its simulated time and the link bound, for sizing a product from host
// memory (an out-of-core one included) before running it, or for asking what a faster link or kernel would give.
#include "bench/kbench/commands.hpp"
#include "bench/parse.hpp"
#include "bench/program.hpp"
#include "gemm/host/pipelined_plan.hpp"

#include <cstdio>
#include <stdexcept>

namespace ks::bench {

int pipeline_command(const PipelineOptions& o) {
  namespace pl = gemm::pipelined;
  const std::vector<GemmSize> sizes = parse_gemm_sizes(o.sizes);
  const std::size_t budget = parse_bytes(o.device_memory, "--device-memory");
  const double d2h = o.d2h_gbs > 0 ? o.d2h_gbs : o.h2d_gbs;
  const bool md = o.format == "md";
  std::printf("pipelined plans, modelled (no GPU used): link %g GB/s to each device and %g GB/s back, %s per "
              "device, %d device%s, beta %s\n",
              o.h2d_gbs, d2h, o.device_memory.c_str(), o.gpus, o.gpus == 1 ? "" : "s",
              o.beta_nonzero ? "non-zero (C crosses to the device too)" : "0");
  if (md)
    std::printf("\n| product | TFLOP/s | plan | device memory | link bound (ms) | products (ms) | predicted (ms) | "
                "x link bound |\n|---|---:|---|---:|---:|---:|---:|---:|\n");
  int refused = 0;
  for (const GemmSize& s : sizes)
    for (double tflops : o.tflops) {
      const pl::PlanInput in{.M = s.M, .N = s.N, .K = s.K, .beta_nonzero = o.beta_nonzero, .budget_bytes = budget,
                             .h2d_gbs = o.h2d_gbs, .d2h_gbs = d2h, .tflops = tflops, .devices = o.gpus,
                             .nt = o.nt, .lead = o.lead, .chunks = o.chunks};
      char rate[64];
      std::snprintf(rate, sizeof rate, md ? "%g" : "%g TFLOP/s", tflops);
      pl::Plan p;
      try {
        p = pl::plan(in);
      } catch (const std::invalid_argument& e) {
        ++refused;
        if (md)
          std::printf("| %s | %s | refused: %s | | | | | |\n", s.str().c_str(), rate, e.what());
        else
          std::printf("%s at %s: refused: %s\n", s.str().c_str(), rate, e.what());
        continue;
      }
      if (md)
        std::printf("| %s | %s | mt %d, nt %d: %d x %d tiles, %d lead, %d chunk%s of A | %.0f MiB | %.3g | %.3g | "
                    "%.3g | %.3f |\n",
                    s.str().c_str(), rate, p.mt, p.nt, p.row_blocks, p.col_panels, p.lead, p.a_chunks,
                    p.a_chunks == 1 ? "" : "s", static_cast<double>(p.device_bytes) / (1 << 20), p.link_ms,
                    p.compute_ms, p.predicted_ms, p.predicted_ms / p.link_ms);
      else
        std::printf("%s at %s: %s; %.3fx the link bound\n", s.str().c_str(), rate, p.str().c_str(),
                    p.predicted_ms / p.link_ms);
    }
  if (refused) {
    std::fprintf(stderr, "kbench: %d of %zu plans refused (above)\n", refused, sizes.size() * o.tflops.size());
    return cli::kUsage;
  }
  return cli::kOk;
}

}  // namespace ks::bench

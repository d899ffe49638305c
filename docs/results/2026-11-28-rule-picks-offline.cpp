// Step 53 (docs/gemm-notes.md): prints the rule's TMA tile (its tuning variant's suffix) or "dmma" for each M x N x K
// argument, for an H100-like target (132 SMs, 50 MiB of L2, 120 cluster slots for the one-block tiles).
#include "gemm/dmma_shapes.hpp"
#include <cstdio>
#include <string>
using namespace ks::gemm;
int main(int argc, char** argv) {
  dmma::Target t{.sm_count = 132, .code_arch = 90, .l2_bytes = 50LL << 20};
  for (int s = 0; s < dmma::kShapeCount; ++s) { const auto& sh = dmma::kShapes[s]; t.blocks_per_sm[s] = sh.bm == 128 && sh.bn == 128 ? 1 : sh.bm == 128 ? 2 : 3; }
  for (int i = 0; i < dmma::kTmaTileCount; ++i) t.tma_cluster_slots[i] = dmma::kTmaTiles[i].min_blocks == 1 ? 120 : 0;
  bool ready[dmma::kTmaTileCount]; for (auto& r : ready) r = true;
  for (int a = 1; a < argc; ++a) {
    int M, N, K; sscanf(argv[a], "%dx%dx%d", &M, &N, &K);
    int pick = dmma::tma_pick(M, N, K, t, ready, 0, nullptr);
    printf("%s %s\n", argv[a], pick < 0 ? "dmma" : dmma::kTmaTiles[pick].variant);
  }
}

// unroll8_warp: step 5. unroll8 with the last 32 elements reduced by one warp without __syncthreads.
// The tutorial does this through a `volatile` pointer with no synchronisation, relying on the warp running in
// lockstep. Since Volta, the threads of a warp are scheduled independently, so that form is a data race: a lane
// may read s[tid + 16] before the lane that owns it has written its previous step. Here each step reads,
// __syncwarp()s, writes, __syncwarp()s (ladder::warp_tail). The kernel frame: reduce/ladder.cuh.
// Run: build/bench/kbench run --suite reduce --variants unroll8_warp --sizes 2^20,2^24 --types int32,double
#include "reduce/ladder.cuh"

namespace ks::reduce {

KS_REDUCE_VARIANT({.info = {.name = "unroll8_warp",
                            .summary = "unroll8 with the last warp unrolled (__syncwarp between steps, race-free)"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::InterleavedWarp, 8>>()});

}  // namespace ks::reduce

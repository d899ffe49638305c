// neighbored_less: step 2. The same pairs as step 1, but thread tid works on index 2*stride*tid: the active
// threads are packed into the first warps, which stay converged while the others idle (less divergence).
// The cost moves to shared memory: the strided indices cause bank conflicts, which step 3 removes.
// The tree and the kernel frame: reduce/ladder.cuh.
// Run: build/bench/kbench run --suite reduce --variants neighbored_less --sizes 2^20,2^24 --types int32,double
#include "reduce/ladder.cuh"

namespace ks::reduce {

KS_REDUCE_VARIANT({.info = {.name = "neighbored_less",
                            .summary = "adjacent pairs at index 2*stride*tid: active threads packed, less divergence"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::NeighboredLess, 1>>()});

}  // namespace ks::reduce

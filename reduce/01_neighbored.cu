// neighbored: step 1 of the reduction ladder, the tutorial's first kernel. Each block loads its elements into
// shared memory and adds adjacent pairs at strides 1, 2, 4, ...: thread tid works when tid % (2*stride) == 0.
// Active threads are scattered over every warp, so each warp diverges at every level, and % is slow.
// The tree and the kernel frame: reduce/ladder.cuh. Any n; block sizes kPowerOfTwoBlocks (two warps to 1024).
// Run: build/bench/kbench run --suite reduce --variants neighbored --sizes 2^20,2^24 --types int32,double
#include "reduce/ladder.cuh"

namespace ks::reduce {

KS_REDUCE_VARIANT({.info = {.name = "neighbored",
                            .summary = "adjacent pairs, tid % (2*stride) == 0: divergent warps at every level"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::Neighbored, 1>>()});

}  // namespace ks::reduce

// interleaved: step 3. The stride halves from blockDim/2 down to 1 and thread tid adds s[tid + stride]: the
// active threads are contiguous and the accesses unit-stride, so there is no divergence inside a working warp
// and no bank conflict. The tree and the kernel frame: reduce/ladder.cuh.
// Run: build/bench/kbench run --suite reduce --variants interleaved --sizes 2^20,2^24 --types int32,double
#include "reduce/ladder.cuh"

namespace ks::reduce {

KS_REDUCE_VARIANT({.info = {.name = "interleaved",
                            .summary = "stride halves from blockDim/2: contiguous active threads, unit-stride access"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::Interleaved, 1>>()});

}  // namespace ks::reduce

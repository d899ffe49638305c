// complete_unroll: step 6. unroll8_warp with the block size a template parameter: every level of the tree is
// unrolled at compile time and the dead ones vanish (the tutorial's UnrollAllReduce). One kernel instantiation
// per block size. The kernel frame: reduce/ladder.cuh.
// Run: build/bench/kbench run --suite reduce --variants complete_unroll --sizes 2^20,2^24 --types int32,double
#include "reduce/ladder.cuh"

namespace ks::reduce {

KS_REDUCE_VARIANT({.info = {.name = "complete_unroll",
                            .summary = "unroll8_warp with the block size a template: every level unrolled"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::Complete, 8>>()});

}  // namespace ks::reduce

// unroll2, unroll4, unroll8: step 4. The interleaved tree of step 3, but each block first folds 2, 4 or 8
// blocks' worth of data while loading, so there are 2-8x fewer blocks and more independent loads in flight per
// thread: the tree's cost is paid once per 2-8 blocks of data. The kernel frame: reduce/ladder.cuh.
// Run: build/bench/kbench run --suite reduce --variants 'unroll[248]' --sizes 2^20,2^24 --types int32,double
#include "reduce/ladder.cuh"

namespace ks::reduce {

KS_REDUCE_VARIANT({.info = {.name = "unroll2", .summary = "interleaved, each block first folds 2 blocks' data"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::Interleaved, 2>>()});
KS_REDUCE_VARIANT({.info = {.name = "unroll4", .summary = "interleaved, each block first folds 4 blocks' data"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::Interleaved, 4>>()});
KS_REDUCE_VARIANT({.info = {.name = "unroll8", .summary = "interleaved, each block first folds 8 blocks' data"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<ladder::Ladder<ladder::Tree::Interleaved, 8>>()});

}  // namespace ks::reduce

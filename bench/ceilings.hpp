// The two ceilings every row is compared with, measured at the start of a run (not taken from datasheets):
//   device memory bandwidth  the seeds' elementwise y = a*x^2 + b*x + c over 2^28 floats (1 GiB read, 1 GiB
//                            written), 16-byte accesses; bytes read + written over the median time
//   device read bandwidth    a read-only stream over 2 GiB (16-byte loads, four in flight per thread): the
//                            ceiling for reductions, which only read (a write stream costs bus turnarounds,
//                            so the elementwise figure is lower)
//   FP64 FMA rate            independent DFMA chains in registers on a resident grid, no memory traffic
// and the host-to-device link (256 MiB copies from pinned and from pageable memory).
#pragma once

#include "common/exec_context.hpp"

namespace ks::bench {

struct Ceilings {
  double device_bandwidth_gbs = 0;       // elementwise: read + write
  double device_read_bandwidth_gbs = 0;  // read-only
  double fp64_fma_tflops = 0;
  double h2d_pinned_gbs = 0;
  double h2d_pageable_gbs = 0;
};

Ceilings measure_ceilings(cudaStream_t stream, int repetitions);

}  // namespace ks::bench

// The ceilings every row is compared with, measured at the start of a run (not taken from datasheets):
//   device memory bandwidth  the tutorial's elementwise y = a*x^2 + b*x + c over 2^28 floats (1 GiB read, 1 GiB
//                            written), 16-byte accesses; bytes read + written over the median time
//   device read bandwidth    a read-only stream over 2 GiB (16-byte loads, four in flight per thread): the
//                            ceiling for reductions, which only read (a write stream costs bus turnarounds,
//                            so the elementwise figure is lower)
//   FP64 FMA rate            independent DFMA chains in registers on a resident grid, no memory traffic
//   INT8 GEMM rate           cuBLAS INT8 x INT8 -> INT32 GEMM (A^T B, 8192^3): the rate ozaki's products run at
//                            best (sm_75+; 0 elsewhere)
//   graph launch floor       the time per launch of an empty one-block kernel in graph batches, as the small
//                            reductions are timed: the floor under a one-kernel reduction, and under each of CUB's
//                            two
// and the link (256 MiB copies to the device from pinned and from pageable memory, and back to pinned); on the
// host, the same
// elementwise kernel single-threaded and with OpenMP.
#pragma once

#include "common/exec_context.hpp"

#include <cstddef>

namespace ks::bench {

struct Ceilings {
  double device_bandwidth_gbs = 0;       // elementwise: read + write
  double device_read_bandwidth_gbs = 0;  // read-only
  double fp64_fma_tflops = 0;
  double int8_gemm_tops = 0;
  double graph_launch_us = 0;
  double h2d_pinned_gbs = 0;
  double h2d_pageable_gbs = 0;
  double d2h_pinned_gbs = 0;
  double host_single_thread_gbs = 0;
  double host_openmp_gbs = 0;
};

// Each ceiling's key in the results (docs/results-schema.md), its words in kbench's printout, and its unit.
struct CeilingField {
  const char* key;
  const char* label;
  const char* unit;
  using Member = double Ceilings::*;
  Member value;
};
inline constexpr CeilingField kCeilingFields[] = {
    {"device_read_bandwidth_gbs", "device read", "GB/s", &Ceilings::device_read_bandwidth_gbs},
    {"device_bandwidth_gbs", "elementwise read+write", "GB/s", &Ceilings::device_bandwidth_gbs},
    {"fp64_fma_tflops", "FP64 FMA", "TFLOP/s", &Ceilings::fp64_fma_tflops},
    {"int8_gemm_tops", "INT8 GEMM (cuBLAS, 8192^3)", "TOPS", &Ceilings::int8_gemm_tops},
    {"graph_launch_us", "empty kernel per launch (graph batches)", "us", &Ceilings::graph_launch_us},
    {"h2d_pinned_gbs", "H2D pinned", "GB/s", &Ceilings::h2d_pinned_gbs},
    {"h2d_pageable_gbs", "H2D pageable", "GB/s", &Ceilings::h2d_pageable_gbs},
    {"d2h_pinned_gbs", "D2H pinned", "GB/s", &Ceilings::d2h_pinned_gbs},
    {"host_elementwise_single_thread_gbs", "host elementwise (1 thread)", "GB/s", &Ceilings::host_single_thread_gbs},
    {"host_elementwise_openmp_gbs", "host elementwise (OpenMP)", "GB/s", &Ceilings::host_openmp_gbs},
};

Ceilings measure_ceilings(cudaStream_t stream, int repetitions);  // device ones; calls the host ones too
void measure_host_ceilings(Ceilings& c, int repetitions, std::size_t elements = std::size_t(1) << 28);

}  // namespace ks::bench

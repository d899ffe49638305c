// What `kbench run` is asked to do, parsed and checked without touching the GPU: every bad input is a
// std::invalid_argument naming the option, raised before a device is opened.
#pragma once

#include "bench/kbench/options.hpp"
#include "bench/parse.hpp"
#include "common/timing.hpp"
#include "gemm/gemm.hpp"
#include "gemm/host/modes.hpp"
#include "gemm/host/problem.hpp"
#include "reduce/reduce.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ks::bench {

// How results are checked. GEMM: against the whole Eigen reference, on sampled elements against long-double dot
// products, or whichever suits the size (Auto: sampled above gemm::kFullValidationLimit). None (--no-validate):
// no row is checked.
enum class Validation { Auto, Full, Sampled, None };

// `kbench run --suite shapes`: the named sweep of DGEMM shape classes that the fast variants are held to against
// cuBLAS (issue 36's), several sizes each. Its rows are GEMM rows (dmma_tma and the anchor unless --variants says
// otherwise), each labelled with its class; the table is followed by the geometric means of each variant's ratio
// to the anchor per class and over the sweep.
struct ShapeCase {
  const char* shape_class;
  int M, N, K;
};
extern const std::vector<ShapeCase> kShapeSuite;
// The variant the shape sweep times unless --variants says otherwise: dmma_tma; in the HIP build, which has neither
// it nor an anchor, the fastest step there.
#if defined(KS_HIP)
inline constexpr const char* kShapeSuiteVariant = "warp_tiled";
#else
inline constexpr const char* kShapeSuiteVariant = "dmma_tma";
#endif

// The host rows (family "host"): Eigen's DGEMM beside the GEMM rows up to 2048^3 (not in the shapes sweep), and the
// host sums beside the double reductions. Like the GPU variants they run where --variants names them (all of them
// without --variants): a sweep of one variant does not pay for seconds of host sums at 2^30.
inline constexpr const char* kEigenDgemmRow = "eigen_dgemm";
inline constexpr std::array<const char*, 3> kHostSumRows = {"recursive_interleaved", "eigen_sum", "openmp_sum"};

struct Plan {
  bool gemm = false, reduce = false, integral = false;
  bool eigen_dgemm = false;            // the Eigen row beside each GEMM size it fits
  std::vector<std::string> host_sums;  // of kHostSumRows, those beside each double reduction
  bool shape_suite = false;  // --suite shapes (GEMM rows of kShapeSuite, classes labelled, no Eigen rows)
  std::vector<GemmSize> gemm_sizes;
  std::vector<gemm::Mode> modes, extra_modes;  // extra: only at the largest size (the default suite)
  std::vector<std::size_t> reduce_counts, integral_counts;
  std::vector<reduce::DType> reduce_types, integral_types;
  std::vector<const gemm::GemmVariant*> gemm_variants;
  std::vector<const reduce::ReduceVariant*> reduce_variants;
  int block = 0;  // --block; 0: each variant's own default
  bool gemm_cold = false, reduce_cold = true;
  std::size_t device_memory = 0;  // the pipelined modes' budget per device; 0: what is free
  std::vector<int> devices;       // the pipelined modes' devices
  gemm::Operands operands;  // --dist
  Validation validation = Validation::Auto;
  std::optional<gemm::pipelined::Pageable> pageable;  // how pageable_pipelined's operands cross; none: time both
  TimingOptions timing;
  bool interleave = false;  // --interleave: device-mode GEMM and reduction rows timed in turn with their anchor
};

// The most devices --devices may list, and the highest index + 1.
constexpr std::size_t kMaxDevices = 64;

Plan make_plan(const RunOptions& o);

// The block size `v` runs with under `plan`.
int block_for(const reduce::ReduceVariant& v, const Plan& plan);

// Bytes of device memory one GEMM of size `s` holds (A, B and C), and one reduction of n elements of type t.
double gemm_bytes(const GemmSize& s);
double reduce_bytes(std::size_t n, reduce::DType t);

// A size that can never fit the device (`total_bytes`) is a usage error; one that fits the device but not what
// is free now (another job holds memory) is tried, with a warning: its rows fail alone if it cannot be
// allocated.
void check_memory(const Plan& plan, std::size_t free_bytes, std::size_t total_bytes);

}  // namespace ks::bench

// kbench's options, as the command line gives them (bench/kbench/main.cpp declares them to CLI11).
#pragma once

#include <string>
#include <vector>

namespace ks::bench {

struct RunOptions {
  std::string suite = "all";
  std::string variants = ".*";
  std::string sizes;   // empty: the suite's defaults
  std::string types;
  std::string modes;
  int block = 0;       // 0: each variant's own default
  int repetitions = 10;         // the minimum of timed repetitions per row
  int warmup = 2;
  double noise_percent = 1.0;   // a row repeats until stddev / median is at most this ...
  double time_budget_s = 0.5;   // ... or this much time is spent on it
  std::string l2;               // warm or cold; empty: GEMM warm, reductions cold
  bool no_blocking = false;     // one launch per sample, no blocking kernel, no batches
  bool stream_batches = false;  // batches as stream launches rather than one CUDA graph
  bool interleave = false;      // each row's samples alternate with its group anchor's (device GEMM, reductions)
  std::string device_memory;    // the pipelined modes' budget per device ("8G"); empty: what is free
  std::string devices;          // the pipelined modes' devices ("0,1"); empty: --device
  std::string dist;               // GEMM operands: uniform (default), exp:PHI, either with ,pow2:S
  std::string ops;                // GEMM op(A) op(B) combinations: NN (default), NT, TN, TT
  std::string validate = "auto";  // full, sampled, or auto (sampled above gemm::kFullValidationLimit)
  std::string pageable = "auto";  // pageable_pipelined: stage, register, or auto (time both at set-up)
  bool no_validate = false;
  bool skip_ceilings = false;
  std::string out;
  std::string format = "console";
  int device = 0;
  std::vector<std::string> benchmark_flags;  // --benchmark_filter=..., --benchmark_list_tests
  std::vector<std::string> given;            // the options given on the command line, e.g. "--mode"
  bool given_option(const std::string& name) const;
};

// kbench pipeline: the pipelined modes' plan for given products, link and rates (no GPU).
struct PipelineOptions {
  std::string sizes;
  double h2d_gbs = 0, d2h_gbs = 0;  // d2h 0: the same as h2d
  std::vector<double> tflops;
  std::string device_memory = "80G";
  int gpus = 1;
  bool beta_nonzero = false;
  int nt = 0, lead = 0, chunks = 0;  // 0: the rule's
  std::string format = "console";
};

struct ResourcesOptions {
  int threads = 256;
  std::string filter = ".*";
  bool all = false;
  std::string cuobjdump;
};

}  // namespace ks::bench

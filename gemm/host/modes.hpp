// Where the data lives when a DGEMM variant runs: the launch modes.
//   device    A, B, C already in device memory; the kernel alone.
//   pageable  host matrices (Eigen, pageable memory): H2D(A), H2D(B), [H2D(C) if beta != 0], kernel, D2H(C)
//             on one stream, timed as a whole.
//   pinned    the same sequence from page-locked host buffers.
//   graph     the pinned sequence captured once into a CUDA graph and instantiated once; each run is one
//             graph launch (capture + instantiate time is reported separately).
//   mapped    zero-copy: the kernel reads A and B and writes C in mapped host memory over the bus.
//   pinned_pipelined, pageable_pipelined
//             the pipelined mode (gemm/pipelined.hpp) from pinned or pageable host memory: tiles of C computed
//             while the operands' panels cross, for products of any size (a device-memory budget, devices).
// Any variant can be the compute step of any mode. cuBLASXt, which takes host pointers and moves the data itself,
// runs in the pinned and pageable modes on the same host buffers, in place of the copy sequence.
#pragma once

#include "common/exec_context.hpp"
#include "common/timing.hpp"
#include "gemm/gemm.hpp"
#if !defined(KS_HIP)  // cuBLASXt: the CUDA build only
#include "gemm/host/cublasxt.hpp"
#endif
#include "gemm/host/pipelined.hpp"
#include "gemm/host/problem.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ks::gemm {

class CublasXt;

enum class Mode { Device, Pageable, Pinned, Graph, Mapped, PinnedPipelined, PageablePipelined };

const std::vector<Mode>& all_modes();
bool is_pipelined(Mode m);
bool is_host_mode(Mode m);  // the operands start in host memory: pageable, pinned, graph and the pipelined modes
std::string to_string(Mode m);
Mode parse_mode(const std::string& s);  // throws std::invalid_argument naming the valid modes

// Settings of the pipelined modes. pageable_method: how pageable operands cross; nullopt: time one run each way
// when the Runner is set up (registration's cost included) and keep the faster.
struct PipelineOptions {
  pipelined::Config config;
  std::optional<pipelined::Pageable> pageable_method;
};

class Runner {
 public:
  // Allocates and uploads what the mode keeps resident (untimed). For Graph, captures and instantiates; for the
  // pipelined modes, plans the product and sets up its streams and buffers. Whatever it runs while setting up, it
  // leaves C as reset_output() would: run() right after construction computes alpha A B + beta C0.
  Runner(const GemmVariant& variant, Mode mode, const GemmProblem& problem, ExecContext& ctx,
         const PipelineOptions& pipeline = {});
#if !defined(KS_HIP)
  // cuBLASXt on the mode's host memory: Pinned or Pageable (std::invalid_argument otherwise). run() returns when C
  // is complete on the host.
  Runner(CublasXt& xt, Mode mode, const GemmProblem& problem, ExecContext& ctx);
#endif
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Before a checked run: C's destination poisoned with NaN, C's source set to C0 (beta != 0). Untimed.
  void reset_output();
  // Enqueues the mode's whole sequence on the context's stream. Pageable copies may block the host. `copy`
  // selects a device copy of A, B and C (Device mode, see make_copies; 0 otherwise).
  void run(int copy = 0);
  // Device mode: makes up to `wanted` copies of A, B and C in all (as many as a quarter of the free device
  // memory holds), so cold-L2 batches can rotate over them; returns how many there are (1 in other modes).
  int make_copies(int wanted);
  // What the timing engine times: this runner's sequence; cold L2 when `flusher` is given (flushed before each
  // sample, or copies rotated in batches), warm otherwise.
  StreamWork work(const L2Flusher* flusher);
  // Waits for the stream and returns C (ldc x N) as the mode delivers it to the host.
  Eigen::MatrixXd result();
  // The host modes' C in place (ldc x N), without a copy (null in device mode).
  const double* host_result();
  // Milliseconds spent capturing and instantiating the graph (Graph mode only, else 0).
  double setup_ms() const;
  // The pipelined modes: the product (its plan and timeline), and for pageable_pipelined how operands crossed
  // and what one run took each way at set-up (ms; 0 when not compared). Null in other modes.
  const pipelined::Product* product() const;
  std::string pageable_method() const;
  double staged_ms() const, registered_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ks::gemm

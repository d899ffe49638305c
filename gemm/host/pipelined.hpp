// The pipelined launch mode: DGEMM from host memory at the speed of the link, for products of any size.
//
// C is computed in tiles: a block of MT rows of A stays on the device while the K x NT panels of B stream in
// one after the other; each panel's product (any registered variant, through gemm::run) writes an MT x NT tile
// of C, which streams back while the next panel arrives and multiplies. Copies to the device, products and
// copies back run on three streams, ordered by events alone: the two copy engines and the SMs work at once.
// A block of A crosses the link once, and when all of A fits (MT = M) so does every panel of B: the minimum
// traffic. When it does not (a device-memory budget smaller than A), A goes block by block and B is sent once
// per block. Several devices split the panels of B (and so the columns of C) between them, one host thread each.
//
// With op(A) = A^T a block of rows of op(A) is a block of columns of the stored A, and a panel of op(B) = B^T a
// block of rows of B: each crosses as one 2D copy all the same and keeps its op on the device, where the variant
// reads it transposed (a variant that takes only NN is refused, as gemm::run refuses it).
//
// Every tile of a block needs all of the block's A, so while A crosses only the panels already on the device
// can multiply. The block's first `lead` panels therefore cross interleaved with A's chunks (of whole columns,
// ranges of k), each multiplying chunk by chunk as both arrive; the other panels follow once A is complete.
// Where products take about as long as the link (8192^3 on an H100), a wide lead keeps the SMs busy during A's
// crossing instead of leaving all products for after it.
//
// The order of the copies and products is the tile rule's (gemm/host/pipelined_plan.hpp): the product walks its
// schedule issuing CUDA calls.
//
// From pinned host memory the copies are DMA from the caller's arrays; from pageable memory they go through a
// ring of pinned buffers that host threads fill (to the device) and empty (from the device) while the DMA
// engines work, or through cudaHostRegister of the caller's arrays, whichever measures faster (Pageable).
#pragma once

#include "gemm/gemm.hpp"
#include "gemm/host/pipelined_plan.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ks::gemm::pipelined {

// How pageable input crosses to the device.
enum class Pageable { Stage, Register };

struct HostOperands {
  const double* A = nullptr;
  int lda = 0;
  const double* B = nullptr;
  int ldb = 0;
  double* C = nullptr;
  int ldc = 0;
  bool pinned = false;  // page-locked (cudaHostAlloc): DMA straight from them
  gemm::Op transa = gemm::Op::N, transb = gemm::Op::N;  // op(A), op(B): A stored K x M, B stored N x K where T
};

struct Config {
  std::vector<int> devices{0};
  std::size_t budget_bytes = 0;  // per device; 0: what the device has free when the product is set up
  Pageable pageable = Pageable::Stage;
  double h2d_gbs = 25, d2h_gbs = 25;  // the link, for the rule (kbench passes its measured ceilings)
  double tflops = 0;                  // the variant's rate, for the rule; 0: measured when set up
  int nt = 0, lead = 0, chunks = 0;  // panel width, lead panels, A's chunks per block; 0: the rule's
};

// One product from host memory, set up once (device buffers, streams, pinned staging) and run any number of
// times. run() returns when C is complete in host memory.
class Product {
 public:
  Product(const GemmVariant& v, int M, int N, int K, double alpha, double beta, const HostOperands& host,
          const Config& config);
  ~Product();
  Product(const Product&) = delete;
  Product& operator=(const Product&) = delete;

  void run();
  // How pageable operands cross (ignored for pinned ones); the staging rings exist either way.
  void set_pageable(Pageable how);
  const Plan& plan() const;
  // Per device and stream, the busy time of the last run (ms), from events: where the time went.
  std::string timeline() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ks::gemm::pipelined

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
// From pinned host memory the copies are DMA from the caller's arrays; from pageable memory they go through a
// ring of pinned buffers that host threads fill (to the device) and empty (from the device) while the DMA
// engines work, or through cudaHostRegister of the caller's arrays, whichever measures faster (Pageable).
#pragma once

#include "gemm/gemm.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ks::gemm::pipelined {

// What the tile rule needs: the product, the device memory each device may use, the link and the variant's rate.
struct PlanInput {
  int M = 0, N = 0, K = 0;
  bool beta_nonzero = false;       // C's tiles cross to the device too
  std::size_t budget_bytes = 0;    // per device, for A's block, B's panels and C's tiles
  double h2d_gbs = 0, d2h_gbs = 0; // measured link bandwidth per device, GB/s
  double tflops = 0;               // the variant's measured rate on one device
  int devices = 1;
};

struct Plan {
  int mt = 0;            // rows of A held at once (M: all of A stays)
  int nt = 0;            // columns of a panel of B / tile of C
  int row_blocks = 0;    // ceil(M / mt)
  int col_panels = 0;    // ceil(N / nt), split between the devices
  int a_chunks = 1;      // a block of A crosses in this many chunks of columns; its first panel multiplies (and
                         // accumulates) chunk by chunk
  std::size_t device_bytes = 0;  // what one device holds
  double h2d_bytes = 0;          // what crosses to one device
  double link_ms = 0, compute_ms = 0, fill_ms = 0, tail_ms = 0, predicted_ms = 0;
  std::string str() const;       // "mt 4096, nt 128: 1 row block x 32 panels, 304 MiB on each device; predicted
                                 // 5.9 ms (link 4.9, products 2.4, fill 0.7, tail 0.1)"
};

// Memory one device keeps for workspaces and scratch besides the plan's buffers.
constexpr std::size_t kDeviceOverheadBytes = std::size_t(160) << 20;
constexpr double kAChunkBytes = 32.0 * (1 << 20);
constexpr int kMaxAChunks = 16;

// The plan with the smallest predicted time (below), among panel widths of 64 to 8192 columns and N itself,
// with MT as large as the budget allows (M when A fits). Throws std::invalid_argument when the budget holds
// not even one 64-row block of A with two 64-column panels and tiles. Per device, with d devices and N/d columns:
//   link    = (A + row_blocks x B/d (+ C/d when beta != 0)) / h2d
//   compute = 2 M (N/d) K / (tflops x nt / (nt + 96))        (thin panels multiply below the full rate)
//   fill    = (first chunk of A + first panel) / h2d         (nothing multiplies before; a block of A crosses in
//                                                             up to kMaxAChunks chunks of whole columns, about
//                                                             kAChunkBytes each)
//   tail    = the last panel's products + the last tile's return / d2h
//   time    = max(link + tail, fill + compute + the last tile's return)
Plan plan(const PlanInput& in);

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
};

struct Config {
  std::vector<int> devices{0};
  std::size_t budget_bytes = 0;  // per device; 0: what the device has free when the product is set up
  Pageable pageable = Pageable::Stage;
  double h2d_gbs = 25, d2h_gbs = 25;  // the link, for the rule (kbench passes its measured ceilings)
  double tflops = 0;                  // the variant's rate, for the rule; 0: measured when set up
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

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
// Every tile of a block needs all of the block's A, so while A crosses only the panels already on the device
// can multiply. The block's first `lead` panels therefore cross interleaved with A's chunks (of whole columns,
// ranges of k), each multiplying chunk by chunk as both arrive; the other panels follow once A is complete.
// Where products take about as long as the link (8192^3 on an H100), a wide lead keeps the SMs busy during A's
// crossing instead of leaving all products for after it.
//
// The order of the copies and products is one list (schedule()): the product walks it issuing CUDA calls, and
// the rule walks it with modelled durations (simulate()) to predict the time of each candidate plan.
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
  int nt = 0, lead = 0;            // panel width and lead panels; 0: the rule chooses
  int chunks = 0;                  // A's chunks per block; 0: about kAChunkBytes each, at most kMaxAChunks
  // A compute step that prepares a block of A once and then multiplies faster (ozaki: A's scaling and residues,
  // kept on the device until the next block): after A's last chunk one preparation at prepare_gbs (GB/s of the
  // block's doubles), then every product over all of k at prepared_tflops; the lead's products over chunks of A
  // stay at tflops. What it keeps on the device: prepared_a_bytes per element of the block, and for the product
  // in progress prepared_b_bytes per element of a panel and prepared_c_bytes per element of a tile.
  // prepared_tflops 0: no preparation. Modelled for kbench pipeline; no variant prepares A in the product yet.
  double prepared_tflops = 0, prepare_gbs = 0;
  double prepared_a_bytes = 0, prepared_b_bytes = 0, prepared_c_bytes = 0;
};

struct Plan {
  int mt = 0;            // rows of A held at once (M: all of A stays)
  int nt = 0;            // columns of a panel of B / tile of C
  int row_blocks = 0;    // ceil(M / mt)
  int col_panels = 0;    // ceil(N / nt), split between the devices
  int a_chunks = 1;      // a block of A crosses in this many chunks of columns (ranges of k)
  int lead = 1;          // a block's first `lead` panels (per device) cross among A's chunks and multiply chunk by
                         // chunk; the others after all of A
  int slots = 2;         // panel buffers (B panel and C tile) per device: lead + 1, at least 2
  bool prepared = false; // A's blocks are prepared once (PlanInput::prepared_tflops)
  std::size_t device_bytes = 0;  // what one device holds
  double h2d_bytes = 0;          // what crosses to one device
  double link_ms = 0;            // h2d_bytes at the link's rate: the bound
  double compute_ms = 0;         // the products alone, at the modelled rate
  double predicted_ms = 0;       // the schedule simulated (simulate())
  std::string str() const;       // "mt 8192, nt 512: 1 row block x 16 panels, 6 lead, 16 chunks of A, 3.2 GiB on
                                 // each device; predicted 24.1 ms (link 19.7, products 19.9)"
};

// Memory one device keeps for workspaces and scratch besides the plan's buffers.
constexpr std::size_t kDeviceOverheadBytes = std::size_t(160) << 20;
constexpr double kAChunkBytes = 32.0 * (1 << 20);
constexpr int kMaxAChunks = 16;
// The model of one product call: 2 m n k / (tflops x n / (n + kThinColumns)) plus kLaunchMs (thin panels multiply
// below the full rate; each call costs a launch and a wave's ramp). 48 puts four measured H100 runs (4096^3 and
// 8192^3, one lead panel and several; docs/gemm-notes.md, step 20) within 4% of the simulation.
constexpr double kThinColumns = 48;
constexpr double kLaunchMs = 0.005;
// The most tiles of C (row blocks x panels) one device's schedule may have: a plan is chosen by simulating its
// schedule for every candidate, and past this many tiles that alone takes seconds (such a product runs for hours).
constexpr long long kMaxTiles = 1 << 15;

// One step of a device's schedule, on the stream of its kind (copies to the device, products and preparations,
// copies back).
struct Op {
  enum Kind : unsigned char { SendA, SendB, SendC, Multiply, Return, Prepare };
  Kind kind = SendA;
  int r0 = 0, rows = 0;  // rows of A and C (the block)
  int c0 = 0, cols = 0;  // columns of B and C (the panel; global column index)
  int k0 = 0, k1 = 0;    // range of k (SendA: A's columns; Multiply: the product's depth; Prepare: all of k)
  int slot = 0;          // the panel's B and C buffers
  bool first = false;    // Multiply: the first over this tile (beta applies; later ones accumulate)
  bool prepared = false; // Multiply: over all of k from the block's preparation (deps[1] is the Prepare op)
  int deps[3] = {-1, -1, -1};  // earlier ops this one waits for (the stream's own order is implied)
  static int stream(Kind k) { return k == Multiply || k == Prepare ? 1 : k == Return ? 2 : 0; }
};

// The ops of one device, for its panels [first_panel, first_panel + panels) of the plan, in issue order.
std::vector<Op> schedule(const Plan& p, const PlanInput& in, int first_panel, int panels);
// Simulated time of a schedule (ms): each op starts when its stream and the ops it waits for are done, and lasts
// its bytes over the link (h2d_gbs, d2h_gbs) or its model product time.
double simulate(const std::vector<Op>& ops, const PlanInput& in);

// The plan with the smallest simulated time, among panel widths of 64 to 8192 columns (powers of two; wider where
// 8192 makes more than kMaxTiles panels) and N itself and lead
// counts from 1 to all of a device's panels, with MT as large as the budget allows (M when A fits). The device
// with the most panels is simulated. Throws std::invalid_argument when the budget holds not even one 64-row block
// of A with two 64-column panels and tiles, or when every width that fits makes more than kMaxTiles tiles.
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

// The pipelined modes' tile rule (the model; the executor is gemm/host/pipelined.hpp): how a product from host
// memory is cut into a block of A's rows that stays on the device, panels of B and tiles of C, and in which order
// their copies and products are issued. The order is one list (schedule()): the executor walks it issuing CUDA
// calls, and the rule walks it with modelled durations (simulate()) to predict the time of each candidate plan.
// It needs no GPU: `kbench pipeline` prints its plans for any product, link and rate.
#pragma once

#include <cstddef>
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
// 8192^3, one lead panel and several; docs/gemm-notes.md) within 4% of the simulation.
constexpr double kThinColumns = 48;
constexpr double kLaunchMs = 0.005;
// The most tiles of C (row blocks x panels) one device's schedule may have: a plan is chosen by simulating its
// schedule for every candidate, and past this many tiles that alone takes seconds (such a product runs for hours).
constexpr long long kMaxTiles = 1 << 15;
// The most steps one device's schedule may hold (about 100 MB with the simulation's arrays). The rule's own
// choices stay far below (at most kMaxTiles x (kMaxAChunks + 4)); forced A chunks and lead panels (nt, lead,
// chunks in PlanInput) are refused beyond it before the schedule is built.
constexpr long long kMaxOps = 1 << 21;

// One step of a device's schedule, on the stream of its kind (copies to the device, products, copies back).
struct Op {
  enum Kind : unsigned char { SendA, SendB, SendC, Multiply, Return };
  Kind kind = SendA;
  int r0 = 0, rows = 0;  // rows of A and C (the block)
  int c0 = 0, cols = 0;  // columns of B and C (the panel; global column index)
  int k0 = 0, k1 = 0;    // range of k (SendA: A's columns; Multiply: the product's depth)
  int slot = 0;          // the panel's B and C buffers
  bool first = false;    // Multiply: the first over this tile (beta applies; later ones accumulate)
  int deps[3] = {-1, -1, -1};  // earlier ops this one waits for (the stream's own order is implied)
  static int stream(Kind k) { return k == Multiply ? 1 : k == Return ? 2 : 0; }
};

// Device d's share of the plan's panels, [first, first + count): devices split them as evenly as whole panels allow.
struct Share {
  int first, count;
};
Share share_of(int col_panels, int devices, int d);

// The ops of one device, for its panels [first_panel, first_panel + panels) of the plan, in issue order.
std::vector<Op> schedule(const Plan& p, const PlanInput& in, int first_panel, int panels);
// Simulated time of a schedule (ms): each op starts when its stream and the ops it waits for are done, and lasts
// its bytes over the link (h2d_gbs, d2h_gbs) or its model product time.
double simulate(const std::vector<Op>& ops, const PlanInput& in);

// The plan with the smallest simulated time, among panel widths of 64 to 8192 columns (powers of two; wider where
// 8192 makes more than kMaxTiles panels) and N itself and lead
// counts from 1 to all of a device's panels, with MT as large as the budget allows (M when A fits). The device
// with the most panels is simulated. Throws std::invalid_argument when the budget holds not even one 64-row block
// of A with two 64-column panels and tiles, when every width that fits makes more than kMaxTiles tiles, or when
// a forced width, lead and A chunks would make a schedule of more than kMaxOps steps. A forced width wider than
// a device's columns of C is that many columns.
Plan plan(const PlanInput& in);

}  // namespace ks::gemm::pipelined

// The pipelined modes' tile rule: the schedule of one device's copies and products, its simulation, and the
// choice of panel width, lead and chunks by the simulated time (gemm/host/pipelined_plan.hpp).
#include "gemm/host/pipelined_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace ks::gemm::pipelined {

// ---- the rule ----

namespace {

constexpr double kBytes = 8;  // sizeof(double)

std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f MiB", bytes / (1 << 20));
  return b;
}

// Device bytes of a block of mt rows of A with `slots` panels of B and tiles of C of nt columns.
double block_bytes(double mt, double K, double nt, double slots) { return kBytes * (mt * K + slots * (K * nt + mt * nt)); }

// The largest block of rows of A (M, or a multiple of 64) that fits `avail` bytes beside `slots` panels of B and
// tiles of C of nt columns; 0 when not even 64 rows (or M, if smaller) fit. block_bytes is linear in mt.
long long rows_that_fit(double avail, long long M, long long K, long long nt, long long slots) {
  if (block_bytes(M, K, nt, slots) <= avail) return M;
  const double fixed = block_bytes(0, K, nt, slots), per_row = block_bytes(1, K, nt, slots) - fixed;
  const long long mt = static_cast<long long>((avail - fixed) / per_row) / 64 * 64;
  return mt >= 64 && mt < M ? mt : 0;
}

// The modelled duration of one op (ms).
double duration(const Op& op, const PlanInput& in) {
  const double h2d = in.h2d_gbs * 1e6, d2h = in.d2h_gbs * 1e6;  // bytes per ms
  const double rows = op.rows, cols = op.cols, depth = op.k1 - op.k0;
  switch (op.kind) {
    case Op::SendA: return kBytes * rows * depth / h2d;
    case Op::SendB: return kBytes * depth * cols / h2d;
    case Op::SendC: return kBytes * rows * cols / h2d;
    case Op::Return: return kBytes * rows * cols / d2h;
    case Op::Multiply: return 2.0 * rows * cols * depth / (in.tflops * 1e9 * cols / (cols + kThinColumns)) + kLaunchMs;
  }
  return 0;
}

}  // namespace

Share share_of(int col_panels, int devices, int d) {
  const int first = static_cast<int>(static_cast<long long>(col_panels) * d / devices);
  return {first, static_cast<int>(static_cast<long long>(col_panels) * (d + 1) / devices) - first};
}

std::string Plan::str() const {
  char b[320];
  std::snprintf(b, sizeof b,
                "mt %d, nt %d: %d row block%s x %d panel%s, %d lead, %d chunk%s of A, %s on each device; "
                "predicted %.3g ms (link %.3g, products %.3g)",
                mt, nt, row_blocks, row_blocks == 1 ? "" : "s", col_panels, col_panels == 1 ? "" : "s", lead, a_chunks,
                a_chunks == 1 ? "" : "s",
                mib(static_cast<double>(device_bytes)).c_str(), predicted_ms, link_ms, compute_ms);
  return b;
}

std::vector<Op> schedule(const Plan& p, const PlanInput& in, int first_panel, int panels) {
  std::vector<Op> ops;
  if (panels <= 0 || in.M <= 0 || in.N <= 0) return ops;
  const int M = in.M, N = in.N, K = in.K, S = p.slots;
  std::vector<int> slot_last_multiply(S, -1), slot_return(S, -1);
  int tile = 0, last_multiply = -1, previous_block = -1;  // tiles so far (they take the slots in turn); the last
                                                          // product, and the last over the previous block of A
  auto push = [&](Op op) {
    ops.push_back(op);
    return static_cast<int>(ops.size()) - 1;
  };
  for (int r0 = 0; r0 < M; r0 += p.mt) {
    const int rows = std::min(p.mt, M - r0), chunks = std::min(p.a_chunks, std::max(1, K));
    const int lead = std::min(p.lead, panels);
    std::vector<int> a_op(chunks);
    struct Panel {
      int slot, c0, cols, b_op, c_op, last;
    };
    std::vector<Panel> panel(panels);
    auto k_at = [&](int q) { return static_cast<int>(static_cast<long long>(K) * q / chunks); };
    auto send_a = [&](int q) {
      Op op{.kind = Op::SendA, .r0 = r0, .rows = rows, .k0 = k_at(q), .k1 = k_at(q + 1)};
      op.deps[0] = q == 0 ? previous_block : -1;  // A's buffer is free once the last block's products are done
      a_op[q] = push(op);
    };
    auto send_panel = [&](int j) {
      Panel& pn = panel[j];
      pn.slot = (tile + j) % S;
      pn.c0 = (first_panel + j) * p.nt;
      pn.cols = std::min(p.nt, N - pn.c0);
      Op b{.kind = Op::SendB, .r0 = r0, .rows = rows, .c0 = pn.c0, .cols = pn.cols, .k0 = 0, .k1 = K, .slot = pn.slot};
      b.deps[0] = slot_last_multiply[pn.slot];  // the slot's last tile has multiplied
      pn.b_op = push(b);
      pn.c_op = -1;
      if (in.beta_nonzero) {
        Op c{.kind = Op::SendC, .r0 = r0, .rows = rows, .c0 = pn.c0, .cols = pn.cols, .slot = pn.slot};
        c.deps[0] = slot_return[pn.slot];  // and gone home
        pn.c_op = push(c);
      }
    };
    // Panel j's product over A's chunk q (-1: all of k, after the last chunk).
    auto multiply = [&](int j, int q) {
      Panel& pn = panel[j];
      const bool first = q <= 0;
      Op op{.kind = Op::Multiply, .r0 = r0, .rows = rows, .c0 = pn.c0, .cols = pn.cols,
            .k0 = q < 0 ? 0 : k_at(q), .k1 = q < 0 ? K : k_at(q + 1), .slot = pn.slot, .first = first};
      op.deps[0] = pn.b_op;
      op.deps[1] = a_op[q < 0 ? chunks - 1 : q];
      op.deps[2] = first ? (in.beta_nonzero ? pn.c_op : slot_return[pn.slot]) : -1;
      pn.last = slot_last_multiply[pn.slot] = last_multiply = push(op);
    };
    auto send_home = [&](int j) {
      Op op{.kind = Op::Return, .r0 = r0, .rows = rows, .c0 = panel[j].c0, .cols = panel[j].cols,
            .slot = panel[j].slot};
      op.deps[0] = panel[j].last;
      slot_return[panel[j].slot] = push(op);
    };
    // The lead: A's chunks and the lead panels in turn, equal bytes of each while both last (the products
    // available grow as chunks x panels, so the first products come soonest that way), every product as soon as
    // its chunk and its panel are there; a lead tile goes home after its product over the last chunk.
    for (int sa = 0, sb = 0; sa < chunks || sb < lead;) {
      const double a_sent = static_cast<double>(k_at(sa)) * rows, b_sent = static_cast<double>(sb) * K * p.nt;
      if (sb == lead || (sa < chunks && a_sent <= b_sent)) {
        send_a(sa);
        for (int g = 0; g < sb; ++g) {
          multiply(g, sa);
          if (sa == chunks - 1) send_home(g);
        }
        ++sa;
      } else {
        send_panel(sb);
        for (int q = 0; q < sa; ++q) multiply(sb, q);
        if (sa == chunks) send_home(sb);
        ++sb;
      }
    }
    for (int j = lead; j < panels; ++j) {
      send_panel(j);
      multiply(j, -1);
      send_home(j);
    }
    previous_block = last_multiply;
    tile += panels;
  }
  return ops;
}

double simulate(const std::vector<Op>& ops, const PlanInput& in) {
  std::vector<double> end(ops.size());
  double stream_end[3] = {0, 0, 0};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    double start = stream_end[Op::stream(op.kind)];
    for (int d : op.deps)
      if (d >= 0) start = std::max(start, end[d]);
    end[i] = stream_end[Op::stream(op.kind)] = start + duration(op, in);
  }
  return std::max({stream_end[0], stream_end[1], stream_end[2]});
}

Plan plan(const PlanInput& in) {
  if (in.M < 0 || in.N < 0 || in.K < 0 || in.h2d_gbs <= 0 || in.d2h_gbs <= 0 || in.tflops <= 0 || in.devices < 1 ||
      in.nt < 0 || in.lead < 0 || in.chunks < 0)
    throw std::invalid_argument("pipelined plan: M, N, K >= 0, link bandwidths, rate and devices > 0 needed");
  const long long M = std::max(1, in.M), K = std::max(1, in.K), d = in.devices;
  const long long n_dev = (std::max(1, in.N) + d - 1) / d;  // columns of C per device
  const double avail = static_cast<double>(in.budget_bytes) - static_cast<double>(kDeviceOverheadBytes);
  // what crosses to a device: all of A, its columns of B once per block of A, its columns of C where beta is not 0
  const double a_bytes = kBytes * M * K, b_bytes = kBytes * K * n_dev, c_bytes = kBytes * M * n_dev;
  std::vector<long long> widths;
  if (in.nt > 0) {
    widths.push_back(std::min<long long>(in.nt, n_dev));
  } else {
    // up to 8192 columns, wider only while the last width made more than kMaxTiles panels
    for (long long w = 64; w < n_dev && (w <= 8192 || (n_dev + w / 2 - 1) / (w / 2) > kMaxTiles); w *= 2)
      widths.push_back(w);
    if (n_dev <= 8192) widths.push_back(n_dev);
  }
  Plan best;
  long long too_many_tiles = std::numeric_limits<long long>::max();  // the fewest tiles of a width refused for them
  int fewest_slots = 0;  // of the plans tried first per width (for the error): 2, or more with a forced lead
  for (long long nt : widths) {
    const int col_panels = static_cast<int>((std::max(1, in.N) + nt - 1) / nt);
    Share most{0, 0};  // the device with the most panels: the one the product waits for
    for (int dev = 0; dev < d; ++dev)
      if (const Share sh = share_of(col_panels, static_cast<int>(d), dev); sh.count > most.count) most = sh;
    std::vector<int> leads;
    if (in.lead > 0) {
      leads.push_back(std::min(in.lead, most.count));
    } else {
      for (int l = 1; l < most.count; l = l < 4 ? l + 1 : l * 3 / 2) leads.push_back(l);
      leads.push_back(most.count);
    }
    for (int lead : leads) {
      Plan p;
      p.lead = lead;
      p.slots = std::max(2, std::min(lead + 1, most.count));
      if (lead == leads.front()) fewest_slots = fewest_slots ? std::min(fewest_slots, p.slots) : p.slots;
      const long long mt = avail > 0 ? rows_that_fit(avail, M, K, nt, p.slots) : 0;
      if (mt == 0) break;  // more lead panels need more memory still
      const long long row_blocks = (M + mt - 1) / mt;
      if (row_blocks * most.count > kMaxTiles) {  // this width's lead candidates all make as many tiles
        too_many_tiles = std::min(too_many_tiles, row_blocks * most.count);
        break;
      }
      p.mt = static_cast<int>(mt);
      p.nt = static_cast<int>(nt);
      p.row_blocks = static_cast<int>(row_blocks);
      p.col_panels = col_panels;
      p.device_bytes = static_cast<std::size_t>(block_bytes(static_cast<double>(mt), static_cast<double>(K),
                                                            static_cast<double>(nt), p.slots)) +
                       kDeviceOverheadBytes;
      p.h2d_bytes = a_bytes + p.row_blocks * b_bytes + (in.beta_nonzero ? c_bytes : 0);
      p.link_ms = p.h2d_bytes / (in.h2d_gbs * 1e6);
      p.a_chunks = in.chunks > 0 ? static_cast<int>(std::min<long long>(in.chunks, K))
                                 : static_cast<int>(std::clamp(std::ceil(kBytes * mt * K / kAChunkBytes), 1.0,
                                                               static_cast<double>(std::min<long long>(kMaxAChunks, K))));
      // Sends of A's chunks, products of the lead panels over each chunk, and a send, product and return per panel.
      const long long steps = row_blocks * (static_cast<long long>(p.a_chunks) * (1 + std::min(lead, most.count)) +
                                            4LL * most.count);
      if (steps > kMaxOps)
        throw std::invalid_argument("pipelined: " + std::to_string(p.a_chunks) + " chunks of A and " +
                                    std::to_string(lead) + " lead panels over " + std::to_string(row_blocks) +
                                    " row blocks make a schedule of " + std::to_string(steps) +
                                    " steps, more than the " + std::to_string(kMaxOps) +
                                    " the rule simulates; fewer chunks or lead panels");
      const std::vector<Op> ops = schedule(p, in, most.first, most.count);
      for (const Op& op : ops)
        if (op.kind == Op::Multiply) p.compute_ms += duration(op, in);
      p.predicted_ms = simulate(ops, in);
      if (best.mt == 0 || p.predicted_ms < best.predicted_ms) best = p;
    }
  }
  if (best.mt == 0 && too_many_tiles != std::numeric_limits<long long>::max())
    throw std::invalid_argument("pipelined: " + std::to_string(M) + " x " + std::to_string(in.N) + " x " +
                                std::to_string(K) + " in a device-memory budget of " +
                                mib(static_cast<double>(in.budget_bytes)) + " takes at least " +
                                std::to_string(too_many_tiles) + " tiles of C per device, more than the " +
                                std::to_string(kMaxTiles) + " the rule simulates; a larger budget or more devices");
  if (best.mt == 0)
    throw std::invalid_argument(
        "pipelined: a device-memory budget of " + mib(static_cast<double>(in.budget_bytes)) + " holds not even one " +
        std::to_string(std::min<long long>(64, M)) + "-row block of A with " +
        (fewest_slots == 2 ? std::string("two") : std::to_string(fewest_slots)) + " " +
        std::to_string(in.nt > 0 ? in.nt : 64) + "-column panels of B and tiles of C (K = " + std::to_string(K) +
        ") beside the " + mib(kDeviceOverheadBytes) + " each device keeps for workspaces");
  return best;
}

}  // namespace ks::gemm::pipelined

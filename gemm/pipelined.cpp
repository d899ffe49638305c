// The pipelined launch mode (gemm/pipelined.hpp): the tile rule, and the product's streams, events and staging.
#include "gemm/pipelined.hpp"

#include "common/resources.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ks::gemm::pipelined {

// ---- the rule ----

namespace {

constexpr double kBytes = 8;  // sizeof(double)

std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f MiB", bytes / (1 << 20));
  return b;
}

// Device bytes of a block of mt rows of A with `slots` panels of B and tiles of C of nt columns, and what a
// preparing compute step keeps beside them (PlanInput::prepared_*).
double block_bytes(const PlanInput& in, double mt, double K, double nt, double slots) {
  const double prepared = in.prepared_tflops > 0
                              ? in.prepared_a_bytes * mt * K + in.prepared_b_bytes * K * nt + in.prepared_c_bytes * mt * nt
                              : 0;
  return kBytes * (mt * K + slots * (K * nt + mt * nt)) + prepared;
}

// The largest block of rows of A (M, or a multiple of 64) that fits `avail` bytes beside `slots` panels of B and
// tiles of C of nt columns; 0 when not even 64 rows (or M, if smaller) fit. block_bytes is linear in mt.
long long rows_that_fit(const PlanInput& in, double avail, long long M, long long K, long long nt, long long slots) {
  if (block_bytes(in, M, K, nt, slots) <= avail) return M;
  const double fixed = block_bytes(in, 0, K, nt, slots), per_row = block_bytes(in, 1, K, nt, slots) - fixed;
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
    case Op::Multiply: {
      const double tflops = op.prepared ? in.prepared_tflops : in.tflops;
      return 2.0 * rows * cols * depth / (tflops * 1e9 * cols / (cols + kThinColumns)) + kLaunchMs;
    }
    case Op::Prepare: return kBytes * rows * depth / (in.prepare_gbs * 1e6) + kLaunchMs;
  }
  return 0;
}

// A device's share of the panels: [first, first + count).
struct Share {
  int first, count;
};
Share share_of(int col_panels, int devices, int d) {
  const int first = static_cast<int>(static_cast<long long>(col_panels) * d / devices);
  return {first, static_cast<int>(static_cast<long long>(col_panels) * (d + 1) / devices) - first};
}

}  // namespace

std::string Plan::str() const {
  char b[320];
  std::snprintf(b, sizeof b,
                "mt %d, nt %d: %d row block%s x %d panel%s, %d lead, %d chunk%s of A%s, %s on each device; "
                "predicted %.3g ms (link %.3g, products %.3g)",
                mt, nt, row_blocks, row_blocks == 1 ? "" : "s", col_panels, col_panels == 1 ? "" : "s", lead, a_chunks,
                a_chunks == 1 ? "" : "s", prepared ? " (each block prepared once)" : "",
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
    int prepare_op = -1;  // the block's preparation (p.prepared), before its first product over all of k
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
    // Panel j's product over A's chunk q (-1: all of k, after the last chunk; from the preparation where the plan
    // prepares A).
    auto multiply = [&](int j, int q) {
      Panel& pn = panel[j];
      const bool first = q <= 0, prepared = q < 0 && p.prepared;
      if (prepared && prepare_op < 0) {
        Op op{.kind = Op::Prepare, .r0 = r0, .rows = rows, .k0 = 0, .k1 = K};
        op.deps[0] = a_op[chunks - 1];
        prepare_op = push(op);
      }
      Op op{.kind = Op::Multiply, .r0 = r0, .rows = rows, .c0 = pn.c0, .cols = pn.cols,
            .k0 = q < 0 ? 0 : k_at(q), .k1 = q < 0 ? K : k_at(q + 1), .slot = pn.slot, .first = first,
            .prepared = prepared};
      op.deps[0] = pn.b_op;
      op.deps[1] = prepared ? prepare_op : a_op[q < 0 ? chunks - 1 : q];
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
        if (sa == chunks && p.prepared) {
          multiply(sb, -1);
        } else {
          for (int q = 0; q < sa; ++q) multiply(sb, q);
        }
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
      in.nt < 0 || in.lead < 0 || in.chunks < 0 || in.prepared_tflops < 0 ||
      (in.prepared_tflops > 0 && in.prepare_gbs <= 0) || in.prepared_a_bytes < 0 || in.prepared_b_bytes < 0 ||
      in.prepared_c_bytes < 0)
    throw std::invalid_argument("pipelined plan: M, N, K >= 0, link bandwidths, rate and devices > 0 needed "
                                "(and a preparation's rate where its products' rate is given)");
  const long long M = std::max(1, in.M), K = std::max(1, in.K), d = in.devices;
  const long long n_dev = (std::max(1, in.N) + d - 1) / d;  // columns of C per device
  const double avail = static_cast<double>(in.budget_bytes) - static_cast<double>(kDeviceOverheadBytes);
  // what crosses to a device: all of A, its columns of B once per block of A, its columns of C where beta is not 0
  const double a_bytes = kBytes * M * K, b_bytes = kBytes * K * n_dev, c_bytes = kBytes * M * n_dev;
  std::vector<long long> widths;
  if (in.nt > 0) {
    widths.push_back(in.nt);
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
      const long long mt = avail > 0 ? rows_that_fit(in, avail, M, K, nt, p.slots) : 0;
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
      p.prepared = in.prepared_tflops > 0;
      p.device_bytes = static_cast<std::size_t>(block_bytes(in, static_cast<double>(mt), static_cast<double>(K),
                                                            static_cast<double>(nt), p.slots)) +
                       kDeviceOverheadBytes;
      p.h2d_bytes = a_bytes + p.row_blocks * b_bytes + (in.beta_nonzero ? c_bytes : 0);
      p.link_ms = p.h2d_bytes / (in.h2d_gbs * 1e6);
      p.a_chunks = in.chunks > 0 ? static_cast<int>(std::min<long long>(in.chunks, K))
                                 : static_cast<int>(std::clamp(std::ceil(kBytes * mt * K / kAChunkBytes), 1.0,
                                                               static_cast<double>(std::min<long long>(kMaxAChunks, K))));
      const std::vector<Op> ops = schedule(p, in, most.first, most.count);
      for (const Op& op : ops)
        if (Op::stream(op.kind) == 1) p.compute_ms += duration(op, in);
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

// ---- the product ----

namespace {

// The pinned buffers that pageable data passes through, each with the event after which it may be reused.
struct Ring {
  static constexpr int kSlots = 4;
  std::size_t slot_bytes = 0;
  PinnedBuffer<double> slots[kSlots];
  Event done[kSlots];  // the DMA from (to the device) or into (from the device) the slot has finished
  struct Pending {     // a slot holding a tile piece on its way to the host
    double* dst = nullptr;
    int ld = 0, rows = 0, cols = 0;
  } pending[kSlots];
  int next = 0;

  explicit Ring(std::size_t bytes) : slot_bytes(bytes) {
    for (auto& s : slots) s = PinnedBuffer<double>((bytes + 7) / 8);
    for (auto& e : done) e = Event(cudaEventDisableTiming);
  }
  // Whole columns of `rows` doubles that fit in a slot (at least one).
  int columns_per_slot(int rows) const {
    return static_cast<int>(std::max<std::size_t>(1, slot_bytes / (8 * static_cast<std::size_t>(rows))));
  }
};

// Host copy of `cols` columns of `rows` doubles between two column-major layouts, spread over the host's cores.
void host_copy(double* dst, int dst_ld, const double* src, int src_ld, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int c = 0; c < cols; ++c)
    std::memcpy(dst + static_cast<std::size_t>(c) * dst_ld, src + static_cast<std::size_t>(c) * src_ld,
                static_cast<std::size_t>(rows) * 8);
}

struct DeviceWork {
  int device = 0;
  int first_panel = 0, panels = 0;  // this device's column panels of C
  Stream h2d, compute, d2h;
  std::unique_ptr<ExecContext> ctx;
  DeviceBuffer<double> a_block;
  std::vector<DeviceBuffer<double>> b, c;  // the plan's slots: a panel of B, a tile of C
  std::vector<Op> ops;                     // the schedule
  std::vector<Event> done;                 // per op: recorded after it where an op of another stream waits for it
  std::vector<char> awaited;
  Event t_start, t_h2d_end, t_compute_begin, t_compute_end, t_d2h_end;  // timing: the timeline
  std::unique_ptr<Ring> up, down;  // staging for pageable operands
  std::deque<int> held;            // staged returns not issued yet (Product::Impl::run_device)
  bool computed = false;           // a product has been issued in this run
  double h2d_ms = 0, compute_ms = 0, compute_begin_ms = 0, d2h_ms = 0;
};

}  // namespace

struct Product::Impl {
  const GemmVariant& variant;
  int M, N, K;
  double alpha, beta;
  HostOperands host;
  Config config;
  Plan plan;
  std::vector<std::unique_ptr<DeviceWork>> work;

  Impl(const GemmVariant& v, int m, int n, int k, double a, double b, const HostOperands& h, const Config& c)
      : variant(v), M(m), N(n), K(k), alpha(a), beta(b), host(h), config(c) {
    if (config.devices.empty()) throw std::invalid_argument("pipelined: no device");
    const CurrentDevice restore;  // set-up visits every device
    check_args({M, N, K, alpha, host.A, host.lda, host.B, host.ldb, beta, host.C, host.ldc});
    if (M == 0 || N == 0) return;
    CUDA_CHECK(cudaSetDevice(config.devices.front()));
    std::size_t budget = config.budget_bytes;
    if (budget == 0) {
      std::size_t free_bytes = 0, total = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
      budget = free_bytes / 10 * 9;
    }
    PlanInput in = plan_input(budget);
    plan = pipelined::plan(in);
    set_up();
    if (config.tflops <= 0) {  // the rule's rate from the variant itself on one tile, then plan again
      in.tflops = measure_rate(*work.front());
      const Plan again = pipelined::plan(in);
      if (again.mt != plan.mt || again.nt != plan.nt) {
        plan = again;
        work.clear();
        set_up();
      }
    }
  }

  void set_up() {
    const int devices = static_cast<int>(config.devices.size());
    const PlanInput in = plan_input(0);  // the schedule reads the shape and beta only
    for (int d = 0; d < devices; ++d) {
      CUDA_CHECK(cudaSetDevice(config.devices[d]));
      auto w = std::make_unique<DeviceWork>();
      w->device = config.devices[d];
      const Share sh = share_of(plan.col_panels, devices, d);
      w->first_panel = sh.first;
      w->panels = sh.count;
      w->ctx = std::make_unique<ExecContext>(w->compute.get());
      w->a_block = DeviceBuffer<double>(static_cast<std::size_t>(plan.mt) * K);
      for (int i = 0; i < plan.slots; ++i) {
        w->b.emplace_back(static_cast<std::size_t>(K) * plan.nt);
        w->c.emplace_back(static_cast<std::size_t>(plan.mt) * plan.nt);
      }
      w->ops = schedule(plan, in, w->first_panel, w->panels);
      w->awaited.assign(w->ops.size(), 0);
      for (const Op& op : w->ops)
        for (int dep : op.deps)
          if (dep >= 0 && Op::stream(w->ops[dep].kind) != Op::stream(op.kind)) w->awaited[dep] = 1;
      for (std::size_t i = 0; i < w->ops.size(); ++i) w->done.emplace_back(cudaEventDisableTiming);
      if (!host.pinned) {  // staging rings, used when config.pageable is Stage
        const std::size_t slot = std::max<std::size_t>({std::size_t(32) << 20, std::size_t(8) * plan.mt,
                                                        std::size_t(8) * std::max(K, 1)});
        w->up = std::make_unique<Ring>(slot);
        w->down = std::make_unique<Ring>(slot);
      }
      work.push_back(std::move(w));
    }
  }

  PlanInput plan_input(std::size_t budget) const {
    return {M,           N,           K, beta != 0.0, budget, config.h2d_gbs, config.d2h_gbs,
            config.tflops > 0 ? config.tflops : 20.0, static_cast<int>(config.devices.size()), config.nt,
            config.lead, config.chunks};
  }

  // TFLOP/s of the variant on one tile of the plan (device data of a non-zero byte pattern; untimed setup).
  double measure_rate(DeviceWork& w) {
    CUDA_CHECK(cudaSetDevice(w.device));
    const int rows = plan.mt, cols = std::min(plan.nt, N);
    const cudaStream_t s = w.compute.get();
    CUDA_CHECK(cudaMemsetAsync(w.a_block.data(), 0x3f, w.a_block.bytes(), s));
    CUDA_CHECK(cudaMemsetAsync(w.b[0].data(), 0x3f, w.b[0].bytes(), s));
    const GemmArgs a{rows, cols, K, 1.0, w.a_block.data(), std::max(1, rows), w.b[0].data(), std::max(1, K), 0.0,
                     w.c[0].data(), std::max(1, rows)};
    gemm::run(variant, a, *w.ctx);  // warm-up
    Event start, stop;
    start.record(s);
    gemm::run(variant, a, *w.ctx);
    stop.record(s);
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return std::max(1e-3, flops(rows, cols, K) / (ms * 1e9));
  }

  // rows x cols of column-major doubles (leading dimensions src_ld, dst_ld) as one 2D copy on `s`.
  static void copy_columns(double* dst, int dst_ld, const double* src, int src_ld, int rows, int cols,
                           cudaMemcpyKind kind, cudaStream_t s) {
    CUDA_CHECK(cudaMemcpy2DAsync(dst, 8 * static_cast<std::size_t>(dst_ld), src, 8 * static_cast<std::size_t>(src_ld),
                                 8 * static_cast<std::size_t>(rows), cols, kind, s));
  }

  // Host block (rows x cols at src, leading dimension src_ld) to device (dst, dst_ld) on `s`.
  void to_device(DeviceWork& w, double* dst, int dst_ld, const double* src, int src_ld, int rows, int cols,
                 cudaStream_t s) {
    if (rows == 0 || cols == 0) return;
    if (!staged()) return copy_columns(dst, dst_ld, src, src_ld, rows, cols, cudaMemcpyHostToDevice, s);
    Ring& r = *w.up;
    const int per_slot = r.columns_per_slot(rows);
    for (int c = 0; c < cols; c += per_slot) {
      const int n = std::min(per_slot, cols - c);
      const int slot = r.next++ % Ring::kSlots;
      for (;;) {  // until the slot's previous DMA has left it, serve the returns
        serve_returns(w);
        const cudaError_t q = cudaEventQuery(r.done[slot].get());
        if (q != cudaErrorNotReady) {
          CUDA_CHECK(q);
          break;
        }
        std::this_thread::yield();
      }
      host_copy(r.slots[slot].data(), rows, src + static_cast<std::size_t>(c) * src_ld, src_ld, rows, n);
      copy_columns(dst + static_cast<std::size_t>(c) * dst_ld, dst_ld, r.slots[slot].data(), rows, rows, n,
                   cudaMemcpyHostToDevice, s);
      r.done[slot].record(s);
    }
  }

  // Device tile (rows x cols at src, src_ld) to the host (dst, dst_ld) on `s`; staged pieces reach the host in
  // collect().
  void to_host(DeviceWork& w, double* dst, int dst_ld, const double* src, int src_ld, int rows, int cols,
               cudaStream_t s) {
    if (rows == 0 || cols == 0) return;
    if (!staged()) return copy_columns(dst, dst_ld, src, src_ld, rows, cols, cudaMemcpyDeviceToHost, s);
    Ring& r = *w.down;
    const int per_slot = r.columns_per_slot(rows);
    for (int c = 0; c < cols; c += per_slot) {
      const int n = std::min(per_slot, cols - c);
      const int slot = r.next++ % Ring::kSlots;
      finish_piece(r, slot);  // the slot's earlier piece reaches the host first
      copy_columns(r.slots[slot].data(), rows, src + static_cast<std::size_t>(c) * src_ld, src_ld, rows, n,
                   cudaMemcpyDeviceToHost, s);
      r.done[slot].record(s);
      r.pending[slot] = {dst + static_cast<std::size_t>(c) * dst_ld, dst_ld, rows, n};
    }
  }

  static void finish_piece(Ring& r, int slot) {
    Ring::Pending& p = r.pending[slot];
    if (!p.dst) return;
    CUDA_CHECK(cudaEventSynchronize(r.done[slot].get()));
    host_copy(p.dst, p.ld, r.slots[slot].data(), p.rows, p.rows, p.cols);
    p = {};
  }

  // Copies the staged pieces that have arrived to the host (all of them, waiting, when `all`).
  void collect(DeviceWork& w, bool all) {
    if (!staged()) return;
    Ring& r = *w.down;
    for (int slot = 0; slot < Ring::kSlots; ++slot) {
      if (!r.pending[slot].dst) continue;
      if (!all) {
        const cudaError_t q = cudaEventQuery(r.done[slot].get());
        if (q == cudaErrorNotReady) continue;
        CUDA_CHECK(q);
      }
      finish_piece(r, slot);
    }
  }

  // This device's share: its schedule's ops in order, each on its stream after the ops it waits for. With staged
  // pageable operands the host thread copies through the rings and waits for a ring slot when all are busy; a
  // tile's return is then held (in order) until its slots are free or an op depends on it, and served while the
  // thread waits for a slot of the upload ring, so that neither direction waits for the other's host copies.
  void run_device(DeviceWork& w) {
    CUDA_CHECK(cudaSetDevice(w.device));
    w.t_start.record(w.h2d.get());
    CUDA_CHECK(cudaStreamWaitEvent(w.compute.get(), w.t_start.get(), 0));
    CUDA_CHECK(cudaStreamWaitEvent(w.d2h.get(), w.t_start.get(), 0));
    w.computed = false;
    w.held.clear();
    for (int i = 0; i < static_cast<int>(w.ops.size()); ++i) {
      for (int dep : w.ops[i].deps)
        if (dep >= 0 && w.ops[dep].kind == Op::Return) release_through(w, dep);
      if (staged() && w.ops[i].kind == Op::Return)
        w.held.push_back(i);
      else
        issue(w, i);
      serve_returns(w);
    }
    release_through(w, static_cast<int>(w.ops.size()));
    finish_timeline(w, w.computed);
  }

  void issue(DeviceWork& w, int i) {
    const Op& op = w.ops[i];
    const cudaStream_t streams[3] = {w.h2d.get(), w.compute.get(), w.d2h.get()};
    const cudaStream_t s = streams[Op::stream(op.kind)];
    for (int dep : op.deps)
      if (dep >= 0 && Op::stream(w.ops[dep].kind) != Op::stream(op.kind))
        CUDA_CHECK(cudaStreamWaitEvent(s, w.done[dep].get(), 0));
    double* c_host = host.C + op.r0 + static_cast<std::size_t>(op.c0) * host.ldc;
    double* a_dev = w.a_block.data() + static_cast<std::size_t>(op.k0) * op.rows;
    switch (op.kind) {
      case Op::SendA:
        to_device(w, a_dev, op.rows, host.A + op.r0 + static_cast<std::size_t>(op.k0) * host.lda, host.lda, op.rows,
                  op.k1 - op.k0, s);
        break;
      case Op::SendB:
        to_device(w, w.b[op.slot].data(), std::max(1, K), host.B + static_cast<std::size_t>(op.c0) * host.ldb,
                  host.ldb, K, op.cols, s);
        break;
      case Op::SendC: to_device(w, w.c[op.slot].data(), op.rows, c_host, host.ldc, op.rows, op.cols, s); break;
      case Op::Multiply:
        if (!w.computed) w.t_compute_begin.record(s);
        w.computed = true;
        gemm::run(variant, {op.rows, op.cols, op.k1 - op.k0, alpha, a_dev, op.rows, w.b[op.slot].data() + op.k0,
                            std::max(1, K), op.first ? beta : 1.0, w.c[op.slot].data(), op.rows},
                  *w.ctx);
        break;
      case Op::Return: to_host(w, c_host, host.ldc, w.c[op.slot].data(), op.rows, op.rows, op.cols, s); break;
      // No variant prepares A yet: the product's plans never do (plan_input leaves PlanInput::prepared_* at 0);
      // the rule models such a compute step for kbench pipeline only.
      case Op::Prepare: throw std::logic_error("pipelined: a plan that prepares A reached a product that does not");
    }
    if (w.awaited[i]) w.done[i].record(s);
  }

  // Issues the held returns up to op `last`, in order.
  void release_through(DeviceWork& w, int last) {
    while (!w.held.empty() && w.held.front() <= last) {
      const int j = w.held.front();
      w.held.pop_front();
      issue(w, j);
    }
  }

  // Brings home the staged pieces that have arrived and issues the held returns whose ring slots are free.
  void serve_returns(DeviceWork& w) {
    if (!staged()) return;
    collect(w, false);
    while (!w.held.empty() && ring_free_for(*w.down, w.ops[w.held.front()])) release_through(w, w.held.front());
  }

  // Whether the ring slots a tile's return would take next are free now (their earlier pieces have arrived).
  static bool ring_free_for(const Ring& r, const Op& op) {
    const int per_slot = r.columns_per_slot(op.rows);
    const int pieces = std::min(Ring::kSlots, (op.cols + per_slot - 1) / per_slot);
    for (int j = 0; j < pieces; ++j) {
      const int slot = (r.next + j) % Ring::kSlots;
      if (!r.pending[slot].dst) continue;
      const cudaError_t q = cudaEventQuery(r.done[slot].get());
      if (q == cudaErrorNotReady) return false;
      CUDA_CHECK(q);
    }
    return true;
  }

  // Waits for the three streams, brings the last staged pieces home and reads the timeline's events.
  void finish_timeline(DeviceWork& w, bool computed) {
    w.t_h2d_end.record(w.h2d.get());
    w.t_compute_end.record(w.compute.get());
    w.t_d2h_end.record(w.d2h.get());
    CUDA_CHECK(cudaStreamSynchronize(w.d2h.get()));
    collect(w, true);
    CUDA_CHECK(cudaStreamSynchronize(w.compute.get()));
    CUDA_CHECK(cudaStreamSynchronize(w.h2d.get()));  // its last event, read for the timeline
    w.h2d_ms = elapsed(w.t_start, w.t_h2d_end);
    w.compute_begin_ms = computed ? elapsed(w.t_start, w.t_compute_begin) : 0;
    w.compute_ms = elapsed(w.t_start, w.t_compute_end);
    w.d2h_ms = elapsed(w.t_start, w.t_d2h_end);
  }

  static double elapsed(const Event& a, const Event& b) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
    return ms;
  }

  // Page-locks the caller's pageable arrays for one run (Pageable::Register), the cost inside the run: whole
  // pages (an array's first and last pages may hold other data of its allocation), overlapping ranges merged.
  struct Registration {
    std::vector<void*> ranges;
    void add(const HostOperands& h, int N, int K) {
      std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
      const std::pair<const double*, std::size_t> arrays[] = {{h.A, static_cast<std::size_t>(h.lda) * K},
                                                               {h.B, static_cast<std::size_t>(h.ldb) * N},
                                                               {h.C, static_cast<std::size_t>(h.ldc) * N}};
      constexpr std::uintptr_t page = 4096;
      for (const auto& [p, count] : arrays)
        if (p && count)
          spans.push_back({reinterpret_cast<std::uintptr_t>(p) / page * page,
                           (reinterpret_cast<std::uintptr_t>(p + count) + page - 1) / page * page});
      std::sort(spans.begin(), spans.end());
      for (std::size_t i = 0; i < spans.size(); ++i) {
        auto [begin, end] = spans[i];
        while (i + 1 < spans.size() && spans[i + 1].first <= end) end = std::max(end, spans[++i].second);
        CUDA_CHECK(cudaHostRegister(reinterpret_cast<void*>(begin), end - begin, cudaHostRegisterPortable));
        ranges.push_back(reinterpret_cast<void*>(begin));
      }
    }
    ~Registration() {
      for (void* p : ranges) CUDA_CHECK_NOEXCEPT(cudaHostUnregister(p));
    }
  };

  bool staged() const { return !host.pinned && config.pageable == Pageable::Stage; }

  void run() {
    if (M == 0 || N == 0) return;
    const CurrentDevice restore;
    Registration registered;
    if (!host.pinned && config.pageable == Pageable::Register) registered.add(host, N, K);
    if (work.size() == 1) {
      run_device(*work.front());
      return;
    }
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(work.size());
    for (std::size_t d = 0; d < work.size(); ++d)
      threads.emplace_back([&, d] {
        try {
          run_device(*work[d]);
        } catch (...) {
          errors[d] = std::current_exception();
        }
      });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }

  std::string timeline() const {
    std::string out;
    char b[256];
    for (const auto& w : work) {
      std::snprintf(b, sizeof b, "device %d: H2D done at %.3g ms, products from %.3g to %.3g ms, D2H done at %.3g ms%s",
                    w->device, w->h2d_ms, w->compute_begin_ms, w->compute_ms, w->d2h_ms,
                    &w == &work.back() ? "" : "; ");
      out += b;
    }
    return out;
  }
};

Product::Product(const GemmVariant& v, int M, int N, int K, double alpha, double beta, const HostOperands& host,
                 const Config& config)
    : impl_(std::make_unique<Impl>(v, M, N, K, alpha, beta, host, config)) {}
Product::~Product() = default;
void Product::run() { impl_->run(); }
void Product::set_pageable(Pageable how) { impl_->config.pageable = how; }
const Plan& Product::plan() const { return impl_->plan; }
std::string Product::timeline() const { return impl_->timeline(); }

}  // namespace ks::gemm::pipelined

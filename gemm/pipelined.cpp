// The pipelined launch mode (gemm/pipelined.hpp): the tile rule, and the product's streams, events and staging.
#include "gemm/pipelined.hpp"

#include "common/resources.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
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

// The largest block of rows of A (M, or a multiple of 64) that fits `avail` bytes beside two panels of B and two
// tiles of C of nt columns; 0 when not even 64 rows (or M, if smaller) fit.
long long rows_that_fit(double avail, long long M, long long K, long long nt) {
  auto bytes = [&](long long mt) { return kBytes * (mt * K + 2 * K * nt + 2 * mt * nt); };
  if (bytes(M) <= avail) return M;
  const long long mt = static_cast<long long>((avail - 2 * kBytes * K * nt) / (kBytes * (K + 2 * nt))) / 64 * 64;
  return mt >= 64 && mt < M ? mt : 0;
}

}  // namespace

std::string Plan::str() const {
  char b[320];
  std::snprintf(b, sizeof b,
                "mt %d, nt %d: %d row block%s x %d panel%s, %s on each device; predicted %.3g ms "
                "(link %.3g, products %.3g, fill %.3g, tail %.3g)",
                mt, nt, row_blocks, row_blocks == 1 ? "" : "s", col_panels, col_panels == 1 ? "" : "s",
                mib(static_cast<double>(device_bytes)).c_str(), predicted_ms, link_ms, compute_ms, fill_ms, tail_ms);
  return b;
}

Plan plan(const PlanInput& in) {
  if (in.M < 0 || in.N < 0 || in.K < 0 || in.h2d_gbs <= 0 || in.d2h_gbs <= 0 || in.tflops <= 0 || in.devices < 1)
    throw std::invalid_argument("pipelined plan: M, N, K >= 0, link bandwidths, rate and devices > 0 needed");
  const long long M = std::max(1, in.M), K = std::max(1, in.K), d = in.devices;
  const long long n_dev = (std::max(1, in.N) + d - 1) / d;  // columns of C per device
  const double avail = static_cast<double>(in.budget_bytes) - static_cast<double>(kDeviceOverheadBytes);
  std::vector<long long> widths;
  for (long long w = 64; w < n_dev && w <= 8192; w *= 2) widths.push_back(w);
  if (n_dev <= 8192) widths.push_back(n_dev);
  Plan best;
  for (long long nt : widths) {
    const long long mt = avail > 0 ? rows_that_fit(avail, M, K, nt) : 0;
    if (mt == 0) continue;
    Plan p;
    p.mt = static_cast<int>(mt);
    p.nt = static_cast<int>(nt);
    p.row_blocks = static_cast<int>((M + mt - 1) / mt);
    p.col_panels = static_cast<int>((std::max(1, in.N) + nt - 1) / nt);
    p.device_bytes = static_cast<std::size_t>(kBytes * (mt * K + 2 * K * nt + 2 * mt * nt)) + kDeviceOverheadBytes;
    const double a = kBytes * M * K, b = kBytes * K * n_dev, c = kBytes * M * n_dev;
    p.h2d_bytes = a + p.row_blocks * b + (in.beta_nonzero ? c : 0);
    const double h2d = in.h2d_gbs * 1e6, d2h = in.d2h_gbs * 1e6;  // bytes per ms
    const double rate = in.tflops * 1e9 * static_cast<double>(nt) / static_cast<double>(nt + 96);  // flop per ms
    const double last_tile_back = kBytes * mt * nt / d2h;
    p.a_chunks = static_cast<int>(std::clamp(std::ceil(kBytes * mt * K / kAChunkBytes), 1.0,
                                             static_cast<double>(std::min<long long>(kMaxAChunks, K))));
    p.link_ms = p.h2d_bytes / h2d;
    p.compute_ms = 2.0 * M * n_dev * K / rate;
    p.fill_ms = kBytes * (static_cast<double>(mt) * K / p.a_chunks + K * nt) / h2d;
    p.tail_ms = 2.0 * mt * nt * K / rate + last_tile_back;
    p.predicted_ms = std::max(p.link_ms + p.tail_ms, p.fill_ms + p.compute_ms + last_tile_back);
    if (best.mt == 0 || p.predicted_ms < best.predicted_ms) best = p;
  }
  if (best.mt == 0)
    throw std::invalid_argument(
        "pipelined: a device-memory budget of " + mib(static_cast<double>(in.budget_bytes)) + " holds not even one " +
        std::to_string(std::min<long long>(64, M)) + "-row block of A with two 64-column panels of B and tiles of C (K = " +
        std::to_string(K) + ") beside the " + mib(kDeviceOverheadBytes) + " each device keeps for workspaces");
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
  DeviceBuffer<double> a_block, b[2], c[2];
  Event a_chunk[kMaxAChunks], block_done{cudaEventDisableTiming};
  Event b_ready[2], b_free[2], c_ready[2], c_done[2], c_free[2];
  Event t_start, t_h2d_end, t_compute_begin, t_compute_end, t_d2h_end;  // timing: the timeline
  std::unique_ptr<Ring> up, down;  // staging for pageable operands
  double h2d_ms = 0, compute_ms = 0, compute_begin_ms = 0, d2h_ms = 0;

  DeviceWork() {
    for (auto* set : {b_ready, b_free, c_ready, c_done, c_free})
      for (int i = 0; i < 2; ++i) set[i] = Event(cudaEventDisableTiming);
    for (Event& e : a_chunk) e = Event(cudaEventDisableTiming);
  }
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
    PlanInput in{M, N, K, beta != 0.0, budget, config.h2d_gbs, config.d2h_gbs,
                 config.tflops > 0 ? config.tflops : 20.0, static_cast<int>(config.devices.size())};
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
    for (int d = 0; d < devices; ++d) {
      CUDA_CHECK(cudaSetDevice(config.devices[d]));
      auto w = std::make_unique<DeviceWork>();
      w->device = config.devices[d];
      w->first_panel = plan.col_panels * d / devices;
      w->panels = plan.col_panels * (d + 1) / devices - w->first_panel;
      w->ctx = std::make_unique<ExecContext>(w->compute.get());
      w->a_block = DeviceBuffer<double>(static_cast<std::size_t>(plan.mt) * K);
      for (int i = 0; i < 2; ++i) {
        w->b[i] = DeviceBuffer<double>(static_cast<std::size_t>(K) * plan.nt);
        w->c[i] = DeviceBuffer<double>(static_cast<std::size_t>(plan.mt) * plan.nt);
      }
      if (!host.pinned) {  // staging rings, used when config.pageable is Stage
        const std::size_t slot = std::max<std::size_t>({std::size_t(32) << 20, std::size_t(8) * plan.mt,
                                                        std::size_t(8) * std::max(K, 1)});
        w->up = std::make_unique<Ring>(slot);
        w->down = std::make_unique<Ring>(slot);
      }
      work.push_back(std::move(w));
    }
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
      collect(w, false);                          // return whatever has come back meanwhile
      CUDA_CHECK(cudaEventSynchronize(r.done[slot].get()));  // its previous DMA has left the slot
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

  // A block of A's rows, and how it crosses: in chunks of whole columns (ranges of k: wide copies).
  struct Block {
    int r0, rows, chunks, K;
    int chunk_col(int q) const { return static_cast<int>(static_cast<long long>(K) * q / chunks); }
  };

  // This device's share: its panels of C, block by block of A's rows.
  void run_device(DeviceWork& w) {
    CUDA_CHECK(cudaSetDevice(w.device));
    w.t_start.record(w.h2d.get());
    CUDA_CHECK(cudaStreamWaitEvent(w.compute.get(), w.t_start.get(), 0));
    CUDA_CHECK(cudaStreamWaitEvent(w.d2h.get(), w.t_start.get(), 0));
    int tile = 0;
    for (int r0 = 0; r0 < M; r0 += plan.mt) {
      const Block b{r0, std::min(plan.mt, M - r0), std::min(plan.a_chunks, std::max(1, K)), K};
      if (r0 > 0) CUDA_CHECK(cudaStreamWaitEvent(w.h2d.get(), w.block_done.get(), 0));  // A's buffer is free again
      // The block's first chunk of A now, the others after the first panel of B, so that the first products wait
      // for one chunk and one panel, not for all of A.
      send_a_chunks(w, b, 0, 1);
      for (int p = w.first_panel; p < w.first_panel + w.panels; ++p, ++tile) run_panel(w, b, p, tile);
      w.block_done.record(w.compute.get());
    }
    finish_timeline(w, tile > 0);
  }

  // Chunks [from, to) of the block's A, each with the event its products wait for.
  void send_a_chunks(DeviceWork& w, const Block& b, int from, int to) {
    for (int q = from; q < to; ++q) {
      const int k0 = b.chunk_col(q), k1 = b.chunk_col(q + 1);
      to_device(w, w.a_block.data() + static_cast<std::size_t>(k0) * b.rows, b.rows,
                host.A + b.r0 + static_cast<std::size_t>(k0) * host.lda, host.lda, b.rows, k1 - k0, w.h2d.get());
      w.a_chunk[q].record(w.h2d.get());
    }
  }

  // Tile (block b, panel p) of C: B's panel and C's tile up, the products, C's tile down; buffers alternate.
  void run_panel(DeviceWork& w, const Block& b, int p, int tile) {
    const cudaStream_t h2d = w.h2d.get(), comp = w.compute.get(), d2h = w.d2h.get();
    const bool first_panel = p == w.first_panel;
    const int c0 = p * plan.nt, cols = std::min(plan.nt, N - c0), bs = tile % 2, cs = tile % 2;
    CUDA_CHECK(cudaStreamWaitEvent(h2d, w.b_free[bs].get(), 0));
    to_device(w, w.b[bs].data(), std::max(1, K), host.B + static_cast<std::size_t>(c0) * host.ldb, host.ldb, K, cols, h2d);
    w.b_ready[bs].record(h2d);
    double* c_host = host.C + b.r0 + static_cast<std::size_t>(c0) * host.ldc;
    if (beta != 0.0) {
      CUDA_CHECK(cudaStreamWaitEvent(h2d, w.c_free[cs].get(), 0));
      to_device(w, w.c[cs].data(), b.rows, c_host, host.ldc, b.rows, cols, h2d);
      w.c_ready[cs].record(h2d);
    }
    if (first_panel) send_a_chunks(w, b, 1, b.chunks);
    for (const Event* e : {&w.b_ready[bs], beta != 0.0 ? &w.c_ready[cs] : &w.c_free[cs]})
      CUDA_CHECK(cudaStreamWaitEvent(comp, e->get(), 0));
    if (tile == 0) w.t_compute_begin.record(comp);
    // The block's first panel multiplies chunk by chunk as A arrives, accumulating over the chunks' ranges of k
    // (beta on the first, then 1); the others all of k at once.
    const int pieces = first_panel ? b.chunks : 1;
    for (int q = 0; q < pieces; ++q) {
      const int k0 = first_panel ? b.chunk_col(q) : 0, k1 = first_panel ? b.chunk_col(q + 1) : K;
      CUDA_CHECK(cudaStreamWaitEvent(comp, w.a_chunk[first_panel ? q : b.chunks - 1].get(), 0));
      gemm::run(variant, {b.rows, cols, k1 - k0, alpha, w.a_block.data() + static_cast<std::size_t>(k0) * b.rows, b.rows,
                          w.b[bs].data() + k0, std::max(1, K), q == 0 ? beta : 1.0, w.c[cs].data(), b.rows},
                *w.ctx);
    }
    w.b_free[bs].record(comp);
    w.c_done[cs].record(comp);
    CUDA_CHECK(cudaStreamWaitEvent(d2h, w.c_done[cs].get(), 0));
    to_host(w, c_host, host.ldc, w.c[cs].data(), b.rows, b.rows, cols, d2h);
    w.c_free[cs].record(d2h);
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

// The pipelined launch mode (gemm/host/pipelined.hpp): the product's streams, events and staging, walking the
// schedule of the tile rule (gemm/host/pipelined_plan.hpp).
#include "gemm/host/pipelined.hpp"

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

// ---- the product ----

namespace {

// Host copy of `cols` columns of `rows` doubles between two column-major layouts, spread over the host's cores.
void host_copy(double* dst, int dst_ld, const double* src, int src_ld, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int c = 0; c < cols; ++c)
    std::memcpy(dst + static_cast<std::size_t>(c) * dst_ld, src + static_cast<std::size_t>(c) * src_ld,
                static_cast<std::size_t>(rows) * 8);
}

}  // namespace

// Named, not anonymous: Product::Impl holds them, and a class of external linkage that holds a type of internal
// linkage is an error under -Werror where the file is compiled inside a unity source (GCC's -Wsubobject-linkage;
// cmake/KsCompileOptions.cmake, KS_UNITY_HOST).
namespace staging {

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

}  // namespace staging
using staging::DeviceWork;
using staging::Ring;

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
    check_args(args(host.A, host.lda, host.B, host.ldb, M, N, K, alpha, beta, host.C, host.ldc));
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
        // A column of any copy: mt (op(A) N, C), K (op(A) T, op(B) N) or nt (op(B) T) doubles.
        const std::size_t slot = std::max<std::size_t>({std::size_t(32) << 20, std::size_t(8) * plan.mt,
                                                        std::size_t(8) * std::max(K, 1), std::size_t(8) * plan.nt});
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
    const GemmArgs a = args(w.a_block.data(), a_ld(rows), w.b[0].data(), b_ld(cols), rows, cols, K, 1.0, 0.0,
                            w.c[0].data(), std::max(1, rows));
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

  // The product's arguments with the product's ops.
  GemmArgs args(const double* a, int lda, const double* b, int ldb, int m, int n, int k, double al, double be,
                double* c, int ldc) const {
    GemmArgs g{m, n, k, al, a, lda, b, ldb, be, c, ldc};
    g.transa = host.transa;
    g.transb = host.transb;
    return g;
  }
  // On the device a block of `rows` rows of op(A) is stored rows x K (op N) or K x rows (op T); a panel of `cols`
  // columns of op(B) K x cols or cols x K. Their leading dimensions:
  int a_ld(int rows) const { return host.transa == gemm::Op::N ? std::max(1, rows) : std::max(1, K); }
  int b_ld(int cols) const { return host.transb == gemm::Op::N ? std::max(1, K) : std::max(1, cols); }

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
    // Rows r0.. and k range [k0, k1) of op(A); columns c0.. of op(B) (all of K), where they are stored.
    const bool ta = host.transa == gemm::Op::T, tb = host.transb == gemm::Op::T;
    const int lda_dev = a_ld(op.rows), ldb_dev = b_ld(op.cols);
    double* a_dev = w.a_block.data() + (ta ? op.k0 : static_cast<std::size_t>(op.k0) * op.rows);
    const double* a_host = host.A + (ta ? op.k0 + static_cast<std::size_t>(op.r0) * host.lda
                                        : op.r0 + static_cast<std::size_t>(op.k0) * host.lda);
    const double* b_dev = w.b[op.slot].data() + (tb ? static_cast<std::size_t>(op.k0) * ldb_dev : op.k0);
    switch (op.kind) {
      case Op::SendA:
        if (ta)
          to_device(w, a_dev, lda_dev, a_host, host.lda, op.k1 - op.k0, op.rows, s);
        else
          to_device(w, a_dev, lda_dev, a_host, host.lda, op.rows, op.k1 - op.k0, s);
        break;
      case Op::SendB:
        if (tb)
          to_device(w, w.b[op.slot].data(), ldb_dev, host.B + op.c0, host.ldb, op.cols, K, s);
        else
          to_device(w, w.b[op.slot].data(), ldb_dev, host.B + static_cast<std::size_t>(op.c0) * host.ldb, host.ldb, K,
                    op.cols, s);
        break;
      case Op::SendC: to_device(w, w.c[op.slot].data(), op.rows, c_host, host.ldc, op.rows, op.cols, s); break;
      case Op::Multiply:
        if (!w.computed) w.t_compute_begin.record(s);
        w.computed = true;
        gemm::run(variant, args(a_dev, lda_dev, b_dev, ldb_dev, op.rows, op.cols, op.k1 - op.k0, alpha,
                                 op.first ? beta : 1.0, w.c[op.slot].data(), op.rows),
                  *w.ctx);
        break;
      case Op::Return: to_host(w, c_host, host.ldc, w.c[op.slot].data(), op.rows, op.rows, op.cols, s); break;
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
    void add(const HostOperands& h, int M, int N, int K) {
      std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
      const int a_cols = h.transa == gemm::Op::N ? K : M, b_cols = h.transb == gemm::Op::N ? N : K;
      const std::pair<const double*, std::size_t> arrays[] = {{h.A, static_cast<std::size_t>(h.lda) * a_cols},
                                                               {h.B, static_cast<std::size_t>(h.ldb) * b_cols},
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
    if (!host.pinned && config.pageable == Pageable::Register) registered.add(host, M, N, K);
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

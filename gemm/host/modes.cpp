#include "gemm/host/modes.hpp"

#include "common/resources.hpp"

#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ks::gemm {

const std::vector<Mode>& all_modes() {
  static const std::vector<Mode> m{Mode::Device, Mode::Pageable, Mode::Pinned, Mode::Graph, Mode::Mapped,
                                   Mode::PinnedPipelined, Mode::PageablePipelined};
  return m;
}

bool is_pipelined(Mode m) { return m == Mode::PinnedPipelined || m == Mode::PageablePipelined; }
bool is_host_mode(Mode m) { return m != Mode::Device && m != Mode::Mapped; }

std::string to_string(Mode m) {
  switch (m) {
    case Mode::Device: return "device";
    case Mode::Pageable: return "pageable";
    case Mode::Pinned: return "pinned";
    case Mode::Graph: return "graph";
    case Mode::Mapped: return "mapped";
    case Mode::PinnedPipelined: return "pinned_pipelined";
    case Mode::PageablePipelined: return "pageable_pipelined";
  }
  return "?";
}

Mode parse_mode(const std::string& s) {
  for (Mode m : all_modes())
    if (to_string(m) == s) return m;
  throw std::invalid_argument("unknown mode '" + s +
                              "' (valid: device, pageable, pinned, graph, mapped, pinned_pipelined, pageable_pipelined)");
}

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::size_t count(const Eigen::MatrixXd& m) { return static_cast<std::size_t>(m.size()); }

// memcpy and cudaMemcpyAsync, skipped for an empty matrix (whose buffer pointer is null).
void copy_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void copy_async(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  if (bytes) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
}
}  // namespace

struct Runner::Impl {
  const GemmVariant* variant;  // null when cuBLASXt runs instead
  CublasXt* xt;
  Mode mode;
  const GemmProblem& p;
  ExecContext& ctx;
  // Device-resident operands (every mode but Mapped); Device mode's extra copies for cold-L2 rotation.
  DeviceBuffer<double> dA, dB, dC;
  struct Copy {
    DeviceBuffer<double> A, B, C;
  };
  std::vector<Copy> extra;
  // Host side for Pinned and Graph.
  PinnedBuffer<double> hA, hB, hC;
  // Host side for Pageable: C lives in an Eigen matrix.
  Eigen::MatrixXd pageableC;
  // Mapped mode.
  MappedBuffer<double> mA, mB, mC;
  Graph graph;
  GraphExec exec;
  double setup_ms = 0;
  // The pipelined modes.
  std::unique_ptr<pipelined::Product> product;
  std::string pageable_method;
  double staged_ms = 0, registered_ms = 0;

  // Set up, then C as reset_output() leaves it: the graph's capture and the pageable way's choice run the
  // sequence, which computes C in place, and device or mapped C starts unwritten.
  Impl(const GemmVariant* v, CublasXt* x, Mode m, const GemmProblem& prob, ExecContext& c,
       const PipelineOptions& pipeline)
      : variant(v), xt(x), mode(m), p(prob), ctx(c) {
    if (xt) {
      if (mode != Mode::Pinned && mode != Mode::Pageable)
        throw std::invalid_argument("cuBLASXt runs in the pinned and pageable modes only, not " + to_string(mode));
      set_up_host_c();
    } else {
      set_up(pipeline);
    }
    reset_output();
  }

  // The host arrays the mode keeps: pinned copies of A and B and a pinned C, or a pageable C beside the problem's
  // A and B.
  void set_up_host_c() {
    if (mode == Mode::Pageable || mode == Mode::PageablePipelined) {
      pageableC.resize(p.shape.ldc, p.shape.N);
      return;
    }
    hA = PinnedBuffer<double>(count(p.A));
    hB = PinnedBuffer<double>(count(p.B));
    hC = PinnedBuffer<double>(p.c_count());
    copy_host(hA.data(), p.A.data(), hA.bytes());
    copy_host(hB.data(), p.B.data(), hB.bytes());
  }
  const double* host_a() const { return hA.data() ? hA.data() : p.A.data(); }
  const double* host_b() const { return hB.data() ? hB.data() : p.B.data(); }

  void set_up(const PipelineOptions& pipeline) {
    const std::size_t a = count(p.A), b = count(p.B), cc = p.c_count();
    if (is_pipelined(mode)) {
      set_up_pipelined(pipeline);
      return;
    }
    if (mode == Mode::Mapped) {
      mA = MappedBuffer<double>(a);
      mB = MappedBuffer<double>(b);
      mC = MappedBuffer<double>(cc);
      copy_host(mA.data(), p.A.data(), a * sizeof(double));
      copy_host(mB.data(), p.B.data(), b * sizeof(double));
      return;
    }
    dA = DeviceBuffer<double>(a);
    dB = DeviceBuffer<double>(b);
    dC = DeviceBuffer<double>(cc);
    if (mode == Mode::Device) {
      upload_now(dA.data(), p.A.data(), a * sizeof(double));
      upload_now(dB.data(), p.B.data(), b * sizeof(double));
    } else {  // Pageable, Pinned, Graph
      set_up_host_c();
      reset_host_c();
    }
    if (mode == Mode::Graph) capture();
  }

  void set_up_pipelined(const PipelineOptions& pipeline) {
    const GemmShape& s = p.shape;
    set_up_host_c();
    const bool pinned = mode == Mode::PinnedPipelined;
    const pipelined::HostOperands h{host_a(), s.lda, host_b(), s.ldb, host_c(), s.ldc, pinned, s.transa, s.transb};
    reset_host_c();
    pipelined::Config config = pipeline.config;
    if (pipeline.pageable_method) config.pageable = *pipeline.pageable_method;
    product = std::make_unique<pipelined::Product>(*variant, s.M, s.N, s.K, p.alpha, p.beta, h, config);
    if (pinned) return;
    if (!pipeline.pageable_method) {  // one run each way, registration's cost included; keep the faster
      const pipelined::Pageable ways[] = {pipelined::Pageable::Stage, pipelined::Pageable::Register};
      std::vector<double> ms;
      const int best = fastest_once(2, [&](int i) {
        product->set_pageable(ways[i]);
        product->run();
      }, &ms);
      staged_ms = ms[0];
      registered_ms = ms[1];
      config.pageable = ways[best];
      product->set_pageable(config.pageable);
    }
    pageable_method = config.pageable == pipelined::Pageable::Stage ? "stage" : "register";
  }

  GemmArgs args(const double* A, const double* B, double* C) const { return p.args(A, B, C); }

  // H2D(A), H2D(B), [H2D(C)], kernel, D2H(C) from the given host pointers.
  void enqueue_copy_sequence(const double* A, const double* B, double* C) {
    const cudaStream_t s = ctx.stream();
    copy_async(dA.data(), A, dA.bytes(), cudaMemcpyHostToDevice, s);
    copy_async(dB.data(), B, dB.bytes(), cudaMemcpyHostToDevice, s);
    if (p.beta != 0.0) copy_async(dC.data(), C, dC.bytes(), cudaMemcpyHostToDevice, s);
    gemm::run(*variant, args(dA.data(), dB.data(), dC.data()), ctx);
    copy_async(C, dC.data(), dC.bytes(), cudaMemcpyDeviceToHost, s);
  }

  void capture() {
    // The whole sequence once outside the capture first: a variant's lazily created resources (the cuBLAS
    // handle and its workspace) cannot be created while the stream is capturing. It runs on the real operands
    // (uploaded by the sequence itself), so no kernel reads uninitialized device memory; its C is discarded.
    // Twice: a launch whose scratch requests grew the context's arena by several blocks merges them at the
    // start of the next launch, which waits for the stream, and no wait is allowed while capturing.
    for (int warm = 0; warm < 2; ++warm) enqueue_copy_sequence(hA.data(), hB.data(), hC.data());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    const auto t0 = std::chrono::steady_clock::now();
    cudaGraph_t g = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(ctx.stream(), cudaStreamCaptureModeThreadLocal));
    try {
      enqueue_copy_sequence(hA.data(), hB.data(), hC.data());
    } catch (...) {
      (void)cudaStreamEndCapture(ctx.stream(), &g);
      if (g) (void)cudaGraphDestroy(g);
      (void)cudaGetLastError();
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(ctx.stream(), &g));
    graph = Graph(g);
    exec = GraphExec(graph);
    setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  // Host memory that receives C at the end of the sequence, and its element count.
  double* host_c() {
    switch (mode) {
      case Mode::Pageable:
      case Mode::PageablePipelined: return pageableC.data();
      case Mode::Pinned:
      case Mode::PinnedPipelined:
      case Mode::Graph: return hC.data();
      case Mode::Mapped: return mC.data();
      case Mode::Device: break;
    }
    return nullptr;
  }

  // C's host copy back to its start: C0 when beta != 0, else NaN everywhere (poisoned).
  void reset_host_c() {
    double* h = host_c();
    if (!h) return;
    if (p.beta != 0.0) {
      copy_host(h, p.C0.data(), p.c_count() * sizeof(double));
      return;
    }
    const long long n = static_cast<long long>(p.c_count());
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; ++i) h[i] = kNaN;
  }

  void reset_output() {
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    // Device mode starts from C's initial value in device memory; the copy modes upload it themselves, so their
    // device C starts poisoned (all bytes 0xff: NaN). On the context's stream, waited for: the suite's streams are
    // non-blocking, so a memset on the default stream could land after the sequence's own upload of C.
    if (mode == Mode::Device && p.beta != 0.0) {
      upload_now(dC.data(), p.C0.data(), dC.bytes());
    } else if (mode != Mode::Mapped && !is_pipelined(mode) && dC.bytes()) {
      CUDA_CHECK(cudaMemsetAsync(dC.data(), 0xff, dC.bytes(), ctx.stream()));
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    }
    reset_host_c();
  }

  void run(int copy) {
#if !defined(KS_HIP)
    if (xt) {
      xt->run(args(host_a(), host_b(), host_c()));
      return;
    }
#endif
    switch (mode) {
      case Mode::Device:
        if (copy > 0) {
          const Copy& c = extra.at(static_cast<std::size_t>(copy - 1));
          gemm::run(*variant, args(c.A.data(), c.B.data(), c.C.data()), ctx);
        } else {
          gemm::run(*variant, args(dA.data(), dB.data(), dC.data()), ctx);
        }
        break;
      case Mode::Pageable:
      case Mode::Pinned: enqueue_copy_sequence(host_a(), host_b(), host_c()); break;
      case Mode::Graph: exec.launch(ctx.stream()); break;
      case Mode::Mapped:
        gemm::run(*variant, args(mA.device_data(), mB.device_data(), mC.device_data()), ctx);
        break;
      case Mode::PinnedPipelined:
      case Mode::PageablePipelined: product->run(); break;
    }
  }

  int make_copies(int wanted) {
    if (mode != Mode::Device) return 1;
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t bytes = dA.bytes() + dB.bytes() + dC.bytes();
    std::size_t room = bytes ? free_bytes / 4 / bytes : 0;
    auto clone = [&](const DeviceBuffer<double>& src) {
      DeviceBuffer<double> dst(src.size());
      if (src.bytes())
        CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, ctx.stream()));
      return dst;
    };
    while (static_cast<int>(extra.size()) + 1 < wanted && room-- > 0) extra.push_back({clone(dA), clone(dB), clone(dC)});
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    return static_cast<int>(extra.size()) + 1;
  }

  const double* host_result() {
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    return host_c();
  }

  Eigen::MatrixXd result() {
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    Eigen::MatrixXd c(p.shape.ldc, p.shape.N);
    if (mode == Mode::Device) {
      if (dC.bytes()) CUDA_CHECK(cudaMemcpy(c.data(), dC.data(), dC.bytes(), cudaMemcpyDeviceToHost));
    } else {
      copy_host(c.data(), host_c(), count(c) * sizeof(double));
    }
    return c;
  }
};

Runner::Runner(const GemmVariant& variant, Mode mode, const GemmProblem& problem, ExecContext& ctx,
               const PipelineOptions& pipeline)
    : impl_(std::make_unique<Impl>(&variant, nullptr, mode, problem, ctx, pipeline)) {}
#if !defined(KS_HIP)
Runner::Runner(CublasXt& xt, Mode mode, const GemmProblem& problem, ExecContext& ctx)
    : impl_(std::make_unique<Impl>(nullptr, &xt, mode, problem, ctx, PipelineOptions{})) {}
#endif
Runner::~Runner() = default;
void Runner::reset_output() { impl_->reset_output(); }
void Runner::run(int copy) { impl_->run(copy); }
int Runner::make_copies(int wanted) { return impl_->make_copies(wanted); }

StreamWork Runner::work(const L2Flusher* flusher) {
  StreamWork w;
  w.run = [this](int copy) { run(copy); };
  w.blocks_host = impl_->xt || impl_->mode == Mode::Pageable || is_pipelined(impl_->mode);
  if (flusher) {
    w.flush = [this, flusher] { flusher->flush(impl_->ctx.stream()); };
    w.make_copies = [this](int wanted) { return make_copies(wanted); };
    w.bytes_per_copy = impl_->dA.bytes() + impl_->dB.bytes() + (impl_->p.beta != 0.0 ? impl_->dC.bytes() : 0);
  }
  return w;
}
Eigen::MatrixXd Runner::result() { return impl_->result(); }
const double* Runner::host_result() { return impl_->host_result(); }
double Runner::setup_ms() const { return impl_->setup_ms; }
const pipelined::Product* Runner::product() const { return impl_->product.get(); }
std::string Runner::pageable_method() const { return impl_->pageable_method; }
double Runner::staged_ms() const { return impl_->staged_ms; }
double Runner::registered_ms() const { return impl_->registered_ms; }

}  // namespace ks::gemm

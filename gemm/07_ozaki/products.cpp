// ozaki's INT8 products through cuBLASLt, the algorithm timed per shape (products.hpp).
#include "gemm/07_ozaki/products.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ks::gemm::ozaki {
namespace {

constexpr int kCandidates = 8;

struct ProductPlan {
  bool batched = true;
  cublasLtMatmulAlgo_t algo{};
  std::string what;  // for the notes
};

// The descriptors of `batch` planes of the products (batch 1: one plane), w.ldp rows each (M rounded up to 4:
// with M not a multiple of 4 cuBLASLt offered 4 INT8 algorithms on an H100, the fastest 4x slower than at the
// rounded M; docs/gemm-notes.md, step 34).
class LtProducts {
 public:
  LtProducts(int N, const Workspace& w, int batch) {
    try {
      CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32I, CUDA_R_32I));
      const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
      layout(a_, CUDA_R_8I, w.Kp, w.ldp, w.Kp, batch, static_cast<long long>(w.a_stride));
      layout(b_, CUDA_R_8I, w.Kp, N, w.Kp, batch, static_cast<long long>(w.b_stride));
      layout(c_, CUDA_R_32I, w.ldp, N, w.ldp, batch, static_cast<long long>(w.p_stride / 4));
    } catch (...) {
      release();
      throw;
    }
  }
  LtProducts(const LtProducts&) = delete;
  LtProducts& operator=(const LtProducts&) = delete;
  ~LtProducts() { release(); }
  std::vector<cublasLtMatmulAlgo_t> candidates(cublasLtHandle_t h, std::size_t workspace, int most) const {
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t found[kCandidates] = {};
    int got = 0;
    const cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                   &workspace, sizeof workspace);
    const cublasStatus_t hs =
        st == CUBLAS_STATUS_SUCCESS
            ? cublasLtMatmulAlgoGetHeuristic(h, op_, a_, b_, c_, c_, pref, std::min(most, kCandidates), found, &got)
            : st;
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_CHECK(hs);
    std::vector<cublasLtMatmulAlgo_t> algos;
    for (int i = 0; i < got; ++i)
      if (found[i].state == CUBLAS_STATUS_SUCCESS) algos.push_back(found[i].algo);
    return algos;
  }
  void run(cublasLtHandle_t h, const cublasLtMatmulAlgo_t& algo, const signed char* a8, const signed char* b8,
           int* prod, std::pair<void*, std::size_t> ws, cudaStream_t s) const {
    const int one = 1, zero = 0;
    CUBLAS_CHECK(cublasLtMatmul(h, op_, &one, a8, a_, b8, b_, &zero, prod, c_, prod, c_, &algo, ws.first, ws.second, s));
  }

 private:
  static void layout(cublasLtMatrixLayout_t& l, cudaDataType_t type, int rows, int cols, int ld, int batch,
                     long long stride) {
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  void release() noexcept {
    for (cublasLtMatrixLayout_t l : {a_, b_, c_})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
};

using PlanKey = std::tuple<int, int, int, int, int>;  // device, N, Kp, ldp, count
std::mutex plan_mutex;
std::map<PlanKey, ProductPlan>& plans() {
  static std::map<PlanKey, ProductPlan> m;
  return m;
}

std::string describe(const cublasLtMatmulAlgo_t& algo, bool batched, int count) {
  int id = 0, tile = 0, stages = 0;
  std::size_t size = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &size);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &size);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &size);
  std::ostringstream os;
  os << "cuBLASLt " << (batched ? "one " + std::to_string(count) + "-batched call" : "one call per modulus")
     << ", algorithm " << id << " tile " << tile << " stages " << stages;
  return os.str();
}

void issue(cublasLtHandle_t h, const ProductPlan& p, const LtProducts& batched, const LtProducts& single,
           const Workspace& w, const signed char* a8, const signed char* b8, int* prod, int count,
           std::pair<void*, std::size_t> ws, cudaStream_t s) {
  if (p.batched) return batched.run(h, p.algo, a8, b8, prod, ws, s);
  for (int l = 0; l < count; ++l)
    single.run(h, p.algo, a8 + l * w.a_stride, b8 + l * w.b_stride, prod + l * (w.p_stride / 4), ws, s);
}

// The plan for this shape: cached, else (outside capture) timed here, else the heuristic's first.
ProductPlan plan(ExecContext& ctx, int N, const Workspace& w, const signed char* a8, const signed char* b8,
                 int* prod, int count, const LtProducts& batched, const LtProducts& single) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const PlanKey key{device, N, w.Kp, w.ldp, count};
  {
    const std::lock_guard<std::mutex> lock(plan_mutex);
    const auto it = plans().find(key);
    if (it != plans().end()) return it->second;
  }
  const cudaStream_t s = ctx.stream();
  const cublasLtHandle_t h = ctx.cublaslt();
  const auto ws = ctx.cublas_workspace();
  const std::vector<cublasLtMatmulAlgo_t> in_batch = batched.candidates(h, ws.second, kCandidates);
  if (in_batch.empty()) throw std::runtime_error("ozaki: cuBLASLt offers no INT8 algorithm for this shape");
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return {true, in_batch.front(), describe(in_batch.front(), true, count) + " (heuristic's first: captured)"};
  // Candidates in the two forms; one per plane is timed on min(count, 2) planes and scaled.
  const int timed_planes = std::min(count, 2);
  std::vector<ProductPlan> tried;
  for (const auto& algo : in_batch) tried.push_back({true, algo, ""});
  if (count > 1)
    for (const auto& algo : single.candidates(h, ws.second, kCandidates)) tried.push_back({false, algo, ""});
  const Event start, stop;
  batched.run(h, in_batch.front(), a8, b8, prod, ws, s);  // warm-up
  double best_ms = 0;
  std::size_t best = 0;
  for (std::size_t i = 0; i < tried.size(); ++i) {
    start.record(s);
    issue(h, tried[i], batched, single, w, a8, b8, prod, tried[i].batched ? count : timed_planes, ws, s);
    stop.record(s);
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    const double total = tried[i].batched ? ms : ms * count / timed_planes;
    if (i == 0 || total < best_ms) best_ms = total, best = i;
  }
  ProductPlan p = tried[best];
  std::ostringstream os;
  os.precision(3);
  os << describe(p.algo, p.batched, count) << " (fastest of " << tried.size() << " timed: " << best_ms << " ms)";
  p.what = os.str();
  const std::lock_guard<std::mutex> lock(plan_mutex);
  return plans().emplace(key, p).first->second;
}

}  // namespace

void prepare_int8_products(ExecContext& ctx, int N, const Workspace& w, const signed char* a8, const signed char* b8,
                           int* prod, int count) {
  const LtProducts batched(N, w, count), single(N, w, 1);
  plan(ctx, N, w, a8, b8, prod, count, batched, single);
}

void int8_products(ExecContext& ctx, cudaStream_t stream, int N, const Workspace& w, const signed char* a8,
                   const signed char* b8, int* prod, int count, const char* note) {
  const LtProducts batched(N, w, count), single(N, w, 1);
  const ProductPlan p = plan(ctx, N, w, a8, b8, prod, count, batched, single);
  issue(ctx.cublaslt(), p, batched, single, w, a8, b8, prod, count, ctx.cublas_workspace(), stream);
  ctx.notes()[note] = p.what;
}

}  // namespace ks::gemm::ozaki

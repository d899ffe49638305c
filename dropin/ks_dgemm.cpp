// libks_dgemm.so: cuBLAS's DGEMM entry points served by the suite's kernels. Preloaded in front of cuBLAS
// (LD_PRELOAD) or linked before it, it takes cublasDgemm_v2, cublasDgemmStridedBatched, and cublasGemmEx and
// cublasGemmStridedBatchedEx on FP64 data, with their _64 forms; dropin/route.hpp decides per call whether the
// suite's dmma_tma or ozaki runs it, or the real cuBLAS. Every other cuBLAS function, and every call routed
// native, is the real cuBLAS's own.
//
// This library depends on neither cuBLAS nor the CUDA runtime. The suite's side (dropin/backend.hpp,
// libks_dgemm_backend.so beside it) is loaded the first time a call may run on it, so that it binds to the
// cuBLAS and runtime the program already loaded (matched by soname), never the other way round: linked at start,
// it loaded the toolkit's cuBLAS first, and PyTorch's and CuPy's wheels then ran every call of the program on that
// copy. Both libraries carry a private C++ runtime (dropin/CMakeLists.txt), so loading the suite late binds no C++
// symbol to the program's (docs/gemm-notes.md step 27 has the crash that binding caused).
// The real cuBLAS is the copy the caller was linked against, wherever it came from (the toolkit, a Python wheel
// loaded privately, as PyTorch does): the object that called is found from the return address and the entry
// point looked up in its own dependencies (dlsym on its handle); failing that, among the loaded libcublas
// copies; failing that, the next definition after this library. The suite's own cuBLAS calls (ozaki's native
// fallback) come back here too, flagged per thread, and go to the copy the backend was bound to.
//
// Per call: the handle's stream, pointer mode and math mode are read from the real cuBLAS; the suite's kernels
// run on that stream with an execution context (scratch, handles) per device and stream, kept for the life of
// the process. Policy through the environment, read once at load: KS_DGEMM (dropin/route.hpp) and
// KS_DGEMM_LOG=FILE (one line per call: entry point, ops, shape, leading dimensions, batch, route and why).
#include "dropin/backend.hpp"
#include "dropin/route.hpp"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#define KS_EXPORT extern "C" __attribute__((visibility("default")))

namespace ks::dropin {
namespace {

// ---- the suite's side (dropin/backend.hpp), loaded on first need ----

struct Backend {
  void* handle = nullptr;
  decltype(&ks_dgemm_backend_known) known = nullptr;
  decltype(&ks_dgemm_backend_capturing) capturing = nullptr;
  decltype(&ks_dgemm_backend_facts) facts = nullptr;
  decltype(&ks_dgemm_backend_run) run = nullptr;
};

void* this_library_base();

// libks_dgemm_backend.so beside this library, loaded once; nullptr (and one line on stderr) where it does not load.
const Backend* backend() {
  static const Backend* b = []() -> const Backend* {
    Dl_info info{};
    std::string path;
    if (dladdr(reinterpret_cast<void*>(&this_library_base), &info) && info.dli_fname) {
      path = info.dli_fname;
      path.erase(path.find_last_of('/') + 1);  // the directory, or nothing
    }
    path += "libks_dgemm_backend.so";
    auto* out = new Backend;  // kept for the life of the process
    out->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out->handle) {
      out->known = reinterpret_cast<decltype(out->known)>(dlsym(out->handle, "ks_dgemm_backend_known"));
      out->capturing = reinterpret_cast<decltype(out->capturing)>(dlsym(out->handle, "ks_dgemm_backend_capturing"));
      out->facts = reinterpret_cast<decltype(out->facts)>(dlsym(out->handle, "ks_dgemm_backend_facts"));
      out->run = reinterpret_cast<decltype(out->run)>(dlsym(out->handle, "ks_dgemm_backend_run"));
    }
    if (!out->known || !out->capturing || !out->facts || !out->run) {
      std::fprintf(stderr, "libks_dgemm: cannot load %s (%s); every call goes to the real cuBLAS\n", path.c_str(),
                   out->handle ? "an entry point is missing" : dlerror());
      return nullptr;
    }
    return out;
  }();
  return b;
}

// ---- the policy and the log, read once when the library loads ----

struct Settings {
  Policy policy;
  std::FILE* log = nullptr;
  std::mutex log_mutex;
};

Settings& settings() {
  static Settings* s = [] {
    auto* out = new Settings;  // kept for the life of the process: calls may come from other threads' exit paths
    try {
      // A variant's name is checked against the suite's registry: only then is the suite loaded at start (and
      // binds to the toolkit's cuBLAS, unless the program loaded its own before this library).
      out->policy = parse_policy(std::getenv("KS_DGEMM"), [](const std::string& name) {
        const Backend* b = backend();
        return b ? b->known(name.c_str()) : 0u;
      });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "libks_dgemm: %s; every call goes to the real cuBLAS\n", e.what());
      out->policy = {PolicyKind::Native, {}};
    }
    if (const char* path = std::getenv("KS_DGEMM_LOG"); path && *path) {
      out->log = std::fopen(path, "a");
      if (!out->log) std::fprintf(stderr, "libks_dgemm: KS_DGEMM_LOG=%s: %s; no log\n", path, std::strerror(errno));
    }
    return out;
  }();
  return *s;
}

__attribute__((constructor)) void read_settings_at_load() { settings(); }

void log_call(const Call& c, const Route& r, const char* note = "") {
  Settings& s = settings();
  if (!s.log) return;
  std::lock_guard<std::mutex> lock(s.log_mutex);
  std::fprintf(s.log, "%s ops=%c%c M=%lld N=%lld K=%lld lda=%lld ldb=%lld ldc=%lld batch=%lld route=%s why=%s%s\n",
               c.entry, c.transa, c.transb, static_cast<long long>(c.M), static_cast<long long>(c.N),
               static_cast<long long>(c.K), static_cast<long long>(c.lda), static_cast<long long>(c.ldb),
               static_cast<long long>(c.ldc), static_cast<long long>(c.batch),
               r.native() ? "native" : r.variant.c_str(), r.why.c_str(), note);
  std::fflush(s.log);
}

// ---- the real cuBLAS ----

thread_local bool t_in_suite = false;  // set while the suite's kernels run a call: their cuBLAS calls come back here

void* this_library_base() {
  static void* base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&this_library_base), &info);
    return info.dli_fbase;
  }();
  return base;
}

bool defined_here(void* fn) {
  Dl_info info{};
  return fn && dladdr(fn, &info) && info.dli_fbase == this_library_base();
}

void* from_object(const char* path, const char* name) {
  void* h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return nullptr;
  void* fn = dlsym(h, name);
  dlclose(h);
  return defined_here(fn) ? nullptr : fn;
}

int collect_cublas(struct dl_phdr_info* info, std::size_t, void* out) {
  const char* name = info->dlpi_name;
  const char* base = name ? std::strrchr(name, '/') : nullptr;
  base = base ? base + 1 : name;
  if (base && std::strncmp(base, "libcublas.so", 12) == 0) static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

// The entry point `name` of the cuBLAS copy that `caller` (a return address) was linked against.
void* find_real(const char* name, void* caller) {
  if (!t_in_suite) {
    Dl_info info{};
    if (caller && dladdr(caller, &info) && info.dli_fname && *info.dli_fname && info.dli_fbase != this_library_base())
      if (void* fn = from_object(info.dli_fname, name)) return fn;  // the caller's own dependencies
    std::vector<std::string> loaded;
    dl_iterate_phdr(collect_cublas, &loaded);
    for (const std::string& path : loaded)
      if (void* fn = from_object(path.c_str(), name)) return fn;
  }
  void* fn = nullptr;
  if (t_in_suite) {
    const Backend* b = backend();  // loaded: the suite runs
    fn = b ? dlsym(b->handle, name) : nullptr;  // the copy the backend's libraries were bound to
  }
  if (!fn || defined_here(fn)) fn = dlsym(RTLD_NEXT, name);
  return defined_here(fn) ? nullptr : fn;
}

// Cached per thread, by the calling site and the entry point's name (a string literal: its address is the key).
void* real(const char* name, void* caller) {
  thread_local std::unordered_map<const void*, std::unordered_map<const char*, void*>> cache;
  const void* key = t_in_suite ? nullptr : caller;
  void*& slot = cache[key][name];
  if (!slot) {
    slot = find_real(name, caller);
    if (!slot) std::fprintf(stderr, "libks_dgemm: no cuBLAS in this process defines %s\n", name);
  }
  return slot;
}

template <class F>
F real_fn(const char* name, void* caller) {
  return reinterpret_cast<F>(real(name, caller));
}

// ---- the suite's side ----

struct InSuite {
  InSuite() { t_in_suite = true; }
  ~InSuite() { t_in_suite = false; }
};

// The operands of one call, element strides between batch members (0 for one).
struct Operands {
  double alpha, beta;
  const double* A;
  const double* B;
  double* C;
  long long strideA = 0, strideB = 0, strideC = 0;
};

KsDgemmArgs backend_args(const Call& c, const Operands& o, void* stream) {
  return {static_cast<int>(c.M), static_cast<int>(c.N), static_cast<int>(c.K), o.alpha, o.beta, o.A,
          static_cast<int>(c.lda), o.B, static_cast<int>(c.ldb), o.C, static_cast<int>(c.ldc), o.strideA, o.strideB,
          o.strideC, c.batch, stream, c.transa, c.transb};
}

char op_char(cublasOperation_t t) {
  switch (t) {
    case CUBLAS_OP_N: return 'N';
    case CUBLAS_OP_T: return 'T';
    case CUBLAS_OP_C: return 'C';
    default: return '?';
  }
}

// Everything an entry point does but the call itself: read the handle's state, route, run the suite's kernels
// or hand the call (all of it, or the batch members left) to `native(first_member)`.
template <class Native>
cublasStatus_t serve(Call c, cublasHandle_t handle, const void* alpha, const void* beta, Operands o, void* caller,
                     Native&& native) {
  if (t_in_suite) return native(0);  // the suite's own cuBLAS call (ozaki's native fallback): never routed again
  const Settings& s = settings();
  if (!s.log && native_by_policy_and_size(c, s.policy)) return native(0);  // nothing to read, nothing to log
  c.handle = handle != nullptr;
  if (c.handle && blas_valid(c) && c.types_fp64 && s.policy.kind != PolicyKind::Native) {
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    auto get_pm = real_fn<decltype(&cublasGetPointerMode_v2)>("cublasGetPointerMode_v2", caller);
    auto get_math = real_fn<decltype(&cublasGetMathMode)>("cublasGetMathMode", caller);
    if (!get_pm || !get_math || get_pm(handle, &pm) != CUBLAS_STATUS_SUCCESS ||
        get_math(handle, &math) != CUBLAS_STATUS_SUCCESS)
      return native(0);
    c.host_scalars = pm == CUBLAS_POINTER_MODE_HOST;
    c.pedantic = c.pedantic || (static_cast<int>(math) & 0xf) == CUBLAS_PEDANTIC_MATH;
    cudaStream_t stream = nullptr;
    auto get_stream = real_fn<decltype(&cublasGetStream_v2)>("cublasGetStream_v2", caller);
    if (!get_stream || get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS) return native(0);
    if (c.host_scalars) {
      o.alpha = *static_cast<const double*>(alpha);
      o.beta = *static_cast<const double*>(beta);
    }
    const Backend* b = nullptr;
    bool asked = false;
    Route r = route(c, s.policy, [&] {  // asked only for calls large enough for the suite
      asked = true;
      if (!(b = backend())) return Facts{};
      const KsDgemmArgs args = backend_args(c, o, stream);
      int tma = 0;
      char why[256] = "";
      b->facts(&args, &tma, why, sizeof why);
      return Facts{tma != 0, why};
    });
    if (!r.native() && !b) b = backend();  // routes that ask no facts (KS_DGEMM=ozaki or a variant) load it here
    if ((asked || !r.native()) && !b)
      r = Route{{}, "the suite's libraries did not load (libks_dgemm_backend.so beside this library)"};
    if (!r.native() && b->capturing(stream)) {
      c.capturing = true;
      r = route(c, s.policy, [] { return Facts{}; });  // native, saying why
    }
    if (!r.native()) {
      char error[512] = "";
      const KsDgemmArgs args = backend_args(c, o, stream);
      long long done = 0;
      {
        InSuite in;
        done = b->run(r.variant.c_str(), &args, error, sizeof error);
      }
      if (done == c.batch) {
        log_call(c, r, r.variant.rfind("ozaki", 0) == 0 ? " (ozaki waits for its inputs' statistics)" : "");
        return CUBLAS_STATUS_SUCCESS;
      }
      log_call(c, r, (" (failed at batch member " + std::to_string(done) + ": " + std::string(error) +
                      "; the rest native)").c_str());
      return native(done);
    }
    log_call(c, r);
    return native(0);
  }
  log_call(c, route(c, s.policy, [] { return Facts{}; }));
  return native(0);
}

bool fp64_types(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute, bool& pedantic) {
  pedantic = compute == CUBLAS_COMPUTE_64F_PEDANTIC;
  return a == CUDA_R_64F && b == CUDA_R_64F && c == CUDA_R_64F &&
         (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC);
}

template <class I>
Call make_call(const char* entry, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, I lda, I ldb, I ldc,
               std::int64_t batch = 1) {
  Call c;
  c.entry = entry;
  c.transa = op_char(ta), c.transb = op_char(tb);
  c.M = m, c.N = n, c.K = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc, c.batch = batch;
  return c;
}

}  // namespace
}  // namespace ks::dropin

// cublas_api.h overloads these two in C++ (the legacy cudaDataType compute type): their C forms, by hand.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void*, const void*, cudaDataType, int, long long, const void*,
                                                  cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                  long long, int, cublasComputeType_t, cublasGemmAlgo_t);

// The four calls, each for both integer widths (the plain and the _64 entry points): I is int or int64_t, F the
// real entry point's type, `entry` its name (also the key of the real function's cache and the log's first word).
// Each hands `native(first)` the batch members from `first` on (the whole call for 0); `caller` is the return
// address of the exported entry point.
namespace ks::dropin {
namespace {

template <class F, class I>
cublasStatus_t dgemm(const char* entry, void* caller, cublasHandle_t handle, cublasOperation_t transa,
                     cublasOperation_t transb, I m, I n, I k, const double* alpha, const double* A, I lda,
                     const double* B, I ldb, const double* beta, double* C, I ldc) {
  return serve(make_call(entry, transa, transb, m, n, k, lda, ldb, ldc), handle, alpha, beta, Operands{0, 0, A, B, C},
               caller, [&](std::int64_t) {
                 auto f = real_fn<F>(entry, caller);
                 return f ? f(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
                          : CUBLAS_STATUS_NOT_INITIALIZED;
               });
}

template <class F, class I>
cublasStatus_t dgemm_strided_batched(const char* entry, void* caller, cublasHandle_t handle, cublasOperation_t transa,
                                     cublasOperation_t transb, I m, I n, I k, const double* alpha, const double* A,
                                     I lda, long long strideA, const double* B, I ldb, long long strideB,
                                     const double* beta, double* C, I ldc, long long strideC, I batchCount) {
  return serve(make_call(entry, transa, transb, m, n, k, lda, ldb, ldc, batchCount), handle, alpha, beta,
               Operands{0, 0, A, B, C, strideA, strideB, strideC}, caller, [&](std::int64_t first) {
                 auto f = real_fn<F>(entry, caller);
                 return f ? f(handle, transa, transb, m, n, k, alpha, A + first * strideA, lda, strideA,
                              B + first * strideB, ldb, strideB, beta, C + first * strideC, ldc, strideC,
                              static_cast<I>(batchCount - first))
                          : CUBLAS_STATUS_NOT_INITIALIZED;
               });
}

template <class F, class I>
cublasStatus_t gemm_ex(const char* entry, void* caller, cublasHandle_t handle, cublasOperation_t transa,
                       cublasOperation_t transb, I m, I n, I k, const void* alpha, const void* A, cudaDataType Atype,
                       I lda, const void* B, cudaDataType Btype, I ldb, const void* beta, void* C, cudaDataType Ctype,
                       I ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  Call c = make_call(entry, transa, transb, m, n, k, lda, ldb, ldc);
  c.types_fp64 = fp64_types(Atype, Btype, Ctype, computeType, c.pedantic);
  return serve(c, handle, alpha, beta,
               Operands{0, 0, static_cast<const double*>(A), static_cast<const double*>(B), static_cast<double*>(C)},
               caller, [&](std::int64_t) {
                 auto f = real_fn<F>(entry, caller);
                 return f ? f(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                              computeType, algo)
                          : CUBLAS_STATUS_NOT_INITIALIZED;
               });
}

// Element strides for the suite's side; the real call gets the pointers of the same members.
template <class F, class I>
cublasStatus_t gemm_strided_batched_ex(const char* entry, void* caller, cublasHandle_t handle,
                                       cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k,
                                       const void* alpha, const void* A, cudaDataType Atype, I lda, long long strideA,
                                       const void* B, cudaDataType Btype, I ldb, long long strideB, const void* beta,
                                       void* C, cudaDataType Ctype, I ldc, long long strideC, I batchCount,
                                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  Call c = make_call(entry, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
  c.types_fp64 = fp64_types(Atype, Btype, Ctype, computeType, c.pedantic);
  const auto* a = static_cast<const double*>(A);
  const auto* b = static_cast<const double*>(B);
  auto* cc = static_cast<double*>(C);
  return serve(c, handle, alpha, beta, Operands{0, 0, a, b, cc, strideA, strideB, strideC}, caller,
               [&](std::int64_t first) {
                 auto f = real_fn<F>(entry, caller);
                 return f ? f(handle, transa, transb, m, n, k, alpha, a + first * strideA, Atype, lda, strideA,
                              b + first * strideB, Btype, ldb, strideB, beta, cc + first * strideC, Ctype, ldc,
                              strideC, static_cast<I>(batchCount - first), computeType, algo)
                          : CUBLAS_STATUS_NOT_INITIALIZED;
               });
}

}  // namespace
}  // namespace ks::dropin

// The eight entry points.
#define KS_CALLER __builtin_return_address(0)

KS_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const double* alpha, const double* A, int lda,
                                        const double* B, int ldb, const double* beta, double* C, int ldc) {
  return ks::dropin::dgemm<decltype(&cublasDgemm_v2)>("cublasDgemm_v2", KS_CALLER, handle, transa, transb, m, n, k,
                                                      alpha, A, lda, B, ldb, beta, C, ldc);
}

KS_EXPORT cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                                           int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                                           int64_t ldc) {
  return ks::dropin::dgemm<decltype(&cublasDgemm_v2_64)>("cublasDgemm_v2_64", KS_CALLER, handle, transa, transb, m, n,
                                                         k, alpha, A, lda, B, ldb, beta, C, ldc);
}

KS_EXPORT cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int m, int n, int k, const double* alpha,
                                                   const double* A, int lda, long long strideA, const double* B,
                                                   int ldb, long long strideB, const double* beta, double* C, int ldc,
                                                   long long strideC, int batchCount) {
  return ks::dropin::dgemm_strided_batched<decltype(&cublasDgemmStridedBatched)>(
      "cublasDgemmStridedBatched", KS_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
      beta, C, ldc, strideC, batchCount);
}

KS_EXPORT cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                      const double* alpha, const double* A, int64_t lda,
                                                      long long strideA, const double* B, int64_t ldb,
                                                      long long strideB, const double* beta, double* C, int64_t ldc,
                                                      long long strideC, int64_t batchCount) {
  return ks::dropin::dgemm_strided_batched<decltype(&cublasDgemmStridedBatched_64)>(
      "cublasDgemmStridedBatched_64", KS_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
      strideB, beta, C, ldc, strideC, batchCount);
}

KS_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                                      const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                      cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  return ks::dropin::gemm_ex<GemmExFn>("cublasGemmEx", KS_CALLER, handle, transa, transb, m, n, k, alpha, A, Atype,
                                       lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

KS_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int64_t m, int64_t n, int64_t k, const void* alpha, const void* A,
                                         cudaDataType Atype, int64_t lda, const void* B, cudaDataType Btype,
                                         int64_t ldb, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return ks::dropin::gemm_ex<decltype(&cublasGemmEx_64)>("cublasGemmEx_64", KS_CALLER, handle, transa, transb, m, n, k,
                                                         alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                                                         computeType, algo);
}

KS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                    const void* A, cudaDataType Atype, int lda, long long strideA,
                                                    const void* B, cudaDataType Btype, int ldb, long long strideB,
                                                    const void* beta, void* C, cudaDataType Ctype, int ldc,
                                                    long long strideC, int batchCount,
                                                    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return ks::dropin::gemm_strided_batched_ex<GemmStridedBatchedExFn>(
      "cublasGemmStridedBatchedEx", KS_CALLER, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
      ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

KS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                       const void* alpha, const void* A, cudaDataType Atype,
                                                       int64_t lda, long long strideA, const void* B,
                                                       cudaDataType Btype, int64_t ldb, long long strideB,
                                                       const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
                                                       long long strideC, int64_t batchCount,
                                                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return ks::dropin::gemm_strided_batched_ex<decltype(&cublasGemmStridedBatchedEx_64)>(
      "cublasGemmStridedBatchedEx_64", KS_CALLER, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
      Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

// Uses the installed suite as another project would: the variants declared themselves when libks_gemm and
// libks_reduce loaded; ask the registries for one of each and run them. `consumer --list` only lists what the
// registries hold. Exit 0 when all is right, 77 (skip) where no GPU is visible to run on, 1 otherwise.
#include "common/device_info.hpp"
#include "common/resources.hpp"
#include "gemm/gemm.hpp"
#include "reduce/reduce.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const auto gemm_names = ks::gemm::registry().names();
  const auto reduce_names = ks::reduce::registry().names();
  std::printf("installed: %zu DGEMM variants (first %s), %zu reduction variants (first %s)\n", gemm_names.size(),
              gemm_names.empty() ? "-" : gemm_names.front().c_str(), reduce_names.size(),
              reduce_names.empty() ? "-" : reduce_names.front().c_str());
  const ks::gemm::GemmVariant* coalesced = ks::gemm::registry().find("coalesced");
  const ks::reduce::ReduceVariant* fast = ks::reduce::registry().find("fast");
  if (!coalesced || !fast) return 1;
  if (argc > 1 && std::string(argv[1]) == "--list") return 0;
  std::string why;
  if (!ks::gpu_available(&why)) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  constexpr int n = 96;
  std::vector<double> a(n * n), b(n * n), c(n * n, NAN);
  for (int i = 0; i < n * n; ++i) {
    a[i] = (i % 7) - 3.0;
    b[i] = (i % 5) - 2.0;
  }
  ks::Stream stream;
  ks::ExecContext ctx(stream.get());
  ks::DeviceBuffer<double> da(a.size()), db(b.size()), dc(c.size());
  ks::upload_now(da.data(), a.data(), da.bytes());
  ks::upload_now(db.data(), b.data(), db.bytes());
  ks::gemm::run(*coalesced, {n, n, n, 1.0, da.data(), n, db.data(), n, 0.0, dc.data(), n}, ctx);
  stream.synchronize();
  CUDA_CHECK(cudaMemcpy(c.data(), dc.data(), dc.bytes(), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double want = 0;
      for (int k = 0; k < n; ++k) want += a[i + k * n] * b[k + j * n];
      bad += c[i + j * n] != want;  // small integers: exact
    }
  ks::DeviceBuffer<double> sum(1);
  ks::reduce::run(*fast, {.dtype = ks::reduce::DType::F64, .in = da.data(), .n = a.size(), .out = sum.data()}, ctx);
  double got = 0, want = 0;
  for (double x : a) want += x;
  stream.synchronize();
  CUDA_CHECK(cudaMemcpy(&got, sum.data(), sizeof got, cudaMemcpyDeviceToHost));
  std::printf("coalesced: %d wrong elements of %d; fast: %g, want %g\n", bad, n * n, got, want);
  return bad == 0 && got == want ? 0 : 1;
}

// Host cost of ozaki's target_ratio and decide() on uniform and PHI 1 statistics (docs/gemm-notes.md, step 58).
// Build from the repository root: g++ -std=c++20 -O2 -I. -I/usr/local/cuda/include THIS gemm/07_ozaki/rule.cpp
#include "gemm/07_ozaki/ozaki.hpp"
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <tuple>
using namespace ks::gemm::ozaki;
static void add_rows(RhoBins& b, double rho, double tau, double rows) {
  const int i = rho_bin(rho);
  b.count[i] += rows;
  b.rho[i] = std::max(b.rho[i], rho);
  b.tau[i] = std::max(b.tau[i], tau);
}
static RhoBins make_bins(std::initializer_list<std::tuple<double, double, double>> bins) {
  RhoBins b;
  for (const auto& [rho, tau, rows] : bins) add_rows(b, rho, tau, rows);
  return b;
}
int main() {
  const int n = 16384;
  Stats phi1{614.7, 3.53, 311.9, 2.88};
  phi1.bins_a = make_bins({{20.1, 1.9, 1}, {40.8, 2.0, 6756}, {81.6, 2.12, 8861}, {160.2, 2.29, 730}, {314.2, 2.67, 34}, {614.7, 3.53, 2}});
  phi1.bins_b = make_bins({{20.2, 1.9, 1}, {40.6, 2.0, 6770}, {80.8, 2.12, 8843}, {160.4, 2.3, 739}, {311.9, 2.88, 31}});
  Stats uni{2.05, 1.16, 2.05, 1.16};
  uni.bins_a = make_bins({{2.0, 1.16, n / 2}, {2.05, 1.16, n / 2}});
  uni.bins_b = uni.bins_a;
  for (auto* s : {&uni, &phi1}) {
    volatile double sink = 0;
    const int reps = 2000;
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) sink = sink + target_ratio(*s, n, n);
    auto t1 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps / 10; ++r) sink = sink + decide(n, n, n, *s).moduli;
    auto t2 = std::chrono::steady_clock::now();
    std::printf("%s: target_ratio %.2f us, decide %.1f us (target %.3f, moduli %d)\n", s == &uni ? "uniform" : "PHI 1",
                std::chrono::duration<double, std::micro>(t1 - t0).count() / reps,
                std::chrono::duration<double, std::micro>(t2 - t1).count() / (reps / 10), target_ratio(*s, n, n),
                decide(n, n, n, *s).moduli);
  }
}

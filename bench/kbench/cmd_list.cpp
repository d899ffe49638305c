// kbench list: every declared variant, in ladder order. `--format md` writes the README's tables (a test
// checks that the README carries exactly this output).
#include "bench/kbench/commands.hpp"
#include "bench/program.hpp"
#include "gemm/gemm.hpp"
#include "gemm/host/modes.hpp"
#include "reduce/reduce.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace ks::bench {
namespace {

std::string cc_text(int min_cc) {
  return min_cc ? std::to_string(min_cc / 10) + "." + std::to_string(min_cc % 10) : "any";
}

// The entry the variant is declared in, linked from the README: "[03_coalesced.cu](gemm/03_coalesced.cu)".
std::string step_link(const LadderPlace& place) {
  const std::string& entry = place.entry.empty() ? place.file : place.entry;
  // Appended piece by piece: GCC 12 at -O3 misreads "[" + (a temporary) as an overlapping copy (-Wrestrict).
  std::string link = "[";
  link += entry.substr(entry.find('/') + 1);
  link += "](";
  link += entry;
  link += ")";
  return link;
}

// The longest variant name in `variants` (a registry's all()), so that the columns after the names line up.
template <class Variants>
int name_width(const Variants& variants) {
  int width = 0;
  for (const auto* v : variants) width = std::max(width, static_cast<int>(v->info.name.size()));
  return width;
}

std::string md_cell(std::string s) {
  for (std::size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
  return s;
}

std::string gemm_runs(const VariantInfo& i) {
  if (i.anchor) return "the anchor";
  return i.tuning ? "tuning: when --variants names it" : "default suite";
}

// The HIP build: what it leaves out of the DGEMM ladder, and why (gemm::hip_left_out()).
void list_left_out(bool md) {
#if defined(KS_HIP)
  if (md) {
    std::cout << "\nLeft out of the HIP build:\n\n| entry | variants | why |\n|---|---|---|\n";
    for (const gemm::LeftOut& l : gemm::hip_left_out())
      std::cout << "| " << l.entry << " | " << md_cell(cli::joined(l.names)) << " | " << md_cell(l.why) << " |\n";
    return;
  }
  std::cout << "gemm variants left out of the HIP build:\n";
  for (const gemm::LeftOut& l : gemm::hip_left_out())
    std::cout << "  " << cli::joined(l.names) << " (" << l.entry << "): " << l.why << "\n";
#else
  (void)md;
#endif
}

void list_gemm(bool md) {
  if (md) {
    std::cout << "| step | variant | what it is | op(A) op(B) | min CC | runs |\n|---|---|---|---|---|---|\n";
    for (const gemm::GemmVariant* v : gemm::registry().all())
      std::cout << "| " << step_link(gemm::registry().place(*v)) << " | `" << v->info.name << "` | " << md_cell(v->info.summary) << " | "
                << gemm::ops_names(v->ops) << " | " << cc_text(v->info.min_cc) << " | " << gemm_runs(v->info) << " |\n";
    list_left_out(md);
    return;
  }
  std::string modes;
  for (gemm::Mode m : gemm::all_modes()) modes += (modes.empty() ? "" : ", ") + gemm::to_string(m);
  std::cout << "gemm variants (modes: " << modes << "):\n";
  const int width = name_width(gemm::registry().all());
  for (const gemm::GemmVariant* v : gemm::registry().all())
    std::printf("  %-*s cc>=%-4s %-11s %s%s\n", width, v->info.name.c_str(), cc_text(v->info.min_cc).c_str(),
                gemm::ops_names(v->ops).c_str(), v->info.summary.c_str(),
                v->info.tuning ? " [tuning: runs when --variants names it]" : "");
  list_left_out(md);
}

std::string integral_text(const reduce::ReduceVariant& v) {
  if (!v.integral) return "no";
  std::string s;
  for (reduce::DType t : v.integral_types) s += (s.empty() ? "" : ", ") + reduce::to_string(t);
  return s;
}

void list_reduce(bool md) {
  if (md) {
    std::cout << "| step | variant | what it is | input | deterministic | integral | block sizes |\n"
                 "|---|---|---|---|---|---|---|\n";
    for (const reduce::ReduceVariant* v : reduce::registry().all())
      std::cout << "| " << step_link(reduce::registry().place(*v)) << " | `" << v->info.name << "` | " << md_cell(v->info.summary) << " | "
                << (v->input_on_host ? "pinned host" : "device") << " | " << (v->info.deterministic ? "yes" : "no")
                << " | " << integral_text(*v) << " | " << v->block_sizes_text() << " |\n";
    return;
  }
  std::cout << "reduce variants (types: int32, int64, float, double; ops: sum, sumsq):\n";
  const int width = name_width(reduce::registry().all());
  for (const reduce::ReduceVariant* v : reduce::registry().all()) {
    std::string notes = v->input_on_host ? "host input" : "device input";
    notes += v->info.deterministic ? ", deterministic" : ", non-deterministic";
    if (v->integral) notes += ", integral";
    std::printf("  %-*s cc>=%-4s %s [%s]\n", width, v->info.name.c_str(), cc_text(v->info.min_cc).c_str(),
                v->info.summary.c_str(), notes.c_str());
  }
}

}  // namespace

int list_command(const std::string& family, const std::string& format) {
  const bool md = format == "md";
  if (family.empty() || family == "gemm") list_gemm(md);
  if (family.empty() && md) std::cout << "\n";
  if (family.empty() || family == "reduce") list_reduce(md);
  return cli::kOk;
}

}  // namespace ks::bench

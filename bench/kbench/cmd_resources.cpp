// kbench resources: registers, shared memory, stack and local (spill) bytes of every kernel of this binary and
// its libraries, for every architecture compiled in, and the theoretical occupancy on that architecture, from
// `cuobjdump --dump-resource-usage` run on the files (never through a shell).
#include "bench/kbench/commands.hpp"
#include "bench/pattern.hpp"
#include "bench/program.hpp"
#include "bench/resources.hpp"
#include "common/process.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>

namespace ks::bench {
namespace {

// cuobjdump: the option (which must name an executable file), then PATH, then the toolkit's usual places.
std::string find_cuobjdump(const std::string& given) {
  if (!given.empty()) {
    const std::string found = find_executable(given);
    if (found.empty()) throw std::invalid_argument("--cuobjdump '" + given + "' is not an executable file");
    return found;
  }
  std::vector<std::string> candidates{"cuobjdump"};
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/bin/cuobjdump");
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const std::string& c : candidates)
    if (const std::string found = find_executable(c); !found.empty()) return found;
  throw std::runtime_error(
      "cuobjdump not found: it comes with the CUDA Toolkit (add its bin/ to PATH), or from PyPI as "
      "nvidia-cuda-cuobjdump with nvidia-cuda-nvdisasm; or pass --cuobjdump PATH");
}

// This program and the suite's libraries it loaded (the kernels live in libks_*.so).
std::vector<std::string> kernel_files() {
  std::vector<std::string> files{self_executable()};
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> seen;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string base = path.substr(path.find_last_of('/') + 1);
    if (base.rfind("libks_", 0) == 0 && seen.insert(path).second) files.push_back(path);
  }
  return files;
}

// Shortens a demangled kernel name: the suite's namespaces and anonymous namespaces go.
std::string short_name(std::string n) {
  static const Pattern anonymous("ks::[a-z_]+::\\(anonymous namespace\\)::", "short_name"),
      suite("ks::[a-z_]+::", "short_name");
  return suite.replaced(anonymous.replaced(std::move(n), ""), "");
}

std::string occupancy_text(const KernelResources& k, int threads) {
  const SmLimits* l = sm_limits(k.arch);
  if (!l) return "unknown architecture";
  const Occupancy oc = occupancy(*l, k, threads);
  char b[96];
  std::snprintf(b, sizeof b, "%.0f%% (%d blocks/SM, by %s)", 100 * oc.fraction, oc.blocks, oc.limited_by.c_str());
  return b;
}

}  // namespace

int resources_command(const ResourcesOptions& o) {
  const Pattern filter(o.filter, "--filter");
#if defined(KS_HIP)
  throw std::invalid_argument("resources reads cuobjdump's report of NVIDIA machine code; for the HIP build's AMD "
                              "code objects, compile with -Rpass-analysis=kernel-resource-usage for the same counts");
#endif
  const std::string tool = find_cuobjdump(o.cuobjdump);
  std::vector<KernelResources> kernels;
  for (const std::string& file : kernel_files()) {
    const ProgramOutput dump = run_program({tool, "--dump-resource-usage", file}, true);
    if (dump.exit_code != 0) continue;  // a file without device code
    const std::vector<KernelResources> found = parse_resource_usage(dump.out);
    kernels.insert(kernels.end(), found.begin(), found.end());
  }
  if (kernels.empty()) throw std::runtime_error(tool + " found no kernel resources in this binary or its libraries");
  std::stable_sort(kernels.begin(), kernels.end(), [](const KernelResources& a, const KernelResources& b) {
    return std::tie(a.arch, a.source, a.name) < std::tie(b.arch, b.source, b.name);
  });
  std::printf("| arch | source | kernel | registers | shared B | stack B | local B | occupancy at %d threads |\n",
              o.threads);
  std::printf("|---|---|---|---:|---:|---:|---:|---|\n");
  for (const KernelResources& k : kernels) {
    if (!o.all && k.mangled.rfind("_ZN2ks", 0) != 0) continue;  // the suite's own kernels
    const std::string name = short_name(k.name);
    if (!filter.found_in(name) && !filter.found_in(k.source)) continue;
    std::printf("| sm_%d | %s | %s | %d | %d | %d | %d | %s |\n", k.arch, k.source.c_str(), name.c_str(), k.registers,
                k.shared, k.stack, k.local, occupancy_text(k, o.threads).c_str());
  }
  return cli::kOk;
}

}  // namespace ks::bench

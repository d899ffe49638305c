#include "bench/resources.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <regex>
#include <sstream>

namespace ks::bench {
namespace {

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

int field(const std::string& line, const std::string& key) {
  const std::regex re("\\b" + key + ":([0-9]+)");
  std::smatch m;
  return std::regex_search(line, m, re) ? std::stoi(m[1]) : 0;
}

}  // namespace

std::vector<KernelResources> parse_resource_usage(const std::string& dump) {
  std::vector<KernelResources> out;
  std::istringstream in(dump);
  std::string line, source;
  int arch = 0;
  bool elf = false;
  KernelResources* pending = nullptr;
  const std::regex arch_re("^arch = sm_([0-9]+)[af]?");
  const std::regex function_re("^\\s*Function ([^:]+):");
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("Fatbin elf code", 0) == 0) elf = true;
    else if (line.rfind("Fatbin ptx code", 0) == 0) elf = false;
    if (std::regex_search(line, m, arch_re)) {
      arch = std::stoi(m[1]);
    } else if (line.rfind("identifier = ", 0) == 0) {
      source = line.substr(line.find_last_of('/') == std::string::npos ? 13 : line.find_last_of('/') + 1);
    } else if (elf && std::regex_search(line, m, function_re)) {
      out.push_back({arch, source, m[1], demangle(m[1])});
      pending = &out.back();
    } else if (pending && line.find("REG:") != std::string::npos) {
      pending->registers = field(line, "REG");
      pending->stack = field(line, "STACK");
      pending->shared = field(line, "SHARED");
      pending->local = field(line, "LOCAL");
      pending = nullptr;
    }
  }
  return out;
}

const SmLimits* sm_limits(int arch) {
  static const SmLimits table[] = {
      {70, 2048, 32, 65536, 255, 96 * 1024, 0},    {75, 1024, 16, 65536, 255, 64 * 1024, 0},
      {80, 2048, 32, 65536, 255, 164 * 1024, 1024}, {86, 1536, 16, 65536, 255, 100 * 1024, 1024},
      {87, 1536, 16, 65536, 255, 164 * 1024, 1024}, {89, 1536, 24, 65536, 255, 100 * 1024, 1024},
      // sm_90: cuobjdump's SHARED already counts the 1 KiB reserved per block (it reports 1024 bytes more
      // than for sm_86 for the same kernel), so it is not added again.
      {90, 2048, 32, 65536, 255, 228 * 1024, 0},
  };
  for (const SmLimits& l : table)
    if (l.arch == arch) return &l;
  return nullptr;
}

Occupancy occupancy(const SmLimits& l, const KernelResources& k, int threads, int dynamic_shared) {
  Occupancy o;
  if (threads <= 0 || k.registers > l.max_registers_thread) return o;
  const int warps = (threads + 31) / 32;
  const int regs_per_warp = (std::max(k.registers, 1) * 32 + 255) / 256 * 256;
  const int by_threads = l.max_threads / (warps * 32);
  const int by_regs = l.registers / (regs_per_warp * warps);
  const int smem = k.shared + dynamic_shared + l.reserved_shared;
  const int by_smem = smem > 0 ? l.shared_bytes / smem : std::numeric_limits<int>::max();
  o.blocks = std::min({by_threads, l.max_blocks, by_regs, by_smem});
  o.limited_by = o.blocks == by_threads ? "threads" : o.blocks == l.max_blocks ? "blocks"
               : o.blocks == by_regs    ? "registers" : "shared memory";
  o.fraction = static_cast<double>(o.blocks * warps * 32) / l.max_threads;
  return o;
}

}  // namespace ks::bench

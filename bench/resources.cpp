#include "bench/resources.hpp"

#include "bench/pattern.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <sstream>

namespace ks::bench {
namespace {

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

// A number in cuobjdump's output, refused beyond `max` (no real kernel comes near: 255 registers, 228 KiB of
// shared memory, sm_1xx) so that nothing downstream overflows.
int bounded(const std::string& digits, int max, const std::string& what, const std::string& line) {
  long long v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > max) break;
  }
  if (digits.empty() || v > max)
    throw std::invalid_argument("cuobjdump output: " + what + " '" + digits.substr(0, 20) + "' is out of range (at most " +
                                std::to_string(max) + ") in line '" + line.substr(0, 80) + "'");
  return static_cast<int>(v);
}

constexpr int kMaxBytes = 1 << 30, kMaxRegisters = 1 << 16, kMaxArch = 1000;
// Lines longer than this are not cuobjdump's resource lines (a demangled name can be long; this is far beyond).
constexpr std::size_t kMaxLine = 1 << 20;

// The number after `key:` in a resource line (REG:24 STACK:0 SHARED:1024 LOCAL:0 ...), 0 where it is absent.
int field(const std::string& line, const Pattern& key, const char* what, int max) {
  std::string digits;
  return key.first_group(line, digits) ? bounded(digits, max, what, line) : 0;
}

}  // namespace

std::vector<KernelResources> parse_resource_usage(const std::string& dump) {
  std::vector<KernelResources> out;
  std::istringstream in(dump);
  std::string line, source;
  int arch = 0;
  bool elf = false;
  KernelResources* pending = nullptr;
  static const Pattern arch_re("^arch = sm_([0-9]+)[af]?", "arch"), function_re("^\\s*Function ([^:]+):", "Function"),
      reg_re("\\bREG:([0-9]+)", "REG"), stack_re("\\bSTACK:([0-9]+)", "STACK"),
      shared_re("\\bSHARED:([0-9]+)", "SHARED"), local_re("\\bLOCAL:([0-9]+)", "LOCAL");
  std::string m;
  while (std::getline(in, line)) {
    if (line.size() > kMaxLine)
      throw std::invalid_argument("cuobjdump output: a line of " + std::to_string(line.size()) +
                                  " characters (at most " + std::to_string(kMaxLine) + ")");
    if (line.rfind("Fatbin elf code", 0) == 0) elf = true;
    else if (line.rfind("Fatbin ptx code", 0) == 0) elf = false;
    if (arch_re.first_group(line, m)) {
      arch = bounded(m, kMaxArch, "arch", line);
    } else if (line.rfind("identifier = ", 0) == 0) {
      source = line.substr(line.find_last_of('/') == std::string::npos ? 13 : line.find_last_of('/') + 1);
    } else if (elf && function_re.first_group(line, m)) {
      out.push_back({arch, source, m, demangle(m)});
      pending = &out.back();
    } else if (pending && line.find("REG:") != std::string::npos) {
      pending->registers = field(line, reg_re, "REG", kMaxRegisters);
      pending->stack = field(line, stack_re, "STACK", kMaxBytes);
      pending->shared = field(line, shared_re, "SHARED", kMaxBytes);
      pending->local = field(line, local_re, "LOCAL", kMaxBytes);
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

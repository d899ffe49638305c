// Per-kernel resources of this binary for every architecture it embeds (registers, shared memory, stack,
// local memory), read from `cuobjdump --dump-resource-usage`, and the theoretical occupancy each would have
// on that architecture, so sm_75 and sm_86 builds can be compared without the hardware.
#pragma once

#include <string>
#include <vector>

namespace ks::bench {

struct KernelResources {
  int arch = 0;          // 90 for sm_90
  std::string source;    // the compilation unit's file name
  std::string mangled;
  std::string name;      // demangled
  int registers = 0;     // per thread
  int stack = 0;         // bytes per thread
  int shared = 0;        // static bytes per block
  int local = 0;         // bytes per thread (spills and local arrays)
};

// Parses cuobjdump's resource-usage dump (ELF sections only; PTX sections carry none). Its output is input like
// any other: a number out of range or a line longer than 1 MiB is a std::invalid_argument naming it.
std::vector<KernelResources> parse_resource_usage(const std::string& dump);

// What bounds the number of resident blocks on one SM of an architecture (CUDA Programming Guide, "Compute
// Capabilities" table).
struct SmLimits {
  int arch;
  int max_threads;
  int max_blocks;
  int registers;            // 32-bit registers per SM
  int max_registers_thread;
  int shared_bytes;         // shared memory per SM usable by blocks
  int reserved_shared;      // per block, reserved by the system (sm_80+) where SHARED does not count it
};
const SmLimits* sm_limits(int arch);  // nullptr when unknown

struct Occupancy {
  int blocks = 0;           // resident blocks per SM
  double fraction = 0;      // resident threads / max threads per SM
  std::string limited_by;   // threads, blocks, registers or shared memory
};
// Theoretical occupancy of `k` at `threads` per block with `dynamic_shared` bytes; registers are allocated
// per warp in units of 256.
Occupancy occupancy(const SmLimits& l, const KernelResources& k, int threads, int dynamic_shared = 0);

}  // namespace ks::bench

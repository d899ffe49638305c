// Fuzz target: the reader of `cuobjdump --dump-resource-usage` output (kbench resources) and the occupancy it
// feeds. A tool's output is input like any other: bounded numbers, bounded lines, no crash.
#include "tests/fuzz/fuzz_check.hpp"

#include "bench/resources.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ks;
  const std::string in(reinterpret_cast<const char*>(data), size);
  fuzz::parses_or_rejects("parse_resource_usage", in, [](const std::string& s) {
    for (const bench::KernelResources& k : bench::parse_resource_usage(s)) {
      fuzz::require(k.arch >= 0 && k.registers >= 0 && k.stack >= 0 && k.shared >= 0 && k.local >= 0,
                    "negative resource", s);
      if (const bench::SmLimits* l = bench::sm_limits(k.arch)) {
        for (int threads : {32, 256, 1024}) {
          const bench::Occupancy o = bench::occupancy(*l, k, threads);
          fuzz::require(o.blocks >= 0 && o.blocks <= l->max_blocks, "occupancy out of range", s);
        }
      }
    }
  });
  return 0;
}

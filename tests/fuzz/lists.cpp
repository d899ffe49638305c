// Fuzz target: kbench's option parsers (sizes, ops, counts, lists, bytes, device indices, seeds) and the operand
// distribution specs (--operands). The one-word parsers (modes, types, ops) need the CUDA libraries to link;
// tests/test_parsers_fuzz.cpp covers them.
#include "tests/fuzz/fuzz_check.hpp"

#include "bench/parse.hpp"
#include "common/random.hpp"
#include "gemm/host/problem.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ks;
  const std::string in(reinterpret_cast<const char*>(data), size);
  fuzz::parses_or_rejects("parse_gemm_sizes", in, [](const std::string& s) {
    for (const bench::GemmSize& g : bench::parse_gemm_sizes(s))
      fuzz::require(g.M >= 1 && g.N >= 1 && g.K >= 1 && std::uint64_t(g.M) <= bench::kMaxGemmDim &&
                        std::uint64_t(g.N) <= bench::kMaxGemmDim && std::uint64_t(g.K) <= bench::kMaxGemmDim,
                    "parse_gemm_sizes out of range", s);
  });
  fuzz::parses_or_rejects("parse_gemm_ops", in, [](const std::string& s) {
    for (const std::string& ops : bench::parse_gemm_ops(s))
      fuzz::require(ops.size() == 2 && (ops[0] == 'N' || ops[0] == 'T') && (ops[1] == 'N' || ops[1] == 'T'),
                    "parse_gemm_ops result", s);
  });
  fuzz::parses_or_rejects("parse_counts", in, [](const std::string& s) {
    for (std::size_t n : bench::parse_counts(s))
      fuzz::require(n >= 1 && n <= (std::size_t(1) << 40), "parse_counts out of range", s);
  });
  fuzz::parses_or_rejects("split_list", in, [](const std::string& s) {
    for (const std::string& item : bench::split_list(s))
      fuzz::require(!item.empty() && item.front() != ' ' && item.back() != ' ', "split_list item", s);
  });
  fuzz::parses_or_rejects("parse_bytes", in, [](const std::string& s) {
    const std::size_t b = bench::parse_bytes(s, "--device-memory");
    fuzz::require(b >= 1 && b <= (std::size_t(1) << 50), "parse_bytes out of range", s);
  });
  fuzz::parses_or_rejects("parse_index", in, [](const std::string& s) {
    fuzz::require(bench::parse_index(s, "--devices") <= 1023, "parse_index out of range", s);
  });
  fuzz::parses_or_rejects("parse_seed", in, [](const std::string& s) { parse_seed(s); });
  fuzz::parses_or_rejects("parse_operands", in, [](const std::string& s) {
    const gemm::Operands o = gemm::parse_operands(s);
    fuzz::require(o.phi >= 0 && o.phi <= 8 && o.pow2 >= 0 && o.pow2 <= gemm::Operands::kMaxPow2,
                  "parse_operands out of range", s);
    fuzz::require(gemm::parse_operands(o.str()).str() == o.str(), "parse_operands(str()) differs", s);
  });
  return 0;
}

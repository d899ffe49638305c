// Parsers for kbench's size and list options. Every error is a std::invalid_argument whose message names the
// offending text and the accepted forms; nothing here touches the GPU.
#pragma once

#include "gemm/limits.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ks::bench {

struct GemmSize {
  int M = 0, N = 0, K = 0;
  std::string ops = "NN";   // op(A) op(B): NN, NT, TN or TT
  std::string shape_class = "";  // --suite shapes: the size's class in the named sweep (kShapeSuite); empty elsewhere
  std::string str() const;  // "MxNxK"
  std::string key() const;  // "MxNxK", then "/TN" unless NN: the rows' names and groups
};

// "1024,2048,256x256x4096": a number is a square size; MxNxK a triple. Each dimension 1..kMaxGemmDim (zero is
// a legal BLAS dimension, but a quick return with nothing to time).
constexpr std::uint64_t kMaxGemmDim = gemm::kMaxDim;
std::vector<GemmSize> parse_gemm_sizes(const std::string& text);

// "NN,NT,TN,TT": op(A) op(B) combinations, each two of N, T or C (BLAS's letters, either case; C, the conjugate
// transpose, is T for real data), returned as N and T.
std::vector<std::string> parse_gemm_ops(const std::string& text);

// "1000,2^24,16M,1G": plain counts, powers of two (2^E), and binary suffixes K, M, G (2^10, 2^20, 2^30).
// Each count 1..2^40.
std::vector<std::size_t> parse_counts(const std::string& text);

// Splits on commas, trims spaces, rejects empty items.
std::vector<std::string> split_list(const std::string& text);

// A size in bytes: digits with an optional binary suffix K, M, G or T ("8G", "512M", "1073741824"), 1 to 2^50.
// `option` names the option in the error.
std::size_t parse_bytes(const std::string& text, const std::string& option);

// A device index: digits, 0 to 1023.
std::size_t parse_index(const std::string& text, const std::string& option);

}  // namespace ks::bench

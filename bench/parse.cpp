#include "bench/parse.hpp"

#include <cctype>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ks::bench {

std::string GemmSize::str() const {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

std::string GemmSize::key() const { return ops == "NN" ? str() : str() + "/" + ops; }

std::vector<std::string> parse_gemm_ops(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& item : split_list(text)) {
    char ops[2] = {};
    bool ok = item.size() == 2;
    for (std::size_t i = 0; ok && i < 2; ++i) {
      const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(item[i])));
      ok = u == 'N' || u == 'T' || u == 'C';
      ops[i] = u == 'N' ? 'N' : 'T';
    }
    if (!ok) throw std::invalid_argument("bad op(A) op(B) '" + item + "' (two of N, T, C: NN, NT, TN, TT)");
    out.emplace_back(ops, 2);
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b == std::string::npos) throw std::invalid_argument("empty item in list '" + text + "'");
    out.push_back(item.substr(b, e - b + 1));
  }
  if (!text.empty() && text.back() == ',') throw std::invalid_argument("empty item in list '" + text + "'");
  if (out.empty()) throw std::invalid_argument("empty list");
  return out;
}

namespace {

// Digits only (no sign, no spaces); `too_large` is the message for a value above max.
std::uint64_t parse_digits(const std::string& s, std::uint64_t max, const std::string& whole,
                           const std::string& too_large) {
  if (s.empty()) throw std::invalid_argument("bad number '" + whole + "'");
  std::uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) throw std::invalid_argument("bad number '" + whole + "'");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v > max) throw std::invalid_argument("'" + whole + "' is too large: " + too_large);
  }
  return v;
}

constexpr std::uint64_t kMaxCount = std::uint64_t(1) << 40;
const char* const kCountLimit = "counts go up to 2^40 = 1099511627776";

std::uint64_t parse_count(const std::string& item) {
  const std::string forms = " (forms: 1000, 2^24, 16M; K/M/G = 2^10/2^20/2^30)";
  std::uint64_t v = 0;
  if (item.rfind("2^", 0) == 0) {
    const std::uint64_t e = parse_digits(item.substr(2), 40, item, kCountLimit);
    v = std::uint64_t(1) << e;
  } else {
    std::string digits = item;
    unsigned shift = 0;
    const char last = item.empty() ? 0 : static_cast<char>(std::toupper(static_cast<unsigned char>(item.back())));
    if (last == 'K' || last == 'M' || last == 'G') {
      shift = last == 'K' ? 10 : last == 'M' ? 20 : 30;
      digits.pop_back();
    }
    try {
      v = parse_digits(digits, kMaxCount >> shift, item, kCountLimit);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) + forms);
    }
    v <<= shift;
  }
  if (v == 0) throw std::invalid_argument("size '" + item + "' must be >= 1");
  if (v > kMaxCount) throw std::invalid_argument("'" + item + "' is too large: " + kCountLimit);
  return v;
}

}  // namespace

std::size_t parse_bytes(const std::string& text, const std::string& option) {
  const std::string want = option + " '" + text + "': give bytes with an optional K, M, G or T (binary) suffix, e.g. 8G";
  if (text.empty()) throw std::invalid_argument(want);
  std::string digits = text;
  unsigned shift = 0;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    shift = last == 'K' ? 10 : last == 'M' ? 20 : last == 'G' ? 30 : 40;
    digits.pop_back();
  }
  std::uint64_t v = 0;
  try {
    v = parse_digits(digits, (std::uint64_t(1) << 50) >> shift, text, "at most 2^50 bytes");
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(want);
  }
  if (v == 0) throw std::invalid_argument(want);
  return static_cast<std::size_t>(v << shift);
}

std::size_t parse_index(const std::string& text, const std::string& option) {
  try {
    return static_cast<std::size_t>(parse_digits(text, 1023, text, "device indices go up to 1023"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(option + ": " + e.what());
  }
}

std::vector<std::size_t> parse_counts(const std::string& text) {
  std::vector<std::size_t> out;
  for (const std::string& item : split_list(text)) out.push_back(static_cast<std::size_t>(parse_count(item)));
  return out;
}

std::vector<GemmSize> parse_gemm_sizes(const std::string& text) {
  std::vector<GemmSize> out;
  const std::uint64_t max = kMaxGemmDim;
  const std::string limit = "GEMM dimensions go up to " + std::to_string(kMaxGemmDim);
  for (const std::string& item : split_list(text)) {
    std::vector<std::string> dims;
    std::stringstream ss(item);
    std::string d;
    while (std::getline(ss, d, 'x')) dims.push_back(d);
    if (!item.empty() && item.back() == 'x') dims.push_back("");
    if (dims.size() != 1 && dims.size() != 3)
      throw std::invalid_argument("bad GEMM size '" + item + "' (forms: 1024 for a square, or MxNxK)");
    GemmSize s;
    int v[3];
    for (std::size_t i = 0; i < dims.size(); ++i) {
      v[i] = static_cast<int>(parse_digits(dims[i], max, item, limit));
      if (v[i] < 1) throw std::invalid_argument("GEMM size '" + item + "': dimensions must be >= 1 (a zero dimension is a quick return, with nothing to time)");
    }
    if (dims.size() == 1) s = {v[0], v[0], v[0]};
    else s = {v[0], v[1], v[2]};
    out.push_back(s);
  }
  return out;
}

}  // namespace ks::bench

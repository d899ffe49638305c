#include "common/random.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ks {

std::uint64_t parse_seed(const std::string& text) {
  const std::string why = "KS_SEED='" + text + "' is not a seed: give a whole number from 0 to 18446744073709551615 "
                                               "(the seed printed with a failure)";
  if (text.empty() || text.size() > 20) throw std::invalid_argument(why);
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') throw std::invalid_argument(why);
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) throw std::invalid_argument(why);
    v = v * 10 + digit;
  }
  return v;
}

std::uint64_t choose_seed() {
  if (const char* env = std::getenv("KS_SEED")) return parse_seed(env);
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace ks

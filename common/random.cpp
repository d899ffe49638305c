#include "common/random.hpp"

#include <cstdlib>
#include <string>

namespace ks {

std::uint64_t choose_seed() {
  if (const char* env = std::getenv("KS_SEED"); env && *env) return std::stoull(env, nullptr, 0);
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace ks

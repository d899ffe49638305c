// The variant registry: every kernel variant registers itself once, from its own file, with its name, a
// one-line summary, the minimum compute capability it needs and the properties the harness reads. The
// vendor library is a variant like any other (the anchor), so it goes through the same validation and timing.
// Runners and tests ask the registry; nothing switches on a kernel number.
#pragma once

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace ks {

// What every variant declares, GEMM or reduction alike.
struct VariantInfo {
  std::string name;     // registry key, e.g. "coalesced"
  std::string summary;  // one line
  int min_cc = 0;       // e.g. 80 for compute capability 8.0; 0 = any
  int rank = 0;         // position on the ladder (listing order)
  bool anchor = false;  // the vendor library every other variant is compared with
  bool deterministic = true;  // bitwise-identical floating-point results run to run
  // One fixed configuration of another variant (for autotuning): tested like any variant, but benchmarked
  // only when --variants names it (a pattern other than the default).
  bool tuning = false;
};

// One registry per variant family (Variant has a public `VariantInfo info`).
template <class Variant>
class Registry {
 public:
  static Registry& instance() {
    static Registry r;
    return r;
  }

  // Called from static initialisers in variant files; a duplicate name is a programming error.
  const Variant& add(Variant v) {
    const std::string key = v.info.name;
    auto [it, inserted] = variants_.emplace(key, std::move(v));
    if (!inserted) throw std::logic_error("variant registered twice: " + key);
    return it->second;
  }

  const Variant* find(const std::string& name) const {
    auto it = variants_.find(name);
    return it == variants_.end() ? nullptr : &it->second;
  }

  // Every variant in ladder order (rank, then name).
  std::vector<const Variant*> all() const {
    std::vector<const Variant*> out;
    for (const auto& kv : variants_) out.push_back(&kv.second);
    std::stable_sort(out.begin(), out.end(),
                     [](const Variant* a, const Variant* b) { return a->info.rank < b->info.rank; });
    return out;
  }

  // Variants whose name matches `pattern` as a whole (std::regex ECMAScript).
  std::vector<const Variant*> matching(const std::string& pattern) const {
    const std::regex re(pattern);
    std::vector<const Variant*> out;
    for (const Variant* v : all())
      if (std::regex_match(v->info.name, re)) out.push_back(v);
    return out;
  }

  const Variant* anchor() const {
    for (const Variant* v : all())
      if (v->info.anchor) return v;
    return nullptr;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Variant* v : all()) out.push_back(v->info.name);
    return out;
  }

 private:
  Registry() = default;
  std::map<std::string, Variant> variants_;
};

}  // namespace ks

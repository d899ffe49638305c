// The variant registry. Every kernel variant declares itself once, in its own file, with named fields (name,
// one-line summary, minimum compute capability, the properties the harness reads, its launch function). Its
// place on the ladder is the number that starts the name of the file (or folder) it is declared in:
// gemm/03_coalesced.cu is step 3 of the GEMM ladder; declarations in one file keep their order. The vendor
// library is a variant like any other (the anchor, step 00), so it goes through the same validation and timing.
// Runners and tests ask the registry; nothing switches on a kernel number.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

// Where a declaration sits in the source tree.
struct LadderPlace {
  int step = -1;        // NN of the "NN_" entry (file or folder) under the family's folder; -1 outside one
  std::string entry{};  // that entry, family folder included: "gemm/03_coalesced.cu", "gemm/07_ozaki"
  std::string file{};   // the declaring file, from the family folder on: "gemm/07_ozaki/ozaki.cu"
  int order = 0;      // declaration order within the registry (ties within one entry)
};

// Reads the place from a path such as __FILE__ ("/src/gemm/03_coalesced.cu"): the last path component named
// `family` ("gemm") is the family folder, the component after it is the entry.
LadderPlace ladder_place(std::string_view path, std::string_view family);

// What every variant declares, GEMM or reduction alike.
struct VariantInfo {
  std::string name{};     // registry key, e.g. "coalesced"
  std::string summary{};  // one line
  int min_cc = 0;       // e.g. 80 for compute capability 8.0; 0 = any
  bool anchor = false;  // the vendor library every other variant is compared with
  bool deterministic = true;  // bitwise-identical floating-point results run to run
  // One fixed configuration of another variant (for autotuning): tested like any variant, but benchmarked
  // only when --variants names it (a pattern other than the default).
  bool tuning = false;
  // Its launch marks its phases (ExecContext::mark_phase): kbench times them apart in one extra launch.
  bool phases = false;
};

// One registry per variant family (Variant has a public `VariantInfo info`). Families own theirs as a
// function-local static in one library (gemm::registry(), reduce::registry()); tests make their own.
template <class Variant>
class Registry {
 public:
  explicit Registry(std::string family) : family_(std::move(family)) {}
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  const std::string& family() const { return family_; }

  // Called from static initialisers in variant files (KS_DECLARE_VARIANT), so it never throws: a second
  // declaration of a name is kept out and recorded in problems(), which programs and tests check.
  // (By const reference: GCC 12 at -O3 warns, falsely, of an uninitialized string in the temporary of a
  // designated initializer that is moved from.)
  const Variant& add(const Variant& v, std::string_view file) {
    LadderPlace place = ladder_place(file, family_);
    place.order = next_order_++;
    auto it = entries_.find(v.info.name);
    if (it != entries_.end()) {
      problems_.push_back("variant '" + v.info.name + "' is declared twice: in " + it->second.place.file +
                          " and in " + place.file);
      return it->second.variant;
    }
    return entries_.emplace(v.info.name, Entry{v, std::move(place)}).first->second.variant;
  }

  const Variant* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second.variant;
  }

  // Where `v` (a variant of this registry) is declared.
  const LadderPlace& place(const Variant& v) const { return entries_.at(v.info.name).place; }

  // Every variant in ladder order: step, then declaration order.
  std::vector<const Variant*> all() const {
    std::vector<const Entry*> sorted;
    for (const auto& kv : entries_) sorted.push_back(&kv.second);
    std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
      // Declarations outside a numbered entry (step -1) list last.
      const unsigned sa = static_cast<unsigned>(a->place.step), sb = static_cast<unsigned>(b->place.step);
      return sa != sb ? sa < sb : a->place.order < b->place.order;
    });
    std::vector<const Variant*> out;
    for (const Entry* e : sorted) out.push_back(&e->variant);
    return out;
  }

  // Variants `match` accepts (called with each variant), in ladder order (kbench matches user patterns over the
  // names with RE2: bench/pattern.hpp).
  template <class Match>
  std::vector<const Variant*> matching(Match&& match) const {
    std::vector<const Variant*> out;
    for (const Variant* v : all())
      if (match(*v)) out.push_back(v);
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

  // What is wrong with the declarations: names declared twice, and (given the numbered entries the build
  // found, as "gemm/01_naive.cu") entries that declare nothing and declarations outside any entry.
  std::vector<std::string> problems(const std::vector<std::string>& entries = {}) const {
    std::vector<std::string> out = problems_;
    for (const std::string& e : entries) {
      const bool declares = std::any_of(entries_.begin(), entries_.end(),
                                        [&](const auto& kv) { return kv.second.place.entry == e; });
      if (!declares) out.push_back(e + " declares no variant");
    }
    if (!entries.empty()) {
      for (const auto& kv : entries_)
        if (kv.second.place.step < 0)
          out.push_back("variant '" + kv.first + "' is declared in " + kv.second.place.file +
                        ", outside a numbered ladder entry");
    }
    return out;
  }

 private:
  struct Entry {
    Variant variant;
    LadderPlace place;
  };
  std::string family_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> problems_;
  int next_order_ = 0;
};

}  // namespace ks

#define KS_CONCAT_INNER(a, b) a##b
#define KS_CONCAT(a, b) KS_CONCAT_INNER(a, b)

// Declares one variant in `registry` (an expression), from this file: KS_DECLARE_VARIANT(reg, Type{...}).
// The static's name takes __COUNTER__: files compiled as one translation unit (cmake/KsLadder.cmake) may declare
// on the same line.
#define KS_DECLARE_VARIANT(registry, ...)                                                \
  [[maybe_unused]] static const auto& KS_CONCAT(ks_declared_variant_, __COUNTER__) =     \
      (registry).add(__VA_ARGS__, __FILE__)

// Declares every variant of a table, from this file: KS_DECLARE_VARIANTS(reg, fn), `fn` a function (or lambda)
// returning a std::vector of variants, declared in its order.
#define KS_DECLARE_VARIANTS(registry, ...)                                                  \
  [[maybe_unused]] static const bool KS_CONCAT(ks_declared_variants_, __COUNTER__) = [] {   \
    for (const auto& ks_variant : (__VA_ARGS__)()) (registry).add(ks_variant, __FILE__);    \
    return true;                                                                            \
  }()

// One benchmark row: what it measures and how (its body, given the environment every row measures with), and the
// rows of a plan.
#pragma once

#include "bench/kbench/plan.hpp"
#include "bench/kbench/row_env.hpp"
#include "bench/kbench/row_result.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ks::bench {

struct Row {
  std::string name;  // family/variant/[mode|type]/size: unique, what --benchmark_filter matches
  RowAxes axes;
  // Measures the row into `r` (timing, rate, extras), or marks it failed or skipped; may throw.
  std::function<void(RowEnv&, RowResult& r)> body;
};

// The rows of a plan, in order: within a group the anchor first.
std::vector<Row> build_rows(const Plan& p);

}  // namespace ks::bench

// kbench's display: a table of rows (console or markdown), or Google Benchmark's own CSV/JSON reporters.
#pragma once

#include "common/device_info.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ks::bench {

// One row as displayed: what the table reporter reads off a benchmark run.
struct TableRow {
  std::string name;
  double median_ms = 0;
  std::string rate_name;  // TFLOP/s, GB/s or Gpoints/s
  double rate = 0;
  double vs_anchor = -1;   // < 0: none
  double of_ceiling = -1;  // < 0: none
  std::string error;
};

enum class TableFormat { Console, Markdown, Csv };

// `after` (console and md formats) gets the rows once the table is printed, e.g. to print a summary.
using AfterTable = std::function<void(const std::vector<TableRow>&)>;
std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format, const DeviceFacts& d,
                                                                    AfterTable after = {});

// Renders rows as aligned console text, a markdown table, or CSV.
std::string render_table(const std::vector<TableRow>& rows, TableFormat format);

}  // namespace ks::bench

#include "bench/report.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <vector>

namespace ks::bench {
namespace {

// Google Benchmark 1.7 reports errors as error_occurred/error_message, 1.8 as skipped/skip_message.
template <class R>
auto error_text(const R& r, int) -> decltype(r.error_occurred, std::string()) {
  return r.error_occurred ? r.error_message : std::string();
}
template <class R>
auto error_text(const R& r, long) -> decltype(r.skip_message, std::string()) {
  return r.skipped ? r.skip_message : std::string();
}

class TableReporter : public benchmark::BenchmarkReporter {
 public:
  TableReporter(TableFormat format, DeviceFacts d, AfterTable after)
      : format_(format), device_(std::move(d)), after_(std::move(after)) {}

  bool ReportContext(const Context&) override {
    if (format_ == TableFormat::Csv) return true;
    std::cout << "GPU " << device_.index << ": " << device_.name << " (compute capability " << device_.cc_major << "."
              << device_.cc_minor << ", " << device_.sm_count << " SMs), driver " << format_version(device_.driver_version)
              << ", runtime " << format_version(device_.runtime_version) << "\n";
    return true;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      TableRow row;
      row.name = r.benchmark_name();
      // Google Benchmark appends the run's settings; the table shows the row's own name.
      for (const char* suffix : {"/iterations:", "/manual_time"}) {
        const auto at = row.name.find(suffix);
        if (at != std::string::npos) row.name.erase(at);
      }
      row.error = error_text(r, 0);
      row.median_ms = r.GetAdjustedRealTime();
      for (const char* rate : {"TFLOP/s", "GB/s", "Gpoints/s"}) {
        const auto it = r.counters.find(rate);
        if (it != r.counters.end()) {
          row.rate_name = rate;
          row.rate = it->second.value;
        }
      }
      const auto a = r.counters.find("vs_anchor");
      if (a != r.counters.end()) row.vs_anchor = a->second.value;
      const auto c = r.counters.find("of_ceiling");
      if (c != r.counters.end()) row.of_ceiling = c->second.value;
      rows_.push_back(row);
    }
  }

  void Finalize() override {
    if (format_ != TableFormat::Csv) std::cout << "\n";
    std::cout << render_table(rows_, format_);
    if (after_ && format_ != TableFormat::Csv) after_(rows_);
  }

 private:
  TableFormat format_;
  DeviceFacts device_;
  AfterTable after_;
  std::vector<TableRow> rows_;
};

}  // namespace

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

std::string render_table(const std::vector<TableRow>& rows, TableFormat format) {
  std::ostringstream os;
  char buf[512];
  if (format == TableFormat::Csv) {
    os << "row,median_ms,rate,rate_unit,vs_anchor,of_ceiling,error\n";
    for (const TableRow& r : rows) {
      os << csv_field(r.name) << ",";
      if (r.error.empty()) {
        std::snprintf(buf, sizeof buf, "%.6g,%.6g,%s,", r.median_ms, r.rate, r.rate_name.c_str());
        os << buf;
        if (r.vs_anchor >= 0) os << r.vs_anchor;
        os << ",";
        if (r.of_ceiling >= 0) os << r.of_ceiling;
        os << ",\n";
      } else {
        os << ",,,,," << csv_field(r.error) << "\n";
      }
    }
    return os.str();
  }
  const bool markdown = format == TableFormat::Markdown;
  if (markdown) {
    os << "| row | median ms | rate | % of anchor | % of ceiling |\n|---|---:|---:|---:|---:|\n";
  } else {
    std::snprintf(buf, sizeof buf, "%-52s %12s %18s %12s %13s\n", "row", "median ms", "rate", "% of anchor",
                  "% of ceiling");
    os << buf;
  }
  for (const TableRow& r : rows) {
    std::string rate, ms, pct, ceil;
    if (r.error.empty()) {
      std::snprintf(buf, sizeof buf, "%.4g", r.median_ms);
      ms = buf;
      std::snprintf(buf, sizeof buf, "%.4g %s", r.rate, r.rate_name.c_str());
      rate = buf;
      if (r.vs_anchor >= 0) {
        std::snprintf(buf, sizeof buf, "%.1f%%", 100 * r.vs_anchor);
        pct = buf;
      }
      if (r.of_ceiling >= 0) {
        std::snprintf(buf, sizeof buf, "%.1f%%", 100 * r.of_ceiling);
        ceil = buf;
      }
    } else {
      ms = r.error;
    }
    if (markdown) {
      os << "| " << r.name << " | " << ms << " | " << rate << " | " << pct << " | " << ceil << " |\n";
    } else if (!r.error.empty()) {
      os << r.name << "  " << r.error << "\n";
    } else {
      std::snprintf(buf, sizeof buf, "%-52s %12s %18s %12s %13s\n", r.name.c_str(), ms.c_str(), rate.c_str(),
                    pct.c_str(), ceil.c_str());
      os << buf;
    }
  }
  return os.str();
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format, const DeviceFacts& d,
                                                                    AfterTable after) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  const TableFormat f = format == "md" ? TableFormat::Markdown : format == "csv" ? TableFormat::Csv : TableFormat::Console;
  return std::make_unique<TableReporter>(f, d, std::move(after));
}

}  // namespace ks::bench

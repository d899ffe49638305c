#include "bench/kbench/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace ks::bench {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

struct Cells {
  std::string ms, rate, anchor, ceiling, noise, notes;
};

Cells cells(const RowResult& r) {
  Cells c;
  if (!r.ok()) {
    c.ms = r.error.empty() ? r.status : r.error;
    return c;
  }
  c.ms = format("%.4g", r.timing.median_ms);
  c.rate = format("%.4g", r.rate) + " " + r.rate_unit;
  if (r.vs_anchor >= 0) c.anchor = format("%.1f%%", 100 * r.vs_anchor);
  if (r.of_ceiling >= 0) c.ceiling = format("%.1f%%", 100 * r.of_ceiling);
  c.noise = format("%.2g%%", 100 * r.timing.noise);
  c.notes = row_notes(r);
  return c;
}

}  // namespace

std::string row_notes(const RowResult& r) {
  std::string notes;
  auto add = [&](const std::string& s) { notes += (notes.empty() ? "" : "; ") + s; };
  if (r.throttled) add("throttled (" + r.throttle + ")");
  if (!r.timing.noise_met && r.timing.repetitions() > 1)
    add("noise target not met");
  if (r.timing.batch > 1) add("batch " + std::to_string(r.timing.batch));
  if (r.timing.l2.rfind("rotate:", 0) == 0) add(r.timing.l2);
  return notes;
}

std::string render_table(const std::vector<RowResult>& rows, TableFormat fmt) {
  std::ostringstream os;
  if (fmt == TableFormat::Csv) {
    os << "row,status,median_ms,rate,rate_unit,vs_anchor,of_ceiling,noise,repetitions,batch,throttled,error\n";
    for (const RowResult& r : rows) {
      os << csv_field(r.name) << "," << r.status << ",";
      if (r.ok()) {
        os << format("%.6g", r.timing.median_ms) << "," << format("%.6g", r.rate) << "," << r.rate_unit << ",";
        if (r.vs_anchor >= 0) os << r.vs_anchor;
        os << ",";
        if (r.of_ceiling >= 0) os << r.of_ceiling;
        os << "," << r.timing.noise << "," << r.timing.repetitions() << "," << r.timing.batch << ","
           << (r.throttled ? "true" : "false") << ",";
      } else {
        os << ",,,,,,,,,";
      }
      os << csv_field(r.error) << "\n";
    }
    return os.str();
  }
  const bool md = fmt == TableFormat::Markdown;
  if (md) {
    os << "| row | median ms | rate | % of anchor | % of ceiling | noise | notes |\n"
          "|---|---:|---:|---:|---:|---:|---|\n";
  } else {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-52s %12s %18s %12s %13s %7s  %s\n", "row", "median ms", "rate", "% of anchor",
                  "% of ceiling", "noise", "notes");
    os << buf;
  }
  for (const RowResult& r : rows) {
    const Cells c = cells(r);
    if (md) {
      os << "| " << r.name << " | " << c.ms << " | " << c.rate << " | " << c.anchor << " | " << c.ceiling << " | "
         << c.noise << " | " << c.notes << " |\n";
    } else if (!r.ok()) {
      os << r.name << "  " << c.ms << "\n";
    } else {
      char buf[512];
      std::snprintf(buf, sizeof buf, "%-52s %12s %18s %12s %13s %7s  %s\n", r.name.c_str(), c.ms.c_str(),
                    c.rate.c_str(), c.anchor.c_str(), c.ceiling.c_str(), c.noise.c_str(), c.notes.c_str());
      os << buf;
    }
  }
  return os.str();
}

std::string render_class_means(const std::vector<RowResult>& rows, bool markdown) {
  struct Mean {
    double log_sum = 0;
    int count = 0;
    double lowest = INFINITY;
    std::string lowest_at;
    void add(double ratio, const std::string& at) {
      log_sum += std::log(ratio);
      ++count;
      if (ratio < lowest) lowest = ratio, lowest_at = at;
    }
  };
  std::vector<std::string> variants, classes;
  std::map<std::pair<std::string, std::string>, Mean> means;  // (variant, class or "all")
  for (const RowResult& r : rows) {
    const auto label = r.labels.find("shape_class");
    if (label == r.labels.end() || r.axes.anchor || !r.ok() || r.vs_anchor <= 0) continue;
    if (std::find(variants.begin(), variants.end(), r.axes.variant) == variants.end()) variants.push_back(r.axes.variant);
    if (std::find(classes.begin(), classes.end(), label->second) == classes.end()) classes.push_back(label->second);
    const std::string at = std::to_string(r.axes.M) + "x" + std::to_string(r.axes.N) + "x" + std::to_string(r.axes.K) +
                           (r.axes.op.empty() || r.axes.op == "NN" ? "" : "/" + r.axes.op);
    means[{r.axes.variant, label->second}].add(r.vs_anchor, at);
    means[{r.axes.variant, ""}].add(r.vs_anchor, at);
  }
  if (variants.empty()) return "";
  std::ostringstream os;
  char line[256];
  const char* row_fmt = markdown ? "| %s | %s | %d | %.3f | %.1f%% (%s) |\n" : "  %-24s %-18s %5d %10.3f   %.1f%% (%s)\n";
  os << "\n";
  if (markdown)
    os << "| variant | shape class | rows | geometric mean vs anchor | lowest |\n|---|---|---:|---:|---|\n";
  else
    os << "Geometric mean of the ratio to the anchor (anchor time / variant time), per shape class:\n"
       << "  variant                  class              rows   geo mean   lowest\n";
  for (const std::string& v : variants) {
    std::vector<std::string> keys = classes;
    keys.push_back("");
    for (const std::string& c : keys) {
      const auto it = means.find({v, c});
      if (it == means.end()) continue;
      const Mean& m = it->second;
      std::snprintf(line, sizeof line, row_fmt, v.c_str(), c.empty() ? "all" : c.c_str(), m.count,
                    std::exp(m.log_sum / m.count), 100 * m.lowest, m.lowest_at.c_str());
      os << line;
    }
  }
  return os.str();
}

}  // namespace ks::bench

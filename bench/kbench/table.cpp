#include "bench/kbench/table.hpp"

#include <cstdio>
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

}  // namespace ks::bench

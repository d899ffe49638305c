#include "bench/kbench/results.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace ks::bench {
namespace {

void write_axes(json::Writer& w, const RowAxes& a) {
  for (const auto& [key, value] : {std::pair{"family", &a.family}, {"variant", &a.variant}, {"mode", &a.mode},
                                   {"dtype", &a.dtype}, {"op", &a.op}, {"distribution", &a.distribution},
                                   {"group", &a.group}})
    if (!value->empty()) w.value(key, *value);
  for (const auto& [key, value] : {std::pair{"M", a.M}, {"N", a.N}, {"K", a.K}, {"lda", a.lda}, {"ldb", a.ldb},
                                   {"ldc", a.ldc}, {"n", a.n}, {"block", static_cast<long long>(a.block)}})
    if (value >= 0) w.value(key, static_cast<std::int64_t>(value));
  if (a.alpha == a.alpha) w.value("alpha", a.alpha);
  if (a.beta == a.beta) w.value("beta", a.beta);
  w.value("anchor", a.anchor);
}

void write_measurement(json::Writer& w, const RowResult& r) {
  const TimingStats& t = r.timing;
  // real_time, cpu_time and time_unit as Google Benchmark names them, so that its compare.py reads these files.
  w.value("real_time", t.median_ms)
      .value("cpu_time", t.cpu_ms)
      .value("time_unit", "ms")
      .value("median_ms", t.median_ms)
      .value("min_ms", t.min_ms)
      .value("max_ms", t.max_ms)
      .value("stddev_ms", t.stddev_ms)
      .value("noise", t.noise)
      .value("noise_met", t.noise_met)
      .value("repetitions", t.repetitions())
      .value("batch", t.batch)
      .value("graph", t.graph)
      .value("blocked", t.blocked)
      .value("l2", t.l2)
      .value("rate", r.rate)
      .value("rate_unit", r.rate_unit);
  if (r.vs_anchor >= 0) w.value("vs_anchor", r.vs_anchor);
  if (r.of_ceiling >= 0) w.value("of_ceiling", r.of_ceiling);
  for (const auto& [key, value] : r.extra) w.value(key, value);
  for (const auto& [key, value] : r.labels) w.value(key, value);
}

}  // namespace

void write_results(std::ostream& os, const RunContext& c, const std::vector<RowResult>& rows) {
  json::Writer w(os);
  w.begin_object().value("schema", kResultsSchema).value("schema_version", kResultsSchemaVersion);
  write_context(w, c);
  w.begin_array("benchmarks");
  for (const RowResult& r : rows) {
    w.begin_object().value("name", r.name).value("status", r.status);
    if (!r.error.empty()) w.value("error", r.error);
    write_axes(w, r.axes);
    if (r.ok()) write_measurement(w, r);
    if (r.sm_clock_before_mhz)
      w.value("sm_clock_before_mhz", static_cast<int>(r.sm_clock_before_mhz))
          .value("sm_clock_after_mhz", static_cast<int>(r.sm_clock_after_mhz));
    if (r.status == "ok" || r.status == "failed") w.value("throttled", r.throttled);
    if (r.throttled) w.value("throttle", r.throttle);
    w.end_object();
  }
  w.end_array().end_object();
}

ResultsFile::ResultsFile(std::string path) : path_(std::move(path)), target_(path_) {
  struct stat st{};
  if (lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {  // written through to the file it points to
    char* resolved = realpath(path_.c_str(), nullptr);
    if (!resolved)
      throw std::invalid_argument("--out '" + path_ + "' is a symbolic link to nothing that exists (" +
                                  std::strerror(errno) + ")");
    target_ = resolved;
    std::free(resolved);
  }
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw std::invalid_argument("--out '" + path_ + "' is a folder; give a file name");
    if (!S_ISREG(st.st_mode))
      throw std::invalid_argument("--out '" + path_ + "' is not a regular file (a device, FIFO or socket); results "
                                  "are written to files only");
  }
  const auto slash = target_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target_.substr(0, slash);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  if (base.empty() || base == "." || base == "..")
    throw std::invalid_argument("--out '" + path_ + "' names no file");
  std::string tmpl = dir + "/." + base + ".XXXXXX";
  fd_ = mkstemp(tmpl.data());
  if (fd_ < 0)
    throw std::invalid_argument("--out '" + path_ + "': cannot create a file in '" + dir + "': " + std::strerror(errno));
  tmp_ = tmpl;
}

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

void ResultsFile::commit(const RunContext& c, const std::vector<RowResult>& rows) {
  std::ostringstream os;
  write_results(os, c, rows);
  const std::string text = os.str();
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates the file readable by its owner only; give it the permissions a new file would have.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
  if (close(fd_) != 0) {
    fd_ = -1;
    throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
  }
  fd_ = -1;
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp_ + " to " + target_ + ": " + std::strerror(errno));
  tmp_.clear();
}

}  // namespace ks::bench

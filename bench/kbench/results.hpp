// The results file (docs/results-schema.md): {"schema": "kbench-results", "schema_version": 2, "context": {...},
// "benchmarks": [rows]}, every row carrying its axes and its rate with its unit as fields.
#pragma once

#include "bench/kbench/context.hpp"
#include "bench/kbench/row_result.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace ks::bench {

constexpr const char* kResultsSchema = "kbench-results";
constexpr int kResultsSchemaVersion = 2;

void write_results(std::ostream& os, const RunContext& c, const std::vector<RowResult>& rows);

// --out: checked when constructed, before any GPU work (std::invalid_argument naming the path: a folder, a device,
// FIFO or socket, a folder that does not exist or cannot be written), by creating the temporary file beside the
// target that commit() fills and renames into place, so a result file is either complete or absent. A symbolic
// link is written through: the file it points to is replaced, the link stays.
class ResultsFile {
 public:
  explicit ResultsFile(std::string path);
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  void commit(const RunContext& c, const std::vector<RowResult>& rows);
  const std::string& path() const { return path_; }

 private:
  std::string path_, target_, tmp_;  // as given; the file replaced (a link's target); the temporary file
  int fd_ = -1;
};

}  // namespace ks::bench

// kbench's tables: the rows of a run as aligned console text, a markdown table, or CSV.
#pragma once

#include "bench/kbench/row_result.hpp"

#include <string>
#include <vector>

namespace ks::bench {

enum class TableFormat { Console, Markdown, Csv };

// Per row: the median per launch, the rate, % of its anchor, % of its ceiling, the noise of its samples, and
// notes (a row that throttled, missed its noise target, or ran in batches says so). Rows without a
// measurement show their status and reason.
std::string render_table(const std::vector<RowResult>& rows, TableFormat format);

// The notes column of one row ("" when there is nothing to say).
std::string row_notes(const RowResult& r);

}  // namespace ks::bench

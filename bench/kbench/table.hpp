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

// --suite shapes: per variant (not the anchor), the geometric mean of its ratio to the anchor over each shape class
// (the rows' label shape_class, in the order first seen), then over every row with a ratio; the lowest ratio and
// its size beside each. A markdown table where `markdown`, aligned text otherwise; "" without labelled rows.
std::string render_class_means(const std::vector<RowResult>& rows, bool markdown);

// The notes column of one row ("" when there is nothing to say).
std::string row_notes(const RowResult& r);

}  // namespace ks::bench

#pragma once
// The one table writer of the command line: a header and rows of cells (already formatted, so
// each caller chooses units and digits once), rendered as aligned console text, a Markdown table
// or RFC 4180 CSV. Columns marked numeric are right-aligned.
#include <string>
#include <vector>

namespace asteria::cli {

struct Table {
  std::vector<std::string> columns;
  std::vector<bool> numeric;  // per column (missing entries: text)
  std::vector<std::vector<std::string>> rows;

  void add_row(std::vector<std::string> cells) { rows.push_back(std::move(cells)); }
};

std::string table_text(const Table& table);
std::string table_markdown(const Table& table);
std::string table_csv(const Table& table);

}  // namespace asteria::cli

#include "apps/asteria/table.hpp"

#include <algorithm>

namespace asteria::cli {
namespace {

bool numeric(const Table& t, std::size_t c) { return c < t.numeric.size() && t.numeric[c]; }

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string markdown_cell(const std::string& cell) {
  std::string out;
  for (char c : cell) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace

std::string table_text(const Table& t) {
  std::vector<std::size_t> width(t.columns.size(), 0);
  for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : std::string();
      const std::string pad(width[c] - cell.size(), ' ');
      text += numeric(t, c) ? pad + cell : cell + (c + 1 < width.size() ? pad : "");
      if (c + 1 < width.size()) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + '\n';
  };
  std::string out = line(t.columns);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string table_markdown(const Table& t) {
  std::string out = "|";
  for (const std::string& c : t.columns) out += ' ' + markdown_cell(c) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < t.columns.size(); ++c) out += numeric(t, c) ? " ---: |" : " --- |";
  out += '\n';
  for (const auto& row : t.rows) {
    out += '|';
    for (std::size_t c = 0; c < t.columns.size(); ++c) out += ' ' + markdown_cell(c < row.size() ? row[c] : "") + " |";
    out += '\n';
  }
  return out;
}

std::string table_csv(const Table& t) {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (c) out += ',';
      out += csv_cell(c < cells.size() ? cells[c] : std::string());
    }
    out += '\n';
  };
  line(t.columns);
  for (const auto& row : t.rows) line(row);
  return out;
}

}  // namespace asteria::cli

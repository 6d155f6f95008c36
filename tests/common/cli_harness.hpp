#pragma once
// Runs the `asteria` command line in-process and reads the CSV files verbs write, for the
// verb tests of every area.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/verbs.hpp"

namespace asteria::testing {

struct CliOutcome {
  int code;
  std::string out;
  std::string err;
};

inline CliOutcome run_cli(const cli::Args& args) {
  std::ostringstream out, err;
  const int code = cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

inline std::vector<std::string> lines_of(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

}  // namespace asteria::testing

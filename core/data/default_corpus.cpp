// The built-in corpus: the Python standard library sources of the newest /usr/lib/python3.N.
#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <system_error>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"

namespace asteria::data {

namespace fs = std::filesystem;

namespace {

// N for a directory named exactly "python3.N" (N decimal digits), nothing otherwise.
std::optional<int> python3_minor_version(const std::string& name) {
  const std::string prefix = "python3.";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  int minor = 0;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, error] = std::from_chars(first, last, minor);
  if (error != std::errc() || end != last || *first == '+' || *first == '-') return std::nullopt;
  return minor;
}

// The standard library keeps its modules (os.py, ...) at the top level; a python3.N directory
// holding only site or dist packages does not qualify.
bool has_top_level_python_files(const fs::path& dir) {
  std::error_code error;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, error);
  for (const fs::directory_iterator end; !error && it != end; it.increment(error)) {
    std::error_code status_error;
    if (it->path().extension() == ".py" && it->is_regular_file(status_error) && !status_error) return true;
  }
  return false;
}

}  // namespace

fs::path default_corpus_dir(const fs::path& search_root) {
  std::vector<std::pair<int, fs::path>> candidates;
  std::error_code error;
  fs::directory_iterator it(search_root, fs::directory_options::skip_permission_denied, error);
  for (const fs::directory_iterator end; !error && it != end; it.increment(error)) {
    std::error_code status_error;
    if (!it->is_directory(status_error) || status_error) continue;
    if (const auto minor = python3_minor_version(it->path().filename().string())) {
      candidates.emplace_back(*minor, it->path());
    }
  }
  // Newest first, by numeric version (3.11 after 3.9).
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string tried;
  for (const auto& [minor, dir] : candidates) {
    if (has_top_level_python_files(dir)) return dir;
    tried += (tried.empty() ? "" : ", ") + dir.string() + " (no .py files)";
  }
  throw InputError(search_root.string(), "default corpus",
                   "expected a python3.N directory with .py files (the Python standard library); " +
                       (tried.empty() ? std::string("found no python3.N directory") : "tried " + tried));
}

fs::path default_corpus_dir() { return default_corpus_dir("/usr/lib"); }

std::vector<std::string> default_corpus_extensions() { return {".py"}; }

}  // namespace asteria::data

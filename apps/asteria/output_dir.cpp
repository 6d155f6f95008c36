#include "apps/asteria/output_dir.hpp"

#include <algorithm>
#include <fstream>
#include <system_error>

#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"

namespace asteria::cli {
namespace {

namespace fs = std::filesystem;

// Writable: create and remove a probe (permissions alone do not tell, e.g. a read-only mount).
void require_writable(const fs::path& dir, const std::string& source, std::string_view option) {
  const fs::path probe = dir / ".asteria-write-probe";
  {
    std::ofstream file(probe);
    if (!file) throw InputError(source, std::string(option), "a directory this process can write to");
  }
  std::error_code ec;
  fs::remove(probe, ec);
}

// Whether what lies at `path` is what this project writes under that output's name.
bool is_ours(const fs::path& path, const RunOutput& output) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (output.directory_is_ours == nullptr) return fs::is_regular_file(status);
  return fs::is_directory(status) && output.directory_is_ours(path);
}

std::string found_text(const fs::path& path) {
  std::error_code ec;
  return std::string(io::file_type_text(fs::symlink_status(path, ec).type()));
}

}  // namespace

bool is_checkpoint_output(const fs::path& dir) {
  // train's final parameters: one .npy per tensor and their manifest.json, nothing else.
  std::error_code ec;
  bool manifest = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const fs::path name = entry.path().filename();
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) return false;
    if (name == "manifest.json") manifest = true;
    else if (name.extension() != ".npy") return false;
  }
  return !ec && manifest;
}

void prepare_output(const fs::path& dir, bool overwrite, std::string_view verb, std::span<const RunOutput> outputs) {
  const std::string source = dir.string();
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    throw InputError(source, "--out", "a directory, found " + std::string(io::file_type_text(status.type())));
  if (!fs::exists(status)) {
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      throw InputError(source, "--out", "a directory that exists or can be created" + (ec ? ": " + ec.message() : ""));
  }
  require_writable(dir, source, "--out");

  std::string earlier;
  for (const RunOutput& output : outputs) {
    const fs::path path = dir / output.name;
    if (!fs::exists(fs::symlink_status(path, ec))) continue;
    // Something of the user's under a name a run writes: never removed, never mixed with.
    if (!is_ours(path, output))
      throw InputError(source, "--out",
                       "a directory whose " + std::string(output.name) + " (if any) is " +
                           (output.directory_is_ours ? "a directory this project wrote" : "a regular file") +
                           ", found " + found_text(path) +
                           " that asteria did not write; move it away or choose another --out (it is left as it is)");
    if (!earlier.empty()) earlier += ", ";
    earlier += output.name;
  }
  if (earlier.empty()) return;
  if (!overwrite)
    throw InputError(source, "--out",
                     "a directory without earlier results, found " + earlier + " of an earlier run; choose another --out, "
                     "or rerun asteria " + std::string(verb) + " with --overwrite to replace them");
  for (const RunOutput& output : outputs) {
    fs::remove_all(dir / output.name, ec);
    if (ec)
      throw InputError(source, "--out",
                       "earlier results that can be removed: " + std::string(output.name) + ": " + ec.message());
  }
}

void prepare_output_file(const fs::path& file, bool overwrite, std::string_view verb, std::string_view option) {
  const std::string source = file.string();
  const std::string flag(option);
  if (!file.has_filename())
    throw InputError(source, flag, "a file name, found a path ending in a directory separator");
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(source, flag, "a file in an existing directory, found no directory " + dir.string());
  const fs::file_status link = fs::symlink_status(file, ec);
  if (fs::exists(link)) {
    const fs::file_status target = fs::status(file, ec);
    const bool regular = fs::is_regular_file(target) && (fs::is_regular_file(link) || fs::is_symlink(link));
    if (!regular)
      throw InputError(source, flag,
                       "a regular file to write (or none yet), found " +
                           std::string(io::file_type_text(fs::is_symlink(link) ? target.type() : link.type())) +
                           (fs::is_symlink(link) ? " behind a symbolic link" : "") + "; it is left as it is");
    if (!overwrite)
      throw InputError(source, flag,
                       "a file that does not exist yet, found one; choose another " + flag + ", or rerun asteria " +
                           std::string(verb) + " with --overwrite to replace it");
  }
  require_writable(dir, source, flag);
}

}  // namespace asteria::cli

#include "apps/asteria/output_dir.hpp"

#include <fstream>
#include <system_error>

#include "core/common/error.hpp"

namespace asteria::cli {

void prepare_output(const std::filesystem::path& dir, bool overwrite, std::string_view verb,
                    std::span<const std::string_view> outputs) {
  namespace fs = std::filesystem;
  const std::string source = dir.string();
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    throw InputError(source, "--out", "a directory, found an existing file that is not one");
  if (!fs::exists(status)) {
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      throw InputError(source, "--out", "a directory that exists or can be created" + (ec ? ": " + ec.message() : ""));
  }
  // Writable: create and remove a probe (permissions alone do not tell, e.g. a read-only mount).
  const fs::path probe = dir / ".asteria-write-probe";
  {
    std::ofstream file(probe);
    if (!file) throw InputError(source, "--out", "a directory this process can write to");
  }
  fs::remove(probe, ec);

  std::string earlier;
  for (std::string_view name : outputs) {
    if (!fs::exists(dir / name, ec)) continue;
    if (!earlier.empty()) earlier += ", ";
    earlier += name;
  }
  if (earlier.empty()) return;
  if (!overwrite)
    throw InputError(source, "--out",
                     "a directory without earlier results, found " + earlier + " of an earlier run; choose another --out, "
                     "or rerun asteria " + std::string(verb) + " with --overwrite to replace them");
  for (std::string_view name : outputs) {
    fs::remove_all(dir / name, ec);
    if (ec) throw InputError(source, "--out", "earlier results that can be removed: " + std::string(name) + ": " + ec.message());
  }
}

}  // namespace asteria::cli

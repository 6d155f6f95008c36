// Corpus from the files under a directory.
#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>

#include "core/common/error.hpp"
#include "core/data/binary_check.hpp"
#include "core/data/corpus.hpp"
#include "core/data/document_split.hpp"
#include "core/data/seeded_random.hpp"

namespace asteria::data {

namespace fs = std::filesystem;

namespace {

// ".py" and "py" both mean files ending in ".py".
std::vector<std::string> normalized_extensions(const std::vector<std::string>& extensions) {
  std::vector<std::string> out;
  for (const std::string& extension : extensions) {
    if (extension.empty()) continue;
    out.push_back(extension.front() == '.' ? extension : "." + extension);
  }
  return out;
}

std::string describe_extensions(const std::vector<std::string>& extensions) {
  if (extensions.empty()) return "any extension";
  std::string text = extensions.size() == 1 ? "extension" : "extensions";
  for (std::size_t i = 0; i < extensions.size(); ++i) text += (i == 0 ? " " : ", ") + extensions[i];
  return text;
}

// Regular files (not symlinks) under root with a wanted extension, sorted by path.
std::vector<fs::path> matching_files(const fs::path& root, const std::vector<std::string>& extensions) {
  const std::string source = root.string();
  std::error_code error;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error);
  if (error) throw InputError(source, "corpus", "expected a readable directory (" + error.message() + ")");
  std::vector<fs::path> files;
  for (const fs::recursive_directory_iterator end; it != end;) {
    std::error_code status_error;
    const fs::file_status status = it->symlink_status(status_error);
    if (!status_error && fs::is_regular_file(status)) {
      const std::string extension = it->path().extension().string();
      if (extensions.empty() || std::find(extensions.begin(), extensions.end(), extension) != extensions.end()) {
        files.push_back(it->path());
      }
    }
    it.increment(error);
    if (error) {
      throw InputError(source, "corpus", "expected a directory that can be listed (" + error.message() + ")");
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// At most `budget` bytes of the file; nothing when it cannot be opened or read.
std::optional<std::string> read_prefix(const fs::path& file, std::size_t budget) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string content;
  std::error_code size_error;
  const std::uintmax_t size = fs::file_size(file, size_error);
  if (!size_error) content.reserve(static_cast<std::size_t>(std::min<std::uintmax_t>(size, budget)));
  char chunk[1 << 16];
  while (content.size() < budget) {
    const std::size_t want = std::min<std::size_t>(sizeof chunk, budget - content.size());
    in.read(chunk, static_cast<std::streamsize>(want));
    content.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (in.bad()) return std::nullopt;
    if (!in) break;  // end of file
  }
  return content;
}

std::string binary_reason() {
  return "over " + std::to_string(static_cast<int>(kMaxSuspiciousShare * 100)) +
         "% control bytes or invalid UTF-8 in the first " + std::to_string(kBinaryCheckBytes / 1024) + " KiB";
}

// The first few paths, then how many more: one readable line however many there are.
std::string some_names(const std::vector<fs::path>& files) {
  constexpr std::size_t kShown = 5;
  std::string text;
  for (std::size_t i = 0; i < files.size() && i < kShown; ++i) text += (i == 0 ? "" : ", ") + files[i].string();
  if (files.size() > kShown) text += " and " + std::to_string(files.size() - kShown) + " more";
  return text;
}

}  // namespace

Corpus Corpus::from_directory(const fs::path& root, const CorpusOptions& options) {
  const std::string source = root.string();
  detail::check_validation_fraction(options.validation_fraction, source);
  std::error_code error;
  const fs::file_status root_status = fs::status(root, error);
  if (!fs::exists(root_status)) throw InputError(source, "corpus", "expected an existing directory");
  if (!fs::is_directory(root_status)) throw InputError(source, "corpus", "expected a directory, found another kind of file");

  const std::vector<std::string> extensions = normalized_extensions(options.extensions);
  std::vector<fs::path> files = matching_files(root, extensions);
  // Read in the seeded order, so max_bytes keeps a seeded subset and the documents arrive in
  // the order the split wants.
  detail::seeded_shuffle(files, detail::stream_seed(options.seed, detail::kShuffleTag));

  const std::size_t limit = options.max_bytes > 0 ? options.max_bytes : std::numeric_limits<std::size_t>::max();
  std::vector<std::string> documents;
  std::vector<fs::path> binary;
  std::size_t bytes = 0;
  std::size_t unreadable = 0;
  std::size_t empty = 0;
  std::size_t visited = 0;
  for (; visited < files.size() && bytes < limit; ++visited) {
    // The head first: a large binary file is never read whole.
    const std::optional<std::string> head = read_prefix(files[visited], kBinaryCheckBytes);
    if (head && looks_binary(*head)) {
      binary.push_back(files[visited]);
      continue;
    }
    std::optional<std::string> content = read_prefix(files[visited], limit - bytes);
    if (!content) {
      ++unreadable;
    } else if (content->empty()) {
      ++empty;
    } else {
      bytes += content->size();
      documents.push_back(std::move(*content));
    }
  }
  std::sort(binary.begin(), binary.end());  // named in path order, not the seeded one
  if (documents.empty() && !binary.empty()) {
    throw InputError(source, "corpus",
                     "expected at least one text file (" + describe_extensions(extensions) + "); found " +
                         std::to_string(files.size()) + " matching files, " + std::to_string(binary.size()) +
                         " binary (" + binary_reason() + "): " + some_names(binary) +
                         " (--data takes a directory of text files)");
  }
  if (documents.empty()) {
    throw InputError(source, "corpus",
                     "expected a directory with at least one readable non-empty file (" +
                         describe_extensions(extensions) + "); found " + std::to_string(files.size()) +
                         " matching files, " + std::to_string(empty) + " empty, " + std::to_string(unreadable) +
                         " unreadable");
  }
  if (!binary.empty() && options.warnings != nullptr)
    *options.warnings << "warning: " << source << ": skipped " << binary.size()
                      << (binary.size() == 1 ? " binary file" : " binary files") << " (" << binary_reason()
                      << "): " << some_names(binary) << '\n';

  Corpus corpus;
  corpus.documents_ = documents.size();
  corpus.skipped_ = unreadable;
  corpus.binary_ = binary.size();
  auto streams = detail::split_documents(std::move(documents), options.validation_fraction);
  corpus.train_ = std::move(streams.train);
  corpus.validation_ = std::move(streams.validation);

  const bool limited = visited < files.size();
  std::string description = std::to_string(corpus.documents_);
  if (limited) description += " of " + std::to_string(files.size());
  description += (corpus.documents_ == 1 && !limited ? " file under " : " files under ") + source + " (" +
                 detail::format_bytes(bytes);
  if (limited) description += ", the max_bytes limit";
  if (unreadable > 0) description += "; " + std::to_string(unreadable) + " skipped";
  if (!binary.empty()) description += "; " + std::to_string(binary.size()) + " binary skipped";
  corpus.description_ = description + ")";
  return corpus;
}

}  // namespace asteria::data

#pragma once
// A training corpus: documents (files) split into a training and a validation stream of bytes.
//
// Split: documents are shuffled with the seed, then assigned whole to validation until it holds
// at least `validation_fraction` of the bytes (at least one document when there are two or
// more; a single document is cut at that fraction instead); the rest is training. Each stream
// is the concatenation of its documents, each followed by the end-of-document byte 0 (packing:
// sequences cross document boundaries, as in GPT-style pretraining).
// Details: the fraction counts document bytes (not the end-of-document bytes); training always
// keeps at least one document, so validation can fall short of the fraction when one document
// outweighs all others; a single document gives its first ceil(fraction * size) bytes to
// validation (at most size - 1) and the rest to training; validation_fraction 0 gives an empty
// validation stream. Empty documents are ignored.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace asteria::data {

inline constexpr std::uint8_t kEndOfDocument = 0;

struct CorpusOptions {
  double validation_fraction = 0.1;  // in [0, 1)
  std::uint64_t seed = 1;
  // Only files whose extension is listed (".py", ".txt"); empty: every regular file.
  std::vector<std::string> extensions;
  // Stop reading once this many bytes are in (0: no limit); files are read in a seeded order,
  // so a limit gives a seeded subset. The file that reaches the limit is cut there, so the
  // documents hold at most max_bytes bytes (the streams add one end-of-document byte each).
  // Extensions may be written with or without the dot.
  std::size_t max_bytes = 0;
  // Where from_directory reports the binary files it skips (one line); nullptr: nowhere. The
  // command line passes its stderr, as the skip changes what a run trains on.
  std::ostream* warnings = nullptr;
};

class Corpus {
 public:
  // Every regular file under `root` (recursively, symlinks not followed), sorted by path before
  // the seeded shuffle. Unreadable files are skipped and counted; binary files (looks_binary on
  // their first kBinaryCheckBytes, core/data/binary_check.hpp) are skipped, counted and named in
  // one line on options.warnings. Throws InputError naming the directory for a missing or
  // unreadable directory, no matching file, only empty or binary files (naming them), or a
  // validation_fraction outside [0, 1).
  static Corpus from_directory(const std::filesystem::path& root, const CorpusOptions& options);
  // Documents given in memory (tests).
  static Corpus from_documents(std::vector<std::string> documents, const CorpusOptions& options);
  // A seeded synthetic corpus of about `bytes` bytes with structure a small model learns within
  // a few dozen steps (words from a small lexicon following a seeded Markov chain, sentences and
  // lines), for tests: a pure function of (bytes, seed). The text depends on `seed` only; the
  // split follows options.validation_fraction and options.seed as for the other sources
  // (extensions and max_bytes do not apply). The two streams hold exactly `bytes` bytes;
  // throws InputError for bytes < 2.
  static Corpus synthetic(std::size_t bytes, std::uint64_t seed, const CorpusOptions& options = {});

  const std::vector<std::uint8_t>& train() const noexcept { return train_; }
  const std::vector<std::uint8_t>& validation() const noexcept { return validation_; }
  std::size_t documents() const noexcept { return documents_; }
  std::size_t skipped_files() const noexcept { return skipped_; }
  std::size_t binary_files() const noexcept { return binary_; }
  // "412 files under /usr/lib/python3.11 (5.1 MB; 2 skipped; 3 binary skipped)"; with a max_bytes limit reached,
  // "380 of 1890 files under /usr/lib/python3.11 (2.0 MB, the max_bytes limit)".
  std::string description() const { return description_; }

 private:
  std::vector<std::uint8_t> train_;
  std::vector<std::uint8_t> validation_;
  std::size_t documents_ = 0;
  std::size_t skipped_ = 0;
  std::size_t binary_ = 0;
  std::string description_;
};

// The built-in corpus that exists on every Debian machine without downloads: the Python
// standard library sources (the newest /usr/lib/python3.* with .py files). Throws InputError
// when none is found, saying which directories were tried.
std::filesystem::path default_corpus_dir();
// The same search under another root: the newest search_root/python3.N (numeric N) holding .py
// files at its top level.
std::filesystem::path default_corpus_dir(const std::filesystem::path& search_root);
std::vector<std::string> default_corpus_extensions();  // {".py"}

}  // namespace asteria::data

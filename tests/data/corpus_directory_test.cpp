// Corpus::from_directory on small trees built here: recursion, extension filter, empty,
// unreadable and symlinked files, missing or unsuitable directories, the max_bytes limit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"
#include "tests/data/data_test_support.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::data {
namespace {

namespace fs = std::filesystem;
using asteria::testing::TempDir;
using testing::documents_of;
using testing::sorted;

using testing::write_file;

CorpusOptions python_files(double validation_fraction = 0.0, std::uint64_t seed = 1) {
  CorpusOptions options;
  options.validation_fraction = validation_fraction;
  options.seed = seed;
  options.extensions = {".py"};
  return options;
}

std::vector<std::string> all_documents(const Corpus& corpus) {
  std::vector<std::string> documents = documents_of(corpus.validation());
  for (const auto& document : documents_of(corpus.train())) documents.push_back(document);
  return sorted(documents);
}

TEST(CorpusDirectory, ReadsMatchingRegularFilesRecursively) {
  TempDir dir;
  TempDir elsewhere;
  const fs::path root = dir.path();
  write_file(root / "a.py", "alpha = 1\n");
  write_file(root / "sub" / "b.py", "beta = 2\n");
  write_file(root / "sub" / "deeper" / "c.py", "gamma = 3\n");
  write_file(root / "notes.txt", "not python\n");
  write_file(root / "empty.py", "");
  write_file(root / "locked.py", "locked = 4\n");
  fs::permissions(root / "locked.py", fs::perms::none);
  // Symlinks are not followed, to files or to directories.
  write_file(elsewhere.path() / "outside.py", "outside = 5\n");
  write_file(elsewhere.path() / "pkg" / "d.py", "delta = 6\n");
  fs::create_symlink(elsewhere.path() / "outside.py", root / "link.py");
  fs::create_directory_symlink(elsewhere.path() / "pkg", root / "linked_pkg");

  const Corpus corpus = Corpus::from_directory(root, python_files());
  EXPECT_TRUE(corpus.validation().empty());
  if (::geteuid() != 0) {
    EXPECT_EQ(corpus.documents(), 3u);
    EXPECT_EQ(corpus.skipped_files(), 1u);
    EXPECT_EQ(all_documents(corpus), (std::vector<std::string>{"alpha = 1\n", "beta = 2\n", "gamma = 3\n"}));
    EXPECT_NE(corpus.description().find("3 files under " + root.string()), std::string::npos) << corpus.description();
    EXPECT_NE(corpus.description().find("1 skipped"), std::string::npos) << corpus.description();
  } else {
    // Running as root: file permissions do not apply, so the mode-000 file is read like the rest.
    EXPECT_EQ(corpus.documents(), 4u);
    EXPECT_EQ(corpus.skipped_files(), 0u);
    EXPECT_EQ(all_documents(corpus),
              (std::vector<std::string>{"alpha = 1\n", "beta = 2\n", "gamma = 3\n", "locked = 4\n"}));
    EXPECT_NE(corpus.description().find("4 files under " + root.string()), std::string::npos) << corpus.description();
  }
  fs::permissions(root / "locked.py", fs::perms::owner_all);  // let TempDir remove it
}

TEST(CorpusDirectory, ExtensionsAreOptionalAndTheDotIsToo) {
  TempDir dir;
  write_file(dir.path() / "a.py", "a");
  write_file(dir.path() / "b.txt", "b");
  write_file(dir.path() / "c", "c");
  CorpusOptions any;
  any.validation_fraction = 0.0;
  EXPECT_EQ(all_documents(Corpus::from_directory(dir.path(), any)), (std::vector<std::string>{"a", "b", "c"}));
  CorpusOptions two = any;
  two.extensions = {"txt", ".py"};
  EXPECT_EQ(all_documents(Corpus::from_directory(dir.path(), two)), (std::vector<std::string>{"a", "b"}));
}

TEST(CorpusDirectory, MissingOrUnsuitableDirectoriesAreInputErrors) {
  TempDir dir;
  const fs::path missing = dir.path() / "no-such-dir";
  try {
    Corpus::from_directory(missing, python_files());
    FAIL() << "a missing directory was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), missing.string());
    EXPECT_NE(std::string(error.what()).find(missing.string()), std::string::npos) << error.what();
  }
  write_file(dir.path() / "file.py", "x = 1\n");
  EXPECT_THROW(Corpus::from_directory(dir.path() / "file.py", python_files()), InputError);

  TempDir text_only;
  write_file(text_only.path() / "notes.txt", "words\n");
  write_file(text_only.path() / "sub" / "empty.py", "");
  try {
    Corpus::from_directory(text_only.path(), python_files());
    FAIL() << "a directory without a non-empty .py file was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), text_only.path().string());
    EXPECT_NE(std::string(error.what()).find(".py"), std::string::npos) << error.what();
  }
  EXPECT_THROW(Corpus::from_directory(text_only.path(), [] {
                 CorpusOptions options = python_files();
                 options.validation_fraction = 1.0;
                 return options;
               }()),
               InputError);
}

TEST(CorpusDirectory, MaxBytesCutsTheFileThatReachesIt) {
  TempDir dir;
  std::vector<std::string> contents;
  for (int i = 0; i < 20; ++i) {
    contents.emplace_back(100, static_cast<char>('A' + i));
    write_file(dir.path() / (std::to_string(10 + i) + "_f.py"), contents.back());
  }
  CorpusOptions options = python_files();
  options.max_bytes = 350;  // three whole files and half of a fourth
  const Corpus corpus = Corpus::from_directory(dir.path(), options);
  EXPECT_EQ(corpus.documents(), 4u);
  std::vector<std::size_t> sizes;
  for (const auto& document : all_documents(corpus)) sizes.push_back(document.size());
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{50, 100, 100, 100}));
  EXPECT_EQ(corpus.train().size(), 350u + 4u);
  EXPECT_NE(corpus.description().find("4 of 20 files"), std::string::npos) << corpus.description();

  // The subset is seeded: some other seed reads other files.
  int different = 0;
  for (std::uint64_t seed = 2; seed < 10; ++seed) {
    options.seed = seed;
    if (all_documents(Corpus::from_directory(dir.path(), options)) != all_documents(corpus)) ++different;
  }
  EXPECT_GE(different, 1);
}

TEST(CorpusDirectory, SplitAndOrderDependOnTheSeedNotOnListingOrder) {
  // The same files created in opposite orders in two trees give identical streams.
  TempDir forward;
  TempDir backward;
  for (int i = 0; i < 8; ++i) write_file(forward.path() / (std::to_string(i) + "_m.py"), std::string(100, 'a' + i));
  for (int i = 7; i >= 0; --i) write_file(backward.path() / (std::to_string(i) + "_m.py"), std::string(100, 'a' + i));
  const Corpus one = Corpus::from_directory(forward.path(), python_files(0.5, 3));
  const Corpus two = Corpus::from_directory(backward.path(), python_files(0.5, 3));
  EXPECT_EQ(one.train(), two.train());
  EXPECT_EQ(one.validation(), two.validation());
  // 400 of 800 bytes wanted: four whole documents.
  EXPECT_EQ(one.validation().size(), 4u * 101u);
  EXPECT_EQ(one.train().size(), 4u * 101u);
}

}  // namespace
}  // namespace asteria::data

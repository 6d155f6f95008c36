// The built-in corpus: the newest python3.N standard library, chosen by numeric version, and the
// real one on this machine read under a 2 MB limit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"
#include "tests/data/data_test_support.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::data {
namespace {

namespace fs = std::filesystem;
using asteria::testing::TempDir;

using testing::write_file;

TEST(DefaultCorpus, PicksTheNewestVersionNumericallyWithPythonFiles) {
  TempDir root;
  write_file(root.path() / "python3.9" / "os.py", "import sys\n");
  write_file(root.path() / "python3.11" / "os.py", "import sys\n");
  // Newer, but no standard library at its top level.
  write_file(root.path() / "python3.12" / "site-packages" / "pkg.py", "x = 1\n");
  // Not named python3.N.
  write_file(root.path() / "python3" / "os.py", "import sys\n");
  write_file(root.path() / "python3.13d" / "os.py", "import sys\n");
  write_file(root.path() / "python3.-1" / "os.py", "import sys\n");
  EXPECT_EQ(default_corpus_dir(root.path()), root.path() / "python3.11");
}

TEST(DefaultCorpus, SaysWhichDirectoriesWereTried) {
  TempDir root;
  write_file(root.path() / "python3.12" / "README", "no sources\n");
  try {
    default_corpus_dir(root.path());
    FAIL() << "a python3.N without .py files was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find((root.path() / "python3.12").string()), std::string::npos)
        << error.what();
  }
  TempDir bare;
  EXPECT_THROW(default_corpus_dir(bare.path()), InputError);
  EXPECT_EQ(default_corpus_extensions(), (std::vector<std::string>{".py"}));
}

bool any_python3_dir() {
  std::error_code error;
  for (fs::directory_iterator it("/usr/lib", error), end; !error && it != end; it.increment(error)) {
    if (it->path().filename().string().rfind("python3", 0) == 0) return true;
  }
  return false;
}

TEST(DefaultCorpus, ThePythonStandardLibraryOfThisMachine) {
  if (!any_python3_dir()) GTEST_SKIP() << "no /usr/lib/python3* on this machine: no built-in corpus to read";
  const fs::path dir = default_corpus_dir();
  EXPECT_EQ(dir.parent_path(), fs::path("/usr/lib"));
  EXPECT_EQ(dir.filename().string().rfind("python3.", 0), 0u) << dir;
  EXPECT_TRUE(fs::is_regular_file(dir / "os.py")) << dir;

  CorpusOptions options;
  options.extensions = default_corpus_extensions();
  options.max_bytes = 2'000'000;
  options.validation_fraction = 0.1;
  const Corpus corpus = Corpus::from_directory(dir, options);
  // The standard library's sources are far larger than 2 MB, so the limit is reached exactly.
  const std::size_t stream_bytes = corpus.train().size() + corpus.validation().size();
  EXPECT_EQ(stream_bytes - corpus.documents(), 2'000'000u);
  EXPECT_GT(corpus.documents(), 10u);
  EXPECT_GE(static_cast<double>(corpus.validation().size()), 0.1 * 2'000'000);
  EXPECT_NE(corpus.description().find(" files under " + dir.string()), std::string::npos) << corpus.description();
}

}  // namespace
}  // namespace asteria::data

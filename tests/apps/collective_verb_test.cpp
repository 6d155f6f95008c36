// `asteria collective`: the simulator's nccl-tests. Its table (console and table.csv) has one row
// per size, doubling from --min-bytes to --max-bytes, with busbw = algbw · nccl-tests' factor,
// and its bad options are errors naming the option.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/apps/child_cli.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::CliOutcome;
using testing::lines_of;
using testing::split_csv_line;
using testing::TempDir;

CliOutcome run_cli(const Args& args) { return testing::run_cli_in_child(args); }

TEST(CollectiveVerb, AllReduceOnTwoAlpsNodesReportsBusBandwidthAsNcclTestsDoes) {
  const TempDir dir;
  const CliOutcome run = run_cli({"collective", "--hw", "gh200-alps", "--nodes", "2", "--collective", "all_reduce",
                                  "--algorithm", "hierarchical", "--min-bytes", "1MiB", "--max-bytes", "5MiB",
                                  "--out", dir.path().string()});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("8 ranks"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("busbw_GBps"), std::string::npos) << run.out;

  const std::vector<std::string> lines = lines_of(dir.file("table.csv"));
  ASSERT_EQ(lines.size(), 4u);  // header, 1 MiB, 2 MiB, 4 MiB (8 MiB passes --max-bytes)
  EXPECT_EQ(lines[0], "bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels,predicted_us");
  const double factor = 2.0 * (8 - 1) / 8;  // all_reduce over n = 8 ranks
  double previous_algbw = 0.0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const std::vector<std::string> cells = split_csv_line(lines[i]);
    ASSERT_EQ(cells.size(), 8u);
    const double bytes = std::stod(cells[0]);
    const double time_us = std::stod(cells[1]);
    const double algbw = std::stod(cells[2]);
    const double busbw = std::stod(cells[3]);
    EXPECT_EQ(bytes, static_cast<double>(1u << 20) * static_cast<double>(1u << (i - 1)));
    EXPECT_GT(time_us, 0.0);
    EXPECT_NEAR(algbw, bytes / (time_us * 1e-6) / 1e9, 1e-3 * algbw);  // printed digits
    EXPECT_NEAR(busbw, algbw * factor, 2e-4 + 1e-6 * busbw);           // 4 decimals each
    EXPECT_GT(algbw, previous_algbw);  // latency weighs less as sizes grow
    previous_algbw = algbw;
    EXPECT_EQ(cells[4], "hierarchical");
    EXPECT_TRUE(cells[5] == "ll" || cells[5] == "simple") << "no LL128 between GH200 nodes";
    EXPECT_NEAR(std::stod(cells[7]), time_us, 1e-3 + 1e-6 * time_us);  // the prediction is exact here
  }
}

// By default each size runs NCCL's choice: the tree's low latency for small buffers, a
// bandwidth-bound protocol for large ones, with one channel per NIC of a node.
TEST(CollectiveVerb, AutoPicksWhatNcclWouldPerSize) {
  const TempDir dir;
  const CliOutcome run = run_cli({"collective", "--hw", "gh200-alps", "--nodes", "4", "--min-bytes", "8",
                                  "--max-bytes", "1GiB", "--out", dir.path().string()});
  ASSERT_EQ(run.code, 0) << run.err;
  const std::vector<std::string> lines = lines_of(dir.file("table.csv"));
  ASSERT_EQ(lines.size(), 29u);  // 8 B .. 1 GiB
  const std::vector<std::string> small = split_csv_line(lines[1]);
  const std::vector<std::string> large = split_csv_line(lines.back());
  EXPECT_EQ(small[4], "tree");
  EXPECT_EQ(small[5], "ll");
  EXPECT_EQ(large[5], "simple");
  EXPECT_EQ(large[6], "4");
  const CliOutcome forced = run_cli({"collective", "--hw", "gh200-alps", "--nodes", "4", "--min-bytes", "8",
                                     "--max-bytes", "8", "--algorithm", "ring", "--protocol", "simple"});
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.out.find("ring       simple"), std::string::npos) << forced.out;
}

// Where the prediction is exact a size takes it; --flows runs every flow and gets the same times
// to SimGrid's precision (1e-9 s per activity; the table prints 3 decimals of microseconds).
TEST(CollectiveVerb, TheFlowsTakeThePredictedTime) {
  const TempDir dir;
  for (const char* collective : {"all_reduce", "all_gather"}) {
    SCOPED_TRACE(collective);
    const std::string name(collective);
    const Args base = {"collective", "--hw", "gh200-alps", "--nodes", "4", "--collective", collective,
                       "--min-bytes", "8", "--max-bytes", "256MiB"};
    Args predicted = base;
    predicted.insert(predicted.end(), {"--out", (dir.path() / (name + "-p")).string()});
    Args flows = base;
    flows.insert(flows.end(), {"--flows", "--out", (dir.path() / (name + "-f")).string()});
    const CliOutcome p = run_cli(predicted);
    const CliOutcome f = run_cli(flows);
    ASSERT_EQ(p.code, 0) << p.err;
    ASSERT_EQ(f.code, 0) << f.err;
    const std::vector<std::string> a = lines_of(dir.file(name + "-p/table.csv"));
    const std::vector<std::string> b = lines_of(dir.file(name + "-f/table.csv"));
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 1; i < a.size(); ++i) {
      const std::vector<std::string> x = split_csv_line(a[i]);
      const std::vector<std::string> y = split_csv_line(b[i]);
      EXPECT_NEAR(std::stod(x[1]), std::stod(y[1]), 2e-3) << a[i] << " | " << b[i];
      EXPECT_EQ(x[4], y[4]);
    }
  }
}

TEST(CollectiveVerb, OneGpuPerNodeRingPrintsOneRowPerSize) {
  const CliOutcome run = run_cli({"collective", "--hw", "gh200-alps", "--nodes", "2", "--gpus-per-node", "1",
                                  "--min-bytes", "1024", "--max-bytes", "4096"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("2 ranks"), std::string::npos) << run.out;
  for (const char* size : {"1024", "2048", "4096"}) EXPECT_NE(run.out.find(size), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("8192"), std::string::npos) << run.out;
}

// A collective over many ranks says what it simulates at once, and how far it is.
TEST(CollectiveVerb, SaysWhatItSimulatesOnStderr) {
  const CliOutcome run = run_cli({"collective", "--hw", "gh200-alps", "--nodes", "2", "--min-bytes", "1024",
                                  "--max-bytes", "4096"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("collective: 3 sizes over 8 ranks of gh200-alps (2 nodes), simulating"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("collective: 3/3 done (4096 bytes: "), std::string::npos) << run.err;
  const CliOutcome quiet = run_cli({"collective", "--hw", "gh200-alps", "--nodes", "2", "--min-bytes", "1024",
                                    "--max-bytes", "4096", "--no-progress"});
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST(CollectiveVerb, BadOptionsAreErrorsNamingTheOption) {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"--gpus-per-node", "5"}, "--gpus-per-node"},
      {{"--nodes", "0"}, "--nodes"},
      {{"--algorithm", "butterfly"}, "--algorithm"},
      {{"--protocol", "ll64"}, "--protocol"},
      {{"--collective", "all_to_all"}, "--collective"},
      {{"--min-bytes", "1MiB", "--max-bytes", "1KiB"}, "--max-bytes"},
      {{"--min-bytes", "lots"}, "--min-bytes"},
      {{"--root", "8", "--nodes", "2"}, "--root"},
      // One rank talks to no one: its collective takes no time and measures nothing.
      {{"--nodes", "1", "--gpus-per-node", "1"}, "at least 2 ranks"},
  };
  for (const auto& [extra, option] : cases) {
    SCOPED_TRACE(option);
    Args args = {"collective", "--hw", "gh200-alps"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliOutcome run = run_cli(args);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_NE(run.err.find(option), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace asteria::cli

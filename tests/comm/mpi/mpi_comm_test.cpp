// The MPI communicator runs the Comm conformance scenarios, one rank per process:
//
//   mpirun -np 4 test_comm_mpi [--ranks-per-node=N] [--expect-nodes=N] [gtest flags]
//
// Every process runs every test in the same order (the tests' collectives match across ranks).
// Rank 0 prints GoogleTest's report; the other ranks print only their failures. The program
// fails (and so does mpirun) when any rank fails. --ranks-per-node pretends nodes of N ranks
// on one host (MpiCommOptions::ranks_per_node); --expect-nodes checks the nodes found.
#include "core/real/mpi/mpi_comm.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

#include "core/real/real_sync.hpp"
#include "tests/comm/comm_conformance.hpp"
#include "tests/common/recording_sink.hpp"

namespace asteria::comm_conformance {
namespace {

// What main sets up for the tests: MPI allows one session per process.
struct Launched {
  real::MpiSession* session = nullptr;
  real::MpiComm* comm = nullptr;
  int expect_nodes = 0;  // 0: not checked
};
Launched& launched() {
  static Launched state;
  return state;
}

void run_mpi(int, Scenario scenario) {
  real::RealSync sync;
  platform::CompletionBoard board(sync);
  Rank rank{*launched().comm, board, [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }};
  scenario(rank);
}

Backend mpi_backend() { return {"mpi", run_mpi}; }
int world_size() { return launched().session != nullptr ? launched().session->world_size() : 1; }

// The generator runs in InitGoogleTest, after main made the session: the world's size is known.
INSTANTIATE_TEST_SUITE_P(MpiComm, CommConformance, ::testing::ValuesIn(params(mpi_backend(), {world_size()})),
                         param_name);

TEST(MpiComm, KnowsItWasLaunchedAndHasItsThreadLevel) {
  EXPECT_TRUE(real::MpiSession::launched_by_mpirun());
  EXPECT_GE(launched().session->thread_level(), MPI_THREAD_SERIALIZED);
  EXPECT_EQ(launched().comm->rank(), launched().session->world_rank());
  EXPECT_EQ(launched().comm->size(), launched().session->world_size());
  if (launched().comm->rank() == 0)
    std::printf("MPI thread level provided: %d (MPI_THREAD_SERIALIZED = %d, MPI_THREAD_MULTIPLE = %d)\n",
                launched().session->thread_level(), MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE);
}

TEST(MpiComm, FindsItsNodes) {
  real::MpiComm& comm = *launched().comm;
  if (launched().expect_nodes > 0) {
    EXPECT_EQ(comm.nodes(), launched().expect_nodes);
  }
  for (int r = 1; r < comm.size(); ++r) EXPECT_LE(comm.node_of(r - 1), comm.node_of(r)) << "ranks fill nodes in order";
  EXPECT_EQ(comm.node_of(0), 0);
  EXPECT_THROW(static_cast<void>(comm.node_of(comm.size())), std::out_of_range);
}

TEST(MpiComm, OneSessionPerProcessAndOneSerializedComm) {
  EXPECT_THROW(real::MpiSession(), std::runtime_error);
  if (launched().session->thread_level() < MPI_THREAD_MULTIPLE) {
    EXPECT_THROW(real::MpiComm(*launched().session), std::logic_error);
  }
}

TEST(MpiComm, RecordsOneActivityPerCollectiveOnItsRanksTrack) {
  real::MpiComm& comm = *launched().comm;
  test::RecordingSink sink(comm.rank());
  comm.record(&sink);
  std::vector<float> v(8, 1.0f);
  platform::CollectiveOptions options;
  options.label = "reduce gradients";
  options.tag.step = 3;
  EXPECT_TRUE(comm.world().all_reduce(platform::CommBuffer::of(v), platform::ReduceOp::sum, std::move(options))
                  .status()
                  .ok());
  comm.record(nullptr);
  const auto recorded = sink.activities();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].track, platform::comm_track(comm.rank()));
  EXPECT_EQ(recorded[0].label, "reduce gradients");
  EXPECT_EQ(recorded[0].tag.step, 3);
  EXPECT_DOUBLE_EQ(recorded[0].cost.bytes(), 32.0);
  EXPECT_LE(recorded[0].start, recorded[0].end);
  EXPECT_EQ(v, std::vector<float>(8, static_cast<float>(comm.size())));
}

// The ranks other than 0 report their failures only, each line naming the rank.
class FailuresOnly : public ::testing::EmptyTestEventListener {
 public:
  explicit FailuresOnly(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

int flag_value(std::string_view arg, std::string_view name) {
  return std::stoi(std::string(arg.substr(name.size())));
}

}  // namespace
}  // namespace asteria::comm_conformance

int main(int argc, char** argv) {
  using namespace asteria;
  auto& state = comm_conformance::launched();
  try {
    real::MpiSession session(&argc, &argv);
    state.session = &session;
    ::testing::InitGoogleTest(&argc, argv);
    real::MpiCommOptions options;
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg.starts_with("--ranks-per-node=")) options.ranks_per_node = comm_conformance::flag_value(arg, "--ranks-per-node=");
      else if (arg.starts_with("--expect-nodes=")) state.expect_nodes = comm_conformance::flag_value(arg, "--expect-nodes=");
      else throw std::invalid_argument("unknown argument " + std::string(arg));
    }
    real::MpiComm comm(session, options);
    state.comm = &comm;
    if (session.world_rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new comm_conformance::FailuresOnly(session.world_rank()));
    }
    const int failed = RUN_ALL_TESTS();
    state = {};
    return failed;
  } catch (const std::exception& e) {
    std::cerr << "test_comm_mpi: " << e.what() << "\n";
    state = {};
    return 1;
  }
}

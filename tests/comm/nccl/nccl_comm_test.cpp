// The NCCL communicator runs the Comm conformance scenarios, one rank (and one GPU) per process:
//
//   mpirun -np 2 test_comm_nccl [gtest flags]
//
// The scenarios pass host buffers; here they are staged through device memory (a call's input
// is copied to the GPU once its `after` work is done, its result copied back once the NCCL call
// completes). NCCL adds in its own ring / tree order, so reduced values are checked against
// platform::combine_values within kReductionUlps ulps x the group size of the sum of the terms'
// magnitudes (Rank::reduction_ulps); broadcast, all_gather, bytes-only, split and group values
// stay exact. Two comms run them: the default one (no header exchange: the two scenarios that
// need members to learn of each other's calls are left out) and one with check_calls (every
// scenario). Further tests check that replicas are bitwise identical after an all_reduce.
//
// Without a GPU for every rank of a node every test skips, on every rank alike (the ranks decide
// together; NCCL refuses two ranks on one GPU). Rank 0 prints GoogleTest's report; the other
// ranks print only their failures. The program fails (and so does mpirun) when any rank fails.
#include "core/real/nccl/nccl_comm.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/platform/collective_values.hpp"
#include "core/real/mpi/mpi_comm.hpp"
#include "core/real/real_sync.hpp"
#include "tests/comm/comm_conformance.hpp"
#include "tests/common/recording_sink.hpp"

namespace asteria::comm_conformance {
namespace {

using platform::Collective;
using platform::CollectiveOptions;
using platform::CommBuffer;
using platform::CommGroup;
using platform::DType;
using platform::Pending;
using platform::ReduceOp;

// A float sum in any order is within (size - 1) unit roundoffs of the sum of the magnitudes of
// its terms, and so is the reference: 4 ulps x size covers both, with room for NCCL's average
// (each term scaled by 1 / size, rounded, before the sum) and bf16's rounding at every step.
constexpr int kReductionUlps = 4;

std::string cuda_error(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

// Device memory for one test's staged buffers: one allocation made before any call and handed
// out in order (a cudaMalloc or cudaFree while NCCL kernels wait for their peers may
// synchronize the device and stall the ranks), reset between tests once nothing is in flight.
class DeviceArena {
 public:
  explicit DeviceArena(std::size_t bytes) : capacity_(bytes) {
    if (const cudaError_t e = cudaMalloc(&base_, bytes); e != cudaSuccess)
      throw std::runtime_error("cudaMalloc of the staging arena: " + cuda_error(e));
    if (const cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); e != cudaSuccess)
      throw std::runtime_error("cudaStreamCreateWithFlags: " + cuda_error(e));
  }
  ~DeviceArena() {
    cudaStreamDestroy(stream_);
    cudaFree(base_);
  }
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  void* take(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    const std::size_t at = (used_ + 255) / 256 * 256;
    if (at + bytes > capacity_) throw std::runtime_error("the staging arena is full");
    used_ = at + bytes;
    return static_cast<std::byte*>(base_) + at;
  }
  void reset() {
    std::lock_guard lock(mutex_);
    used_ = 0;
  }
  // A copy either way, finished on return (the staging stream is not the comm's).
  Status copy(void* to, const void* from, std::size_t bytes) {
    cudaError_t e = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream_);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) return Status(StatusCode::failed, "staging copy: " + cuda_error(e));
    return Status::success();
  }

 private:
  void* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
};

// What main sets up for the tests: MPI allows one session per process.
struct Launched {
  real::MpiSession* session = nullptr;
  real::MpiComm* bootstrap = nullptr;
  real::NcclComm* plain = nullptr;    // NcclCommOptions{}
  real::NcclComm* checked = nullptr;  // check_calls
  DeviceArena* arena = nullptr;
  std::string skip;            // why the tests skip (empty: they run), the same on every rank
  bool no_device_anywhere = false;
};
Launched& launched() {
  static Launched state;
  return state;
}

// ---- host buffers staged through the device ------------------------------------------------

// The staging threads of one StagedComm: each call has one, which waits for the call's `after`,
// copies its input to the device (the inner call's `after`), waits for the inner call and
// copies the result back. Joined when the comm goes.
class Stager {
 public:
  Stager(int device, DeviceArena& arena) : device_(device), arena_(arena) {}
  ~Stager() {
    for (std::thread& t : threads_) t.join();
  }
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  using Issue = std::function<Pending(CommBuffer in, CommBuffer out, CollectiveOptions options)>;
  Pending call(Collective collective, const CommGroup& group, CommBuffer in, CommBuffer out, CollectiveOptions options,
               const Issue& issue) {
    if (in.bytes_only() || out.bytes_only()) return issue(in, out, std::move(options));  // no values to stage
    platform::check_collective(collective, group, in, out);  // throws before any device memory is taken
    const CommBuffer din{arena_.take(in.bytes()), in.count, in.dtype};
    const CommBuffer dout = in.data == out.data ? din : CommBuffer{arena_.take(out.bytes()), out.count, out.dtype};
    auto [staged_promise, staged_pending] = board_.make();
    auto [done_promise, done_pending] = board_.make();
    CollectiveOptions inner;
    inner.after = {staged_pending};
    inner.label = options.label;
    inner.tag = options.tag;
    Pending ran = issue(din, dout, std::move(inner));
    std::lock_guard lock(mutex_);
    threads_.emplace_back([this, in, out, din, dout, after = std::move(options.after), staged = std::move(staged_promise),
                           done = std::move(done_promise), ran]() mutable {
      cudaSetDevice(device_);
      Status input = Status::success();
      for (const Pending& p : after) {
        if (!p.valid()) continue;
        const Status s = p.status();
        if (!s.ok() && input.ok()) input = s;
      }
      if (input.ok()) input = arena_.copy(din.data, in.data, in.bytes());
      staged.fulfil(input);
      Status result = ran.status();
      if (result.ok()) result = arena_.copy(out.data, dout.data, out.bytes());
      done.fulfil(std::move(result));
    });
    return std::move(done_pending);
  }

 private:
  int device_;
  DeviceArena& arena_;
  real::RealSync sync_;
  platform::CompletionBoard board_{sync_};
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

class StagedGroup final : public CommGroup {
 public:
  StagedGroup(CommGroup& inner, std::shared_ptr<Stager> stager) : inner_(inner), stager_(std::move(stager)) {}
  StagedGroup(std::unique_ptr<CommGroup> owned, std::shared_ptr<Stager> stager)
      : owned_(std::move(owned)), inner_(*owned_), stager_(std::move(stager)) {}

  int rank() const noexcept override { return inner_.rank(); }
  int size() const noexcept override { return inner_.size(); }
  int world_rank(int group_rank) const override { return inner_.world_rank(group_rank); }

  Pending all_reduce(CommBuffer data, ReduceOp op, CollectiveOptions options) override {
    return stager_->call(Collective::all_reduce, *this, data, data, std::move(options),
                         [&](CommBuffer in, CommBuffer, CollectiveOptions o) { return inner_.all_reduce(in, op, std::move(o)); });
  }
  Pending reduce_scatter(CommBuffer all, CommBuffer mine, ReduceOp op, CollectiveOptions options) override {
    return stager_->call(Collective::reduce_scatter, *this, all, mine, std::move(options),
                         [&](CommBuffer in, CommBuffer out, CollectiveOptions o) {
                           return inner_.reduce_scatter(in, out, op, std::move(o));
                         });
  }
  Pending all_gather(CommBuffer mine, CommBuffer all, CollectiveOptions options) override {
    return stager_->call(Collective::all_gather, *this, mine, all, std::move(options),
                         [&](CommBuffer in, CommBuffer out, CollectiveOptions o) {
                           return inner_.all_gather(in, out, std::move(o));
                         });
  }
  Pending broadcast(CommBuffer data, int root, CollectiveOptions options) override {
    if (root < 0 || root >= size()) return inner_.broadcast(data, root, std::move(options));  // throws as it should
    return stager_->call(Collective::broadcast, *this, data, data, std::move(options),
                         [&](CommBuffer in, CommBuffer, CollectiveOptions o) {
                           return inner_.broadcast(in, root, std::move(o));
                         });
  }
  std::unique_ptr<CommGroup> split(int colour, int key) override {
    std::unique_ptr<CommGroup> made = inner_.split(colour, key);
    if (!made) return nullptr;
    return std::make_unique<StagedGroup>(std::move(made), stager_);
  }

 private:
  std::unique_ptr<CommGroup> owned_;
  CommGroup& inner_;
  std::shared_ptr<Stager> stager_;
};

// An NcclComm seen through host buffers. Its node and leader groups are split from the staged
// world, so they stage too.
class StagedComm final : public platform::Comm {
 public:
  StagedComm(real::NcclComm& inner, DeviceArena& arena)
      : inner_(inner), world_(inner.world(), std::make_shared<Stager>(inner.device(), arena)) {}
  CommGroup& world() override { return world_; }
  int node_of(int world_rank) const override { return inner_.node_of(world_rank); }

 private:
  real::NcclComm& inner_;
  StagedGroup world_;
};

void run_on(real::NcclComm* comm, Scenario scenario) {
  if (!launched().skip.empty()) GTEST_SKIP() << launched().skip;
  launched().arena->reset();
  real::RealSync sync;
  platform::CompletionBoard board(sync);
  StagedComm staged(*comm, *launched().arena);
  Rank rank{staged, board, [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, kReductionUlps};
  scenario(rank);
}

int world_size() { return launched().session != nullptr ? launched().session->world_size() : 1; }

// Without a header exchange, members cannot learn that another member's input failed or that
// its call differs: those two scenarios need check_calls.
std::vector<Param> plain_params() {
  std::vector<Param> all = params({"nccl", [](int, Scenario s) { run_on(launched().plain, s); }}, {world_size()});
  std::erase_if(all, [](const Param& p) {
    return p.scenario.name == "failed_after_fails_every_member" || p.scenario.name == "mismatched_sizes_fail";
  });
  return all;
}
std::vector<Param> checked_params() {
  return params({"nccl_checked", [](int, Scenario s) { run_on(launched().checked, s); }}, {world_size()});
}

// The generators run in InitGoogleTest, after main made the session: the world's size is known.
INSTANTIATE_TEST_SUITE_P(NcclComm, CommConformance, ::testing::ValuesIn(plain_params()), param_name);
INSTANTIATE_TEST_SUITE_P(NcclCommCheckedCalls, CommConformance, ::testing::ValuesIn(checked_params()), param_name);

// ---- device buffers directly -------------------------------------------------------------------

// Rank r's element i: magnitudes from 1e-3 to 1e3 with both signs, so that the order of
// addition shows in the low bits.
float spread(int rank, std::size_t i) {
  const auto k = static_cast<std::size_t>(rank) * 7919u + i * 104729u;
  const float mantissa = static_cast<float>(static_cast<int>(k % 2001u) - 1000) / 997.0f;
  return mantissa * std::pow(10.0f, static_cast<float>(static_cast<int>(i % 7u) - 3));
}

std::vector<std::byte> spread_bytes(int rank, std::size_t count, DType dtype, bool absolute = false) {
  std::vector<std::byte> bytes(count * platform::bytes_per_element(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    const float v = absolute ? std::fabs(spread(rank, i)) : spread(rank, i);
    if (dtype == DType::fp32) {
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    } else {
      const std::uint16_t h = platform::float_to_bf16(v);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  }
  return bytes;
}

float element(const std::vector<std::byte>& bytes, std::size_t i, DType dtype) {
  if (dtype == DType::bf16) {
    std::uint16_t h = 0;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return platform::bf16_to_float(h);
  }
  float v = 0.0f;
  std::memcpy(&v, bytes.data() + 4 * i, 4);
  return v;
}

// combine_values over every rank's spread (or its magnitudes).
std::vector<std::byte> spread_reference(int ranks, std::size_t count, DType dtype, ReduceOp op, bool absolute) {
  std::vector<std::vector<std::byte>> ins;
  std::vector<CommBuffer> buffers;
  for (int r = 0; r < ranks; ++r) ins.push_back(spread_bytes(r, count, dtype, absolute));
  for (auto& in : ins) buffers.push_back({in.data(), count, dtype});
  platform::combine_values(Collective::all_reduce, op, 0, buffers, buffers);
  return ins.front();
}

// Every rank's bytes, gathered over the bootstrap (as two-byte words: MPI moves them exactly).
std::vector<std::byte> gather_over_mpi(std::vector<std::byte> mine) {
  real::MpiComm& mpi = *launched().bootstrap;
  std::vector<std::byte> all(mine.size() * static_cast<std::size_t>(mpi.size()));
  const Status s = mpi.world()
                       .all_gather({mine.data(), mine.size() / 2, DType::bf16}, {all.data(), all.size() / 2, DType::bf16})
                       .status();
  EXPECT_TRUE(s.ok()) << s.message();
  return all;
}

TEST(NcclComm, ReplicasAreBitwiseIdenticalAfterAnAllReduce) {
  if (!launched().skip.empty()) GTEST_SKIP() << launched().skip;
  launched().arena->reset();
  real::NcclComm& comm = *launched().plain;
  const int me = comm.rank();
  const int n = comm.size();
  const std::size_t count = 100003;  // a prime: uneven chunks
  for (DType dtype : {DType::fp32, DType::bf16}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::average}) {
      const std::string what = std::string(platform::to_string(dtype)) + (op == ReduceOp::sum ? " sum" : " average");
      std::vector<std::byte> host = spread_bytes(me, count, dtype);
      void* device = launched().arena->take(host.size());
      ASSERT_TRUE(launched().arena->copy(device, host.data(), host.size()).ok());
      const Status s = comm.world().all_reduce({device, count, dtype}, op).status();
      EXPECT_TRUE(s.ok()) << what << ": " << s.message();
      ASSERT_TRUE(launched().arena->copy(host.data(), device, host.size()).ok());
      // The same bits on every rank.
      const std::vector<std::byte> all = gather_over_mpi(host);
      for (int r = 0; r < n; ++r)
        EXPECT_TRUE(std::equal(host.begin(), host.end(), all.begin() + static_cast<std::ptrdiff_t>(host.size()) * r))
            << what << ": rank " << r << "'s result differs from rank " << me << "'s";
      // And close to the rank-order reference.
      const auto want = spread_reference(n, count, dtype, op, false);
      const auto magnitude = spread_reference(n, count, dtype, op, true);
      const float epsilon = dtype == DType::fp32 ? 0x1p-23f : 0x1p-7f;
      std::size_t outside = 0;
      for (std::size_t i = 0; i < count; ++i)
        if (!(std::fabs(element(host, i, dtype) - element(want, i, dtype)) <=
              static_cast<float>(kReductionUlps * n) * epsilon * element(magnitude, i, dtype)))
          ++outside;
      EXPECT_EQ(outside, 0u) << what << " on rank " << me;
    }
  }
}

TEST(NcclComm, RecordsOneActivityPerCollectiveOnItsRanksTrack) {
  if (!launched().skip.empty()) GTEST_SKIP() << launched().skip;
  launched().arena->reset();
  real::NcclComm& comm = *launched().plain;
  test::RecordingSink sink(comm.rank());
  comm.record(&sink);
  std::vector<float> v(8, 1.0f);
  void* device = launched().arena->take(32);
  ASSERT_TRUE(launched().arena->copy(device, v.data(), 32).ok());
  CollectiveOptions options;
  options.label = "reduce gradients";
  options.tag.step = 3;
  EXPECT_TRUE(comm.world().all_reduce({device, 8, DType::fp32}, ReduceOp::sum, std::move(options)).status().ok());
  comm.record(nullptr);
  ASSERT_TRUE(launched().arena->copy(v.data(), device, 32).ok());
  const auto recorded = sink.activities();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].track, platform::comm_track(comm.rank()));
  EXPECT_EQ(recorded[0].label, "reduce gradients");
  EXPECT_EQ(recorded[0].tag.step, 3);
  EXPECT_DOUBLE_EQ(recorded[0].cost.bytes(), 32.0);
  EXPECT_LE(recorded[0].start, recorded[0].end);
  EXPECT_EQ(v, std::vector<float>(8, static_cast<float>(comm.size())));
}

// A host pointer throws where it is passed and issues nothing: the next call still matches.
TEST(NcclComm, HostBuffersThrowOnTheCallingThread) {
  if (!launched().skip.empty()) GTEST_SKIP() << launched().skip;
  launched().arena->reset();
  real::NcclComm& comm = *launched().plain;
  std::vector<float> host(4, 1.0f);
  EXPECT_THROW(static_cast<void>(comm.world().all_reduce(CommBuffer::of(host), ReduceOp::sum)), std::invalid_argument);
  void* device = launched().arena->take(16);
  ASSERT_TRUE(launched().arena->copy(device, host.data(), 16).ok());
  EXPECT_TRUE(comm.world().all_reduce({device, 4, DType::fp32}, ReduceOp::sum).status().ok());
  ASSERT_TRUE(launched().arena->copy(host.data(), device, 16).ok());
  EXPECT_EQ(host, std::vector<float>(4, static_cast<float>(comm.size())));
}

// Without check_calls a failed input fails its own rank only; the call still runs there with the
// buffer as it was, so the other ranks complete (with that buffer's values) and the next call
// matches on every rank.
TEST(NcclComm, AFailedInputFailsItsRankAndKeepsTheRanksInStep) {
  if (!launched().skip.empty()) GTEST_SKIP() << launched().skip;
  launched().arena->reset();
  real::NcclComm& comm = *launched().plain;
  const int me = comm.rank();
  real::RealSync sync;
  platform::CompletionBoard board(sync);
  auto [promise, produced] = board.make();
  std::vector<float> host(4, static_cast<float>(me + 1));
  void* device = launched().arena->take(16);
  ASSERT_TRUE(launched().arena->copy(device, host.data(), 16).ok());
  CollectiveOptions options;
  options.after = {produced};
  Pending reduced = comm.world().all_reduce({device, 4, DType::fp32}, ReduceOp::sum, std::move(options));
  promise.fulfil(me == 0 ? Status(StatusCode::failed, "bad gradient") : Status::success());
  const Status s = reduced.status();
  EXPECT_EQ(s.ok(), me != 0) << s.message();
  if (me == 0) {
    EXPECT_NE(s.reason().find("bad gradient"), std::string::npos) << s.message();
  }
  ASSERT_TRUE(launched().arena->copy(host.data(), device, 16).ok());
  const float total = static_cast<float>(comm.size() * (comm.size() + 1) / 2);
  EXPECT_EQ(host, std::vector<float>(4, total)) << "rank " << me;
  std::vector<float> again(2, 1.0f);
  void* next = launched().arena->take(8);
  ASSERT_TRUE(launched().arena->copy(next, again.data(), 8).ok());
  EXPECT_TRUE(comm.world().all_reduce({next, 2, DType::fp32}, ReduceOp::average).status().ok());
  ASSERT_TRUE(launched().arena->copy(again.data(), next, 8).ok());
  EXPECT_EQ(again, std::vector<float>(2, 1.0f));
}

TEST(NcclComm, RunsOnItsDeviceWithTheBootstrapsRanksAndNodes) {
  if (!launched().skip.empty()) GTEST_SKIP() << launched().skip;
  real::NcclComm& comm = *launched().plain;
  real::MpiComm& mpi = *launched().bootstrap;
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  EXPECT_GE(comm.device(), 0);
  EXPECT_LT(comm.device(), devices);
  EXPECT_GE(real::NcclComm::nccl_version(), 21800);
  EXPECT_EQ(comm.rank(), mpi.rank());
  EXPECT_EQ(comm.size(), mpi.size());
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(comm.node_of(r), mpi.node_of(r));
  EXPECT_THROW(static_cast<void>(comm.node_of(comm.size())), std::out_of_range);
  if (comm.rank() == 0) std::printf("NCCL %d on device %d of %d\n", real::NcclComm::nccl_version(), comm.device(), devices);
}

// With no device on any rank, construction fails on every rank (the ranks agree first, so none
// is left waiting in NCCL's setup).
TEST(NcclComm, WithoutADeviceEveryRankFailsToStart) {
  if (!launched().no_device_anywhere) GTEST_SKIP() << "the ranks have CUDA devices";
  try {
    real::NcclComm comm(*launched().bootstrap);
    ADD_FAILURE() << "NcclComm started without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start on rank 0"), std::string::npos) << e.what();
    if (launched().bootstrap->rank() == 0) std::printf("NcclComm failed to start, as it should: %s\n", e.what());
  }
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

// Why the tests cannot run (empty: they can), decided from every rank's device count and the
// ranks on its node, so that every rank decides alike.
std::string decide_skip(real::MpiComm& mpi, bool& no_device_anywhere) {
  int devices = 0;
  std::string detail;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess) {
    devices = 0;
    detail = " (cudaGetDeviceCount: " + cuda_error(e) + ")";
    cudaGetLastError();
  }
  float mine[2] = {static_cast<float>(devices), static_cast<float>(mpi.node().size())};
  std::vector<float> all(2 * static_cast<std::size_t>(mpi.size()));
  const Status s = mpi.world().all_gather(CommBuffer::of(mine), CommBuffer::of(all)).status();
  if (!s.ok()) throw std::runtime_error("gathering the device counts: " + s.message());
  no_device_anywhere = true;
  std::string reason;
  for (int r = 0; r < mpi.size(); ++r) {
    const auto found = static_cast<int>(all[2 * static_cast<std::size_t>(r)]);
    const auto needed = static_cast<int>(all[2 * static_cast<std::size_t>(r) + 1]);
    if (found > 0) no_device_anywhere = false;
    if (!reason.empty() || found >= needed) continue;
    reason = found == 0 ? "no CUDA device on rank " + std::to_string(r) + (r == mpi.rank() ? detail : "")
                        : "needs " + std::to_string(needed) + " GPUs, found " + std::to_string(found) + " on rank " +
                              std::to_string(r) + "'s node (NCCL refuses two ranks on one GPU)";
  }
  return reason;
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
    if (argc > 1) throw std::invalid_argument("unknown argument " + std::string(argv[1]));
    real::MpiComm bootstrap(session);
    state.bootstrap = &bootstrap;
    state.skip = comm_conformance::decide_skip(bootstrap, state.no_device_anywhere);
    std::optional<real::NcclComm> plain, checked;
    std::optional<comm_conformance::DeviceArena> arena;
    if (state.skip.empty()) {
      plain.emplace(bootstrap);
      real::NcclCommOptions options;
      options.check_calls = true;
      checked.emplace(bootstrap, options);
      if (const cudaError_t e = cudaSetDevice(plain->device()); e != cudaSuccess)
        throw std::runtime_error("cudaSetDevice: " + comm_conformance::cuda_error(e));
      arena.emplace(std::size_t{64} << 20);
      state.plain = &*plain;
      state.checked = &*checked;
      state.arena = &*arena;
    }
    if (session.world_rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new comm_conformance::FailuresOnly(session.world_rank()));
    }
    const int failed = RUN_ALL_TESTS();
    state = {};
    return failed;
  } catch (const std::exception& e) {
    std::cerr << "test_comm_nccl: " << e.what() << "\n";
    state = {};
    return 1;
  }
}

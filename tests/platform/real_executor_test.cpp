// The real backend's executors beyond the seam contract: pacing with modelled time (emulated
// kernels), measured time (CPU kernels), the activities they record, draining on destruction,
// sizes. Timing checks are lower bounds only (a modelled duration is a floor the stream must
// respect); upper bounds would depend on machine load.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include "core/common/error.hpp"
#include "core/real/device_stream_executor.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_platform.hpp"
#include "core/real/real_sync.hpp"
#include "core/real/thread_pool_executor.hpp"
#include "tests/common/recording_sink.hpp"

namespace asteria::real {
namespace {

using platform::Activity;
using platform::ActivityRole;
using platform::Cost;
using platform::OpTag;
using platform::Pending;
using platform::TimeSource;
using platform::Work;
using platform::WorkKind;

Work costed(std::string label, double flops, double bytes, std::function<Status()> body = {}, OpTag tag = {}) {
  Work w;
  w.label = std::move(label);
  w.cost = ::asteria::platform::Cost{WorkKind::gemm, flops, bytes, 0};
  w.body = std::move(body);
  w.tag = tag;
  return w;
}

void expect_same_tag(const OpTag& actual, const OpTag& expected) {
  EXPECT_EQ(actual.step, expected.step);
  EXPECT_EQ(actual.op, expected.op);
  EXPECT_EQ(actual.launch, expected.launch);
  EXPECT_EQ(actual.role, expected.role) << platform::to_string(actual.role);
}

DeviceStreamOptions stream_options(TimeSource time, DeviceModel model) {
  DeviceStreamOptions o;
  o.time = time;
  o.model = model;
  return o;
}

struct Fixture {
  RealClock clock;
  RealSync sync;
  test::RecordingSink sink;  // before the executors that record on it
  platform::CompletionBoard board{sync};
};

TEST(DeviceModel, DurationIsLatencyPlusTheSlowerOfComputeAndMemory) {
  const DeviceModel model{1.0e9, 2.0e9, 0.5};
  EXPECT_DOUBLE_EQ(model.duration({WorkKind::gemm, 3.0e9, 1.0e9, 0}), 0.5 + 3.0);    // compute bound
  EXPECT_DOUBLE_EQ(model.duration({WorkKind::elementwise, 1.0e9, 8.0e9, 0}), 0.5 + 4.0);  // memory bound
  EXPECT_DOUBLE_EQ(model.duration({}), 0.5);
  const DeviceModel no_memory_term{1.0e9, 0.0, 0.0};
  EXPECT_DOUBLE_EQ(no_memory_term.duration({WorkKind::gemm, 2.0e9, 1.0e30, 0}), 2.0);
}

TEST(LinkModel, DurationIsLatencyPlusBytesOverBandwidthWhenModelled) {
  const LinkModel pcie{25.0e9, 1.0e-5};
  EXPECT_TRUE(pcie.modelled());
  EXPECT_DOUBLE_EQ(pcie.duration(50'000'000), 1.0e-5 + 0.002);
  EXPECT_FALSE(LinkModel{}.modelled());
  EXPECT_EQ(LinkModel{}.duration(1'000'000), 0.0);
}

TEST(RealClock, SleepUntilThePastOrNaNReturns) {
  RealClock clock;
  clock.sleep_until(-1.0);
  clock.sleep_until(std::numeric_limits<double>::quiet_NaN());
  const double t = clock.now() + 0.005;
  clock.sleep_until(t);
  EXPECT_GE(clock.now(), t);
}

TEST(RealSync, WaitingWithAForeignMutexIsRejected) {
  struct OtherMutex final : platform::Mutex {
    void lock() override {}
    void unlock() override {}
  } other;
  RealConditionVariable cv;
  EXPECT_THROW(cv.wait(other), std::invalid_argument);
}

TEST(ModelledDeviceStream, EachWorkLastsAtLeastItsModelledDuration) {
  Fixture f;
  DeviceStreamExecutor stream(stream_options(TimeSource::modelled, DeviceModel{1.0e9, 1.0e9, 0.0}), f.board, f.clock,
                              &f.sink);
  EXPECT_EQ(stream.time(), TimeSource::modelled);
  bool ran = false;
  const OpTag forward{3, 5, -1, ActivityRole::op};
  const OpTag fused{3, 6, 2, ActivityRole::launch};
  // 0.03 s of compute with a body, then 0.02 s of memory traffic without one.
  Pending a = stream.submit(costed("with body", 3.0e7, 0.0, [&] { ran = true; return Status::success(); }, forward));
  Pending b = stream.submit(costed("modelled only", 0.0, 2.0e7, {}, fused));
  ASSERT_TRUE(b.status().ok());
  EXPECT_TRUE(a.test());
  EXPECT_TRUE(ran);
  const std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0].label, "with body");
  EXPECT_EQ(recorded[0].track, "gpu0 stream");
  EXPECT_EQ(recorded[1].track, "gpu0 stream");
  expect_same_tag(recorded[0].tag, forward);
  expect_same_tag(recorded[1].tag, fused);
  EXPECT_EQ(recorded[1].cost.bytes(), 2.0e7);
  EXPECT_GE(recorded[0].end - recorded[0].start, 0.03);
  EXPECT_GE(recorded[1].end - recorded[1].start, 0.02);
  EXPECT_GE(recorded[1].start, recorded[0].end);  // in order, one at a time
  EXPECT_TRUE(recorded[0].ok && recorded[1].ok);
}

TEST(ModelledDeviceStream, ABodySlowerThanTheModelSetsTheDuration) {
  Fixture f;
  DeviceStreamExecutor stream(stream_options(TimeSource::modelled, DeviceModel{1.0e15, 1.0e15, 0.0}), f.board, f.clock,
                              &f.sink);
  ASSERT_TRUE(stream.submit(costed("slow body", 1.0, 1.0, [&] {
                      f.clock.sleep_for(0.02);
                      return Status::success();
                    }))
                  .status()
                  .ok());
  const std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_GE(recorded[0].end - recorded[0].start, 0.02);
}

TEST(ModelledDeviceStream, ADurationFunctionTakesThePlaceOfTheModel) {
  Fixture f;
  DeviceStreamOptions options = stream_options(TimeSource::modelled, DeviceModel{1.0e15, 1.0e15, 0.0});
  options.duration = [](const Cost& cost) { return cost.flops * 1e-9; };  // 20 ms for 2e7 flops
  options.unit = 3;
  DeviceStreamExecutor stream(options, f.board, f.clock, &f.sink);
  ASSERT_TRUE(stream.submit(costed("profiled kernel", 2.0e7, 0.0)).status().ok());
  const std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].track, "gpu3 stream");
  EXPECT_GE(recorded[0].end - recorded[0].start, 0.02);
}

TEST(MeasuredDeviceStream, WorkIsNotPacedByTheModel) {
  Fixture f;
  // Modelled at 10^4 s: pacing would never let this test finish.
  DeviceStreamExecutor stream(stream_options(TimeSource::measured, DeviceModel{1.0, 1.0, 0.0}), f.board, f.clock,
                              &f.sink);
  EXPECT_EQ(stream.time(), TimeSource::measured);
  int runs = 0;
  ASSERT_TRUE(stream.submit(costed("cpu kernel", 1.0e4, 0.0, [&] { ++runs; return Status::success(); })).status().ok());
  ASSERT_TRUE(stream.submit(costed("modelled only", 1.0e4, 0.0)).status().ok());
  EXPECT_EQ(runs, 1);
  const std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_LT(recorded[1].end - recorded[0].start, 1.0e3);
}

TEST(DeviceStream, SimulatedTimeIsNotARealBackendsTime) {
  Fixture f;
  EXPECT_THROW(DeviceStreamExecutor(stream_options(TimeSource::simulated, DeviceModel{}), f.board, f.clock),
               InputError);
  RealPlatformOptions simulated;
  simulated.time = TimeSource::simulated;
  EXPECT_THROW(RealPlatform{simulated}, InputError);
}

TEST(DeviceStream, AFailedWorkIsRecordedAsNotOk) {
  Fixture f;
  DeviceStreamExecutor stream(stream_options(TimeSource::measured, DeviceModel{}), f.board, f.clock, &f.sink);
  const OpTag tag{2, 1, -1, ActivityRole::op};
  EXPECT_EQ(stream.submit(costed("throws", 0, 0, []() -> Status { throw std::runtime_error("bad kernel"); }, tag))
                .status()
                .code(),
            StatusCode::failed);
  const std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_FALSE(recorded[0].ok);
  expect_same_tag(recorded[0].tag, tag);
}

TEST(ThreadPool, DrainsEveryQueuedWorkBeforeJoining) {
  Fixture f;
  std::atomic<int> ran{0};
  {
    ThreadPoolExecutor pool("pool", 2, f.board, f.clock);
    for (int i = 0; i < 50; ++i)
      (void)pool.submit(costed("tick", 0, 0, [&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        ++ran;
        return Status::success();
      }));
  }
  EXPECT_EQ(ran.load(), 50);
}

// In a child process: the address space limited to a little above what it uses, so thread
// stacks run out long before 2000 of them.
void limit_address_space() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  const rlim_t room = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{256} << 20);
  rlimit limit{};
  limit.rlim_cur = room;
  limit.rlim_max = room;
  if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
}

// Exit 0: refused with an error naming the host workers; 1: every thread started; 2: another error.
[[noreturn]] void exit_with(const std::function<void()>& start) {
  try {
    start();
  } catch (const InputError& e) {
    std::_Exit(std::string(e.what()).find("host-workers: threads:") == 0 ? 0 : 2);
  }
  std::_Exit(1);
}

[[noreturn]] void start_too_many_workers() {
  limit_address_space();
  Fixture f;
  exit_with([&] { ThreadPoolExecutor pool("host-workers", 2000, f.board, f.clock); });
}

[[noreturn]] void start_too_many_math_threads() {
  limit_address_space();
  RealPlatformOptions options;
  options.host_threads = 2000;
  exit_with([&] { RealPlatform platform(options); });
}

// More workers than the system lets the process start is an error naming the pool, not an abort
// (a thread left joinable while a constructor unwinds would terminate the process).
TEST(ThreadPool, MoreThreadsThanTheSystemAllowsIsAnErrorNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(start_too_many_workers(), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(start_too_many_math_threads(), ::testing::ExitedWithCode(0), "");
}

TEST(ThreadPool, NeedsAThreadAndDefaultsToAllCoresButOne) {
  Fixture f;
  EXPECT_THROW(ThreadPoolExecutor("none", 0, f.board, f.clock), std::invalid_argument);
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(default_host_threads(), std::max(1, cores - 1));
  RealPlatform platform;  // host_threads = 0: the default
  EXPECT_EQ(platform.host_workers().concurrency(), default_host_threads());
  RealPlatformOptions three;
  three.host_threads = 3;
  EXPECT_EQ(RealPlatform(three).host_workers().concurrency(), 3);
}

TEST(ThreadPool, BodylessWorkCompletesAtOnceAndIsRecorded) {
  Fixture f;
  ThreadPoolExecutor pool("pool", 1, f.board, f.clock, &f.sink, 2);
  const OpTag tag{1, 4, -1, ActivityRole::refresh_job};
  Pending p = pool.submit(costed("nothing to run", 1.0e12, 0.0, {}, tag));
  EXPECT_TRUE(p.test());
  const std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].track, "cpu2 worker 0");
  EXPECT_EQ(recorded[0].label, "nothing to run");
  expect_same_tag(recorded[0].tag, tag);
  EXPECT_EQ(recorded[0].end, recorded[0].start);
  EXPECT_TRUE(recorded[0].ok);
}

// Two works that each wait for the other to start run on two threads at once: each is recorded on
// its own thread's track.
TEST(ThreadPool, EachThreadRecordsOnItsOwnWorkerTrack) {
  Fixture f;
  ThreadPoolExecutor pool("pool", 2, f.board, f.clock, &f.sink, 1);
  std::atomic<int> started{0};
  auto meet = [&] {
    ++started;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (started.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    return started.load() >= 2 ? Status::success() : Status(StatusCode::failed, "the other work never started");
  };
  Pending a = pool.submit(costed("a", 0, 0, meet, {1, 0, -1, ActivityRole::refresh_job}));
  Pending b = pool.submit(costed("b", 0, 0, meet, {1, 1, -1, ActivityRole::refresh_job}));
  ASSERT_TRUE(a.status().ok());
  ASSERT_TRUE(b.status().ok());
  std::vector<Activity> recorded = f.sink.activities();
  ASSERT_EQ(recorded.size(), 2u);
  std::sort(recorded.begin(), recorded.end(), [](const Activity& x, const Activity& y) { return x.track < y.track; });
  EXPECT_EQ(recorded[0].track, "cpu1 worker 0");
  EXPECT_EQ(recorded[1].track, "cpu1 worker 1");
  EXPECT_LT(recorded[0].start, recorded[1].end) << "they overlapped";
  EXPECT_LT(recorded[1].start, recorded[0].end) << "they overlapped";
}

TEST(RealPlatformActivities, RecordsEveryExecutorsWorkWithTimesAndOutcome) {
  test::RecordingSink sink(2);
  RealPlatformOptions options;
  options.host_threads = 2;
  options.device_model = {1.0e12, 1.0e12, 0.0};
  options.activities = &sink;
  RealPlatform p(options);
  EXPECT_EQ(p.backend(), "real");
  EXPECT_EQ(p.activities(), &sink);
  EXPECT_EQ(p.time_source(), TimeSource::modelled);
  const OpTag kernel_tag{6, 2, -1, ActivityRole::op};
  const OpTag refresh_tag{6, 3, -1, ActivityRole::refresh_job};
  const double before = p.clock().now();
  ASSERT_TRUE(p.device_stream().submit(costed("kernel", 1.0e6, 0.0, {}, kernel_tag)).status().ok());
  EXPECT_FALSE(
      p.host_workers()
          .submit(costed("refresh", 0, 0, [] { return Status(StatusCode::no_convergence, "x"); }, refresh_tag))
          .status()
          .ok());
  const std::vector<Activity> recorded = sink.activities();
  ASSERT_EQ(recorded.size(), 2u);
  for (const Activity& a : recorded) {
    EXPECT_LE(before, a.start);
    EXPECT_LE(a.start, a.end);
  }
  EXPECT_LE(recorded[0].end, recorded[1].start) << "the refresh was submitted after the kernel ended";
  EXPECT_EQ(recorded[0].track, "gpu2 stream") << "tracks carry the sink's unit";
  EXPECT_EQ(recorded[0].cost.pieces()[0].kind, WorkKind::gemm);
  expect_same_tag(recorded[0].tag, kernel_tag);
  EXPECT_TRUE(recorded[0].ok);
  EXPECT_TRUE(recorded[1].track == "cpu2 worker 0" || recorded[1].track == "cpu2 worker 1") << recorded[1].track;
  EXPECT_EQ(recorded[1].label, "refresh");
  expect_same_tag(recorded[1].tag, refresh_tag);
  EXPECT_FALSE(recorded[1].ok);

  RealPlatformOptions measured;
  measured.time = TimeSource::measured;
  EXPECT_EQ(RealPlatform(measured).time_source(), TimeSource::measured);
  EXPECT_EQ(RealPlatform(measured).real_device_stream().time(), TimeSource::measured);
}

TEST(RealPlatformActivities, NothingIsRecordedWithoutASink) {
  RealPlatform quiet;  // no sink
  EXPECT_EQ(quiet.activities(), nullptr);
  ASSERT_TRUE(quiet.device_stream().submit(costed("kernel", 0, 0)).status().ok());
  ASSERT_TRUE(quiet.host_workers().submit(costed("refresh", 0, 0, [] { return Status::success(); })).status().ok());
  std::optional<platform::Region> a = quiet.memory().allocate(platform::Tier::host, 64, "a");
  std::optional<platform::Region> b = quiet.memory().allocate(platform::Tier::device, 64, "b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(quiet.memory().copy(*a, *b).status().ok());
  EXPECT_EQ(quiet.real_memory().totals(platform::Tier::host, platform::Tier::device).moves, 1u)
      << "moves are accounted all the same";
}

}  // namespace
}  // namespace asteria::real

// The real backend's executors beyond the seam contract: pacing in emulated mode, CPU mode,
// traces, draining on destruction, sizes. Timing checks are lower bounds only (a modelled
// duration is a floor the stream must respect); upper bounds would depend on machine load.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "core/real/device_stream_executor.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_platform.hpp"
#include "core/real/real_sync.hpp"
#include "core/real/thread_pool_executor.hpp"

namespace asteria::real {
namespace {

using platform::Cost;
using platform::Pending;
using platform::Work;
using platform::WorkKind;

Work costed(std::string label, double flops, double bytes, std::function<Status()> body = {}) {
  Work w;
  w.label = std::move(label);
  w.cost = {WorkKind::gemm, flops, bytes, 0};
  w.body = std::move(body);
  return w;
}

struct Fixture {
  RealClock clock;
  RealSync sync;
  WorkLog log;
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

TEST(EmulatedDeviceStream, EachWorkLastsAtLeastItsModelledDuration) {
  Fixture f;
  DeviceStreamExecutor stream({"device", DeviceMode::emulated, DeviceModel{1.0e9, 1.0e9, 0.0}}, f.board, f.clock, &f.log);
  EXPECT_EQ(stream.mode(), DeviceMode::emulated);
  bool ran = false;
  // 0.03 s of compute with a body, then 0.02 s of memory traffic without one.
  Pending a = stream.submit(costed("with body", 3.0e7, 0.0, [&] { ran = true; return Status::success(); }));
  Pending b = stream.submit(costed("modelled only", 0.0, 2.0e7));
  ASSERT_TRUE(b.status().ok());
  EXPECT_TRUE(a.test());
  EXPECT_TRUE(ran);
  const auto records = f.log.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].label, "with body");
  EXPECT_GE(records[0].finished - records[0].started, 0.03);
  EXPECT_GE(records[1].finished - records[1].started, 0.02);
  EXPECT_GE(records[1].started, records[0].finished);  // in order, one at a time
}

TEST(EmulatedDeviceStream, ABodySlowerThanTheModelSetsTheDuration) {
  Fixture f;
  DeviceStreamExecutor stream({"device", DeviceMode::emulated, DeviceModel{1.0e15, 1.0e15, 0.0}}, f.board, f.clock, &f.log);
  ASSERT_TRUE(stream.submit(costed("slow body", 1.0, 1.0, [&] {
                      f.clock.sleep_for(0.02);
                      return Status::success();
                    }))
                  .status()
                  .ok());
  const auto records = f.log.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_GE(records[0].finished - records[0].started, 0.02);
}

TEST(CpuDeviceStream, WorkIsNotPacedByTheModel) {
  Fixture f;
  // Modelled at 10^4 s: pacing would never let this test finish.
  DeviceStreamExecutor stream({"device", DeviceMode::cpu, DeviceModel{1.0, 1.0, 0.0}}, f.board, f.clock, &f.log);
  int runs = 0;
  ASSERT_TRUE(stream.submit(costed("cpu kernel", 1.0e4, 0.0, [&] { ++runs; return Status::success(); })).status().ok());
  ASSERT_TRUE(stream.submit(costed("modelled only", 1.0e4, 0.0)).status().ok());
  EXPECT_EQ(runs, 1);
  const auto records = f.log.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_LT(records[1].finished - records[0].started, 1.0e3);
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

TEST(ThreadPool, BodylessWorkCompletesAtOnceAndIsTraced) {
  Fixture f;
  ThreadPoolExecutor pool("pool", 1, f.board, f.clock, &f.log);
  Pending p = pool.submit(costed("nothing to run", 1.0e12, 0.0));
  EXPECT_TRUE(p.test());
  const auto records = f.log.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].executor, "pool");
  EXPECT_EQ(records[0].finished, records[0].started);
}

TEST(RealPlatformTrace, RecordsEveryExecutorsWorkWithTimesAndOutcome) {
  RealPlatformOptions options;
  options.host_threads = 2;
  options.device_model = {1.0e12, 1.0e12, 0.0};
  RealPlatform p(options);
  EXPECT_EQ(p.backend(), "real");
  ASSERT_TRUE(p.device_stream().submit(costed("kernel", 1.0e6, 0.0)).status().ok());
  EXPECT_FALSE(p.host_workers().submit(costed("refresh", 0, 0, [] { return Status(StatusCode::no_convergence, "x"); }))
                   .status()
                   .ok());
  const auto records = p.trace().records();
  ASSERT_EQ(records.size(), 2u);
  for (const WorkRecord& r : records) {
    EXPECT_LE(r.submitted, r.started);
    EXPECT_LE(r.started, r.finished);
  }
  EXPECT_EQ(records[0].executor, "device");
  EXPECT_EQ(records[0].kind, WorkKind::gemm);
  EXPECT_TRUE(records[0].ok);
  EXPECT_EQ(records[1].executor, "host-workers");
  EXPECT_EQ(records[1].label, "refresh");
  EXPECT_FALSE(records[1].ok);

  RealPlatformOptions quiet;
  quiet.record_trace = false;
  RealPlatform untraced(quiet);
  ASSERT_TRUE(untraced.device_stream().submit(costed("kernel", 0, 0)).status().ok());
  EXPECT_TRUE(untraced.trace().records().empty());
}

TEST(WorkLog, KeepsUpToItsLimitAndCountsTheRest) {
  WorkLog log(2);
  for (int i = 0; i < 5; ++i) log.record({"e", std::to_string(i), WorkKind::other, 0, 0, 0, true});
  EXPECT_EQ(log.records().size(), 2u);
  EXPECT_EQ(log.dropped(), 3u);
  log.clear();
  EXPECT_TRUE(log.records().empty());
  EXPECT_EQ(log.dropped(), 0u);
}

}  // namespace
}  // namespace asteria::real

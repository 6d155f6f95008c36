// The device stream on an asynchronous device (a GPU): a body only queues its operations, and
// the work completes when the fence taken after it is reached, in submission order, while the
// stream's thread goes on with the next body. A device whose fences the test opens by hand
// stands in for the GPU, so the bookkeeping is checked on any machine.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/ops/cpu_device.hpp"
#include "core/real/device_stream_executor.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_sync.hpp"
#include "tests/common/recording_sink.hpp"

namespace asteria::real {
namespace {

using platform::Pending;
using platform::TimeSource;
using platform::Work;

// Fences that are reached when the test opens them (in any order); one may be made to fail.
class GatedDevice final : public ops::Device {
 public:
  std::string_view name() const noexcept override { return "gated"; }
  bool host_addressable() const noexcept override { return true; }

  std::unique_ptr<ops::Fence> fence() override {
    std::lock_guard lock(gates_->mutex);
    const int index = static_cast<int>(gates_->open.size());
    gates_->open.push_back(false);
    gates_->fail.push_back(fail_next_);
    fail_next_ = false;
    return std::make_unique<GateFence>(gates_, index);
  }
  void open(int index) {
    {
      std::lock_guard lock(gates_->mutex);
      gates_->open.at(static_cast<std::size_t>(index)) = true;
    }
    gates_->changed.notify_all();
  }
  int fences_taken() {
    std::lock_guard lock(gates_->mutex);
    return static_cast<int>(gates_->open.size());
  }
  void fail_next_fence() { fail_next_ = true; }

 protected:
  void run(const ops::Operation& op) override { ops::run_on_cpu(op, ops::CpuContext{}); }
  void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
  void release(void* data) noexcept override { ::operator delete(data); }
  void copy_from_host(const ops::TensorRef& h, const ops::TensorRef& d) override { ops::copy_host_view(h, d); }
  void copy_to_host(const ops::TensorRef& d, const ops::TensorRef& h) override { ops::copy_host_view(d, h); }

 private:
  struct Gates {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<bool> open, fail;
  };
  class GateFence final : public ops::Fence {
   public:
    GateFence(std::shared_ptr<Gates> gates, int index) : gates_(std::move(gates)), index_(index) {}
    void wait() override {
      std::unique_lock lock(gates_->mutex);
      gates_->changed.wait(lock, [&] { return gates_->open[static_cast<std::size_t>(index_)]; });
      if (gates_->fail[static_cast<std::size_t>(index_)]) throw std::runtime_error("the device reported a fault");
    }

   private:
    std::shared_ptr<Gates> gates_;
    int index_;
  };
  std::shared_ptr<Gates> gates_ = std::make_shared<Gates>();
  bool fail_next_ = false;
};

struct Stream {
  explicit Stream(GatedDevice& device)
      : board(sync),
        stream(DeviceStreamOptions{"device", TimeSource::measured, {}, {}, 0, &device}, board, clock, &sink) {}
  RealClock clock;
  RealSync sync;
  platform::CompletionBoard board;
  asteria::test::RecordingSink sink;
  DeviceStreamExecutor stream;
};

Work labelled(std::string label, std::function<Status()> body) {
  Work w;
  w.label = std::move(label);
  w.body = std::move(body);
  return w;
}

void wait_until(const std::function<bool()>& condition) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!condition()) {
    ASSERT_LT(std::chrono::steady_clock::now(), limit) << "timed out";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(FencedDeviceStream, BodiesRunAheadAndWorksCompleteOnlyAtTheirFencesInOrder) {
  GatedDevice device;
  Stream s(device);
  ASSERT_TRUE(s.stream.fenced());
  std::atomic<int> bodies{0};
  std::vector<Pending> done;
  for (int i = 0; i < 3; ++i)
    done.push_back(s.stream.submit(labelled("launch " + std::to_string(i), [&] {
      ++bodies;
      return Status::success();
    })));
  // Every body ran (queued its work) before any fence was reached.
  wait_until([&] { return bodies.load() == 3 && device.fences_taken() == 3; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (const Pending& p : done) EXPECT_FALSE(p.test());
  // A later fence reached first still completes after the earlier works: submission order.
  device.open(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(done[0].test());
  EXPECT_FALSE(done[1].test());
  device.open(0);
  EXPECT_TRUE(done[0].status().ok());
  EXPECT_TRUE(done[1].status().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(done[2].test());
  device.open(2);
  EXPECT_TRUE(done[2].status().ok());
  // Activities end when the fence was reached, on the stream's track.
  const std::vector<platform::Activity> recorded = s.sink.activities();
  ASSERT_EQ(recorded.size(), 3u);
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(recorded[i].label, "launch " + std::to_string(i));
    EXPECT_EQ(recorded[i].track, platform::device_stream_track(0));
    EXPECT_LE(recorded[i].start, recorded[i].end);
    EXPECT_TRUE(recorded[i].ok);
  }
}

TEST(FencedDeviceStream, AFaultAtTheFenceFailsThatWorkAndNamesIt) {
  GatedDevice device;
  Stream s(device);
  device.fail_next_fence();
  const Pending bad = s.stream.submit(labelled("update layer0", [] { return Status::success(); }));
  const Pending good = s.stream.submit(labelled("update layer1", [] { return Status::success(); }));
  wait_until([&] { return device.fences_taken() == 2; });
  device.open(0);
  device.open(1);
  const Status status = bad.status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.reason().find("update layer0"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("fault"), std::string::npos) << status.reason();
  EXPECT_TRUE(good.status().ok());
}

TEST(FencedDeviceStream, AFailedBodyTakesNoFenceAndKeepsItsError) {
  GatedDevice device;
  Stream s(device);
  const Pending failed = s.stream.submit(labelled("launch", [] () -> Status { throw std::runtime_error("bad shape"); }));
  EXPECT_FALSE(failed.status().ok());
  EXPECT_NE(failed.status().reason().find("bad shape"), std::string::npos);
  EXPECT_EQ(device.fences_taken(), 0);
}

TEST(FencedDeviceStream, DestructionWaitsForEveryFence) {
  GatedDevice device;
  Pending last;
  std::thread opener;
  {
    Stream s(device);
    for (int i = 0; i < 4; ++i) last = s.stream.submit(labelled("w", [] { return Status::success(); }));
    opener = std::thread([&] {
      wait_until([&] { return device.fences_taken() == 4; });
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (int i = 0; i < 4; ++i) device.open(i);
    });
  }  // drains: returns only once all four completed
  EXPECT_TRUE(last.test());
  EXPECT_TRUE(last.status().ok());
  opener.join();
}

TEST(FencedDeviceStream, ModelledTimeWaitsForTheFenceWithinTheWork) {
  GatedDevice device;
  RealClock clock;
  RealSync sync;
  platform::CompletionBoard board(sync);
  DeviceStreamExecutor stream(DeviceStreamOptions{"device", TimeSource::modelled, {}, {}, 0, &device}, board, clock);
  EXPECT_FALSE(stream.fenced());
  const Pending p = stream.submit(labelled("w", [] { return Status::success(); }));
  wait_until([&] { return device.fences_taken() == 1; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(p.test());
  device.open(0);
  EXPECT_TRUE(p.status().ok());
}

}  // namespace
}  // namespace asteria::real

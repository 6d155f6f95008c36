// The fake backend: work runs at submit, completes at its modelled time; waiting advances the
// manual clock through the completions in time order.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "core/platform/fake/fake_platform.hpp"

namespace asteria::platform::fake {
namespace {

Work timed(std::string label, double seconds, int* runs = nullptr) {
  Work w;
  w.label = std::move(label);
  w.cost = platform::Cost{platform::WorkKind::other, seconds, 0.0, 0};  // the duration model below reads the duration from here
  if (runs) w.body = [runs] { ++*runs; return Status::success(); };
  return w;
}

FakeOptions flops_are_seconds() {
  FakeOptions o;
  o.device_duration = [](const Work& w) { return w.cost.flops(); };
  o.host_duration = [](const Work& w) { return w.cost.flops(); };
  o.host_workers = 2;
  return o;
}

TEST(FakePlatform, WorkRunsAtSubmitAndCompletesAtItsModelledTime) {
  FakePlatform p(flops_are_seconds());
  int runs = 0;
  Pending a = p.device_stream().submit(timed("a", 2.0, &runs));
  Pending b = p.device_stream().submit(timed("b", 3.0, &runs));
  EXPECT_EQ(runs, 2);
  EXPECT_FALSE(a.test());
  b.wait();  // in-order stream: b ends at 5 s, a already ended at 2 s
  EXPECT_DOUBLE_EQ(p.now(), 5.0);
  EXPECT_TRUE(a.test());
}

TEST(FakePlatform, PoolLanesOverlapAndWaitAnyReturnsTheEarliest) {
  FakePlatform p(flops_are_seconds());
  std::vector<Pending> pendings = {p.host_workers().submit(timed("slow", 4.0)),
                                   p.host_workers().submit(timed("fast", 1.0)),
                                   p.host_workers().submit(timed("queued", 1.0))};
  EXPECT_EQ(p.completions().wait_any(pendings), 1u);
  EXPECT_DOUBLE_EQ(p.now(), 1.0);
  pendings[2].wait();  // took the lane freed at 1 s
  EXPECT_DOUBLE_EQ(p.now(), 2.0);
  EXPECT_FALSE(pendings[0].test());
  p.advance_to(10.0);
  EXPECT_TRUE(pendings[0].test());
  EXPECT_DOUBLE_EQ(p.now(), 10.0);
}

TEST(FakePlatform, ExceptionInWorkBecomesAFailedStatus) {
  FakePlatform p;
  Work w;
  w.label = "boom";
  w.body = []() -> Status { throw std::runtime_error("bad"); };
  const Status s = p.host_workers().submit(std::move(w)).status();
  EXPECT_EQ(s.code(), StatusCode::failed);
  EXPECT_NE(s.reason().find("boom"), std::string::npos);
}

TEST(FakePlatform, WaitingWithNothingInFlightIsReportedAsADeadlock) {
  FakePlatform p;
  auto [promise, pending] = p.completions().make();
  EXPECT_THROW(pending.wait(), std::logic_error);
  promise.fulfil();
  EXPECT_TRUE(pending.test());
}

TEST(FakePlatform, MemoryBudgetsCopiesAndInjectedFailures) {
  FakeOptions o;
  o.device_capacity = 100;
  o.copy_bytes_per_second = 10.0;
  FakePlatform p(o);
  FakeMemory& m = p.fake_memory();
  auto a = m.allocate(Tier::device, 60, "a");
  ASSERT_TRUE(a);
  EXPECT_FALSE(m.allocate(Tier::device, 41, "too big"));
  auto h = m.allocate(Tier::host, 60, "h");
  std::memset(m.host_address(*a), 7, 60);
  EXPECT_TRUE(m.copy(*a, *h).status().ok());
  EXPECT_DOUBLE_EQ(p.now(), 6.0);  // 60 bytes at 10 B/s
  EXPECT_EQ(std::to_integer<int>(m.host_address(*h)[59]), 7);
  ASSERT_EQ(m.moves().size(), 1u);
  EXPECT_EQ(m.moves()[0].from, Tier::device);
  m.fail_next_copy({StatusCode::io_error, "injected"});
  EXPECT_EQ(m.copy(*h, *a).status().code(), StatusCode::io_error);
  m.release(*a);
  EXPECT_EQ(m.usage(Tier::device).resident, 0u);
  EXPECT_EQ(m.usage(Tier::device).peak_resident, 60u);
}

}  // namespace
}  // namespace asteria::platform::fake

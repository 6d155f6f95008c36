// Conformance: time and synchronization.
#include <vector>

#include "tests/platform/conformance.hpp"

namespace asteria::platform::conformance {
namespace {

TEST_P(PlatformConformance, ClockNeverGoesBackwards) {
  run([](Platform& p) {
    Seconds previous = p.clock().now();
    EXPECT_GE(previous, 0.0);
    for (int i = 0; i < 2000; ++i) {
      const Seconds t = p.clock().now();
      ASSERT_GE(t, previous) << "sample " << i;
      previous = t;
    }
  });
}

TEST_P(PlatformConformance, SleepUntilReturnsNoEarlierThanItsDeadline) {
  run([](Platform& p) {
    const Seconds deadline = p.clock().now() + 0.02;
    p.clock().sleep_until(deadline);
    EXPECT_GE(p.clock().now(), deadline);

    const Seconds before = p.clock().now();
    p.clock().sleep_for(0.01);
    EXPECT_GE(p.clock().now(), before + 0.01);

    const Seconds passed = p.clock().now() - 1.0;  // a deadline already behind us returns at once
    p.clock().sleep_until(passed);
    EXPECT_GE(p.clock().now(), passed);
  });
}

TEST_P(PlatformConformance, MutexExcludesConcurrentWorkers) {
  run([](Platform& p) {
    auto mutex = p.sync().make_mutex();
    long counter = 0;
    bool inside = false;
    int overlaps = 0;
    constexpr int kWorkers = 4;
    constexpr int kIncrements = 3000;
    std::vector<Pending> pending;
    for (int w = 0; w < kWorkers; ++w) {
      pending.push_back(p.host_workers().submit(work("increment", [&] {
        for (int i = 0; i < kIncrements; ++i) {
          LockGuard lock(*mutex);
          if (inside) ++overlaps;
          inside = true;
          ++counter;
          inside = false;
        }
        return Status::success();
      })));
    }
    for (const Pending& q : pending) ASSERT_TRUE(q.status().ok());
    LockGuard lock(*mutex);
    EXPECT_EQ(counter, long{kWorkers} * kIncrements);
    EXPECT_EQ(overlaps, 0);
  });
}

// A one-slot mailbox between the caller (producer) and a worker (consumer): each side sleeps on
// its own condition variable and is woken by the other's notify_one, hundreds of times.
TEST_P(ConcurrentPlatformConformance, ConditionVariablesWakeTheirWaiters) {
  run([](Platform& p) {
    auto mutex = p.sync().make_mutex();
    auto not_empty = p.sync().make_condition_variable();
    auto not_full = p.sync().make_condition_variable();
    bool full = false;
    int slot = 0;
    constexpr int kItems = 300;
    std::vector<int> received;
    Pending consumer = p.host_workers().submit(work("consume", [&] {
      for (int i = 0; i < kItems; ++i) {
        LockGuard lock(*mutex);
        not_empty->wait(*mutex, [&] { return full; });
        received.push_back(slot);
        full = false;
        not_full->notify_one();
      }
      return Status::success();
    }));
    for (int i = 0; i < kItems; ++i) {
      LockGuard lock(*mutex);
      not_full->wait(*mutex, [&] { return !full; });
      slot = i * 7;
      full = true;
      not_empty->notify_one();
    }
    ASSERT_TRUE(consumer.status().ok());
    ASSERT_EQ(received.size(), std::size_t{kItems});
    for (int i = 0; i < kItems; ++i) EXPECT_EQ(received[static_cast<std::size_t>(i)], i * 7);
  });
}

TEST_P(ConcurrentPlatformConformance, NotifyAllWakesEveryWaiter) {
  run([](Platform& p) {
    constexpr int kWaiters = 3;
    ASSERT_GE(p.host_workers().concurrency(), kWaiters) << "the harness asks every backend for 4 host workers";
    auto mutex = p.sync().make_mutex();
    auto changed = p.sync().make_condition_variable();
    bool go = false;
    int waiting = 0;
    std::vector<Pending> waiters;
    for (int i = 0; i < kWaiters; ++i) {
      waiters.push_back(p.host_workers().submit(work("waiter", [&] {
        LockGuard lock(*mutex);
        ++waiting;
        changed->notify_all();
        changed->wait(*mutex, [&] { return go; });
        return Status::success();
      })));
    }
    {
      LockGuard lock(*mutex);
      changed->wait(*mutex, [&] { return waiting == kWaiters; });  // all three are asleep or about to be
      go = true;
      changed->notify_all();
    }
    for (const Pending& w : waiters) EXPECT_TRUE(w.status().ok());
  });
}

}  // namespace
}  // namespace asteria::platform::conformance

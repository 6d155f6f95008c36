// Conformance: completions (Pending, Promise, wait_any).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "tests/platform/conformance.hpp"

namespace asteria::platform::conformance {
namespace {

TEST_P(PlatformConformance, ReadyAndInvalidPendings) {
  run([](Platform&) {
    EXPECT_FALSE(Pending().valid());
    const Pending done = Pending::ready(Status(StatusCode::no_convergence, "ready failure"));
    ASSERT_TRUE(done.valid());
    EXPECT_TRUE(done.test());
    done.wait();
    EXPECT_EQ(done.status().code(), StatusCode::no_convergence);
    EXPECT_EQ(done.status().reason(), "ready failure");
  });
}

TEST_P(PlatformConformance, PromiseFulfilledByTheCallerCompletesItsPending) {
  run([](Platform& p) {
    auto [promise, pending] = p.completions().make();
    ASSERT_TRUE(pending.valid());
    EXPECT_FALSE(pending.test());
    promise.fulfil(Status(StatusCode::io_error, "disk gone"));
    EXPECT_TRUE(pending.test());
    pending.wait();
    EXPECT_EQ(pending.status().code(), StatusCode::io_error);
    EXPECT_EQ(pending.status().reason(), "disk gone");
    const Pending copy = pending;  // copies share the outcome
    EXPECT_TRUE(copy.test());
    EXPECT_EQ(copy.status().reason(), "disk gone");
  });
}

TEST_P(ConcurrentPlatformConformance, PromiseFulfilledByAWorkerWakesTheWaiter) {
  run([](Platform& p) {
    auto [promise, pending] = p.completions().make();
    int payload = 0;
    Pending worker = p.host_workers().submit(work("fulfil later", [&p, &payload, promise = promise]() mutable {
      p.clock().sleep_for(0.01);
      payload = 42;
      promise.fulfil();
      return Status::success();
    }));
    pending.wait();
    EXPECT_TRUE(pending.test());
    EXPECT_TRUE(pending.status().ok());
    EXPECT_EQ(payload, 42);  // written before the fulfil, visible after the wait
    EXPECT_TRUE(worker.status().ok());
  });
}

TEST_P(PlatformConformance, AContinuationRunsOnceWhenEveryPartHasSettled) {
  run([](Platform& p) {
    // Parts already settled (and invalid ones): at once, on the caller.
    int now = 0;
    const std::vector<Pending> done{Pending::ready(), Pending()};
    Pending::when_all_settled(done, [&now] { ++now; });
    EXPECT_EQ(now, 1);
    Pending::when_all_settled({}, [&now] { ++now; });
    EXPECT_EQ(now, 2);
    // Parts still running: when the last of them is fulfilled, a join counting as its members.
    auto [first, first_pending] = p.completions().make();
    auto [second, second_pending] = p.completions().make();
    auto [third, third_pending] = p.completions().make();
    const std::vector<Pending> joined{second_pending, third_pending};
    const std::vector<Pending> parts{first_pending, p.completions().all_of(joined), Pending::ready()};
    int runs = 0;
    bool all_settled_then = false;
    Pending::when_all_settled(parts, [&] {
      ++runs;
      all_settled_then = first_pending.test() && second_pending.test() && third_pending.test();
    });
    EXPECT_EQ(runs, 0);
    third.fulfil();
    first.fulfil(Status(StatusCode::io_error, "a failed part settles too"));
    EXPECT_EQ(runs, 0);
    second.fulfil();
    EXPECT_EQ(runs, 1);
    EXPECT_TRUE(all_settled_then);
    EXPECT_EQ(first_pending.status().code(), StatusCode::io_error);
  });
}

TEST_P(ConcurrentPlatformConformance, AContinuationRunsWhereTheLastPartIsFulfilled) {
  run([](Platform& p) {
    auto [promise, pending] = p.completions().make();
    auto [continued, continued_pending] = p.completions().make();
    const std::vector<Pending> parts{pending};
    Pending::when_all_settled(parts, [continued = continued]() mutable { continued.fulfil(); });
    Pending worker = p.host_workers().submit(work("fulfil later", [&p, promise = promise]() mutable {
      p.clock().sleep_for(0.01);
      promise.fulfil();
      return Status::success();
    }));
    continued_pending.wait();  // fulfilled by the continuation, on the worker
    EXPECT_TRUE(pending.test());
    EXPECT_TRUE(worker.status().ok());
  });
}

TEST_P(PlatformConformance, WaitAnySkipsInvalidEntriesAndReturnsTheLowestFinished) {
  run([](Platform& p) {
    auto [promise, unfinished] = p.completions().make();
    const std::vector<Pending> pendings{Pending(), unfinished, Pending::ready(), Pending::ready()};
    EXPECT_EQ(p.completions().wait_any(pendings), 2u);
    promise.fulfil();
    EXPECT_EQ(p.completions().wait_any(pendings), 1u);
    const std::vector<Pending> none{Pending(), Pending()};
    EXPECT_THROW(p.completions().wait_any(none), std::invalid_argument);
  });
}

TEST_P(PlatformConformance, WaitAnyReturnsAFinishedWork) {
  run([](Platform& p) {
    std::vector<Pending> pendings;
    for (int i = 0; i < 3; ++i) pendings.push_back(p.host_workers().submit(work("quick", [] { return Status::success(); })));
    const std::size_t first = p.completions().wait_any(pendings);
    ASSERT_LT(first, pendings.size());
    EXPECT_TRUE(pendings[first].test());
    for (const Pending& q : pendings) EXPECT_TRUE(q.status().ok());
  });
}

// One work is held at a gate while another finishes: wait_any must name the finished one.
TEST_P(ConcurrentPlatformConformance, WaitAnyDoesNotWaitForTheSlowest) {
  run([](Platform& p) {
    ASSERT_GE(p.host_workers().concurrency(), 2) << "the harness asks every backend for 4 host workers";
    auto mutex = p.sync().make_mutex();
    auto opened = p.sync().make_condition_variable();
    bool open = false;
    Pending gated = p.host_workers().submit(work("gated", [&] {
      LockGuard lock(*mutex);
      opened->wait(*mutex, [&] { return open; });
      return Status::success();
    }));
    Pending quick = p.host_workers().submit(work("quick", [] { return Status::success(); }));
    const std::vector<Pending> pendings{gated, quick};
    EXPECT_EQ(p.completions().wait_any(pendings), 1u);
    EXPECT_FALSE(gated.test());
    {
      LockGuard lock(*mutex);
      open = true;
      opened->notify_all();
    }
    EXPECT_TRUE(gated.status().ok());
    EXPECT_EQ(p.completions().wait_any(pendings), 0u);
  });
}

// A platform's board notes when each work finished, on the platform's clock: a work a worker ran
// after a sleep finished within the wait; a join when its last member did; none while a work runs
// or for a Pending made ready.
TEST_P(ConcurrentPlatformConformance, FinishedWorkSaysWhenOnThePlatformsClock) {
  run([](Platform& p) {
    auto [promise, pending] = p.completions().make();
    EXPECT_FALSE(pending.finished_at().has_value());
    const Seconds before = p.clock().now();
    Pending slow = p.host_workers().submit(work("slow", [&p, promise = promise]() mutable {
      p.clock().sleep_for(0.02);
      promise.fulfil();
      return Status::success();
    }));
    Pending quick = p.host_workers().submit(work("quick", [] { return Status::success(); }));
    pending.wait();
    const Seconds after = p.clock().now();
    ASSERT_TRUE(pending.finished_at().has_value());
    EXPECT_GE(*pending.finished_at(), before + 0.02);
    EXPECT_LE(*pending.finished_at(), after);
    EXPECT_TRUE(slow.status().ok());
    EXPECT_TRUE(quick.status().ok());
    const std::vector<Pending> parts{quick, pending};
    const Pending both = p.completions().all_of(parts);
    ASSERT_TRUE(both.finished_at().has_value());
    EXPECT_EQ(*both.finished_at(), std::max(*quick.finished_at(), *pending.finished_at()));
    EXPECT_FALSE(Pending::ready().finished_at().has_value());
  });
}

}  // namespace
}  // namespace asteria::platform::conformance

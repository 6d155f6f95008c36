// Conformance: executors (device stream, host worker pool).
#include <stdexcept>
#include <vector>

#include "tests/platform/conformance.hpp"

namespace asteria::platform::conformance {
namespace {

void expect_each_work_runs_once(Platform& p, Executor& executor) {
  constexpr int kWorks = 64;
  std::vector<int> runs(kWorks, 0);
  std::vector<long> results(kWorks, 0);
  std::vector<Pending> pending;
  for (int i = 0; i < kWorks; ++i) {
    pending.push_back(executor.submit(work("square " + std::to_string(i), [&runs, &results, i] {
      ++runs[static_cast<std::size_t>(i)];
      results[static_cast<std::size_t>(i)] = long{i} * i;
      return Status::success();
    })));
  }
  for (const Pending& q : pending) ASSERT_TRUE(q.status().ok()) << executor.name();
  for (int i = 0; i < kWorks; ++i) {
    EXPECT_EQ(runs[static_cast<std::size_t>(i)], 1) << executor.name() << " work " << i;
    EXPECT_EQ(results[static_cast<std::size_t>(i)], long{i} * i) << executor.name() << " work " << i;
  }
  (void)p;
}

TEST_P(PlatformConformance, EveryWorkRunsExactlyOnceAndItsResultsAreVisible) {
  run([](Platform& p) {
    expect_each_work_runs_once(p, p.host_workers());
    expect_each_work_runs_once(p, p.device_stream());
  });
}

TEST_P(PlatformConformance, ExecutorsReportTheirConcurrency) {
  run([](Platform& p) {
    EXPECT_EQ(p.device_stream().concurrency(), 1);
    EXPECT_GE(p.host_workers().concurrency(), 1);
    EXPECT_FALSE(p.device_stream().name().empty());
    EXPECT_FALSE(p.host_workers().name().empty());
  });
}

TEST_P(PlatformConformance, ExceptionsAndFailuresBecomeFailedStatuses) {
  run([](Platform& p) {
    for (Executor* e : {&p.host_workers(), &p.device_stream()}) {
      const Status thrown = e->submit(work("thrower", []() -> Status { throw std::runtime_error("boom"); })).status();
      EXPECT_FALSE(thrown.ok()) << e->name();
      EXPECT_EQ(thrown.code(), StatusCode::failed) << e->name();
      EXPECT_NE(thrown.reason().find("boom"), std::string::npos) << thrown.message();
      EXPECT_NE(thrown.reason().find("thrower"), std::string::npos) << thrown.message();

      const Status returned =
          e->submit(work("diverges", [] { return Status(StatusCode::no_convergence, "sweep limit"); })).status();
      EXPECT_EQ(returned.code(), StatusCode::no_convergence) << e->name();
      EXPECT_EQ(returned.reason(), "sweep limit") << e->name();

      // The executor keeps working after a failure.
      EXPECT_TRUE(e->submit(work("after", [] { return Status::success(); })).status().ok()) << e->name();
    }
  });
}

TEST_P(PlatformConformance, WorkWithoutBodyCompletes) {
  run([](Platform& p) {
    Work empty;
    empty.label = "modelled only";
    empty.cost = ::asteria::platform::Cost{WorkKind::gemm, 1.0e6, 1.0e4, 64};
    EXPECT_TRUE(p.host_workers().submit(empty).status().ok());
    EXPECT_TRUE(p.device_stream().submit(empty).status().ok());
  });
}

TEST_P(PlatformConformance, DeviceStreamRunsAndCompletesInSubmissionOrder) {
  run([](Platform& p) {
    constexpr int kWorks = 100;
    std::vector<int> order;
    int out_of_order = 0;
    std::vector<Pending> pending;
    for (int i = 0; i < kWorks; ++i) {
      pending.push_back(p.device_stream().submit(work("kernel", [&order, &out_of_order, i] {
        if (static_cast<int>(order.size()) != i) ++out_of_order;
        order.push_back(i);
        return Status::success();
      })));
    }
    pending.back().wait();
    for (int i = 0; i < kWorks; ++i) EXPECT_TRUE(pending[static_cast<std::size_t>(i)].test()) << "work " << i;
    EXPECT_EQ(out_of_order, 0);
    ASSERT_EQ(order.size(), std::size_t{kWorks});
    for (int i = 0; i < kWorks; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  });
}

// Two works meet inside the pool: each arrives, then polls (sleeping on the platform clock)
// until it has seen the other. Both seeing two arrivals proves they ran at the same time.
TEST_P(ConcurrentPlatformConformance, HostWorkersOverlapWhenConcurrencyAllows) {
  run([](Platform& p) {
    ASSERT_GE(p.host_workers().concurrency(), 2) << "the harness asks every backend for 4 host workers";
    auto mutex = p.sync().make_mutex();
    int arrived = 0;
    int met = 0;
    auto meet = [&] {
      {
        LockGuard lock(*mutex);
        ++arrived;
      }
      const Seconds deadline = p.clock().now() + 10.0;
      while (p.clock().now() < deadline) {
        {
          LockGuard lock(*mutex);
          if (arrived == 2) {
            ++met;
            break;
          }
        }
        p.clock().sleep_for(0.001);
      }
      return Status::success();
    };
    Pending a = p.host_workers().submit(work("meet a", meet));
    Pending b = p.host_workers().submit(work("meet b", meet));
    ASSERT_TRUE(a.status().ok());
    ASSERT_TRUE(b.status().ok());
    LockGuard lock(*mutex);
    EXPECT_EQ(met, 2);
  });
}

// Every worker busy (all started, so nothing is queued), then plain a, urgent u, plain b: the
// first worker to free up takes u, then a, then b.
TEST_P(ConcurrentPlatformConformance, UrgentWorkOvertakesQueuedWork) {
  run([](Platform& p) {
    const int workers = p.host_workers().concurrency();
    auto mutex = p.sync().make_mutex();
    int started = 0;
    std::vector<std::string> order;
    CompletionBoard::Pair first_gate = p.completions().make();
    CompletionBoard::Pair other_gates = p.completions().make();
    std::vector<Pending> blockers;
    for (int i = 0; i < workers; ++i) {
      const Pending gate = i == 0 ? first_gate.pending : other_gates.pending;
      blockers.push_back(p.host_workers().submit(work("blocker", [&, gate] {
        {
          LockGuard lock(*mutex);
          ++started;
        }
        gate.wait();
        return Status::success();
      })));
    }
    const Seconds deadline = p.clock().now() + 10.0;
    for (;;) {
      {
        LockGuard lock(*mutex);
        if (started == workers) break;
      }
      ASSERT_LT(p.clock().now(), deadline) << "the blockers never all started";
      p.clock().sleep_for(0.001);
    }
    auto record = [&](std::string name) {
      return [&, name] {
        LockGuard lock(*mutex);
        order.push_back(name);
        return Status::success();
      };
    };
    Pending a = p.host_workers().submit(work("plain a", record("a")));
    Work urgent = work("urgent u", record("u"));
    urgent.urgent = true;
    Pending u = p.host_workers().submit(std::move(urgent));
    Pending b = p.host_workers().submit(work("plain b", record("b")));
    first_gate.promise.fulfil();
    ASSERT_TRUE(a.status().ok());
    ASSERT_TRUE(u.status().ok());
    ASSERT_TRUE(b.status().ok());
    other_gates.promise.fulfil();
    for (Pending& blocker : blockers) ASSERT_TRUE(blocker.status().ok());
    LockGuard lock(*mutex);
    EXPECT_EQ(order, (std::vector<std::string>{"u", "a", "b"}));
  });
}

}  // namespace
}  // namespace asteria::platform::conformance

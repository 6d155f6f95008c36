// The Simulation itself: units and nodes, mains and their exceptions, deadlocks, one engine per
// process, bad options, and a golden timeline of a tiny scenario read from the activities it
// records.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "core/common/error.hpp"
#include "sim/simulation.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using platform::Cost;
using platform::Numerics;
using platform::Pending;
using platform::Platform;
using platform::Region;
using platform::Tier;
using platform::Work;
using platform::WorkKind;
using testing::q;
using testing::run_in_child;
using testing::tiny_options;
using testing::tolerance;

Work modelled(std::string label, Cost cost) {
  Work w;
  w.label = std::move(label);
  w.cost = cost;
  return w;
}

TEST(Simulation, EachUnitRunsItsOwnMainOnItsOwnGpu) {
  run_in_child([] {
    std::deque<test::RecordingSink> sinks;  // a sink holds a mutex: it does not move
    for (int u = 0; u < 3; ++u) sinks.emplace_back(u);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.units = 3;  // two per node
    options.activities = [&sinks](int unit) { return &sinks.at(static_cast<std::size_t>(unit)); };
    Simulation sim(options);
    EXPECT_EQ(sim.units(), 3);
    EXPECT_EQ(sim.nodes(), 2);
    EXPECT_THROW(sim.platform(3), std::out_of_range);
    std::vector<int> seen;
    std::vector<double> ends(3, 0.0);
    sim.run([&](int unit, Platform& p) {
      EXPECT_EQ(&p, &sim.platform(unit));
      EXPECT_EQ(p.backend(), "sim");
      EXPECT_EQ(p.time_source(), platform::TimeSource::simulated);
      EXPECT_EQ(p.activities(), &sinks[static_cast<std::size_t>(unit)]);
      seen.push_back(unit);
      // 1 GFLOP at 2 TFLOP/s + 10 µs: the GPUs do not share.
      p.device_stream().submit(modelled("gemm", {WorkKind::gemm, 1e9, 0.0, 0, true})).wait();
      ends[static_cast<std::size_t>(unit)] = p.clock().now();
    });
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
    for (double end : ends) EXPECT_NEAR(end, 5.1e-4, tolerance(5.1e-4));
    EXPECT_NEAR(sim.now(), 5.1e-4, tolerance(5.1e-4));
    EXPECT_EQ(sim.activity_counts().executions, 3u);
    for (int u = 0; u < 3; ++u) {
      const std::vector<platform::Activity> recorded = sinks[static_cast<std::size_t>(u)].activities();
      ASSERT_EQ(recorded.size(), 1u) << "unit " << u;
      EXPECT_EQ(recorded[0].track, platform::device_stream_track(u)) << "each unit records on its own sink";
      EXPECT_EQ(recorded[0].track, "gpu" + std::to_string(u) + " stream");
    }
  });
}

TEST(Simulation, AMainsExceptionComesBackWithItsType) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.units = 2;
    Simulation sim(options);
    EXPECT_THROW(sim.run([](int unit, Platform& p) {
      if (unit == 1) {
        p.clock().sleep_for(0.25);
        throw std::invalid_argument("unit 1 gives up");
      }
      auto [promise, never] = p.completions().make();
      never.wait();  // unit 0 would wait forever: it is stopped when unit 1 throws
    }),
                 std::invalid_argument);
    EXPECT_NEAR(sim.now(), 0.25, tolerance(0.25));
  });
}

TEST(Simulation, MainsThatWaitForeverAreReportedAsADeadlock) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    try {
      sim.run([](int, Platform& p) {
        auto [promise, never] = p.completions().make();
        never.wait();
      });
      ADD_FAILURE() << "run returned";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("unit(s) 0"), std::string::npos) << e.what();
    }
  });
}

TEST(Simulation, OneSimulationPerProcessAndOneRunPerSimulation) {
  run_in_child([] {
    Simulation sim(tiny_options());
    sim.run([](int, Platform&) {});
    EXPECT_THROW(sim.run([](int, Platform&) {}), std::logic_error);
    EXPECT_THROW(Simulation{tiny_options()}, std::logic_error);
  });
}

TEST(Simulation, BlockingOutsideTheRunIsAnError) {
  run_in_child([] {
    Simulation sim(tiny_options());
    Platform& p = sim.platform(0);
    EXPECT_THROW(p.clock().sleep_until(1.0), std::logic_error);
    auto [promise, pending] = p.completions().make();
    EXPECT_FALSE(pending.test());
    EXPECT_THROW(pending.wait(), std::logic_error);
    promise.fulfil();  // fulfilling needs no actor
    EXPECT_TRUE(pending.test());
  });
}

TEST(Simulation, ASimulationThatNeverRunsCanStillBeDestroyed) {
  run_in_child([] {
    Simulation sim(tiny_options());
    Platform& p = sim.platform(0);
    std::optional<Region> a = p.memory().allocate(Tier::host, 100, "a");
    std::optional<Region> b = p.memory().allocate(Tier::device, 100, "b");
    ASSERT_TRUE(a && b);
    const Pending copy = p.memory().copy(*a, *b);
    const Pending work = p.host_workers().submit(modelled("refresh", {WorkKind::eigh, 0.0, 0.0, 10}));
    EXPECT_FALSE(copy.test());
    EXPECT_FALSE(work.test());
  });
}

TEST(Simulation, BadOptionsNameTheFieldAndAreRejectedBeforeTheEngineIsTaken) {
  run_in_child([] {
    SimulationOptions no_units = tiny_options();
    no_units.units = 0;
    EXPECT_THROW(Simulation{no_units}, InputError);

    SimulationOptions bad_link = tiny_options();
    bad_link.profile.host_to_device.bandwidth = q(0.0);
    try {
      Simulation sim(bad_link);
      ADD_FAILURE() << "a zero bandwidth was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "host_to_device.bandwidth");
      EXPECT_EQ(e.source(), "tests/sim/tiny_profile.hpp");
    }

    SimulationOptions fractional = tiny_options();
    fractional.profile.cpu.cores = q(2.5);
    EXPECT_THROW(Simulation{fractional}, InputError);

    Simulation good(tiny_options());  // the failures above did not use up the process's engine
    EXPECT_EQ(good.units(), 1);
  });
}

struct ExpectedSlice {
  std::string track;
  std::string label;
  platform::OpTag tag;
  Cost cost;
  double start_s;
  double end_s;
};

// The plan op each piece of the step serves (step 1); the copy keeps its cause's step and op
// and is recorded as a transfer.
constexpr platform::OpTag kForwardTag{1, 0, -1, platform::ActivityRole::op};
constexpr platform::OpTag kApplyTag{1, 1, 4, platform::ActivityRole::launch};
constexpr platform::OpTag kRefreshTag{1, 2, -1, platform::ActivityRole::refresh_job};
constexpr platform::OpTag kUploadCause{1, 3, -1, platform::ActivityRole::op};

Work tagged(std::string label, Cost cost, platform::OpTag tag) {
  Work w = modelled(std::move(label), cost);
  w.tag = tag;
  return w;
}

void expect_same_tag(const platform::OpTag& actual, const platform::OpTag& expected, std::size_t i) {
  EXPECT_EQ(actual.step, expected.step) << i;
  EXPECT_EQ(actual.op, expected.op) << i;
  EXPECT_EQ(actual.launch, expected.launch) << i;
  EXPECT_EQ(actual.role, expected.role) << i << ": " << platform::to_string(actual.role);
}

// A forward matmul (reduced precision) and an optimizer kernel on the stream, a refresh on a worker and an upload of
// 400 kB, all from t = 0 (tiny profile):
//   forward  1 GFLOP / (4 TFLOP/s · 0.5) + 10 µs          = 510 µs
//   apply    20 MB / (200 GB/s) + 10 µs                    = 110 µs, after forward
//   refresh  2e-9 · 100³                                   = 2 ms
//   upload   1 µs + 400 kB / (1 GB/s)                      = 401 µs
TEST(Simulation, GoldenTimelineOfATinyStep) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::values);
    options.activities = [&sink](int unit) { return unit == 0 ? &sink : nullptr; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      std::optional<Region> weights = p.memory().allocate(Tier::host, 400'000, "weights");
      std::optional<Region> on_device = p.memory().allocate(Tier::device, 400'000, "weights on device");
      ASSERT_TRUE(weights && on_device);
      std::vector<Pending> pending;
      pending.push_back(
          p.device_stream().submit(tagged("forward", {WorkKind::gemm, 1e9, 0.0, 0, true}, kForwardTag)));
      pending.push_back(p.device_stream().submit(tagged("apply", {WorkKind::elementwise, 0.0, 2e7, 0}, kApplyTag)));
      pending.push_back(
          p.host_workers().submit(tagged("refresh block 0", {WorkKind::eigh, 0.0, 0.0, 100}, kRefreshTag)));
      pending.push_back(p.memory().copy(*weights, *on_device, kUploadCause));
      for (const Pending& w : pending) ASSERT_TRUE(w.status().ok());
      p.memory().release(*weights);
      p.memory().release(*on_device);
    });

    const platform::OpTag upload_tag{kUploadCause.step, kUploadCause.op, kUploadCause.launch,
                                     platform::ActivityRole::transfer};
    const std::vector<ExpectedSlice> expected{
        {"cpu0 worker 0", "refresh block 0", kRefreshTag, {WorkKind::eigh, 0.0, 0.0, 100}, 0.0, 2e-3},
        {"gpu0 stream", "forward", kForwardTag, {WorkKind::gemm, 1e9, 0.0, 0, true}, 0.0, 5.1e-4},
        {"link h2d0", "weights -> weights on device", upload_tag, {WorkKind::other, 0.0, 4e5, 0}, 0.0, 4.01e-4},
        {"gpu0 stream", "apply", kApplyTag, {WorkKind::elementwise, 0.0, 2e7, 0}, 5.1e-4, 6.2e-4},
    };
    std::vector<platform::Activity> slices = sink.activities();
    std::sort(slices.begin(), slices.end(), [](const platform::Activity& a, const platform::Activity& b) {
      return std::tie(a.start, a.track) < std::tie(b.start, b.track);
    });
    ASSERT_EQ(slices.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(slices[i].track, expected[i].track) << i;
      EXPECT_EQ(slices[i].label, expected[i].label) << i;
      expect_same_tag(slices[i].tag, expected[i].tag, i);
      EXPECT_EQ(slices[i].cost, platform::Costs(expected[i].cost)) << i;
      EXPECT_NEAR(slices[i].start, expected[i].start_s, 1e-12) << i;
      EXPECT_NEAR(slices[i].end, expected[i].end_s, 1e-12) << i;
      EXPECT_TRUE(slices[i].ok) << i;
    }

    const std::vector<test::CounterRecord> expected_counters{
        {"gpu0 resident host bytes", 0.0, 400'000},
        {"gpu0 resident device bytes", 0.0, 400'000},
        {"gpu0 resident host bytes", 2e-3, 0},
        {"gpu0 resident device bytes", 2e-3, 0},
    };
    const std::vector<test::CounterRecord> counters = sink.counters();
    ASSERT_EQ(counters.size(), expected_counters.size());
    for (std::size_t i = 0; i < counters.size(); ++i) {
      EXPECT_EQ(counters[i].name, expected_counters[i].name) << i;
      EXPECT_NEAR(counters[i].time, expected_counters[i].time, 1e-12) << i;
      EXPECT_EQ(counters[i].value, expected_counters[i].value) << i;
    }
    EXPECT_EQ(sim.activity_counts().executions, 4u);  // the elementwise kernel: its launch, then its traffic
    EXPECT_EQ(sim.activity_counts().communications, 1u);
    EXPECT_EQ(sim.activity_counts().ios, 0u);
    EXPECT_NEAR(sim.now(), 2e-3, 1e-12);
  });
}

// A failed body is recorded as a failed activity, at the time the simulated work ended.
TEST(Simulation, AFailedWorkIsRecordedAsNotOk) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::values);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      Work w = tagged("refresh block 0", {WorkKind::eigh, 0.0, 0.0, 100}, kRefreshTag);
      w.body = [] { return Status(StatusCode::no_convergence, "did not converge"); };
      EXPECT_EQ(p.host_workers().submit(std::move(w)).status().code(), StatusCode::no_convergence);
    });
    const std::vector<platform::Activity> recorded = sink.activities();
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_FALSE(recorded[0].ok);
    expect_same_tag(recorded[0].tag, kRefreshTag, 0);
    EXPECT_NEAR(recorded[0].end, 2e-3, 1e-12);  // 2e-9 · 100³
  });
}

// Unit 1 has a sink, unit 0 none: unit 0's work, copies and allocations are recorded nowhere
// (they are still counted), unit 1's work on its own sink.
TEST(Simulation, NothingIsRecordedForAUnitWithoutASink) {
  run_in_child([] {
    test::RecordingSink sink(1);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.units = 2;
    options.activities = [&sink](int unit) { return unit == 1 ? &sink : nullptr; };
    Simulation sim(options);
    EXPECT_EQ(sim.platform(0).activities(), nullptr);
    EXPECT_EQ(sim.platform(1).activities(), &sink);
    sim.run([](int unit, Platform& p) {
      if (unit == 1) {
        p.host_workers().submit(modelled("refresh", {WorkKind::eigh, 0.0, 0.0, 10})).wait();
        return;
      }
      std::optional<Region> r = p.memory().allocate(Tier::host, 10, "r");
      std::optional<Region> d = p.memory().allocate(Tier::device, 10, "d");
      ASSERT_TRUE(r && d);
      ASSERT_TRUE(p.memory().copy(*r, *d).status().ok());
      p.device_stream().submit(modelled("forward", {WorkKind::gemm, 1e9, 0.0, 0, true})).wait();
      p.memory().release(*r);
      p.memory().release(*d);
    });
    const std::vector<platform::Activity> recorded = sink.activities();
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_EQ(recorded[0].track, "cpu1 worker 0");
    EXPECT_EQ(recorded[0].label, "refresh");
    EXPECT_TRUE(sink.counters().empty()) << "unit 0's occupancy is not unit 1's";
    EXPECT_EQ(sim.activity_counts().executions, 2u) << "activities are counted all the same";
    EXPECT_EQ(sim.activity_counts().communications, 1u);
  });
}

TEST(Simulation, NothingIsRecordedWhenNoSinkIsGiven) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    ASSERT_FALSE(options.activities) << "no sink unless asked for";
    Simulation sim(options);
    EXPECT_EQ(sim.platform(0).activities(), nullptr);
    sim.run([](int, Platform& p) {
      EXPECT_EQ(p.activities(), nullptr);
      std::optional<Region> r = p.memory().allocate(Tier::host, 10, "r");
      p.device_stream().submit(modelled("forward", {WorkKind::gemm, 1e9, 0.0, 0, true})).wait();
      p.memory().release(*r);
    });
    EXPECT_EQ(sim.activity_counts().executions, 1u) << "activities are counted all the same";
  });
}

}  // namespace
}  // namespace asteria::sim

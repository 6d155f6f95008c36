// Work on the device stream and on host workers takes the modelled time of its Cost (tiny
// profile: GPU 1 TFLOP/s fp32, 4 TFLOP/s bf16, GEMMs at half of peak, 10 µs per launch, 200 GB/s,
// eigh 1e-9·n³ s; a refresh worker's eigh 2e-9·n³ s; 2 cores).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <set>
#include <vector>

#include "core/common/error.hpp"
#include "sim/core_load.hpp"
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

// A training-step matmul (reduced precision).
Work gemm(double flops) { return modelled("gemm", {WorkKind::gemm, flops, 0.0, 0, true}); }
Work refresh(std::int64_t n) { return modelled("refresh", {WorkKind::eigh, 0.0, 0.0, n}); }

// Simulated seconds from now until `work` on `executor` completes.
double time_of(Platform& p, platform::Executor& executor, Work work) {
  const double start = p.clock().now();
  EXPECT_TRUE(executor.submit(std::move(work)).status().ok());
  return p.clock().now() - start;
}

TEST(SimExecutors, ALoneKernelTakesItsModelledTime) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      // 1 GFLOP at half of the bf16 peak (4 TFLOP/s), plus the launch.
      EXPECT_NEAR(time_of(p, p.device_stream(), gemm(1e9)), 1e9 / 2e12 + 1e-5, tolerance(5.1e-4));
      // Everything else runs in fp32: an optimizer GEMM or a Newton step of 1 GFLOP at half of
      // 1 TFLOP/s.
      EXPECT_NEAR(time_of(p, p.device_stream(), modelled("precondition", {WorkKind::gemm, 1e9, 0.0, 0})),
                  1e9 / 5e11 + 1e-5, tolerance(2.01e-3));
      EXPECT_NEAR(time_of(p, p.device_stream(), modelled("newton", {WorkKind::newton, 1e9, 0.0, 0})),
                  1e9 / 5e11 + 1e-5, tolerance(2.01e-3));
      // 20 MB over 200 GB/s, plus the launch.
      EXPECT_NEAR(time_of(p, p.device_stream(), modelled("apply", {WorkKind::elementwise, 0.0, 2e7, 0})),
                  1e-4 + 1e-5, tolerance(1.1e-4));
      // 1e-9 s x 100³, plus the launch.
      EXPECT_NEAR(time_of(p, p.device_stream(), modelled("eigh", {WorkKind::eigh, 0.0, 0.0, 100})), 1e-3 + 1e-5,
                  tolerance(1e-3));
    });
    EXPECT_EQ(sim.activity_counts().executions, 6u);  // the elementwise kernel: its launch, then its traffic
  });
}

TEST(SimExecutors, TrainingGemmsFollowTheChosenPrecision) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.gemm_precision = hw::Precision::fp32;
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      EXPECT_NEAR(time_of(p, p.device_stream(), gemm(1e9)), 1e9 / 5e11 + 1e-5, tolerance(2.01e-3));
    });
  });
}

TEST(SimExecutors, ARefreshOnAHostWorkerTakesCTimesNCubed) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      EXPECT_NEAR(time_of(p, p.host_workers(), refresh(100)), 2e-9 * 1e6, tolerance(2e-3));
      EXPECT_NEAR(time_of(p, p.host_workers(), refresh(200)), 2e-9 * 8e6, tolerance(1.6e-2));
    });
  });
}

// Tags of distinct plan ops: a plain op, a fused launch, a refresh job.
platform::OpTag kernel_tag(int i) {
  const platform::ActivityRole roles[] = {platform::ActivityRole::op, platform::ActivityRole::launch,
                                          platform::ActivityRole::refresh_job};
  return {7 + i, 10 * i, i == 1 ? 3 : -1, roles[i]};
}

// End times of refreshes of n = 100 (2 ms alone) submitted together.
std::vector<double> ends_of_refreshes(Platform& p, int count) {
  std::vector<Pending> pending;
  for (int i = 0; i < count; ++i) pending.push_back(p.host_workers().submit(refresh(100)));
  std::vector<double> ends;
  for (const Pending& r : pending) {
    r.wait();
    ends.push_back(p.clock().now());
  }
  return ends;
}

TEST(SimExecutors, RefreshesOverlapWhenTheCoresAllow) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.host_workers_per_unit = 2;  // on 2 cores
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      ASSERT_EQ(p.host_workers().concurrency(), 2);
      const std::vector<double> ends = ends_of_refreshes(p, 3);
      EXPECT_NEAR(ends[0], 2e-3, tolerance(2e-3));
      EXPECT_NEAR(ends[1], 2e-3, tolerance(2e-3));
      EXPECT_NEAR(ends[2], 4e-3, tolerance(4e-3)) << "the third waits for a free worker";
    });
    // Each worker records on its own track: two start at 0 on different workers, the third
    // starts on one of them when it is free.
    std::vector<platform::Activity> recorded = sink.on_track("cpu0 worker ");
    ASSERT_EQ(recorded.size(), 3u);
    std::sort(recorded.begin(), recorded.end(),
              [](const platform::Activity& a, const platform::Activity& b) { return a.start < b.start; });
    EXPECT_NE(recorded[0].track, recorded[1].track);
    for (const platform::Activity& a : recorded)
      EXPECT_TRUE(a.track == platform::host_worker_track(0, 0) || a.track == platform::host_worker_track(0, 1))
          << a.track;
    EXPECT_NEAR(recorded[2].start, 2e-3, tolerance(2e-3));
    EXPECT_NEAR(recorded[2].end, 4e-3, tolerance(4e-3));
  });
}

// Host workers start as their work needs them: 100000 declared, 3 refreshes at once start 3.
// Past the process's actor budget a worker does not start, and the run fails naming the option
// rather than SimGrid aborting.
TEST(SimExecutors, HostWorkersStartAsTheirWorkNeedsThemWithinTheActorBudget) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.host_workers_per_unit = 100000;
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      EXPECT_EQ(p.host_workers().concurrency(), 100000);
      const std::vector<double> ends = ends_of_refreshes(p, 3);
      for (const double end : ends) EXPECT_GT(end, 0.0);
    });
    std::set<std::string> tracks;
    for (const platform::Activity& a : sink.on_track("cpu0 worker ")) tracks.insert(a.track);
    EXPECT_EQ(tracks, (std::set<std::string>{platform::host_worker_track(0, 0), platform::host_worker_track(0, 1),
                                             platform::host_worker_track(0, 2)}));
  });
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.host_workers_per_unit = 8;
    options.max_actors = kActorsPerUnit + 2;  // room for 2 workers
    Simulation sim(options);
    try {
      sim.run([](int, Platform& p) { ends_of_refreshes(p, 4); });
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "host_workers_per_unit");
      EXPECT_NE(std::string(e.what()).find("not started"), std::string::npos) << e.what();
    }
  });
  // Units whose fixed actors and first workers alone pass the budget are refused up front.
  SimulationOptions too_many = tiny_options(Numerics::shapes);
  too_many.units = 3;
  too_many.max_actors = 2 * (1 + kActorsPerUnit);
  try {
    validate(too_many);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("simulated actors"), std::string::npos) << e.what();
  }
}

TEST(SimExecutors, WorkersShareACoreWhenThereAreMoreWorkersThanCores) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.profile.cpu.cores = q(1);
    options.host_workers_per_unit = 2;
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      const std::vector<double> ends = ends_of_refreshes(p, 2);
      EXPECT_NEAR(ends[0], 4e-3, tolerance(4e-3));
      EXPECT_NEAR(ends[1], 4e-3, tolerance(4e-3));
    });
  });
}

TEST(SimExecutors, AWorkerOccupiesItsThreadsCores) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.profile.cpu.cores = q(4);
    options.profile.cpu.threads_per_worker = q(2);
    options.host_workers_per_unit = 3;  // 6 threads on 4 cores
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      const std::vector<double> ends = ends_of_refreshes(p, 3);
      for (double end : ends) EXPECT_NEAR(end, 2e-3 * 6.0 / 4.0, tolerance(3e-3));
    });
  });
}

TEST(SimExecutors, TheDeviceStreamRunsOneWorkAfterAnother) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::values);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      std::vector<int> order;
      std::vector<Pending> pending;
      const std::vector<Cost> costs{{WorkKind::gemm, 1e9, 0.0, 0, true},  // 510 µs
                                    {WorkKind::elementwise, 0.0, 2e7, 0},  // 110 µs
                                    {WorkKind::eigh, 0.0, 0.0, 100}};      // 1 ms + 10 µs launch
      for (int i = 0; i < 3; ++i) {
        Work w = modelled("kernel " + std::to_string(i), costs[static_cast<std::size_t>(i)]);
        w.tag = kernel_tag(i);
        w.body = [&order, i] {
          order.push_back(i);
          return Status::success();
        };
        pending.push_back(p.device_stream().submit(std::move(w)));
      }
      const std::vector<double> expected_ends{5.1e-4, 6.2e-4, 1.63e-3};
      for (int i = 0; i < 3; ++i) {
        const Pending& k = pending[static_cast<std::size_t>(i)];
        k.wait();
        EXPECT_NEAR(p.clock().now(), expected_ends[static_cast<std::size_t>(i)], 1e-12) << "kernel " << i;
        if (i + 1 < 3) {
          EXPECT_FALSE(pending[static_cast<std::size_t>(i + 1)].test()) << "kernel " << i + 1;
        }
      }
      EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    });
    // One activity per kernel on the stream's track, in order, each with its Work's tag.
    const std::vector<platform::Activity> recorded = sink.activities();
    ASSERT_EQ(recorded.size(), 3u);
    const std::vector<double> starts{0.0, 5.1e-4, 6.2e-4};
    const std::vector<double> ends{5.1e-4, 6.2e-4, 1.63e-3};
    for (std::size_t i = 0; i < 3; ++i) {
      const platform::Activity& a = recorded[i];
      const platform::OpTag expected = kernel_tag(static_cast<int>(i));
      EXPECT_EQ(a.track, "gpu0 stream") << i;
      EXPECT_EQ(a.label, "kernel " + std::to_string(i));
      EXPECT_EQ(a.tag.step, expected.step) << i;
      EXPECT_EQ(a.tag.op, expected.op) << i;
      EXPECT_EQ(a.tag.launch, expected.launch) << i;
      EXPECT_EQ(a.tag.role, expected.role) << i;
      EXPECT_NEAR(a.start, starts[i], 1e-12) << i;
      EXPECT_NEAR(a.end, ends[i], 1e-12) << i;
      EXPECT_TRUE(a.ok) << i;
    }
  });
}

TEST(SimExecutors, ValuesRunBodiesWhenTheirTimeIsUpAndShapesSkipThem) {
  for (Numerics mode : {Numerics::values, Numerics::refresh, Numerics::shapes}) {
    SCOPED_TRACE(platform::to_string(mode));
    run_in_child([mode] {
      Simulation sim(tiny_options(mode));
      sim.run([mode](int, Platform& p) {
        double ran_at = -1.0;
        Work w = refresh(100);
        w.body = [&] {
          ran_at = p.clock().now();
          return Status(StatusCode::no_convergence, "from the body");
        };
        const Status status = p.host_workers().submit(std::move(w)).status();
        if (mode != Numerics::shapes) {
          EXPECT_NEAR(ran_at, 2e-3, tolerance(2e-3)) << "the body runs once the modelled time has passed";
          EXPECT_EQ(status.code(), StatusCode::no_convergence);
        } else {
          EXPECT_EQ(ran_at, -1.0) << "shapes skip bodies";
          EXPECT_TRUE(status.ok());
        }
      });
    });
  }
}

// A data-true body that waits (a publication for its refresh) lets simulated time pass inside
// the item: it is recorded as having waited first and worked after, its activity as long as its
// modelled work (the device's busy time for a run's energy), ending when it completed.
TEST(SimExecutors, ABodyThatWaitsIsRecordedAsWaitingBeforeItsWork) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::values);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      Work w = modelled("publish", {WorkKind::gemm, 1e9, 0.0, 0, true});  // 510 µs
      w.body = [&p] {
        p.clock().sleep_for(2e-3);  // waits for what it publishes
        return Status::success();
      };
      EXPECT_NEAR(time_of(p, p.device_stream(), std::move(w)), 2.51e-3, 1e-12);
    });
    const std::vector<platform::Activity> recorded = sink.activities();
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_NEAR(recorded[0].start, 2e-3, 1e-12);
    EXPECT_NEAR(recorded[0].end, 2.51e-3, 1e-12);
  });
}

TEST(SimExecutors, WorkSubmittedBeforeTheRunStartsWithIt) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    const Pending early = sim.platform(0).device_stream().submit(gemm(1e9));
    EXPECT_FALSE(early.test());
    sim.run([&](int, Platform& p) {
      early.wait();
      EXPECT_NEAR(p.clock().now(), 5.1e-4, tolerance(5.1e-4));
    });
    EXPECT_TRUE(early.test());
  });
}

TEST(SimExecutors, DefaultWorkerCountLeavesACoreForTheTrainingLoop) {
  hw::HardwareProfile p = testing::tiny_profile();
  p.cpu.cores = q(72);
  p.cpu.threads_per_worker = q(8);
  EXPECT_EQ(default_host_workers(p), 8);  // 71 cores / 8 threads
  p.cpu.cores = q(20);
  p.cpu.threads_per_worker = q(1);
  EXPECT_EQ(default_host_workers(p), 19);
  p.cpu.cores = q(1);
  EXPECT_EQ(default_host_workers(p), 1);  // at least one
}

}  // namespace
}  // namespace asteria::sim

namespace asteria::sim {
namespace {

// Host workers share the CPU's memory bandwidth: two memory-bound items at once take twice as
// long as one alone. Tiny profile: cpu.memory_bandwidth 5e10 B/s, no task latency, 2 cores.
TEST(SimExecutors, HostWorkersShareTheMemoryBandwidth) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.host_workers_per_unit = 2;
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      const Cost stream{WorkKind::elementwise, 0.0, 1e8, 0};  // 1e8 B / 5e10 B/s = 2 ms alone
      const double t0 = p.clock().now();
      p.host_workers().submit(modelled("alone", stream)).wait();
      EXPECT_NEAR(p.clock().now() - t0, 2e-3, 1e-9);
      const double t1 = p.clock().now();
      Pending a = p.host_workers().submit(modelled("a", stream));
      Pending b = p.host_workers().submit(modelled("b", stream));
      a.wait();
      b.wait();
      // 2e8 B through 5e10 B/s: 4 ms for both, though each has a core of its own.
      EXPECT_NEAR(p.clock().now() - t1, 4e-3, 1e-9);
      // Compute-bound items on two cores do not slow each other: 1e8 flops at 1e10 flop/s
      // (cpu.gemm_flops_per_core) is 10 ms, alone or beside another.
      const Cost compute{WorkKind::gemm, 1e8, 0.0, 64};
      const double t2 = p.clock().now();
      Pending c = p.host_workers().submit(modelled("c", compute));
      Pending d = p.host_workers().submit(modelled("d", compute));
      c.wait();
      d.wait();
      EXPECT_NEAR(p.clock().now() - t2, 1e-2, 1e-9);
    });
  });
}

// A refresh of two Kronecker factors is charged for both, each by its own rule: an eigh of each
// (2e-9·n³ on a worker) and a QR (1e-9·n³), not the heaviest piece's c·n³ for the sum.
TEST(SimExecutors, EveryPieceOfARefreshIsChargedByItsOwnRule) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      Work refresh = modelled("refresh", {WorkKind::eigh, 0.0, 0.0, 100});
      refresh.cost.add(Cost{WorkKind::eigh, 0.0, 0.0, 200});
      refresh.cost.add(Cost{WorkKind::qr, 0.0, 0.0, 200});
      const double t0 = p.clock().now();
      p.host_workers().submit(std::move(refresh)).wait();
      // 2e-9 x (100³ + 200³) + 1e-9 x 200³ = 2 ms + 16 ms + 8 ms.
      EXPECT_NEAR(p.clock().now() - t0, 26e-3, 1e-9);
    });
  });
}

}  // namespace
}  // namespace asteria::sim

namespace asteria::sim {
namespace {

// A CPU device of `cores` cores on the tiny profile: its stream on one thread, free launches,
// one host worker.
SimulationOptions cpu_device_options(int cores) {
  SimulationOptions options = tiny_options(Numerics::shapes);
  options.profile.device = hw::DeviceKind::cpu;
  options.profile.cpu.cores.value = cores;
  options.profile.gpu.device_threads.value = 1;
  options.profile.gpu.launch_latency.value = 0.0;
  options.profile.host_memory.unified = true;
  options.host_workers_per_unit = 1;
  return options;
}

// A CPU device: its stream runs on the host's cores, and its host<->device "copies" are memory
// copies that take a core too. One core: a 2 ms kernel and a 2 ms copy that start together end
// together at 4 ms. (Tiny profile: fp32 1e12 FLOP/s at efficiency 0.5; h2d 1e9 B/s, 1 µs.)
TEST(SimExecutors, ACpuDeviceSharesItsCoresWithCopies) {
  run_in_child([] {
    SimulationOptions options = cpu_device_options(1);
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      const double t0 = p.clock().now();
      Pending kernel = p.device_stream().submit(modelled("kernel", {WorkKind::gemm, 1e9, 0.0, 64}));  // 2 ms
      Pending copy = p.memory().transfer(platform::Tier::host, platform::Tier::device, 1999000, "weights", {});  // 1 µs + 1.999 ms
      kernel.wait();
      copy.wait();
      EXPECT_NEAR(p.clock().now() - t0, 4e-3, 1e-9);
    });
  });
}

}  // namespace
}  // namespace asteria::sim

namespace asteria::sim {
namespace {

// gpu.wake_latency w: work submitted to the idle device stream starts w later (the stream thread
// waking); work queued behind a busy stream starts at its predecessor's end. Tiny profile: a
// 1 GFLOP bf16 GEMM takes c = 1e9 / 2e12 + 10 µs launch = 510 µs.
TEST(SimExecutors, TheIdleDeviceStreamTakesItsWakeLatencyToStart) {
  run_in_child([] {
    constexpr double w = 4e-6, c = 5.1e-4, t1 = 2e-3, t2 = 5e-3;
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.profile.gpu.wake_latency = q(w);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([&](int, Platform& p) {
      Work a = gemm(1e9);
      a.label = "a";
      p.device_stream().submit(std::move(a)).wait();  // at t = 0, to the idle stream
      EXPECT_NEAR(p.clock().now(), w + c, 1e-12);
      p.clock().sleep_until(t1);  // the stream has gone idle
      Work b = gemm(1e9), second = gemm(1e9);
      b.label = "b";
      second.label = "c";
      Pending pb = p.device_stream().submit(std::move(b));
      Pending pc = p.device_stream().submit(std::move(second));  // queued while b runs
      pb.wait();
      pc.wait();
      EXPECT_NEAR(p.clock().now(), t1 + w + 2 * c, 1e-12);
      p.clock().sleep_until(t2);
      Work d = gemm(1e9);
      d.label = "d";
      p.device_stream().submit(std::move(d)).wait();
      EXPECT_NEAR(p.clock().now(), t2 + w + c, 1e-12);
      // Host workers keep their own fixed cost (cpu.task_latency, 0 here): no wake.
      const double t3 = p.clock().now();
      p.host_workers().submit(refresh(100)).wait();
      EXPECT_NEAR(p.clock().now() - t3, 2e-3, 1e-12);
    });
    // The recorded starts are after the wake, as a real trace records them.
    const std::vector<platform::Activity> recorded = sink.on_track("gpu0 stream");
    ASSERT_EQ(recorded.size(), 4u);
    const std::vector<std::string> labels{"a", "b", "c", "d"};
    const std::vector<double> starts{w, t1 + w, t1 + w + c, t2 + w};
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(recorded[i].label, labels[i]);
      EXPECT_NEAR(recorded[i].start, starts[i], 1e-12) << labels[i];
      EXPECT_NEAR(recorded[i].end, starts[i] + c, 1e-12) << labels[i];
    }
  });
}

// A data-free run's device stream runs on timers (timed_stream_executor.hpp), a data-true run's
// on an actor: the same items (submitted together to the idle stream, an urgent one among them
// and one submitted while another runs, one of no cost, one after the stream has gone idle) start
// and end at the same times, in the same order, on both.
TEST(SimExecutors, TheTimedDeviceStreamKeepsTheActorStreamsTimesAndOrder) {
  for (Numerics mode : {Numerics::shapes, Numerics::values}) {
    run_in_child([mode] {
      test::RecordingSink sink(0);
      SimulationOptions options = tiny_options(mode);
      constexpr double w = 3e-6, c = 5.1e-4, c2 = 5e8 / 2e12 + 1e-5, c3 = 2e9 / 2e12 + 1e-5, idle = 1e-3;
      options.profile.gpu.wake_latency = q(w);
      options.activities = [&sink](int) { return &sink; };
      Simulation sim(options);
      double resumed = 0;
      sim.run([&](int, Platform& p) {
        std::vector<Pending> pending;
        auto submit = [&](const std::string& label, double flops, bool urgent) {
          Work item = flops > 0 ? gemm(flops) : Work{};
          item.label = label;
          item.urgent = urgent;
          pending.push_back(p.device_stream().submit(std::move(item)));
        };
        submit("plain 1", 1e9, false);
        submit("plain 2", 2e9, false);
        submit("urgent 1", 1e9, true);  // looked at after the wake: ahead of the plain ones
        submit("nothing", 0, false);
        pending[2].wait();
        p.clock().sleep_for(c / 2);     // "plain 1" runs
        submit("urgent 2", 5e8, true);  // ahead of the queued "plain 2"
        for (const Pending& item : pending) EXPECT_TRUE(item.status().ok());
        p.clock().sleep_for(idle);  // the stream has gone idle: the next item wakes it
        resumed = p.clock().now();
        submit("late", 1e9, false);
        EXPECT_TRUE(pending.back().status().ok());
      });
      const std::vector<platform::Activity> recorded = sink.on_track("gpu0 stream");
      ASSERT_EQ(recorded.size(), 6u);
      const std::vector<std::string> order{"urgent 1", "plain 1", "urgent 2", "plain 2", "nothing", "late"};
      const std::vector<double> starts{w,          w + c,           w + 2 * c,      w + 2 * c + c2,
                                       w + 2 * c + c2 + c3, resumed + w};
      const std::vector<double> lasts{c, c, c2, c3, 0, c};
      for (std::size_t i = 0; i < order.size(); ++i) {
        EXPECT_EQ(recorded[i].label, order[i]) << i;
        EXPECT_NEAR(recorded[i].start, starts[i], 1e-12) << order[i];
        EXPECT_NEAR(recorded[i].end - recorded[i].start, lasts[i], 1e-12) << order[i];
      }
      EXPECT_NEAR(resumed, w + 2 * c + c2 + c3 + idle, 1e-12);
    });
  }
}

// A stream that has run nothing yet is idle: work submitted before the run wakes it too.
TEST(SimExecutors, WorkSubmittedBeforeTheRunWakesTheStream) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.profile.gpu.wake_latency = q(4e-6);
    Simulation sim(options);
    const Pending early = sim.platform(0).device_stream().submit(gemm(1e9));
    sim.run([&](int, Platform& p) {
      early.wait();
      EXPECT_NEAR(p.clock().now(), 4e-6 + 5.1e-4, 1e-12);
    });
  });
}

TEST(SimExecutors, ANegativeWakeLatencyIsRejectedNamingTheField) {
  SimulationOptions options = tiny_options(Numerics::shapes);
  options.profile.gpu.wake_latency = q(-1e-6);
  try {
    validate(options);
    ADD_FAILURE() << "a negative wake latency was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "gpu.wake_latency");
    EXPECT_EQ(e.source(), "tests/sim/tiny_profile.hpp");
    EXPECT_NE(std::string(e.what()).find("expected a finite number >= 0"), std::string::npos) << e.what();
  }
  options.profile.gpu.wake_latency = q(0.0);
  EXPECT_NO_THROW(validate(options));
}

}  // namespace
}  // namespace asteria::sim

namespace asteria::sim {
namespace {

// cpu.contention_slowdown s: a core computes 1 + s times as long while the unit's other cores
// compute too, and at full speed again once they stop, executions already running included. Two
// cores, s = 0.5, a CPU device on one and a worker on the other (tiny profile: a 2e9-flop GEMM
// takes 4 ms on the device; an eigh of n = 100 2 ms on a worker): together both run at 2/3 speed,
// so the eigh ends at 3 ms, and the kernel's last 2 ms run alone, ending at 5 ms (4 ms alone).
TEST(SimExecutors, BusyCoresSlowOneAnotherOnACpuDevice) {
  run_in_child([] {
    SimulationOptions options = cpu_device_options(2);
    options.profile.cpu.contention_slowdown.value = 0.5;
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      double t0 = p.clock().now();
      p.device_stream().submit(modelled("alone", {WorkKind::gemm, 2e9, 0.0, 64})).wait();
      EXPECT_NEAR(p.clock().now() - t0, 4e-3, 1e-9);

      t0 = p.clock().now();
      Pending kernel = p.device_stream().submit(modelled("kernel", {WorkKind::gemm, 2e9, 0.0, 64}));
      Pending refresh = p.host_workers().submit(modelled("refresh", {WorkKind::eigh, 0.0, 0.0, 100}));
      refresh.wait();
      EXPECT_NEAR(p.clock().now() - t0, 3e-3, 1e-9);
      kernel.wait();
      EXPECT_NEAR(p.clock().now() - t0, 5e-3, 1e-9);
    });
  });
}

// Without the field (a GPU profile, or a CPU whose cores do not contend) the same two run as if
// alone: the kernel takes its 4 ms beside the refresh.
TEST(SimExecutors, CoresDoNotSlowOneAnotherWithoutContention) {
  run_in_child([] {
    SimulationOptions options = cpu_device_options(2);
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      const double t0 = p.clock().now();
      Pending kernel = p.device_stream().submit(modelled("kernel", {WorkKind::gemm, 2e9, 0.0, 64}));
      Pending refresh = p.host_workers().submit(modelled("refresh", {WorkKind::eigh, 0.0, 0.0, 100}));
      refresh.wait();
      EXPECT_NEAR(p.clock().now() - t0, 2e-3, 1e-9);
      kernel.wait();
      EXPECT_NEAR(p.clock().now() - t0, 4e-3, 1e-9);
    });
  });
}

TEST(CoreLoad, PstateSpeedsFallWithOtherBusyCores) {
  EXPECT_EQ(contended_core_speeds(1, 0.5, 1e9), std::vector<double>{1e9});
  EXPECT_EQ(contended_core_speeds(4, 0.0, 1e9), std::vector<double>{1e9});
  const std::vector<double> speeds = contended_core_speeds(3, 0.5, 1e9);
  ASSERT_EQ(speeds.size(), 3u);
  EXPECT_DOUBLE_EQ(speeds[0], 1e9);
  EXPECT_DOUBLE_EQ(speeds[1], 1e9 / 1.25);
  EXPECT_DOUBLE_EQ(speeds[2], 1e9 / 1.5);
}

}  // namespace
}  // namespace asteria::sim

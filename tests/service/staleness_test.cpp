// The staleness bound: deterministic publication is S steps behind the synchronous schedule and
// independent of timing; both policies stay within S under random refresh durations; waits are
// visible optimizer time and match the clock.
#include <gtest/gtest.h>

#include <deque>

#include "core/common/error.hpp"
#include "core/optim/blocking.hpp"
#include "core/optim/factory.hpp"
#include "tests/service/service_harness.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::runtime::test {
namespace {

template <class T>
class Staleness : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Staleness, Dtypes);

double uniform(std::mt19937_64& r, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(r); }

// The synchronous loop of block_optimizer.hpp with every refresh installed S steps late at the
// block's publication point (delay 1: before accumulate; delay 0: before apply), written
// without the service.
template <linalg::Real T>
Trajectory<T> shifted_reference(const Scenario& s, int staleness) {
  const Data<T> data = make_data<T>(s);
  auto tensors = make_tensors<T>(s);
  struct Queued {
    std::unique_ptr<optim::RefreshJob<T>> job;
    Step due;
  };
  std::vector<std::vector<std::deque<Queued>>> queues(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) queues[i].resize(tensors[i]->blocks().size());
  std::vector<std::vector<T>> params = data.initial;
  Trajectory<T> run;
  for (Step t = 1; t <= s.steps; ++t) {
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const optim::MatrixShape shape = tensors[i]->matrix_shape();
      linalg::MatrixView<T> w_all(params[i].data(), shape.rows, shape.cols);
      linalg::ConstMatrixView<T> g_all(data.gradients[static_cast<std::size_t>(t - 1)][i].data(), shape.rows,
                                       shape.cols);
      for (std::size_t b = 0; b < tensors[i]->blocks().size(); ++b) {
        auto& block = tensors[i]->blocks()[b];
        optim::BlockOptimizer<T>& opt = *block.optimizer;
        const optim::BlockRegion& r = block.region;
        auto& queue = queues[i][b];
        auto publish_due = [&] {
          while (!queue.empty() && queue.front().due <= t) {
            opt.publish(::asteria::test::host_device(), *queue.front().job);
            queue.pop_front();
          }
        };
        if (opt.activation_delay() == 1) publish_due();
        opt.accumulate(::asteria::test::host_device(), g_all.block(r.row0, r.col0, r.rows, r.cols), t);
        if (opt.refresh_due(t)) {
          auto job = opt.snapshot(::asteria::test::host_device(), t);
          EXPECT_TRUE(job->run().ok());
          queue.push_back({std::move(job), t + opt.activation_delay() + staleness});
        }
        if (opt.activation_delay() == 0) publish_due();
        EXPECT_TRUE(opt.apply(::asteria::test::host_device(), w_all.block(r.row0, r.col0, r.rows, r.cols), g_all.block(r.row0, r.col0, r.rows, r.cols),
                              t));
      }
    }
    run.params.push_back(params);
  }
  return run;
}

TYPED_TEST(Staleness, DeterministicPolicyIsTheSynchronousScheduleShiftedByS_WhateverTheTiming) {
  using T = TypeParam;
  for (const Scenario& scenario : refreshing_optimizers()) {
    SCOPED_TRACE(scenario.name);
    const Trajectory<T> synchronous = run_synchronous<T>(scenario);
    for (int staleness : {1, 2, 5}) {
      SCOPED_TRACE("S = " + std::to_string(staleness));
      const ServiceOptions options = service_options(scenario.hp, staleness);
      const Trajectory<T> fast = run_on_fake<T>(scenario, options, random_refresh_durations(5, [](std::mt19937_64& r) {
                                           return uniform(r, 0.0, 0.2);
                                         }));
      const Trajectory<T> slow = run_on_fake<T>(scenario, options, random_refresh_durations(6, [](std::mt19937_64& r) {
                                           return std::exponential_distribution<double>(0.25)(r);
                                         }, 1));
      expect_same_trajectory(fast, slow);  // timing independence, final states included
      expect_same_trajectory(shifted_reference<T>(scenario, staleness), fast, /*compare_states=*/false);
      EXPECT_FALSE(same_final_params(synchronous, fast)) << "a stale preconditioner should change the result";
      EXPECT_EQ(fast.totals.max_staleness, staleness);
      EXPECT_EQ(slow.totals.max_staleness, staleness);
      EXPECT_EQ(fast.totals.visible_wait_s, 0.0);
      EXPECT_GT(slow.totals.visible_wait_s, 0.0);
    }
  }
}

// Refresh steps of a block that sees every gradient (schedules from shampoo.hpp and soap.hpp,
// written out here independently of the optimizers).
bool refresh_step(OptimizerKind kind, int frequency, Step k) {
  if (kind == OptimizerKind::shampoo) return k % frequency == 0;  // start = frequency
  return k == 1 || (k - 1) % frequency == 0;
}

// Property: for random durations, worker counts, bounds and both policies, the preconditioner a
// block uses at step t comes from a refresh the synchronous optimizer would already use, and
// from one no older than what it used S steps earlier.
TEST(StalenessProperty, RandomDurationsNeverExceedTheBoundUnderEitherPolicy) {
  using T = float;
  int opportunistic_lagging = 0;  // runs where eager publication still lagged (non-vacuous)
  int superseded_runs = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    const OptimizerKind kinds[] = {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo};
    const OptimizerKind kind = kinds[rng() % 3];
    const int frequency = 1 + static_cast<int>(rng() % 3);
    const int staleness = static_cast<int>(rng() % 6);
    const auto policy = rng() % 2 ? PublishPolicy::deterministic : PublishPolicy::opportunistic;
    const int workers = 1 + static_cast<int>(rng() % 4);
    const double slow_mean = 0.5 + uniform(rng, 0.0, 6.0);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + std::string(optim::to_string(kind)) + " f=" +
                 std::to_string(frequency) + " S=" + std::to_string(staleness) + " " +
                 std::string(to_string(policy)) + " workers=" + std::to_string(workers));

    Scenario scenario = make_scenario("property", kind, frequency, 16);
    scenario.shapes = {{6, 5}};
    scenario.seed = seed;
    const Data<T> data = make_data<T>(scenario);
    auto tensors = make_tensors<T>(scenario);
    platform::fake::FakePlatform fake(random_refresh_durations(seed, [slow_mean](std::mt19937_64& r) {
      return r() % 4 == 0 ? std::exponential_distribution<double>(1.0 / slow_mean)(r) : uniform(r, 0.0, 0.3);
    }, workers));
    PreconditionerService<T> service(fake, service_options(scenario.hp, staleness, policy));
    ServicedTensor<T> tensor(service, *tensors[0]);
    std::vector<T> params = data.initial[0];
    const int delay = kind == OptimizerKind::shampoo ? 0 : 1;
    for (Step t = 1; t <= scenario.steps; ++t) {
      const auto& grads = data.gradients[static_cast<std::size_t>(t - 1)][0];
      service.on_step_begin(t);
      fake.advance_to(fake.now() + uniform(rng, 0.1, 1.0));
      tensor.after_backward(grads, t);
      fake.advance_to(fake.now() + uniform(rng, 0.0, 0.5));
      // Newest refresh the synchronous optimizer uses at t, and the newest out of bound.
      Step synchronous = 0, required = 0;
      for (Step s = 1; s <= t; ++s)
        if (refresh_step(kind, frequency, s)) {
          if (s + delay <= t) synchronous = s;
          if (s + delay + staleness <= t) required = s;
        }
      for (BlockId id : tensor.block_ids()) {
        service.before_update(id, t);
        const Step used = service.version(id).stats_step;
        EXPECT_GE(used, required) << "step " << t << ": preconditioner older than the bound allows";
        EXPECT_LE(used, synchronous) << "step " << t << ": published before the synchronous optimizer would";
        EXPECT_LE(service.staleness(id, t), staleness);
      }
      tensor.update(params, grads, t);
      const StepMetrics m = service.on_step_end(t);
      EXPECT_LE(m.max_staleness, staleness);
      EXPECT_GE(m.refresh_backlog, 0);
    }
    EXPECT_EQ(service.totals().failures, 0);
    if (policy == PublishPolicy::deterministic && staleness > 0) {
      EXPECT_EQ(service.totals().max_staleness, staleness);
    }
    if (policy == PublishPolicy::opportunistic && service.totals().max_staleness > 0) ++opportunistic_lagging;
    if (service.totals().superseded > 0) ++superseded_runs;
  }
  EXPECT_GT(opportunistic_lagging, 0);
  EXPECT_GT(superseded_runs, 0);
}

TYPED_TEST(Staleness, FastRefreshesCostNoVisibleWait) {
  using T = TypeParam;
  for (const Scenario& scenario : refreshing_optimizers()) {
    SCOPED_TRACE(scenario.name);
    const bool delay_one = scenario.kind != OptimizerKind::shampoo;
    // A step takes 1.5 s; at most 3 jobs per worker per step, each under 0.4 s.
    for (int staleness : {0, 1, 3}) {
      if (staleness == 0 && !delay_one) continue;  // Shampoo at S = 0 needs the root in the same step
      for (auto policy : {PublishPolicy::deterministic, PublishPolicy::opportunistic}) {
        const Trajectory<T> run = run_on_fake<T>(scenario, service_options(scenario.hp, staleness, policy),
                                          random_refresh_durations(9, [](std::mt19937_64& r) {
                                            return uniform(r, 0.01, 0.4);
                                          }));
        EXPECT_GT(run.totals.submitted, 0);
        EXPECT_EQ(run.totals.visible_wait_s, 0.0) << "S = " << staleness;
        for (const StepMetrics& m : run.metrics) EXPECT_EQ(m.visible_wait_s, 0.0);
      }
    }
  }
}

// One Shampoo block, f = 1, S = 1, every refresh 5 s on one worker: the job of step 1 is due at
// the update of step 2 and still running, so that update waits for it.
TEST(StalenessWait, ALateJobMakesTheStepWaitExactlyUntilItFinishes) {
  using T = double;
  Scenario scenario = make_scenario("late", OptimizerKind::shampoo, 1, 4);
  scenario.shapes = {{3, 3}};
  const Data<T> data = make_data<T>(scenario);
  auto tensors = make_tensors<T>(scenario);
  platform::fake::FakeOptions fake_options;
  fake_options.host_workers = 1;
  fake_options.host_duration = [](const platform::Work&) { return 2.5; };  // a job: two parts, 5 s
  platform::fake::FakePlatform fake(fake_options);
  PreconditionerService<T> service(fake, service_options(scenario.hp, 1));
  ServicedTensor<T> tensor(service, *tensors[0]);
  std::vector<T> params = data.initial[0];
  std::vector<double> submitted_at;
  for (Step t = 1; t <= 3; ++t) {
    const auto& grads = data.gradients[static_cast<std::size_t>(t - 1)][0];
    service.on_step_begin(t);
    fake.advance_to(fake.now() + 1.0);
    submitted_at.push_back(fake.now());
    tensor.after_backward(grads, t);
    fake.advance_to(fake.now() + 0.5);
    const double before = fake.now();
    tensor.update(params, grads, t);
    const double advanced = fake.now() - before;
    const StepMetrics m = service.on_step_end(t);
    EXPECT_DOUBLE_EQ(m.visible_wait_s, advanced);
    if (t == 1) {
      EXPECT_EQ(advanced, 0.0);  // nothing is due yet
      EXPECT_EQ(m.max_staleness, 1);
    } else {
      // One worker: job k finishes at max(submit_k, finish_{k-1}) + 5; step t waits for job t-1.
      double finish = 0.0;
      for (Step k = 1; k <= t - 1; ++k) finish = std::max(submitted_at[static_cast<std::size_t>(k - 1)], finish) + 5.0;
      EXPECT_GT(advanced, 0.0);
      EXPECT_DOUBLE_EQ(fake.now(), finish);
      EXPECT_EQ(service.version(tensor.block_ids()[0]).stats_step, t - 1);
      EXPECT_EQ(service.version(tensor.block_ids()[0]).published_step, t);
    }
  }
  EXPECT_DOUBLE_EQ(service.totals().visible_wait_s,
                   service.history()[1].visible_wait_s + service.history()[2].visible_wait_s);
}

TEST(StalenessMetrics, RefreshWorkIsLabelledAndCostedFromTheJob) {
  using T = double;
  Scenario scenario = make_scenario("work", OptimizerKind::shampoo, 1, 1);
  scenario.shapes = {{3, 3}};
  std::vector<platform::Work> seen;
  platform::fake::FakeOptions fake_options;
  fake_options.host_duration = [&seen](const platform::Work& w) {
    seen.push_back({w.label, w.cost, {}});
    return 0.0;
  };
  ServiceOptions whole = service_options(scenario.hp, 0);
  whole.split_refresh_parts = false;  // one work per job
  (void)run_on_fake<T>(scenario, whole, fake_options);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].label, "refresh tensor0 block 0 (rows 0:3, cols 0:3)");
  // The same job built directly: its pieces, summed.
  auto twin = optim::make_block_optimizer<T>(OptimizerKind::shampoo, scenario.hp, 3, 3);
  const Data<T> data = make_data<T>(scenario);
  twin->accumulate(::asteria::test::host_device(), linalg::ConstMatrixView<T>(data.gradients[0][0].data(), 3, 3), 1);
  double flops = 0.0, bytes = 0.0;
  for (const platform::Cost& piece : twin->snapshot(::asteria::test::host_device(), 1)->cost()) {
    flops += piece.flops;
    bytes += piece.bytes;
  }
  EXPECT_GT(flops, 0.0);
  EXPECT_DOUBLE_EQ(seen[0].cost.flops(), flops);
  EXPECT_DOUBLE_EQ(seen[0].cost.bytes(), bytes);
}

TEST(StalenessMetrics, AJobsPartsAreWorksOfTheirOwnCostedFromThePartsAndRunSideBySide) {
  using T = double;
  Scenario scenario = make_scenario("parts", OptimizerKind::shampoo, 1, 1);
  scenario.shapes = {{3, 4}};  // one block (max_precond_dim 4)
  // The job built directly: its pieces, summed.
  auto twin = optim::make_block_optimizer<T>(OptimizerKind::shampoo, scenario.hp, 3, 4);
  const Data<T> data = make_data<T>(scenario);
  twin->accumulate(::asteria::test::host_device(), linalg::ConstMatrixView<T>(data.gradients[0][0].data(), 3, 4), 1);
  double flops = 0.0;
  for (const platform::Cost& piece : twin->snapshot(::asteria::test::host_device(), 1)->cost()) flops += piece.flops;
  ASSERT_GT(flops, 0.0);
  // Works last in proportion to their flops, the whole job 100 s; two workers.
  std::vector<platform::Work> seen;
  platform::fake::FakeOptions fake_options;
  fake_options.host_workers = 2;
  fake_options.host_duration = [&seen, flops](const platform::Work& w) {
    seen.push_back({w.label, w.cost, {}});
    return 100.0 * w.cost.flops() / flops;
  };
  const Trajectory<T> split = run_on_fake<T>(scenario, service_options(scenario.hp, 0), fake_options);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].label, "refresh tensor0 block 0 (rows 0:3, cols 0:4) (part 1/2)");
  EXPECT_EQ(seen[1].label, "refresh tensor0 block 0 (rows 0:3, cols 0:4) (part 2/2)");
  // Each part is charged its own factor: the left root (3 x 3) costs less than the right (4 x 4),
  // and together they are the job's cost.
  const double left = 100.0 * seen[0].cost.flops() / flops, right = 100.0 * seen[1].cost.flops() / flops;
  EXPECT_LT(left, right);
  EXPECT_NEAR(left + right, 100.0, 1e-9);
  // Submitted 1 s into the step, needed at 1.5 s: the parts run at once, so the update waits for
  // the right root alone; run whole, for both.
  EXPECT_NEAR(split.metrics[0].visible_wait_s, right - 0.5, 1e-9);
  seen.clear();
  ServiceOptions whole = service_options(scenario.hp, 0);
  whole.split_refresh_parts = false;
  const Trajectory<T> unsplit = run_on_fake<T>(scenario, whole, fake_options);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NEAR(unsplit.metrics[0].visible_wait_s, 100.0 - 0.5, 1e-9);
  // The numbers do not depend on it.
  EXPECT_EQ(split.params, unsplit.params);
  EXPECT_EQ(split.block_values, unsplit.block_values);
}

// Refreshes on the device (the synchronous baseline): each job is one work on the device stream
// (none on the host workers), charged the whole job, and the step waits for it there; the
// numbers are the host-site run's at S = 0, bit for bit (the CPU device solves on the host).
TEST(StalenessMetrics, RefreshesOnTheDeviceRunAsOneStreamWorkAndChangeNoNumber) {
  using T = double;
  Scenario scenario = make_scenario("on device", OptimizerKind::shampoo, 2, 6);
  scenario.shapes = {{3, 4}};
  std::vector<std::string> on_stream, on_workers;
  platform::fake::FakeOptions fake_options;
  fake_options.device_duration = [&on_stream](const platform::Work& w) {
    if (w.label.rfind("refresh ", 0) == 0) on_stream.push_back(w.label);
    return w.label.rfind("refresh ", 0) == 0 ? 3.0 : 0.0;
  };
  fake_options.host_duration = [&on_workers](const platform::Work& w) {
    on_workers.push_back(w.label);
    return 0.0;
  };
  ServiceOptions device = service_options(scenario.hp, 0);
  device.refresh_site = RefreshSite::device;
  const Trajectory<T> baseline = run_on_fake<T>(scenario, device, fake_options);
  EXPECT_TRUE(on_workers.empty());
  ASSERT_EQ(on_stream.size(), 3u);  // steps 2, 4, 6
  EXPECT_EQ(on_stream[0], "refresh tensor0 block 0 (rows 0:3, cols 0:4)");  // whole, no parts
  on_stream.clear();
  const Trajectory<T> asteria = run_on_fake<T>(scenario, service_options(scenario.hp, 0), fake_options);
  EXPECT_TRUE(on_stream.empty());
  EXPECT_EQ(on_workers.size(), 6u);  // two parts per job
  EXPECT_EQ(baseline.params, asteria.params);
  EXPECT_EQ(baseline.block_values, asteria.block_values);
  // A refresh step of the baseline waits for its refresh on the stream.
  EXPECT_GT(baseline.metrics[1].visible_wait_s, 0.0);
  // At S > 0 the device site is refused, naming the field.
  ServiceOptions stale = device;
  stale.staleness = 1;
  try {
    validate(stale, "test");
    ADD_FAILURE() << "S = 1 on the device was accepted";
  } catch (const ::asteria::InputError& e) {
    EXPECT_EQ(e.field(), "staleness");
  }
}

TEST(StalenessMetrics, QueueDepthCountsSubmittedUnpublishedJobs) {
  using T = double;
  Scenario scenario = make_scenario("queue", OptimizerKind::shampoo, 1, 6);
  scenario.shapes = {{3, 3}};
  platform::fake::FakeOptions fake_options;
  fake_options.host_duration = [](const platform::Work&) { return 100.0; };
  const Trajectory<T> run = run_on_fake<T>(scenario, service_options(scenario.hp, 2), fake_options);
  // Job s is published at the update of step s + 2: after step t, jobs t-1 and t are held.
  const std::int64_t expected_depth[] = {1, 2, 2, 2, 2, 2};
  for (std::size_t i = 0; i < run.metrics.size(); ++i) {
    EXPECT_EQ(run.metrics[i].refresh_backlog, expected_depth[i]) << "step " << i + 1;
    EXPECT_EQ(run.metrics[i].submitted, 1);
    EXPECT_EQ(run.metrics[i].published, i >= 2 ? 1 : 0);
    EXPECT_GT(run.metrics[i].live_job_bytes, 0u);
  }
  EXPECT_EQ(run.totals.max_staleness, 2);
  EXPECT_EQ(run.totals.published, 4);  // jobs of steps 5 and 6 are still in flight
  EXPECT_EQ(run.totals.finished, 4);   // jobs 1-4; 5 and 6 end after the last step
}

TEST(StalenessSkip, AJobDueAtASkippedStepIsPublishedThereAndTheBlockIsNotUpdated) {
  using T = double;
  Scenario scenario = make_scenario("skip", OptimizerKind::shampoo, 1, 4);
  scenario.shapes = {{3, 3}};
  scenario.nan_gradients = {{3, 0}};
  const Data<T> data = make_data<T>(scenario);
  auto tensors = make_tensors<T>(scenario);
  platform::fake::FakePlatform fake;
  PreconditionerService<T> service(fake, service_options(scenario.hp, 2));
  ServicedTensor<T> tensor(service, *tensors[0]);
  const BlockId id = tensor.block_ids()[0];
  std::vector<T> params = data.initial[0];
  for (Step t = 1; t <= 3; ++t) {
    const auto& grads = data.gradients[static_cast<std::size_t>(t - 1)][0];
    service.on_step_begin(t);
    tensor.after_backward(grads, t);
    const std::vector<T> before = params;
    tensor.update(params, grads, t);
    if (t == 3) {
      EXPECT_TRUE(bitwise_equal(before, params));
      EXPECT_THROW(service.before_update(id, t), std::logic_error);
    }
    const StepMetrics m = service.on_step_end(t);
    EXPECT_EQ(m.skipped_non_finite, t == 3 ? 1 : 0);
  }
  EXPECT_EQ(service.version(id).stats_step, 1);  // job 1 (due at 3) published at the skipped step
  EXPECT_EQ(service.version(id).published_step, 3);
  EXPECT_EQ(service.in_flight(id), 1u);  // job 2; step 3 made no job
}

}  // namespace
}  // namespace asteria::runtime::test

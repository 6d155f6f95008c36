// The optimizers' shape model (state layout and bytes, refresh schedule, refresh-job cost and
// bytes) against the real blocks driven with real gradients, for every optimizer over many
// shapes and hyperparameter variants; and ShapeBlock, the value-free block built on it, against
// the real block driven the same way.
#include "core/optim/shape_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/factory.hpp"
#include "core/optim/shampoo_refresh.hpp"
#include "core/optim/shape_block.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::optim {
namespace {

constexpr int kSteps = 40;

struct Shape {
  index rows;
  index cols;
};
// A scalar, row and column vectors, square, tall, wide and odd sizes.
const Shape kShapes[] = {{1, 1}, {1, 7}, {7, 1}, {6, 6}, {9, 4}, {4, 9}, {5, 3}, {13, 7}};

struct Case {
  OptimizerKind kind;
  Hyperparameters hp;
  std::string label;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  auto add = [&](OptimizerKind kind, const std::string& variant, auto&& change) {
    for (int f : {1, 3, 10}) {
      Hyperparameters hp = default_hyperparameters(kind);
      hp.precondition_frequency = f;
      change(hp);
      cases.push_back({kind, hp, std::string(to_string(kind)) + " " + variant + " f=" + std::to_string(f)});
    }
  };
  const auto keep = [](Hyperparameters&) {};
  for (OptimizerKind kind :
       {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo, OptimizerKind::muon})
    add(kind, "defaults", keep);
  add(OptimizerKind::shampoo, "beta1=0", [](Hyperparameters& hp) { hp.beta1 = 0.0; });
  add(OptimizerKind::shampoo, "no grafting", [](Hyperparameters& hp) { hp.grafting = false; });
  add(OptimizerKind::shampoo, "beta1=0 no grafting", [](Hyperparameters& hp) {
    hp.beta1 = 0.0;
    hp.grafting = false;
  });
  add(OptimizerKind::shampoo, "beta2=0.99", [](Hyperparameters& hp) { hp.beta2 = 0.99; });
  add(OptimizerKind::shampoo, "coupled Newton",
      [](Hyperparameters& hp) { hp.root_method = RootMethod::coupled_newton; });
  add(OptimizerKind::shampoo, "exponent 2", [](Hyperparameters& hp) { hp.exponent_override = 2.0; });
  add(OptimizerKind::shampoo, "coupled Newton exponent 3", [](Hyperparameters& hp) {
    hp.root_method = RootMethod::coupled_newton;
    hp.exponent_override = 3.0;
  });
  for (int start : {1, 2, 5, 7})
    add(OptimizerKind::shampoo, "start " + std::to_string(start),
        [start](Hyperparameters& hp) { hp.start_preconditioning_step = start; });
  for (OptimizerKind kind : {OptimizerKind::soap, OptimizerKind::kl_shampoo})
    add(kind, "Cholesky QR", [](Hyperparameters& hp) {
      hp.basis_orthogonalization = linalg::Orthogonalization::shifted_cholesky_qr;
    });
  add(OptimizerKind::soap, "rotate v", [](Hyperparameters& hp) { hp.soap_second_moment = SecondMomentOnRefresh::rotate; });
  return cases;
}

std::string shape_text(const Shape& s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

template <Real T>
linalg::Matrix<T> random_matrix(index rows, index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  linalg::Matrix<T> m(rows, cols);
  for (T& x : m.values()) x = static_cast<T>(normal(rng));
  return m;
}

void expect_same_costs(const std::vector<platform::Cost>& expected, const std::vector<platform::Cost>& actual,
                       const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(what + " piece " + std::to_string(i));
    EXPECT_EQ(expected[i].kind, actual[i].kind);
    EXPECT_EQ(expected[i].flops, actual[i].flops);
    EXPECT_EQ(expected[i].bytes, actual[i].bytes);
    EXPECT_EQ(expected[i].dimension, actual[i].dimension);
    EXPECT_EQ(expected[i].reduced_precision, actual[i].reduced_precision);
  }
}

bool has_refresh(OptimizerKind kind) { return kind == OptimizerKind::shampoo || kind == OptimizerKind::soap ||
                                              kind == OptimizerKind::kl_shampoo; }

// --- state ---

template <Real T>
void expect_layout_of_real_block(const Case& c, const Shape& s) {
  auto block = make_block_optimizer<T>(c.kind, c.hp, s.rows, s.cols);
  const std::vector<TensorSlot> layout = state_layout(c.kind, c.hp, s.rows, s.cols);
  const std::vector<TensorSlot>& real = block->state().layout();
  ASSERT_EQ(layout.size(), real.size());
  for (std::size_t i = 0; i < real.size(); ++i) {
    SCOPED_TRACE("slot " + std::to_string(i) + " " + real[i].name);
    EXPECT_EQ(layout[i].name, real[i].name);
    EXPECT_EQ(layout[i].rows, real[i].rows);
    EXPECT_EQ(layout[i].cols, real[i].cols);
    EXPECT_EQ(layout[i].offset, real[i].offset);
  }
  EXPECT_EQ(state_counters(c.kind, c.hp), block->state().counter_names());
  EXPECT_EQ(state_bytes(c.kind, c.hp, s.rows, s.cols, sizeof(T)), block->state().tensor_bytes());
}

TEST(ShapeModelState, LayoutCountersAndBytesAreTheRealBlocks) {
  for (const Case& c : all_cases())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(c.label + " " + shape_text(s));
      expect_layout_of_real_block<float>(c, s);
      expect_layout_of_real_block<double>(c, s);
    }
}

TEST(ShapeModelState, StatisticsCounterIsOneOfTheCounters) {
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.label);
    const std::string_view counter = statistics_counter(c.kind);
    EXPECT_EQ(counter.empty(), !has_refresh(c.kind));
    if (counter.empty()) continue;
    const std::vector<std::string> names = state_counters(c.kind, c.hp);
    EXPECT_NE(std::find(names.begin(), names.end(), counter), names.end());
  }
}

// ALGORITHMS.md "State sizes" by hand for one 6 x 3 fp32 block.
TEST(ShapeModelState, FollowsTheStateSizeTable) {
  const std::size_t m = 6, n = 3, e = 4;
  auto bytes = [](OptimizerKind kind) { return state_bytes(kind, default_hyperparameters(kind), 6, 3, 4); };
  EXPECT_EQ(bytes(OptimizerKind::adamw), 2 * m * n * e);
  // Factors, roots, momentum and the graft's second moment.
  EXPECT_EQ(bytes(OptimizerKind::shampoo), (2 * (m * m + n * n) + 2 * m * n) * e);
  EXPECT_EQ(bytes(OptimizerKind::soap), (2 * m * n + 2 * (m * m + n * n)) * e);
  // The table's m² + n² + m² + n² + m + n + mn, plus the start-of-step eigenvalues (m + n).
  EXPECT_EQ(bytes(OptimizerKind::kl_shampoo), (2 * (m * m + n * n) + 2 * (m + n) + m * n) * e);
  EXPECT_EQ(bytes(OptimizerKind::muon), m * n * e);
  Hyperparameters bare = default_hyperparameters(OptimizerKind::shampoo);
  bare.beta1 = 0.0;
  bare.grafting = false;
  EXPECT_EQ(state_bytes(OptimizerKind::shampoo, bare, 6, 3, 4), 2 * (m * m + n * n) * e);
}

TEST(ShapeModelState, RejectsNegativeSizes) {
  const Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  EXPECT_THROW(state_layout(OptimizerKind::soap, hp, -1, 3), InputError);
  EXPECT_THROW(state_bytes(OptimizerKind::soap, hp, 3, -2, 4), InputError);
  EXPECT_THROW(refresh_cost(OptimizerKind::soap, hp, -3, 3, 4, true), InputError);
  EXPECT_THROW(refresh_job_bytes(OptimizerKind::soap, hp, 3, -1, 4), InputError);
}

// --- schedule ---

TEST(ShapeModelSchedule, EqualsTheRealBlocksAfterEveryAccumulate) {
  for (const Case& c : all_cases())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(c.label + " " + shape_text(s));
      auto block = make_block_optimizer<float>(c.kind, c.hp, s.rows, s.cols);
      EXPECT_EQ(activation_delay(c.kind), block->activation_delay());
      EXPECT_FALSE(refresh_due_after(c.kind, c.hp, 0));
      EXPECT_EQ(refresh_due_after(c.kind, c.hp, 0), block->refresh_due(1));
      std::mt19937_64 rng(static_cast<std::uint64_t>(s.rows * 100 + s.cols));
      int due = 0;
      for (int n = 1; n <= kSteps; ++n) {
        block->accumulate(test::host_device(), random_matrix<float>(s.rows, s.cols, rng), n);
        const bool expected = refresh_due_after(c.kind, c.hp, n);
        EXPECT_EQ(expected, block->refresh_due(n)) << "after " << n << " accumulates";
        EXPECT_EQ(expected, block->refresh_due_after(n)) << n;
        EXPECT_EQ(block->statistics_updates(), has_refresh(c.kind) ? n : 0);
        due += expected ? 1 : 0;
      }
      // Not vacuous: every matrix method refreshes within 40 gradients (f <= 10, start <= 7).
      EXPECT_EQ(due > 0, has_refresh(c.kind));
    }
}

std::vector<std::int64_t> refreshes_within(OptimizerKind kind, const Hyperparameters& hp, std::int64_t horizon) {
  std::vector<std::int64_t> due;
  for (std::int64_t n = 0; n <= horizon; ++n)
    if (refresh_due_after(kind, hp, n)) due.push_back(n);
  return due;
}

// The real blocks answer refresh_due() through refresh_due_after(), so the schedule needs an
// oracle of its own: the references' rules, written out by hand.
TEST(ShapeModelSchedule, FollowsTheReferencesRules) {
  using Counts = std::vector<std::int64_t>;
  auto shampoo = [](int f, int start) {
    Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
    hp.precondition_frequency = f;
    hp.start_preconditioning_step = start;
    return refreshes_within(OptimizerKind::shampoo, hp, 40);
  };
  // DS: step == start or (step % f == 0 and step > start); start -1 means f.
  EXPECT_EQ(shampoo(10, -1), (Counts{10, 20, 30, 40}));
  EXPECT_EQ(shampoo(10, 7), (Counts{7, 10, 20, 30, 40}));
  EXPECT_EQ(shampoo(10, 25), (Counts{25, 30, 40}));
  EXPECT_EQ(shampoo(3, 1), (Counts{1, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39}));
  EXPECT_EQ(shampoo(3, 5), (Counts{5, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39}));
  EXPECT_EQ(shampoo(1, 38), (Counts{38, 39, 40}));
  // SOAP and KL-Shampoo: the initial basis after the first gradient, then every f.
  for (OptimizerKind kind : {OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    Hyperparameters hp = default_hyperparameters(kind);
    EXPECT_EQ(refreshes_within(kind, hp, 40), (Counts{1, 11, 21, 31}));
    hp.precondition_frequency = 3;
    EXPECT_EQ(refreshes_within(kind, hp, 40), (Counts{1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40}));
    hp.precondition_frequency = 1;
    EXPECT_EQ(refreshes_within(kind, hp, 40).size(), 40u);
  }
  for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::muon}) {
    Hyperparameters hp = default_hyperparameters(kind);
    EXPECT_TRUE(refreshes_within(kind, hp, 40).empty());
  }
}

// The schedule follows the block's own count, not the driver's step number.
TEST(ShapeModelSchedule, DependsOnTheStatisticsCountOnly) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 4;
  auto block = make_block_optimizer<double>(OptimizerKind::soap, hp, 3, 2);
  std::mt19937_64 rng(3);
  for (Step t : {5, 9, 100, 101, 102}) block->accumulate(test::host_device(), random_matrix<double>(3, 2, rng), t);
  EXPECT_EQ(block->statistics_updates(), 5);
  EXPECT_TRUE(block->refresh_due(102));  // the fifth gradient: 1 + 4
  EXPECT_TRUE(refresh_due_after(OptimizerKind::soap, hp, 5));
  EXPECT_FALSE(refresh_due_after(OptimizerKind::soap, hp, 4));
}

// --- refresh jobs ---

// Drives a real block through the synchronous schedule of block_optimizer.hpp for kSteps steps
// and checks every refresh job it snapshots against the shape model: cost() before run (cold
// until a refresh has been published, warm after) and bytes() before and after run.
template <Real T>
void expect_jobs_of_real_block(const Case& c, const Shape& s) {
  auto block = make_block_optimizer<T>(c.kind, c.hp, s.rows, s.cols);
  std::mt19937_64 rng(static_cast<std::uint64_t>(s.rows * 31 + s.cols));
  linalg::Matrix<T> weights = random_matrix<T>(s.rows, s.cols, rng);
  int published = 0, jobs = 0;
  for (Step t = 1; t <= kSteps; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    const linalg::Matrix<T> g = random_matrix<T>(s.rows, s.cols, rng);
    block->accumulate(test::host_device(), g, t);
    std::unique_ptr<RefreshJob<T>> job;
    if (block->refresh_due(t)) {
      job = block->snapshot(test::host_device(), t);
      ASSERT_NE(job, nullptr);
      ++jobs;
      const bool first = published == 0;
      expect_same_costs(refresh_cost(c.kind, c.hp, s.rows, s.cols, sizeof(T), first), job->cost(),
                        first ? "first job" : "warm job");
      EXPECT_EQ(refresh_job_bytes(c.kind, c.hp, s.rows, s.cols, sizeof(T)), job->bytes());
      if (job->run().ok()) {
        EXPECT_EQ(refresh_job_bytes(c.kind, c.hp, s.rows, s.cols, sizeof(T)), job->bytes()) << "after run";
      } else {
        job.reset();  // a failed refresh is not published
      }
    }
    auto publish = [&] {
      block->publish(test::host_device(), *job);
      ++published;
    };
    if (job && block->activation_delay() == 0) publish();
    ASSERT_TRUE(block->apply(test::host_device(), weights, g, t));
    if (job && block->activation_delay() == 1) publish();
  }
  if (has_refresh(c.kind)) {
    EXPECT_GE(jobs, 3);
    EXPECT_GE(published, 2) << "a warm job was checked";
  } else {
    EXPECT_EQ(jobs, 0);
    EXPECT_TRUE(refresh_cost(c.kind, c.hp, s.rows, s.cols, sizeof(T), true).empty());
    EXPECT_EQ(refresh_job_bytes(c.kind, c.hp, s.rows, s.cols, sizeof(T)), 0u);
  }
}

TEST(ShapeModelRefresh, CostsAndBytesAreTheRealJobs) {
  for (const Case& c : all_cases())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(c.label + " " + shape_text(s));
      expect_jobs_of_real_block<float>(c, s);
    }
}

TEST(ShapeModelRefresh, CostsAndBytesAreTheRealJobsInDouble) {
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.label);
    expect_jobs_of_real_block<double>(c, Shape{9, 4});
  }
}

// By hand: SOAP's warm refresh of a 6 x 4 fp32 block, per side change of basis 2n³, power
// step 2n³, Householder QR 4n³/3; the first refresh is one eigh per side, 9n³.
TEST(ShapeModelRefresh, SoapRefreshByHand) {
  const Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  const auto warm = refresh_cost(OptimizerKind::soap, hp, 6, 4, 4, false);
  ASSERT_EQ(warm.size(), 6u);
  EXPECT_EQ(warm[0].kind, platform::WorkKind::gemm);
  EXPECT_DOUBLE_EQ(warm[0].flops, 2.0 * 216);
  EXPECT_EQ(warm[2].kind, platform::WorkKind::qr);
  EXPECT_DOUBLE_EQ(warm[2].flops, 4.0 * 216 / 3.0);
  EXPECT_EQ(warm[5].dimension, 4);
  EXPECT_DOUBLE_EQ(warm[5].bytes, 2.0 * 16 * 4);
  const auto first = refresh_cost(OptimizerKind::soap, hp, 6, 4, 4, true);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].kind, platform::WorkKind::eigh);
  EXPECT_DOUBLE_EQ(first[1].flops, 9.0 * 64);
  // Per side: statistics, snapshot basis, new basis, change of basis, and the sort order.
  EXPECT_EQ(refresh_job_bytes(OptimizerKind::soap, hp, 6, 4, 4),
            4u * (36 + 16) * 4 + (6u + 4u) * sizeof(index));
  // KL-Shampoo keeps no change of basis.
  EXPECT_EQ(refresh_job_bytes(OptimizerKind::kl_shampoo, default_hyperparameters(OptimizerKind::kl_shampoo), 6, 4, 4),
            3u * (36 + 16) * 4 + (6u + 4u) * sizeof(index));
}

// By hand: Shampoo's eigen roots (eigh 9n³ + reconstruction n³ per side), and coupled Newton at
// its 20-iteration estimate: p = 4 costs 2 + 2 squarings + 2·1 multiplication = 6 n³ per
// iteration.
TEST(ShapeModelRefresh, ShampooRefreshByHand) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  const auto eigen = refresh_cost(OptimizerKind::shampoo, hp, 5, 3, 8, true);
  ASSERT_EQ(eigen.size(), 4u);
  EXPECT_EQ(eigen[0].kind, platform::WorkKind::eigh);
  EXPECT_DOUBLE_EQ(eigen[0].flops, 9.0 * 125);
  EXPECT_EQ(eigen[3].kind, platform::WorkKind::gemm);
  EXPECT_DOUBLE_EQ(eigen[3].flops, 27.0);
  EXPECT_EQ(eigen[3].dimension, 3);
  hp.root_method = RootMethod::coupled_newton;
  const auto newton = refresh_cost(OptimizerKind::shampoo, hp, 5, 3, 8, false);
  ASSERT_EQ(newton.size(), 2u);
  EXPECT_EQ(newton[0].kind, platform::WorkKind::newton);
  EXPECT_DOUBLE_EQ(newton[0].flops, 20 * 6.0 * 125);
  EXPECT_DOUBLE_EQ(newton[0].bytes, 4.0 * 20 * 25 * 8);
  EXPECT_EQ(refresh_job_bytes(OptimizerKind::shampoo, hp, 5, 3, 8), 2u * (25 + 9) * 8);
  hp.exponent_override = 2.5;  // coupled Newton needs an integer order, as ShampooBlock says
  EXPECT_THROW(refresh_cost(OptimizerKind::shampoo, hp, 5, 3, 8, true), InputError);
}

// After run() a coupled Newton job reports the iterations it took, not the estimate.
TEST(ShapeModelRefresh, NewtonJobReportsItsIterationsAfterRun) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  hp.root_method = RootMethod::coupled_newton;
  auto block = make_block_optimizer<double>(OptimizerKind::shampoo, hp, 4, 4);
  std::mt19937_64 rng(11);
  block->accumulate(test::host_device(), random_matrix<double>(4, 4, rng), 1);
  ASSERT_TRUE(block->refresh_due(1));
  auto job = block->snapshot(test::host_device(), 1);
  ASSERT_NE(job, nullptr);
  const auto estimate = refresh_cost(OptimizerKind::shampoo, hp, 4, 4, sizeof(double), true);
  expect_same_costs(estimate, job->cost(), "before run");
  ASSERT_TRUE(job->run().ok());
  const auto after = job->cost();
  ASSERT_EQ(after.size(), estimate.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    // Flops and bytes scale with the iteration count; an iteration costs the same either way.
    const double iterations = after[i].flops / estimate[i].flops * kNewtonIterationsEstimate;
    EXPECT_GE(iterations, 1.0);
    EXPECT_DOUBLE_EQ(iterations, std::round(iterations));
    EXPECT_DOUBLE_EQ(after[i].bytes / estimate[i].bytes * kNewtonIterationsEstimate, iterations);
  }
}

// --- phase costs ---

// By hand for a 768 x 1024 fp32 SOAP block: statistics are two SYRK-like products m²n + mn²;
// the update four basis GEMMs plus elementwise work; AdamW only updates.
TEST(ShapeModelPhases, SoapAndAdamWByHand) {
  const double m = 768, n = 1024;
  const PhaseCosts soap = phase_costs(OptimizerKind::soap, 768, 1024, 4);
  EXPECT_DOUBLE_EQ(soap.accumulate.flops, m * m * n + m * n * n);
  EXPECT_DOUBLE_EQ(soap.apply.flops, 4.0 * (m * m * n + m * n * n) + 12.0 * m * n);
  EXPECT_EQ(soap.apply.dimension, 1024);
  const PhaseCosts adamw = phase_costs(OptimizerKind::adamw, 768, 1024, 4);
  EXPECT_DOUBLE_EQ(adamw.accumulate.flops, 0.0);
  EXPECT_DOUBLE_EQ(adamw.apply.bytes, 7.0 * m * n * 4);
}

// --- ShapeBlock ---

// Drives a real block and a ShapeBlock of the same kind and shape through the same synchronous
// schedule: everything a runtime reads from them must agree.
template <Real T>
void expect_shape_block_is_the_real_block(const Case& c, const Shape& s) {
  auto real = make_block_optimizer<T>(c.kind, c.hp, s.rows, s.cols);
  ShapeBlock<T> shape(c.kind, c.hp, s.rows, s.cols);
  EXPECT_EQ(shape.name(), real->name());
  EXPECT_EQ(shape.activation_delay(), real->activation_delay());
  EXPECT_EQ(shape.state_bytes(), real->state().tensor_bytes());
  EXPECT_TRUE(shape.state().layout().empty());
  EXPECT_EQ(shape.state().tensor_bytes(), 0u);
  std::mt19937_64 rng(static_cast<std::uint64_t>(s.rows * 7 + s.cols));
  linalg::Matrix<T> real_weights = random_matrix<T>(s.rows, s.cols, rng);
  linalg::Matrix<T> shape_weights = real_weights;
  const linalg::Matrix<T> untouched = shape_weights;
  int jobs = 0;
  for (Step t = 1; t <= kSteps; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    const linalg::Matrix<T> g = random_matrix<T>(s.rows, s.cols, rng);
    real->accumulate(test::host_device(), g, t);
    shape.accumulate(test::host_device(), g, t);
    EXPECT_EQ(shape.statistics_updates(), real->statistics_updates());
    ASSERT_EQ(shape.refresh_due(t), real->refresh_due(t));
    EXPECT_EQ(shape.refresh_due_after(t + 1), real->refresh_due_after(t + 1));
    std::unique_ptr<RefreshJob<T>> real_job, shape_job;
    if (real->refresh_due(t)) {
      real_job = real->snapshot(test::host_device(), t);
      shape_job = shape.snapshot(test::host_device(), t);
      ASSERT_NE(shape_job, nullptr);
      ++jobs;
      EXPECT_EQ(shape_job->stats_step(), real_job->stats_step());
      expect_same_costs(real_job->cost(), shape_job->cost(), "job " + std::to_string(jobs));
      EXPECT_EQ(shape_job->bytes(), real_job->bytes());
      EXPECT_TRUE(shape_job->run().ok());
      if (!real_job->run().ok()) {  // neither is published
        real_job.reset();
        shape_job.reset();
      }
    }
    auto publish = [&] {
      real->publish(test::host_device(), *real_job);
      shape.publish(test::host_device(), *shape_job);
    };
    if (real_job && real->activation_delay() == 0) publish();
    ASSERT_TRUE(real->apply(test::host_device(), real_weights, g, t));
    EXPECT_TRUE(shape.apply(test::host_device(), shape_weights, g, t));
    if (real_job && real->activation_delay() == 1) publish();
  }
  EXPECT_EQ(shape.snapshot(test::host_device(), kSteps + 1) == nullptr, !has_refresh(c.kind));
  EXPECT_EQ(jobs > 0, has_refresh(c.kind));
  EXPECT_EQ(std::vector<T>(shape_weights.values().begin(), shape_weights.values().end()),
            std::vector<T>(untouched.values().begin(), untouched.values().end()));
  EXPECT_TRUE(shape.state().layout().empty());
}

TEST(ShapeBlock, ReportsWhatTheRealBlockReports) {
  for (const Case& c : all_cases())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(c.label + " " + shape_text(s));
      expect_shape_block_is_the_real_block<float>(c, s);
    }
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.label + " double");
    expect_shape_block_is_the_real_block<double>(c, Shape{4, 9});
  }
}

TEST(ShapeBlock, CountsPublications) {
  const Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  ShapeBlock<float> block(OptimizerKind::kl_shampoo, hp, 8, 3);
  const linalg::Matrix<float> g(8, 3);
  block.accumulate(test::host_device(), g, 1);
  ASSERT_TRUE(block.refresh_due(1));
  const auto first = block.snapshot(test::host_device(), 1);
  ASSERT_NE(first, nullptr);
  expect_same_costs(refresh_cost(OptimizerKind::kl_shampoo, hp, 8, 3, sizeof(float), true), first->cost(), "first");
  block.publish(test::host_device(), *first);
  EXPECT_EQ(block.publications(), 1);
  const auto warm = block.snapshot(test::host_device(), 1);
  ASSERT_NE(warm, nullptr);
  expect_same_costs(refresh_cost(OptimizerKind::kl_shampoo, hp, 8, 3, sizeof(float), false), warm->cost(), "warm");
}

TEST(ShapeBlock, RejectsWhatTheRealBlockRejects) {
  Hyperparameters bad = default_hyperparameters(OptimizerKind::soap);
  bad.beta1 = 1.5;
  EXPECT_THROW(ShapeBlock<float>(OptimizerKind::soap, bad, 4, 4), InputError);
  bad = default_hyperparameters(OptimizerKind::adamw);
  bad.precondition_frequency = 0;
  EXPECT_THROW(ShapeBlock<double>(OptimizerKind::adamw, bad, 4, 4), InputError);
  EXPECT_THROW(ShapeBlock<float>(OptimizerKind::muon, default_hyperparameters(OptimizerKind::muon), -1, 4), InputError);
  Hyperparameters newton = default_hyperparameters(OptimizerKind::shampoo);
  newton.root_method = RootMethod::coupled_newton;
  newton.exponent_override = 2.5;
  EXPECT_THROW(make_block_optimizer<float>(OptimizerKind::shampoo, newton, 4, 4), InputError);
  EXPECT_THROW(ShapeBlock<float>(OptimizerKind::shampoo, newton, 4, 4), InputError);
}

// --- BlockState built from a layout ---

TEST(BlockStateLayout, AddsTheLayoutAndFindsSlotsByName) {
  const Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  BlockState<float> state;
  state.add_layout(state_layout(OptimizerKind::soap, hp, 3, 2), state_counters(OptimizerKind::soap, hp));
  EXPECT_EQ(state.value_count(), 2u * 6 + 2u * (9 + 4));
  EXPECT_EQ(state.tensor_slot("stats_right"), 3);
  EXPECT_EQ(state.tensor(state.tensor_slot("basis_left")).rows(), 3);
  EXPECT_EQ(state.find_tensor("momentum"), -1);
  EXPECT_EQ(state.counter_slot("basis_version"), 2);
  EXPECT_THROW(state.tensor_slot("momentum"), std::logic_error);
  EXPECT_THROW(state.counter_slot("stats_steps"), std::logic_error);
}

TEST(BlockStateLayout, RejectsASlotOutOfPlace) {
  BlockState<double> state;
  const std::vector<TensorSlot> gap = {{"a", 2, 2, 0}, {"b", 1, 3, 5}};  // b belongs at offset 4
  EXPECT_THROW(state.add_layout(gap, {}), std::logic_error);
}

}  // namespace
}  // namespace asteria::optim

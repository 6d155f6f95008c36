// A refresh job's result travels as bytes (RefreshJob::save_result / load_result): a job that
// loads another's result instead of running publishes exactly what the job that ran would have,
// so data-parallel ranks that share refreshes stay bitwise equal. The shape model reports the
// same result size as the real jobs (data-free runs move that many bytes).
#include <gtest/gtest.h>

#include <random>

#include "core/optim/factory.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_block.hpp"
#include "core/optim/shape_model.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::optim {
namespace {

template <class T>
linalg::Matrix<T> random_matrix(index rows, index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  linalg::Matrix<T> m(rows, cols);
  for (T& x : m.values()) x = static_cast<T>(normal(rng));
  return m;
}

template <class T>
class RefreshResult : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RefreshResult, Dtypes);

// An owner block runs its refresh jobs; a replica fed the same gradients gets its jobs from
// `replica_job(replica, t, spare)` and loads the owner's result into them. After every step the
// two blocks' states and weights must be bitwise equal. `check(ran, replica_job)` inspects each
// pair of jobs before the owner's runs. Both sides reuse their resolved jobs as the service
// does. Returns how many results were shared.
template <class T, class ReplicaJob, class Check>
int share_refreshes(OptimizerKind kind, index rows, index cols, std::uint64_t seed, int steps, ReplicaJob replica_job,
                    Check check) {
  Hyperparameters hp = default_hyperparameters(kind);
  hp.precondition_frequency = 3;
  hp.start_preconditioning_step = 3;
  auto owner = make_block_optimizer<T>(kind, hp, rows, cols);
  auto replica = make_block_optimizer<T>(kind, hp, rows, cols);
  linalg::Matrix<T> w_owner(rows, cols), w_replica(rows, cols);
  std::mt19937_64 rng(seed);
  std::unique_ptr<RefreshJob<T>> owner_spare, replica_spare;
  int shared = 0;
  for (Step t = 1; t <= steps; ++t) {
    const linalg::Matrix<T> g = random_matrix<T>(rows, cols, rng);
    owner->accumulate(test::host_device(), g, t);
    replica->accumulate(test::host_device(), g, t);
    std::unique_ptr<RefreshJob<T>> ran, loaded;
    if (owner->refresh_due(t)) {
      ran = owner->snapshot_reusing(test::host_device(), t, std::move(owner_spare));
      loaded = replica_job(*replica, t, std::move(replica_spare));
      EXPECT_NE(loaded, nullptr);
      if (loaded == nullptr) return shared;
      EXPECT_EQ(ran->result_bytes(), loaded->result_bytes());
      EXPECT_EQ(ran->result_bytes(), refresh_result_bytes(kind, hp, rows, cols, sizeof(T)));
      check(*ran, *loaded);
      EXPECT_TRUE(ran->run().ok());
      std::vector<std::byte> image(ran->result_bytes());
      ran->save_result(image);
      loaded->load_result(image);
      ++shared;
    }
    if (ran && owner->activation_delay() == 0) {
      owner->publish(test::host_device(), *ran);
      replica->publish(test::host_device(), *loaded);
    }
    EXPECT_TRUE(owner->apply(test::host_device(), w_owner.view(), g, t));
    EXPECT_TRUE(replica->apply(test::host_device(), w_replica.view(), g, t));
    if (ran && owner->activation_delay() == 1) {
      owner->publish(test::host_device(), *ran);
      replica->publish(test::host_device(), *loaded);
    }
    if (ran) {
      owner_spare = std::move(ran);
      replica_spare = std::move(loaded);
    }
    EXPECT_EQ(owner->state().serialize(), replica->state().serialize()) << "step " << t;
    EXPECT_EQ(std::vector<T>(w_owner.values().begin(), w_owner.values().end()),
              std::vector<T>(w_replica.values().begin(), w_replica.values().end()))
        << "step " << t;
    if (::testing::Test::HasFailure()) return shared;
  }
  return shared;
}

TYPED_TEST(RefreshResult, ALoadedResultPublishesWhatTheRunOneDoes) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    // The replica loads the owner's result into a snapshot of its own.
    const int shared = share_refreshes<T>(
        kind, 11, 6, 11, 16,
        [](const BlockOptimizer<T>& replica, Step t, std::unique_ptr<RefreshJob<T>> spare) {
          return replica.snapshot_reusing(test::host_device(), t, std::move(spare));
        },
        [](const RefreshJob<T>&, const RefreshJob<T>&) {});
    EXPECT_GE(shared, 4);
  }
}

TYPED_TEST(RefreshResult, AReceivingJobHoldsTheResultOnlyAndPublishesWhatTheRunOneDoes) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    const int shared = share_refreshes<T>(
        kind, 13, 7, 29, 19,
        [](const BlockOptimizer<T>& replica, Step t, std::unique_ptr<RefreshJob<T>> spare) {
          return replica.receiver(t, std::move(spare));
        },
        [](RefreshJob<T>& ran, RefreshJob<T>& received) {
          // No statistics copied: the receiver holds exactly its result, less than the snapshot.
          EXPECT_EQ(received.bytes(), received.result_bytes());
          EXPECT_LT(received.bytes(), ran.bytes());
          EXPECT_EQ(received.run().code(), StatusCode::invalid_argument);  // it never computes
        });
    EXPECT_GE(shared, 5);
  }
}

TYPED_TEST(RefreshResult, ShapeReceiversHoldTheRealReceiversBytes) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    const Hyperparameters hp = default_hyperparameters(kind);
    ShapeBlock<T> shape(kind, hp, 9, 5);
    const auto received = shape.receiver(1, nullptr);
    ASSERT_NE(received, nullptr);
    EXPECT_EQ(received->bytes(), refresh_result_bytes(kind, hp, 9, 5, sizeof(T)));
    const auto snapshot = shape.snapshot(test::host_device(), 1);
    ASSERT_NE(snapshot, nullptr);
    EXPECT_LT(received->bytes(), snapshot->bytes());
  }
}

TYPED_TEST(RefreshResult, ShapeJobsCarryTheRealResultSizeWithoutValues) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    const Hyperparameters hp = default_hyperparameters(kind);
    ShapeBlock<T> shape(kind, hp, 9, 5);
    const auto job = shape.snapshot(test::host_device(), 1);
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->result_bytes(), refresh_result_bytes(kind, hp, 9, 5, sizeof(T)));
    EXPECT_GT(job->result_bytes(), 0u);
    EXPECT_FALSE(job->has_values());
  }
  EXPECT_EQ(refresh_result_bytes(OptimizerKind::adamw, default_hyperparameters(OptimizerKind::adamw), 9, 5, 4), 0u);
}

}  // namespace
}  // namespace asteria::optim

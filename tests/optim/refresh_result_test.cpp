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

TYPED_TEST(RefreshResult, ALoadedResultPublishesWhatTheRunOneDoes) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    Hyperparameters hp = default_hyperparameters(kind);
    hp.precondition_frequency = 3;
    hp.start_preconditioning_step = 3;
    constexpr index rows = 11, cols = 6;
    // The owner runs its jobs; the replica loads the owner's result into its own snapshot.
    auto owner = make_block_optimizer<T>(kind, hp, rows, cols);
    auto replica = make_block_optimizer<T>(kind, hp, rows, cols);
    linalg::Matrix<T> w_owner(rows, cols), w_replica(rows, cols);
    std::mt19937_64 rng(11);
    int shared = 0;
    for (Step t = 1; t <= 16; ++t) {
      const linalg::Matrix<T> g = random_matrix<T>(rows, cols, rng);
      owner->accumulate(g, t);
      replica->accumulate(g, t);
      std::unique_ptr<RefreshJob<T>> ran, loaded;
      if (owner->refresh_due(t)) {
        ran = owner->snapshot(t);
        loaded = replica->snapshot(t);
        ASSERT_EQ(ran->result_bytes(), loaded->result_bytes());
        EXPECT_EQ(ran->result_bytes(), refresh_result_bytes(kind, hp, rows, cols, sizeof(T)));
        ASSERT_TRUE(ran->run().ok());
        std::vector<std::byte> image(ran->result_bytes());
        ran->save_result(image);
        loaded->load_result(image);
        ++shared;
      }
      if (ran && owner->activation_delay() == 0) {
        owner->publish(*ran);
        replica->publish(*loaded);
      }
      ASSERT_TRUE(owner->apply(w_owner.view(), g, t));
      ASSERT_TRUE(replica->apply(w_replica.view(), g, t));
      if (ran && owner->activation_delay() == 1) {
        owner->publish(*ran);
        replica->publish(*loaded);
      }
      ASSERT_EQ(owner->state().serialize(), replica->state().serialize()) << "step " << t;
      ASSERT_EQ(std::vector<T>(w_owner.values().begin(), w_owner.values().end()),
                std::vector<T>(w_replica.values().begin(), w_replica.values().end()))
          << "step " << t;
    }
    EXPECT_GE(shared, 4);
  }
}

TYPED_TEST(RefreshResult, AReceivingJobHoldsTheResultOnlyAndPublishesWhatTheRunOneDoes) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    Hyperparameters hp = default_hyperparameters(kind);
    hp.precondition_frequency = 3;
    hp.start_preconditioning_step = 3;
    constexpr index rows = 13, cols = 7;
    auto owner = make_block_optimizer<T>(kind, hp, rows, cols);
    auto replica = make_block_optimizer<T>(kind, hp, rows, cols);
    linalg::Matrix<T> w_owner(rows, cols), w_replica(rows, cols);
    std::mt19937_64 rng(29);
    std::unique_ptr<RefreshJob<T>> owner_spare, replica_spare;  // reused, as the service does
    int shared = 0;
    for (Step t = 1; t <= 19; ++t) {
      const linalg::Matrix<T> g = random_matrix<T>(rows, cols, rng);
      owner->accumulate(g, t);
      replica->accumulate(g, t);
      std::unique_ptr<RefreshJob<T>> ran, received;
      if (owner->refresh_due(t)) {
        ran = owner->snapshot_reusing(t, std::move(owner_spare));
        received = replica->receiver(t, std::move(replica_spare));
        ASSERT_NE(received, nullptr);
        ASSERT_EQ(ran->result_bytes(), received->result_bytes());
        // No statistics copied: the receiver holds exactly its result, less than the snapshot.
        EXPECT_EQ(received->bytes(), received->result_bytes());
        EXPECT_LT(received->bytes(), ran->bytes());
        EXPECT_EQ(received->bytes(), refresh_result_bytes(kind, hp, rows, cols, sizeof(T)));
        EXPECT_EQ(received->run().code(), StatusCode::invalid_argument);  // it never computes
        ASSERT_TRUE(ran->run().ok());
        std::vector<std::byte> image(ran->result_bytes());
        ran->save_result(image);
        received->load_result(image);
        ++shared;
      }
      if (ran && owner->activation_delay() == 0) {
        owner->publish(*ran);
        replica->publish(*received);
      }
      ASSERT_TRUE(owner->apply(w_owner.view(), g, t));
      ASSERT_TRUE(replica->apply(w_replica.view(), g, t));
      if (ran && owner->activation_delay() == 1) {
        owner->publish(*ran);
        replica->publish(*received);
      }
      if (ran) {
        owner_spare = std::move(ran);
        replica_spare = std::move(received);
      }
      ASSERT_EQ(owner->state().serialize(), replica->state().serialize()) << "step " << t;
      ASSERT_EQ(std::vector<T>(w_owner.values().begin(), w_owner.values().end()),
                std::vector<T>(w_replica.values().begin(), w_replica.values().end()))
          << "step " << t;
    }
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
    EXPECT_LT(received->bytes(), shape.snapshot(1)->bytes());
  }
}

TYPED_TEST(RefreshResult, ShapeJobsCarryTheRealResultSizeWithoutValues) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    const Hyperparameters hp = default_hyperparameters(kind);
    ShapeBlock<T> shape(kind, hp, 9, 5);
    const auto job = shape.snapshot(1);
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->result_bytes(), refresh_result_bytes(kind, hp, 9, 5, sizeof(T)));
    EXPECT_GT(job->result_bytes(), 0u);
    EXPECT_FALSE(job->has_values());
  }
  EXPECT_EQ(refresh_result_bytes(OptimizerKind::adamw, default_hyperparameters(OptimizerKind::adamw), 9, 5, 4), 0u);
}

}  // namespace
}  // namespace asteria::optim

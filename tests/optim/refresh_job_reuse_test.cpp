// A resolved refresh job refilled by snapshot_reusing is the same job a fresh snapshot makes:
// same step, same bytes, bit-identical results — while keeping its buffers, so that a
// runtime's snapshots allocate nothing after the first refreshes.
#include <gtest/gtest.h>

#include <random>

#include "core/optim/factory.hpp"
#include "core/optim/hyperparameters.hpp"
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
class RefreshJobReuse : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RefreshJobReuse, Dtypes);

TYPED_TEST(RefreshJobReuse, RefilledJobEqualsAFreshSnapshotAndKeepsItsBuffers) {
  using T = TypeParam;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    Hyperparameters hp = default_hyperparameters(kind);
    hp.precondition_frequency = 3;
    hp.start_preconditioning_step = 3;
    constexpr index rows = 12, cols = 7;
    // Two identical blocks: one refreshed with fresh jobs, one with refilled ones.
    auto fresh = make_block_optimizer<T>(kind, hp, rows, cols);
    auto reused = make_block_optimizer<T>(kind, hp, rows, cols);
    linalg::Matrix<T> w_fresh(rows, cols), w_reused(rows, cols);
    std::mt19937_64 rng(5);
    std::unique_ptr<RefreshJob<T>> spare;
    const void* first_job = nullptr;
    int refreshes = 0;
    for (Step t = 1; t <= 14; ++t) {
      const linalg::Matrix<T> g = random_matrix<T>(rows, cols, rng);
      for (auto* block : {fresh.get(), reused.get()}) block->accumulate(test::host_device(), g, t);
      ASSERT_EQ(fresh->refresh_due(t), reused->refresh_due(t));
      std::unique_ptr<RefreshJob<T>> a, b;
      if (fresh->refresh_due(t)) {
        a = fresh->snapshot(test::host_device(), t);
        const bool had_spare = spare != nullptr;
        const void* spare_address = spare.get();
        b = reused->snapshot_reusing(test::host_device(), t, std::move(spare));
        ASSERT_NE(a, nullptr);
        ASSERT_NE(b, nullptr);
        if (had_spare) {
          EXPECT_EQ(b.get(), spare_address) << "step " << t << ": the spare job was not reused";
        }
        if (first_job == nullptr) first_job = b.get();
        EXPECT_EQ(a->stats_step(), b->stats_step());
        EXPECT_EQ(a->bytes(), b->bytes());
        ASSERT_TRUE(a->run().ok());
        ASSERT_TRUE(b->run().ok());
        ++refreshes;
      }
      if (a && fresh->activation_delay() == 0) {
        fresh->publish(test::host_device(), *a);
        reused->publish(test::host_device(), *b);
      }
      ASSERT_TRUE(fresh->apply(test::host_device(), w_fresh.view(), g, t));
      ASSERT_TRUE(reused->apply(test::host_device(), w_reused.view(), g, t));
      if (a && fresh->activation_delay() == 1) {
        fresh->publish(test::host_device(), *a);
        reused->publish(test::host_device(), *b);
      }
      if (b) spare = std::move(b);
      ASSERT_EQ(fresh->state().serialize(), reused->state().serialize()) << "step " << t;
      ASSERT_EQ(std::vector<T>(w_fresh.values().begin(), w_fresh.values().end()),
                std::vector<T>(w_reused.values().begin(), w_reused.values().end()))
          << "step " << t;
    }
    EXPECT_GE(refreshes, 3);
    EXPECT_EQ(spare.get(), first_job) << "one job object served every refresh";
  }
}

TYPED_TEST(RefreshJobReuse, ASpareOfAnotherKindIsIgnored) {
  using T = TypeParam;
  const Hyperparameters shampoo_hp = default_hyperparameters(OptimizerKind::shampoo);
  const Hyperparameters soap_hp = default_hyperparameters(OptimizerKind::soap);
  auto shampoo = make_block_optimizer<T>(OptimizerKind::shampoo, shampoo_hp, 4, 4);
  auto soap = make_block_optimizer<T>(OptimizerKind::soap, soap_hp, 4, 4);
  std::mt19937_64 rng(1);
  const linalg::Matrix<T> g = random_matrix<T>(4, 4, rng);
  shampoo->accumulate(test::host_device(), g, 1);
  soap->accumulate(test::host_device(), g, 1);
  std::unique_ptr<RefreshJob<T>> shampoo_job = shampoo->snapshot(test::host_device(), 1);
  const void* address = shampoo_job.get();
  std::unique_ptr<RefreshJob<T>> soap_job = soap->snapshot_reusing(test::host_device(), 1, std::move(shampoo_job));
  ASSERT_NE(soap_job, nullptr);
  EXPECT_NE(soap_job.get(), address);
  EXPECT_TRUE(soap_job->run().ok());
  soap->publish(test::host_device(), *soap_job);  // a SOAP job: publish accepts it
}

}  // namespace
}  // namespace asteria::optim

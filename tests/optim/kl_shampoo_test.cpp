// KL-Shampoo against an independent float64 reference written in yorkerlin/KL-Methods'
// order (update with the old eigenvalues, then the two-sided statistics and the eigenvalue
// estimates, then the QR refresh), plus clamping, commuting phases and failure paths.
#include "core/optim/kl_shampoo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "tests/optim/float64_reference.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::optim {
namespace {

using test::Dense;

struct KlReference {
  Dense s_left, s_right, q_left, q_right, momentum;
  std::vector<double> inv_sqrt_left, inv_sqrt_right;  // λ^(−1/2)
  int calls = 0;
  double min_gap = 1.0;
  int clamped = 0;  // eigenvalue updates that hit the clamp

  double clamp_of(int d, const Hyperparameters& hp) const {
    return std::max(10.0, std::min(static_cast<double>(d), hp.kl_max_clamp_value));
  }

  void update_eigenvalues(std::vector<double>& inv_sqrt, const std::vector<double>& estimate, double beta,
                          double limit) {
    for (std::size_t i = 0; i < inv_sqrt.size(); ++i) {
      double lambda = inv_sqrt[i] == 0.0 ? 0.0 : 1.0 / (inv_sqrt[i] * inv_sqrt[i]);
      lambda = beta * lambda + (1.0 - beta) * estimate[i];
      double next = lambda > 0.0 ? 1.0 / std::sqrt(lambda) : 0.0;
      if (next > limit) {
        next = limit;
        ++clamped;
      }
      inv_sqrt[i] = next;
    }
  }

  void step(Dense& w, const Dense& g, const Hyperparameters& hp) {
    const double beta = hp.effective_shampoo_beta();
    const int da = g.rows, db = g.cols;
    if (calls++ == 0) {
      s_left = test::scaled_sum(0.0, Dense(da, da), (1.0 - beta) / db, test::matmul(g, test::transpose(g)));
      s_right = test::scaled_sum(0.0, Dense(db, db), (1.0 - beta) / da, test::matmul(test::transpose(g), g));
      for (auto [stats, basis] : {std::pair{&s_left, &q_left}, std::pair{&s_right, &q_right}}) {
        test::Eigen e = test::jacobi_eigen(*stats);
        min_gap = std::min(min_gap, test::min_relative_gap(e.values));
        *basis = e.vectors;
      }
      inv_sqrt_left.assign(static_cast<std::size_t>(da), 1.0 / std::sqrt(hp.kl_init_eigenvalue));
      inv_sqrt_right.assign(static_cast<std::size_t>(db), 1.0 / std::sqrt(hp.kl_init_eigenvalue));
      momentum = Dense(da, db);
      return;
    }
    // Update with the basis and eigenvalues from before this step's statistics.
    momentum = test::scaled_sum(hp.beta1, momentum, 1.0 - hp.beta1, g);
    Dense projected = test::matmul(test::matmul(test::transpose(q_left), momentum), q_right);
    for (int i = 0; i < da; ++i)
      for (int j = 0; j < db; ++j) {
        const double e = inv_sqrt_left[static_cast<std::size_t>(i)] * inv_sqrt_right[static_cast<std::size_t>(j)];
        projected(i, j) *= e / (1.0 + hp.eps * e);
      }
    const Dense u = test::matmul(test::matmul(q_left, projected), test::transpose(q_right));
    for (int i = 0; i < da; ++i)
      for (int j = 0; j < db; ++j) {
        w(i, j) -= hp.lr * u(i, j);
        w(i, j) -= hp.lr * hp.weight_decay * w(i, j);
      }
    // Ŝ⁻¹ = Q diag(λ⁻¹) Qᵀ with the stored λ^(−1/2).
    auto inverse = [](const Dense& q, const std::vector<double>& inv_sqrt) {
      Dense scaled = q;
      for (int i = 0; i < q.rows; ++i)
        for (int k = 0; k < q.cols; ++k)
          scaled(i, k) *= inv_sqrt[static_cast<std::size_t>(k)] * inv_sqrt[static_cast<std::size_t>(k)];
      return test::matmul(scaled, test::transpose(q));
    };
    const Dense inv_left = inverse(q_left, inv_sqrt_left);
    const Dense inv_right = inverse(q_right, inv_sqrt_right);
    const Dense gt = test::transpose(g);
    const Dense left_term = test::matmul(test::matmul(g, inv_right), gt);  // G Ŝ_b⁻¹ Gᵀ
    const Dense right_term = test::matmul(test::matmul(gt, inv_left), g);  // Gᵀ Ŝ_a⁻¹ G
    s_left = test::scaled_sum(beta, s_left, (1.0 - beta) / db, left_term);
    s_right = test::scaled_sum(beta, s_right, (1.0 - beta) / da, right_term);
    const Dense left_diag = test::matmul(test::matmul(test::transpose(q_left), left_term), q_left);
    const Dense right_diag = test::matmul(test::matmul(test::transpose(q_right), right_term), q_right);
    std::vector<double> left_estimate, right_estimate;
    for (int i = 0; i < da; ++i) left_estimate.push_back(left_diag(i, i) / db);
    for (int j = 0; j < db; ++j) right_estimate.push_back(right_diag(j, j) / da);
    update_eigenvalues(inv_sqrt_left, left_estimate, beta, clamp_of(da, hp));
    update_eigenvalues(inv_sqrt_right, right_estimate, beta, clamp_of(db, hp));
    if ((calls - 1) % hp.precondition_frequency == 0) {
      q_left = test::gram_schmidt(test::matmul(s_left, q_left));
      q_right = test::gram_schmidt(test::matmul(s_right, q_right));
    }
  }
};

std::vector<std::pair<int, int>> chunks(int n, int max_dim) {
  std::vector<std::pair<int, int>> out;
  for (int start = 0; start < n; start += max_dim) out.push_back({start, std::min(max_dim, n - start)});
  return out;
}

template <Real T>
std::vector<T> as(const std::vector<double>& x) {
  return std::vector<T>(x.begin(), x.end());
}

// Runs the optimizer and the reference side by side; returns how often the reference clamped.
template <Real T>
int expect_kl_matches_reference(const Hyperparameters& hp, int rows, int cols, int steps, double grad_scale,
                                double tolerance) {
  std::mt19937 gen(17);
  std::vector<double> w_ref = test::random_dense(rows, cols, gen).a;
  std::vector<T> w = as<T>(w_ref);
  w_ref.assign(w.begin(), w.end());
  TensorOptimizer<T> opt(OptimizerKind::kl_shampoo, hp, {rows, cols});
  const auto row_chunks = chunks(rows, static_cast<int>(hp.max_precond_dim));
  const auto col_chunks = chunks(cols, static_cast<int>(hp.max_precond_dim));
  std::vector<KlReference> ref(row_chunks.size() * col_chunks.size());
  EXPECT_EQ(opt.blocks().size(), ref.size());
  for (int t = 1; t <= steps; ++t) {
    std::vector<T> g = as<T>(test::random_dense(rows, cols, gen, grad_scale).a);
    const std::vector<double> g_ref(g.begin(), g.end());
    opt.step(w, g);
    std::size_t b = 0;
    for (auto [r0, nr] : row_chunks)
      for (auto [c0, nc] : col_chunks) {
        Dense wb = test::extract(w_ref, cols, r0, c0, nr, nc);
        ref[b++].step(wb, test::extract(g_ref, cols, r0, c0, nr, nc), hp);
        test::insert(wb, w_ref, cols, r0, c0);
      }
    for (std::size_t i = 0; i < w.size(); ++i) {
      EXPECT_NEAR(w[i], w_ref[i], tolerance) << "step " << t << " element " << i;
      if (std::abs(static_cast<double>(w[i]) - w_ref[i]) > tolerance) return -1;
    }
  }
  int clamped = 0;
  for (const KlReference& r : ref) {
    EXPECT_GT(r.min_gap, 1e-3) << "test data has nearly degenerate eigenvalues";
    clamped += r.clamped;
  }
  return clamped;
}

Hyperparameters reference_case() {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  hp.weight_decay = 0.1;
  hp.eps = 1e-3;                  // large enough that the ε term of the update matters
  hp.precondition_frequency = 2;  // bases: eigh after step 1, QR after steps 3 and 5
  hp.max_precond_dim = 4;         // 8 x 12 → six 4 x 4 blocks
  hp.shampoo_beta = 0.7;
  return hp;
}

TEST(KlShampoo, DoubleMatchesFloat64ReferenceAcrossRefreshes) {
  expect_kl_matches_reference<double>(reference_case(), 8, 12, 7, 1.0, 1e-10);
}

TEST(KlShampoo, FloatMatchesFloat64ReferenceAcrossRefreshes) {
  expect_kl_matches_reference<float>(reference_case(), 8, 12, 7, 1.0, 5e-6);
}

TEST(KlShampoo, DefaultsMatchReference) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  hp.max_precond_dim = 5;
  hp.precondition_frequency = 3;
  expect_kl_matches_reference<double>(hp, 5, 10, 8, 1.0, 1e-10);
}

TEST(KlShampoo, SmallGradientsHitTheEigenvalueClampLikeTheReference) {
  Hyperparameters hp = reference_case();
  hp.shampoo_beta = 0.4;  // λ falls from 0.1 quickly when gradients are small
  const int clamped = expect_kl_matches_reference<double>(hp, 8, 12, 7, 1e-3, 1e-10);
  EXPECT_GT(clamped, 0);  // otherwise this test would not exercise the clamp
  TensorOptimizer<double> opt(OptimizerKind::kl_shampoo, hp, {4, 4});
  std::mt19937 gen(2);
  std::vector<double> w(16, 0.0);
  for (int t = 0; t < 6; ++t) opt.step(w, test::random_dense(4, 4, gen, 1e-3).a);
  const BlockState<double>& s = opt.blocks()[0].optimizer->state();
  for (std::size_t k = 0; k < s.layout().size(); ++k) {
    if (s.layout()[k].name.rfind("inv_sqrt_eigenvalues", 0) != 0) continue;
    const auto v = s.tensor(static_cast<int>(k));
    for (index i = 0; i < v.rows(); ++i) EXPECT_LE(v(i, 0), 10.0);  // max(10, min(4, 4000))
  }
}

TEST(KlShampoo, FirstStepOnlyInitialisesAndRefreshesFollowTheSchedule) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.precondition_frequency = 2;
  hp.max_precond_dim = 3;
  TensorOptimizer<float> opt(OptimizerKind::kl_shampoo, hp, {3, 6});
  std::mt19937 gen(8);
  std::vector<float> w = as<float>(test::random_dense(3, 6, gen).a);
  const std::vector<float> w0 = w;
  opt.step(w, as<float>(test::random_dense(3, 6, gen).a));
  EXPECT_EQ(w, w0);
  EXPECT_EQ(opt.counters().refreshes, 2);
  const std::vector<int> expected = {2, 2, 4, 4, 6};  // block steps 1, 3, 5
  for (int t = 2; t <= 5; ++t) {
    opt.step(w, as<float>(test::random_dense(3, 6, gen).a));
    EXPECT_EQ(opt.counters().refreshes, expected[static_cast<std::size_t>(t - 1)]) << "after step " << t;
  }
  EXPECT_NE(w, w0);
}

TEST(KlShampoo, ApplyAndAccumulateCommute) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  hp.precondition_frequency = 2;
  KlShampooBlock<double> first(hp, 3, 4), second(hp, 3, 4);
  std::mt19937 gen(12);
  linalg::Matrix<double> w1(3, 4), w2(3, 4);
  for (Step t = 1; t <= 6; ++t) {
    const Dense g = test::random_dense(3, 4, gen);
    linalg::ConstMatrixView<double> gv(g.a.data(), 3, 4);
    first.accumulate(test::host_device(), gv, t);
    auto job1 = first.refresh_due(t) ? first.snapshot(test::host_device(), t) : nullptr;
    ASSERT_TRUE(first.apply(test::host_device(), w1.view(), gv, t));
    ASSERT_TRUE(second.apply(test::host_device(), w2.view(), gv, t));
    second.accumulate(test::host_device(), gv, t);
    auto job2 = second.refresh_due(t) ? second.snapshot(test::host_device(), t) : nullptr;
    ASSERT_EQ(job1 == nullptr, job2 == nullptr);
    if (job1) {
      ASSERT_TRUE(job1->run().ok());
      ASSERT_TRUE(job2->run().ok());
      first.publish(test::host_device(), *job1);
      second.publish(test::host_device(), *job2);
    }
  }
  EXPECT_EQ(first.state().serialize(), second.state().serialize());
  for (index i = 0; i < 12; ++i) {
    EXPECT_EQ(w1.data()[i], w2.data()[i]);
    EXPECT_NE(w1.data()[i], 0.0);
  }
}

TEST(KlShampoo, LateFirstPublishUsesTheIdentityBasisMeanwhile) {
  // Until a basis is published the block preconditions in the original coordinates with its
  // running eigenvalue estimates; publishing the initial eigh later resets them, as the
  // reference does when it builds its first basis.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  KlShampooBlock<double> block(hp, 3, 3);
  std::mt19937 gen(30);
  linalg::Matrix<double> w(3, 3);
  std::unique_ptr<RefreshJob<double>> first_job;
  for (Step t = 1; t <= 4; ++t) {
    const Dense g = test::random_dense(3, 3, gen);
    linalg::ConstMatrixView<double> gv(g.a.data(), 3, 3);
    block.accumulate(test::host_device(), gv, t);
    if (t == 1) first_job = block.snapshot(test::host_device(), t);
    ASSERT_TRUE(block.apply(test::host_device(), w.view(), gv, t));
  }
  for (index i = 0; i < 9; ++i) EXPECT_TRUE(std::isfinite(w.data()[i]));
  EXPECT_EQ(block.basis_version(), 0);
  ASSERT_TRUE(first_job->run().ok());
  block.publish(test::host_device(), *first_job);
  EXPECT_EQ(block.basis_version(), 1);
  const BlockState<double>& s = block.state();
  for (std::size_t k = 0; k < s.layout().size(); ++k) {
    if (s.layout()[k].name.rfind("inv_sqrt_eigenvalues", 0) != 0) continue;
    for (index i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(s.tensor(static_cast<int>(k))(i, 0), 1.0 / std::sqrt(0.1));
  }
}

int slot_of(const BlockState<double>& s, const std::string& name) {
  for (std::size_t k = 0; k < s.layout().size(); ++k)
    if (s.layout()[k].name == name) return static_cast<int>(k);
  return -1;
}

TEST(KlShampoo, CorruptStatisticsFailTheRefreshKeepTheBasisAndAreCounted) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  hp.precondition_frequency = 2;
  hp.max_precond_dim = 3;
  hp.max_consecutive_refresh_failures = 1;
  TensorOptimizer<double> opt(OptimizerKind::kl_shampoo, hp, {3, 6});
  std::mt19937 gen(22);
  std::vector<double> w = test::random_dense(3, 6, gen).a;
  opt.step(w, test::random_dense(3, 6, gen).a);
  opt.step(w, test::random_dense(3, 6, gen).a);
  BlockState<double>& state = opt.blocks()[1].optimizer->state();
  state.tensor(slot_of(state, "stats_right"))(0, 2) = std::numeric_limits<double>::infinity();
  const auto basis = state.tensor(slot_of(state, "basis_right"));
  const std::vector<double> basis_before(basis.data(), basis.data() + basis.size());
  const std::vector<double> w_before = w;
  opt.step(w, test::random_dense(3, 6, gen).a);
  EXPECT_EQ(opt.counters().refresh_failures, 1);
  EXPECT_EQ(opt.counters().refreshes, 3);
  EXPECT_EQ(std::vector<double>(basis.data(), basis.data() + basis.size()), basis_before);
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_TRUE(std::isfinite(w[i]));
    EXPECT_NE(w[i], w_before[i]);
  }
  opt.step(w, test::random_dense(3, 6, gen).a);
  EXPECT_THROW(opt.step(w, test::random_dense(3, 6, gen).a), NumericalError);  // second in a row
}

TEST(KlShampoo, NonFiniteGradientNeverReachesTheWeights) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  hp.max_precond_dim = 2;
  TensorOptimizer<double> opt(OptimizerKind::kl_shampoo, hp, {4, 2});  // two 2 x 2 blocks
  std::mt19937 gen(6);
  std::vector<double> w = test::random_dense(4, 2, gen).a;
  for (int t = 0; t < 3; ++t) opt.step(w, test::random_dense(4, 2, gen).a);
  const auto state_before = opt.blocks()[1].optimizer->state().serialize();
  const std::vector<double> w_before = w;
  std::vector<double> g = test::random_dense(4, 2, gen).a;
  g[6] = std::numeric_limits<double>::quiet_NaN();  // row 3: block 1
  opt.step(w, g);
  EXPECT_EQ(opt.counters().skipped_non_finite_blocks, 1);
  EXPECT_EQ(opt.blocks()[1].optimizer->state().serialize(), state_before);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NE(w[i], w_before[i]);
  for (std::size_t i = 4; i < 8; ++i) EXPECT_EQ(w[i], w_before[i]);
}

TEST(KlShampoo, NonFiniteUpdateLeavesWeightsAndMomentumUntouched) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  TensorOptimizer<double> opt(OptimizerKind::kl_shampoo, hp, {2, 2}, "attn.w");
  std::vector<double> w = {1, 2, 3, 4};
  const std::vector<double> g = {0.1, 0.2, -0.3, 0.05};
  opt.step(w, g);
  BlockState<double>& s = opt.blocks()[0].optimizer->state();
  const auto m = s.tensor(slot_of(s, "exp_avg"));
  m(0, 0) = 0.25;
  m(1, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(opt.step(w, g), NumericalError);
  EXPECT_EQ(w, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(m(0, 0), 0.25);  // the momentum is committed only with the weights
}

TEST(KlShampoo, ThinAndNonSquareBlocksStayFiniteAndRefresh) {
  // Rank-deficient statistics (zero eigenvalues) and 1 x 1 factors (the 1-wide edge blocks of
  // 9 x 2 and 2 x 9): bases stay valid.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::kl_shampoo);
  hp.lr = 0.01;
  hp.precondition_frequency = 2;
  hp.max_precond_dim = 4;
  for (const std::vector<index>& shape :
       {std::vector<index>{9, 2}, std::vector<index>{2, 9}, std::vector<index>{3, 7}}) {
    TensorOptimizer<float> opt(OptimizerKind::kl_shampoo, hp, shape);
    const int n = static_cast<int>(shape[0] * shape[1]);
    std::mt19937 gen(40);
    std::vector<float> w = as<float>(test::random_dense(1, n, gen).a);
    const std::vector<float> w0 = w;
    for (int t = 0; t < 6; ++t) opt.step(w, as<float>(test::random_dense(1, n, gen).a));
    EXPECT_EQ(opt.counters().refresh_failures, 0);
    EXPECT_EQ(opt.counters().refreshes, 3 * static_cast<std::int64_t>(opt.blocks().size()));  // steps 1, 3, 5
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(std::isfinite(w[static_cast<std::size_t>(i)]));
      EXPECT_NE(w[static_cast<std::size_t>(i)], w0[static_cast<std::size_t>(i)]);
    }
  }
}

}  // namespace
}  // namespace asteria::optim

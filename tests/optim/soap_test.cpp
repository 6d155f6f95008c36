// SOAP against an independent float64 reference (nikhilvyas/SOAP's order of operations, with
// the momentum kept in the original space), its refresh schedule, late publication, and the
// failure paths.
#include "core/optim/soap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "tests/optim/float64_reference.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::optim {
namespace {

using test::Dense;

// One block of SOAP, written from ALGORITHMS.md / soap.py: statistics after the update, the
// refresh after the statistics, the first step only initialises.
struct SoapReference {
  Dense left, right, q_left, q_right, momentum, second;  // momentum in the original space
  int calls = 0;
  double min_gap = 1.0;        // smallest relative eigenvalue (estimate) gap met
  int permuted_refreshes = 0;  // warm refreshes whose sort order was not the identity

  void refresh_side(const Dense& stats, Dense& basis, bool left_side) {
    const int n = stats.rows;
    const Dense fq = test::matmul(stats, basis);
    std::vector<double> estimate(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) estimate[static_cast<std::size_t>(j)] += basis(i, j) * fq(i, j);
    std::vector<int> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return estimate[static_cast<std::size_t>(a)] > estimate[static_cast<std::size_t>(b)];
    });
    std::vector<double> sorted;
    bool identity = true;
    for (int k = 0; k < n; ++k) {
      sorted.push_back(estimate[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])]);
      identity = identity && order[static_cast<std::size_t>(k)] == k;
    }
    min_gap = std::min(min_gap, test::min_relative_gap(sorted));
    if (!identity) ++permuted_refreshes;
    Dense power(n, n), old_second = second;
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < n; ++i) power(i, k) = fq(i, order[static_cast<std::size_t>(k)]);
    basis = test::gram_schmidt(power);
    for (int i = 0; i < second.rows; ++i)
      for (int j = 0; j < second.cols; ++j)
        second(i, j) = left_side ? old_second(order[static_cast<std::size_t>(i)], j)
                                 : old_second(i, order[static_cast<std::size_t>(j)]);
  }

  void step(Dense& w, const Dense& g, const Hyperparameters& hp) {
    const double sb = hp.effective_shampoo_beta();
    const Dense ggt = test::matmul(g, test::transpose(g));
    const Dense gtg = test::matmul(test::transpose(g), g);
    if (calls++ == 0) {
      left = test::scaled_sum(0.0, ggt, 1.0 - sb, ggt);
      right = test::scaled_sum(0.0, gtg, 1.0 - sb, gtg);
      for (auto [stats, basis] : {std::pair{&left, &q_left}, std::pair{&right, &q_right}}) {
        test::Eigen e = test::jacobi_eigen(*stats);
        min_gap = std::min(min_gap, test::min_relative_gap(e.values));
        *basis = e.vectors;
      }
      momentum = Dense(g.rows, g.cols);
      second = Dense(g.rows, g.cols);
      return;
    }
    const int s = calls - 1;
    const Dense rotated = test::matmul(test::matmul(test::transpose(q_left), g), q_right);
    momentum = test::scaled_sum(hp.beta1, momentum, 1.0 - hp.beta1, g);
    const Dense m_rot = test::matmul(test::matmul(test::transpose(q_left), momentum), q_right);
    Dense adam(g.rows, g.cols);
    for (int i = 0; i < g.rows; ++i)
      for (int j = 0; j < g.cols; ++j) {
        second(i, j) = hp.beta2 * second(i, j) + (1.0 - hp.beta2) * rotated(i, j) * rotated(i, j);
        adam(i, j) = m_rot(i, j) / (std::sqrt(second(i, j)) + hp.eps);
      }
    const Dense direction = test::matmul(test::matmul(q_left, adam), test::transpose(q_right));
    const double step = hp.lr * std::sqrt(1.0 - std::pow(hp.beta2, s)) / (1.0 - std::pow(hp.beta1, s));
    for (int i = 0; i < w.rows; ++i)
      for (int j = 0; j < w.cols; ++j) {
        w(i, j) -= step * direction(i, j);
        w(i, j) -= hp.lr * hp.weight_decay * w(i, j);
      }
    left = test::scaled_sum(sb, left, 1.0 - sb, ggt);
    right = test::scaled_sum(sb, right, 1.0 - sb, gtg);
    if (s % hp.precondition_frequency == 0) {
      refresh_side(left, q_left, true);
      refresh_side(right, q_right, false);
    }
  }
};

// Chunks of at most max_dim, full chunks first.
std::vector<std::pair<int, int>> chunks(int n, int max_dim) {
  std::vector<std::pair<int, int>> out;
  for (int start = 0; start < n; start += max_dim) out.push_back({start, std::min(max_dim, n - start)});
  return out;
}

template <Real T>
std::vector<T> as(const std::vector<double>& x) {
  return std::vector<T>(x.begin(), x.end());
}

template <Real T>
void expect_soap_matches_reference(const Hyperparameters& hp, int rows, int cols, int steps, double tolerance) {
  std::mt19937 gen(1);
  std::vector<double> w_ref = test::random_dense(rows, cols, gen).a;
  std::vector<T> w = as<T>(w_ref);
  w_ref.assign(w.begin(), w.end());  // start from exactly the same (rounded) values
  TensorOptimizer<T> opt(OptimizerKind::soap, hp, {rows, cols});
  const auto row_chunks = chunks(rows, static_cast<int>(hp.max_precond_dim));
  const auto col_chunks = chunks(cols, static_cast<int>(hp.max_precond_dim));
  std::vector<SoapReference> ref(row_chunks.size() * col_chunks.size());
  ASSERT_EQ(opt.blocks().size(), ref.size());

  for (int t = 1; t <= steps; ++t) {
    std::vector<T> g = as<T>(test::random_dense(rows, cols, gen).a);
    const std::vector<double> g_ref(g.begin(), g.end());
    opt.step(w, g);
    std::size_t b = 0;
    for (auto [r0, nr] : row_chunks)
      for (auto [c0, nc] : col_chunks) {
        Dense wb = test::extract(w_ref, cols, r0, c0, nr, nc);
        ref[b++].step(wb, test::extract(g_ref, cols, r0, c0, nr, nc), hp);
        test::insert(wb, w_ref, cols, r0, c0);
      }
    for (std::size_t i = 0; i < w.size(); ++i)
      ASSERT_NEAR(w[i], w_ref[i], tolerance) << "step " << t << " element " << i;
  }
  int permuted = 0;
  for (const SoapReference& r : ref) {
    // The comparison is meaningful only for well-separated eigenvalues (signs and order of
    // eigenvectors are otherwise arbitrary); the test data is chosen so.
    EXPECT_GT(r.min_gap, 1e-3) << "test data has nearly degenerate eigenvalues";
    permuted += r.permuted_refreshes;
  }
  // At least one warm refresh must have reordered the basis, or v's permutation went untested.
  EXPECT_GT(permuted, 0);
}

Hyperparameters reference_case() {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.lr = 0.05;
  hp.weight_decay = 0.1;
  hp.precondition_frequency = 2;  // refreshes after steps 1 (eigh), 3 and 5 (warm)
  hp.max_precond_dim = 4;         // 8 x 12 → six 4 x 4 blocks (square: no zero eigenvalues)
  hp.shampoo_beta = 0.3;          // statistics change fast, so warm refreshes reorder the basis
  return hp;
}

TEST(Soap, DoubleMatchesFloat64ReferenceAcrossRefreshes) {
  expect_soap_matches_reference<double>(reference_case(), 8, 12, 7, 1e-10);
}

TEST(Soap, FloatMatchesFloat64ReferenceAcrossRefreshes) {
  expect_soap_matches_reference<float>(reference_case(), 8, 12, 7, 5e-6);
}

TEST(Soap, ShiftedCholeskyQrGivesTheSameTrajectory) {
  Hyperparameters hp = reference_case();
  hp.basis_orthogonalization = linalg::Orthogonalization::shifted_cholesky_qr;
  expect_soap_matches_reference<double>(hp, 8, 12, 7, 1e-9);
}

TEST(Soap, DefaultBetasAndFrequencyMatchReference) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.max_precond_dim = 5;
  hp.precondition_frequency = 3;
  hp.shampoo_beta = 0.2;
  expect_soap_matches_reference<double>(hp, 5, 10, 8, 1e-10);
}

TEST(Soap, FirstStepOnlyInitialisesAndRefreshesFollowTheSchedule) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 3;
  hp.max_precond_dim = 4;
  TensorOptimizer<double> opt(OptimizerKind::soap, hp, {4, 8});  // two blocks
  std::mt19937 gen(3);
  std::vector<double> w = test::random_dense(4, 8, gen).a;
  const std::vector<double> w0 = w;
  opt.step(w, test::random_dense(4, 8, gen).a);
  EXPECT_EQ(w, w0);                        // no update at the first step
  EXPECT_EQ(opt.counters().refreshes, 2);  // the initial eigh of both blocks
  // Refreshes at the block steps 1, 4, 7: after 7 steps, three per block.
  const std::vector<int> expected = {2, 2, 2, 4, 4, 4, 6};
  for (int t = 2; t <= 7; ++t) {
    opt.step(w, test::random_dense(4, 8, gen).a);
    EXPECT_EQ(opt.counters().refreshes, expected[static_cast<std::size_t>(t - 1)]) << "after step " << t;
  }
  EXPECT_NE(w, w0);
}

int slot_of(const BlockState<double>& s, const std::string& name) {
  for (std::size_t k = 0; k < s.layout().size(); ++k)
    if (s.layout()[k].name == name) return static_cast<int>(k);
  return -1;
}

// A copy of the block's state tensor `name` (a test failure when there is none).
Dense dense_of(const BlockState<double>& s, const std::string& name) {
  const int slot = slot_of(s, name);
  if (slot < 0) {
    ADD_FAILURE() << "no state tensor " << name;
    return Dense();
  }
  const auto v = s.tensor(slot);
  Dense d(static_cast<int>(v.rows()), static_cast<int>(v.cols()));
  for (index i = 0; i < v.rows(); ++i)
    for (index j = 0; j < v.cols(); ++j) d(static_cast<int>(i), static_cast<int>(j)) = v(i, j);
  return d;
}

// Drives one block with a deterministic publication delay of `delay` steps.
struct DelayedRun {
  SoapBlock<double> block;
  std::vector<std::pair<Step, std::unique_ptr<RefreshJob<double>>>> pending;
  DelayedRun(const Hyperparameters& hp, index n) : block(hp, n, n) {}

  // Original-space momentum Q_L m Q_Rᵀ.
  Dense momentum_original() {
    const BlockState<double>& s = block.state();
    return test::matmul(test::matmul(dense_of(s, "basis_left"), dense_of(s, "exp_avg")),
                        test::transpose(dense_of(s, "basis_right")));
  }

  void step(Step t, linalg::MatrixView<double> w, linalg::ConstMatrixView<double> g, Step delay) {
    block.accumulate(test::host_device(), g, t);
    if (block.refresh_due(t)) {
      auto job = block.snapshot(test::host_device(), t);
      ASSERT_TRUE(job->run().ok());
      pending.emplace_back(t, std::move(job));
    }
    ASSERT_TRUE(block.apply(test::host_device(), w, g, t));
    while (!pending.empty() && pending.front().first + delay == t) {
      // The first basis after identity-basis updates restarts the moments; later ones keep m.
      const bool restart = block.basis_version() == 0 && t > 1;
      const Dense before = momentum_original();
      block.publish(test::host_device(), *pending.front().second);
      const Dense after = momentum_original();
      for (std::size_t i = 0; i < before.a.size(); ++i)
        EXPECT_NEAR(after.a[i], restart ? 0.0 : before.a[i], 1e-12)
            << (restart ? "the first basis restarts the momentum" : "publishing must not change the momentum");
      pending.erase(pending.begin());
    }
  }
};

TEST(Soap, NoUpdateUntilTheFirstBasisLands) {
  // Delay 3: the first basis (from step 1) is published after step 4. By default the block
  // makes no update before it, as the reference's initialising step, and updates from step 5.
  const Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  const index n = 4;
  DelayedRun run(hp, n);
  std::mt19937 gen(29);
  linalg::Matrix<double> w(n, n);
  for (index i = 0; i < n * n; ++i) w.data()[i] = 0.1 * static_cast<double>(i + 1);
  const std::vector<double> w0(w.data(), w.data() + n * n);
  auto unchanged = [&] { return std::equal(w0.begin(), w0.end(), w.data()); };
  for (Step t = 1; t <= 5; ++t) {
    const Dense g = test::random_dense(4, 4, gen);
    run.step(t, w.view(), linalg::ConstMatrixView<double>(g.a.data(), n, n), 3);
    if (t <= 4) {
      EXPECT_TRUE(unchanged()) << "no update before the first basis, step " << t;
      EXPECT_EQ(run.block.basis_version(), t == 4 ? 1 : 0);
    }
  }
  EXPECT_FALSE(unchanged()) << "the step after the first basis updates";
  for (index i = 0; i < n * n; ++i) EXPECT_TRUE(std::isfinite(w.data()[i]));
}

TEST(Soap, IdentityBasisBeforeTheFirstPublishIsAdamWhenAsked) {
  // soap_adam_before_first_basis, never publishing: the block runs Adam in the original
  // coordinates after its first step.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.soap_adam_before_first_basis = true;
  hp.weight_decay = 0.05;
  const index n = 3;
  DelayedRun run(hp, n);
  std::mt19937 gen(11);
  Dense w_ref = test::random_dense(3, 3, gen);
  linalg::Matrix<double> w(n, n);
  for (index i = 0; i < n * n; ++i) w.data()[i] = w_ref.a[static_cast<std::size_t>(i)];
  Dense m(3, 3), v(3, 3);
  for (Step t = 1; t <= 5; ++t) {
    const Dense g = test::random_dense(3, 3, gen);
    linalg::ConstMatrixView<double> gv(g.a.data(), n, n);
    run.step(t, w.view(), gv, 1000);
    if (t == 1) continue;
    const double s = static_cast<double>(t - 1);
    for (std::size_t i = 0; i < 9; ++i) {
      m.a[i] = hp.beta1 * m.a[i] + (1 - hp.beta1) * g.a[i];
      v.a[i] = hp.beta2 * v.a[i] + (1 - hp.beta2) * g.a[i] * g.a[i];
      const double step = hp.lr * std::sqrt(1 - std::pow(hp.beta2, s)) / (1 - std::pow(hp.beta1, s));
      w_ref.a[i] = (w_ref.a[i] - step * m.a[i] / (std::sqrt(v.a[i]) + hp.eps)) * (1 - hp.lr * hp.weight_decay);
    }
    for (std::size_t i = 0; i < 9; ++i) EXPECT_NEAR(w.data()[i], w_ref.a[i], 1e-12) << "step " << t;
  }
  EXPECT_EQ(run.block.basis_version(), 0);
}

TEST(Soap, FirstBasisPublishedLateRestartsTheMoments) {
  // Delay 2 with soap_adam_before_first_basis: steps 2 and 3 run Adam in the identity basis,
  // the first basis lands after step 3. The moments restart there, so step 4 is a first Adam
  // step in that basis: with m = (1−β1)G′ and v = (1−β2)G′², the bias-corrected update is
  // lr·G′/(|G′| + ε/√(1−β2)) ≈ lr·sign(G′) per coordinate, whatever the Adam steps left behind.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.soap_adam_before_first_basis = true;
  hp.weight_decay = 0.02;
  const index n = 4;
  DelayedRun run(hp, n);
  std::mt19937 gen(17);
  linalg::Matrix<double> w(n, n);
  for (Step t = 1; t <= 3; ++t) {
    const Dense g = test::random_dense(4, 4, gen);
    run.step(t, w.view(), linalg::ConstMatrixView<double>(g.a.data(), n, n), 2);
  }
  ASSERT_EQ(run.block.basis_version(), 1);
  const BlockState<double>& s = run.block.state();
  for (const char* moment : {"exp_avg", "exp_avg_sq"})
    for (double x : dense_of(s, moment).a) EXPECT_EQ(x, 0.0) << moment;

  const Dense q_left = dense_of(s, "basis_left"), q_right = dense_of(s, "basis_right");
  Dense w_before(4, 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) w_before(i, j) = w(i, j);
  const Dense g = test::random_dense(4, 4, gen);
  Dense sign = test::matmul(test::matmul(test::transpose(q_left), g), q_right);  // G′
  for (double& x : sign.a) x = x / (std::fabs(x) + hp.eps / std::sqrt(1.0 - hp.beta2));
  const Dense direction = test::matmul(test::matmul(q_left, sign), test::transpose(q_right));
  ASSERT_TRUE(run.block.apply(test::host_device(), w.view(), linalg::ConstMatrixView<double>(g.a.data(), n, n), 4));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const double expected = (w_before(i, j) - hp.lr * direction(i, j)) * (1.0 - hp.lr * hp.weight_decay);
      EXPECT_NEAR(w(i, j), expected, 1e-12) << i << "," << j;
    }
}

TEST(Soap, RotatedSecondMomentFollowsTheChangeOfBasis) {
  // soap_second_moment = rotate: at a warm refresh, v' = (C_L∘C_L) v (C_R∘C_R)ᵀ with
  // C = Q_newᵀ Q_old, computed here in float64 from the bases before and after the publish.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 2;
  hp.soap_second_moment = SecondMomentOnRefresh::rotate;
  const index rows = 4, cols = 3;
  SoapBlock<double> block(hp, rows, cols);
  std::mt19937 gen(23);
  linalg::Matrix<double> w(rows, cols);
  auto dense = [&](const char* name) { return dense_of(block.state(), name); };
  for (Step t = 1; t <= 3; ++t) {
    const Dense g = test::random_dense(4, 3, gen);
    const linalg::ConstMatrixView<double> gv(g.a.data(), rows, cols);
    block.accumulate(test::host_device(), gv, t);
    std::unique_ptr<RefreshJob<double>> job;
    if (block.refresh_due(t)) {
      job = block.snapshot(test::host_device(), t);
      ASSERT_TRUE(job->run().ok());
    }
    ASSERT_TRUE(block.apply(test::host_device(), w.view(), gv, t));
    if (!job) continue;
    const Dense v = dense("exp_avg_sq"), old_left = dense("basis_left"), old_right = dense("basis_right");
    block.publish(test::host_device(), *job);
    if (t == 1) continue;  // the first basis: nothing to carry over yet
    auto squared_change = [&](const char* basis, const Dense& old_basis) {
      Dense c = test::matmul(test::transpose(dense(basis)), old_basis);
      for (double& x : c.a) x *= x;
      return c;
    };
    const Dense expected =
        test::matmul(test::matmul(squared_change("basis_left", old_left), v),
                     test::transpose(squared_change("basis_right", old_right)));
    const Dense got = dense("exp_avg_sq");
    double total_before = 0.0, total_after = 0.0;
    for (std::size_t i = 0; i < got.a.size(); ++i) {
      EXPECT_NEAR(got.a[i], expected.a[i], 1e-12 * (1.0 + std::fabs(expected.a[i])));
      total_before += v.a[i];
      total_after += got.a[i];
    }
    EXPECT_NEAR(total_after, total_before, 1e-12 * total_before) << "an orthogonal rotation keeps the sum of v";
  }
  EXPECT_EQ(block.basis_version(), 2);
}

TEST(Soap, LatePublicationKeepsAValidBasisAndTheMomentum) {
  // Delay 3 with f = 2: the job of step 3 is snapshotted before the first basis is published
  // (so it is a full eigh again) and the job of step 5 starts from a basis that is replaced
  // before it lands. Every publish must keep the momentum and leave orthonormal bases.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 2;
  const index n = 4;
  DelayedRun run(hp, n);
  std::mt19937 gen(5);
  linalg::Matrix<double> w(n, n);
  for (Step t = 1; t <= 12; ++t) {
    const Dense g = test::random_dense(4, 4, gen);
    run.step(t, w.view(), linalg::ConstMatrixView<double>(g.a.data(), n, n), 3);
    for (index i = 0; i < n * n; ++i) ASSERT_TRUE(std::isfinite(w.data()[i]));
  }
  EXPECT_EQ(run.block.basis_version(), 5);  // jobs of steps 1, 3, 5, 7, 9 published by step 12
  const BlockState<double>& s = run.block.state();
  for (std::size_t k = 0; k < s.layout().size(); ++k) {
    if (s.layout()[k].name.rfind("basis_", 0) != 0) continue;
    auto q = s.tensor(static_cast<int>(k));
    for (index a = 0; a < n; ++a)
      for (index b = 0; b < n; ++b) {
        double dot = 0.0;
        for (index i = 0; i < n; ++i) dot += q(i, a) * q(i, b);
        EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-12);
      }
  }
}

TEST(Soap, ApplyAndAccumulateCommute) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 2;
  SoapBlock<double> first(hp, 3, 4), second(hp, 3, 4);
  std::mt19937 gen(9);
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
  for (index i = 0; i < 12; ++i) EXPECT_EQ(w1.data()[i], w2.data()[i]);
}

TEST(Soap, CorruptStatisticsFailTheRefreshKeepTheBasisAndAreCounted) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 2;
  hp.max_precond_dim = 3;
  hp.max_consecutive_refresh_failures = 2;
  TensorOptimizer<double> opt(OptimizerKind::soap, hp, {3, 6}, "layer.w");  // two 3 x 3 blocks
  std::mt19937 gen(21);
  std::vector<double> w = test::random_dense(3, 6, gen).a;
  opt.step(w, test::random_dense(3, 6, gen).a);
  opt.step(w, test::random_dense(3, 6, gen).a);
  ASSERT_EQ(opt.counters().refreshes, 2);
  BlockState<double>& state = opt.blocks()[0].optimizer->state();
  state.tensor(slot_of(state, "stats_left"))(1, 1) = std::numeric_limits<double>::quiet_NaN();
  const auto basis = state.tensor(slot_of(state, "basis_left"));
  const std::vector<double> basis_before(basis.data(), basis.data() + basis.size());

  const std::vector<double> w_before = w;
  opt.step(w, test::random_dense(3, 6, gen).a);  // block step 3: refresh due, block 0's fails
  EXPECT_EQ(opt.counters().refresh_failures, 1);
  EXPECT_EQ(opt.counters().refreshes, 3);  // block 1 refreshed
  EXPECT_EQ(std::vector<double>(basis.data(), basis.data() + basis.size()), basis_before);
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_TRUE(std::isfinite(w[i]));
    EXPECT_NE(w[i], w_before[i]);  // both blocks still updated (block 0 with its old basis)
  }
  opt.step(w, test::random_dense(3, 6, gen).a);
  opt.step(w, test::random_dense(3, 6, gen).a);  // second consecutive failure: still tolerated
  EXPECT_EQ(opt.counters().refresh_failures, 2);
  opt.step(w, test::random_dense(3, 6, gen).a);
  EXPECT_THROW(opt.step(w, test::random_dense(3, 6, gen).a), NumericalError);  // third in a row
}

TEST(Soap, NonFiniteGradientNeverReachesTheWeights) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.max_precond_dim = 2;
  TensorOptimizer<float> opt(OptimizerKind::soap, hp, {2, 4});  // two 2 x 2 blocks
  std::mt19937 gen(4);
  std::vector<float> w = as<float>(test::random_dense(2, 4, gen).a);
  for (int t = 0; t < 3; ++t) opt.step(w, as<float>(test::random_dense(2, 4, gen).a));
  const std::vector<std::byte> state_before = opt.blocks()[0].optimizer->state().serialize();
  const std::vector<float> w_before = w;
  std::vector<float> g = as<float>(test::random_dense(2, 4, gen).a);
  g[1] = std::numeric_limits<float>::infinity();  // in block 0 (columns 0:2)
  opt.step(w, g);
  EXPECT_EQ(opt.counters().skipped_non_finite_blocks, 1);
  EXPECT_EQ(opt.blocks()[0].optimizer->state().serialize(), state_before);
  for (int i : {0, 1, 4, 5}) EXPECT_EQ(w[static_cast<std::size_t>(i)], w_before[static_cast<std::size_t>(i)]);
  for (int i : {2, 3, 6, 7}) EXPECT_NE(w[static_cast<std::size_t>(i)], w_before[static_cast<std::size_t>(i)]);
}

TEST(Soap, NonFiniteUpdateLeavesWeightsAndMomentsUntouched) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.soap_adam_before_first_basis = true;  // step 2 updates without a published basis
  SoapBlock<double> block(hp, 2, 2);
  linalg::Matrix<double> w(2, 2), g(2, 2);
  g(0, 0) = 1, g(0, 1) = 0.5, g(1, 0) = -0.3, g(1, 1) = 2;
  block.accumulate(test::host_device(), g.view(), 1);
  ASSERT_TRUE(block.apply(test::host_device(), w.view(), g.view(), 1));
  block.state().tensor(slot_of(block.state(), "exp_avg"))(0, 1) = std::numeric_limits<double>::infinity();
  block.accumulate(test::host_device(), g.view(), 2);
  const auto after_accumulate = block.state().serialize();
  EXPECT_FALSE(block.apply(test::host_device(), w.view(), g.view(), 2));
  EXPECT_EQ(block.state().serialize(), after_accumulate);
  for (index i = 0; i < 4; ++i) EXPECT_EQ(w.data()[i], 0.0);
}

TEST(Soap, RefreshJobReportsItsCost) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  SoapBlock<float> block(hp, 3, 5);
  linalg::Matrix<float> g(3, 5);
  for (index i = 0; i < 15; ++i) g.data()[i] = static_cast<float>(i % 4) - 1.5f;
  block.accumulate(test::host_device(), g.view(), 1);
  ASSERT_TRUE(block.refresh_due(1));
  auto job = block.snapshot(test::host_device(), 1);
  const auto costs = job->cost();
  ASSERT_EQ(costs.size(), 2u);  // a full eigh per side
  EXPECT_EQ(costs[0].kind, platform::WorkKind::eigh);
  EXPECT_EQ(costs[0].dimension, 3);
  EXPECT_EQ(costs[1].dimension, 5);
  EXPECT_GE(job->bytes(), (9u + 25u) * 2u * sizeof(float));
  EXPECT_EQ(job->stats_step(), 1);
}

TEST(Soap, ThinAndNonSquareBlocksStayFiniteAndRefresh) {
  // Rank-deficient statistics (zero eigenvalues) and 1 x 1 factors (the 1-wide edge blocks of
  // 9 x 2 and 2 x 9): bases stay valid.
  Hyperparameters hp = default_hyperparameters(OptimizerKind::soap);
  hp.lr = 0.01;
  hp.precondition_frequency = 2;
  hp.max_precond_dim = 4;
  for (const std::vector<index>& shape :
       {std::vector<index>{9, 2}, std::vector<index>{2, 9}, std::vector<index>{3, 7}}) {
    TensorOptimizer<float> opt(OptimizerKind::soap, hp, shape);
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

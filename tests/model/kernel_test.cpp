// Each kernel's forward against values worked out by hand, and its backward against central
// finite differences in double of the scalar L = Σ w ⊙ y (so dL/dy = w, a random weighting).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/model/activations.hpp"
#include "core/model/attention.hpp"
#include "core/model/cross_entropy.hpp"
#include "core/model/rmsnorm.hpp"
#include "core/model/rope.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

using linalg::ConstMatrixView;
using linalg::MatrixView;
using testing::all_indices;
using testing::expect_gradient_matches;
using testing::random_values;

double weighted_sum(std::span<const double> w, std::span<const double> y) {
  double total = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) total += w[i] * y[i];
  return total;
}

// ---- RMSNorm ----

TEST(RmsNorm, NormalisesRowsToUnitRootMeanSquare) {
  // Row (3, 4): mean square 12.5, so y = x / sqrt(12.5 + 1e-5); with gain (2, 1): doubled first.
  std::vector<double> x = {3.0, 4.0};
  const std::vector<double> gain = {2.0, 1.0};
  std::vector<double> y(2), inv_rms(1);
  rmsnorm_forward<double>(ConstMatrixView<double>(x.data(), 1, 2), gain, MatrixView<double>(y.data(), 1, 2), inv_rms);
  const double r = 1.0 / std::sqrt(12.5 + 1e-5);
  EXPECT_NEAR(inv_rms[0], r, 1e-15);
  EXPECT_NEAR(y[0], 6.0 * r, 1e-14);
  EXPECT_NEAR(y[1], 4.0 * r, 1e-14);
}

TEST(RmsNorm, BackwardMatchesFiniteDifferences) {
  for (const bool with_gain : {true, false}) {
    const linalg::index rows = 3, cols = 5;
    std::vector<double> x = random_values<double>(rows * cols, 1.0, 1);
    std::vector<double> gain = with_gain ? random_values<double>(cols, 0.3, 2, 1.0) : std::vector<double>{};
    const std::vector<double> w = random_values<double>(rows * cols, 1.0, 3);
    std::vector<double> y(rows * cols), inv_rms(rows);
    const auto value = [&] {
      rmsnorm_forward<double>(ConstMatrixView<double>(x.data(), rows, cols), gain,
                              MatrixView<double>(y.data(), rows, cols), inv_rms);
      return weighted_sum(w, y);
    };
    value();
    std::vector<double> dx(rows * cols, 0.0), dgain(gain.size(), 7.0);  // dgain is overwritten
    rmsnorm_backward<double>(ConstMatrixView<double>(x.data(), rows, cols), gain, inv_rms,
                             ConstMatrixView<double>(w.data(), rows, cols), MatrixView<double>(dx.data(), rows, cols),
                             dgain);
    expect_gradient_matches(x, dx, all_indices(x.size()), value, "rmsnorm dx");
    if (with_gain) expect_gradient_matches(gain, dgain, all_indices(gain.size()), value, "rmsnorm dgain");
  }
}

TEST(RmsNorm, BackwardAddsIntoTheInputGradient) {
  std::vector<double> x = {1.0, -2.0}, y(2), inv_rms(1), dy = {0.5, 0.25};
  rmsnorm_forward<double>(ConstMatrixView<double>(x.data(), 1, 2), {}, MatrixView<double>(y.data(), 1, 2), inv_rms);
  std::vector<double> fresh(2, 0.0), offset(2, 10.0);
  rmsnorm_backward<double>(ConstMatrixView<double>(x.data(), 1, 2), {}, inv_rms, ConstMatrixView<double>(dy.data(), 1, 2),
                           MatrixView<double>(fresh.data(), 1, 2), {});
  rmsnorm_backward<double>(ConstMatrixView<double>(x.data(), 1, 2), {}, inv_rms, ConstMatrixView<double>(dy.data(), 1, 2),
                           MatrixView<double>(offset.data(), 1, 2), {});
  EXPECT_DOUBLE_EQ(offset[0], 10.0 + fresh[0]);
  EXPECT_DOUBLE_EQ(offset[1], 10.0 + fresh[1]);
}

// ---- RoPE ----

TEST(Rope, RotatesPairsByPositionTimesFrequency) {
  // head_dim 4: pair 0 = (x0, x2) turns at frequency 1, pair 1 = (x1, x3) at 10000^(−1/2) = 0.01.
  // Row 0 is position 0 (unchanged); row 1 is position 1 (length 2).
  const RotaryTable<double> table(4, 4);
  std::vector<double> x = {1.0, 2.0, 3.0, 4.0,   // position 0
                           1.0, 1.0, 0.0, 0.0};  // position 1
  rope_forward<double>(MatrixView<double>(x.data(), 2, 4), 2, 1, table);
  EXPECT_DOUBLE_EQ(x[0], 1.0);
  EXPECT_DOUBLE_EQ(x[1], 2.0);
  EXPECT_DOUBLE_EQ(x[2], 3.0);
  EXPECT_DOUBLE_EQ(x[3], 4.0);
  EXPECT_NEAR(x[4], std::cos(1.0), 1e-15);
  EXPECT_NEAR(x[6], std::sin(1.0), 1e-15);
  EXPECT_NEAR(x[5], std::cos(0.01), 1e-15);
  EXPECT_NEAR(x[7], std::sin(0.01), 1e-15);
}

TEST(Rope, BackwardMatchesFiniteDifferencesAndUndoesForward) {
  const linalg::index length = 3, heads = 2, head_dim = 4, rows = 2 * length, cols = heads * head_dim;
  const RotaryTable<double> table(length, head_dim);
  std::vector<double> x = random_values<double>(rows * cols, 1.0, 4);
  const std::vector<double> w = random_values<double>(rows * cols, 1.0, 5);
  std::vector<double> y(x.size());
  const auto value = [&] {
    y = x;
    rope_forward<double>(MatrixView<double>(y.data(), rows, cols), length, heads, table);
    return weighted_sum(w, y);
  };
  std::vector<double> dx = w;
  rope_backward<double>(MatrixView<double>(dx.data(), rows, cols), length, heads, table);
  expect_gradient_matches(x, dx, all_indices(x.size()), value, "rope dx");

  value();  // a rotation is undone by its transpose
  rope_backward<double>(MatrixView<double>(y.data(), rows, cols), length, heads, table);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-14);
}

// ---- Attention ----

struct AttentionData {
  AttentionShape shape{2, 4, 2, 3};
  std::vector<double> q = random_values<double>(shape.tokens() * shape.width(), 1.0, 6);
  std::vector<double> k = random_values<double>(shape.tokens() * shape.width(), 1.0, 7);
  std::vector<double> v = random_values<double>(shape.tokens() * shape.width(), 1.0, 8);
  std::vector<double> probs = std::vector<double>(shape.batch * shape.heads * shape.length * shape.length);
  std::vector<double> out = std::vector<double>(shape.tokens() * shape.width());

  MatrixView<double> rows(std::vector<double>& data) { return {data.data(), shape.tokens(), shape.width()}; }
  void forward() {
    causal_attention_forward<double>(shape, rows(q), rows(k), rows(v),
                                     {probs.data(), shape.batch * shape.heads * shape.length, shape.length},
                                     rows(out));
  }
};

TEST(Attention, FirstPositionCopiesItsValueAndFutureKeysDoNotMatter) {
  AttentionData a;
  a.forward();
  const std::vector<double> before = a.out;
  const linalg::index width = a.shape.width();
  for (linalg::index b = 0; b < a.shape.batch; ++b)
    for (linalg::index j = 0; j < width; ++j)  // position 0 attends only to itself
      EXPECT_NEAR(a.out[(b * a.shape.length) * width + j], a.v[(b * a.shape.length) * width + j], 1e-15);
  // Changing the last position's key and value leaves every earlier output as it was.
  for (linalg::index b = 0; b < a.shape.batch; ++b)
    for (linalg::index j = 0; j < width; ++j) {
      a.k[(b * a.shape.length + a.shape.length - 1) * width + j] += 3.0;
      a.v[(b * a.shape.length + a.shape.length - 1) * width + j] -= 2.0;
    }
  a.forward();
  for (linalg::index b = 0; b < a.shape.batch; ++b)
    for (linalg::index i = 0; i + 1 < a.shape.length; ++i)
      for (linalg::index j = 0; j < width; ++j)
        EXPECT_EQ(a.out[(b * a.shape.length + i) * width + j], before[(b * a.shape.length + i) * width + j]);
}

TEST(Attention, TwoEqualKeysAverageTheirValues) {
  // One sequence, one head, head_dim 2: position 1 sees keys 0 and 1; equal keys give equal
  // weights, so its output is the mean of the two values.
  AttentionData a;
  a.shape = {1, 2, 1, 2};
  a.q = {0.3, -0.2, 1.0, 2.0};
  a.k = {0.5, 0.5, 0.5, 0.5};
  a.v = {1.0, 2.0, 3.0, 6.0};
  a.probs.assign(4, 0.0);
  a.out.assign(4, 0.0);
  a.forward();
  EXPECT_NEAR(a.out[2], 2.0, 1e-15);
  EXPECT_NEAR(a.out[3], 4.0, 1e-15);
  EXPECT_EQ(a.probs[1], 0.0);  // masked: position 0 never sees position 1
}

TEST(Attention, BackwardMatchesFiniteDifferences) {
  AttentionData a;
  const std::vector<double> w = random_values<double>(a.out.size(), 1.0, 9);
  const auto value = [&] {
    a.forward();
    return weighted_sum(w, a.out);
  };
  value();
  std::vector<double> dq(a.q.size()), dk(a.k.size()), dv(a.v.size()), scratch(a.shape.length * a.shape.length);
  std::vector<double> d_out = w;
  causal_attention_backward<double>(a.shape, a.rows(a.q), a.rows(a.k), a.rows(a.v),
                                    {a.probs.data(), a.shape.batch * a.shape.heads * a.shape.length, a.shape.length},
                                    a.rows(d_out), a.rows(dq), a.rows(dk), a.rows(dv),
                                    {scratch.data(), a.shape.length, a.shape.length});
  expect_gradient_matches(a.q, dq, all_indices(a.q.size()), value, "attention dq");
  expect_gradient_matches(a.k, dk, all_indices(a.k.size()), value, "attention dk");
  expect_gradient_matches(a.v, dv, all_indices(a.v.size()), value, "attention dv");
}

// ---- Activations ----

TEST(Activations, KnownValues) {
  // gelu_tanh(1) = 0.5 · (1 + tanh(sqrt(2/π) · 1.044715)) = 0.841192 (the erf form gives 0.841345);
  // silu(1) · up = up / (1 + e^−1).
  const std::vector<double> x = {0.0, 1.0, -30.0};
  std::vector<double> y(3);
  gelu_forward<double>(x, y);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 0.841192, 1e-6);
  EXPECT_NEAR(y[2], 0.0, 1e-12);
  const std::vector<double> gate = {1.0}, up = {3.0};
  std::vector<double> s(1);
  swiglu_forward<double>(gate, up, s);
  EXPECT_NEAR(s[0], 3.0 / (1.0 + std::exp(-1.0)), 1e-15);
}

TEST(Activations, GeluBackwardMatchesFiniteDifferences) {
  std::vector<double> x = random_values<double>(12, 1.5, 10);
  const std::vector<double> w = random_values<double>(12, 1.0, 11);
  std::vector<double> y(12), dx(12);
  const auto value = [&] {
    gelu_forward<double>(x, y);
    return weighted_sum(w, y);
  };
  gelu_backward<double>(x, w, dx);
  expect_gradient_matches(x, dx, all_indices(x.size()), value, "gelu dx");
}

TEST(Activations, SwigluBackwardMatchesFiniteDifferences) {
  std::vector<double> gate = random_values<double>(12, 1.5, 12);
  std::vector<double> up = random_values<double>(12, 1.0, 13);
  const std::vector<double> w = random_values<double>(12, 1.0, 14);
  std::vector<double> y(12), d_gate = w, d_up(12);  // d_gate aliases the incoming gradient
  const auto value = [&] {
    swiglu_forward<double>(gate, up, y);
    return weighted_sum(w, y);
  };
  swiglu_backward<double>(gate, up, d_gate, d_gate, d_up);
  expect_gradient_matches(gate, d_gate, all_indices(gate.size()), value, "swiglu d_gate");
  expect_gradient_matches(up, d_up, all_indices(up.size()), value, "swiglu d_up");
}

// ---- Cross-entropy ----

TEST(CrossEntropy, UniformLogitsCostLogVocabAndLargeLogitsStayFinite) {
  const std::vector<double> logits = {2.0, 2.0, 2.0, 2.0,  // uniform: ln 4
                                      1000.0, 0.0, 0.0, 0.0};  // target 0 certain: ~0
  const std::vector<TokenId> targets = {3, 0};
  std::vector<double> lse(2);
  const double total = cross_entropy_forward<double>(ConstMatrixView<double>(logits.data(), 2, 4), targets, lse);
  EXPECT_NEAR(total, std::log(4.0), 1e-14);
  EXPECT_NEAR(lse[1], 1000.0, 1e-12);
}

TEST(CrossEntropy, BackwardMatchesFiniteDifferences) {
  const linalg::index rows = 3, vocab = 5;
  std::vector<double> logits = random_values<double>(rows * vocab, 2.0, 15);
  const std::vector<TokenId> targets = {4, 0, 2};
  std::vector<double> lse(rows);
  const auto value = [&] {
    return cross_entropy_forward<double>(ConstMatrixView<double>(logits.data(), rows, vocab), targets, lse) / rows;
  };
  value();
  std::vector<double> d_logits(logits.size());
  cross_entropy_backward<double>(ConstMatrixView<double>(logits.data(), rows, vocab), lse, targets, 1.0 / rows,
                                 MatrixView<double>(d_logits.data(), rows, vocab));
  expect_gradient_matches(logits, d_logits, all_indices(logits.size()), value, "cross-entropy d_logits");
  double row_sum = 0.0;  // softmax − onehot sums to zero in each row
  for (linalg::index j = 0; j < vocab; ++j) row_sum += d_logits[j];
  EXPECT_NEAR(row_sum, 0.0, 1e-15);
}

}  // namespace
}  // namespace asteria::model

// Every device operation on every backend (tests/ops/backends.hpp): the element-wise rules give
// the same bits as the rule evaluated element by element on the host, products and reductions
// agree with a float64 reference within their rounding bound, moves are exact, and the guards
// keep non-finite values out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ops/device.hpp"
#include "core/ops/rules.hpp"
#include "tests/ops/backends.hpp"
#include "tests/ops/device_matrix.hpp"

namespace asteria::test {
namespace {

using linalg::ConstMatrixView;
using linalg::index;
using linalg::Matrix;
using linalg::MatrixView;
using linalg::Op;

class Operations : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = make_backend(GetParam());
    if (!backend_.device) GTEST_SKIP() << GetParam() << ": " << backend_.unavailable;
  }
  ops::Device& device() { return *backend_.device; }

 private:
  Backend backend_;
};

template <class R>
struct ValueOf;
template <template <class> class R, class T>
struct ValueOf<R<T>> {
  using type = T;
};

// The shape of operand k of a rules x cols operation.
std::pair<index, index> shape_of(ops::Extent extent, index rows, index cols) {
  if (extent == ops::Extent::per_row) return {rows, 1};
  if (extent == ops::Extent::per_col) return {cols, 1};
  return {rows, cols};
}

template <class T, ops::OperandSpec S>
T& element(Matrix<T>& m, index i, index j) {
  if constexpr (S.extent == ops::Extent::per_row) return m(i, 0);
  else if constexpr (S.extent == ops::Extent::per_col) return m(j, 0);
  else return m(i, j);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Runs `rule` on the device over random operands (`nonnegative`: operands fed to a square root,
// full ones strided) and checks each result against the rule evaluated element by element here,
// bit for bit.
template <class Rule, std::size_t... K>
void check_rule(ops::Device& device, const Rule& rule, std::vector<int> nonnegative, index rows, index cols,
                std::index_sequence<K...>) {
  using T = typename ValueOf<Rule>::type;
  constexpr std::size_t N = sizeof...(K);
  std::mt19937 gen(static_cast<unsigned>(rows * 131 + cols));
  std::vector<Matrix<T>> host;
  for (std::size_t k = 0; k < N; ++k) {
    const auto [r, c] = shape_of(Rule::operands[k].extent, rows, cols);
    const bool positive = std::find(nonnegative.begin(), nonnegative.end(), static_cast<int>(k)) != nonnegative.end();
    host.push_back(random_matrix<T>(r, c, gen, positive ? 0.05 : -1.5, 1.5));
  }
  std::vector<DeviceMatrix<T>> on_device;
  for (std::size_t k = 0; k < N; ++k)
    on_device.emplace_back(device, host[k], Rule::operands[k].extent == ops::Extent::full ? 3 : 0);
  auto operand = [&](auto k) {
    if constexpr (Rule::operands[decltype(k)::value].access == ops::Access::read) return on_device[k].cview();
    else return on_device[k].view();
  };
  const ops::Flag flag = device.flag();
  if constexpr (Rule::kind == ops::RuleKind::map) device.map(rule, operand(std::integral_constant<std::size_t, K>{})...);
  else if constexpr (Rule::kind == ops::RuleKind::guarded) device.update(flag, rule, operand(std::integral_constant<std::size_t, K>{})...);
  else device.checked_write(flag, rule, operand(std::integral_constant<std::size_t, K>{})...);
  EXPECT_FALSE(device.raised(flag));

  // The rule evaluated element by element here, on copies of the inputs. (Each rule's equation is
  // held against float64 where it is used: the optimizers' steps, optimizer_conformance_test.)
  std::vector<Matrix<T>> expected = host;
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) {
      if constexpr (Rule::kind == ops::RuleKind::checked)
        element<T, Rule::operands[0]>(expected[0], i, j) = rule(element<T, Rule::operands[K]>(expected[K], i, j)...);
      else
        rule(element<T, Rule::operands[K]>(expected[K], i, j)...);
    }
  for (std::size_t k = 0; k < N; ++k) {
    if (Rule::operands[k].access == ops::Access::read) continue;
    const Matrix<T> got = on_device[k].host();
    for (index e = 0; e < got.size(); ++e)
      ASSERT_TRUE(same_bits(got.data()[e], expected[k].data()[e]))
          << Rule::name << " operand " << k << " element " << e << ": " << got.data()[e] << " vs " << expected[k].data()[e];
  }
}

template <class Rule>
void check_rule(ops::Device& device, const Rule& rule, std::vector<int> nonnegative = {}) {
  SCOPED_TRACE(Rule::name);
  for (auto [rows, cols] : {std::pair<index, index>{1, 1}, {7, 13}, {64, 33}, {300, 257}})
    check_rule(device, rule, nonnegative, rows, cols, std::make_index_sequence<Rule::operands.size()>{});
}

template <class T>
void check_every_rule(ops::Device& device) {
  check_rule(device, ops::Assign<T>{});
  check_rule(device, ops::Set<T>{T(0.25)});
  check_rule(device, ops::AddScaled<T>{T(-4.775)});
  check_rule(device, ops::Square<T>{});
  check_rule(device, ops::ScaleRows<T>{});
  check_rule(device, ops::ScaleCols<T>{});
  check_rule(device, ops::AdamWStep<T>{T(0.9), T(0.999), T(1e-3 / 0.1), T(1.0 / std::sqrt(0.001)), T(1e-8), T(1e-5)},
             {2});
  check_rule(device, ops::FilteredGradient<T>{T(0.9), T(1.0 / 0.271)});
  check_rule(device, ops::AdamGraftDirection<T>{T(0.999), T(0.001), T(1.0 / 0.003), T(1e-10)}, {0});
  check_rule(device, ops::ShampooDescent<T>{T(0.01), T(1e-4)});
  check_rule(device, ops::SoapDirection<T>{T(0.95), T(0.95), T(1e-8)}, {2});
  check_rule(device, ops::SoapMoments<T>{T(0.95), T(0.95)}, {1});
  check_rule(device, ops::DescentThenDecay<T>{T(3e-3), T(1) - T(3e-5)});
  check_rule(device, ops::MomentumLerp<T>{T(0.9)});
  check_rule(device, ops::KlPrecondition<T>{T(1e-8)});
  check_rule(device, ops::KlInverseSqrtEigenvalues<T>{T(0.98), T(40)}, {0, 1});
  check_rule(device, ops::MuonMomentum<T>{T(0.95), true});
  check_rule(device, ops::MuonMomentum<T>{T(0.95), false});
  check_rule(device, ops::MuonDescent<T>{T(1) - T(2e-4), T(0.02)});
}

TEST_P(Operations, EveryRuleGivesTheHostsBitsInFloatAndDouble) {
  check_every_rule<float>(device());
  check_every_rule<double>(device());
}

// |got − reference| ≤ bound·γ with γ = 2·k·u of T (rounding of a k-term dot product).
template <class T>
void expect_within(const Matrix<T>& got, const Matrix<double>& reference, const Matrix<double>& bound, index k,
                   const std::string& what) {
  const double gamma = 2.0 * static_cast<double>(std::max<index>(k, 1)) * std::numeric_limits<T>::epsilon();
  for (index e = 0; e < got.size(); ++e)
    ASSERT_LE(std::abs(static_cast<double>(got.data()[e]) - reference.data()[e]), gamma * bound.data()[e] + 1e-300)
        << what << " element " << e;
}

template <class T>
void check_products(ops::Device& device) {
  std::mt19937 gen(7);
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose}) {
      const index m = 37, n = 29, k = 53;
      const Matrix<T> a = op_a == Op::none ? random_matrix<T>(m, k, gen) : random_matrix<T>(k, m, gen);
      const Matrix<T> b = op_b == Op::none ? random_matrix<T>(k, n, gen) : random_matrix<T>(n, k, gen);
      const Matrix<T> c0 = random_matrix<T>(m, n, gen);
      DeviceMatrix<T> da(device, a), db(device, b), dc(device, c0);
      const T alpha = T(0.75), beta = T(-0.5);
      device.gemm<T>(alpha, da.cview(), op_a, db.cview(), op_b, beta, dc.view());
      Matrix<double> reference(m, n), bound(m, n);
      for (index i = 0; i < m; ++i)
        for (index j = 0; j < n; ++j) {
          double sum = 0, mag = 0;
          for (index p = 0; p < k; ++p) {
            const double x = op_a == Op::none ? a(i, p) : a(p, i);
            const double y = op_b == Op::none ? b(p, j) : b(j, p);
            sum += x * y;
            mag += std::abs(x * y);
          }
          reference(i, j) = alpha * sum + beta * static_cast<double>(c0(i, j));
          bound(i, j) = std::abs(double(alpha)) * mag + std::abs(double(beta) * c0(i, j));
        }
      expect_within(dc.host(), reference, bound, k + 1, "gemm");
    }
  // A batch of three products, operands stacked (strided) as the batched call takes them.
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose}) {
      const index batch = 3, m = 9, n = 14, k = 11;
      const index ar = op_a == Op::none ? m : k, ac = op_a == Op::none ? k : m;
      const index br = op_b == Op::none ? k : n, bc = op_b == Op::none ? n : k;
      const Matrix<T> a = random_matrix<T>(batch * ar, ac, gen), b = random_matrix<T>(batch * br, bc, gen);
      const Matrix<T> c0 = random_matrix<T>(batch * m, n, gen);
      DeviceMatrix<T> da(device, a), db(device, b), dc(device, c0);
      device.gemm_batched<T>(T(1.5), da.cview(), op_a, db.cview(), op_b, T(0.25), dc.view(), batch);
      Matrix<double> reference(batch * m, n), bound(batch * m, n);
      for (index q = 0; q < batch; ++q)
        for (index i = 0; i < m; ++i)
          for (index j = 0; j < n; ++j) {
            double sum = 0, mag = 0;
            for (index p = 0; p < k; ++p) {
              const double x = op_a == Op::none ? a(q * ar + i, p) : a(q * ar + p, i);
              const double y = op_b == Op::none ? b(q * br + p, j) : b(q * br + j, p);
              sum += x * y;
              mag += std::abs(x * y);
            }
            reference(q * m + i, j) = 1.5 * sum + 0.25 * static_cast<double>(c0(q * m + i, j));
            bound(q * m + i, j) = 1.5 * mag + 0.25 * std::abs(double(c0(q * m + i, j)));
          }
      expect_within(dc.host(), reference, bound, k + 1, "gemm_batched");
    }
  for (Op op : {Op::none, Op::transpose}) {
    const Matrix<T> a = random_matrix<T>(23, 41, gen);
    const index n = op == Op::none ? 23 : 41, k = op == Op::none ? 41 : 23;
    Matrix<T> c0 = random_matrix<T>(n, n, gen);
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < i; ++j) c0(i, j) = c0(j, i);  // symmetric, as statistics are
    DeviceMatrix<T> da(device, a), dc(device, c0);
    device.syrk<T>(T(0.1), da.cview(), op, T(0.9), dc.view());
    Matrix<double> reference(n, n), bound(n, n);
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < n; ++j) {
        double sum = 0, mag = 0;
        for (index p = 0; p < k; ++p) {
          const double x = op == Op::none ? a(i, p) : a(p, i);
          const double y = op == Op::none ? a(j, p) : a(p, j);
          sum += x * y;
          mag += std::abs(x * y);
        }
        reference(i, j) = 0.1 * sum + 0.9 * static_cast<double>(c0(i, j));
        bound(i, j) = 0.1 * mag + 0.9 * std::abs(double(c0(i, j)));
      }
    const Matrix<T> got = dc.host();
    expect_within(got, reference, bound, k + 1, "syrk");
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < n; ++j) ASSERT_EQ(got(i, j), got(j, i)) << "syrk writes both triangles";
  }
}

TEST_P(Operations, ProductsAgreeWithFloat64WithinTheirRoundingBound) {
  check_products<float>(device());
  check_products<double>(device());
}

template <class T>
void check_reductions(ops::Device& device) {
  std::mt19937 gen(11);
  const Matrix<T> x = random_matrix<T>(300, 271, gen);
  DeviceMatrix<T> dx(device, x);
  const ops::Scalar norm = device.scalar();
  device.norm<T>(dx.cview(), norm);
  double sum = 0;
  for (T v : x.values()) sum += double(v) * double(v);
  EXPECT_NEAR(device.value(norm), std::sqrt(sum), 1e-12 * std::sqrt(sum)) << "norm";

  // x ← x · (numerator / (denominator + floor)), with and without a numerator
  const ops::Scalar other = device.scalar();
  const Matrix<T> y = random_matrix<T>(17, 9, gen);
  DeviceMatrix<T> dy(device, y), dz(device, y);
  device.norm<T>(dy.cview(), other);
  device.scale_by_ratio<T>(dy.view(), &norm, other, 1e-16);
  device.scale_by_ratio<T>(dz.view(), nullptr, other, 1e-7);
  const double ny = device.value(other);
  const T ratio = static_cast<T>(device.value(norm) / (ny + 1e-16));
  const T inverse = static_cast<T>(1.0 / (ny + 1e-7));
  const Matrix<T> gy = dy.host(), gz = dz.host();
  for (index e = 0; e < y.size(); ++e) {
    EXPECT_EQ(gy.data()[e], y.data()[e] * ratio);
    EXPECT_EQ(gz.data()[e], y.data()[e] * inverse);
  }

  // KL-Shampoo's eigenvalue estimates
  const index rows = 45, cols = 70;
  const Matrix<T> c = random_matrix<T>(rows, cols, gen);
  const Matrix<T> sl = random_matrix<T>(rows, 1, gen, 0.1, 3.0), sr = random_matrix<T>(cols, 1, gen, 0.1, 3.0);
  DeviceMatrix<T> dc(device, c), dsl(device, sl, 0), dsr(device, sr, 0);
  DeviceMatrix<T> left(device, Matrix<T>(rows, 1), 0), right(device, Matrix<T>(cols, 1), 0);
  device.kl_estimates<T>(dc.cview(), dsl.cview(), dsr.cview(), left.view(), right.view());
  const Matrix<T> gl = left.host(), gr = right.host();
  const double u = std::numeric_limits<T>::epsilon();
  for (index i = 0; i < rows; ++i) {
    double ref = 0;
    for (index j = 0; j < cols; ++j) ref += double(c(i, j)) * c(i, j) * sr(j, 0) * sr(j, 0);
    ref /= static_cast<double>(cols);
    EXPECT_NEAR(gl(i, 0), ref, 4.0 * cols * u * ref) << "left estimate " << i;
  }
  for (index j = 0; j < cols; ++j) {
    double ref = 0;
    for (index i = 0; i < rows; ++i) ref += double(c(i, j)) * c(i, j) * sl(i, 0) * sl(i, 0);
    ref /= static_cast<double>(rows);
    EXPECT_NEAR(gr(j, 0), ref, 4.0 * rows * u * ref) << "right estimate " << j;
  }
}

TEST_P(Operations, ReductionsAgreeWithFloat64) {
  check_reductions<float>(device());
  check_reductions<double>(device());
}

template <class T>
void check_moves(ops::Device& device) {
  std::mt19937 gen(13);
  const Matrix<T> x = random_matrix<T>(19, 23, gen);
  DeviceMatrix<T> dx(device, x);
  EXPECT_EQ(dx.host().values().size(), x.values().size());
  const Matrix<T> back = dx.host();
  EXPECT_TRUE(std::equal(back.values().begin(), back.values().end(), x.values().begin())) << "upload/download";

  // A strided block of a device matrix, copied and filled.
  DeviceMatrix<T> dy(device, Matrix<T>(19, 23));
  device.copy<T>(dx.cview().block(2, 3, 10, 11), dy.view().block(5, 7, 10, 11));
  device.fill<T>(dy.view().block(0, 0, 2, 23), T(-2));
  const Matrix<T> y = dy.host();
  for (index i = 0; i < 10; ++i)
    for (index j = 0; j < 11; ++j) ASSERT_EQ(y(5 + i, 7 + j), x(2 + i, 3 + j));
  for (index j = 0; j < 23; ++j) ASSERT_EQ(y(1, j), T(-2));
  EXPECT_EQ(y(18, 0), T(0));

  // Permutation of rows and columns (SOAP's second moment)
  std::vector<index> rows(19), cols(23);
  std::iota(rows.begin(), rows.end(), 0);
  std::iota(cols.begin(), cols.end(), 0);
  std::shuffle(rows.begin(), rows.end(), gen);
  std::shuffle(cols.begin(), cols.end(), gen);
  device.permute<T>(dx.view(), rows, cols);
  const Matrix<T> p = dx.host();
  for (index i = 0; i < 19; ++i)
    for (index j = 0; j < 23; ++j) ASSERT_EQ(p(i, j), x(rows[static_cast<std::size_t>(i)], cols[static_cast<std::size_t>(j)]));
}

TEST_P(Operations, CopiesFillsTransfersAndPermutationsMoveExactValues) {
  check_moves<float>(device());
  check_moves<double>(device());
}

template <class T>
void check_guards(ops::Device& device) {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::mt19937 gen(17);
  // Gradients: a NaN in row 2 is reported.
  Matrix<T> g = random_matrix<T>(5, 6, gen);
  DeviceMatrix<T> clean(device, g);
  const ops::Flag none = device.flag();
  device.check_finite<T>(clean.cview(), none);
  EXPECT_FALSE(device.raised(none));
  g(2, 4) = nan;
  DeviceMatrix<T> dirty(device, g);
  const ops::Flag found = device.flag();
  device.check_finite<T>(dirty.cview(), found);
  EXPECT_TRUE(device.raised(found));

  // Guarded (one pass): the element whose update overflows keeps its values, the others move.
  const index n = 40;
  Matrix<T> w = random_matrix<T>(1, n, gen), m(1, n), v(1, n), grad = random_matrix<T>(1, n, gen);
  grad(0, 7) = std::numeric_limits<T>::max();  // g² overflows: the new v is infinite
  DeviceMatrix<T> dw(device, w), dm(device, m), dv(device, v), dg(device, grad);
  const ops::Flag adam = device.flag();
  device.update(adam, ops::AdamWStep<T>{T(0.9), T(0.999), T(0.01), T(30), T(1e-8), T(0)}, dw.view(), dm.view(),
                dv.view(), dg.cview());
  EXPECT_TRUE(device.raised(adam));
  const Matrix<T> w1 = dw.host(), m1 = dm.host(), v1 = dv.host();
  EXPECT_EQ(w1(0, 7), w(0, 7));
  EXPECT_EQ(m1(0, 7), T(0));
  EXPECT_EQ(v1(0, 7), T(0));
  for (index j = 0; j < n; ++j) {
    ASSERT_TRUE(std::isfinite(w1(0, j)) && std::isfinite(m1(0, j)) && std::isfinite(v1(0, j)));
    if (j != 7) {
      ASSERT_NE(w1(0, j), w(0, j)) << j;
    }
  }

  // Checked (whole block): one infinite direction leaves every weight as it was, and the commit
  // that must follow only a written update is skipped.
  Matrix<T> d = random_matrix<T>(4, 5, gen);
  const Matrix<T> w0 = random_matrix<T>(4, 5, gen), m0 = random_matrix<T>(4, 5, gen);
  DeviceMatrix<T> dweights(device, w0), dmoment(device, m0), ddir(device, d);
  const ops::Flag written = device.flag();
  device.checked_write(written, ops::DescentThenDecay<T>{T(0.1), T(0.99)}, dweights.view(), ddir.cview());
  device.map_unless_raised(written, ops::Assign<T>{}, dmoment.view(), ddir.cview());
  EXPECT_FALSE(device.raised(written));
  EXPECT_EQ(dmoment.host()(3, 4), d(3, 4));
  d(1, 1) = inf;
  DeviceMatrix<T> bad(device, d), dweights2(device, w0), dmoment2(device, m0);
  const ops::Flag refused = device.flag();
  device.checked_write(refused, ops::DescentThenDecay<T>{T(0.1), T(0.99)}, dweights2.view(), bad.cview());
  device.map_unless_raised(refused, ops::Assign<T>{}, dmoment2.view(), bad.cview());
  EXPECT_TRUE(device.raised(refused));
  const Matrix<T> w2 = dweights2.host(), m2 = dmoment2.host();
  EXPECT_TRUE(std::equal(w2.values().begin(), w2.values().end(), w0.values().begin()));
  EXPECT_TRUE(std::equal(m2.values().begin(), m2.values().end(), m0.values().begin()));
}

TEST_P(Operations, GuardsKeepNonFiniteValuesOut) {
  check_guards<float>(device());
  check_guards<double>(device());
}

INSTANTIATE_TEST_SUITE_P(Backends, Operations, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& backend) { return backend.param; });

}  // namespace
}  // namespace asteria::test

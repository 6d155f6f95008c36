// Coupled Newton iteration for inverse p-th roots (DS CoupledNewtonConfig): GEMM/SYRK only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/linalg/blas.hpp"
#include "core/linalg/inverse_root.hpp"
#include "core/linalg/lapack_kernels.hpp"

namespace asteria::linalg {
namespace {

// max_ij |M − I|_ij (DS: torch.dist(M, I, p=inf)); NaN when M holds a non-finite value.
template <Real T>
double distance_to_identity(ConstMatrixView<T> m) {
  double worst = 0.0;
  for (index i = 0; i < m.rows(); ++i) {
    auto row = m.row(i);
    for (index j = 0; j < m.cols(); ++j) {
      const double e = std::abs(static_cast<double>(row[static_cast<std::size_t>(j)]) - (i == j ? 1.0 : 0.0));
      if (!(e <= worst)) worst = e;  // also propagates NaN
    }
  }
  return worst;
}

// The n x n buffers one iteration needs; swapped instead of copied.
template <Real T>
struct NewtonBuffers {
  explicit NewtonBuffers(index n) : x(n, n), x_next(n, n), m(n, n), m_next(n, n), base(n, n), square(n, n) {}
  Matrix<T> x, x_next, m, m_next, base, square;
};

// m_next = base^p · m, squaring with SYRK (base and its powers are symmetric: polynomials
// in A), multiplying with GEMM. For p = 4: two SYRKs and one GEMM (4n³ flops).
template <Real T>
void apply_power(NewtonBuffers<T>& b, int p) {
  bool have_acc = false;  // the running product lives in m_next once started; until then it is m
  while (p > 0) {
    if (p & 1) {
      if (have_acc) {
        gemm<T>(T(1), b.base, Op::none, b.m_next, Op::none, T(0), b.square);
        std::swap(b.square, b.m_next);
      } else {
        gemm<T>(T(1), b.base, Op::none, b.m, Op::none, T(0), b.m_next);
        have_acc = true;
      }
    }
    p >>= 1;
    if (p > 0) {  // base <- base²; `square` is scratch here
      detail::gram_full<T>(b.base, b.square.view());
      std::swap(b.base, b.square);
    }
  }
}

}  // namespace

template <Real T>
Status inverse_root_newton(ConstMatrixView<T> a, int p, double epsilon, const CoupledNewtonOptions& options,
                           MatrixView<T> out, NewtonReport& report) {
  report = {};
  const index n = a.rows();
  if (a.cols() != n || out.rows() != n || out.cols() != n)
    return {StatusCode::invalid_argument, "inverse_root_newton: expected square a and out of the same shape"};
  if (p < 1 || !(epsilon >= 0.0) || !std::isfinite(epsilon) || options.max_iterations < 0 ||
      !(options.tolerance >= 0.0))
    return {StatusCode::invalid_argument,
            "inverse_root_newton: expected integer p >= 1, finite epsilon >= 0, max_iterations >= 0, tolerance >= 0"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "inverse_root_newton: input holds NaN or Inf"};
  if (n == 0) return Status::success();

  NewtonBuffers<T> b(n);
  double norm2 = 0.0;  // ‖A + εI‖_F², in double
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) {
      const double v = static_cast<double>(a(i, j)) + (i == j ? epsilon : 0.0);
      norm2 += v * v;
    }
  if (!(norm2 > 0.0) || !std::isfinite(norm2))
    return {StatusCode::non_finite_output, "inverse_root_newton: A + εI is zero or too large"};
  // z = (p+1)/(2‖A+εI‖_F) puts M's spectrum in (0, (p+1)/2], where the iteration converges.
  const double z = (p + 1.0) / (2.0 * std::sqrt(norm2));
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j)
      b.m(i, j) = static_cast<T>(z * (static_cast<double>(a(i, j)) + (i == j ? epsilon : 0.0)));
  const auto x0 = static_cast<T>(std::pow(z, 1.0 / p));
  for (index i = 0; i < n; ++i) b.x(i, i) = x0;

  const T diag = static_cast<T>((p + 1.0) / p);
  const T slope = static_cast<T>(-1.0 / p);
  double error = distance_to_identity<T>(b.m);
  report.error = error;
  double previous = std::numeric_limits<double>::infinity();
  int iteration = 0;
  while (error > options.tolerance && iteration < options.max_iterations) {
    // Past the linear phase the error squares each step; when it stops shrinking, rounding has
    // reached its floor and further iterations only cost time.
    if (previous < 1e-2 && error > 0.5 * previous) break;
    ++iteration;
    for (index i = 0; i < n; ++i) {  // M' = ((p+1)/p) I − M/p
      auto from = b.m.view().row(i);
      auto to = b.base.view().row(i);
      for (index j = 0; j < n; ++j) to[static_cast<std::size_t>(j)] = slope * from[static_cast<std::size_t>(j)];
      to[static_cast<std::size_t>(i)] += diag;
    }
    gemm<T>(T(1), b.x, Op::none, b.base, Op::none, T(0), b.x_next);  // X <- X M'
    std::swap(b.x, b.x_next);
    apply_power(b, p);  // M <- M'^p M
    std::swap(b.m, b.m_next);
    // M is symmetric in exact arithmetic; keeping it so exactly matters because the squarings
    // use SYRK (M'ᵀM'), which would silently drop a skew part instead of damping it.
    detail::symmetrize<T>(b.m);
    previous = error;
    error = distance_to_identity<T>(b.m);
    report.iterations = iteration;
    report.error = error;
    if (!std::isfinite(error))
      return {StatusCode::non_finite_output, "inverse_root_newton: iteration diverged (non-finite M)"};
  }
  if (!(error <= options.tolerance))
    return {StatusCode::no_convergence, "inverse_root_newton: ‖M − I‖ = " + std::to_string(error) + " after " +
                                            std::to_string(iteration) + " iterations"};
  if (!all_finite(ConstMatrixView<T>(b.x)))
    return {StatusCode::non_finite_output, "inverse_root_newton: root is not finite"};
  // X is a polynomial in A, hence symmetric; return the symmetric part to drop rounding skew.
  for (index i = 0; i < n; ++i)
    for (index j = i; j < n; ++j) {
      const T v = static_cast<T>(0.5 * (static_cast<double>(b.x(i, j)) + static_cast<double>(b.x(j, i))));
      out(i, j) = v;
      out(j, i) = v;
    }
  return Status::success();
}

template <Real T>
Status inverse_root_newton(ConstMatrixView<T> a, int p, double epsilon, const CoupledNewtonOptions& options,
                           MatrixView<T> out) {
  NewtonReport report;
  return inverse_root_newton(a, p, epsilon, options, out, report);
}

template Status inverse_root_newton<float>(ConstMatrixView<float>, int, double, const CoupledNewtonOptions&,
                                           MatrixView<float>, NewtonReport&);
template Status inverse_root_newton<double>(ConstMatrixView<double>, int, double, const CoupledNewtonOptions&,
                                            MatrixView<double>, NewtonReport&);
template Status inverse_root_newton<float>(ConstMatrixView<float>, int, double, const CoupledNewtonOptions&,
                                           MatrixView<float>);
template Status inverse_root_newton<double>(ConstMatrixView<double>, int, double, const CoupledNewtonOptions&,
                                            MatrixView<double>);

}  // namespace asteria::linalg

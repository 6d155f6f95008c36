#include "hwmodels/calibrate/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {
namespace {

constexpr const char* kSource = "non-negative least squares";
// Every column is scaled to unit norm and the value vector too, so these are relative.
// A column closer than this to the span of others counts as a combination of them: beyond a
// condition number of ~1e9 the fitted split between such columns is rounding, not data.
constexpr double kRankTolerance = 1e-9;
// A bound coefficient whose gradient is above -this could be free at the same optimum.
constexpr double kIndifferentGradient = 1e-10;

using Column = std::vector<double>;

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

double norm(std::span<const double> a) { return std::sqrt(dot(a, a)); }

std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A Euclidean norm kept as scale·sqrt(ssq) (LAPACK's dnrm2), which neither overflows nor
// underflows on features of 1e12 and weights of 1e12.
class NormAccumulator {
 public:
  void add(double x) {
    const double magnitude = std::abs(x);
    if (magnitude == 0.0) return;
    if (scale_ < magnitude) {
      ssq_ = 1.0 + ssq_ * (scale_ / magnitude) * (scale_ / magnitude);
      scale_ = magnitude;
    } else {
      ssq_ += (magnitude / scale_) * (magnitude / scale_);
    }
  }
  double value() const { return scale_ * std::sqrt(ssq_); }

 private:
  double scale_ = 0.0;
  double ssq_ = 1.0;
};

// QR of columns added one at a time by Gram–Schmidt, each orthogonalised twice so that Q stays
// orthonormal to rounding ("twice is enough"). Columns within kRankTolerance of the span of
// those already added are refused, so R is well conditioned enough to solve with.
class GramSchmidt {
 public:
  bool add(std::span<const double> column) {
    Column v(column.begin(), column.end());
    Column coefficients = project_out(v);
    const double length = norm(v);
    if (!(length > kRankTolerance * norm(column))) return false;
    for (double& e : v) e /= length;
    coefficients.push_back(length);
    q_.push_back(std::move(v));
    r_.push_back(std::move(coefficients));
    return true;
  }

  // Distance of a column from the span of those added.
  double distance(std::span<const double> column) const {
    Column v(column.begin(), column.end());
    project_out(v);
    return norm(v);
  }

  // argmin ‖A z − y‖, A the added columns: R z = Qᵀ y.
  std::vector<double> solve(std::span<const double> y) const {
    Column residual(y.begin(), y.end());
    const Column projected = project_out(residual);
    std::vector<double> z(q_.size());
    for (std::size_t i = q_.size(); i-- > 0;) {
      double sum = projected[i];
      for (std::size_t j = i + 1; j < q_.size(); ++j) sum -= r_[j][i] * z[j];
      z[i] = sum / r_[i][i];
    }
    return z;
  }

  // diag((AᵀA)⁻¹) = diag(R⁻¹R⁻ᵀ): the squared row norms of R⁻¹.
  std::vector<double> inverse_gram_diagonal() const {
    const std::size_t p = q_.size();
    std::vector<double> diagonal(p, 0.0);
    for (std::size_t column = 0; column < p; ++column) {  // R⁻¹ e_column, by back substitution
      std::vector<double> x(p, 0.0);
      for (std::size_t i = column + 1; i-- > 0;) {
        double sum = i == column ? 1.0 : 0.0;
        for (std::size_t j = i + 1; j <= column; ++j) sum -= r_[j][i] * x[j];
        x[i] = sum / r_[i][i];
        diagonal[i] += x[i] * x[i];
      }
    }
    return diagonal;
  }

 private:
  // Removes from v its components along Q; returns them (Qᵀv).
  Column project_out(Column& v) const {
    Column coefficients(q_.size(), 0.0);
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < q_.size(); ++i) {
        const double h = dot(q_[i], v);
        for (std::size_t row = 0; row < v.size(); ++row) v[row] -= h * q_[i][row];
        coefficients[i] += h;
      }
    }
    return coefficients;
  }

  std::vector<Column> q_;  // orthonormal columns
  std::vector<Column> r_;  // r_[j][i] = R(i, j), i <= j
};

void validate(std::span<const LinearObservation> observations, std::size_t coefficient_count) {
  if (coefficient_count == 0) throw InputError(kSource, "coefficient_count", "expected at least one coefficient");
  if (observations.empty()) throw InputError(kSource, "observations", "expected at least one observation");
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const LinearObservation& o = observations[i];
    const std::string field = "observations[" + std::to_string(i) + "]";
    if (o.features.size() != coefficient_count)
      throw InputError(kSource, field + ".features",
                       "expected " + std::to_string(coefficient_count) + " features, found " +
                           std::to_string(o.features.size()));
    for (const double f : o.features)
      if (!std::isfinite(f)) throw InputError(kSource, field + ".features", "expected finite values, found " + text(f));
    if (!std::isfinite(o.value)) throw InputError(kSource, field + ".value", "expected a finite value, found " + text(o.value));
    if (!(std::isfinite(o.weight) && o.weight >= 0.0))
      throw InputError(kSource, field + ".weight", "expected a finite weight >= 0, found " + text(o.weight));
  }
}

// The weighted, scaled problem min ‖Âx − b̂‖ reduced to min ‖Rx − d‖ (R k×k upper triangular,
// the same up to a constant) by Givens rotations row by row, so the observations are streamed
// once and never copied. Columns of R keep the unit norms of Â's.
struct Reduced {
  std::vector<Column> columns;  // of R
  Column d;
};

Reduced reduce(std::span<const LinearObservation> observations, std::span<const std::size_t> used,
               std::span<const double> column_scale, double value_scale) {
  const std::size_t k = used.size();
  std::vector<double> r(k * k, 0.0);  // row-major, so each rotation runs along contiguous rows
  Column d(k, 0.0);
  Column row(k);
  for (const LinearObservation& o : observations) {
    if (o.weight == 0.0) continue;
    const double root_weight = std::sqrt(o.weight);
    for (std::size_t j = 0; j < k; ++j) row[j] = root_weight * o.features[used[j]] / column_scale[j];
    double beta = root_weight * o.value / value_scale;
    for (std::size_t p = 0; p < k; ++p) {
      if (row[p] == 0.0) continue;
      double* rp = &r[p * k];
      const double h = std::sqrt(rp[p] * rp[p] + row[p] * row[p]);  // entries are <= 1 in magnitude
      if (h == 0.0) continue;                                        // both underflowed
      const double c = rp[p] / h;
      const double s = row[p] / h;
      rp[p] = h;
      for (std::size_t j = p + 1; j < k; ++j) {
        const double t = rp[j];
        rp[j] = c * t + s * row[j];
        row[j] = c * row[j] - s * t;
      }
      const double t = d[p];
      d[p] = c * t + s * beta;
      beta = c * beta - s * t;
    }
  }
  Reduced reduced{std::vector<Column>(k, Column(k, 0.0)), std::move(d)};
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = i; j < k; ++j) reduced.columns[j][i] = r[i * k + j];
  return reduced;
}

// Aᵀ(d − Ax): the descent direction of ½‖Ax − d‖² in each coordinate.
Column gradient(const std::vector<Column>& a, const Column& d, const Column& x) {
  Column residual = d;
  for (std::size_t j = 0; j < a.size(); ++j)
    for (std::size_t i = 0; i < residual.size(); ++i) residual[i] -= x[j] * a[j][i];
  Column w(a.size());
  for (std::size_t j = 0; j < a.size(); ++j) w[j] = dot(a[j], residual);
  return w;
}

std::vector<std::size_t> indices_of(const std::vector<bool>& set) {
  std::vector<std::size_t> indices;
  for (std::size_t j = 0; j < set.size(); ++j)
    if (set[j]) indices.push_back(j);
  return indices;
}

// Unconstrained least squares on the given columns (in order); z is 0 off them. `last_kept`
// says whether the last column was independent of those before it (else it too gets 0).
struct Subproblem {
  Column z;
  bool last_kept = false;
};

Subproblem solve_on(const std::vector<Column>& a, const Column& d, std::span<const std::size_t> columns) {
  GramSchmidt basis;
  std::vector<std::size_t> kept;
  for (const std::size_t j : columns)
    if (basis.add(a[j])) kept.push_back(j);
  Subproblem result{Column(a.size(), 0.0), !columns.empty() && !kept.empty() && kept.back() == columns.back()};
  const Column z = basis.solve(d);
  for (std::size_t i = 0; i < kept.size(); ++i) result.z[kept[i]] = z[i];
  return result;
}

struct ActiveSet {
  Column x;
  std::vector<bool> free;
};

// Lawson & Hanson, "Solving Least Squares Problems" (1974), ch. 23, on min ‖Ax − d‖, x >= 0.
ActiveSet lawson_hanson(const std::vector<Column>& a, const Column& d) {
  const std::size_t k = a.size();
  ActiveSet set{Column(k, 0.0), std::vector<bool>(k, false)};
  // Candidates that failed to enter since x last changed (rounding made them look useful).
  std::vector<bool> refused(k, false);
  const double tolerance = 10.0 * std::numeric_limits<double>::epsilon() * static_cast<double>(k + 1);
  const std::size_t step_limit = 100 * (k + 1);
  std::size_t steps = 0;
  auto count_step = [&] {
    if (++steps > step_limit)
      throw NumericalError("non-negative least squares: the active set did not settle after " +
                           std::to_string(step_limit) + " steps");
  };
  while (true) {
    count_step();
    const Column w = gradient(a, d, set.x);
    std::optional<std::size_t> entering;  // the bound coefficient whose increase helps most
    for (std::size_t j = 0; j < k; ++j)
      if (!set.free[j] && !refused[j] && w[j] > tolerance && (!entering || w[j] > w[*entering])) entering = j;
    if (!entering) return set;

    std::vector<std::size_t> columns = indices_of(set.free);
    columns.push_back(*entering);
    Subproblem sub = solve_on(a, d, columns);
    // With w > 0 and an independent column, exact arithmetic gives z > 0 for it; otherwise
    // entering would not lower the objective and could cycle.
    if (!sub.last_kept || sub.z[*entering] <= 0.0) {
      refused[*entering] = true;
      continue;
    }
    set.free[*entering] = true;
    std::fill(refused.begin(), refused.end(), false);

    // Move towards z until it is feasible, dropping the coefficients that reach 0 on the way.
    while (true) {
      std::optional<std::size_t> blocking;
      double alpha = 1.0;
      for (std::size_t j = 0; j < k; ++j) {
        if (!set.free[j] || sub.z[j] > 0.0) continue;
        const double step = set.x[j] - sub.z[j];
        const double ratio = step > 0.0 ? set.x[j] / step : 0.0;
        if (!blocking || ratio < alpha) {
          alpha = ratio;
          blocking = j;
        }
      }
      if (!blocking) {
        set.x = sub.z;
        break;
      }
      count_step();
      for (std::size_t j = 0; j < k; ++j)
        if (set.free[j]) set.x[j] += alpha * (sub.z[j] - set.x[j]);
      set.x[*blocking] = 0.0;
      for (std::size_t j = 0; j < k; ++j)
        if (set.free[j] && set.x[j] <= 0.0) {
          set.x[j] = 0.0;
          set.free[j] = false;
        }
      sub = solve_on(a, d, indices_of(set.free));
    }
  }
}

// Identified: not within kRankTolerance of the span of the other columns that could be free at
// this optimum (the free ones and those at 0 with zero gradient).
std::vector<bool> identified_columns(const std::vector<Column>& a, const ActiveSet& set, const Column& w) {
  const std::size_t k = a.size();
  std::vector<bool> candidate(k);
  for (std::size_t j = 0; j < k; ++j) candidate[j] = set.free[j] || w[j] >= -kIndifferentGradient;
  std::vector<bool> identified(k);
  for (std::size_t j = 0; j < k; ++j) {
    GramSchmidt others;
    for (std::size_t i = 0; i < k; ++i)
      if (i != j && candidate[i]) others.add(a[i]);
    identified[j] = others.distance(a[j]) > kRankTolerance * norm(a[j]);
  }
  return identified;
}

}  // namespace

LinearFit fit_non_negative(std::span<const LinearObservation> observations, std::size_t coefficient_count) {
  validate(observations, coefficient_count);

  // Weighted column norms: the scaling that lets 1e12 flops and 1 call share one solve.
  std::vector<NormAccumulator> column_norms(coefficient_count);
  NormAccumulator value_norm;
  std::size_t weighted = 0;
  for (const LinearObservation& o : observations) {
    if (o.weight == 0.0) continue;
    ++weighted;
    const double root_weight = std::sqrt(o.weight);
    for (std::size_t j = 0; j < coefficient_count; ++j) column_norms[j].add(root_weight * o.features[j]);
    value_norm.add(root_weight * o.value);
  }
  if (weighted == 0) throw InputError(kSource, "observations", "expected at least one observation with weight > 0");

  std::vector<std::size_t> used;  // non-zero columns; the others stay 0 and unidentified
  std::vector<double> column_scale;
  for (std::size_t j = 0; j < coefficient_count; ++j) {
    const double scale = column_norms[j].value();
    if (!std::isfinite(scale))
      throw InputError(kSource, "features", "expected sqrt(weight)·feature to stay finite for coefficient " + std::to_string(j));
    if (scale > 0.0) {
      used.push_back(j);
      column_scale.push_back(scale);
    }
  }
  double value_scale = value_norm.value();
  if (!std::isfinite(value_scale)) throw InputError(kSource, "values", "expected sqrt(weight)·value to stay finite");
  if (value_scale == 0.0) value_scale = 1.0;

  const Reduced reduced = reduce(observations, used, column_scale, value_scale);
  const ActiveSet set = lawson_hanson(reduced.columns, reduced.d);
  const std::vector<bool> identified =
      identified_columns(reduced.columns, set, gradient(reduced.columns, reduced.d, set.x));

  LinearFit fit;
  fit.coefficients.resize(coefficient_count);
  fit.observations = weighted;
  for (std::size_t i = 0; i < used.size(); ++i) {
    CoefficientFit& c = fit.coefficients[used[i]];
    c.value = set.free[i] ? set.x[i] * value_scale / column_scale[i] : 0.0;
    c.identified = identified[i];
    c.at_bound = !set.free[i];
  }

  double weighted_squares = 0.0;
  double weight_sum = 0.0;
  double relative_squares = 0.0;
  std::size_t relative_count = 0;
  for (const LinearObservation& o : observations) {
    if (o.weight == 0.0) continue;
    double modelled = 0.0;
    for (std::size_t j = 0; j < coefficient_count; ++j) modelled += fit.coefficients[j].value * o.features[j];
    const double residual = o.value - modelled;
    weighted_squares += o.weight * residual * residual;
    weight_sum += o.weight;
    if (o.value > 0.0) {
      const double relative = residual / o.value;
      relative_squares += relative * relative;
      ++relative_count;
      fit.max_relative_residual = std::max(fit.max_relative_residual, std::abs(relative));
    }
  }
  fit.rms_residual = std::sqrt(weighted_squares / weight_sum);
  if (relative_count > 0) fit.rms_relative_residual = std::sqrt(relative_squares / static_cast<double>(relative_count));

  // Standard errors: σ²·(AᵀWA)⁻¹ on the free columns, through the scaled R (unit columns).
  const std::vector<std::size_t> free = indices_of(set.free);
  if (!free.empty() && weighted > free.size()) {
    const double sigma = std::sqrt(weighted_squares / static_cast<double>(weighted - free.size()));
    GramSchmidt basis;
    bool all_kept = true;
    for (const std::size_t i : free) all_kept = basis.add(reduced.columns[i]) && all_kept;
    if (all_kept) {
      const std::vector<double> inverse_diagonal = basis.inverse_gram_diagonal();
      for (std::size_t f = 0; f < free.size(); ++f) {
        const std::size_t i = free[f];
        if (identified[i])
          fit.coefficients[used[i]].standard_error = sigma * std::sqrt(inverse_diagonal[f]) / column_scale[i];
      }
    }
  }
  return fit;
}

}  // namespace asteria::hw::calibrate

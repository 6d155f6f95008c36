#pragma once
// Weighted non-negative linear least squares with fit diagnostics: fits physical coefficients
// (seconds per flop, per byte, per call) to measured durations whose modelled time is linear in
// them, e.g. t ≈ x_gemm·flops + x_mem·bytes + x_latency·calls.
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace asteria::hw::calibrate {

// One measurement: value ≈ Σ_j x_j · features[j].
struct LinearObservation {
  std::vector<double> features;  // one per coefficient, finite
  double value = 0.0;            // the measured quantity (e.g. seconds), finite
  double weight = 1.0;           // finite, >= 0; 0 leaves the observation out
};

struct CoefficientFit {
  double value = 0.0;  // >= 0
  // σ·sqrt(((AᵀWA)⁻¹)_jj) over the free (non-zero) coefficients, with σ² = Σ w r² / (n - p):
  // n observations with weight > 0, p free coefficients. It scales with the residuals, so the
  // weights need only be relative. NaN when not identified, at the bound, or when n <= p.
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  // The observations determine it: its weighted column is non-zero and not (numerically) a
  // combination of the other columns that could be free at the optimum (the free ones and any
  // at zero with zero gradient). Of two identical columns, neither is identified.
  bool identified = false;
  // Held at 0 although its column is non-zero: the data favour a negative value or, when not
  // identified, another column took its share.
  bool at_bound = false;
};

struct LinearFit {
  std::vector<CoefficientFit> coefficients;
  std::size_t observations = 0;  // those with weight > 0
  // r = value - Σ_j x_j·features[j]; all three are over the observations with weight > 0.
  double rms_residual = 0.0;  // sqrt(Σ w r² / Σ w), in the value's unit
  // sqrt(mean((r / value)²)) and max |r / value| over observations with value > 0, unweighted
  // so that fits with different weights compare; 0 when no value is > 0.
  double rms_relative_residual = 0.0;
  double max_relative_residual = 0.0;
};

// Minimises Σ_i w_i (value_i - Σ_j x_j·features_ij)² subject to x >= 0 (Lawson–Hanson active
// set). Columns are scaled to unit weighted norm first, so features of 1e12 flops and of 1 call
// fit together. Pass weight = 1/value² to minimise relative error: durations spanning 1e-6 s to
// 10 s then count alike, where unit weights let the longest ones decide every coefficient.
// Weights from the measured values themselves favour runs that came out short: coefficients
// come out low by about 2·(relative noise)², 0.2 % at 3 % noise.
// Time O(n·k²) for n observations and k coefficients, memory O(k²) besides the input.
// Throws InputError for no observations (or none with weight > 0), no coefficients, a feature
// count other than coefficient_count, or a non-finite feature, value or weight or a negative
// weight; NumericalError if the active-set iteration fails to settle.
LinearFit fit_non_negative(std::span<const LinearObservation> observations, std::size_t coefficient_count);

}  // namespace asteria::hw::calibrate

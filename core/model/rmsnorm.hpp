#pragma once
// RMSNorm, row by row: y = x / sqrt(mean(x²) + eps) ⊙ gain (no gain when `gain` is empty).
#include <span>

#include "core/linalg/matrix.hpp"

namespace asteria::model {

inline constexpr double kRmsNormEpsilon = 1e-5;

// Writes y and keeps 1 / rms of each row (inv_rms, one per row) for the backward pass.
template <linalg::Real T>
void rmsnorm_forward(linalg::ConstMatrixView<T> x, std::span<const T> gain, linalg::MatrixView<T> y,
                     std::span<T> inv_rms);

// Adds the input gradient into dx (the residual stream it feeds), and overwrites dgain with the
// gain gradient summed over rows (nothing when dgain is empty).
template <linalg::Real T>
void rmsnorm_backward(linalg::ConstMatrixView<T> x, std::span<const T> gain, std::span<const T> inv_rms,
                      linalg::ConstMatrixView<T> dy, linalg::MatrixView<T> dx, std::span<T> dgain);

}  // namespace asteria::model

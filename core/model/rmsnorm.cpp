#include "core/model/rmsnorm.hpp"

#include <algorithm>
#include <cmath>

namespace asteria::model {

using linalg::index;

template <linalg::Real T>
void rmsnorm_forward(linalg::ConstMatrixView<T> x, std::span<const T> gain, linalg::MatrixView<T> y,
                     std::span<T> inv_rms) {
  const index n = x.cols();
  for (index r = 0; r < x.rows(); ++r) {
    const std::span<const T> in = x.row(r);
    const std::span<T> out = y.row(r);
    double sum_squares = 0.0;  // double: a float sum over thousands of columns drifts
    for (T v : in) sum_squares += static_cast<double>(v) * static_cast<double>(v);
    const T scale = static_cast<T>(1.0 / std::sqrt(sum_squares / static_cast<double>(n) + kRmsNormEpsilon));
    inv_rms[static_cast<std::size_t>(r)] = scale;
    if (gain.empty()) {
      for (index j = 0; j < n; ++j) out[j] = in[j] * scale;
    } else {
      for (index j = 0; j < n; ++j) out[j] = in[j] * scale * gain[j];
    }
  }
}

// With u = dy ⊙ gain and r = 1/rms: dx = r·u − r³·x·mean(u ⊙ x), since ∂r/∂x_j = −r³ x_j / n.
template <linalg::Real T>
void rmsnorm_backward(linalg::ConstMatrixView<T> x, std::span<const T> gain, std::span<const T> inv_rms,
                      linalg::ConstMatrixView<T> dy, linalg::MatrixView<T> dx, std::span<T> dgain) {
  const index n = x.cols();
  std::ranges::fill(dgain, T(0));
  for (index r = 0; r < x.rows(); ++r) {
    const std::span<const T> in = x.row(r);
    const std::span<const T> d_out = dy.row(r);
    const std::span<T> d_in = dx.row(r);
    const T scale = inv_rms[static_cast<std::size_t>(r)];
    double dot = 0.0;
    for (index j = 0; j < n; ++j) {
      const T u = gain.empty() ? d_out[j] : d_out[j] * gain[j];
      dot += static_cast<double>(u) * static_cast<double>(in[j]);
    }
    const T correction = static_cast<T>(dot / static_cast<double>(n)) * scale * scale * scale;
    for (index j = 0; j < n; ++j) {
      const T u = gain.empty() ? d_out[j] : d_out[j] * gain[j];
      d_in[j] += scale * u - correction * in[j];
    }
    if (!dgain.empty())
      for (index j = 0; j < n; ++j) dgain[j] += d_out[j] * in[j] * scale;
  }
}

template void rmsnorm_forward<float>(linalg::ConstMatrixView<float>, std::span<const float>, linalg::MatrixView<float>,
                                     std::span<float>);
template void rmsnorm_forward<double>(linalg::ConstMatrixView<double>, std::span<const double>,
                                      linalg::MatrixView<double>, std::span<double>);
template void rmsnorm_backward<float>(linalg::ConstMatrixView<float>, std::span<const float>, std::span<const float>,
                                      linalg::ConstMatrixView<float>, linalg::MatrixView<float>, std::span<float>);
template void rmsnorm_backward<double>(linalg::ConstMatrixView<double>, std::span<const double>,
                                       std::span<const double>, linalg::ConstMatrixView<double>,
                                       linalg::MatrixView<double>, std::span<double>);

}  // namespace asteria::model

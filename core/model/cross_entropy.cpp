#include "core/model/cross_entropy.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace asteria::model {

using linalg::index;

template <linalg::Real T>
double cross_entropy_forward(linalg::ConstMatrixView<T> logits, std::span<const TokenId> targets,
                             std::span<T> log_sum_exp) {
  assert(static_cast<index>(targets.size()) == logits.rows() && targets.size() == log_sum_exp.size());
  double total = 0.0;
  for (index r = 0; r < logits.rows(); ++r) {
    const std::span<const T> row = logits.row(r);
    const double max = static_cast<double>(*std::ranges::max_element(row));
    double sum = 0.0;
    for (T z : row) sum += std::exp(static_cast<double>(z) - max);
    const double lse = max + std::log(sum);
    log_sum_exp[static_cast<std::size_t>(r)] = static_cast<T>(lse);
    total += lse - static_cast<double>(row[static_cast<std::size_t>(targets[static_cast<std::size_t>(r)])]);
  }
  return total;
}

template <linalg::Real T>
void cross_entropy_backward(linalg::ConstMatrixView<T> logits, std::span<const T> log_sum_exp,
                            std::span<const TokenId> targets, T scale, linalg::MatrixView<T> d_logits) {
  for (index r = 0; r < logits.rows(); ++r) {
    const std::span<const T> row = logits.row(r);
    const std::span<T> d_row = d_logits.row(r);
    const T lse = log_sum_exp[static_cast<std::size_t>(r)];
    for (std::size_t j = 0; j < row.size(); ++j) d_row[j] = scale * std::exp(row[j] - lse);
    d_row[static_cast<std::size_t>(targets[static_cast<std::size_t>(r)])] -= scale;
  }
}

template double cross_entropy_forward<float>(linalg::ConstMatrixView<float>, std::span<const TokenId>,
                                             std::span<float>);
template double cross_entropy_forward<double>(linalg::ConstMatrixView<double>, std::span<const TokenId>,
                                              std::span<double>);
template void cross_entropy_backward<float>(linalg::ConstMatrixView<float>, std::span<const float>,
                                            std::span<const TokenId>, float, linalg::MatrixView<float>);
template void cross_entropy_backward<double>(linalg::ConstMatrixView<double>, std::span<const double>,
                                             std::span<const TokenId>, double, linalg::MatrixView<double>);

}  // namespace asteria::model

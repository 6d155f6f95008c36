#pragma once
// Cross-entropy of softmax(logits) against target ids, one row per position.
#include <cstdint>
#include <span>

#include "core/linalg/matrix.hpp"

namespace asteria::model {

using TokenId = std::int32_t;

// Returns Σ_rows (logsumexp(row) − row[target]) in double, and keeps each row's logsumexp
// (max-shifted, so large logits do not overflow) for the backward pass.
template <linalg::Real T>
double cross_entropy_forward(linalg::ConstMatrixView<T> logits, std::span<const TokenId> targets,
                             std::span<T> log_sum_exp);

// d_logits = scale · (softmax(row) − onehot(target)); d_logits may be logits itself. For the mean
// loss over n rows, scale = 1/n.
template <linalg::Real T>
void cross_entropy_backward(linalg::ConstMatrixView<T> logits, std::span<const T> log_sum_exp,
                            std::span<const TokenId> targets, T scale, linalg::MatrixView<T> d_logits);

}  // namespace asteria::model

#pragma once
// Causal multi-head attention on already projected (and rotated) queries, keys and values:
// per sequence and head, P = softmax(mask(Q Kᵀ / sqrt(head_dim))) and O = P V, where the mask
// keeps key positions j <= query position i. All products go through linalg::gemm on strided
// views of the T x (heads · head_dim) activations, with no copies.
//
// The full L x L score matrix is formed (masked entries set to zero after the softmax), which
// costs twice the causal flops; a reference favours the plain form.
#include "core/linalg/matrix.hpp"

namespace asteria::model {

struct AttentionShape {
  linalg::index batch = 0;   // sequences
  linalg::index length = 0;  // positions per sequence
  linalg::index heads = 0;
  linalg::index head_dim = 0;

  linalg::index tokens() const noexcept { return batch * length; }
  linalg::index width() const noexcept { return heads * head_dim; }
};

// q, k, v, out: tokens x width (sequence b's rows are [b·length, (b+1)·length)).
// probs: (batch · heads · length) x length, the attention probabilities kept for backward,
// block (b, h) at rows [(b·heads + h)·length, ...).
template <linalg::Real T>
void causal_attention_forward(const AttentionShape& shape, linalg::ConstMatrixView<T> q, linalg::ConstMatrixView<T> k,
                              linalg::ConstMatrixView<T> v, linalg::MatrixView<T> probs, linalg::MatrixView<T> out);

// Overwrites dq, dk, dv (tokens x width) from d_out; scratch is length x length.
template <linalg::Real T>
void causal_attention_backward(const AttentionShape& shape, linalg::ConstMatrixView<T> q,
                               linalg::ConstMatrixView<T> k, linalg::ConstMatrixView<T> v,
                               linalg::ConstMatrixView<T> probs, linalg::ConstMatrixView<T> d_out,
                               linalg::MatrixView<T> dq, linalg::MatrixView<T> dk, linalg::MatrixView<T> dv,
                               linalg::MatrixView<T> scratch);

}  // namespace asteria::model

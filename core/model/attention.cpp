#include "core/model/attention.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/linalg/blas.hpp"

namespace asteria::model {

using linalg::gemm;
using linalg::index;
using linalg::Op;

namespace {

// Head h of sequence b inside a tokens x width activation.
template <class T>
linalg::MatrixView<T> head_block(linalg::MatrixView<T> m, const AttentionShape& s, index b, index h) {
  return m.block(b * s.length, h * s.head_dim, s.length, s.head_dim);
}

template <class T>
linalg::MatrixView<T> probs_block(linalg::MatrixView<T> probs, const AttentionShape& s, index b, index h) {
  return probs.block((b * s.heads + h) * s.length, 0, s.length, s.length);
}

// Row i of the scores keeps columns 0..i: softmax over them, zeros beyond.
template <linalg::Real T>
void causal_softmax_rows(linalg::MatrixView<T> scores) {
  for (index i = 0; i < scores.rows(); ++i) {
    const std::span<T> row = scores.row(i);
    const auto kept = row.first(static_cast<std::size_t>(i + 1));
    const T max = *std::ranges::max_element(kept);
    T sum = 0;
    for (T& x : kept) {
      x = std::exp(x - max);
      sum += x;
    }
    const T inverse = T(1) / sum;
    for (T& x : kept) x *= inverse;
    std::ranges::fill(row.subspan(static_cast<std::size_t>(i + 1)), T(0));
  }
}

}  // namespace

template <linalg::Real T>
void causal_attention_forward(const AttentionShape& s, linalg::ConstMatrixView<T> q, linalg::ConstMatrixView<T> k,
                              linalg::ConstMatrixView<T> v, linalg::MatrixView<T> probs, linalg::MatrixView<T> out) {
  assert(q.rows() == s.tokens() && q.cols() == s.width());
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  for (index b = 0; b < s.batch; ++b)
    for (index h = 0; h < s.heads; ++h) {
      const linalg::MatrixView<T> p = probs_block(probs, s, b, h);
      gemm<T>(scale, head_block(q, s, b, h), Op::none, head_block(k, s, b, h), Op::transpose, T(0), p);
      causal_softmax_rows(p);
      gemm<T>(T(1), p, Op::none, head_block(v, s, b, h), Op::none, T(0), head_block(out, s, b, h));
    }
}

// With dP = dO Vᵀ: dV = Pᵀ dO; the softmax Jacobian gives dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik)
// (zero where masked, since P is); then dQ = scale · dS K and dK = scale · dSᵀ Q.
template <linalg::Real T>
void causal_attention_backward(const AttentionShape& s, linalg::ConstMatrixView<T> q, linalg::ConstMatrixView<T> k,
                               linalg::ConstMatrixView<T> v, linalg::ConstMatrixView<T> probs,
                               linalg::ConstMatrixView<T> d_out, linalg::MatrixView<T> dq, linalg::MatrixView<T> dk,
                               linalg::MatrixView<T> dv, linalg::MatrixView<T> scratch) {
  assert(scratch.rows() == s.length && scratch.cols() == s.length);
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  for (index b = 0; b < s.batch; ++b)
    for (index h = 0; h < s.heads; ++h) {
      const linalg::ConstMatrixView<T> p = probs_block(probs, s, b, h);
      const linalg::ConstMatrixView<T> d_o = head_block(d_out, s, b, h);
      gemm<T>(T(1), d_o, Op::none, head_block(v, s, b, h), Op::transpose, T(0), scratch);
      gemm<T>(T(1), p, Op::transpose, d_o, Op::none, T(0), head_block(dv, s, b, h));
      for (index i = 0; i < s.length; ++i) {
        const std::span<const T> p_row = p.row(i);
        const std::span<T> d_row = scratch.row(i);
        T dot = 0;
        for (index j = 0; j <= i; ++j) dot += p_row[j] * d_row[j];
        for (index j = 0; j < s.length; ++j) d_row[j] = p_row[j] * (d_row[j] - dot);
      }
      gemm<T>(scale, scratch, Op::none, head_block(k, s, b, h), Op::none, T(0), head_block(dq, s, b, h));
      gemm<T>(scale, scratch, Op::transpose, head_block(q, s, b, h), Op::none, T(0), head_block(dk, s, b, h));
    }
}

template void causal_attention_forward<float>(const AttentionShape&, linalg::ConstMatrixView<float>,
                                              linalg::ConstMatrixView<float>, linalg::ConstMatrixView<float>,
                                              linalg::MatrixView<float>, linalg::MatrixView<float>);
template void causal_attention_forward<double>(const AttentionShape&, linalg::ConstMatrixView<double>,
                                               linalg::ConstMatrixView<double>, linalg::ConstMatrixView<double>,
                                               linalg::MatrixView<double>, linalg::MatrixView<double>);
template void causal_attention_backward<float>(const AttentionShape&, linalg::ConstMatrixView<float>,
                                               linalg::ConstMatrixView<float>, linalg::ConstMatrixView<float>,
                                               linalg::ConstMatrixView<float>, linalg::ConstMatrixView<float>,
                                               linalg::MatrixView<float>, linalg::MatrixView<float>,
                                               linalg::MatrixView<float>, linalg::MatrixView<float>);
template void causal_attention_backward<double>(const AttentionShape&, linalg::ConstMatrixView<double>,
                                                linalg::ConstMatrixView<double>, linalg::ConstMatrixView<double>,
                                                linalg::ConstMatrixView<double>, linalg::ConstMatrixView<double>,
                                                linalg::MatrixView<double>, linalg::MatrixView<double>,
                                                linalg::MatrixView<double>, linalg::MatrixView<double>);

}  // namespace asteria::model

#pragma once
// The MLP's element-wise functions, forward and backward, on flat spans of equal length.
#include <span>

#include "core/linalg/matrix.hpp"

namespace asteria::model {

// GELU, tanh form (Hendrycks & Gimpel 2016, arXiv 1606.08415):
// gelu(x) = x/2 · (1 + tanh(sqrt(2/π) · (x + 0.044715 x³))).
template <linalg::Real T>
void gelu_forward(std::span<const T> x, std::span<T> y);
// dx = dy · gelu'(x); dx may be dy itself.
template <linalg::Real T>
void gelu_backward(std::span<const T> x, std::span<const T> dy, std::span<T> dx);

// SwiGLU (Shazeer 2020, arXiv 2002.05202): y = silu(gate) ⊙ up, silu(g) = g · sigmoid(g).
template <linalg::Real T>
void swiglu_forward(std::span<const T> gate, std::span<const T> up, std::span<T> y);
// d_gate may be dy itself.
template <linalg::Real T>
void swiglu_backward(std::span<const T> gate, std::span<const T> up, std::span<const T> dy, std::span<T> d_gate,
                     std::span<T> d_up);

}  // namespace asteria::model

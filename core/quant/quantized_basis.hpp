#pragma once
// An orthogonal matrix (an eigenbasis of SOAP, Shampoo or KL-Shampoo) kept block-wise quantized,
// as 4-bit Shampoo keeps its eigenvectors (the eigenvalues stay fp32 beside it): the codes lose
// orthogonality, so the decoded matrix is made orthogonal again by Björck's iteration before use.
#include <cstddef>

#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"
#include "core/quant/block_codec.hpp"

namespace asteria::quant {

struct QuantizedMatrix {
  linalg::index rows = 0;
  linalg::index cols = 0;
  QuantizedBlocks values;  // row-major
  std::size_t bytes() const noexcept { return values.bytes(); }
};

// Encodes `m` row by row in blocks of `block` values; non-finite entries are refused.
Status quantize_matrix(linalg::ConstMatrixView<float> m, CodeMap map, std::size_t block, QuantizedMatrix& out);
// Decodes `q` into `out` (q.rows x q.cols; std::invalid_argument otherwise).
void dequantize_matrix(const QuantizedMatrix& q, linalg::MatrixView<float> out);

// Björck's iteration toward the nearest matrix with orthonormal columns, Q ← Q (3I − QᵀQ) / 2
// (one GEMM pair each), until ‖QᵀQ − I‖_F ≤ orthogonality_tolerance<T>(n) or `max_iterations`.
// It converges quadratically while ‖QᵀQ − I‖₂ < 1, which the codes of linear4 and finer leave
// for bases of the sizes SOAP blocks (tests/quant): 8-bit codes take 2 iterations, 4-bit 3-4.
// Returns ‖QᵀQ − I‖_F at the end (accumulated in double).
template <linalg::Real T>
double bjorck_orthonormalize(linalg::MatrixView<T> q, int max_iterations = 8);

// What "orthogonal to T's precision" means for n columns: 64 ε √n in the Frobenius norm.
template <linalg::Real T>
double orthogonality_tolerance(linalg::index n);

// dequantize_matrix, then bjorck_orthonormalize: the basis an optimizer step uses.
double dequantize_orthogonal(const QuantizedMatrix& q, linalg::MatrixView<float> out, int max_iterations = 8);

}  // namespace asteria::quant

#pragma once
// How a parameter tensor becomes independent blocks: view it as 2-D (first dimension by the
// product of the others; a vector is 1 x n, a scalar 1 x 1), then cut each dimension into
// chunks of at most `max_dim` (full chunks first, the remainder last, as Distributed Shampoo).
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::optim {

using linalg::index;

struct BlockRegion {
  index row0 = 0;
  index col0 = 0;
  index rows = 0;
  index cols = 0;
};

struct MatrixShape {
  index rows = 1;
  index cols = 1;
};

// Throws asteria::InputError for negative dimensions.
MatrixShape as_matrix(std::span<const index> tensor_shape);

// Blocks tile the rows x cols matrix in row-major block order.
std::vector<BlockRegion> split_into_blocks(MatrixShape shape, index max_dim);

// Number of dimensions that are not 1: a tensor of order <= 1 has no matrix structure.
int effective_order(std::span<const index> tensor_shape);

// The values of `tensor` (a contiguous rows x cols view) seen as `view` (the same number of
// values in another shape, C order): what a block's region indexes into. Throws
// std::logic_error when the view does not hold the tensor's values or the tensor is strided.
template <class T>
linalg::MatrixView<T> reshaped(linalg::MatrixView<T> tensor, MatrixShape view) {
  if (tensor.rows() == view.rows && tensor.cols() == view.cols) return tensor;
  if (tensor.rows() * tensor.cols() != view.rows * view.cols || !tensor.contiguous())
    throw std::logic_error("reshaped: a " + std::to_string(tensor.rows()) + " x " + std::to_string(tensor.cols()) +
                           " view (stride " + std::to_string(tensor.stride()) + ") cannot be seen as " +
                           std::to_string(view.rows) + " x " + std::to_string(view.cols));
  return {tensor.data(), view.rows, view.cols};
}

}  // namespace asteria::optim

#include "core/optim/blocking.hpp"

#include <stdexcept>
#include <string>

#include "core/common/error.hpp"

namespace asteria::optim {

MatrixShape as_matrix(std::span<const index> tensor_shape) {
  for (index d : tensor_shape)
    if (d < 0) throw InputError("tensor", "shape", "expected non-negative dimensions, found " + std::to_string(d));
  if (tensor_shape.empty()) return {1, 1};
  if (tensor_shape.size() == 1) return {1, tensor_shape[0]};
  index cols = 1;
  for (std::size_t i = 1; i < tensor_shape.size(); ++i) cols *= tensor_shape[i];
  return {tensor_shape[0], cols};
}

std::vector<BlockRegion> split_into_blocks(MatrixShape shape, index max_dim) {
  if (max_dim < 1) throw std::invalid_argument("split_into_blocks: max_dim must be >= 1");
  std::vector<BlockRegion> blocks;
  for (index r = 0; r < shape.rows; r += max_dim)
    for (index c = 0; c < shape.cols; c += max_dim)
      blocks.push_back({r, c, std::min(max_dim, shape.rows - r), std::min(max_dim, shape.cols - c)});
  return blocks;
}

int effective_order(std::span<const index> tensor_shape) {
  int order = 0;
  for (index d : tensor_shape)
    if (d != 1) ++order;
  return order;
}

}  // namespace asteria::optim

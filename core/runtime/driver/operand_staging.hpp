#pragma once
// A block's gradient and weights carried between the memory the model keeps them in and the
// memory the block's optimizer state rests in, when different devices compute on the two (a model
// on a GPU with a block updated by host workers: the gradient moved down, the new weights up; or
// a model in host memory with state on the GPU). The values go through host memory by the
// devices' own copies, so the update sees them in its state's memory and its numbers are those of
// an update where everything rests in one place.
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/ops/device.hpp"

namespace asteria::runtime {

template <linalg::Real T>
class OperandStaging {
 public:
  // `model_side` addresses `gradient` and `weights` (weights may be empty: an accumulate);
  // `state_side` computes the block's update. The two differ.
  OperandStaging(ops::Device& model_side, ops::Device& state_side, linalg::ConstMatrixView<T> gradient,
                 linalg::MatrixView<T> weights);
  OperandStaging(const OperandStaging&) = delete;
  OperandStaging& operator=(const OperandStaging&) = delete;

  // The operands in the state's memory.
  linalg::ConstMatrixView<T> gradient() const noexcept { return gradient_; }
  linalg::MatrixView<T> weights() const noexcept { return weights_; }
  // The weights as the update left them, back where the model keeps them.
  void write_back();

 private:
  // A host copy of `view` (in model_side's memory), or the view itself when the host reads it.
  linalg::MatrixView<T> on_host(linalg::ConstMatrixView<T> view, std::vector<T>& keep);
  // `host` moved into state_side's memory, or the host view itself when that memory is the host's.
  linalg::MatrixView<T> on_state_side(linalg::MatrixView<T> host, ops::Buffer& keep);

  ops::Device& model_side_;
  ops::Device& state_side_;
  linalg::MatrixView<T> model_weights_;
  std::vector<T> host_gradient_, host_weights_;
  linalg::MatrixView<T> weights_on_host_;
  ops::Buffer gradient_buffer_, weights_buffer_;
  linalg::ConstMatrixView<T> gradient_;
  linalg::MatrixView<T> weights_;
};

extern template class OperandStaging<float>;
extern template class OperandStaging<double>;

}  // namespace asteria::runtime

#pragma once
// The per-tensor side of a step driver: the blocks of one optim::TensorOptimizer (its blocking,
// its block optimizers, its block names) registered with a PreconditionerService, with the
// tensor's C-order buffers cut into block views for the service's hooks.
//
//   service.on_step_begin(t);
//   for each tensor:  tensor.after_backward(grads, t);         // as the gradient appears
//   for each tensor:  tensor.update(params, grads, t);
//   service.on_step_end(t);
//
// The TensorOptimizer is used for its blocks only: its own step() must not be called while the
// service drives them (its steps_taken() does not advance).
#include <span>
#include <string>
#include <vector>

#include "core/optim/tensor_optimizer.hpp"
#include "core/runtime/service/preconditioner_service.hpp"

namespace asteria::runtime {

template <linalg::Real T>
class ServicedTensor {
 public:
  // Registers every block of `tensor`, labelled as tensor.describe(b). Both must outlive this.
  // `source` names the tensor in InputErrors about buffer sizes.
  ServicedTensor(PreconditionerService<T>& service, optim::TensorOptimizer<T>& tensor,
                 std::string source = "optimizer");

  // after_backward for every block; remembers which blocks skip step t.
  void after_backward(std::span<const T> grads, Step t);
  // apply for every block that did not skip step t. `grads` must be the buffer given to
  // after_backward for this step.
  void update(std::span<T> params, std::span<const T> grads, Step t);

  const std::vector<BlockId>& block_ids() const noexcept { return ids_; }
  optim::TensorOptimizer<T>& tensor() noexcept { return tensor_; }

 private:
  void check_size(std::size_t size, const char* field) const;

  PreconditionerService<T>& service_;
  optim::TensorOptimizer<T>& tensor_;
  std::string source_;
  std::vector<BlockId> ids_;
  std::vector<char> proceed_;  // per block: not skipped in step proceed_step_
  Step proceed_step_ = 0;
};

}  // namespace asteria::runtime

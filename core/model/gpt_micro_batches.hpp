#pragma once
// A step of Gpt<T> run as (unit, micro-batch) passes in any schedule order, with each tensor's
// gradient folded in ascending micro-batch order (acc = g_0; acc += g_1; ...) whatever order the
// passes ran in, so every schedule of the same micro-batches gives bit-identical gradients.
//
// Units: 0 the embedding, 1 + l decoder layer l, layers + 1 the final norm + head + loss.
// Micro-batch 0's partial is written straight into the gradient (so one micro-batch equals
// Gpt::forward_backward bit for bit); a later micro-batch's partial goes to a pooled buffer and
// is added once every earlier one has been: buffers are held only by partials that wait.
#include <cstddef>
#include <span>
#include <vector>

#include "core/model/gpt_state.hpp"

namespace asteria::model {

// Gradient-sized buffers for partials that wait their turn; reused across steps, grown only when
// more are in flight at once (or larger) than ever before.
template <linalg::Real T>
class PartialPool {
 public:
  std::size_t acquire(std::size_t elements);
  void release(std::size_t id) { busy_[id] = false; }
  T* data(std::size_t id) { return buffers_[id].data(); }

 private:
  std::vector<std::vector<T>> buffers_;
  std::vector<bool> busy_;
};

template <linalg::Real T>
class MicroBatchStep {
 public:
  // Reads the unit of each tensor from state.index.
  void configure(const GptState<T>& state);

  // Gpt::begin_step, forward_unit, backward_unit, step_loss (gpt.hpp).
  void begin(GptState<T>& state, std::span<const TokenId> tokens, int batch, int micro_batches);
  void forward(GptState<T>& state, int unit, int m);
  void backward(GptState<T>& state, int unit, int m);
  double loss() const;
  bool loss_ready() const noexcept;
  // Whether tensor i's gradient of this step holds every micro-batch's part.
  bool gradient_ready(std::size_t i) const noexcept;
  // Forgets the step in progress (forward_backward reuses the gradients it accumulates into).
  void end() noexcept { begun_ = false; }

  int unit_count() const noexcept { return static_cast<int>(unit_tensors_.size()); }
  // The unit that holds tensor i: the lowest one writing its gradient (a tied embedding: 0).
  int unit_of(std::size_t i) const { return unit_of_.at(i); }
  int micro_batches() const noexcept { return begun_ ? count_ : 0; }

 private:
  void check(const char* what, int unit, int m) const;
  void fold(GptState<T>& state, std::size_t i);
  std::size_t slot(std::size_t i, int m) const noexcept {
    return i * static_cast<std::size_t>(count_) + static_cast<std::size_t>(m);
  }

  std::vector<std::vector<std::size_t>> unit_tensors_;  // tensors whose gradient each unit writes
  std::vector<int> writers_;                            // per tensor: units writing it (2: tied embedding)
  std::vector<int> unit_of_;
  MicroBatchWorkspaces<T> workspaces_;
  PartialPool<T> pool_;
  std::vector<T*> targets_;  // per tensor, the current backward's destination

  bool begun_ = false;
  int count_ = 0;
  linalg::index global_tokens_ = 0;
  std::vector<int> forwarded_;          // per micro-batch: units whose forward ran (in order)
  std::vector<int> backwarded_;         // per micro-batch: units whose backward ran (from the last)
  std::vector<double> losses_;          // per micro-batch: summed token losses
  std::vector<int> pending_;            // per (tensor, micro-batch): writes left before the partial is complete
  std::vector<std::ptrdiff_t> buffer_;  // per (tensor, micro-batch >= 1): its pool buffer, or -1
  std::vector<int> folded_;             // per tensor: micro-batches folded into the gradient
};

extern template class PartialPool<float>;
extern template class PartialPool<double>;
extern template class MicroBatchStep<float>;
extern template class MicroBatchStep<double>;

}  // namespace asteria::model

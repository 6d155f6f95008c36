#pragma once
// A Gpt as the step driver's model: one driver layer per parameter tensor, in forward order (the
// workload's runtime stack, so a training run and a simulation of one config have the same
// layers, blocks and modelled costs). Two ways to compute a step, picked by set_batch:
//
//   * whole_step (set_batch(tokens, batch)): the first backward call of a step runs the whole
//     forward and backward on the step's batch, and later calls find their gradient ready. Every
//     layer's gradient is then computed from the weights before any update of the step, as in a
//     framework's backward.
//   * per_micro_batch (set_batch(tokens, batch, micro_batches), any count >= 1): the driver's
//     forward_pass / backward_pass of (layer, micro-batch) run Gpt's compute units (embedding,
//     decoder layer, final norm + head + loss) on that micro-batch. A unit's forward runs in the
//     body of its last tensor's forward (after its other tensors' forwards and any update the
//     schedule put before them), its backward in the body of that same tensor's backward (the
//     unit's first backward op); the other tensors' calls only check the order. A unit without
//     tensors of its own (the head of a tied model without norm gains) runs with its neighbour:
//     forward after, backward before it. Gradients are folded in ascending micro-batch order
//     whatever the schedule (see Gpt::begin_step).
#include <cstddef>
#include <span>
#include <vector>

#include "core/model/gpt.hpp"
#include "core/runtime/driver/training_model.hpp"

namespace asteria::model {

template <linalg::Real T>
class GptTrainingModel final : public runtime::TrainingModel<T> {
 public:
  // `gpt` must outlive this object.
  explicit GptTrainingModel(Gpt<T>& gpt);

  // The batch of the next step (`batch` sequences of sequence_length + 1 tokens, see Gpt). Set
  // before each step; throws InputError for a size that does not match. The two-argument form
  // makes pass() whole_step; the three-argument form per_micro_batch, with `micro_batches`
  // dividing batch (InputError, field "micro_batches", otherwise) and equal to the count the
  // driver's schedule runs. Pick one form for a run: pass() follows the last call.
  void set_batch(std::span<const TokenId> tokens, int batch);
  void set_batch(std::span<const TokenId> tokens, int batch, int micro_batches);
  // Mean training loss of the last step's batch (before its update); per_micro_batch: set once
  // every micro-batch's forward of the step has run.
  double last_loss() const noexcept { return loss_; }

  std::size_t layer_count() const override { return layers_.size(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return layers_.at(l); }
  linalg::MatrixView<T> weight_matrix(std::size_t l) override { return gpt_.parameter_matrix(l); }
  linalg::ConstMatrixView<T> gradient_matrix(std::size_t l) const override {
    return static_cast<const Gpt<T>&>(gpt_).gradient_matrix(l);
  }
  linalg::MatrixView<T> mutable_gradient_matrix(std::size_t l) override { return gpt_.gradient_matrix(l); }
  // Gpt keeps every gradient in one array, tensor after tensor in layer order (gpt_state.hpp).
  std::span<T> gradient_bucket(std::size_t first, std::size_t last) override {
    const linalg::MatrixView<T> end = gpt_.gradient_matrix(last);
    return {gpt_.gradient_matrix(first).data(), end.data() + end.rows() * end.cols()};
  }
  // whole_step: forward_backward() computes every gradient at the step's first call.
  // per_micro_batch: never called (std::logic_error).
  void compute_gradient(std::size_t l, runtime::Step t) override;
  runtime::ModelPass pass() const noexcept override { return pass_; }
  // per_micro_batch only. Each (layer, micro-batch) once per step, a micro-batch's forwards in
  // layer order, then its backwards in reverse (std::logic_error otherwise); a step begins at
  // the first forward_pass of a new t, once the previous step has run every pass.
  void forward_pass(std::size_t l, int m, runtime::Step t) override;
  void backward_pass(std::size_t l, int m, runtime::Step t) override;

 private:
  void begin_step(runtime::Step t);
  void check_micro_batch(const char* what, std::size_t l, int m, runtime::Step t) const;

  Gpt<T>& gpt_;
  std::vector<runtime::LayerSpec> layers_;
  std::vector<TokenId> tokens_;
  int batch_ = 0;
  int micro_batches_ = 1;  // of the next step
  runtime::ModelPass pass_ = runtime::ModelPass::whole_step;
  runtime::Step computed_step_ = 0;  // whole_step: the step whose gradients are in the model
  double loss_ = 0.0;

  // per_micro_batch: the units each layer's forward body runs (ascending), and its backward body
  // (descending); the step in progress and each micro-batch's progress through the layers.
  std::vector<std::vector<int>> forward_units_;
  std::vector<std::vector<int>> backward_units_;
  bool in_step_ = false;
  runtime::Step step_ = 0;
  int step_micro_batches_ = 0;
  std::vector<std::size_t> forwarded_;   // per micro-batch: layers whose forward_pass ran
  std::vector<std::size_t> backwarded_;  // per micro-batch: layers whose backward_pass ran
};

extern template class GptTrainingModel<float>;
extern template class GptTrainingModel<double>;

}  // namespace asteria::model

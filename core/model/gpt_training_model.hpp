#pragma once
// A Gpt as the step driver's model: one driver layer per parameter tensor, in forward order (the
// workload's runtime stack, so a training run and a simulation of one config have the same
// layers, blocks and modelled costs). The transformer's backward is not layer by layer here: the
// first backward call of a step runs the whole forward and backward on the step's batch, and
// later calls find their gradient ready. Every layer's gradient is then computed from the
// weights before any update of the step, as in a framework's backward.
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
  // before each step; throws InputError for a size that does not match.
  void set_batch(std::span<const TokenId> tokens, int batch);
  // Mean training loss of the last step's batch (before its update).
  double last_loss() const noexcept { return loss_; }

  std::size_t layer_count() const override { return layers_.size(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return layers_.at(l); }
  linalg::MatrixView<T> weight_matrix(std::size_t l) override { return gpt_.parameter_matrix(l); }
  linalg::ConstMatrixView<T> gradient_matrix(std::size_t l) const override {
    return static_cast<const Gpt<T>&>(gpt_).gradient_matrix(l);
  }
  linalg::MatrixView<T> mutable_gradient_matrix(std::size_t l) override { return gpt_.gradient_matrix(l); }
  void compute_gradient(std::size_t l, runtime::Step t) override;
  // forward_backward() computes every gradient at the step's first backward.
  runtime::ModelPass pass() const noexcept override { return runtime::ModelPass::whole_step; }

 private:
  Gpt<T>& gpt_;
  std::vector<runtime::LayerSpec> layers_;
  std::vector<TokenId> tokens_;
  int batch_ = 0;
  runtime::Step computed_step_ = 0;  // the step whose gradients are in the model
  double loss_ = 0.0;
};

extern template class GptTrainingModel<float>;
extern template class GptTrainingModel<double>;

}  // namespace asteria::model

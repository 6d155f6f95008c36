#pragma once
// A GptCuda as the step driver's model, with the optimizer on the host (as ZeRO-Offload places
// it): the forward and backward run on the GPU; each step downloads every gradient into host
// mirrors, the runtime's optimizers update host mirrors of the parameters, and the next step
// (or a validation pass) uploads them before it computes. Layers are the workload's runtime
// stack, one per tensor, as for the CPU model (model::GptTrainingModel).
#include <cstddef>
#include <span>
#include <vector>

#include "core/real/cuda/gpt_cuda.hpp"
#include "core/runtime/driver/training_model.hpp"

namespace asteria::real::cuda {

class GptCudaTrainingModel final : public runtime::TrainingModel<float> {
 public:
  // `gpt` must outlive this object. Copies the initial parameters to the host.
  explicit GptCudaTrainingModel(GptCuda& gpt);

  // As model::GptTrainingModel::set_batch.
  void set_batch(std::span<const model::TokenId> tokens, int batch);
  double last_loss() const noexcept { return loss_; }
  // Uploads the host parameters if an update changed them since the last upload.
  void sync_parameters_to_device();
  // Host mirror of tensor i's parameters (current after every step).
  std::span<const float> parameters(std::size_t i) const { return parameters_.at(i); }

  std::size_t layer_count() const override { return layers_.size(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return layers_.at(l); }
  linalg::MatrixView<float> weight_matrix(std::size_t l) override;
  linalg::ConstMatrixView<float> gradient_matrix(std::size_t l) const override;
  linalg::MatrixView<float> mutable_gradient_matrix(std::size_t l) override;
  void compute_gradient(std::size_t l, runtime::Step t) override;
  // forward_backward() computes every gradient at the step's first backward.
  runtime::ModelPass pass() const noexcept override { return runtime::ModelPass::whole_step; }

 private:
  GptCuda& gpt_;
  std::vector<runtime::LayerSpec> layers_;
  std::vector<std::vector<float>> parameters_;  // host mirrors, updated by the optimizer
  std::vector<std::vector<float>> gradients_;
  std::vector<model::TokenId> tokens_;
  int batch_ = 0;
  runtime::Step computed_step_ = 0;
  bool device_stale_ = false;  // the host parameters changed since the last upload
  double loss_ = 0.0;
};

}  // namespace asteria::real::cuda

#pragma once
// A GptCuda as the step driver's model. Layers are the workload's runtime stack, one per tensor,
// as for the CPU model (model::GptTrainingModel). Two ways to hand the tensors to the optimizer:
//   host mirrors (the default; the optimizer on the host, as ZeRO-Offload places it): each step
//     downloads every gradient into host mirrors, the optimizers update host mirrors of the
//     parameters, and the next step (or a validation pass) uploads them before it computes;
//   resident (keep_on_device): the driver reads the gradients and updates the parameters where
//     the model keeps them in GPU memory (tensor_tier() is the device tier), with the math of the
//     run's accelerator on the same GPU; before each forward the model waits for the work that
//     device has queued (the previous step's updates).
#include <cstddef>
#include <span>
#include <vector>

#include "core/ops/device.hpp"
#include "core/real/cuda/gpt_cuda.hpp"
#include "core/runtime/driver/training_model.hpp"

namespace asteria::real::cuda {

class GptCudaTrainingModel final : public runtime::TrainingModel<float> {
 public:
  // `gpt` must outlive this object. Copies the initial parameters to the host.
  explicit GptCudaTrainingModel(GptCuda& gpt);

  // From now on the tensors are handed out in GPU memory; `updates` (which must outlive this
  // object) is the device whose queue the optimizer's updates of them fill, on the model's GPU.
  // Call before the first step: the host mirrors are uploaded and dropped.
  void keep_on_device(ops::Device& updates);
  bool resident() const noexcept { return updates_ != nullptr; }

  // As model::GptTrainingModel::set_batch.
  void set_batch(std::span<const model::TokenId> tokens, int batch);
  double last_loss() const noexcept { return loss_; }
  // Makes the GPU's parameters current: uploads the host mirrors if an update changed them since
  // the last upload, or (resident) waits for the updates queued on the device.
  void sync_parameters_to_device();
  // Tensor i's current parameters, on the host (a download when resident).
  std::vector<float> parameters(std::size_t i) const;

  std::size_t layer_count() const override { return layers_.size(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return layers_.at(l); }
  linalg::MatrixView<float> weight_matrix(std::size_t l) override;
  linalg::ConstMatrixView<float> gradient_matrix(std::size_t l) const override;
  linalg::MatrixView<float> mutable_gradient_matrix(std::size_t l) override;
  // Resident: GptCuda keeps every gradient in one device array in layer order; otherwise the
  // host mirrors are apart (one bucket per layer).
  std::span<float> gradient_bucket(std::size_t first, std::size_t last) override;
  void compute_gradient(std::size_t l, runtime::Step t) override;
  // forward_backward() computes every gradient at the step's first backward.
  runtime::ModelPass pass() const noexcept override { return runtime::ModelPass::whole_step; }
  platform::Tier tensor_tier() const noexcept override {
    return resident() ? platform::Tier::device : platform::Tier::host;
  }

 private:
  GptCuda& gpt_;
  ops::Device* updates_ = nullptr;  // resident: the device the optimizer's updates run on
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

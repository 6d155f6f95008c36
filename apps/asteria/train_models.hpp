#pragma once
// What `asteria train` needs of a model, on either device: the step driver's view, the step's
// batch and loss, a validation loss, and the parameters for the checkpoint. The CPU model is
// model::Gpt; the CUDA one (builds with CUDA) real::cuda::GptCuda, its optimizer state on the same GPU when the
// run's platform has it (RunPlatform use_gpu).
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "apps/asteria/memory_check.hpp"
#include "core/model/gpt.hpp"
#include "core/ops/device.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::cli {

class TrainModel {
 public:
  virtual ~TrainModel() = default;
  virtual runtime::TrainingModel<float>& driver_model() = 0;
  // `micro_batches` 0: the model computes the whole batch in one pass at the step's first
  // backward; >= 1: one pass per (layer, micro-batch) where the schedule puts it, gradients
  // folded in micro-batch order (InputError naming --micro-batches where the model cannot).
  virtual void set_batch(std::span<const model::TokenId> tokens, int batch, int micro_batches) = 0;
  virtual double last_loss() const = 0;
  // Mean loss over `batch` sequences with the current parameters (no gradients).
  virtual double loss(std::span<const model::TokenId> tokens, int batch) = 0;
  virtual std::size_t tensor_count() const = 0;
  virtual const workload::WeightSpec& tensor(std::size_t i) const = 0;
  virtual std::vector<float> parameters(std::size_t i) const = 0;
  virtual std::size_t parameter_count() const = 0;
  virtual double step_flops(int batch, int sequence_length) const = 0;
  virtual std::string device_description() const = 0;
  // Hands the driver the model's weights and gradients where the model keeps them, in the memory
  // of `device` (the run's accelerator, on the model's GPU: its math updates them there) instead
  // of host copies. False (the default): the model cannot, and keeps handing out host memory.
  // Call before the first step.
  virtual bool keep_tensors_on(ops::Device& /*device*/) { return false; }
};

// device "cpu" or "cuda". Throws InputError naming --device when the device is not available
// (a build without CUDA, a machine without a GPU) and for a model the implementation rejects.
// The caller checks the memory first (check_train_memory).
std::unique_ptr<TrainModel> make_train_model(const std::string& device, const workload::ModelConfig& config,
                                             std::uint64_t seed);

}  // namespace asteria::cli

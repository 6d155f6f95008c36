#pragma once
// What `asteria train` needs of a model, on either device: the step driver's view, the step's
// batch and loss, a validation loss, and the parameters for the checkpoint. The CPU model is
// model::Gpt; the CUDA one (builds with CUDA) real::cuda::GptCuda with the optimizer on the host.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "apps/asteria/memory_check.hpp"
#include "core/model/gpt.hpp"
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
};

// device "cpu" or "cuda". Throws InputError naming --device when the device is not available
// (a build without CUDA, a machine without a GPU) and for a model the implementation rejects.
// The caller checks the memory first (check_train_memory).
std::unique_ptr<TrainModel> make_train_model(const std::string& device, const workload::ModelConfig& config,
                                             std::uint64_t seed);

}  // namespace asteria::cli

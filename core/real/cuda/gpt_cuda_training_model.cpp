#include "core/real/cuda/gpt_cuda_training_model.hpp"

#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/runtime_stack.hpp"

namespace asteria::real::cuda {

GptCudaTrainingModel::GptCudaTrainingModel(GptCuda& gpt) : gpt_(gpt) {
  layers_ = workload::runtime_stack(workload::build_workload(gpt_.config())).layers;
  if (layers_.size() != gpt_.tensor_count())
    throw std::logic_error("GptCudaTrainingModel: the runtime stack has " + std::to_string(layers_.size()) +
                           " layers for " + std::to_string(gpt_.tensor_count()) + " tensors");
  for (std::size_t i = 0; i < gpt_.tensor_count(); ++i) {
    const workload::WeightSpec& w = gpt_.tensor(i);
    if (layers_[i].name != w.name)
      throw std::logic_error("GptCudaTrainingModel: layer " + std::to_string(i) + " is '" + layers_[i].name +
                             "', tensor is '" + w.name + "'");
    parameters_.emplace_back(static_cast<std::size_t>(w.elements()));
    gradients_.emplace_back(static_cast<std::size_t>(w.elements()));
    gpt_.copy_parameter_to_host(i, parameters_.back());
  }
}

void GptCudaTrainingModel::set_batch(std::span<const model::TokenId> tokens, int batch) {
  const auto per_sequence = static_cast<std::size_t>(gpt_.config().sequence_length) + 1;
  if (batch < 1 || tokens.size() != static_cast<std::size_t>(batch) * per_sequence)
    throw InputError("tokens", "batch", "expected " + std::to_string(batch) + " sequences of " +
                                            std::to_string(per_sequence) + " tokens, found " +
                                            std::to_string(tokens.size()) + " tokens");
  tokens_.assign(tokens.begin(), tokens.end());
  batch_ = batch;
}

void GptCudaTrainingModel::keep_on_device(ops::Device& updates) {
  if (computed_step_ != 0) throw std::logic_error("GptCudaTrainingModel: keep_on_device after a step");
  sync_parameters_to_device();
  updates_ = &updates;
  std::vector<std::vector<float>>().swap(parameters_);
  std::vector<std::vector<float>>().swap(gradients_);
}

std::vector<float> GptCudaTrainingModel::parameters(std::size_t i) const {
  if (!resident()) return parameters_.at(i);
  if (i >= gpt_.tensor_count()) throw std::out_of_range("GptCudaTrainingModel::parameters: no tensor " + std::to_string(i));
  updates_->synchronize();  // the updates queued on the optimizer's device have landed
  std::vector<float> out(static_cast<std::size_t>(gpt_.tensor(i).elements()));
  gpt_.copy_parameter_to_host(i, out);
  return out;
}

linalg::MatrixView<float> GptCudaTrainingModel::weight_matrix(std::size_t l) {
  const runtime::LayerSpec& s = layers_.at(l);
  if (resident()) return {gpt_.device_parameter(l), s.rows, s.cols};
  device_stale_ = true;  // handed out for an update
  return {parameters_[l].data(), s.rows, s.cols};
}

linalg::ConstMatrixView<float> GptCudaTrainingModel::gradient_matrix(std::size_t l) const {
  const runtime::LayerSpec& s = layers_.at(l);
  if (resident()) return {gpt_.device_gradient(l), s.rows, s.cols};
  return {gradients_.at(l).data(), s.rows, s.cols};
}

linalg::MatrixView<float> GptCudaTrainingModel::mutable_gradient_matrix(std::size_t l) {
  const runtime::LayerSpec& s = layers_.at(l);
  if (resident()) return {const_cast<float*>(gpt_.device_gradient(l)), s.rows, s.cols};
  return {gradients_.at(l).data(), s.rows, s.cols};
}

std::span<float> GptCudaTrainingModel::gradient_bucket(std::size_t first, std::size_t last) {
  if (!resident()) return runtime::TrainingModel<float>::gradient_bucket(first, last);
  const runtime::LayerSpec& end = layers_.at(last);
  float* begin = const_cast<float*>(gpt_.device_gradient(first));
  return {begin, const_cast<float*>(gpt_.device_gradient(last)) + end.rows * end.cols};
}

void GptCudaTrainingModel::sync_parameters_to_device() {
  if (resident()) {
    updates_->synchronize();  // another stream: its updates must end before the model reads
    return;
  }
  if (!device_stale_) return;
  for (std::size_t i = 0; i < parameters_.size(); ++i) gpt_.copy_parameter_from_host(i, parameters_[i]);
  device_stale_ = false;
}

void GptCudaTrainingModel::compute_gradient(std::size_t /*l*/, runtime::Step t) {
  if (t == computed_step_) return;  // this step's forward and backward already ran
  if (batch_ < 1) throw std::logic_error("GptCudaTrainingModel: no batch set before step " + std::to_string(t));
  sync_parameters_to_device();
  loss_ = gpt_.forward_backward(tokens_, batch_);
  if (!resident())
    for (std::size_t i = 0; i < gradients_.size(); ++i) gpt_.copy_gradient_to_host(i, gradients_[i]);
  computed_step_ = t;
}

}  // namespace asteria::real::cuda

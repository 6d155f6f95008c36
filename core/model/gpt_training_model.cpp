#include "core/model/gpt_training_model.hpp"

#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/runtime_stack.hpp"

namespace asteria::model {

template <linalg::Real T>
GptTrainingModel<T>::GptTrainingModel(Gpt<T>& gpt) : gpt_(gpt) {
  const workload::WorkloadModel wl = workload::build_workload(gpt_.config());
  layers_ = workload::runtime_stack(wl).layers;
  // The driver addresses tensors by layer index: the stack must list the model's tensors in order.
  if (layers_.size() != gpt_.tensor_count())
    throw std::logic_error("GptTrainingModel: the runtime stack has " + std::to_string(layers_.size()) +
                           " layers for " + std::to_string(gpt_.tensor_count()) + " tensors");
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const workload::WeightSpec& w = gpt_.tensor(l);
    if (layers_[l].name != w.name || layers_[l].rows != w.rows || layers_[l].cols != w.cols)
      throw std::logic_error("GptTrainingModel: layer " + std::to_string(l) + " is '" + layers_[l].name +
                             "', tensor is '" + w.name + "'");
  }
}

template <linalg::Real T>
void GptTrainingModel<T>::set_batch(std::span<const TokenId> tokens, int batch) {
  const auto per_sequence = static_cast<std::size_t>(gpt_.config().sequence_length) + 1;
  if (batch < 1 || tokens.size() != static_cast<std::size_t>(batch) * per_sequence)
    throw InputError("tokens", "batch", "expected " + std::to_string(batch) + " sequences of " +
                                            std::to_string(per_sequence) + " tokens, found " +
                                            std::to_string(tokens.size()) + " tokens");
  tokens_.assign(tokens.begin(), tokens.end());
  batch_ = batch;
}

template <linalg::Real T>
void GptTrainingModel<T>::compute_gradient(std::size_t /*l*/, runtime::Step t) {
  if (t == computed_step_) return;  // this step's forward and backward already ran
  if (batch_ < 1) throw std::logic_error("GptTrainingModel: no batch set before step " + std::to_string(t));
  loss_ = gpt_.forward_backward(tokens_, batch_);
  computed_step_ = t;
}

template class GptTrainingModel<float>;
template class GptTrainingModel<double>;

}  // namespace asteria::model

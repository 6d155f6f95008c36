// Gpt<T>: construction (layout and initial weights from gpt_layout.hpp), accessors and the FLOP
// count; the passes themselves are in gpt_forward.cpp and gpt_backward.cpp.
#include "core/model/gpt.hpp"

#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/model/gpt_state.hpp"

namespace asteria::model {

template <linalg::Real T>
struct Gpt<T>::Impl {
  GptState<T> state;
};

template <linalg::Real T>
Gpt<T>::Gpt(const workload::ModelConfig& config, std::uint64_t seed) : impl_(std::make_unique<Impl>()) {
  const workload::WorkloadModel work = workload::build_workload(config);  // validates the sizes
  check_supported(config);
  GptState<T>& s = impl_->state;
  s.config = config;
  s.specs = work.weights;
  std::size_t total = 0;
  s.offsets = tensor_offsets(s.specs, &total);
  s.values = initial_parameters<T>(config, s.specs, seed);
  s.gradients.assign(total, T(0));
  s.index = index_weights(work);
  s.rope = RotaryTable<T>(config.sequence_length, config.head_dim());
  s.workspace.layers.resize(static_cast<std::size_t>(config.layers));
}

template <linalg::Real T>
Gpt<T>::~Gpt() = default;
template <linalg::Real T>
Gpt<T>::Gpt(Gpt&&) noexcept = default;
template <linalg::Real T>
Gpt<T>& Gpt<T>::operator=(Gpt&&) noexcept = default;

template <linalg::Real T>
const workload::ModelConfig& Gpt<T>::config() const noexcept {
  return impl_->state.config;
}

template <linalg::Real T>
std::size_t Gpt<T>::tensor_count() const noexcept {
  return impl_->state.specs.size();
}

template <linalg::Real T>
const workload::WeightSpec& Gpt<T>::tensor(std::size_t i) const {
  return impl_->state.specs.at(i);
}

template <linalg::Real T>
std::span<T> Gpt<T>::parameter(std::size_t i) {
  GptState<T>& s = impl_->state;
  return {s.values.data() + s.offsets.at(i), static_cast<std::size_t>(s.specs[i].elements())};
}

template <linalg::Real T>
std::span<const T> Gpt<T>::parameter(std::size_t i) const {
  const GptState<T>& s = impl_->state;
  return {s.values.data() + s.offsets.at(i), static_cast<std::size_t>(s.specs[i].elements())};
}

template <linalg::Real T>
std::span<T> Gpt<T>::gradient(std::size_t i) {
  GptState<T>& s = impl_->state;
  return {s.gradients.data() + s.offsets.at(i), static_cast<std::size_t>(s.specs[i].elements())};
}

template <linalg::Real T>
std::span<const T> Gpt<T>::gradient(std::size_t i) const {
  const GptState<T>& s = impl_->state;
  return {s.gradients.data() + s.offsets.at(i), static_cast<std::size_t>(s.specs[i].elements())};
}

template <linalg::Real T>
linalg::MatrixView<T> Gpt<T>::parameter_matrix(std::size_t i) {
  GptState<T>& s = impl_->state;
  return {s.values.data() + s.offsets.at(i), s.specs[i].rows, s.specs[i].cols};
}

template <linalg::Real T>
linalg::ConstMatrixView<T> Gpt<T>::gradient_matrix(std::size_t i) const {
  const GptState<T>& s = impl_->state;
  return {s.gradients.data() + s.offsets.at(i), s.specs[i].rows, s.specs[i].cols};
}

template <linalg::Real T>
std::size_t Gpt<T>::parameter_count() const noexcept {
  return impl_->state.values.size();
}

template <linalg::Real T>
double Gpt<T>::forward_backward(std::span<const TokenId> tokens, int batch) {
  GptState<T>& s = impl_->state;
  prepare_workspace(s, tokens, batch);
  const double mean_loss = forward(s);
  backward(s);
  return mean_loss;
}

template <linalg::Real T>
double Gpt<T>::loss(std::span<const TokenId> tokens, int batch) {
  GptState<T>& s = impl_->state;
  prepare_workspace(s, tokens, batch);
  return forward(s);
}

// The convention of workload::build_workload (workload_model.hpp), so measured throughput and
// simulated step time count the same work. With n = batch · L tokens:
//   * each matmul with a p-element weight: 2·n·p forward (the head's V x d counts even when tied);
//   * attention per layer: QKᵀ and PV are 2·batch·L²·d each without a mask; the causal mask
//     halves them (what a fused kernel does), so 2·batch·L²·d in all. This CPU reference forms
//     the full L x L products, so it does twice this attention work;
//   * norms, activations, softmax, residuals, embedding gather: not counted;
//   * forward + backward = 3 x forward (backward: input and weight gradients, a forward each).
template <linalg::Real T>
double Gpt<T>::step_flops(int batch, int sequence_length) const {
  const workload::ModelConfig& c = impl_->state.config;
  const double n = static_cast<double>(batch) * sequence_length;
  const double d = static_cast<double>(c.d_model);
  const double kv = static_cast<double>(c.kv_dim());
  const double f = static_cast<double>(c.mlp_hidden);
  const double mlp_matrices = c.mlp == workload::MlpKind::swiglu ? 3.0 : 2.0;
  const double layer_weights = 2.0 * d * d + 2.0 * kv * d + mlp_matrices * f * d;
  const double attention = 2.0 * static_cast<double>(batch) * sequence_length * sequence_length * d;
  const double layer = 2.0 * n * layer_weights + attention;
  const double head = 2.0 * n * static_cast<double>(c.vocab) * d;
  return 3.0 * (static_cast<double>(c.layers) * layer + head);
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace asteria::model

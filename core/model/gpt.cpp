// Gpt<T>: construction (layout and initial weights from gpt_layout.hpp), accessors and the FLOP
// count; the passes themselves are in gpt_forward.cpp and gpt_backward.cpp, micro-batched steps
// in gpt_micro_batches.cpp.
#include "core/model/gpt.hpp"

#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/model/gpt_micro_batches.hpp"
#include "core/model/gpt_state.hpp"

namespace asteria::model {

template <linalg::Real T>
struct Gpt<T>::Impl {
  GptState<T> state;
  MicroBatchStep<T> micro;
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
  s.targets.assign(s.specs.size(), nullptr);
  impl_->micro.configure(s);
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
linalg::MatrixView<T> Gpt<T>::gradient_matrix(std::size_t i) {
  GptState<T>& s = impl_->state;
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
  impl_->micro.end();  // its gradients are about to be overwritten
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

template <linalg::Real T>
void Gpt<T>::begin_step(std::span<const TokenId> tokens, int batch, int micro_batches) {
  impl_->micro.begin(impl_->state, tokens, batch, micro_batches);
}

template <linalg::Real T>
int Gpt<T>::unit_count() const noexcept {
  return impl_->micro.unit_count();
}

template <linalg::Real T>
int Gpt<T>::unit_of_tensor(std::size_t i) const {
  return impl_->micro.unit_of(i);
}

template <linalg::Real T>
void Gpt<T>::forward_unit(int unit, int m) {
  impl_->micro.forward(impl_->state, unit, m);
}

template <linalg::Real T>
void Gpt<T>::backward_unit(int unit, int m) {
  impl_->micro.backward(impl_->state, unit, m);
}

template <linalg::Real T>
bool Gpt<T>::gradient_ready(std::size_t i) const noexcept {
  return impl_->micro.gradient_ready(i);
}

template <linalg::Real T>
double Gpt<T>::step_loss() const {
  return impl_->micro.loss();
}

template <linalg::Real T>
bool Gpt<T>::step_loss_ready() const noexcept {
  return impl_->micro.loss_ready();
}

// model::step_flops (gpt_layout.hpp). This CPU reference forms the full L x L attention
// products, so it does twice the attention work counted there.
template <linalg::Real T>
double Gpt<T>::step_flops(int batch, int sequence_length) const {
  return model::step_flops(impl_->state.config, batch, sequence_length);
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace asteria::model

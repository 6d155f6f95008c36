// Gpt<T>: construction, weight initialisation, accessors and the FLOP count; the passes
// themselves are in gpt_forward.cpp and gpt_backward.cpp.
#include "core/model/gpt.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/model/gpt_state.hpp"
#include "core/model/normal_stream.hpp"

namespace asteria::model {

namespace {

constexpr double kInitStd = 0.02;

// What this model implements beyond what workload::validate accepts.
void check_supported(const workload::ModelConfig& c) {
  const std::string source = c.name.empty() ? std::string("model") : c.name;
  if (c.kv_heads != c.heads)
    throw InputError(source, "kv_heads",
                     "expected kv_heads equal to heads (" + std::to_string(c.heads) +
                         "): grouped-query attention is not implemented, found " + std::to_string(c.kv_heads));
  if (c.qk_norm) throw InputError(source, "qk_norm", "expected false: QK-norm is not implemented");
  if (c.head_dim() % 2 != 0)
    throw InputError(source, "heads",
                     "expected an even head_dim (d_model / heads) for RoPE's pairs, found " +
                         std::to_string(c.head_dim()));
}

bool is_output_projection(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".attn.o") || ends_with(".mlp.down") || ends_with(".mlp.fc2");
}

template <linalg::Real T>
void index_weights(GptState<T>& s, const workload::WorkloadModel& work) {
  const auto find = [&](const std::string& name) { return work.weight_index(name); };
  const workload::ModelConfig& c = s.config;
  s.embedding = find("embedding");
  if (c.norm_weights) s.final_norm = find("final_norm");
  s.head = c.tied_embeddings ? s.embedding : find("head");
  s.layer_weights.resize(static_cast<std::size_t>(c.layers));
  for (std::size_t l = 0; l < s.layer_weights.size(); ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    LayerWeightIndex& w = s.layer_weights[l];
    if (c.norm_weights) {
      w.attn_norm = find(p + "attn_norm");
      w.mlp_norm = find(p + "mlp_norm");
    }
    w.q = find(p + "attn.q");
    w.k = find(p + "attn.k");
    w.v = find(p + "attn.v");
    w.o = find(p + "attn.o");
    if (c.mlp == workload::MlpKind::swiglu) {
      w.in = find(p + "mlp.gate");
      w.up = find(p + "mlp.up");
      w.down = find(p + "mlp.down");
    } else {
      w.in = find(p + "mlp.fc1");
      w.down = find(p + "mlp.fc2");
    }
  }
}

// Matrices N(0, 0.02²), output projections scaled by 1/sqrt(2·layers) so the residual stream's
// variance does not grow with depth (GPT-2); norm gains 1. Drawn in double, tensor by tensor
// in workload order, so float and double models of one seed hold the same (rounded) weights.
template <linalg::Real T>
void initialise(GptState<T>& s, std::uint64_t seed) {
  NormalStream normal(seed);
  const double output_scale = 1.0 / std::sqrt(2.0 * static_cast<double>(s.config.layers));
  for (std::size_t i = 0; i < s.specs.size(); ++i) {
    const workload::WeightSpec& spec = s.specs[i];
    T* values = s.values.data() + s.offsets[i];
    if (spec.order == 1) {
      std::fill_n(values, spec.elements(), T(1));
      continue;
    }
    const double std_dev = kInitStd * (is_output_projection(spec.name) ? output_scale : 1.0);
    for (workload::count e = 0; e < spec.elements(); ++e) values[e] = static_cast<T>(std_dev * normal.next());
  }
}

}  // namespace

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
  for (const workload::WeightSpec& spec : s.specs) {
    s.offsets.push_back(total);
    total += static_cast<std::size_t>(spec.elements());
  }
  s.values.assign(total, T(0));
  s.gradients.assign(total, T(0));
  index_weights(s, work);
  s.rope = RotaryTable<T>(config.sequence_length, config.head_dim());
  s.workspace.layers.resize(static_cast<std::size_t>(config.layers));
  initialise(s, seed);
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

#include "core/workload/runtime_stack.hpp"

#include "core/optim/shape_model.hpp"

namespace asteria::workload {
namespace {

// Training-step work runs in reduced precision (mixed-precision training); optimizer work does not.
platform::Costs with_reduced_precision(const platform::Costs& costs) {
  std::vector<platform::Cost> pieces(costs.pieces().begin(), costs.pieces().end());
  for (platform::Cost& piece : pieces) piece.reduced_precision = true;
  return platform::Costs(std::move(pieces));
}

}  // namespace

runtime::SyntheticModelSpec runtime_stack(const WorkloadModel& model, const runtime::GradientSpec& gradients) {
  runtime::SyntheticModelSpec spec;
  spec.gradients = gradients;
  platform::Costs carry_forward, carry_backward;  // of layers that own no weight (a tied head)
  for (const LayerWork& layer : model.layers) {
    double elements = 0.0;
    for (std::size_t w : layer.weights) elements += static_cast<double>(model.weights[w].elements());
    if (layer.weights.empty()) {
      carry_forward.merge(layer.forward);
      carry_backward.merge(layer.backward);
      continue;
    }
    for (std::size_t i = 0; i < layer.weights.size(); ++i) {
      const WeightSpec& w = model.weights[layer.weights[i]];
      const double fraction = static_cast<double>(w.elements()) / elements;
      runtime::LayerSpec s;
      s.name = w.name;
      s.rows = w.rows;
      s.cols = w.cols;
      s.vector = w.order < 2;
      // The compute copy of the weights is in the activations' precision (mixed precision).
      s.weight_bytes = static_cast<double>(w.elements()) * static_cast<double>(model.config.activation_bytes);
      // A decoder layer's checkpoint is its input (the residual stream), kept with its first tensor.
      if (i == 0 && layer.layer >= 0 && layer.layer < static_cast<int>(model.config.layers))
        s.checkpoint_bytes = static_cast<double>(model.totals.tokens) * static_cast<double>(model.config.d_model) *
                             static_cast<double>(model.config.activation_bytes);
      s.forward = with_reduced_precision(layer.forward.scaled(fraction));
      s.backward = with_reduced_precision(layer.backward.scaled(fraction));
      if (i == 0 && !(carry_forward.free() && carry_backward.free())) {
        s.forward.merge(with_reduced_precision(carry_forward));
        s.backward.merge(with_reduced_precision(carry_backward));
        carry_forward = {};
        carry_backward = {};
      }
      spec.layers.push_back(std::move(s));
    }
  }
  if (!spec.layers.empty()) {  // trailing weightless layers: charge them to the last weight
    spec.layers.back().forward.merge(with_reduced_precision(carry_forward));
    spec.layers.back().backward.merge(with_reduced_precision(carry_backward));
  }
  return spec;
}

std::size_t refresh_job_bytes(optim::OptimizerKind kind, linalg::index rows, linalg::index cols,
                              std::size_t element_bytes) {
  return optim::refresh_job_bytes(kind, optim::default_hyperparameters(kind), rows, cols, element_bytes);
}

}  // namespace asteria::workload

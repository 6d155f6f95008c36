#include "core/workload/runtime_stack.hpp"

#include "core/optim/shape_model.hpp"

namespace asteria::workload {
namespace {

platform::Cost share(const platform::Cost& total, double fraction) {
  platform::Cost c = total;
  c.flops *= fraction;
  c.bytes *= fraction;
  return c;
}

void add(platform::Cost& to, const platform::Cost& more) {
  to.flops += more.flops;
  to.bytes += more.bytes;
}

}  // namespace

runtime::SyntheticModelSpec runtime_stack(const WorkloadModel& model, const runtime::GradientSpec& gradients) {
  runtime::SyntheticModelSpec spec;
  spec.gradients = gradients;
  platform::Cost carry_forward, carry_backward;  // of layers that own no weight (a tied head)
  for (const LayerWork& layer : model.layers) {
    double elements = 0.0;
    for (std::size_t w : layer.weights) elements += static_cast<double>(model.weights[w].elements());
    if (layer.weights.empty()) {
      add(carry_forward, layer.forward);
      add(carry_backward, layer.backward);
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
      s.forward = share(layer.forward, fraction);
      s.backward = share(layer.backward, fraction);
      s.forward.reduced_precision = s.backward.reduced_precision = true;
      if (i == 0 && (carry_forward.flops > 0.0 || carry_forward.bytes > 0.0)) {
        add(s.forward, carry_forward);
        add(s.backward, carry_backward);
        carry_forward = {};
        carry_backward = {};
      }
      spec.layers.push_back(std::move(s));
    }
  }
  if (!spec.layers.empty()) {  // trailing weightless layers: charge them to the last weight
    add(spec.layers.back().forward, carry_forward);
    add(spec.layers.back().backward, carry_backward);
  }
  return spec;
}

std::size_t refresh_job_bytes(optim::OptimizerKind kind, linalg::index rows, linalg::index cols,
                              std::size_t element_bytes) {
  return optim::refresh_job_bytes(kind, optim::default_hyperparameters(kind), rows, cols, element_bytes);
}

}  // namespace asteria::workload

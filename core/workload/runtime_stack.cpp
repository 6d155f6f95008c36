#include "core/workload/runtime_stack.hpp"

#include "core/workload/optimizer_blocks.hpp"

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
  // Matrices per factor a job holds: Shampoo statistics + root; SOAP statistics, basis, new
  // basis and change of basis; KL-Shampoo the same without the change of basis.
  std::size_t per_factor = 0;
  switch (kind) {
    case optim::OptimizerKind::shampoo: per_factor = 2; break;
    case optim::OptimizerKind::soap: per_factor = 4; break;
    case optim::OptimizerKind::kl_shampoo: per_factor = 3; break;
    default: return 0;
  }
  const auto m = static_cast<std::size_t>(rows), n = static_cast<std::size_t>(cols);
  return per_factor * (m * m + n * n) * element_bytes;
}

runtime::ShapeModel shape_model(std::size_t element_bytes) {
  return [element_bytes](optim::OptimizerKind kind, const optim::Hyperparameters& hp, linalg::index rows,
                         linalg::index cols) {
    runtime::ShapeFigures f;
    f.state_bytes = state_bytes(kind, hp, rows, cols, element_bytes);
    f.refresh.first = refresh_costs(kind, hp, rows, cols, element_bytes, /*first=*/true);
    f.refresh.later = refresh_costs(kind, hp, rows, cols, element_bytes, /*first=*/false);
    f.refresh.shadow_bytes = refresh_job_bytes(kind, rows, cols, element_bytes);
    return f;
  };
}

}  // namespace asteria::workload

#include "hwmodels/calibrate/elementwise_bench.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/ops/cpu_device.hpp"
#include "core/optim/adamw.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::hw::calibrate {

Measured measure_elementwise_seconds_per_flop(std::size_t elements, int repeats, double memory_bandwidth) {
  if (elements == 0 || repeats < 1 || !(memory_bandwidth > 0.0))
    throw InputError("elementwise measurement", "elements, repeats, memory_bandwidth",
                     "expected elements >= 1, repeats >= 1 and a positive bandwidth");
  // A block of 1024-wide rows, as the optimizers see a weight matrix.
  const auto cols = static_cast<linalg::index>(std::min<std::size_t>(elements, 1024));
  const auto rows = static_cast<linalg::index>((elements + static_cast<std::size_t>(cols) - 1) /
                                               static_cast<std::size_t>(cols));
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::adamw);
  optim::AdamWBlock<float> block(hp, rows, cols);
  std::vector<float> w(n, 1.0f), g(n, 0.5f);
  const linalg::MatrixView<float> weights(w.data(), rows, cols, cols);
  const linalg::ConstMatrixView<float> grad(g.data(), rows, cols, cols);
  ops::CpuDevice cpu;  // the calling thread, the widest vector instructions of this processor
  optim::Step t = 0;
  bool applied = true;
  const double seconds = best_seconds(repeats, [&] { applied = block.apply(cpu, weights, grad, ++t) && applied; });
  if (!applied) throw InputError("elementwise measurement", "AdamW update", "finite updates of the test block");
  const optim::PhaseCosts costs = optim::phase_costs(optim::OptimizerKind::adamw, rows, cols, sizeof(float));
  const double arithmetic = std::max(0.0, seconds - costs.apply.bytes / memory_bandwidth);
  Measured out;
  out.value = costs.apply.flops > 0.0 ? arithmetic / costs.apply.flops : 0.0;
  out.method = "the runtime's AdamW update (AdamWBlock<float>::apply) of a " + std::to_string(rows) + " x " +
               std::to_string(cols) + " fp32 block on 1 thread, best of " + std::to_string(repeats) + ": " +
               std::to_string(seconds * 1e3) + " ms less its " +
               std::to_string(static_cast<long long>(costs.apply.bytes / static_cast<double>(n))) +
               " B/element at the memcpy bandwidth, over its " +
               std::to_string(static_cast<long long>(costs.apply.flops / static_cast<double>(n))) + " flops/element";
  return out;
}

}  // namespace asteria::hw::calibrate

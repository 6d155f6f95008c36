// `asteria synth`: settings checks, the synthetic stack's costs and the device model.
#include <cmath>
#include <memory>

#include "apps/asteria/synth.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/workload/runtime_stack.hpp"
#include "hwmodels/cost_model.hpp"
#include "hwmodels/profile_loader.hpp"

namespace asteria::cli {

std::vector<std::pair<linalg::index, linalg::index>> synth_shapes(const RunConfig& spec) {
  const run::SynthConfig& c = spec.synth;
  std::vector<std::pair<linalg::index, linalg::index>> shapes;
  if (!c.shapes.empty()) {
    for (const auto& [rows, cols] : c.shapes) shapes.emplace_back(rows, cols);
  } else if (!spec.model || c.layers || c.rows || c.cols) {
    shapes.assign(static_cast<std::size_t>(c.layers.value_or(8)), {c.rows.value_or(512), c.cols.value_or(512)});
  }
  return shapes;
}

real::DeviceModel synth_device_model(const RunConfig& spec) {
  const run::SynthConfig& c = spec.synth;
  return {c.device_tflops * 1e12, c.device_bandwidth_tbps * 1e12, c.launch_latency_us * 1e-6};
}

void validate_synth(const RunConfig& s) {
  validate(s);
  const run::SynthConfig& c = s.synth;
  const std::string source = "command line";
  if (s.model && (!c.shapes.empty() || c.layers || c.rows || c.cols))
    throw InputError(source, "--model", "either --model or --shape/--layers/--rows/--cols, not both");
  if (!c.shapes.empty() && (c.layers || c.rows || c.cols))
    throw InputError(source, "--shape", "either --shape or --layers/--rows/--cols, not both");
  if (!s.model && s.batch != 0)
    throw InputError(source, "--batch", "a --model (a synthetic stack's layers have no sequences)");
  if (s.model && (c.layer_flops || c.step_seconds))
    throw InputError(source, c.layer_flops ? "--layer-flops" : "--step-seconds",
                     "no per-layer cost with --model: the model config gives every layer's work");
  if (c.layer_flops && c.step_seconds)
    throw InputError(source, "--layer-flops", "either --layer-flops or --step-seconds, not both");
#if !ASTERIA_HAVE_NVME_STORE
  if (s.nvme_dir) throw InputError(source, "--nvme-dir", "a build with an NVMe tier (liburing was not found)");
#endif
}

std::function<platform::Seconds(const platform::Cost&)> device_seconds(const RunConfig& s) {
  if (s.hw) {
    auto costs = std::make_shared<hw::CostModel>(hw::load_profile(hw::find_profile(*s.hw)));
    return [costs](const platform::Cost& cost) {
      return cost.reduced_precision ? costs->gpu_step_seconds(cost) : costs->gpu_optimizer_seconds(cost);
    };
  }
  const real::DeviceModel model = synth_device_model(s);
  return [model](const platform::Cost& cost) { return model.duration(cost); };
}

runtime::SyntheticModelSpec model_spec(const RunConfig& s) {
  runtime::GradientSpec gradients;
  gradients.seed = s.seed;
  gradients.rank = s.synth.gradient_rank;
  gradients.noise = s.synth.gradient_noise;
  if (s.model) {
    workload::ModelConfig config = workload::find_model_config(*s.model);
    if (s.batch > 0) config.micro_batch = static_cast<workload::count>(s.batch);
    const workload::WorkloadModel wl = workload::build_workload(config);
    return workload::runtime_stack(wl, gradients);
  }
  runtime::SyntheticModelSpec spec;
  spec.gradients = gradients;
  const real::DeviceModel device = synth_device_model(s);
  const double latency = device.launch_latency;
  const double rate = device.flops_per_second;
  const auto shapes = synth_shapes(s);
  double total_weights = 0.0;
  for (const auto& [rows, cols] : shapes) total_weights += static_cast<double>(rows) * static_cast<double>(cols);
  const double step = s.synth.step_seconds.value_or(0.1);
  for (std::size_t l = 0; l < shapes.size(); ++l) {
    const auto [rows, cols] = shapes[l];
    double forward_flops = 0.0;
    if (s.synth.layer_flops) {
      forward_flops = *s.synth.layer_flops / 3.0;  // backward does twice the forward's work
    } else {
      // This layer's share of the step, by weight count; forward + backward last
      // (latency + f/rate) + (latency + 2f/rate).
      const double share = step * static_cast<double>(rows) * static_cast<double>(cols) / total_weights;
      if (share <= 2.0 * latency)
        throw InputError("command line", "--step-seconds",
                         "a step long enough for every layer: layer " + std::to_string(l) + " would get " +
                             significant(share, 3) + " s, no more than two kernel launches (" +
                             significant(2.0 * latency, 3) + " s)");
      forward_flops = (share - 2.0 * latency) * rate / 3.0;
    }
    spec.layers.push_back(runtime::make_layer("layer" + std::to_string(l), rows, cols, forward_flops, sizeof(float)));
  }
  runtime::validate(spec, "synthetic model");
  return spec;
}

}  // namespace asteria::cli

namespace asteria::cli {

DeviceTime device_time(const RunConfig& s) {
  const real::DeviceModel m = synth_device_model(s);
  DeviceTime d;
  d.seconds = device_seconds(s);
  d.description = s.hw ? "device kernels modelled by the " + *s.hw + " profile"
                            : "device kernels modelled as " + significant(m.flops_per_second / 1e12, 4) +
                                  " TFLOP/s, " + significant(m.bytes_per_second / 1e12, 4) + " TB/s, " +
                                  significant(m.launch_latency * 1e6, 3) + " us per launch";
  d.fake_host_flops = s.synth.fake_host_gflops * 1e9;
  return d;
}

}  // namespace asteria::cli

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

void validate(const SynthSettings& s) {
  validate(s.spec);
  const std::string source = "command line";
  if (s.spec.model && !s.shapes.empty())
    throw InputError(source, "--model", "either --model or --shape/--layers/--rows/--cols, not both");
  if (!s.spec.model && s.shapes.empty()) throw InputError(source, "--layers", "expected at least one layer");
  if (s.spec.model && (s.layer_flops || s.step_seconds))
    throw InputError(source, s.layer_flops ? "--layer-flops" : "--step-seconds",
                     "no per-layer cost with --model: the model config gives every layer's work");
  for (const auto& [rows, cols] : s.shapes)
    if (rows < 1 || cols < 1)
      throw InputError(source, "--shape", "rows and cols >= 1, found " + std::to_string(rows) + "x" + std::to_string(cols));
  if (s.layer_flops && s.step_seconds)
    throw InputError(source, "--layer-flops", "either --layer-flops or --step-seconds, not both");
  if (s.layer_flops && !(*s.layer_flops >= 0.0 && std::isfinite(*s.layer_flops)))
    throw InputError(source, "--layer-flops", "a finite number >= 0");
  if (s.step_seconds && !(*s.step_seconds > 0.0 && std::isfinite(*s.step_seconds)))
    throw InputError(source, "--step-seconds", "a finite number > 0");
  if (!(s.device_model.flops_per_second > 0.0)) throw InputError(source, "--device-tflops", "a rate > 0");
  if (!(s.device_model.bytes_per_second >= 0.0))
    throw InputError(source, "--device-bandwidth", "a rate >= 0 (0: not modelled)");
  if (!(s.device_model.launch_latency >= 0.0)) throw InputError(source, "--launch-latency-us", "a value >= 0");
  if (!(s.fake_host_flops > 0.0)) throw InputError(source, "--fake-host-gflops", "a rate > 0");
  if (s.gradients.rank < 1) throw InputError(source, "--gradient-rank", "an integer >= 1");
  if (!(s.gradients.noise >= 0.0)) throw InputError(source, "--gradient-noise", "a value >= 0");
#if !ASTERIA_HAVE_NVME_STORE
  if (s.spec.nvme_dir) throw InputError(source, "--nvme-dir", "a build with an NVMe tier (liburing was not found)");
#endif
}

std::function<platform::Seconds(const platform::Cost&)> device_seconds(const SynthSettings& s) {
  if (s.spec.hw) {
    auto costs = std::make_shared<hw::CostModel>(hw::load_profile(hw::find_profile(*s.spec.hw)));
    return [costs](const platform::Cost& cost) {
      return cost.reduced_precision ? costs->gpu_step_seconds(cost) : costs->gpu_optimizer_seconds(cost);
    };
  }
  const real::DeviceModel model = s.device_model;
  return [model](const platform::Cost& cost) { return model.duration(cost); };
}

runtime::SyntheticModelSpec model_spec(const SynthSettings& s) {
  runtime::GradientSpec gradients = s.gradients;
  gradients.seed = s.spec.seed;  // the run's --seed, not a copy of it
  if (s.spec.model) {
    const workload::WorkloadModel wl = workload::build_workload(workload::find_model_config(*s.spec.model));
    return workload::runtime_stack(wl, gradients);
  }
  runtime::SyntheticModelSpec spec;
  spec.gradients = gradients;
  const double latency = s.device_model.launch_latency;
  const double rate = s.device_model.flops_per_second;
  double total_weights = 0.0;
  for (const auto& [rows, cols] : s.shapes) total_weights += static_cast<double>(rows) * static_cast<double>(cols);
  const double step = s.step_seconds.value_or(0.1);
  for (std::size_t l = 0; l < s.shapes.size(); ++l) {
    const auto [rows, cols] = s.shapes[l];
    double forward_flops = 0.0;
    if (s.layer_flops) {
      forward_flops = *s.layer_flops / 3.0;  // backward does twice the forward's work
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

DeviceTime device_time(const SynthSettings& s) {
  const real::DeviceModel& m = s.device_model;
  DeviceTime d;
  d.seconds = device_seconds(s);
  d.description = s.spec.hw ? "device kernels modelled by the " + *s.spec.hw + " profile"
                            : "device kernels modelled as " + significant(m.flops_per_second / 1e12, 4) +
                                  " TFLOP/s, " + significant(m.bytes_per_second / 1e12, 4) + " TB/s, " +
                                  significant(m.launch_latency * 1e6, 3) + " us per launch";
  d.fake_host_flops = s.fake_host_flops;
  return d;
}

}  // namespace asteria::cli

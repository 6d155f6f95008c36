// Settings checks, the synthetic stack's costs, and the platform `asteria synth` runs on.
#include <cmath>
#include <cstdio>
#include <numeric>

#include "apps/asteria/synth.hpp"
#include "core/common/error.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/real/real_platform.hpp"
#if ASTERIA_HAVE_NVME_STORE
#include "core/real/nvme/nvme_store.hpp"
#include "core/real/tier_backend.hpp"
#endif

namespace asteria::cli {

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

}  // namespace

void validate(const SynthSettings& s) {
  optim::validate(s.hp, "hyperparameters");
  if (s.shapes.empty()) throw InputError("--layers", "layers", "expected at least one layer");
  for (const auto& [rows, cols] : s.shapes)
    if (rows < 1 || cols < 1)
      throw InputError("--shape", "shape", "expected rows and cols >= 1, found " + std::to_string(rows) + "x" +
                                                 std::to_string(cols));
  if (s.layer_flops && s.step_seconds)
    throw InputError("--layer-flops", "layer flops", "give either --layer-flops or --step-seconds, not both");
  if (s.layer_flops && !(*s.layer_flops >= 0.0 && std::isfinite(*s.layer_flops)))
    throw InputError("--layer-flops", "layer flops", "expected a finite number >= 0");
  if (s.step_seconds && !(*s.step_seconds > 0.0 && std::isfinite(*s.step_seconds)))
    throw InputError("--step-seconds", "step seconds", "expected a finite number > 0");
  if (s.steps < 1) throw InputError("--steps", "steps", "expected an integer >= 1");
  if (s.warmup_steps < 0) throw InputError("--warmup-steps", "warmup steps", "expected an integer >= 0");
  if (s.staleness < 0) throw InputError("--staleness", "staleness", "expected an integer >= 0");
  if (s.lookahead < 0) throw InputError("--lookahead", "lookahead", "expected an integer >= 0");
  if (s.host_threads < 0) throw InputError("--host-threads", "host threads", "expected an integer >= 0 (0: all cores but one)");
  if (s.device_budget == 0) throw InputError("--device-budget", "device budget", "expected a size > 0");
  if (s.host_budget == 0) throw InputError("--host-budget", "host budget", "expected a size > 0");
  if (!(s.device_model.flops_per_second > 0.0))
    throw InputError("--device-tflops", "device model", "expected a rate > 0");
  if (!(s.device_model.bytes_per_second >= 0.0))
    throw InputError("--device-bandwidth", "device model", "expected a rate >= 0 (0: not modelled)");
  if (!(s.fake_host_flops > 0.0)) throw InputError("--fake-host-gflops", "host speed", "expected a rate > 0");
  if (s.gradients.rank < 1) throw InputError("--gradient-rank", "gradient rank", "expected an integer >= 1");
  if (!(s.gradients.noise >= 0.0)) throw InputError("--gradient-noise", "gradient noise", "expected a value >= 0");
  if (s.backend == SynthBackend::fake && s.nvme_dir)
    throw InputError("--nvme-dir", "nvme directory", "only the real backend writes NVMe files (the fake one keeps them in RAM)");
  if (s.backend == SynthBackend::real && !s.nvme_dir && s.placement == runtime::PlacementPolicy::nvme)
    throw InputError("--placement", "placement", "nvme placement on the real backend needs --nvme-dir DIR");
#if !ASTERIA_HAVE_NVME_STORE
  if (s.nvme_dir) throw InputError("--nvme-dir", "nvme directory", "this build has no NVMe tier (liburing was not found)");
#endif
}

runtime::SyntheticModelSpec model_spec(const SynthSettings& s) {
  runtime::SyntheticModelSpec spec;
  spec.gradients = s.gradients;
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
        throw InputError("--step-seconds", "step seconds",
                         "layer " + std::to_string(l) + " would get " + format("%.3g", share) +
                             " s, no more than two kernel launches (" + format("%.3g", 2.0 * latency) + " s)");
      forward_flops = (share - 2.0 * latency) * rate / 3.0;
    }
    spec.layers.push_back(runtime::make_layer("layer" + std::to_string(l), rows, cols, forward_flops, sizeof(float)));
  }
  runtime::validate(spec, "synthetic model");
  return spec;
}

struct SynthPlatform::Nvme {
#if ASTERIA_HAVE_NVME_STORE
  Nvme(const std::filesystem::path& dir, std::size_t budget)
      : store(dir, [budget] {
          real::NvmeOptions o;
          o.capacity_bytes = budget;
          return o;
        }()),
        tier(store) {}
  real::NvmeStore store;
  real::NvmeStoreTier<real::NvmeStore> tier;
#endif
};

SynthPlatform::SynthPlatform(const SynthSettings& s) {
  const real::DeviceModel model = s.device_model;
  std::string device = "emulated device kernels (" + format("%.4g", model.flops_per_second / 1e12) +
                             " TFLOP/s, " + format("%.4g", model.bytes_per_second / 1e12) + " TB/s, " +
                             format("%.3g", model.launch_latency * 1e6) + " us per launch)";
  if (s.backend == SynthBackend::fake) {
    platform::fake::FakeOptions o;
    o.device_capacity = s.device_budget;
    o.host_capacity = s.host_budget;
    o.nvme_capacity = s.nvme_budget;
    host_threads_ = s.host_threads > 0 ? s.host_threads : 1;  // deterministic whatever the machine
    o.host_workers = host_threads_;
    o.device_duration = [model](const platform::Work& w) { return model.duration(w.cost); };
    const double host_rate = s.fake_host_flops;
    o.host_duration = [host_rate](const platform::Work& w) { return w.cost.flops / host_rate; };
    platform_ = std::make_unique<platform::fake::FakePlatform>(std::move(o));
    description_ = "fake backend (modelled time): " + device + ", " + std::to_string(host_threads_) +
                   " host worker(s) at " + format("%.4g", host_rate / 1e9) + " GFLOP/s, instant copies";
    return;
  }
  real::RealPlatformOptions o;
  o.memory.budgets.device = s.device_budget;
  o.memory.budgets.host = s.host_budget;
  o.memory.budgets.nvme = s.nvme_budget;
  host_threads_ = s.host_threads > 0 ? s.host_threads : real::default_host_threads();
  o.host_threads = host_threads_;
  o.device_mode = s.device_mode;
  o.device_model = model;
  o.gpu = real::GpuUse::never;
  o.record_trace = s.record_trace;
  std::string nvme = "no NVMe tier";
#if ASTERIA_HAVE_NVME_STORE
  if (s.nvme_dir) {
    nvme_ = std::make_unique<Nvme>(*s.nvme_dir, s.nvme_budget);
    o.nvme = &nvme_->tier;
    nvme = "NVMe tier in " + s.nvme_dir->string() + " (" + nvme_->store.mechanism() + ")";
  }
#endif
  auto real_platform = std::make_unique<real::RealPlatform>(o);
  if (s.record_trace) work_log_ = &real_platform->trace();
  platform_ = std::move(real_platform);
  if (s.device_mode == real::DeviceMode::cpu) device = "device stream on a CPU thread (no emulated kernel time)";
  description_ = "real backend (wall clock): " + device + ", " + std::to_string(host_threads_) +
                 " host worker thread(s), device tier in host RAM, " + nvme;
}

SynthPlatform::~SynthPlatform() { platform_.reset(); }  // before the NVMe store it uses

}  // namespace asteria::cli

#include "core/run/run_config.hpp"

namespace asteria::run {

std::string_view to_string(RunVerb verb) noexcept {
  switch (verb) {
    case RunVerb::synth: return "synth";
    case RunVerb::sim: return "sim";
    case RunVerb::train: return "train";
  }
  return "sim";
}

optim::Hyperparameters verb_hyperparameters(RunVerb verb, optim::OptimizerKind optimizer,
                                            optim::HyperparameterPreset preset) {
  if (preset != optim::HyperparameterPreset::asteria) return optim::preset_hyperparameters(optimizer, preset, "--preset");
  optim::Hyperparameters hp = optim::default_hyperparameters(optimizer);
  if (verb != RunVerb::train) hp.precondition_frequency = 10;  // the runtime's setting of interest
  if (verb == RunVerb::sim) hp.max_precond_dim = 2048;
  return hp;
}

RunConfig default_run_config(RunVerb verb) {
  RunConfig s;
  s.verb = verb;
  switch (verb) {
    case RunVerb::synth:
      s.optimizer = optim::OptimizerKind::shampoo;
      s.numerics = platform::Numerics::refresh;
      s.time = platform::TimeSource::modelled;
      s.steps = 40;
      break;
    case RunVerb::sim:
      s.hw = "gh200";
      s.model = "tiny";
      s.numerics = platform::Numerics::shapes;
      s.time = platform::TimeSource::simulated;
      s.steps = 30;
      break;
    case RunVerb::train:
      s.model = "gpt-mini";
      s.numerics = platform::Numerics::values;
      s.time = platform::TimeSource::measured;
      s.steps = 200;
      s.warmup_steps = 0;  // every training step counts
      s.host_workers = 1;  // the model's GEMMs use the other cores
      s.device_budget = std::size_t{8} << 30;
      s.host_budget = std::size_t{16} << 30;
      break;
  }
  s.hp = verb_hyperparameters(verb, s.optimizer);
  return s;
}

}  // namespace asteria::run

#include "core/optim/hyperparameters.hpp"

#include <cmath>

#include "core/common/error.hpp"

namespace asteria::optim {

OptimizerKind parse_optimizer_kind(std::string_view name, const std::string& source) {
  if (name == "adamw") return OptimizerKind::adamw;
  if (name == "shampoo") return OptimizerKind::shampoo;
  if (name == "soap") return OptimizerKind::soap;
  if (name == "kl-shampoo" || name == "kl_shampoo") return OptimizerKind::kl_shampoo;
  if (name == "muon") return OptimizerKind::muon;
  throw InputError(source, "optimizer",
                   "expected one of adamw, shampoo, soap, kl-shampoo, muon; found '" + std::string(name) + "'");
}

std::string_view to_string(OptimizerKind kind) noexcept {
  switch (kind) {
    case OptimizerKind::adamw: return "adamw";
    case OptimizerKind::shampoo: return "shampoo";
    case OptimizerKind::soap: return "soap";
    case OptimizerKind::kl_shampoo: return "kl-shampoo";
    case OptimizerKind::muon: return "muon";
  }
  return "unknown";
}

Hyperparameters default_hyperparameters(OptimizerKind kind) {
  Hyperparameters hp;
  switch (kind) {
    case OptimizerKind::adamw:  // PyTorch AdamW defaults
      hp.lr = 1e-3, hp.beta1 = 0.9, hp.beta2 = 0.999, hp.eps = 1e-8, hp.weight_decay = 0.01;
      break;
    case OptimizerKind::shampoo:  // DS defaults: AdaGrad-style sums (beta2 = 1), Adam grafting
      hp.lr = 1e-2, hp.beta1 = 0.9, hp.beta2 = 1.0, hp.eps = 1e-12, hp.weight_decay = 0.0;
      hp.precondition_frequency = 1, hp.max_precond_dim = 1024, hp.start_preconditioning_step = -1;
      break;
    case OptimizerKind::soap:
      hp.lr = 3e-3, hp.beta1 = 0.95, hp.beta2 = 0.95, hp.eps = 1e-8, hp.weight_decay = 0.01;
      hp.precondition_frequency = 10, hp.max_precond_dim = 1024;
      break;
    case OptimizerKind::kl_shampoo:
      hp.lr = 1e-4, hp.beta1 = 0.9, hp.beta2 = 0.98, hp.eps = 1e-8, hp.weight_decay = 0.01;
      hp.precondition_frequency = 10, hp.max_precond_dim = 1024;
      break;
    case OptimizerKind::muon:
      hp.lr = 0.02, hp.beta1 = 0.95, hp.weight_decay = 0.0;
      break;
  }
  return hp;
}

std::string_view to_string(HyperparameterPreset preset) noexcept {
  return preset == HyperparameterPreset::distributed_shampoo ? "distributed-shampoo" : "asteria";
}

Hyperparameters preset_hyperparameters(OptimizerKind kind, HyperparameterPreset preset, const std::string& option) {
  Hyperparameters hp = default_hyperparameters(kind);
  if (preset == HyperparameterPreset::asteria) return hp;
  if (kind != OptimizerKind::shampoo)
    throw InputError("command line", option,
                     "distributed-shampoo sets Shampoo's hyperparameters: expected --optimizer shampoo, found " +
                         std::string(to_string(kind)));
  // DistributedShampoo.__init__: lr, betas, epsilon, weight decay, max_preconditioner_dim,
  // precondition_frequency and start_preconditioning_step are Asteria's Shampoo defaults already.
  hp.grafting = false;              // grafting_config=None
  hp.precondition_vectors = true;   // DistributedConfig.target_parameter_dimensionality = 1
  hp.merge_small_dims = true;       // merge_small_dims(threshold=max_preconditioner_dim)
  return hp;
}

void validate(const Hyperparameters& hp, const std::string& source) {
  auto require = [&](bool ok, const char* field, const char* expectation) {
    if (!ok) throw InputError(source, field, expectation);
  };
  require(std::isfinite(hp.lr) && hp.lr >= 0.0, "lr", "expected a finite value >= 0");
  require(hp.beta1 >= 0.0 && hp.beta1 < 1.0, "beta1", "expected a value in [0, 1)");
  require(hp.beta2 >= 0.0 && hp.beta2 <= 1.0, "beta2", "expected a value in [0, 1]");
  require(std::isfinite(hp.eps) && hp.eps >= 0.0, "eps", "expected a finite value >= 0");
  require(std::isfinite(hp.weight_decay) && hp.weight_decay >= 0.0, "weight_decay", "expected a finite value >= 0");
  require(hp.precondition_frequency >= 1, "precondition_frequency", "expected an integer >= 1");
  require(hp.max_precond_dim >= 1, "max_precond_dim", "expected an integer >= 1");
  require(hp.shampoo_beta < 0.0 || hp.shampoo_beta <= 1.0, "shampoo_beta", "expected a value in [0, 1], or < 0 for beta2");
  require(hp.start_preconditioning_step == -1 || hp.start_preconditioning_step >= 1, "start_preconditioning_step",
          "expected an integer >= 1, or -1 for precondition_frequency");
  require(std::isfinite(hp.exponent_override) && hp.exponent_override >= 0.0, "exponent_override",
          "expected 0 (none) or a positive root order");
  require(hp.graft_beta2 > 0.0 && hp.graft_beta2 <= 1.0, "graft_beta2", "expected a value in (0, 1]");
  require(std::isfinite(hp.graft_eps) && hp.graft_eps >= 0.0, "graft_eps", "expected a finite value >= 0");
  require(std::isfinite(hp.kl_init_eigenvalue) && hp.kl_init_eigenvalue > 0.0, "kl_init_eigenvalue",
          "expected a finite value > 0");
  require(std::isfinite(hp.kl_max_clamp_value) && hp.kl_max_clamp_value >= 0.0, "kl_max_clamp_value",
          "expected a finite value >= 0 (0: no clamping)");
  require(hp.newton_schulz_steps >= 1, "newton_schulz_steps", "expected an integer >= 1");
  require(hp.max_consecutive_refresh_failures >= 0, "max_consecutive_refresh_failures", "expected an integer >= 0");
  require(hp.max_consecutive_non_finite >= 0, "max_consecutive_non_finite", "expected an integer >= 0");
}

}  // namespace asteria::optim

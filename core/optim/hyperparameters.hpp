#pragma once
// Hyperparameters of every optimizer in one struct, with per-optimizer defaults from
// ALGORITHMS.md (DS = facebookresearch/optimizers distributed_shampoo, SOAP = nikhilvyas/SOAP,
// KL = yorkerlin/KL-Methods, Muon = KellerJordan/Muon).
#include <optional>
#include <string>
#include <string_view>

#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::optim {

enum class OptimizerKind { adamw, shampoo, soap, kl_shampoo, muon };

// "adamw", "shampoo", "soap", "kl-shampoo" (or "kl_shampoo"), "muon"; throws InputError otherwise.
OptimizerKind parse_optimizer_kind(std::string_view name, const std::string& source = "--optimizer");
std::string_view to_string(OptimizerKind kind) noexcept;

enum class RootMethod { eigen, coupled_newton };

// What SOAP does with its second moment v when a new eigenbasis is installed.
enum class SecondMomentOnRefresh {
  permute,  // nikhilvyas/SOAP: v's rows and columns follow the sorted eigenvalue estimates
  rotate,   // v ← (C_L∘C_L) v (C_R∘C_R)ᵀ, C = Q_newᵀ Q_old: v's mass follows the rotation, as m's
            // does, so a coordinate whose v is ~0 cannot receive rotated momentum (m/ε steps)
};

// What happens to a block whose gradient holds NaN or Inf.
enum class NonFinitePolicy {
  skip,   // the block is left untouched this step (statistics, moments, weights) and counted
  error,  // throw asteria::NumericalError naming the block
};

struct Hyperparameters {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;

  // Matrix methods.
  int precondition_frequency = 1;
  linalg::index max_precond_dim = 1024;
  double shampoo_beta = -1.0;  // < 0: use beta2 (SOAP, KL-Shampoo)

  // Shampoo.
  // First step whose update may use Shampoo roots (DS semantics): roots are computed at this
  // step and then at every later multiple of precondition_frequency; earlier steps use the graft
  // direction alone. -1 (DS default): equal to precondition_frequency.
  int start_preconditioning_step = -1;
  double exponent_override = 0.0;  // > 0: root -1/exponent_override on every side
  bool grafting = true;            // Adam grafting
  double graft_beta2 = 0.999;
  double graft_eps = 1e-10;
  RootMethod root_method = RootMethod::eigen;
  // Vectors (norm gains, biases: tensors with one dimension) preconditioned by one-sided Shampoo,
  // a single n x n factor and root −1/2 (−1/(2·order)), as Distributed Shampoo does; false: AdamW
  // with the graft's β2 and ε.
  bool precondition_vectors = false;
  // Before blocking, dimensions of size 1 are dropped and a tensor of at most max_precond_dim
  // values becomes one vector (Distributed Shampoo's merge_small_dims with target order 1: a
  // 24 x 32 matrix is one 768-vector), so precondition_vectors decides how it is optimized.
  bool merge_small_dims = false;
  // Set by plan_blocks on the blocks of a vector under precondition_vectors, never by the user:
  // the block (1 x n) keeps only its right factor.
  bool vector_block = false;

  // Muon.
  int newton_schulz_steps = 5;
  bool nesterov = true;
  double aux_adamw_lr = 3e-4;  // AdamW for Muon's vectors (KellerJordan/Muon's auxiliary Adam)

  // SOAP and KL-Shampoo: how the warm basis refresh orthogonalizes F·Q (both references use a
  // Householder QR; shifted Cholesky QR is cheaper on GPUs).
  linalg::Orthogonalization basis_orthogonalization = linalg::Orthogonalization::householder;
  SecondMomentOnRefresh soap_second_moment = SecondMomentOnRefresh::permute;
  // SOAP before its first eigenbasis is installed (a runtime with staleness S > 0 installs it S
  // steps late): false makes no update, as the reference's initialising step; true runs plain
  // Adam in the identity basis at SOAP's learning rate, which measured worse (+0.18 nats at
  // S = 5 on gpt-mini, experiments/convergence).
  bool soap_adam_before_first_basis = false;

  // KL-Shampoo (yorkerlin/KL-Methods): eigenvalue estimates start at kl_init_eigenvalue; the
  // stored λ^(-1/2) is clamped to <= max(10, min(d, kl_max_clamp_value)) (0: no clamping).
  double kl_init_eigenvalue = 0.1;
  double kl_max_clamp_value = 4000.0;

  // Robustness (DS tolerates 3 consecutive failed refreshes).
  int max_consecutive_refresh_failures = 3;
  NonFinitePolicy non_finite = NonFinitePolicy::skip;
  int max_consecutive_non_finite = 10;  // under `skip`: more in a row for one block is an error

  double effective_shampoo_beta() const { return shampoo_beta < 0.0 ? beta2 : shampoo_beta; }
  int effective_start_preconditioning_step() const {
    return start_preconditioning_step < 0 ? precondition_frequency : start_preconditioning_step;
  }
};

Hyperparameters default_hyperparameters(OptimizerKind kind);

// Named sets of defaults. asteria: default_hyperparameters. distributed_shampoo (Shampoo only):
// the constructor defaults of Distributed Shampoo (facebookresearch/optimizers,
// DistributedShampoo.__init__ and DefaultShampooConfig): no grafting, one-sided Shampoo on
// vectors, small dimensions merged, refresh every step, blocks of 1024 — its trajectories.
enum class HyperparameterPreset { asteria, distributed_shampoo };
std::string_view to_string(HyperparameterPreset preset) noexcept;  // "asteria", "distributed-shampoo"
// The preset's values for `kind`; InputError naming the command line's `option` when the preset
// is not `kind`'s.
Hyperparameters preset_hyperparameters(OptimizerKind kind, HyperparameterPreset preset, const std::string& option);

// Throws InputError naming `source` and the field when a value is out of its domain.
void validate(const Hyperparameters& hp, const std::string& source);

}  // namespace asteria::optim

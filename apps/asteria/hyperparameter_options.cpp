#include "apps/asteria/hyperparameter_options.hpp"

#include <array>
#include <cstdio>

#include "core/common/error.hpp"

namespace asteria::cli {
namespace {

template <class T>
void set_if_given(const po::variables_map& values, const char* name, T& field) {
  if (values.count(name) != 0) field = values[name].as<T>();
}

}  // namespace

po::options_description hyperparameter_options() {
  po::options_description o("Hyperparameters (unset: the optimizer's default, see the table below)");
  o.add_options()
      ("lr", po::value<double>(), "learning rate")
      ("beta1", po::value<double>(), "first-moment (momentum) decay, in [0, 1)")
      ("beta2", po::value<double>(), "second-moment / statistics decay, in [0, 1] (Shampoo: 1 = AdaGrad sums)")
      ("eps", po::value<double>(), "epsilon (Adam denominator; Shampoo: added to the factors before the root)")
      ("weight-decay", po::value<double>(), "decoupled weight decay")
      ("precondition-frequency", po::value<int>(), "steps between preconditioner refreshes (>= 1)")
      ("max-precond-dim", po::value<linalg::index>(), "largest block side; larger dimensions are split")
      ("shampoo-beta", po::value<double>(), "SOAP / KL-Shampoo statistics decay (< 0: use beta2)")
      ("start-preconditioning-step", po::value<int>(),
       "Shampoo: first step that uses the roots; before it the graft direction alone (-1: precondition-frequency)")
      ("exponent-override", po::value<double>(), "Shampoo: root order p on every side, X^(-1/p) (0: 2 x tensor order)")
      ("root-method", po::value<std::string>(), "Shampoo inverse root: eigen | coupled-newton")
      ("grafting", po::value<bool>(), "Shampoo: Adam grafting, true | false")
      ("graft-beta2", po::value<double>(), "Shampoo: second-moment decay of the Adam graft")
      ("graft-eps", po::value<double>(), "Shampoo: epsilon of the Adam graft")
      ("soap-second-moment", po::value<std::string>(),
       "SOAP: the second moment at a new eigenbasis, permute (the reference's) | rotate (with the momentum)")
      ("soap-adam-before-first-basis", po::value<bool>(),
       "SOAP: plain Adam while the first eigenbasis is pending (S > 0), true | false (default: no update)")
      ("newton-schulz-steps", po::value<int>(), "Muon: Newton-Schulz iterations")
      ("nesterov", po::value<bool>(), "Muon: Nesterov momentum, true | false")
      ("aux-adamw-lr", po::value<double>(), "Muon: learning rate of the AdamW used for tensors of order <= 1")
      ("non-finite-policy", po::value<std::string>(),
       "a block whose gradient holds NaN/Inf: skip (left untouched, counted) | error (stop)")
      ("max-consecutive-non-finite", po::value<int>(), "under skip: more in a row for one block is an error")
      ("max-consecutive-refresh-failures", po::value<int>(),
       "failed preconditioner refreshes tolerated in a row per block (the previous one is kept)");
  return o;
}

void apply_hyperparameter_options(const po::variables_map& values, optim::Hyperparameters& hp) {
  set_if_given(values, "lr", hp.lr);
  set_if_given(values, "beta1", hp.beta1);
  set_if_given(values, "beta2", hp.beta2);
  set_if_given(values, "eps", hp.eps);
  set_if_given(values, "weight-decay", hp.weight_decay);
  set_if_given(values, "precondition-frequency", hp.precondition_frequency);
  set_if_given(values, "max-precond-dim", hp.max_precond_dim);
  set_if_given(values, "shampoo-beta", hp.shampoo_beta);
  set_if_given(values, "start-preconditioning-step", hp.start_preconditioning_step);
  set_if_given(values, "exponent-override", hp.exponent_override);
  set_if_given(values, "grafting", hp.grafting);
  set_if_given(values, "graft-beta2", hp.graft_beta2);
  set_if_given(values, "graft-eps", hp.graft_eps);
  set_if_given(values, "newton-schulz-steps", hp.newton_schulz_steps);
  set_if_given(values, "soap-adam-before-first-basis", hp.soap_adam_before_first_basis);
  set_if_given(values, "nesterov", hp.nesterov);
  set_if_given(values, "aux-adamw-lr", hp.aux_adamw_lr);
  set_if_given(values, "max-consecutive-non-finite", hp.max_consecutive_non_finite);
  set_if_given(values, "max-consecutive-refresh-failures", hp.max_consecutive_refresh_failures);
  if (values.count("root-method") != 0) {
    const auto& name = values["root-method"].as<std::string>();
    if (name == "eigen") hp.root_method = optim::RootMethod::eigen;
    else if (name == "coupled-newton") hp.root_method = optim::RootMethod::coupled_newton;
    else throw InputError("--root-method", "root_method", "expected eigen or coupled-newton, found '" + name + "'");
  }
  if (values.count("soap-second-moment") != 0) {
    const auto& name = values["soap-second-moment"].as<std::string>();
    if (name == "permute") hp.soap_second_moment = optim::SecondMomentOnRefresh::permute;
    else if (name == "rotate") hp.soap_second_moment = optim::SecondMomentOnRefresh::rotate;
    else
      throw InputError("--soap-second-moment", "soap_second_moment", "expected permute or rotate, found '" + name + "'");
  }
  if (values.count("non-finite-policy") != 0) {
    const auto& name = values["non-finite-policy"].as<std::string>();
    if (name == "skip") hp.non_finite = optim::NonFinitePolicy::skip;
    else if (name == "error") hp.non_finite = optim::NonFinitePolicy::error;
    else throw InputError("--non-finite-policy", "non_finite", "expected skip or error, found '" + name + "'");
  }
}

std::string hyperparameter_defaults_table() {
  std::string table = "Defaults by optimizer:\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-11s %-8s %-6s %-6s %-7s %-13s %-23s %s\n", "optimizer", "lr", "beta1", "beta2",
                "eps", "weight-decay", "precondition-frequency", "max-precond-dim");
  table += line;
  constexpr std::array kinds = {optim::OptimizerKind::adamw, optim::OptimizerKind::shampoo, optim::OptimizerKind::soap,
                                optim::OptimizerKind::kl_shampoo, optim::OptimizerKind::muon};
  for (optim::OptimizerKind kind : kinds) {
    const optim::Hyperparameters hp = optim::default_hyperparameters(kind);
    std::snprintf(line, sizeof line, "  %-11s %-8g %-6g %-6g %-7g %-13g %-23d %td\n",
                  std::string(optim::to_string(kind)).c_str(), hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay,
                  hp.precondition_frequency, hp.max_precond_dim);
    table += line;
  }
  return table;
}

}  // namespace asteria::cli

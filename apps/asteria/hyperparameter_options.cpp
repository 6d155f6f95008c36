#include "apps/asteria/hyperparameter_options.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <ostream>

#include "core/common/error.hpp"

namespace asteria::cli {
namespace {

template <class T>
void set_if_given(const po::variables_map& values, const char* name, T& field) {
  if (values.count(name) != 0) field = values[name].as<T>();
}

using optim::OptimizerKind;
constexpr std::array kAllKinds = {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap,
                                  OptimizerKind::kl_shampoo, OptimizerKind::muon};

// Which optimizers read each option, from their code (core/optim): Muon's matrices keep no second
// moment and its vectors run AdamW with fixed betas and eps (vector_fallback_hyperparameters);
// AdamW and Muon keep matrices whole and never refresh; shampoo-beta is SOAP's and
// KL-Shampoo's statistics decay (Shampoo's is beta2).
using Kinds = std::uint8_t;  // bit k: OptimizerKind k
constexpr Kinds bit(OptimizerKind kind) { return static_cast<Kinds>(1u << static_cast<unsigned>(kind)); }
constexpr Kinds kEvery = bit(OptimizerKind::adamw) | bit(OptimizerKind::shampoo) | bit(OptimizerKind::soap) |
                         bit(OptimizerKind::kl_shampoo) | bit(OptimizerKind::muon);
constexpr Kinds kMatrixMethods =
    bit(OptimizerKind::shampoo) | bit(OptimizerKind::soap) | bit(OptimizerKind::kl_shampoo);
constexpr Kinds kSecondMoment = kMatrixMethods | bit(OptimizerKind::adamw);

struct OptionReaders {
  std::string_view option;
  Kinds kinds;
};

constexpr std::array kReaders = {
    OptionReaders{"lr", kEvery},
    OptionReaders{"beta1", kEvery},
    OptionReaders{"beta2", kSecondMoment},
    OptionReaders{"eps", kSecondMoment},
    OptionReaders{"weight-decay", kEvery},
    OptionReaders{"precondition-frequency", kMatrixMethods},
    OptionReaders{"max-precond-dim", kMatrixMethods},
    OptionReaders{"shampoo-beta", bit(OptimizerKind::soap) | bit(OptimizerKind::kl_shampoo)},
    OptionReaders{"start-preconditioning-step", bit(OptimizerKind::shampoo)},
    OptionReaders{"exponent-override", bit(OptimizerKind::shampoo)},
    OptionReaders{"root-method", bit(OptimizerKind::shampoo)},
    OptionReaders{"grafting", bit(OptimizerKind::shampoo)},
    OptionReaders{"graft-beta2", bit(OptimizerKind::shampoo)},
    OptionReaders{"graft-eps", bit(OptimizerKind::shampoo)},
    OptionReaders{"soap-second-moment", bit(OptimizerKind::soap)},
    OptionReaders{"soap-adam-before-first-basis", bit(OptimizerKind::soap)},
    OptionReaders{"newton-schulz-steps", bit(OptimizerKind::muon)},
    OptionReaders{"nesterov", bit(OptimizerKind::muon)},
    OptionReaders{"aux-adamw-lr", bit(OptimizerKind::muon)},
    OptionReaders{"non-finite-policy", kEvery},
    OptionReaders{"max-consecutive-non-finite", kEvery},
    OptionReaders{"max-consecutive-refresh-failures", kMatrixMethods},
};

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

std::vector<OptimizerKind> optimizers_reading(std::string_view option) {
  std::vector<OptimizerKind> kinds;
  for (const OptionReaders& r : kReaders)
    if (r.option == option)
      for (OptimizerKind kind : kAllKinds)
        if ((r.kinds & bit(kind)) != 0) kinds.push_back(kind);
  return kinds;
}

std::vector<std::string> ignored_hyperparameters(const po::variables_map& values, OptimizerKind kind) {
  std::vector<std::string> ignored;
  for (const OptionReaders& r : kReaders) {
    const std::string name(r.option);
    if (values.count(name) != 0 && !values[name].defaulted() && (r.kinds & bit(kind)) == 0) ignored.push_back(name);
  }
  return ignored;
}

void warn_ignored_hyperparameters(std::string_view verb, const po::variables_map& values, std::ostream& err) {
  if (values.count("optimizer") == 0 || values.count("compare") != 0) return;
  // Left at its default, --optimizer gives way to a plan file's (run_spec.cpp) or, in a replay,
  // to the recorded run's: the optimizer is not known here.
  if (values["optimizer"].defaulted() && (values.count("placement-file") != 0 || verb == "replay")) return;
  OptimizerKind kind{};
  try {
    kind = optim::parse_optimizer_kind(values["optimizer"].as<std::string>());
  } catch (const InputError&) {
    return;  // the verb reports the bad name
  }
  for (const std::string& option : ignored_hyperparameters(values, kind)) {
    std::string readers;
    for (OptimizerKind reader : optimizers_reading(option))
      readers += (readers.empty() ? "" : ", ") + std::string(optim::to_string(reader));
    err << "asteria " << verb << ": warning: --" << option << " is ignored by --optimizer "
        << optim::to_string(kind) << " (read by " << readers << ")\n";
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

#include "apps/asteria/hyperparameter_options.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <utility>
#include <vector>

#include "apps/asteria/setting_options.hpp"
#include "core/common/error.hpp"
#include "core/run/run_schema.hpp"
#include "core/run/settings_list.hpp"

namespace asteria::cli {
namespace {

using optim::OptimizerKind;
constexpr std::array kAllKinds = {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap,
                                  OptimizerKind::kl_shampoo, OptimizerKind::muon};

// The hyperparameters' names and readers, in the schema's order.
std::vector<std::pair<std::string, std::uint8_t>> readers() {
  std::vector<std::pair<std::string, std::uint8_t>> list;
  for (const run::Setting& s : run::all_settings())
    if (s.optimizers != 0xff) list.emplace_back(std::string(s.name), s.optimizers);
  return list;
}

}  // namespace

po::options_description hyperparameter_options() {
  po::options_description o("Hyperparameters (unset: the optimizer's default, see the table below)");
  optim::Hyperparameters hp;
  OptionsBuilder builder(o, std::nullopt, /*show_defaults=*/false);
  run::describe(builder, hp);
  return o;
}

void apply_hyperparameter_options(const po::variables_map& values, optim::Hyperparameters& hp) {
  OptionsReader reader(values, std::nullopt);
  run::describe(reader, hp);
}

std::vector<OptimizerKind> optimizers_reading(std::string_view option) {
  std::vector<OptimizerKind> kinds;
  for (const auto& [name, bits] : readers())
    if (name == option)
      for (OptimizerKind kind : kAllKinds)
        if ((bits & run::optimizers::of(kind)) != 0) kinds.push_back(kind);
  return kinds;
}

std::vector<std::string> ignored_hyperparameters(const po::variables_map& values, OptimizerKind kind) {
  std::vector<std::string> ignored;
  for (const auto& [name, bits] : readers())
    if (values.count(name) != 0 && !values[name].defaulted() && (bits & run::optimizers::of(kind)) == 0)
      ignored.push_back(name);
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

// asteria compare: every optimizer, with its defaults, on the ill-conditioned comparison problem.
#include <ostream>
#include <sstream>
#include <string>

#include "apps/asteria/comparison.hpp"
#include "apps/asteria/options.hpp"
#include "core/run/option_values.hpp"
#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#include "core/real/blas_kernel_choice.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Runs every optimizer with its default hyperparameters for a fixed step budget on a deterministic,\n"
    "ill-conditioned matrix regression with Kronecker structure,\n"
    "  loss(W) = 1/2 |X W Z - Y|_F^2 / N,  W 32x16, X 64x32, Z 16x32, cond(X) = cond(Z) = 1e3,\n"
    "with full-batch gradients from W = 0 (exact optimum known), and prints, per optimizer, the steps\n"
    "to reach the target (excess loss <= target-ratio x initial excess loss) or \"not reached\", the\n"
    "final loss and the wall time (optimizer steps and gradient evaluations). Optimizers not built in\n"
    "are listed as unavailable.";

constexpr std::string_view kDetails =
    "Files written with --out DIR:\n"
    "  table.csv     one row per optimizer (steps_to_target empty when not reached)\n"
    "  table.md      the table in Markdown\n"
    "  steps.csv     step,optimizer,loss (step 0 = the starting point)\n"
    "  summary.json  problem, settings, and per optimizer its hyperparameters, outcome and results\n";

std::vector<optim::OptimizerKind> parse_optimizer_list(const std::string& list) {
  std::vector<optim::OptimizerKind> kinds;
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) kinds.push_back(optim::parse_optimizer_kind(name, "--optimizers"));
  if (kinds.empty()) throw InputError("--optimizers", "optimizers", "expected a comma-separated list of optimizers");
  return kinds;
}

}  // namespace

int compare_main(const Args& args, std::ostream& out, std::ostream& err) {
  const ComparisonSettings defaults;
  po::options_description options("Options");
  options.add_options()
      ("steps", po::value<std::int64_t>()->default_value(defaults.steps)->value_name("N"), "step budget per optimizer")
      ("target-ratio", po::value<double>()->default_value(defaults.target_ratio, "1e-3")->value_name("R"),
       "target: excess loss <= R x initial excess loss, R in (0, 1)")
      ("seed", po::value<std::string>()->default_value(std::to_string(defaults.problem.seed))->value_name("S"),
       "seed of the problem's generator")
      ("dtype", po::value<std::string>()->default_value("float32")->value_name("float32|float64"),
       "dtype of the weights and of the optimizers' arithmetic")
      ("optimizers", po::value<std::string>()->default_value("adamw,shampoo,soap,kl-shampoo,muon")->value_name("LIST"),
       "comma-separated optimizers to run")
      ("out", po::value<std::string>()->value_name("DIR"), "write table.csv, table.md, steps.csv, summary.json here")
      ("overwrite", "replace the results of an earlier run in --out (refused otherwise)");
  int exit_code = 0;
  const auto values = parse_verb_options({"compare", "[options]", kAbout, kDetails}, options, args, out, err, exit_code);
  if (!values) return exit_code;
  real::require_cpu_blas_kernels("asteria compare");

  ComparisonSettings settings;
  settings.steps = (*values)["steps"].as<std::int64_t>();
  settings.target_ratio = (*values)["target-ratio"].as<double>();
  settings.problem.seed = run::parse_seed((*values)["seed"].as<std::string>(), "--seed");
  settings.optimizers = parse_optimizer_list((*values)["optimizers"].as<std::string>());
  const auto dtype = (*values)["dtype"].as<std::string>();
  if (dtype != "float32" && dtype != "float64")
    throw InputError("--dtype", "dtype", "expected float32 or float64, found '" + dtype + "'");
  settings.dtype = dtype == "float32" ? io::DType::float32 : io::DType::float64;
  if (settings.steps < 1) throw InputError("--steps", "steps", "expected an integer >= 1");
  if (!(settings.target_ratio > 0.0 && settings.target_ratio < 1.0))
    throw InputError("--target-ratio", "target_ratio", "expected a value in (0, 1)");

  if (values->count("out") != 0)
    prepare_output((*values)["out"].as<std::string>(), values->count("overwrite") != 0, "compare");
  const ComparisonResult result = run_comparison(settings, err);
  print_comparison(result, out);
  if (values->count("out") != 0) {
    write_comparison(result, (*values)["out"].as<std::string>());
    out << "wrote table.csv, table.md, steps.csv, summary.json to " << (*values)["out"].as<std::string>() << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

#pragma once
// Command-line options for optimizer hyperparameters. None has a default on the command line:
// an option that is not given keeps the optimizer's own default (default_hyperparameters).
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "apps/asteria/options.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::cli {

po::options_description hyperparameter_options();

// Overrides the fields of `hp` whose options were given. Throws InputError naming the option
// for a malformed enumerated value (--root-method, --non-finite-policy).
void apply_hyperparameter_options(const po::variables_map& values, optim::Hyperparameters& hp);

// A table of the main defaults of every optimizer, for --help.
std::string hyperparameter_defaults_table();

// The optimizers that read the hyperparameter option `option` ("newton-schulz-steps", without
// dashes); empty for a name that is not a hyperparameter option.
std::vector<optim::OptimizerKind> optimizers_reading(std::string_view option);

// The hyperparameter options given on the command line (not defaults) that `kind` ignores, in
// the order hyperparameter_options() lists them.
std::vector<std::string> ignored_hyperparameters(const po::variables_map& values, optim::OptimizerKind kind);

// Warns on `err`, one line per option, of hyperparameter options given that the run's --optimizer
// ignores ("asteria VERB: warning: --newton-schulz-steps is ignored by --optimizer soap (read by
// muon)"). Silent when `values` has no valid --optimizer, when the optimizer comes from elsewhere
// (a --placement-file, a replayed run) and for synth --compare (several optimizers run).
void warn_ignored_hyperparameters(std::string_view verb, const po::variables_map& values, std::ostream& err);

}  // namespace asteria::cli

#pragma once
// Command-line options for optimizer hyperparameters. None has a default on the command line:
// an option that is not given keeps the optimizer's own default (default_hyperparameters).
#include <string>

#include "apps/asteria/options.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::cli {

po::options_description hyperparameter_options();

// Overrides the fields of `hp` whose options were given. Throws InputError naming the option
// for a malformed enumerated value (--root-method, --non-finite-policy).
void apply_hyperparameter_options(const po::variables_map& values, optim::Hyperparameters& hp);

// A table of the main defaults of every optimizer, for --help.
std::string hyperparameter_defaults_table();

}  // namespace asteria::cli

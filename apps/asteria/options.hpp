#pragma once
// Option parsing shared by the verbs: Boost.Program_options with --help, usage errors
// reported on `err` with exit code 2 (never by exiting the process).
// GCC 12 reports a false -Wnull-dereference inside Boost's typed_value<std::string>::notify.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/program_options.hpp>
#pragma GCC diagnostic pop
#include <iosfwd>
#include <optional>
#include <string_view>

#include "apps/asteria/verbs.hpp"

namespace asteria::cli {

namespace po = boost::program_options;

struct VerbHelp {
  std::string_view verb;      // "optim"
  std::string_view synopsis;  // "--optimizer NAME --params P.npy ... [options]"
  std::string_view about;     // what the verb does, printed before the options
  std::string_view details;   // printed after the options (may be empty)
};

// Parses `args`. Adds --help/-h to `options`. Returns the values, or nothing when the verb
// should return `exit_code` right away: 0 after printing help on `out`, 2 after a usage error
// (unknown option, missing required option, malformed value) printed on `err`. Hyperparameter
// options given that the chosen --optimizer ignores are warned about on `err`
// (warn_ignored_hyperparameters).
std::optional<po::variables_map> parse_verb_options(const VerbHelp& help, po::options_description options,
                                                    const Args& args, std::ostream& out, std::ostream& err,
                                                    int& exit_code);

}  // namespace asteria::cli

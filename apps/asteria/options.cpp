#include "apps/asteria/options.hpp"

#include <ostream>

#include "apps/asteria/hyperparameter_options.hpp"

namespace asteria::cli {

std::optional<po::variables_map> parse_verb_options(const VerbHelp& help, po::options_description options,
                                                    const Args& args, std::ostream& out, std::ostream& err,
                                                    int& exit_code) {
  options.add_options()("help,h", "print this help and exit");
  auto usage_error = [&](const std::string& message) {
    err << "asteria " << help.verb << ": " << message << "\n(see asteria " << help.verb << " --help)\n";
    exit_code = 2;
    return std::nullopt;
  };
  po::variables_map values;
  try {
    // No positional arguments: every input is named, so scripts stay readable.
    po::store(po::command_line_parser(args).options(options).positional({}).run(), values);
    if (values.count("help") != 0) {
      out << "usage: asteria " << help.verb << ' ' << help.synopsis << "\n\n" << help.about << "\n\n" << options;
      if (!help.details.empty()) out << '\n' << help.details;
      exit_code = 0;
      return std::nullopt;
    }
    po::notify(values);  // after --help, so that --help works without the required options
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  // Every verb with --optimizer and hyperparameter options: say which given ones it ignores.
  warn_ignored_hyperparameters(help.verb, values, err);
  return values;
}

}  // namespace asteria::cli

// asteria demo: the optimizer comparison on its embedded defaults (what `make demo` runs).
#include <ostream>
#include <string>

#include "apps/asteria/comparison.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/verbs.hpp"

namespace asteria::cli {

int demo_main(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description options("Options");
  options.add_options()("out", po::value<std::string>()->value_name("DIR"),
                        "also write table.csv, table.md, steps.csv, summary.json here");
  int exit_code = 0;
  const auto values = parse_verb_options(
      {"demo", "[--out DIR]",
       "Runs `asteria compare` with its defaults: every optimizer, default hyperparameters, on the\n"
       "ill-conditioned matrix regression problem, and prints the table (see asteria compare --help).",
       ""},
      options, args, out, err, exit_code);
  if (!values) return exit_code;

  const ComparisonSettings settings;
  out << "asteria demo: second-order optimizers against AdamW on an ill-conditioned problem\n\n";
  const ComparisonResult result = run_comparison(settings, err);
  print_comparison(result, out);
  if (values->count("out") != 0) {
    write_comparison(result, (*values)["out"].as<std::string>());
    out << "wrote table.csv, table.md, steps.csv, summary.json to " << (*values)["out"].as<std::string>() << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

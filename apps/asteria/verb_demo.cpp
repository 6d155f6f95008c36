// asteria demo: the default what-if study (what `make demo` runs).
#include <ostream>
#include <string>

#include "apps/asteria/options.hpp"
#include "apps/asteria/verbs.hpp"

namespace asteria::cli {

int demo_main(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description options("Options");
  options.add_options()("out", po::value<std::string>()->default_value("results/default")->value_name("DIR"),
                        "where the study writes its runs, table and plots")(
      "jobs", po::value<int>()->value_name("N"), "runs at once (default: cores)");
  int exit_code = 0;
  const auto values = parse_verb_options(
      {"demo", "[--out DIR] [--jobs N]",
       "Runs the default study, experiments/studies/default.yaml (see asteria study --help):\n"
       "  - the memory-constrained setting: an OLMo-1B-like model with SOAP and KL-Shampoo on one GB10\n"
       "    (DGX Spark): which optimizer-state placements fit, step time, visible optimizer time, p99/p50;\n"
       "  - a 7B-class model (OLMo-2-7B-like) with SOAP on one GH200 with 480 GB of host memory (the\n"
       "    state tiered between HBM and host memory): synchronous refresh against asynchronous\n"
       "    S = 1, 3, 5: visible optimizer time and spikes.\n"
       "It prints the table and where the plots are. `asteria compare` is the optimizer comparison on a\n"
       "small ill-conditioned problem.",
       ""},
      options, args, out, err, exit_code);
  if (!values) return exit_code;
  Args study_args = {std::string(ASTERIA_SOURCE_DIR) + "/experiments/studies/default.yaml", "--out",
                     (*values)["out"].as<std::string>()};
  if (values->count("jobs") != 0) {
    study_args.push_back("--jobs");
    study_args.push_back(std::to_string((*values)["jobs"].as<int>()));
  }
  out << "asteria demo: the default study (placements and staleness of second-order optimizer state)\n\n";
  return study_main(study_args, out, err);
}

}  // namespace asteria::cli

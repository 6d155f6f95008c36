// asteria demo: the default what-if study and its data-parallel part (what `make demo` runs).
#include <filesystem>
#include <ostream>
#include <string>

#include "apps/asteria/options.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/shipped_files.hpp"

namespace asteria::cli {

int demo_main(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description options("Options");
  options.add_options()("out", po::value<std::string>()->default_value("results")->value_name("DIR"),
                        "where the studies write their runs, tables and plots (DIR/default, "
                        "DIR/distributed-demo)")(
      "jobs", po::value<int>()->value_name("N"), "runs at once (default: cores)");
  int exit_code = 0;
  const auto values = parse_verb_options(
      {"demo", "[--out DIR] [--jobs N]",
       "Runs two studies (see asteria study --help). The default one, experiments/studies/default.yaml:\n"
       "  - the memory-constrained setting: an OLMo-1B-like model with SOAP and KL-Shampoo on one GB10\n"
       "    (DGX Spark): which optimizer-state placements fit, step time, visible optimizer time, p99/p50;\n"
       "  - a 7B-class model (OLMo-2-7B-like) with SOAP on one GH200 with 480 GB of host memory (the\n"
       "    state tiered between HBM and host memory): synchronous refresh against asynchronous\n"
       "    S = 1, 3, 5: visible optimizer time and spikes.\n"
       "Then data-parallel training, experiments/studies/distributed-demo.yaml: an OLMo-1B-like model\n"
       "with SOAP and KL-Shampoo on two GH200 nodes (8 ranks): staleness, the sync period, owned\n"
       "against replicated refreshes and a straggler.\n"
       "It prints the tables and where the plots are. `asteria compare` is the optimizer comparison on a\n"
       "small ill-conditioned problem.",
       ""},
      options, args, out, err, exit_code);
  if (!values) return exit_code;
  const std::filesystem::path root = (*values)["out"].as<std::string>();
  const auto study_args = [&](const char* name) {
    // A demo run again replaces its own earlier results (only what a study writes there).
    Args a = {(shipped_path("experiments/studies") / (std::string(name) + ".yaml")).string(), "--out",
              (root / name).string(), "--overwrite"};
    if (values->count("jobs") != 0) {
      a.push_back("--jobs");
      a.push_back(std::to_string((*values)["jobs"].as<int>()));
    }
    return a;
  };
  out << "asteria demo: the default study (placements and staleness of second-order optimizer state)\n\n";
  if (const int code = study_main(study_args("default"), out, err); code != 0) return code;
  out << "\nasteria demo: data-parallel training (staleness, sync period, refresh ownership, straggler)\n\n";
  return study_main(study_args("distributed-demo"), out, err);
}

}  // namespace asteria::cli

// asteria replay: a recorded run rebuilt from its native trace and predicted by the simulator.
#include <algorithm>
#include <array>
#include <ostream>
#include <string>

#include "apps/asteria/options.hpp"
#include "apps/asteria/output_dir.hpp"
#include "core/run/settings_list.hpp"
#include "apps/asteria/replay.hpp"
#include "apps/asteria/verbs.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Reads a native trace recorded by asteria train, synth or sim (--trace), rebuilds the run it recorded\n"
    "(the run's options, the model's layers and their declared costs, kept in the trace's metadata; the\n"
    "step plan from the same generator, checked against the ops the trace executed) and runs it on the\n"
    "SimGrid model of the --hw profile. Then it compares every step both runs hold: the recorded and the\n"
    "predicted step time, device compute and visible optimizer time (the step less its compute).\n"
    "\n"
    "What-if: run options given after the trace replace the recorded ones, and the replay predicts the\n"
    "alternative (--placement, --staleness, --host-workers, --lookahead, --publish, budgets, optimizer\n"
    "hyperparameters; another --hw is another machine).";

constexpr std::string_view kDetails =
    "Files written to --out DIR:\n"
    "  replay.csv    per step: recorded and predicted step, compute and visible optimizer seconds, and\n"
    "                step_error = predicted / recorded - 1\n"
    "  replay.json   median and p99 |step_error|, mean, total, visible optimizer time error\n"
    "  trace.json    both timelines side by side (processes 'recorded ...' and 'predicted ...'), each\n"
    "                starting at its first step; open in Perfetto\n"
    "  trace.csv     the predicted run's native trace; steps.csv, summary.json, plan.txt as asteria sim\n"
    "Errors are over the steps the recorded trace holds (its window).\n";

constexpr RunOutput kOutputs[] = {{"steps.csv"}, {"summary.json"}, {"plan.txt"},  {"trace.csv"},
                                  {"trace.json"}, {"replay.csv"},   {"replay.json"}};

}  // namespace

int replay_main(const Args& args, std::ostream& out, std::ostream& err) {
  // The trace may come first, unnamed (asteria replay TRACE --hw PROFILE); every other input is named.
  Args named = args;
  if (!named.empty() && named.front().rfind("-", 0) != 0) named.insert(named.begin(), "--trace");
  po::options_description o("Options");
  o.add_options()
      ("trace", po::value<std::string>()->required()->value_name("FILE"), "the recorded native trace (trace.csv)")
      ("hw", po::value<std::string>()->required()->value_name("PROFILE"), "hardware profile the replay simulates")
      ("out", po::value<std::string>()->required()->value_name("DIR"), "directory for the replay's files")
      ("overwrite", po::bool_switch(), "replace the results of an earlier replay in --out")
      ("no-progress", po::bool_switch(), "no progress lines on stderr");
  // The what-if options: the recorded settings a simulated run takes (a trace records them and
  // the replay rebuilds the run from them). Not the batch: the replay runs the recorded layers,
  // whose costs are the recorded batch's.
  po::options_description what_if("What-if options (replace the recorded values)");
  const po::options_description run_options = run_config_options(RunVerb::sim);
  const std::vector<run::Setting> run_settings = run::all_settings();
  for (const auto& option : run_options.options()) {
    const auto s = std::find_if(run_settings.begin(), run_settings.end(),
                                [&](const run::Setting& x) { return x.name == option->long_name(); });
    if (s != run_settings.end() && s->recorded && s->name != "batch") what_if.add(option);
  }
  o.add(what_if);
  int exit_code = 0;
  const auto values = parse_verb_options({"replay", "TRACE --hw PROFILE --out DIR [what-if options]", kAbout, kDetails},
                                         o, named, out, err, exit_code);
  if (!values) return exit_code;
  ReplaySettings settings;
  settings.trace = (*values)["trace"].as<std::string>();
  settings.hw = (*values)["hw"].as<std::string>();
  settings.out = (*values)["out"].as<std::string>();
  settings.overwrite = (*values)["overwrite"].as<bool>();
  settings.progress = !(*values)["no-progress"].as<bool>();
  // What-if options: those given on the command line beside the replay's own.
  static constexpr std::array kOwn = {"--trace", "--hw", "--out", "--overwrite", "--no-progress"};
  for (std::size_t i = 0; i < named.size(); ++i) {
    const std::string& a = named[i];
    const std::string name = a.substr(0, a.find('='));
    const bool own = std::find(kOwn.begin(), kOwn.end(), name) != kOwn.end();
    const bool has_value = a.find('=') == std::string::npos && i + 1 < named.size() && named[i + 1].rfind("--", 0) != 0;
    if (!own) {
      settings.what_if.push_back(a);
      if (has_value) settings.what_if.push_back(named[i + 1]);
    }
    if (has_value) ++i;
  }
  prepare_output(*settings.out, settings.overwrite, "replay", kOutputs);
  const ReplayResult result = run_replay(settings, err);
  print_replay(result, out);
  out << "wrote replay.csv, replay.json, trace.json (recorded | predicted), trace.csv, steps.csv, summary.json to "
      << settings.out->string() << '\n';
  return 0;
}

}  // namespace asteria::cli

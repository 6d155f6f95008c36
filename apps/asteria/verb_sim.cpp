// asteria sim: one configuration of the runtime on a simulated machine.
#include <ostream>
#include <sstream>
#include <string>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Runs the runtime (tiered state store, preconditioner service, step driver) unchanged on a SimGrid model\n"
    "of a machine built from a hardware profile, training a transformer described by a model config. Every\n"
    "unit (GPU) runs the same single-GPU step. Time comes from the profile's cost model: training GEMMs at\n"
    "the bf16 peak times the measured GEMM efficiency, optimizer kernels at the fp32 peak, refreshes as\n"
    "c*n^3 on host workers, state moves over the profile's links and NVMe.\n"
    "\n"
    "--mode data-free: tensors are shapes only (a 7B model simulates in seconds); data-true: the numerics\n"
    "run as well (small models), with parameters bit-identical to the real backend for the same schedule.\n"
    "The optimizer state's device budget is the GPU memory left after the model's weights, gradients and\n"
    "activations; a configuration that fits no tier reports the shortfall per tier (exit code 0).";

constexpr std::string_view kDetails =
    "Profiles: hwmodels/profiles/*.yaml (gb10, gh200, gh200-480gb, gh200-alps,\n  h100-pcie-host) or a path.\n"
    "Models: experiments/models/*.yaml (tiny, olmo-1b, olmo2-7b) or a path.\n"
    "Units and nodes: a profile's node holds node.units_per_node GPUs (gh200-alps: 4); --units N fills\n"
    "  nodes in order, --nodes N simulates N whole nodes; summary.json records both.\n"
    "Files written with --out DIR:\n"
    "  steps.csv     unit 0, one row per step (warm-up flagged), SI units (absent when the state does not fit)\n"
    "  summary.json  settings, fits and shortfall per tier, p50/p99 step time, visible optimizer time,\n"
    "                peak bytes per tier, simulated and wall seconds, simulated activities\n"
    "  trace.json    Chrome trace (open in Perfetto): streams, workers, links, disks, tier occupancy\n";

po::options_description sim_options() {
  po::options_description o("Options");
  o.add_options()
      ("hw", po::value<std::string>()->default_value("gh200")->value_name("PROFILE"), "hardware profile name or path")
      ("model", po::value<std::string>()->default_value("tiny")->value_name("MODEL"), "model config name or path")
      ("optimizer", po::value<std::string>()->default_value("soap")->value_name("NAME"),
       "adamw | shampoo | soap | kl-shampoo | muon")
      ("placement", po::value<std::string>()->default_value("device")->value_name("POLICY"),
       "optimizer state placement: device | host | tiered | nvme")
      ("lookahead", po::value<int>()->default_value(2)->value_name("N"), "uses ahead the store prefetches state")
      ("staleness", po::value<int>()->default_value(0)->value_name("S"),
       "steps a refresh may be published after the synchronous schedule (0: synchronous)")
      ("steps", po::value<int>()->default_value(30)->value_name("N"), "measured steps")
      ("warmup-steps", po::value<int>()->value_name("N"),
       "steps run first and left out of the summary (default: until the first refresh is published)")
      ("mode", po::value<std::string>()->default_value("data-free")->value_name("MODE"), "data-free | data-true")
      ("units", po::value<int>()->value_name("N"),
       "GPUs simulated, filling nodes of the profile in order (default: 1, or all of --nodes)")
      ("nodes", po::value<int>()->value_name("N"),
       "whole nodes simulated: N x the profile's units per node (with --units, they must agree)")
      ("host-workers", po::value<int>()->default_value(0)->value_name("N"),
       "refresh workers per unit (0: the profile's cores but one, by threads per worker)")
      ("seed", po::value<std::uint64_t>()->default_value(1)->value_name("N"), "data-true: seed of weights, gradients")
      ("no-progress", "no progress bar on stderr")
      ("no-trace", "do not record or write trace.json")
      ("out", po::value<std::string>()->value_name("DIR"), "write steps.csv, summary.json, trace.json here");
  o.add(hyperparameter_options());
  return o;
}

SimSettings settings_from(const po::variables_map& v) {
  SimSettings s;
  s.hw = v["hw"].as<std::string>();
  s.model = v["model"].as<std::string>();
  s.optimizer = optim::parse_optimizer_kind(v["optimizer"].as<std::string>(), "--optimizer");
  s.hp = optim::default_hyperparameters(s.optimizer);
  s.hp.precondition_frequency = 10;  // the runtime's setting of interest, unless given
  s.hp.max_precond_dim = 2048;
  apply_hyperparameter_options(v, s.hp);
  s.placement = runtime::parse_placement_policy(v["placement"].as<std::string>(), "--placement");
  s.lookahead = v["lookahead"].as<int>();
  s.staleness = v["staleness"].as<int>();
  s.steps = v["steps"].as<int>();
  if (v.count("warmup-steps") != 0) s.warmup_steps = v["warmup-steps"].as<int>();
  const std::string mode = v["mode"].as<std::string>();
  if (mode == "data-free") s.mode = SimDataMode::data_free;
  else if (mode == "data-true") s.mode = SimDataMode::data_true;
  else throw InputError("--mode", "mode", "expected data-free or data-true, found '" + mode + "'");
  if (v.count("units") != 0) s.units = v["units"].as<int>();
  if (v.count("nodes") != 0) s.nodes = v["nodes"].as<int>();
  s.host_workers = v["host-workers"].as<int>();
  s.seed = v["seed"].as<std::uint64_t>();
  s.progress = v.count("no-progress") == 0;
  s.trace = v.count("no-trace") == 0;
  return s;
}

}  // namespace

int sim_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values = parse_verb_options({"sim", "[options]", kAbout, details}, sim_options(), args, out, err,
                                         exit_code);
  if (!values) return exit_code;
  const SimSettings settings = settings_from(*values);
  const SimOutcome outcome = run_sim(settings, err);
  print_sim(outcome, out);
  if (values->count("out") != 0) {
    const std::string dir = (*values)["out"].as<std::string>();
    write_sim(outcome, dir);
    out << "wrote " << (outcome.fits ? "steps.csv, summary.json" : "summary.json")
        << (outcome.fits && settings.trace ? ", trace.json" : "") << " to " << dir << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

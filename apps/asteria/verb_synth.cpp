// asteria synth: the runtime on a synthetic training loop — one configuration, or --compare.
#include <ostream>
#include <string>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/synth.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Runs a synthetic training loop through the runtime: a stack of layers (one weight matrix each, blocked\n"
    "by --max-precond-dim) whose forward and backward passes are modelled device work, gradients from a\n"
    "seeded low-rank-plus-noise generator, the optimizer state in the tiered store, and preconditioner\n"
    "refreshes on host worker threads published under the staleness bound. The stack is --shape (or\n"
    "--layers/--rows/--cols) matrices, or the weights of a transformer config (--model), as asteria sim\n"
    "runs it. Per step it records the step time, the visible optimizer time (step time minus the modelled\n"
    "forward/backward compute), refresh and state-move waits, refresh backlog, staleness, resident bytes per\n"
    "tier and bytes moved per tier pair.\n"
    "\n"
    "--time says where time comes from: modelled (the real clock, device work lasts its modelled duration:\n"
    "emulated kernels), measured (device work runs on a CPU thread and takes what it takes), simulated (the\n"
    "one-thread fake backend: every duration modelled, results deterministic). --numerics says what\n"
    "computes: refresh (the default: the device's numerics run during the warm-up only, keeping the CPU\n"
    "free as beside a real GPU, while refreshes run real LAPACK on the host workers), values (every op\n"
    "computes; the device's numerics then compete with the refresh workers for this machine's cores).\n"
    "\n"
    "--compare runs AdamW, then Shampoo and SOAP each with synchronous refreshes (S = 0), async S = 1 and\n"
    "async S = 5, side by side, on a stack whose full refresh (measured at startup on this machine) costs\n"
    "--refresh-ratio training steps, unless --step-seconds, --layer-flops or --model gives the step.";

constexpr std::string_view kDetails =
    "Sizes accept B, KB, MB, GB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024): 512MiB, 2e9.\n"
    "Files written with --out DIR (README: Outputs):\n"
    "  steps.csv     one row per step (warm-up flagged), SI units; --compare adds a config column\n"
    "  summary.json  one flat object (--compare: one per configuration, under \"runs\")\n"
    "  plan.txt      the step plan every step ran, one typed op per line (not with --compare)\n"
    "  table.csv, table.md   --compare: one row per configuration\n"
    "  trace.csv, trace.json  with --trace (not with --compare)\n";

po::options_description synth_options() {
  po::options_description o = run_config_options(RunVerb::synth);
  po::options_description own("Comparison");
  own.add_options()
      ("compare", "run the side-by-side comparison (see above)")
      ("refresh-ratio", po::value<double>()->default_value(3.0)->value_name("X"),
       "--compare: a full refresh costs this many steps (when no step time is given)");
  o.add(own);
  return o;
}

}  // namespace

int synth_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values = parse_verb_options({"synth", "[options]", kAbout, details}, synth_options(), args, out, err,
                                         exit_code);
  if (!values) return exit_code;
  const RunConfig spec = read_run_config(RunVerb::synth, *values);
  validate_synth(spec);

  if (values->count("compare") != 0) {
    const double ratio = (*values)["refresh-ratio"].as<double>();
    if (!(ratio > 0.0)) throw InputError("command line", "--refresh-ratio", "expected a value > 0");
    if (spec.trace.enabled) throw InputError("command line", "--trace", "a single configuration (not --compare)");
    if (spec.out) prepare_output(*spec.out, spec.overwrite, "synth");
    const CompareResult result = run_compare(
        spec, ratio,
        [&](optim::OptimizerKind kind) {
          optim::Hyperparameters hp = optim::default_hyperparameters(kind);
          hp.precondition_frequency = 10;  // the runtime's setting of interest, unless given
          apply_hyperparameter_options(*values, hp);
          return hp;
        },
        out, err);
    print_compare(result, out);
    if (spec.out) {
      write_compare(result, *spec.out);
      out << "wrote table.csv, table.md, steps.csv, summary.json to " << spec.out->string() << '\n';
    }
    return 0;
  }

  if (spec.out) prepare_output(*spec.out, spec.overwrite, "synth");
  const std::string name = std::string(optim::to_string(spec.optimizer)) +
                           (spec.staleness == 0 ? " sync S=0" : " async S=" + std::to_string(spec.staleness));
  const RunReport report = run_synth(spec, name, err);
  print_report(report, out);
  if (spec.out) {
    write_report(report, *spec.out);
    out << "wrote steps.csv, plan.txt, summary.json" << (report.trace.written ? ", trace.csv, trace.json" : "") << " to "
        << spec.out->string() << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

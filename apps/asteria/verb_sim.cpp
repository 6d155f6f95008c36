// asteria sim: one configuration of the runtime on a simulated machine.
#include <ostream>
#include <string>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/verbs.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Runs the runtime (tiered state store, preconditioner service, step plans) unchanged on a SimGrid model\n"
    "of a machine built from a hardware profile, training a transformer described by a model config. Every\n"
    "unit (GPU) is a data-parallel rank: each step averages the gradients over the units (hierarchical\n"
    "collectives over the NVLinks and NICs), refreshes run on their owner ranks (--refresh-sharing) and\n"
    "the optimizer state, gradients and weights may be sharded (--parallelism zero1|zero2|fsdp). Time comes\n"
    "from the profile's cost model: training GEMMs at the bf16 peak times the measured GEMM efficiency,\n"
    "optimizer kernels at the fp32 peak, refreshes as c*n^3 on host workers, state moves over the\n"
    "profile's links and NVMe.\n"
    "\n"
    "--numerics shapes (data-free): tensors are shapes only (a 7B model simulates in seconds); values\n"
    "(data-true): the numerics run as well (small models), with parameters bit-identical to the real\n"
    "backend for the same plan; with --gradients corpus every unit trains its replica on its slice of the\n"
    "batch from --data, and steps.csv gets the loss and validation loss against simulated time (a real\n"
    "run's losses, bit for bit, under deterministic publication). The optimizer state's device budget\n"
    "is the GPU memory left after the model's weights, gradients and activations; a configuration that\n"
    "fits no tier reports the shortfall per tier (exit code 0).";

constexpr std::string_view kDetails =
    "Profiles: hwmodels/profiles/*.yaml (a100-40gb, a100-80gb, gb10, gh200, gh200-480gb, gh200-alps,\n"
    "  h100-pcie-host) or a path.\n"
    "Models: experiments/models/*.yaml (tiny, gpt-mini, olmo-1b, olmo2-7b, paper-olmo2-1b, paper-olmo2-7b,\n"
    "  gpt-65b, gpt-175b) or a path.\n"
    "Units and nodes: a profile's node holds node.units_per_node GPUs (gh200-alps: 4); --units N fills\n"
    "  nodes in order, --nodes N simulates N whole nodes; summary.json records both.\n"
    "Files written with --out DIR (README: Outputs):\n"
    "  steps.csv     unit 0, one row per step (warm-up flagged), SI units (absent when the state does not fit)\n"
    "  summary.json  one flat object: settings, fit and shortfall per tier, p50/p99 step time, visible\n"
    "                optimizer time, waits, peak bytes per tier, simulated and wall seconds, trace size\n"
    "  plan.txt      the step plan every step ran, one typed op per line\n"
    "  trace.csv     with --trace: the native trace (traces/README.md), every op of every unit\n"
    "  trace.json    with --trace: the Chrome trace drawn from it (open in Perfetto)\n";

}  // namespace

int sim_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values = parse_verb_options({"sim", "[options]", kAbout, details}, run_config_options(RunVerb::sim), args,
                                         out, err, exit_code);
  if (!values) return exit_code;
  const RunConfig spec = read_run_config(RunVerb::sim, *values);
  validate(spec);
  warn_if_planned_elsewhere(spec, "sim", err);
  if (spec.out) prepare_output(*spec.out, spec.overwrite, "sim");
  const RunReport report = run_sim(spec, err);
  print_report(report, out);
  if (spec.out) {
    write_report(report, *spec.out);
    out << "wrote " << (report.fits ? "steps.csv, plan.txt, summary.json" : "summary.json")
        << (report.trace.written ? ", trace.csv, trace.json" : "") << " to " << spec.out->string() << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

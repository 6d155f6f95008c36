// asteria synth: the runtime on a synthetic training loop — one configuration, or --compare.
#include <ostream>
#include <string>

#include "apps/asteria/hyperparameter_options.hpp"
#include "core/run/option_values.hpp"
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
  po::options_description own("Synthetic stack and device model");
  own.add_options()
      ("layers", po::value<int>()->default_value(8)->value_name("N"), "layers of the stack")
      ("rows", po::value<linalg::index>()->default_value(512)->value_name("R"), "rows of every layer's weight")
      ("cols", po::value<linalg::index>()->default_value(512)->value_name("C"), "cols of every layer's weight")
      ("shape", po::value<std::string>()->value_name("LIST"),
       "layer shapes instead of --layers/--rows/--cols: 512x512,1024x256,...")
      ("layer-flops", po::value<double>()->value_name("F"), "forward+backward flops of one layer per step")
      ("step-seconds", po::value<double>()->value_name("S"),
       "modelled forward+backward seconds of a step, split over layers by weight count (default 0.1)")
      ("device-tflops", po::value<double>()->default_value(67.0)->value_name("X"),
       "device model without --hw: FLOP/s in units of 1e12 (H100 FP32 by default)")
      ("device-bandwidth", po::value<double>()->default_value(3.35, "3.35")->value_name("X"), "device model: TB/s")
      ("launch-latency-us", po::value<double>()->default_value(5.0)->value_name("X"), "device model: us per kernel")
      ("fake-host-gflops", po::value<double>()->default_value(20.0)->value_name("X"),
       "--time simulated: refresh speed of one host worker, GFLOP/s")
      ("gradient-rank", po::value<int>()->default_value(8)->value_name("R"), "rank of the gradients' structure")
      ("gradient-noise", po::value<double>()->default_value(0.1, "0.1")->value_name("X"), "gradient noise level")
      ("compare", "run the side-by-side comparison (see above)")
      ("refresh-ratio", po::value<double>()->default_value(3.0)->value_name("X"),
       "--compare: a full refresh costs this many steps (when no step time is given)");
  o.add(own);
  return o;
}

bool given(const po::variables_map& v, const char* name) { return v.count(name) != 0 && !v[name].defaulted(); }

SynthSettings settings_from(const po::variables_map& v) {
  SynthSettings s;
  s.spec = read_run_config(RunVerb::synth, v);
  if (s.spec.model && v.count("shape") != 0)
    throw InputError("command line", "--model", "either --model or --shape/--layers/--rows/--cols, not both");
  if (v.count("shape") != 0) {
    if (given(v, "layers") || given(v, "rows") || given(v, "cols"))
      throw InputError("command line", "--shape", "either --shape or --layers/--rows/--cols, not both");
    s.shapes = run::parse_shapes(v["shape"].as<std::string>(), "--shape");
  } else if (!s.spec.model || given(v, "layers") || given(v, "rows") || given(v, "cols")) {
    const int layers = v["layers"].as<int>();
    if (layers < 1) throw InputError("command line", "--layers", "expected an integer >= 1");
    const linalg::index rows = v["rows"].as<linalg::index>();
    const linalg::index cols = v["cols"].as<linalg::index>();
    if (rows < 1) throw InputError("command line", "--rows", "expected an integer >= 1");
    if (cols < 1) throw InputError("command line", "--cols", "expected an integer >= 1");
    s.shapes.assign(static_cast<std::size_t>(layers), {rows, cols});
  }
  if (v.count("layer-flops") != 0) s.layer_flops = v["layer-flops"].as<double>();
  if (v.count("step-seconds") != 0) s.step_seconds = v["step-seconds"].as<double>();
  s.device_model.flops_per_second = v["device-tflops"].as<double>() * 1e12;
  s.device_model.bytes_per_second = v["device-bandwidth"].as<double>() * 1e12;
  s.device_model.launch_latency = v["launch-latency-us"].as<double>() * 1e-6;
  s.fake_host_flops = v["fake-host-gflops"].as<double>() * 1e9;
  s.gradients.rank = v["gradient-rank"].as<int>();
  s.gradients.noise = v["gradient-noise"].as<double>();
  validate(s);
  return s;
}

}  // namespace

int synth_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values = parse_verb_options({"synth", "[options]", kAbout, details}, synth_options(), args, out, err,
                                         exit_code);
  if (!values) return exit_code;
  const SynthSettings settings = settings_from(*values);
  const RunConfig& spec = settings.spec;

  if (values->count("compare") != 0) {
    const double ratio = (*values)["refresh-ratio"].as<double>();
    if (!(ratio > 0.0)) throw InputError("command line", "--refresh-ratio", "expected a value > 0");
    if (spec.trace.enabled) throw InputError("command line", "--trace", "a single configuration (not --compare)");
    if (spec.out) prepare_output(*spec.out, spec.overwrite, "synth");
    const CompareResult result = run_compare(
        settings, ratio,
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
  const RunReport report = run_synth(settings, name, err);
  print_report(report, out);
  if (spec.out) {
    write_report(report, *spec.out);
    out << "wrote steps.csv, plan.txt, summary.json" << (report.trace.written ? ", trace.csv, trace.json" : "") << " to "
        << spec.out->string() << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

// asteria synth: the synthetic step driver — one configuration, or --compare.
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/synth.hpp"
#include "apps/asteria/synth_parse.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Runs a synthetic training loop through the runtime: a stack of layers (one weight matrix each, blocked\n"
    "by --max-precond-dim) whose forward and backward passes are modelled device work, gradients from a\n"
    "seeded low-rank-plus-noise generator, the optimizer state in the tiered store, and preconditioner\n"
    "refreshes on host worker threads published under the staleness bound. Per step it records the step\n"
    "time, the visible optimizer time (step time minus the modelled forward/backward compute), refresh and\n"
    "state-move waits, queue depth, staleness, resident bytes per tier and bytes moved per tier pair.\n"
    "\n"
    "--mode says where the optimizer's every-step device numerics run; refreshes always run real LAPACK\n"
    "on the host workers:\n"
    "  emulated  accumulate/apply are modelled device time only (the CPU stays free, as with a real GPU);\n"
    "            the warm-up steps run them for real so the refreshes see real statistics\n"
    "  full      accumulate/apply run their real numerics inside device work (on this machine's CPU,\n"
    "            competing with the refresh workers)\n"
    "\n"
    "--compare runs AdamW, then Shampoo and SOAP each with synchronous refreshes (S = 0), async S = 1 and\n"
    "async S = 5, side by side, on a stack whose full refresh (measured at startup on this machine) costs\n"
    "--refresh-ratio training steps, unless --step-seconds or --layer-flops is given.";

constexpr std::string_view kDetails =
    "Sizes accept B, KB, MB, GB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024): 512MiB, 2e9.\n"
    "Files written with --out DIR:\n"
    "  steps.csv     one row per step (warm-up flagged), SI units: step_time_s, visible_optimizer_s,\n"
    "                resident_<tier>_bytes, moved_<from>_<to>_bytes, ...; --compare adds a config column\n"
    "  summary.json  settings, p50/p99/p99-over-p50 step time, mean visible optimizer time, totals\n"
    "  table.csv, table.md   --compare: one row per configuration\n";

po::options_description synth_options() {
  po::options_description o("Options");
  o.add_options()
      ("optimizer", po::value<std::string>()->default_value("shampoo")->value_name("NAME"),
       "adamw | shampoo | soap | kl-shampoo | muon")
      ("placement", po::value<std::string>()->default_value("device")->value_name("POLICY"),
       "optimizer state placement: device | host | tiered | nvme")
      ("lookahead", po::value<int>()->default_value(2)->value_name("N"), "uses ahead the store prefetches state")
      ("staleness", po::value<int>()->default_value(0)->value_name("S"),
       "steps a refresh may be published after the synchronous schedule (0: synchronous)")
      ("publish", po::value<std::string>()->default_value("deterministic")->value_name("POLICY"),
       "deterministic | opportunistic")
      ("layers", po::value<int>()->default_value(8)->value_name("N"), "layers of the stack")
      ("rows", po::value<linalg::index>()->default_value(512)->value_name("R"), "rows of every layer's weight")
      ("cols", po::value<linalg::index>()->default_value(512)->value_name("C"), "cols of every layer's weight")
      ("shape", po::value<std::string>()->value_name("LIST"),
       "layer shapes instead of --layers/--rows/--cols: 512x512,1024x256,...")
      ("layer-flops", po::value<double>()->value_name("F"), "forward+backward flops of one layer per step")
      ("step-seconds", po::value<double>()->value_name("S"),
       "modelled forward+backward seconds of a step, split over layers by weight count (default 0.1)")
      ("steps", po::value<int>()->default_value(40)->value_name("N"), "measured steps")
      ("warmup-steps", po::value<int>()->default_value(2)->value_name("N"),
       "steps run first, left out of the summary (unless given: at least until the first refresh is "
       "published, so measured steps are steady state)")
      ("mode", po::value<std::string>()->default_value("emulated")->value_name("MODE"), "emulated | full (see above)")
      ("backend", po::value<std::string>()->default_value("real")->value_name("NAME"),
       "real (threads, wall clock) | fake (one thread, modelled time, deterministic)")
      ("host-threads", po::value<int>()->default_value(0)->value_name("N"),
       "refresh worker threads (0: all cores but one; the fake backend: 1)")
      ("device-budget", po::value<std::string>()->default_value("1GiB")->value_name("SIZE"), "device tier budget")
      ("host-budget", po::value<std::string>()->default_value("4GiB")->value_name("SIZE"), "host tier budget")
      ("nvme-dir", po::value<std::string>()->value_name("DIR"), "real backend: NVMe tier files go here")
      ("nvme-budget", po::value<std::string>()->default_value("64GiB")->value_name("SIZE"), "NVMe tier budget")
      ("device-tflops", po::value<double>()->default_value(67.0)->value_name("X"),
       "device model: FLOP/s in units of 1e12 (H100 FP32 by default)")
      ("device-bandwidth", po::value<double>()->default_value(3.35, "3.35")->value_name("X"), "device model: TB/s")
      ("launch-latency-us", po::value<double>()->default_value(5.0)->value_name("X"), "device model: us per kernel")
      ("fake-host-gflops", po::value<double>()->default_value(20.0)->value_name("X"),
       "fake backend: refresh speed of one host worker, GFLOP/s")
      ("seed", po::value<std::uint64_t>()->default_value(1)->value_name("N"), "seed of weights and gradients")
      ("gradient-rank", po::value<int>()->default_value(8)->value_name("R"), "rank of the gradients' structure")
      ("gradient-noise", po::value<double>()->default_value(0.1, "0.1")->value_name("X"), "gradient noise level")
      ("compare", "run the side-by-side comparison (see above)")
      ("refresh-ratio", po::value<double>()->default_value(3.0)->value_name("X"),
       "--compare: a full refresh costs this many steps (when no step time is given)")
      ("quiet", "no progress lines on stderr")
      ("out", po::value<std::string>()->value_name("DIR"), "write steps.csv, summary.json (and tables) here");
  o.add(hyperparameter_options());
  return o;
}

bool given(const po::variables_map& v, const char* name) { return v.count(name) != 0 && !v[name].defaulted(); }

optim::Hyperparameters hyperparameters_for(optim::OptimizerKind kind, const po::variables_map& v) {
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.precondition_frequency = 10;  // the runtime's setting of interest, unless given
  apply_hyperparameter_options(v, hp);
  return hp;
}

SynthSettings settings_from(const po::variables_map& v) {
  SynthSettings s;
  s.optimizer = optim::parse_optimizer_kind(v["optimizer"].as<std::string>(), "--optimizer");
  s.hp = hyperparameters_for(s.optimizer, v);
  s.placement = runtime::parse_placement_policy(v["placement"].as<std::string>(), "--placement");
  s.lookahead = v["lookahead"].as<int>();
  s.staleness = v["staleness"].as<int>();
  s.publish = runtime::parse_publish_policy(v["publish"].as<std::string>(), "--publish");
  if (v.count("shape") != 0) {
    if (given(v, "layers") || given(v, "rows") || given(v, "cols"))
      throw InputError("--shape", "shape", "give either --shape or --layers/--rows/--cols, not both");
    s.shapes = parse_shapes(v["shape"].as<std::string>(), "--shape");
  } else {
    const int layers = v["layers"].as<int>();
    if (layers < 1) throw InputError("--layers", "layers", "expected an integer >= 1");
    const linalg::index rows = v["rows"].as<linalg::index>();
    const linalg::index cols = v["cols"].as<linalg::index>();
    if (rows < 1) throw InputError("--rows", "rows", "expected an integer >= 1");
    if (cols < 1) throw InputError("--cols", "cols", "expected an integer >= 1");
    s.shapes.assign(static_cast<std::size_t>(layers), {rows, cols});
  }
  if (v.count("layer-flops") != 0) s.layer_flops = v["layer-flops"].as<double>();
  if (v.count("step-seconds") != 0) s.step_seconds = v["step-seconds"].as<double>();
  s.steps = v["steps"].as<int>();
  s.warmup_steps = v["warmup-steps"].as<int>();
  s.warmup_to_first_publication = !given(v, "warmup-steps");
  s.mode = runtime::parse_numerics_mode(v["mode"].as<std::string>(), "--mode");
  const std::string backend = v["backend"].as<std::string>();
  if (backend == "real") s.backend = SynthBackend::real;
  else if (backend == "fake") s.backend = SynthBackend::fake;
  else throw InputError("--backend", "backend", "expected real or fake, found '" + backend + "'");
  s.host_threads = v["host-threads"].as<int>();
  s.device_budget = parse_size(v["device-budget"].as<std::string>(), "--device-budget");
  s.host_budget = parse_size(v["host-budget"].as<std::string>(), "--host-budget");
  s.nvme_budget = parse_size(v["nvme-budget"].as<std::string>(), "--nvme-budget");
  if (v.count("nvme-dir") != 0) s.nvme_dir = v["nvme-dir"].as<std::string>();
  s.device_model.flops_per_second = v["device-tflops"].as<double>() * 1e12;
  s.device_model.bytes_per_second = v["device-bandwidth"].as<double>() * 1e12;
  s.device_model.launch_latency = v["launch-latency-us"].as<double>() * 1e-6;
  if (!(s.device_model.launch_latency >= 0.0))
    throw InputError("--launch-latency-us", "launch latency", "expected a value >= 0");
  s.fake_host_flops = v["fake-host-gflops"].as<double>() * 1e9;
  s.gradients.seed = v["seed"].as<std::uint64_t>();
  s.gradients.rank = v["gradient-rank"].as<int>();
  s.gradients.noise = v["gradient-noise"].as<double>();
  s.progress = v.count("quiet") == 0;
  validate(s);
  return s;
}

void print_run(const SynthRun& run, std::ostream& out) {
  const runtime::RunSummary& m = run.summary;
  char line[256];
  out << run.name << ": " << run.blocks << " blocks, " << run.state_bytes << " B of optimizer state, mode "
      << runtime::to_string(run.settings.mode) << '\n'
      << run.platform << '\n';
  std::snprintf(line, sizeof line,
                "step time p50 %.3f ms, p99 %.3f ms, p99/p50 %.3f, mean %.3f ms (compute %.3f ms) over %zu steps "
                "(+%zu warm-up)\n",
                m.p50_step_s * 1e3, m.p99_step_s * 1e3, m.p99_over_p50, m.mean_step_s * 1e3, m.mean_compute_s * 1e3,
                m.steps, m.warmup_steps);
  out << line;
  std::snprintf(line, sizeof line,
                "visible optimizer time mean %.3f ms (refresh waits %.3f s, state-move waits %.3f s, optimizer "
                "device work %.3f s in total)\n",
                m.mean_visible_optimizer_s * 1e3, m.total_refresh_wait_s, m.total_acquire_wait_s,
                m.total_optimizer_device_s);
  out << line;
  out << "refreshes submitted " << m.refreshes_submitted << ", published " << m.refreshes_published << ", failed "
      << run.refresh_failures << ", max staleness " << m.max_staleness << ", max queue depth " << m.max_queue_depth
      << '\n';
}

}  // namespace

int synth_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values = parse_verb_options({"synth", "[options]", kAbout, details}, synth_options(), args, out, err,
                                         exit_code);
  if (!values) return exit_code;
  const SynthSettings settings = settings_from(*values);
  std::ostringstream quiet;
  std::ostream& progress = settings.progress ? err : quiet;

  if (values->count("compare") != 0) {
    const double ratio = (*values)["refresh-ratio"].as<double>();
    if (!(ratio > 0.0)) throw InputError("--refresh-ratio", "refresh ratio", "expected a value > 0");
    const CompareResult result = run_compare(
        settings, ratio, [&](optim::OptimizerKind kind) { return hyperparameters_for(kind, *values); }, out, progress);
    print_compare(result, out);
    if (values->count("out") != 0) {
      write_compare(result, (*values)["out"].as<std::string>());
      out << "wrote table.csv, table.md, steps.csv, summary.json to " << (*values)["out"].as<std::string>() << '\n';
    }
    return 0;
  }

  const std::string name = std::string(optim::to_string(settings.optimizer)) +
                           (settings.staleness == 0 ? " sync S=0" : " async S=" + std::to_string(settings.staleness));
  const SynthRun run = run_synth(settings, name, progress);
  print_run(run, out);
  if (values->count("out") != 0) {
    const std::filesystem::path dir = (*values)["out"].as<std::string>();
    ensure_directory(dir);
    io::write_file_atomically(dir / "steps.csv", steps_csv_header(false) + steps_csv_rows(run, false));
    io::write_file_atomically(dir / "summary.json", synth_summary_json(run));
    out << "wrote steps.csv, summary.json to " << dir.string() << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

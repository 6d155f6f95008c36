// Simulator speed at scale: whole `asteria sim` runs (apps/asteria simulate()) of a few data-free
// steps of an OLMo-2-7B-like model with SOAP on gh200-alps nodes (4 GPUs each) at 4 to 1024
// simulated GPUs, side by side in one run, and one 1 GiB all_reduce over 1024 GPUs as `asteria
// collective` times it (sim_collective). Each run is a child process (one SimGrid engine per
// process). Targets: OLMo-2-7B FSDP SOAP tiered at <= 0.1 s of wall time per simulated step at
// 16 GPUs, <= 0.2 s at 64, <= 10 s at 1024, cost growing at most linearly in GPUs; the
// all_reduce in <= 1 s, start-up included.
//
// Modes, per GPU count:
//   full            every unit runs: the reference (skipped above --sim_full_max_units)
//   representative  the first --sim_simulated_nodes nodes run, the other units mirror them
//                   (SimulationOptions::simulated_units: exact when every rank runs the same work)
//   coalesced       representative, with each collective's ring steps as one transfer (approximate)
// Counters: wall_s_per_step (the steady stepping, summary.json's wall_seconds_per_step_steady:
// between every unit's first and last step calls, per step; setup, i.e. building every unit's
// driver, is setup_s; the run's end, the last step's tail, the last gathers and the drivers torn
// down, is teardown_s),
// sim_step_s (p50 simulated step), activities_per_step, ms_per_gpu_step (wall per step and GPU:
// flat means linear growth), vs_target (wall per step over the target: 16 GPUs 0.1 s, 64 GPUs
// 0.2 s, 1024 GPUs 10 s), error_vs_full (largest |relative difference| of a simulated step time from the full
// run at the same GPU count; 0 is bit for bit; absent where full did not run).
//
// Workload flags (before Google Benchmark's): --sim_model=olmo2-7b --sim_optimizer=soap
// --sim_placement=tiered --sim_staleness=1 --sim_steps=2 --sim_warmup=1
// --sim_parallelism=zero1 (ddp | zero1 | zero2 | fsdp) --sim_refresh_sharing=replicated
// --sim_serial_collectives=1 --sim_units=4,16,64,256,1024 --sim_full_max_units=64
// --sim_simulated_nodes=1 --sim_modes=full,representative,coalesced
// --sim_out=DIR (keeps each run's steps.csv, plan.txt and summary.json in DIR/<mode>-<gpus>)
// --sim_collective_nodes=256 (0: no sim_collective) --sim_collective_bytes=1GiB.
// Defaults: OLMo-2-7B's SOAP state (165 GiB a GPU) and the refresh buffers set aside for it fit
// a gh200-alps node only sharded among the data-parallel ranks (--parallelism zero1); a sharded
// run's weight broadcasts (one per block, 1989 a step), run concurrently
// (--concurrent-collectives), make SimGrid re-solve thousands of flows at every event; each
// group's collectives in order (the simulator's default, as NCCL) keeps it fast.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/plan/schedule.hpp"
#include "core/runtime/store/store_options.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/child_process.hpp"

namespace {

using namespace asteria;

struct Flags {
  std::string model = "olmo2-7b";
  std::string optimizer = "soap";
  std::string placement = "tiered";
  int staleness = 1;
  int steps = 2;
  int warmup = 1;
  plan::Parallelism parallelism = plan::Parallelism::zero1;
  std::string refresh_sharing = "replicated";
  bool serial_collectives = true;
  std::vector<int> units = {4, 16, 64, 256, 1024};
  int full_max_units = 64;
  int simulated_nodes = 1;
  std::vector<std::string> modes = {"full", "representative", "coalesced"};
  std::string out;  // keep each run's steps.csv, plan.txt and summary.json under out/<mode>-<gpus>
  int collective_nodes = 256;  // sim_collective: nodes of 4 GPUs (0: not run)
  std::string collective_bytes = "1GiB";
};

Flags& flags() {
  static Flags f;
  return f;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

plan::Parallelism parse_parallelism(const std::string& value) {
  for (const plan::Parallelism p :
       {plan::Parallelism::ddp, plan::Parallelism::zero1, plan::Parallelism::zero2, plan::Parallelism::fsdp})
    if (plan::to_string(p) == value) return p;
  std::fprintf(stderr, "sim_scale: --sim_parallelism: expected ddp, zero1, zero2 or fsdp, found '%s'\n", value.c_str());
  std::exit(2);
}

// Takes the --sim_* flags out of argv (Google Benchmark rejects flags it does not know).
void take_flags(int& argc, char** argv) {
  Flags& f = flags();
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto eq = arg.find('=');
    if (!arg.starts_with("--sim_") || eq == std::string_view::npos) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::string name(arg.substr(6, eq - 6));
    const std::string value(arg.substr(eq + 1));
    if (name == "model") f.model = value;
    else if (name == "optimizer") f.optimizer = value;
    else if (name == "placement") f.placement = value;
    else if (name == "staleness") f.staleness = std::stoi(value);
    else if (name == "steps") f.steps = std::stoi(value);
    else if (name == "warmup") f.warmup = std::stoi(value);
    else if (name == "parallelism") f.parallelism = parse_parallelism(value);
    else if (name == "refresh_sharing") f.refresh_sharing = value;
    else if (name == "serial_collectives") f.serial_collectives = value != "0";
    else if (name == "full_max_units") f.full_max_units = std::stoi(value);
    else if (name == "simulated_nodes") f.simulated_nodes = std::stoi(value);
    else if (name == "modes") f.modes = split(value);
    else if (name == "out") f.out = value;
    else if (name == "collective_nodes") f.collective_nodes = std::stoi(value);
    else if (name == "collective_bytes") f.collective_bytes = value;
    else if (name == "units") {
      f.units.clear();
      for (const std::string& u : split(value)) f.units.push_back(std::stoi(u));
    } else {
      std::fprintf(stderr, "sim_scale: unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  argc = kept;
}

struct Result {
  bool fits = false;
  std::string message;  // fit message or error
  double wall_per_step = 0.0;
  double setup = 0.0;
  double teardown = 0.0;
  double p50 = 0.0;
  double activities = 0.0;
  int steps = 0;
  std::vector<double> step_times;  // unit 0's, every step
};

// One `asteria sim` run in a child process; its figures come back as text (step times in hex,
// so that they compare bit for bit).
Result simulate_in_child(int units, const std::string& mode) {
  const Flags& f = flags();
  const sim::ChildOutcome outcome = sim::run_in_child_process([&](sim::ChildReport& report) {
    cli::RunConfig spec = cli::default_run_config(cli::RunVerb::sim);
    spec.hw = "gh200-alps";
    spec.model = f.model;
    spec.optimizer = optim::parse_optimizer_kind(f.optimizer);
    spec.hp = optim::default_hyperparameters(spec.optimizer);
    spec.hp.max_precond_dim = 2048;  // `asteria sim`'s default (run_config_options.cpp), so the runs are its runs
    spec.placement = runtime::parse_placement_policy(f.placement, "--sim_placement");
    spec.staleness = f.staleness;
    spec.steps = f.steps;
    spec.warmup_steps = f.warmup;
    spec.parallelism = f.parallelism;
    spec.share_refreshes = f.refresh_sharing == "owners";
    spec.numerics = platform::Numerics::shapes;
    spec.progress = false;
    spec.sim.units = units;
    spec.sim.serial_collectives = f.serial_collectives;
    if (mode != "full") spec.sim.simulated_nodes = f.simulated_nodes;
    spec.sim.coalesce_ring_steps = mode == "coalesced";
    const hw::HardwareProfile profile = hw::load_profile(hw::find_profile(*spec.hw));
    std::ostringstream progress;
    const cli::RunReport r = cli::simulate(spec, profile, cli::workload_from_config(f.model, spec.seed), progress);
    if (!f.out.empty()) {
      const std::filesystem::path dir = std::filesystem::path(f.out) / (mode + "-" + std::to_string(units));
      cli::prepare_output(dir, true, "sim");
      cli::write_report(r, dir);
    }
    std::ostringstream out;
    out << "fits " << r.fits << '\n';
    for (const auto& [key, value] : r.extra)
      if (value.is_number()) out << key << ' ' << value.get<double>() << '\n';
    out << "p50 " << r.summary.p50_step_s << '\n';
    char hex[64];
    for (const runtime::StepRecord& s : r.records) {
      std::snprintf(hex, sizeof hex, "%a", s.step_time_s);
      out << "step " << hex << '\n';
    }
    if (!r.fits) out << "message " << r.fit_message << '\n';
    report.write(out.str());
  });
  Result result;
  if (!outcome.succeeded()) {
    result.message = outcome.describe();
    return result;
  }
  std::istringstream in(outcome.report);
  std::map<std::string, double> values;
  for (std::string key; in >> key;) {
    if (key == "message") {
      std::getline(in, result.message);
    } else if (key == "step") {
      std::string hex;
      in >> hex;
      result.step_times.push_back(std::strtod(hex.c_str(), nullptr));
    } else {
      in >> values[key];
    }
  }
  result.fits = values["fits"] != 0.0;
  result.wall_per_step = values["wall_seconds_per_step_steady"];
  result.setup = values["wall_seconds_setup"];
  result.teardown = values["wall_seconds_teardown"];
  result.p50 = values["p50"];
  result.steps = static_cast<int>(result.step_times.size());
  result.activities = values["activities"] / std::max(1, result.steps);
  return result;
}

std::map<int, std::vector<double>>& full_step_times() {  // per GPU count, from the full runs
  static std::map<int, std::vector<double>> times;
  return times;
}

void run(benchmark::State& state, const std::string& mode) {
  const int units = static_cast<int>(state.range(0));
  Result r;
  for (auto _ : state) {
    r = simulate_in_child(units, mode);
    state.SetIterationTime(r.wall_per_step);
  }
  if (!r.fits) {
    state.SkipWithError(("does not run: " + r.message).c_str());
    return;
  }
  if (mode == "full") full_step_times()[units] = r.step_times;
  state.counters["wall_s_per_step"] = r.wall_per_step;
  state.counters["setup_s"] = r.setup;
  state.counters["teardown_s"] = r.teardown;
  state.counters["sim_step_s"] = r.p50;
  state.counters["activities_per_step"] = r.activities;
  state.counters["ms_per_gpu_step"] = 1e3 * r.wall_per_step / units;
  if (units == 16) state.counters["vs_target"] = r.wall_per_step / 0.1;
  if (units == 64) state.counters["vs_target"] = r.wall_per_step / 0.2;
  if (units == 1024) state.counters["vs_target"] = r.wall_per_step / 10.0;
  const auto full = full_step_times().find(units);
  if (full != full_step_times().end() && full->second.size() == r.step_times.size()) {
    double error = 0.0;
    for (std::size_t i = 0; i < r.step_times.size(); ++i)
      error = std::max(error, std::abs(r.step_times[i] - full->second[i]) / full->second[i]);
    state.counters["error_vs_full"] = error;
  }
}

// One all_reduce of --sim_collective_bytes over --sim_collective_nodes gh200-alps nodes, as
// `asteria collective` runs it (the platform built, NCCL's choice made, the collective timed),
// in a child process; the wall time of the whole, start-up included.
void collective(benchmark::State& state) {
  const Flags& f = flags();
  double wall = 0.0;
  std::string failure;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const sim::ChildOutcome outcome = sim::run_in_child_process([&](sim::ChildReport& report) {
      std::ostringstream out, err;
      const int code = cli::collective_main({"--hw", "gh200-alps", "--nodes", std::to_string(f.collective_nodes),
                                             "--min-bytes", f.collective_bytes, "--max-bytes", f.collective_bytes,
                                             "--no-progress"},
                                            out, err);
      report.write(code == 0 ? out.str() : "failed: " + err.str());
    });
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!outcome.succeeded() || outcome.report.starts_with("failed")) failure = outcome.describe() + outcome.report;
    state.SetIterationTime(wall);
  }
  if (!failure.empty()) {
    state.SkipWithError(failure.c_str());
    return;
  }
  state.counters["wall_s"] = wall;
  state.counters["vs_target"] = wall / 1.0;
}

void register_all() {
  const Flags& f = flags();
  const int per_node = hw::load_profile(hw::find_profile("gh200-alps")).units_per_node();
  if (f.collective_nodes > 0)
    benchmark::RegisterBenchmark("sim_collective/all_reduce", collective)
        ->Arg(f.collective_nodes * per_node)
        ->ArgName("gpus")
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kSecond);
  for (const int units : f.units)
    for (const std::string& mode : f.modes) {
      if (mode == "full" && units > f.full_max_units) continue;
      if (mode != "full" && units <= f.simulated_nodes * per_node) continue;  // nothing to mirror
      benchmark::RegisterBenchmark(("sim_scale/" + mode).c_str(), run, mode)
          ->Arg(units)
          ->ArgName("gpus")
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kSecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
  take_flags(argc, argv);
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

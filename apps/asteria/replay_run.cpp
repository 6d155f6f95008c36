// asteria replay: the recorded run rebuilt from its trace and run on the simulator.
#include <algorithm>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "apps/asteria/replay.hpp"
#include "apps/asteria/replay_metadata.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "hwmodels/profile_loader.hpp"
#include "traces/chrome_trace.hpp"

namespace asteria::cli {
namespace {

// The recorded options, then the what-if ones: an option given as a what-if replaces its
// recorded value (Boost refuses an option given twice).
std::vector<std::string> merged_arguments(const std::vector<std::string>& recorded,
                                          const std::vector<std::string>& what_if) {
  std::set<std::string> replaced;
  for (const std::string& a : what_if)
    if (a.rfind("--", 0) == 0) replaced.insert(a.substr(0, a.find('=')));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    if (recorded[i].rfind("--", 0) == 0 && replaced.count(recorded[i]) != 0) {
      if (i + 1 < recorded.size() && recorded[i + 1].rfind("--", 0) != 0) ++i;  // its value
      continue;
    }
    out.push_back(recorded[i]);
  }
  out.insert(out.end(), what_if.begin(), what_if.end());
  return out;
}

RunVerb recorded_verb(const RecordedRun& run, const std::string& source) {
  for (RunVerb verb : {RunVerb::synth, RunVerb::sim, RunVerb::train})
    if (run.verb == to_string(verb)) return verb;
  throw InputError(source, "metadata verb", "expected synth, sim or train, found '" + run.verb + "'");
}

RunConfig replayed_spec(const RecordedRun& run, const ReplaySettings& settings, const std::string& source) {
  po::variables_map values;
  try {
    po::store(po::command_line_parser(merged_arguments(run.arguments, settings.what_if))
                  .options(run_config_options(std::nullopt))
                  .positional({})
                  .run(),
              values);
    po::notify(values);
  } catch (const po::error& e) {
    throw InputError(source, "metadata run_arguments (with the what-if options)", std::string("options that parse: ") + e.what());
  }
  // The recorded verb's own settings too (a sim trace's machine: --units, --simulated-nodes ...).
  RunConfig spec = read_run_config(recorded_verb(run, source), values, /*every_verbs_settings=*/true);
  const RunConfig sim = default_run_config(RunVerb::sim);
  spec.verb = RunVerb::sim;
  // The recorded ranks, whatever the profile's node size (unless a what-if gives others): a
  // data-parallel rank's trace replays with every rank (its collectives and shared refreshes are
  // part of its step).
  const auto given = [&](const std::string& option) {
    return std::any_of(settings.what_if.begin(), settings.what_if.end(),
                       [&](const std::string& a) { return a.substr(0, a.find('=')) == option; });
  };
  if (!given("--units") && !given("--nodes")) {
    spec.sim.units = run.units;
    spec.sim.nodes.reset();
  }
  spec.numerics = platform::Numerics::shapes;
  spec.time = platform::TimeSource::simulated;
  spec.hw = settings.hw;
  spec.model = run.model;
  spec.nvme_dir.reset();
  spec.out = settings.out;
  spec.overwrite = true;  // the verb prepared the directory
  spec.progress = settings.progress;
  spec.trace = sim.trace;
  spec.trace.enabled = true;
  spec.trace.units = 1;
  spec.trace.max_bytes = std::size_t{1} << 40;  // the recorded window fitted its own bound
  return spec;
}

SimWorkload recorded_workload(const RecordedRun& run, const RunConfig& spec, const std::string& source) {
  SimWorkload w;
  w.name = run.model;
  w.weights.config.name = run.model;
  for (const runtime::LayerSpec& layer : run.layers) {
    workload::WeightSpec weight;
    weight.name = layer.name;
    weight.rows = layer.rows;
    weight.cols = layer.cols;
    weight.order = layer.vector ? 1 : 2;
    w.weights.weights.push_back(weight);
    w.parameters += static_cast<std::size_t>(layer.rows * layer.cols);
  }
  w.stack.layers = run.layers;
  if (run.model_pass == runtime::ModelPass::whole_step && !w.stack.layers.empty()) {
    // The recorded model ran the whole forward and backward in the step's first backward (the
    // last layer's): its forward and the other backward ops were markers. Charge it there.
    platform::Costs whole;
    for (runtime::LayerSpec& layer : w.stack.layers) {
      whole.merge(layer.forward);
      whole.merge(layer.backward);
      layer.forward = platform::Costs{};
      layer.backward = platform::Costs{};
    }
    w.stack.layers.back().backward = std::move(whole);
  }
  w.stack.gradients = runtime::GradientSpec{spec.seed};
  w.model_memory = workload::ModelMemory{};
  w.model_memory->bytes[static_cast<std::size_t>(platform::Tier::device)] = run.model_device_bytes;
  if (run.state_budgets) w.state_budgets = sim::TierBudgets{spec.device_budget, spec.host_budget, spec.nvme_budget, 0};
  w.numerics_site = run.numerics_site;
  w.trace_metadata = {{"replay_of", source}};
  return w;
}

// What differs between the plans the two traces executed (first common step of unit 0).
std::string plan_difference(const traces::NativeTrace& recorded, const traces::NativeTrace& predicted) {
  using Key = std::tuple<std::string, std::int32_t, std::int32_t, std::vector<std::int32_t>>;
  auto ops = [](const traces::NativeTrace& t, std::int64_t step) {
    std::map<std::int32_t, Key> out;
    for (const traces::TraceRecord& r : t.records)
      if (r.unit == 0 && r.step == step && r.op >= 0 && r.kind != "refresh_job" && r.kind != "transfer" && r.kind != "io")
        out[r.op] = {r.kind, r.layer, r.block, r.deps};
    return out;
  };
  std::set<std::int64_t> steps;
  for (const traces::TraceRecord& r : predicted.records)
    if (r.kind == "step") steps.insert(r.step);
  for (const traces::TraceRecord& r : recorded.records) {
    if (r.kind != "step" || steps.count(r.step) == 0) continue;
    const auto a = ops(recorded, r.step);
    const auto b = ops(predicted, r.step);
    if (a == b) return "the same plan (" + std::to_string(a.size()) + " ops)";
    for (const auto& [op, key] : a) {
      const auto it = b.find(op);
      if (it == b.end()) return "op " + std::to_string(op) + " (" + std::get<0>(key) + ") is not in the replayed plan";
      if (it->second != key) return "op " + std::to_string(op) + " differs: recorded " + std::get<0>(key) + ", replayed " + std::get<0>(it->second);
    }
    return "the replayed plan has " + std::to_string(b.size()) + " ops, the recorded one " + std::to_string(a.size());
  }
  return "no common step";
}

// Both timelines in one Chrome trace: the recorded one as process group "recorded", the predicted
// one as "predicted", each shifted so that its first step starts at 0.
void write_side_by_side(const traces::NativeTrace& recorded, const traces::NativeTrace& predicted,
                        const std::filesystem::path& out) {
  traces::NativeTrace both;
  for (const auto& [name, trace] : {std::pair{"recorded", &recorded}, std::pair{"predicted", &predicted}}) {
    double origin = 0.0;
    bool found = false;
    for (const traces::TraceRecord& r : trace->records)
      if (r.kind == "step" && (!found || r.start_s < origin)) {
        origin = r.start_s;
        found = true;
      }
    for (traces::TraceRecord r : trace->records) {
      if (r.kind == "counter") continue;
      r.resource = std::string(name) + ' ' + r.resource;
      r.start_s -= origin;
      r.end_s -= origin;
      both.records.push_back(std::move(r));
    }
  }
  traces::ChromeTraceOptions options;
  options.source = out.string();
  traces::write_chrome_trace(both, out, options);
}

std::string replay_csv(const std::vector<StepComparison>& steps) {
  std::string text =
      "step,recorded_step_s,predicted_step_s,step_error,recorded_compute_s,predicted_compute_s,"
      "recorded_visible_optimizer_s,predicted_visible_optimizer_s,recorded_exposed_communication_s,"
      "predicted_exposed_communication_s\n";
  for (const StepComparison& s : steps)
    text += std::to_string(s.step) + ',' + exact_number(s.recorded.step_s) + ',' + exact_number(s.predicted.step_s) +
            ',' + exact_number(s.step_error) + ',' + exact_number(s.recorded.compute_s) + ',' +
            exact_number(s.predicted.compute_s) + ',' + exact_number(s.recorded.visible_optimizer_s) + ',' +
            exact_number(s.predicted.visible_optimizer_s) + ',' + exact_number(s.recorded.exposed_communication_s) +
            ',' + exact_number(s.predicted.exposed_communication_s) + '\n';
  return text;
}

}  // namespace

ReplayResult run_replay(const ReplaySettings& settings, std::ostream& progress) {
  if (!settings.out) throw InputError("command line", "--out", "a directory for the replay's files");
  const std::string source = settings.trace.string();
  const traces::NativeTrace recorded = traces::read_native_trace(settings.trace);
  const RecordedRun run = recorded_run(recorded, source);
  RunConfig spec = replayed_spec(run, settings, source);
  const auto first = recorded.metadata.find("window_first_step");
  const auto last = recorded.metadata.find("window_last_step");
  if (first != recorded.metadata.end() && last != recorded.metadata.end())
    spec.trace.steps = parse_step_range(first->second + ":" + last->second, source + ": metadata window");
  validate(spec);
  const hw::HardwareProfile profile = hw::load_profile(hw::find_profile(settings.hw));

  ReplayResult result;
  result.what_if = !settings.what_if.empty();
  result.predicted = simulate(spec, profile, recorded_workload(run, spec, source), progress);
  write_report(result.predicted, *settings.out);
  if (!result.predicted.fits) return result;
  const traces::NativeTrace predicted = traces::read_native_trace(*settings.out / "trace.csv");
  result.plan_check = plan_difference(recorded, predicted);
  result.steps = compare_steps(traced_steps(recorded), traced_steps(predicted), source);
  result.errors = replay_errors(result.steps);

  io::write_file_atomically(*settings.out / "replay.csv", replay_csv(result.steps));
  const ReplayErrors& e = result.errors;
  nlohmann::ordered_json j;
  j["trace"] = source;
  j["hw"] = profile.name;
  j["model"] = run.model;
  j["what_if"] = settings.what_if;
  j["plan"] = result.plan_check;
  j["steps"] = e.steps;
  j["median_abs_step_error"] = e.median_abs_step_error;
  j["p99_abs_step_error"] = e.p99_abs_step_error;
  j["mean_abs_step_error"] = e.mean_abs_step_error;
  j["total_step_error"] = e.total_step_error;
  j["visible_optimizer_error"] = e.visible_optimizer_error;
  j["visible_optimizer_error_of_step"] = e.visible_optimizer_error_of_step;
  io::write_file_atomically(*settings.out / "replay.json", j.dump(2) + "\n");
  write_side_by_side(recorded, predicted, *settings.out / "trace.json");
  return result;
}

void print_replay(const ReplayResult& r, std::ostream& out) {
  print_report(r.predicted, out);
  if (!r.predicted.fits) return;
  const ReplayErrors& e = r.errors;
  auto percent = [](double x) { return significant(100.0 * x, 3) + "%"; };
  out << "replay: " << r.plan_check << (r.what_if ? " (what-if: the replayed run differs from the recorded one)" : "")
      << '\n'
      << "step time error over " << e.steps << " steps: median |error| " << percent(e.median_abs_step_error)
      << ", p99 " << percent(e.p99_abs_step_error) << ", mean " << percent(e.mean_abs_step_error) << ", total "
      << percent(e.total_step_error) << "\n"
      << "visible optimizer time: predicted/recorded - 1 = " << percent(e.visible_optimizer_error)
      << " (|difference| = " << percent(e.visible_optimizer_error_of_step) << " of the recorded step time)\n";
}

}  // namespace asteria::cli

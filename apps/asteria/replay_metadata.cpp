#include "apps/asteria/replay_metadata.hpp"

#include <charconv>
#include <cstdio>
#include <utility>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/platform/cost_text.hpp"
#include "core/run/run_arguments.hpp"

namespace asteria::cli {
namespace {

constexpr char kField = '|';

std::string layer_key(std::size_t l) {
  char key[32];
  std::snprintf(key, sizeof key, "layer.%05zu", l);  // zero-padded: metadata is kept in key order
  return key;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (;;) {
    const std::size_t at = text.find(separator, from);
    parts.push_back(text.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) return parts;
    from = at + 1;
  }
}

template <class Int>
Int parse_integer(const std::string& text, const std::string& source, const std::string& key) {
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    throw InputError(source, key, "an integer, found \"" + text + "\"");
  return value;
}

const std::string& required(const traces::NativeTrace& trace, const std::string& key, const std::string& source) {
  const auto it = trace.metadata.find(key);
  if (it == trace.metadata.end())
    throw InputError(source, "metadata " + key,
                     "the key a replay needs (a trace written by asteria train, synth or sim with --trace)");
  return it->second;
}

// Every record that names a layer names one of the recorded layers, and a forward or backward
// record's label names the same layer the metadata lists at that index: a replay rebuilds the
// model from the metadata, so records of another model would be timed against the wrong layers.
void check_records_name_layers(const traces::NativeTrace& trace, const std::vector<runtime::LayerSpec>& layers,
                               const std::string& source) {
  for (const traces::TraceRecord& r : trace.records) {
    if (r.layer < 0) continue;
    const std::string where = "record of unit " + std::to_string(r.unit) + ", step " + std::to_string(r.step) +
                              ", op " + std::to_string(r.op) + " (" + r.kind + ")";
    if (static_cast<std::size_t>(r.layer) >= layers.size())
      throw InputError(source, where + ": layer",
                       "one of the " + std::to_string(layers.size()) + " layers the metadata lists (metadata layers), found " +
                           std::to_string(r.layer));
    if (r.kind != "forward" && r.kind != "backward") continue;
    const std::string expected = r.kind + ' ' + layers[static_cast<std::size_t>(r.layer)].name;
    const bool names_it = r.label.rfind(expected, 0) == 0 &&
                          (r.label.size() == expected.size() || r.label.compare(expected.size(), 4, " mb ") == 0);
    if (!names_it)
      throw InputError(source, where + ": label",
                       "\"" + expected + "\" (layer " + std::to_string(r.layer) + " of the model in the metadata, " +
                           layer_key(static_cast<std::size_t>(r.layer)) + "), found \"" + r.label +
                           "\": the records are of another model than the one the metadata describes");
  }
}

}  // namespace

std::vector<std::string> run_arguments(const RunConfig& spec, int host_workers, int warmup_steps) {
  RunConfig resolved = spec;
  resolved.host_workers = host_workers;
  resolved.warmup_steps = warmup_steps;
  return run::recorded_arguments(resolved);
}

std::map<std::string, std::string> replay_metadata(const RunConfig& spec, const TraceOrigin& origin,
                                                   std::span<const runtime::LayerSpec> layers,
                                                   int host_workers, int warmup_steps, std::size_t model_device_bytes,
                                                   bool state_budgets, runtime::ModelPass model_pass) {
  std::map<std::string, std::string> m = origin.more;
  m["verb"] = origin.verb;
  m["model"] = !origin.model.empty() ? origin.model : spec.model.value_or("synthetic stack");
  m["units"] = std::to_string(origin.units);
  m["optimizer"] = std::string(optim::to_string(spec.optimizer));
  m["placement"] = std::string(runtime::to_string(spec.placement));
  m["staleness"] = std::to_string(spec.staleness);
  std::string arguments;
  for (const std::string& a : run_arguments(spec, host_workers, warmup_steps)) {
    if (!arguments.empty()) arguments += ' ';
    arguments += a;
  }
  m["run_arguments"] = arguments;
  m["model_device_bytes"] = std::to_string(model_device_bytes);
  m["state_budgets"] = state_budgets ? "run" : "profile";
  m["model_pass"] = std::string(runtime::to_string(model_pass));
  m["layers"] = std::to_string(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const runtime::LayerSpec& s = layers[l];
    if (s.name.find_first_of("|\n\r") != std::string::npos)
      throw InputError("trace metadata", "layer " + s.name, "a layer name without '|' or line breaks");
    m[layer_key(l)] = s.name + kField + std::to_string(s.rows) + kField + std::to_string(s.cols) + kField +
                      (s.vector ? "vector" : "matrix") + kField + platform::to_text(s.forward) + kField +
                      platform::to_text(s.backward) + kField + exact_number(s.weight_bytes) + kField +
                      exact_number(s.checkpoint_bytes);
  }
  return m;
}

RecordedRun recorded_run(const traces::NativeTrace& trace, const std::string& source) {
  RecordedRun run;
  run.verb = required(trace, "verb", source);
  run.model = required(trace, "model", source);
  run.arguments = split(required(trace, "run_arguments", source), ' ');
  // Traces of one rank before data-parallel runs recorded their ranks have no units: one.
  if (const auto units = trace.metadata.find("units"); units != trace.metadata.end()) {
    run.units = parse_integer<int>(units->second, source, "metadata units");
    if (run.units < 1) throw InputError(source, "metadata units", "an integer >= 1, found " + units->second);
  }
  run.model_device_bytes = parse_integer<std::size_t>(required(trace, "model_device_bytes", source), source,
                                                      "metadata model_device_bytes");
  const std::string& budgets = required(trace, "state_budgets", source);
  if (budgets != "run" && budgets != "profile")
    throw InputError(source, "metadata state_budgets", "run or profile, found \"" + budgets + "\"");
  run.state_budgets = budgets == "run";
  run.numerics_site = plan::parse_numerics_site(required(trace, "numerics_site", source), source, "metadata numerics_site");
  run.model_pass = runtime::parse_model_pass(required(trace, "model_pass", source), source, "metadata model_pass");
  const auto count = parse_integer<std::size_t>(required(trace, "layers", source), source, "metadata layers");
  for (std::size_t l = 0; l < count; ++l) {
    const std::string key = layer_key(l);
    const std::vector<std::string> f = split(required(trace, key, source), kField);
    const std::string field = "metadata " + key;
    // Traces before model-state tiers have no weight and checkpoint bytes (6 fields).
    if ((f.size() != 6 && f.size() != 8) || (f[3] != "vector" && f[3] != "matrix"))
      throw InputError(source, field,
                       "name|rows|cols|vector or matrix|forward cost|backward cost[|weight bytes|checkpoint bytes]");
    runtime::LayerSpec s;
    s.name = f[0];
    s.rows = parse_integer<linalg::index>(f[1], source, field);
    s.cols = parse_integer<linalg::index>(f[2], source, field);
    s.vector = f[3] == "vector";
    s.forward = platform::parse_costs(f[4], source, field);
    s.backward = platform::parse_costs(f[5], source, field);
    if (f.size() == 8) {
      for (auto [text, out] : {std::pair{&f[6], &s.weight_bytes}, std::pair{&f[7], &s.checkpoint_bytes}}) {
        const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), *out);
        if (ec != std::errc() || end != text->data() + text->size() || !(*out >= 0.0))
          throw InputError(source, field, "weight and checkpoint bytes >= 0, found \"" + *text + "\"");
      }
    }
    run.layers.push_back(std::move(s));
  }
  check_records_name_layers(trace, run.layers, source);
  return run;
}

}  // namespace asteria::cli

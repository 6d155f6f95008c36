// Reading one run's summary.json back for the study table.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/asteria/study_table.hpp"
#include "core/common/error.hpp"

namespace asteria::cli::study {
namespace {

constexpr std::array<std::string_view, kMetricCount> kMetricKeys = {
    "p50_step_s",     "p99_step_s",    "p99_over_p50",      "mean_step_s",     "compute_s",       "visible_optimizer_s",
    "exposed_communication_s", "refresh_wait_s", "state_move_wait_s", "max_staleness", "peak_device_bytes", "peak_host_bytes", "peak_nvme_bytes",
    "network_bytes",  "tokens_per_s", "energy_per_step_j", "energy_per_token_j", "mean_power_w",
};

using nlohmann::json;

double number_at(const json& object, const char* key, const std::string& source, const std::string& parent) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number())
    throw InputError(source, parent + key, it == object.end() ? "missing; expected a number" : "expected a number");
  return it->get<double>();
}

std::vector<Shortfall> parse_shortfall(const json& summary, const std::string& source) {
  const auto it = summary.find("shortfall");
  if (it == summary.end() || it->is_null()) return {};
  if (!it->is_array()) throw InputError(source, "shortfall", "expected a list of {tier, needed_bytes, free_bytes}");
  std::vector<Shortfall> tiers;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& entry = (*it)[i];
    const std::string field = "shortfall[" + std::to_string(i) + "].";
    if (!entry.is_object() || !entry.contains("tier") || !entry["tier"].is_string())
      throw InputError(source, field + "tier", "expected an object with a tier name");
    Shortfall s;
    s.tier = entry["tier"].get<std::string>();
    s.needed_bytes = number_at(entry, "needed_bytes", source, field);
    s.free_bytes = number_at(entry, "free_bytes", source, field);
    if (entry.contains("capacity_bytes")) s.capacity_bytes = number_at(entry, "capacity_bytes", source, field);
    tiers.push_back(std::move(s));
  }
  return tiers;
}

RunResult parse_summary(const std::filesystem::path& file) {
  const std::string source = file.string();
  std::ifstream in(file);
  if (!in) throw InputError(source, "file", "missing; the run wrote no summary");
  json summary;
  try {
    summary = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(source, "json", std::string("expected a JSON object: ") + e.what());
  }
  if (!summary.is_object()) throw InputError(source, "json", "expected a JSON object");
  RunResult result;
  const auto fits = summary.find("fits");
  if (fits == summary.end() || !fits->is_boolean()) throw InputError(source, "fits", "expected true or false");
  result.fits = fits->get<bool>();
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    const std::string key(kMetricKeys[m]);
    const auto it = summary.find(key);
    const bool absent = it == summary.end() || it->is_null();
    // A run that does not fit has no performance numbers; one that fits has all of them.
    if (absent && (!result.fits || may_be_absent(static_cast<Metric>(m)))) continue;
    if (absent) throw InputError(source, key, "missing; expected a number (the run fits)");
    if (!it->is_number()) throw InputError(source, key, "expected a number, found " + it->dump());
    result.metrics[m] = it->get<double>();
  }
  if (!result.fits) result.shortfall = parse_shortfall(summary, source);
  // A run that trained on a corpus brings its own loss curve against simulated time.
  if (const auto gradients = summary.find("gradients");
      result.fits && gradients != summary.end() && *gradients == "corpus") {
    result.own_curve = read_run_curve(file.parent_path() / "steps.csv", number_at(summary, "tokens_per_step", source, ""));
    result.own_curve->optimizer = summary.value("optimizer", "");
    result.own_curve->source = "this run's own validation loss (data-true simulation, gradients: corpus)";
  }
  return result;
}

}  // namespace

std::string_view key_of(Metric metric) noexcept { return kMetricKeys[static_cast<std::size_t>(metric)]; }

bool may_be_absent(Metric metric) noexcept {
  return metric == Metric::energy_per_step_j || metric == Metric::energy_per_token_j || metric == Metric::mean_power_w;
}

std::filesystem::path relative_run_dir(const StudyPoint& point) { return std::filesystem::path("runs") / point.slug; }

RunResult read_run_result(const std::filesystem::path& run_dir, const std::string& process_failure) {
  if (!process_failure.empty()) return RunResult{process_failure, false, {}, {}, {}};
  try {
    return parse_summary(run_dir / "summary.json");
  } catch (const InputError& e) {
    return RunResult{e.what(), false, {}, {}, {}};
  }
}

std::string shortfall_text(std::span<const Shortfall> shortfall) {
  std::string text;
  for (const Shortfall& s : shortfall) {
    const double short_bytes = s.needed_bytes > s.free_bytes ? s.needed_bytes - s.free_bytes : 0.0;
    char piece[96];
    std::snprintf(piece, sizeof piece, "%.1f GiB short", short_bytes / 1073741824.0);
    if (!text.empty()) text += "; ";
    text += s.tier + " " + piece;
  }
  return text;
}

}  // namespace asteria::cli::study

// The study table: one row per run, as CSV (every column, SI units) and Markdown (the essential
// columns, seconds and GiB to 3 significant figures).
#include "apps/asteria/study_table.hpp"
#include "apps/asteria/table.hpp"
#include "core/common/number_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace asteria::cli::study {
namespace {

enum class Unit { seconds, ratio, count, bytes };

struct MetricColumn {
  Metric metric;
  Unit unit;
};

constexpr std::array<MetricColumn, kMetricCount> kMetricColumns = {{
    {Metric::p50_step_s, Unit::seconds},
    {Metric::p99_step_s, Unit::seconds},
    {Metric::p99_over_p50, Unit::ratio},
    {Metric::mean_step_s, Unit::seconds},
    {Metric::compute_s, Unit::seconds},
    {Metric::visible_optimizer_s, Unit::seconds},
    {Metric::exposed_communication_s, Unit::seconds},
    {Metric::refresh_wait_s, Unit::seconds},
    {Metric::state_move_wait_s, Unit::seconds},
    {Metric::max_staleness, Unit::count},
    {Metric::peak_device_bytes, Unit::bytes},
    {Metric::peak_host_bytes, Unit::bytes},
    {Metric::peak_nvme_bytes, Unit::bytes},
    {Metric::network_bytes, Unit::bytes},
    {Metric::tokens_per_s, Unit::ratio},
    {Metric::energy_per_step_j, Unit::ratio},
    {Metric::energy_per_token_j, Unit::ratio},
    {Metric::mean_power_w, Unit::ratio},
}};

// The metrics table.md shows, after config and fits, with their headers.
struct MarkdownColumn {
  Metric metric;
  std::string_view header;
  Unit unit;
};

constexpr std::array<MarkdownColumn, 11> kMarkdownColumns = {{
    {Metric::p50_step_s, "p50 step (s)", Unit::seconds},
    {Metric::p99_step_s, "p99 step (s)", Unit::seconds},
    {Metric::p99_over_p50, "p99/p50", Unit::ratio},
    {Metric::compute_s, "compute (s)", Unit::seconds},
    {Metric::visible_optimizer_s, "visible optimizer (s)", Unit::seconds},
    {Metric::exposed_communication_s, "exposed comm (s)", Unit::seconds},
    {Metric::refresh_wait_s, "refresh wait (s)", Unit::seconds},
    {Metric::state_move_wait_s, "state-move wait (s)", Unit::seconds},
    {Metric::peak_device_bytes, "peak device (GiB)", Unit::bytes},
    {Metric::network_bytes, "network/rank/step (GiB)", Unit::bytes},
    {Metric::energy_per_step_j, "energy/step (J)", Unit::ratio},
}};

constexpr double kGiB = 1073741824.0;

// Shortest text that reads back as the same double, in %g style (0.0005, not 5e-04); whole
// numbers (bytes, counts) never with an exponent.
std::string csv_number(double value, Unit unit) {
  char buffer[64];
  const bool whole = unit == Unit::count || unit == Unit::bytes;
  const auto result = whole ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                            : std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general);
  return std::string(buffer, result.ptr);
}

// table.md: significant(, 3) of seconds and ratios as they are, of bytes in GiB.
std::string markdown_number(double value, Unit unit) {
  return significant(unit == Unit::bytes ? value / kGiB : value, 3);
}

std::vector<std::string> csv_header(const StudySpec& spec) {
  std::vector<std::string> cells = {"config"};
  cells.insert(cells.end(), kCoreSettings.begin(), kCoreSettings.end());
  cells.emplace_back("fits");
  for (const MetricColumn& c : kMetricColumns) cells.emplace_back(key_of(c.metric));
  cells.emplace_back("shortfall");
  cells.emplace_back("run_dir");
  cells.insert(cells.end(), spec.extra_axes.begin(), spec.extra_axes.end());
  if (spec.targets) {
    cells.emplace_back("loss_curve");
    for (const double loss : spec.targets->losses) {
      const std::string l = loss_label(loss);
      cells.insert(cells.end(), {"tokens_to_loss_" + l, "time_to_loss_" + l + "_s", "energy_to_loss_" + l + "_j",
                                 "loss_reduction_per_kj_" + l});
    }
  }
  return cells;
}

// The loss curve a run is seen through: its own where it trained, else its optimizer's (null
// when neither; always null without targets).
const LossCurve* curve_of(const StudySpec& spec, const StudyPoint& point, const RunResult& result) {
  if (!spec.targets) return nullptr;
  return result.own_curve ? &*result.own_curve : curve_for(*spec.targets, point);
}

// A run's tokens, seconds and joules to each target loss: the curve's tokens over the run's
// tokens per second and times its energy per token (empty where a part is missing). A run with
// its own curve (it trained) reaches each loss at its own simulated time.
struct ToTarget {
  std::optional<double> tokens, seconds, joules;
  std::optional<double> reduction_per_kj;  // the curve's loss drop from its first point, per kJ
};
std::vector<ToTarget> to_targets(const StudySpec& spec, const StudyPoint& point, const RunResult& result,
                                 const LossCurve*& curve) {
  std::vector<ToTarget> out;
  curve = curve_of(spec, point, result);
  if (!spec.targets) return out;
  for (const double loss : spec.targets->losses) {
    ToTarget t;
    if (curve != nullptr) t.tokens = tokens_to_reach(*curve, loss);
    const bool ran = result.fits && !result.failed();
    if (t.tokens && ran && result.own_curve)
      t.seconds = seconds_to_reach(*curve, loss);
    else if (t.tokens && ran && result[Metric::tokens_per_s] && *result[Metric::tokens_per_s] > 0.0)
      t.seconds = *t.tokens / *result[Metric::tokens_per_s];
    if (t.tokens && ran && result[Metric::energy_per_token_j]) t.joules = *t.tokens * *result[Metric::energy_per_token_j];
    if (t.joules && *t.joules > 0.0) t.reduction_per_kj = (curve->points.front().second - loss) / (*t.joules / 1e3);
    out.push_back(t);
  }
  return out;
}

std::string failure_text(const StudyPoint& point, const RunResult& result) {
  return result.failure + " (log: " + (relative_run_dir(point) / "log.txt").string() + ")";
}

std::vector<std::string> csv_row(const StudySpec& spec, const StudyPoint& point, const RunResult& result) {
  std::vector<std::string> cells = {point.slug};
  for (std::string_view key : kCoreSettings) cells.push_back(point[key].value_or(""));
  cells.emplace_back(result.fits && !result.failed() ? "true" : "false");
  for (const MetricColumn& c : kMetricColumns) {
    const std::optional<double>& value = result[c.metric];
    cells.push_back(value ? csv_number(*value, c.unit) : "");
  }
  cells.push_back(result.failed() ? "run failed: " + failure_text(point, result) : shortfall_text(result.shortfall));
  cells.push_back(relative_run_dir(point).string());
  for (const std::string& key : spec.extra_axes) cells.push_back(point[key].value_or(""));
  if (spec.targets) {
    const LossCurve* curve = nullptr;
    const std::vector<ToTarget> targets = to_targets(spec, point, result, curve);
    cells.push_back(curve != nullptr ? curve->source : "");
    const auto cell = [](const std::optional<double>& v) { return v ? csv_number(*v, Unit::ratio) : std::string(); };
    for (const ToTarget& t : targets)
      cells.insert(cells.end(), {cell(t.tokens), cell(t.seconds), cell(t.joules), cell(t.reduction_per_kj)});
  }
  return cells;
}

// yes; what the run is short of ("device 12.3 GiB short"), or "no" when it does not say; failed: why.
std::string fits_text(const StudyPoint& point, const RunResult& result) {
  if (result.failed()) return "failed: " + failure_text(point, result);
  if (result.fits) return "yes";
  const std::string shortfall = shortfall_text(result.shortfall);
  return shortfall.empty() ? "no" : shortfall;
}

std::vector<std::string> markdown_row(const StudySpec& spec, const StudyPoint& point, const RunResult& result) {
  std::vector<std::string> cells = {point.slug, fits_text(point, result)};
  for (const MarkdownColumn& c : kMarkdownColumns) {
    const std::optional<double>& value = result[c.metric];
    cells.push_back(value ? markdown_number(*value, c.unit) : "");
  }
  const LossCurve* curve = nullptr;
  for (const ToTarget& t : to_targets(spec, point, result, curve))
    cells.push_back(t.seconds ? markdown_number(*t.seconds, Unit::seconds) : "");
  return cells;
}

}  // namespace

std::string table_csv(const StudySpec& spec, std::span<const RunResult> results) {
  Table table{csv_header(spec), {}, {}};
  for (std::size_t i = 0; i < spec.points.size() && i < results.size(); ++i)
    table.add_row(csv_row(spec, spec.points[i], results[i]));
  return cli::table_csv(table);
}

std::string table_markdown(const StudySpec& spec, std::span<const RunResult> results) {
  Table table{{"config", "fits"}, {false, false}, {}};
  for (const MarkdownColumn& c : kMarkdownColumns) {
    table.columns.emplace_back(c.header);
    table.numeric.push_back(true);  // numbers right-aligned
  }
  if (spec.targets)
    for (const double loss : spec.targets->losses) {
      table.columns.push_back("time to " + loss_label(loss) + " (s)");
      table.numeric.push_back(true);
    }
  for (std::size_t i = 0; i < spec.points.size() && i < results.size(); ++i)
    table.add_row(markdown_row(spec, spec.points[i], results[i]));
  return cli::table_markdown(table);
}

std::string loss_curves_csv(const StudySpec& spec, std::span<const RunResult> results) {
  Table table{{"config", "kind", "tokens", "time_s", "energy_j", "loss"}, {}, {}};
  const auto cell = [](double v) { return csv_number(v, Unit::ratio); };
  for (std::size_t i = 0; spec.targets && i < spec.points.size() && i < results.size(); ++i) {
    const RunResult& result = results[i];
    if (!result.fits || result.failed()) continue;
    const LossCurve* curve = curve_of(spec, spec.points[i], result);
    const std::optional<double>& per_second = result[Metric::tokens_per_s];
    const std::optional<double>& per_token = result[Metric::energy_per_token_j];
    if (curve == nullptr || (!result.own_curve && !(per_second && *per_second > 0.0))) continue;
    for (std::size_t k = 0; k < curve->points.size(); ++k) {
      const auto [tokens, loss] = curve->points[k];
      const double seconds = result.own_curve ? curve->seconds.at(k) : tokens / *per_second;
      table.add_row({spec.points[i].slug, result.own_curve ? "simulated" : "projected", cell(tokens), cell(seconds),
                     per_token ? cell(tokens * *per_token) : "", cell(loss)});
    }
  }
  return cli::table_csv(table);
}

}  // namespace asteria::cli::study

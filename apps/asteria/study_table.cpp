// The study table: one row per run, as CSV (SI units) and Markdown (ms, GiB).
#include "apps/asteria/study_table.hpp"

#include <charconv>
#include <cstdio>

namespace asteria::cli::study {
namespace {

enum class Unit { seconds, ratio, count, bytes };

struct MetricColumn {
  Metric metric;
  std::string_view markdown_header;
  Unit unit;
};

constexpr std::array<MetricColumn, kMetricCount> kMetricColumns = {{
    {Metric::p50_step_s, "p50 step (ms)", Unit::seconds},
    {Metric::p99_step_s, "p99 step (ms)", Unit::seconds},
    {Metric::p99_over_p50, "p99/p50", Unit::ratio},
    {Metric::mean_step_s, "mean step (ms)", Unit::seconds},
    {Metric::compute_s, "compute (ms)", Unit::seconds},
    {Metric::visible_optimizer_s, "visible optimizer (ms)", Unit::seconds},
    {Metric::refresh_wait_s, "refresh wait (ms)", Unit::seconds},
    {Metric::state_move_wait_s, "state-move wait (ms)", Unit::seconds},
    {Metric::max_staleness, "max staleness", Unit::count},
    {Metric::peak_device_bytes, "peak device (GiB)", Unit::bytes},
    {Metric::peak_host_bytes, "peak host (GiB)", Unit::bytes},
    {Metric::peak_nvme_bytes, "peak NVMe (GiB)", Unit::bytes},
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

std::string human_number(double value, Unit unit) {
  char buffer[64];
  switch (unit) {
    case Unit::seconds: std::snprintf(buffer, sizeof buffer, "%.3f", value * 1e3); break;
    case Unit::ratio: std::snprintf(buffer, sizeof buffer, "%.3f", value); break;
    case Unit::count: std::snprintf(buffer, sizeof buffer, "%.0f", value); break;
    case Unit::bytes: std::snprintf(buffer, sizeof buffer, "%.2f", value / kGiB); break;
  }
  return buffer;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

std::string markdown_cell(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|') escaped += "\\|";
    else if (c == '\n') escaped += ' ';
    else escaped += c;
  }
  return escaped;
}

struct Row {
  std::vector<std::string> csv;
  std::vector<std::string> markdown;
  void add(std::string csv_text, std::string markdown_text) {
    csv.push_back(std::move(csv_text));
    markdown.push_back(std::move(markdown_text));
  }
  void add(const std::string& text) { add(text, text); }
};

Row header_row(const StudySpec& spec) {
  Row row;
  for (const char* name : {"config", "hw", "model", "optimizer", "placement", "staleness", "fits"}) row.add(name);
  for (const MetricColumn& c : kMetricColumns) row.add(std::string(key_of(c.metric)), std::string(c.markdown_header));
  row.add("shortfall");
  row.add("run_dir", "run dir");
  for (Setting s : spec.extra_axes) row.add(std::string(key_of(s)));
  return row;
}

Row result_row(const StudySpec& spec, const StudyPoint& point, const RunResult& result) {
  Row row;
  row.add(point.slug);
  for (std::size_t s = 0; s < kCoreSettingCount; ++s) row.add(point.values[s].value_or(""));
  const std::string run_dir = relative_run_dir(point).string();
  if (result.failed()) row.add("false", "failed");
  else row.add(result.fits ? "true" : "false", result.fits ? "yes" : "no");
  for (const MetricColumn& c : kMetricColumns) {
    const std::optional<double>& value = result[c.metric];
    if (value) row.add(csv_number(*value, c.unit), human_number(*value, c.unit));
    else row.add("");
  }
  if (result.failed()) {
    const std::string log = run_dir + "/log.txt";
    row.add("run failed: " + result.failure + " (log: " + log + ")", result.failure + "; see " + log);
  } else {
    row.add(shortfall_text(result.shortfall));
  }
  row.add(run_dir);
  for (Setting s : spec.extra_axes) row.add(point[s].value_or(""));
  return row;
}

bool numeric_column(std::size_t column) {
  constexpr std::size_t kFirstMetric = 7;  // after config, the five core settings and fits
  return column == 5 || (column >= kFirstMetric && column < kFirstMetric + kMetricCount);
}

}  // namespace

std::string table_csv(const StudySpec& spec, std::span<const RunResult> results) {
  std::string text;
  auto append = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i != 0) text += ',';
      text += csv_cell(cells[i]);
    }
    text += '\n';
  };
  append(header_row(spec).csv);
  for (std::size_t i = 0; i < spec.points.size() && i < results.size(); ++i)
    append(result_row(spec, spec.points[i], results[i]).csv);
  return text;
}

std::string table_markdown(const StudySpec& spec, std::span<const RunResult> results) {
  std::string text;
  auto append = [&](const std::vector<std::string>& cells) {
    text += '|';
    for (const std::string& cell : cells) text += ' ' + markdown_cell(cell) + " |";
    text += '\n';
  };
  const Row header = header_row(spec);
  append(header.markdown);
  text += '|';
  for (std::size_t c = 0; c < header.markdown.size(); ++c) text += numeric_column(c) ? " ---: |" : " --- |";
  text += '\n';
  for (std::size_t i = 0; i < spec.points.size() && i < results.size(); ++i)
    append(result_row(spec, spec.points[i], results[i]).markdown);
  return text;
}

}  // namespace asteria::cli::study

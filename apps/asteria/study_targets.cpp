#include "apps/asteria/study_targets.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>

#include "apps/asteria/study_settings.hpp"
#include "apps/asteria/study_spec.hpp"
#include "core/common/error.hpp"

namespace asteria::cli::study {

namespace {

// The cells of a CSV row without quoted commas (numbers and column names), empty ones kept.
std::vector<std::string> split_csv_line(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> cells(1);
  for (const char c : line) {
    if (c == ',') cells.emplace_back();
    else cells.back().push_back(c);
  }
  return cells;
}

bool parse_number(const std::string& text, double& out) {
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, out);
  return result.ec == std::errc() && result.ptr == end && std::isfinite(out);
}

std::string text_at(const YAML::Node& node, const char* key, const std::string& source, const std::string& field) {
  const YAML::Node value = node[key];
  if (!value.IsDefined() || !value.IsScalar() || value.Scalar().empty())
    throw InputError(source, field + "." + key, "missing; expected a non-empty string" + line_suffix(node));
  return value.Scalar();
}

// The (tokens, loss) points of a curve file.
std::vector<std::pair<double, double>> read_curve(const std::filesystem::path& file, const std::string& loss_column,
                                                  std::optional<double> tokens_per_step) {
  const std::string source = file.string();
  std::ifstream in(file);
  if (!in) throw InputError(source, "file", "expected a readable CSV file of a loss curve");
  std::string line;
  if (!std::getline(in, line)) throw InputError(source, "header", "expected a header row");
  const std::vector<std::string> header = split_csv_line(line);
  const auto column = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return std::nullopt;
  };
  const std::optional<std::size_t> loss = column(loss_column);
  if (!loss) throw InputError(source, "header", "expected a '" + loss_column + "' column");
  std::optional<std::size_t> tokens = column("tokens");
  std::optional<std::size_t> step;
  if (!tokens) {
    step = column("step");
    if (!step || !tokens_per_step)
      throw InputError(source, "header",
                       "expected a 'tokens' column, or a 'step' column with tokens_per_step given in the study");
  }
  std::vector<std::pair<double, double>> points;
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    const std::string where = "row " + std::to_string(row);
    const std::size_t x_column = tokens ? *tokens : *step;
    if (cells.size() <= std::max(x_column, *loss)) throw InputError(source, where, "expected every header column");
    if (cells[*loss].empty()) continue;  // a step without that loss (asteria train evaluates every k steps)
    double x = 0.0, y = 0.0;
    if (!parse_number(cells[x_column], x) || !parse_number(cells[*loss], y))
      throw InputError(source, where, "expected numbers in the " + header[x_column] + " and " + loss_column + " columns");
    if (step) x *= *tokens_per_step;
    if (!points.empty() && x <= points.back().first)
      throw InputError(source, where, "expected tokens increasing row by row");
    points.emplace_back(x, y);
  }
  if (points.empty()) throw InputError(source, loss_column, "expected at least one row with a loss");
  return points;
}

}  // namespace

Targets parse_targets(const YAML::Node& node, const std::string& source, const std::filesystem::path& base_dir) {
  if (!node.IsMap()) throw InputError(source, "targets", "expected a mapping with losses and curves" + line_suffix(node));
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (key != "losses" && key != "curves")
      throw InputError(source, "targets." + key, "unknown key; expected losses or curves" + line_suffix(entry.first));
  }
  Targets targets;
  const YAML::Node losses = node["losses"];
  if (!losses.IsDefined() || !losses.IsSequence() || losses.size() == 0)
    throw InputError(source, "targets.losses", "expected a non-empty list of losses" + line_suffix(node));
  for (std::size_t i = 0; i < losses.size(); ++i) {
    double loss = 0.0;
    if (!losses[i].IsScalar() || !parse_number(losses[i].Scalar(), loss) || loss <= 0.0)
      throw InputError(source, "targets.losses[" + std::to_string(i) + "]", "expected a loss > 0" + line_suffix(losses[i]));
    targets.losses.push_back(loss);
  }
  const YAML::Node curves = node["curves"];
  if (!curves.IsDefined() || !curves.IsSequence() || curves.size() == 0)
    throw InputError(source, "targets.curves", "expected a non-empty list of curves" + line_suffix(node));
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const std::string field = "targets.curves[" + std::to_string(i) + "]";
    const YAML::Node c = curves[i];
    if (!c.IsMap()) throw InputError(source, field, "expected a mapping" + line_suffix(c));
    for (const auto& entry : c) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      if (key != "optimizer" && key != "staleness" && key != "file" && key != "source" && key != "loss_column" &&
          key != "tokens_per_step")
        throw InputError(source, field + "." + key,
                         "unknown key; expected optimizer, staleness, file, source, loss_column or tokens_per_step" +
                             line_suffix(entry.first));
    }
    LossCurve curve;
    curve.optimizer = text_at(c, "optimizer", source, field);
    curve.source = text_at(c, "source", source, field);
    curve.file = text_at(c, "file", source, field);
    if (curve.file.is_relative()) curve.file = base_dir / curve.file;
    if (const YAML::Node s = c["staleness"]; s.IsDefined()) {
      double value = 0.0;
      if (!s.IsScalar() || !parse_number(s.Scalar(), value) || value < 0.0 || value != std::floor(value))
        throw InputError(source, field + ".staleness", "expected a whole number >= 0" + line_suffix(s));
      curve.staleness = static_cast<int>(value);
    }
    std::optional<double> tokens_per_step;
    if (const YAML::Node t = c["tokens_per_step"]; t.IsDefined()) {
      double value = 0.0;
      if (!t.IsScalar() || !parse_number(t.Scalar(), value) || value <= 0.0)
        throw InputError(source, field + ".tokens_per_step", "expected a count > 0" + line_suffix(t));
      tokens_per_step = value;
    }
    const std::string loss_column = c["loss_column"].IsDefined() ? text_at(c, "loss_column", source, field) : "loss";
    curve.points = read_curve(curve.file, loss_column, tokens_per_step);
    targets.curves.push_back(std::move(curve));
  }
  return targets;
}

const LossCurve* curve_for(const Targets& targets, const StudyPoint& point) {
  const LossCurve* any_staleness = nullptr;
  for (const LossCurve& curve : targets.curves) {
    if (curve.optimizer != point.optimizer()) continue;
    if (curve.staleness && *curve.staleness == point.staleness()) return &curve;
    if (!curve.staleness && any_staleness == nullptr) any_staleness = &curve;
  }
  return any_staleness;
}

namespace {

// Where the curve first reaches `loss`: the point's index and the fraction of the way to it from
// the point before (linear in the loss; 1 at the first point).
std::optional<std::pair<std::size_t, double>> reach(const LossCurve& curve, double loss) {
  for (std::size_t i = 0; i < curve.points.size(); ++i) {
    const double value = curve.points[i].second;
    if (value > loss) continue;
    if (i == 0) return std::pair<std::size_t, double>{0, 1.0};
    const double before = curve.points[i - 1].second;
    return std::pair<std::size_t, double>{i, (before - loss) / (before - value)};
  }
  return std::nullopt;
}

double between(const std::vector<double>& x, std::size_t i, double fraction) {
  return i == 0 ? x[0] : x[i - 1] + (x[i] - x[i - 1]) * fraction;
}

}  // namespace

std::optional<double> tokens_to_reach(const LossCurve& curve, double loss) {
  const auto at = reach(curve, loss);
  if (!at) return std::nullopt;
  std::vector<double> tokens;
  for (const auto& p : curve.points) tokens.push_back(p.first);
  return between(tokens, at->first, at->second);
}

std::optional<double> seconds_to_reach(const LossCurve& curve, double loss) {
  const auto at = reach(curve, loss);
  if (!at || curve.seconds.size() != curve.points.size()) return std::nullopt;
  return between(curve.seconds, at->first, at->second);
}

LossCurve read_run_curve(const std::filesystem::path& steps_csv, double tokens_per_step) {
  const std::string source = steps_csv.string();
  std::ifstream in(steps_csv);
  if (!in) throw InputError(source, "file", "expected the run's steps.csv (it trained: --gradients corpus)");
  std::string line;
  if (!std::getline(in, line)) throw InputError(source, "header", "expected a header row");
  const std::vector<std::string> header = split_csv_line(line);
  const auto column = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    throw InputError(source, "header", "expected a '" + name + "' column");
  };
  const std::size_t step = column("step"), seconds = column("step_time_s"), loss = column("validation_loss");
  LossCurve curve;
  curve.file = steps_csv;
  double elapsed = 0.0, last_step = 0.0;
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    const std::string where = "row " + std::to_string(row);
    if (cells.size() <= std::max({step, seconds, loss})) throw InputError(source, where, "expected every header column");
    double t = 0.0, s = 0.0;
    if (!parse_number(cells[step], t) || !parse_number(cells[seconds], s) || t <= last_step || s < 0.0)
      throw InputError(source, where, "expected increasing step numbers and step times >= 0");
    last_step = t;
    elapsed += s;
    if (cells[loss].empty()) continue;  // no validation after this step
    double value = 0.0;
    if (!parse_number(cells[loss], value)) throw InputError(source, where, "expected a number in validation_loss");
    curve.points.emplace_back(t * tokens_per_step, value);
    curve.seconds.push_back(elapsed);
  }
  if (curve.points.empty()) throw InputError(source, "validation_loss", "expected at least one row with a loss");
  return curve;
}

std::string loss_label(double loss) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, loss);
  return std::string(buffer, result.ptr);
}

}  // namespace asteria::cli::study

// Text, CSV, Markdown and JSON renderings of a comparison.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>

#include "apps/asteria/comparison.hpp"
#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"

namespace asteria::cli {
namespace {

using problems::RunOutcome;

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

bool has_losses(const ComparisonEntry& e) { return e.run.outcome != RunOutcome::unavailable && !e.run.losses.empty(); }

std::string steps_to_target(const ComparisonEntry& e) {
  if (!has_losses(e)) return "-";
  return e.run.steps_to_target ? std::to_string(*e.run.steps_to_target) : "not reached";
}

// One row of the table, as strings: optimizer, steps to target, final loss, excess ratio, wall time, note.
std::vector<std::string> row(const ComparisonResult& r, const ComparisonEntry& e) {
  const bool losses = has_losses(e);
  return {std::string(optim::to_string(e.run.kind)), steps_to_target(e),
          losses ? format("%.4e", e.run.final_loss()) : "-",
          losses ? format("%.2e", r.excess_ratio(e.run.final_loss())) : "-",
          e.run.outcome == RunOutcome::unavailable ? "-" : format("%.3f", e.wall_time_s),
          e.run.outcome == RunOutcome::completed ? "" : std::string(to_string(e.run.outcome)) + ": " + e.run.message};
}

const std::vector<std::string> kColumns = {"optimizer", "steps to target", "final loss", "final excess ratio",
                                           "wall time (s)", "note"};

std::string describe_problem(const ComparisonResult& r) {
  const problems::MatrixRegressionSpec& p = r.settings.problem;
  std::ostringstream s;
  s << "Matrix regression loss(W) = 1/2 |X W Z - Y|^2 / N, W " << p.rows << "x" << p.cols << ", N = " << p.samples
    << ", P = " << p.outputs << ", cond(X) = " << format("%g", p.condition_x)
    << ", cond(Z) = " << format("%g", p.condition_z) << ", seed " << p.seed << ", " << io::to_string(r.settings.dtype)
    << ", default hyperparameters\n"
    << "initial loss " << format("%.4e", r.initial_loss) << ", optimal loss " << format("%.4e", r.optimal_loss)
    << ", target loss " << format("%.4e", r.target_loss) << " (excess <= " << format("%g", r.settings.target_ratio)
    << " x initial excess), budget " << r.settings.steps << " steps\n";
  return s.str();
}

nlohmann::ordered_json hyperparameters_json(const optim::Hyperparameters& hp) {
  return {{"lr", hp.lr},
          {"beta1", hp.beta1},
          {"beta2", hp.beta2},
          {"eps", hp.eps},
          {"weight_decay", hp.weight_decay},
          {"precondition_frequency", hp.precondition_frequency},
          {"max_precond_dim", hp.max_precond_dim},
          {"shampoo_beta", hp.effective_shampoo_beta()},
          {"start_preconditioning_step", hp.start_preconditioning_step},
          {"exponent_override", hp.exponent_override},
          {"grafting", hp.grafting},
          {"graft_beta2", hp.graft_beta2},
          {"graft_eps", hp.graft_eps},
          {"root_method", hp.root_method == optim::RootMethod::eigen ? "eigen" : "coupled-newton"},
          {"newton_schulz_steps", hp.newton_schulz_steps},
          {"nesterov", hp.nesterov}};
}

std::string summary_json(const ComparisonResult& r) {
  const problems::MatrixRegressionSpec& p = r.settings.problem;
  nlohmann::ordered_json j;
  j["problem"] = {{"name", "matrix_regression"},   {"rows", p.rows},
                  {"cols", p.cols},                {"samples", p.samples},
                  {"outputs", p.outputs},          {"condition_x", p.condition_x},
                  {"condition_z", p.condition_z},  {"solution_scale", p.solution_scale},
                  {"noise_scale", p.noise_scale},  {"seed", p.seed},
                  {"initial_loss", r.initial_loss}, {"optimal_loss", r.optimal_loss},
                  {"target_loss", r.target_loss}};
  j["settings"] = {{"steps", r.settings.steps},
                   {"target_ratio", r.settings.target_ratio},
                   {"dtype", io::to_string(r.settings.dtype)}};
  j["optimizers"] = nlohmann::ordered_json::array();
  for (const ComparisonEntry& e : r.entries) {
    nlohmann::ordered_json o = {{"optimizer", optim::to_string(e.run.kind)},
                        {"outcome", problems::to_string(e.run.outcome)},
                        {"message", e.run.message},
                        {"steps_run", e.run.steps_run()},
                        {"steps_to_target", nullptr},
                        {"final_loss", nullptr},
                        {"final_excess_ratio", nullptr},
                        {"wall_time_s", e.wall_time_s},
                        {"hyperparameters", hyperparameters_json(e.run.hyperparameters)},
                        {"counters",
                         {{"refreshes", e.run.counters.refreshes},
                          {"refresh_failures", e.run.counters.refresh_failures},
                          {"skipped_non_finite_blocks", e.run.counters.skipped_non_finite_blocks}}}};
    if (e.run.steps_to_target) o["steps_to_target"] = *e.run.steps_to_target;
    if (has_losses(e)) {
      o["final_loss"] = e.run.final_loss();
      o["final_excess_ratio"] = r.excess_ratio(e.run.final_loss());
    }
    j["optimizers"].push_back(std::move(o));
  }
  return j.dump(2) + "\n";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string table_csv(const ComparisonResult& r) {
  std::string csv = "optimizer,outcome,steps_to_target,final_loss,final_excess_ratio,wall_time_s,note\n";
  for (const ComparisonEntry& e : r.entries) {
    const bool losses = has_losses(e);
    csv += std::string(optim::to_string(e.run.kind)) + ',' + problems::to_string(e.run.outcome) + ',' +
           (e.run.steps_to_target ? std::to_string(*e.run.steps_to_target) : "") + ',' +
           (losses ? format("%.10g", e.run.final_loss()) : "") + ',' +
           (losses ? format("%.6g", r.excess_ratio(e.run.final_loss())) : "") + ',' + format("%.6f", e.wall_time_s) +
           ',' + csv_field(e.run.message) + '\n';
  }
  return csv;
}

std::string table_markdown(const ComparisonResult& r) {
  std::string md = describe_problem(r) + "\n|";
  for (const std::string& c : kColumns) md += ' ' + c + " |";
  md += "\n|";
  for (std::size_t i = 0; i < kColumns.size(); ++i) md += (i == 0 || i + 1 == kColumns.size()) ? " :--- |" : " ---: |";
  md += '\n';
  for (const ComparisonEntry& e : r.entries) {
    md += '|';
    for (const std::string& cell : row(r, e)) md += ' ' + cell + " |";
    md += '\n';
  }
  return md;
}

std::string steps_csv(const ComparisonResult& r) {
  std::string csv = "step,optimizer,loss\n";
  for (const ComparisonEntry& e : r.entries) {
    const std::string name(optim::to_string(e.run.kind));
    for (std::size_t t = 0; t < e.run.losses.size(); ++t)
      csv += std::to_string(t) + ',' + name + ',' + format("%.10g", e.run.losses[t]) + '\n';
  }
  return csv;
}

}  // namespace

void print_comparison(const ComparisonResult& r, std::ostream& out) {
  out << describe_problem(r) << '\n';
  std::vector<std::vector<std::string>> rows = {kColumns};
  for (const ComparisonEntry& e : r.entries) rows.push_back(row(r, e));
  std::vector<std::size_t> width(kColumns.size(), 0);
  for (const auto& cells : rows)
    for (std::size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], cells[c].size());
  for (const auto& cells : rows) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      // Names and notes left-aligned, numbers right-aligned.
      line += (c == 0 || c + 1 == cells.size()) ? cells[c] + pad : pad + cells[c];
      if (c + 1 < cells.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

void write_comparison(const ComparisonResult& r, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw InputError(dir.string(), "--out",
                     "expected a directory that exists or can be created" + (ec ? ": " + ec.message() : std::string()));
  io::write_file_atomically(dir / "table.csv", table_csv(r));
  io::write_file_atomically(dir / "table.md", table_markdown(r));
  io::write_file_atomically(dir / "steps.csv", steps_csv(r));
  io::write_file_atomically(dir / "summary.json", summary_json(r));
}

}  // namespace asteria::cli

// Text, CSV, Markdown and JSON renderings of a comparison.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>

#include "apps/asteria/comparison.hpp"
#include "apps/asteria/table.hpp"
#include "core/common/number_text.hpp"
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

// For people: the rows of row(), names and notes left-aligned, numbers right-aligned.
Table display_table(const ComparisonResult& r) {
  Table t{kColumns, {false, true, true, true, true, false}, {}};
  for (const ComparisonEntry& e : r.entries) t.add_row(row(r, e));
  return t;
}

// For scripts: every digit.
Table data_table(const ComparisonResult& r) {
  Table t{{"optimizer", "outcome", "steps_to_target", "final_loss", "final_excess_ratio", "wall_time_s", "note"},
          {},
          {}};
  for (const ComparisonEntry& e : r.entries) {
    const bool losses = has_losses(e);
    t.add_row({std::string(optim::to_string(e.run.kind)), std::string(problems::to_string(e.run.outcome)),
               e.run.steps_to_target ? std::to_string(*e.run.steps_to_target) : "",
               losses ? exact_number(e.run.final_loss()) : "",
               losses ? exact_number(r.excess_ratio(e.run.final_loss())) : "", exact_number(e.wall_time_s),
               e.run.message});
  }
  return t;
}

std::string steps_csv(const ComparisonResult& r) {
  std::string csv = "step,optimizer,loss\n";
  for (const ComparisonEntry& e : r.entries) {
    const std::string name(optim::to_string(e.run.kind));
    for (std::size_t t = 0; t < e.run.losses.size(); ++t)
      csv += std::to_string(t) + ',' + name + ',' + exact_number(e.run.losses[t]) + '\n';
  }
  return csv;
}

}  // namespace

void print_comparison(const ComparisonResult& r, std::ostream& out) {
  out << describe_problem(r) << '\n' << table_text(display_table(r));
}

void write_comparison(const ComparisonResult& r, const std::filesystem::path& dir) {
  io::write_file_atomically(dir / "table.csv", cli::table_csv(data_table(r)));
  io::write_file_atomically(dir / "table.md", describe_problem(r) + "\n" + cli::table_markdown(display_table(r)));
  io::write_file_atomically(dir / "steps.csv", steps_csv(r));
  io::write_file_atomically(dir / "summary.json", summary_json(r));
}

}  // namespace asteria::cli

#pragma once
// Time and energy to a target loss: a study's `targets` section joins loss-against-tokens curves
// (measured by Asteria on a proxy model, or any curve given as a file with its source) with each
// run's simulated tokens per second and energy per token. The tokens to reach a loss are the
// curve's (the optimizer's convergence, measured elsewhere); the time and energy are the
// simulated machine's. A projection: the curve's tokens are taken to hold on the target machine
// and model at the run's staleness. A run that trains (a data-true simulation with --gradients
// corpus) brings its own curve instead, with the simulated seconds to each point: its time to a
// loss is then simulated directly, the check of the projection.
//
//   targets:
//     losses: [3.2, 3.0]              # the losses to reach
//     curves:
//       - optimizer: soap             # the runs of this optimizer ...
//         staleness: 5                # ... at this S (optional: any S)
//         file: curves/soap-s5.csv    # CSV with a header: tokens and loss columns, or a step
//         loss_column: validation_loss    # column with tokens_per_step (asteria train's steps.csv)
//         tokens_per_step: 4096       # (optional) when the file counts steps, not tokens
//         source: "asteria train gpt-25m seed 1, validation loss"
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace asteria::cli::study {

struct StudyPoint;

struct LossCurve {
  std::string optimizer;
  std::optional<int> staleness;
  std::filesystem::path file;
  std::string source;
  std::vector<std::pair<double, double>> points;  // (tokens, loss), tokens increasing
  // The run's elapsed seconds at each point, where the curve is a run's own (empty otherwise).
  std::vector<double> seconds;
};

struct Targets {
  std::vector<double> losses;
  std::vector<LossCurve> curves;
};

// Parses the section and reads the curve files (relative to `base_dir`). InputError naming the
// study file and field ("targets.curves[1].file"), or the curve file and its row, otherwise.
Targets parse_targets(const YAML::Node& node, const std::string& source, const std::filesystem::path& base_dir);

// The curve of a run: its optimizer's at its staleness, else its optimizer's without one; null
// when none.
const LossCurve* curve_for(const Targets& targets, const StudyPoint& point);

// Tokens at which the curve first reaches `loss` or below, linearly between the point before it
// and that one; nullopt when it never does.
std::optional<double> tokens_to_reach(const LossCurve& curve, double loss);

// Seconds at which the curve first reaches `loss` (interpolated as its tokens); nullopt when it
// never does or the curve has no clock.
std::optional<double> seconds_to_reach(const LossCurve& curve, double loss);

// The validation-loss curve of a run that trained, from its steps.csv (step, step_time_s and
// validation_loss columns; every step's time counts, warm-up included), with `tokens_per_step`.
// InputError naming the file and the column or row otherwise.
LossCurve read_run_curve(const std::filesystem::path& steps_csv, double tokens_per_step);

// "3.2" for a target loss in column names (the shortest text that reads back as it).
std::string loss_label(double loss);

}  // namespace asteria::cli::study

#pragma once
// The optimizer comparison behind `asteria compare` and `asteria demo`: every optimizer with its
// default hyperparameters on the comparison problem (core/problems/matrix_regression.hpp), a
// fixed step budget, steps to a relative target, final loss and wall time.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <vector>

#include "core/io/npy.hpp"
#include "core/problems/comparison.hpp"
#include "core/problems/matrix_regression.hpp"

namespace asteria::cli {

struct ComparisonSettings {
  std::int64_t steps = 2000;   // budget per optimizer
  double target_ratio = 1e-3;  // target: excess loss <= ratio x initial excess loss
  io::DType dtype = io::DType::float32;
  problems::MatrixRegressionSpec problem;  // seed included
  std::vector<optim::OptimizerKind> optimizers = {optim::OptimizerKind::adamw, optim::OptimizerKind::shampoo,
                                                  optim::OptimizerKind::soap, optim::OptimizerKind::kl_shampoo,
                                                  optim::OptimizerKind::muon};
};

struct ComparisonEntry {
  problems::OptimizerRun run;
  double wall_time_s = 0.0;  // the whole run: optimizer steps and gradient evaluations
};

struct ComparisonResult {
  ComparisonSettings settings;
  double initial_loss = 0.0;
  double optimal_loss = 0.0;
  double target_loss = 0.0;
  std::vector<ComparisonEntry> entries;

  // (loss - optimum) / (initial - optimum)
  double excess_ratio(double loss) const { return (loss - optimal_loss) / (initial_loss - optimal_loss); }
};

// Runs every optimizer of the settings. Reports progress on `progress` once the comparison has
// run for more than a second.
ComparisonResult run_comparison(const ComparisonSettings& settings, std::ostream& progress);

// The table (optimizer, steps to target or "not reached", final loss, wall time) as text.
void print_comparison(const ComparisonResult& result, std::ostream& out);

// Writes table.csv, table.md, steps.csv and summary.json into `dir` (created if missing).
void write_comparison(const ComparisonResult& result, const std::filesystem::path& dir);

}  // namespace asteria::cli

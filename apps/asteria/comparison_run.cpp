#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>

#include "apps/asteria/comparison.hpp"

namespace asteria::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Progress lines on stderr, only once the comparison has been running for over a second and
// then at most twice a second, so short runs stay quiet.
class Progress {
 public:
  explicit Progress(std::ostream& out) : out_(out), start_(Clock::now()), last_(start_) {}

  void step(std::string_view optimizer, std::int64_t t, std::int64_t steps) {
    const Clock::time_point now = Clock::now();
    if (seconds_between(start_, now) < 1.0 || seconds_between(last_, now) < 0.5) return;
    last_ = now;
    out_ << "compare: " << optimizer << " step " << t << '/' << steps << " (" << elapsed(now) << " s)\n";
  }
  void done(std::string_view optimizer, const problems::OptimizerRun& run) {
    const Clock::time_point now = Clock::now();
    if (seconds_between(start_, now) < 1.0) return;
    out_ << "compare: " << optimizer << ' ' << problems::to_string(run.outcome) << " (" << elapsed(now) << " s)\n";
  }

 private:
  std::string elapsed(Clock::time_point now) const {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", seconds_between(start_, now));
    return text;
  }
  std::ostream& out_;
  Clock::time_point start_;
  Clock::time_point last_;
};

}  // namespace

ComparisonResult run_comparison(const ComparisonSettings& settings, std::ostream& progress_out) {
  const problems::MatrixRegression problem(settings.problem);
  ComparisonResult result;
  result.settings = settings;
  result.initial_loss = problem.loss(problem.initial_point());
  result.optimal_loss = problem.optimal_loss();
  result.target_loss = problems::target_loss(problem, settings.target_ratio);

  Progress progress(progress_out);
  for (optim::OptimizerKind kind : settings.optimizers) {
    const std::string_view name = optim::to_string(kind);
    const optim::Hyperparameters hp = optim::default_hyperparameters(kind);
    auto on_step = [&](std::int64_t t) { progress.step(name, t, settings.steps); };
    const Clock::time_point start = Clock::now();
    ComparisonEntry entry;
    entry.run = settings.dtype == io::DType::float32
                    ? problems::run_optimizer<float>(problem, kind, hp, settings.steps, settings.target_ratio, on_step)
                    : problems::run_optimizer<double>(problem, kind, hp, settings.steps, settings.target_ratio, on_step);
    entry.wall_time_s = seconds_between(start, Clock::now());
    progress.done(name, entry.run);
    result.entries.push_back(std::move(entry));
  }
  return result;
}

}  // namespace asteria::cli

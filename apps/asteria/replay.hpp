#pragma once
// `asteria replay TRACE --hw PROFILE`: rebuilds the run a native trace recorded (its options, its
// model's layers and declared costs, from the trace's metadata; its step plan from the same
// generator, checked against the plan the trace executed) and runs it on the simulator; then
// compares the recorded and the predicted steps. What-if options change the replayed run.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "apps/asteria/run_report.hpp"
#include "traces/native_trace.hpp"

namespace asteria::cli {

// One step as a trace shows it (one unit): its length, the device's compute in it (forward and
// backward ops), the communication it did not hide (the time a collective ran while the device
// stream did not) and the rest, the optimizer time the step could not hide.
struct TracedStep {
  std::int64_t step = 0;
  double step_s = 0.0;
  double compute_s = 0.0;
  double exposed_communication_s = 0.0;
  double visible_optimizer_s = 0.0;  // step_s - compute_s - exposed_communication_s
};

// The steps of unit `unit` in the trace (its "step" records), in step order.
std::vector<TracedStep> traced_steps(const traces::NativeTrace& trace, int unit = 0);

struct StepComparison {
  std::int64_t step = 0;
  TracedStep recorded;
  TracedStep predicted;
  double step_error = 0.0;  // predicted / recorded - 1
};

struct ReplayErrors {
  std::size_t steps = 0;
  double median_abs_step_error = 0.0;  // of |step_error|
  double p99_abs_step_error = 0.0;
  double mean_abs_step_error = 0.0;
  double total_step_error = 0.0;               // Σ predicted / Σ recorded - 1
  double visible_optimizer_error = 0.0;        // Σ predicted visible / Σ recorded visible - 1 (0 when both 0)
  double visible_optimizer_error_of_step = 0.0;  // |Σ predicted − Σ recorded visible| / Σ recorded step time
};

// Pairs the steps both traces hold; InputError (naming `source`) when they share none.
std::vector<StepComparison> compare_steps(const std::vector<TracedStep>& recorded,
                                          const std::vector<TracedStep>& predicted, const std::string& source);
ReplayErrors replay_errors(const std::vector<StepComparison>& steps);

struct ReplaySettings {
  std::filesystem::path trace;     // the recorded native trace
  std::string hw;                  // profile the replay simulates
  std::vector<std::string> what_if;  // run options that override the recorded ones ("--staleness", "5", ...)
  std::optional<std::filesystem::path> out;
  bool overwrite = false;
  bool progress = true;
};

struct ReplayResult {
  RunReport predicted;             // the simulated run
  std::vector<StepComparison> steps;
  ReplayErrors errors;
  bool what_if = false;            // the replayed run differs from the recorded one
  std::string plan_check;          // "the same plan" or what differs
};

// Runs the replay; with `out`, writes replay.csv (per step), summary.json, the predicted trace
// (trace.csv) and trace.json with both timelines side by side.
ReplayResult run_replay(const ReplaySettings& settings, std::ostream& progress);

void print_replay(const ReplayResult& result, std::ostream& out);

}  // namespace asteria::cli

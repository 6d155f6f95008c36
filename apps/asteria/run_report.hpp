#pragma once
// What every run of the runtime (synth, sim, train) reports, in one shape and one writer:
//   steps.csv     one row per step of unit 0, the same columns in every verb (run_report.cpp
//                 lists them; SI units in the names), then the verb's own columns (train: loss,
//                 validation_loss, tokens_per_s);
//   summary.json  one flat object: the settings, the fit, order statistics over the measured
//                 steps, totals, the trace's size, then the verb's own keys;
//   plan.txt      the step plan every step ran (unit 0's; plan::to_text), one op per line;
//   stdout        the same figures for people, every number in full (scientific notation where
//                 needed, never cut to a fixed width).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/asteria/run_config_options.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/run_summary.hpp"
#include "hwmodels/energy.hpp"
#include "core/runtime/store/store_errors.hpp"

namespace asteria::cli {

// The trace a run wrote (run_trace.hpp), for the summary.
struct TraceInfo {
  bool written = false;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  int units = 0;                    // units 0 .. units-1 were recorded
  std::size_t records = 0;
  std::size_t dropped_records = 0;  // past --trace-max-bytes
  std::size_t native_bytes = 0;     // trace.csv
  std::size_t chrome_bytes = 0;     // trace.json
};

struct RunReport {
  RunConfig spec;
  std::string name;      // the configuration's name in a comparison ("soap async S=5"); may be empty
  std::string hw;        // the profile's name, when the run used one
  std::string model;     // the model's name (or "synthetic stack")
  std::string platform;  // what the run ran on, for people
  int units = 1;
  int nodes = 1;
  int host_workers = 0;  // per unit, as resolved
  std::int64_t warmup_steps = 0;
  std::size_t parameters = 0;
  std::size_t blocks = 0;       // per unit
  std::size_t state_bytes = 0;  // optimizer state per unit
  double tokens_per_step = 0.0;  // tokens every unit together trains on in a step (0: not a token model)
  std::array<std::size_t, 3> capacity_bytes{};  // what the optimizer state may use per tier and unit
  bool fits = true;
  std::vector<runtime::TierShortfall> shortfall;
  std::string fit_message;
  std::vector<runtime::StepRecord> records;  // unit 0
  runtime::RunSummary summary;
  // The energy of the measured steps, every unit together (sim: the profile's power over each
  // unit's busy resources, hwmodels/energy.hpp); absent when the profile gives no power.
  std::optional<hw::Energy> energy;
  std::int64_t refresh_failures = 0;
  double wall_seconds = 0.0;
  TraceInfo trace;
  std::string plan;  // the step plan as text (empty when no step ran)
  // The verb's own summary keys (scalars), after the shared ones.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> extra;
  // The verb's own steps.csv columns, after the shared ones: names, and one row of cells per record.
  std::vector<std::string> extra_columns;
  std::vector<std::vector<std::string>> extra_cells;
  // A resumed run continuing in its own --out: the steps.csv rows of its steps before the
  // checkpoint (as written then), kept ahead of its own rows.
  std::vector<std::string> earlier_rows;
};

// The shared steps.csv columns, in order.
const std::vector<std::string>& step_columns();
// The header and rows (with a leading `config` column holding report.name when `with_config`).
std::string steps_csv_header(const RunReport& report, bool with_config);
std::string steps_csv_rows(const RunReport& report, bool with_config);
// The flat summary object.
nlohmann::ordered_json summary_json(const RunReport& report);
// What ran the host's math, as summary keys: the processor, the vector instructions the
// optimizer loops use, and the BLAS library's kernels (whether a fallback, and who chose them).
nlohmann::ordered_json host_math_json();
// steps.csv and plan.txt (when the run fit) and summary.json into `dir` (prepared by prepare_output).
void write_report(const RunReport& report, const std::filesystem::path& dir);
// The figures for people: settings, fit, step-time statistics, waits, refreshes, bytes.
void print_report(const RunReport& report, std::ostream& out);

// Seconds for people, with 4 significant digits and the unit: "1.702 s", "2.12e-05 s".
std::string seconds_text(double seconds);
// Bytes for people in the largest binary unit that keeps the value >= 1, 4 significant digits:
// "26.31 GiB", "48.00 MiB", "512 B", "0 B".
std::string bytes_text(double bytes);

}  // namespace asteria::cli

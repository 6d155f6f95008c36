#pragma once
// A study's results: each run's summary.json read back, and the study table built from them
// (table.csv: every column in SI units, for scripts and plots; table.md: the essential columns in
// seconds and GiB, for people).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/asteria/study_spec.hpp"

namespace asteria::cli::study {

// The per-run numbers the table shows, in column order.
enum class Metric : std::size_t {
  p50_step_s,
  p99_step_s,
  p99_over_p50,
  mean_step_s,
  compute_s,
  visible_optimizer_s,
  exposed_communication_s,  // data-parallel collectives the step did not hide (0 on one unit)
  refresh_wait_s,
  state_move_wait_s,
  max_staleness,
  peak_device_bytes,
  peak_host_bytes,
  peak_nvme_bytes,
  network_bytes,  // bytes of unit 0's data-parallel collectives per measured step (0 on one unit)
  tokens_per_s,   // tokens all units train on per second (tokens per step / mean step)
  // Energy per measured step and per token, every unit together, and the mean power: absent
  // (empty cells) where the profile gives no power.
  energy_per_step_j,
  energy_per_token_j,
  mean_power_w,
};
inline constexpr std::size_t kMetricCount = 18;
// Metrics a run that fits may leave out (null in its summary.json).
bool may_be_absent(Metric metric) noexcept;

std::string_view key_of(Metric metric) noexcept;  // the summary.json key and table.csv column

// One tier the model did not fit in.
struct Shortfall {
  std::string tier;
  double needed_bytes = 0.0;
  double free_bytes = 0.0;
  double capacity_bytes = 0.0;
};

struct RunResult {
  std::string failure;  // why the run gave no result ("exit code 1", "summary.json: fits: ..."); empty if none
  bool fits = false;
  std::array<std::optional<double>, kMetricCount> metrics;  // all present when fits
  std::vector<Shortfall> shortfall;                          // the tiers short, when !fits
  // A run that trained (--gradients corpus): its own validation-loss curve against its clock.
  std::optional<LossCurve> own_curve;

  bool failed() const { return !failure.empty(); }
  const std::optional<double>& operator[](Metric m) const { return metrics[static_cast<std::size_t>(m)]; }
};

// The run directory of a point, relative to the study directory: "runs/<slug>".
std::filesystem::path relative_run_dir(const StudyPoint& point);

// Reads run_dir/summary.json. `process_failure` (empty when the run exited with 0) makes the
// result a failure outright. A missing or malformed summary is a failure naming the file, the
// key and what was expected; every metric must be a number when fits is true.
RunResult read_run_result(const std::filesystem::path& run_dir, const std::string& process_failure);

// "device 12.3 GiB short; host 1.0 GiB short" (needed minus free, GiB = 2^30 bytes).
std::string shortfall_text(std::span<const Shortfall> shortfall);

// table.csv: config, hw, model, optimizer, placement, staleness, fits, the metrics, shortfall,
// run_dir, then one column per extra axis. SI units; empty cells for what a run did not report.
// A failed run has fits=false and its failure in the shortfall column.
std::string table_csv(const StudySpec& spec, std::span<const RunResult> results);

// table.md, one row per run: config, fits, p50 step (s), p99 step (s), p99/p50, compute (s),
// visible optimizer (s), refresh wait (s), state-move wait (s), peak device (GiB),
// network/rank/step (GiB) (network_bytes: one rank's collectives per step), energy/step (J); the other
// columns are in table.csv only. fits is "yes", the shortfall text of a run that does not fit
// ("device 12.3 GiB short"; "no" when it gives none) or "failed: <why> (log: runs/<config>/log.txt)".
// Numbers to 3 significant figures (significant() in core/common/number_text.hpp: plain decimals
// with every integer digit while the exponent is in [-4, 5), "1.70", "145", "0.000212"; scientific
// outside it): times in seconds, bytes in GiB (2^30); empty cells for what a run did not report.
std::string table_markdown(const StudySpec& spec, std::span<const RunResult> results);

// loss_curves.csv of a study with targets: per run that has a loss curve, each point of it as
// the run sees it: config, kind (simulated: the run's own curve against its simulated clock;
// projected: the joined curve's tokens over the run's tokens per second), tokens, time_s,
// energy_j (tokens times the run's energy per token; empty without power), loss. The loss
// against time per policy; empty (the header only) without targets.
std::string loss_curves_csv(const StudySpec& spec, std::span<const RunResult> results);

}  // namespace asteria::cli::study

#pragma once
// Settings of the synthetic step driver (step_driver.hpp) and what it records per step.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/platform/cost.hpp"
#include "core/platform/memory.hpp"
#include "core/platform/time.hpp"
#include "core/runtime/driver/shape_only_block.hpp"
#include "core/runtime/service/service_options.hpp"
#include "core/runtime/store/move_ledger.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::runtime {

// Where the optimizer's every-step device numerics (accumulate, apply, publish) run. Either
// way refreshes run real numerics on the platform's host workers; say which mode a figure used.
enum class NumericsMode {
  // Real numerics inside device-stream Work bodies (which also last at least their modelled
  // duration on an emulated device). On a machine without a GPU they take CPU time from the
  // refresh workers, as CPU training does.
  full,
  // Device work is modelled only (no bodies), so the host CPU stays free as when a real GPU
  // runs it; the first warm-up steps run the real numerics so that the statistics the
  // refreshes read are real.
  emulated,
  // No numbers at all (data-free simulation): blocks are shapes with the real refresh schedule
  // and costs (ShapeOnlyBlock), state is declared bytes, refreshes only take time. Needs a
  // ModelData::shapes model (or any model: its values are ignored) and DriverOptions::shapes.
  shapes,
};
std::string_view to_string(NumericsMode mode) noexcept;
// "full", "emulated" or "shapes"; throws InputError naming `source` otherwise.
NumericsMode parse_numerics_mode(std::string_view text, const std::string& source = "--mode");

// Modelled seconds of a device work item (the device model in use); feeds compute_s and
// optimizer_device_s. Empty: every work counts 0 s.
using DeviceSeconds = std::function<platform::Seconds(const platform::Cost&)>;

// What a block costs when only its shape exists (NumericsMode::shapes): its refreshes and the
// bytes of its optimizer state, as the real optimizer of that kind would have them.
struct ShapeFigures {
  RefreshCosts refresh;
  std::size_t state_bytes = 0;
};
using ShapeModel = std::function<ShapeFigures(optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                                              linalg::index rows, linalg::index cols)>;

struct DriverOptions {
  NumericsMode mode = NumericsMode::full;
  // Steps 1..warmup_steps are flagged as warm-up (left out of summaries); in emulated mode they
  // also run the real device numerics.
  int warmup_steps = 0;
  StoreOptions store;
  ServiceOptions service;
  DeviceSeconds device_seconds;
  ShapeModel shapes;  // required in NumericsMode::shapes
};

// Throws InputError naming `source` for a negative warm-up count or invalid store or service
// options.
void validate(const DriverOptions& options, const std::string& source);

// One step's figures (platform clock, seconds; bytes). The step runs from its first hook to the
// moment the device stream has drained.
struct StepRecord {
  optim::Step step = 0;
  bool warmup = false;
  platform::Seconds step_time_s = 0.0;
  // Modelled forward + backward device time: what the step would take without an optimizer.
  platform::Seconds compute_s = 0.0;
  // step_time_s − compute_s: the time the step spends beyond its forward/backward compute
  // because of the optimizer — optimizer device work, waits for late refreshes, waits for state
  // moves, and the host-side bookkeeping between kernels. The driver issues every wait while
  // the device stream is idle, so each wait below is part of this figure, never hidden.
  platform::Seconds visible_optimizer_s = 0.0;
  platform::Seconds refresh_wait_s = 0.0;      // the service's waits for late refreshes
  platform::Seconds acquire_wait_s = 0.0;      // the store's waits for state moves
  platform::Seconds optimizer_device_s = 0.0;  // modelled device time of accumulate/apply/publish
  std::int64_t refreshes_submitted = 0;
  std::int64_t refreshes_published = 0;
  std::int64_t queue_depth = 0;  // refresh jobs held at the step end
  optim::Step max_staleness = 0;
  std::size_t shadow_bytes = 0;
  std::array<std::size_t, platform::kTierCount> resident_bytes{};  // Memory usage at the step end
  std::array<std::size_t, platform::kTierCount> peak_bytes{};      // high-water mark so far
  std::array<std::size_t, platform::kTierCount> capacity_bytes{};
  TierPairTotals bytes_moved;  // moves that finished during the step, per (from, to)
};

}  // namespace asteria::runtime

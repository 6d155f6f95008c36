#pragma once
// Settings of the step driver (step_driver.hpp) and what it records per step.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/plan/schedule.hpp"
#include "core/platform/cost.hpp"
#include "core/platform/execution.hpp"
#include "core/platform/memory.hpp"
#include "core/platform/time.hpp"
#include "core/runtime/service/service_options.hpp"
#include "core/runtime/store/block_placement.hpp"
#include "core/runtime/store/move_ledger.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::runtime {

class SharedStepSetup;

// Modelled seconds of a device work item (the device model in use); feeds compute_s and
// optimizer_device_s. Empty: every work counts 0 s.
using DeviceSeconds = std::function<platform::Seconds(const platform::Cost&)>;

struct DriverOptions {
  // Whether numerics run (platform/execution.hpp); the platform says where time comes from, and
  // the pair is validated together. shapes: blocks are optim::ShapeBlocks (the optimizer's own
  // schedule, costs and state sizes from shapes), state is declared bytes, the model's values
  // are never touched.
  platform::Numerics numerics = platform::Numerics::values;
  // Steps 1..warmup_steps are flagged as warm-up (left out of summaries); with refresh numerics
  // they also run the device's numerics.
  int warmup_steps = 0;
  StoreOptions store;
  // store.policy planned: one entry per block, in the driver's block order (layer by layer, each
  // layer's blocks as the optimizer cuts them), each label equal to the block's. Unused otherwise.
  std::vector<BlockPlacement> planned_blocks;
  ServiceOptions service;
  DeviceSeconds device_seconds;
  // Modelled seconds the issuing thread spends on each plan op it issues (bookkeeping, a launch's
  // host side), passed on the platform's clock when time is not measured (a measured run spends
  // its own). 0: issuing is free.
  platform::Seconds issue_seconds_per_op = 0.0;
  // Which launch is charged for a host-placed optimizer op (plan::NumericsSite): its own host
  // launch (the design), or its hook, the device launch whose body computes it when values are
  // computed. A run on the real backend computing values sets hook_launch (where the time goes);
  // a replay sets what the recorded run did.
  plan::NumericsSite numerics_site = plan::NumericsSite::own_launch;
  // Micro-batches, data-parallel ranks, and the release delay of host-updated blocks (0: the
  // driver picks it, see StepDriver).
  plan::ScheduleOptions schedule;
  // Data-parallel ranks (schedule.data_parallel_ranks > 1, the platform's communicator): each
  // block's refreshes run on one owner rank and the results are shared
  // (service/refresh_sharing.hpp), sent at most every sync_period steps; false: every rank runs
  // every refresh.
  bool share_refreshes = true;
  int sync_period = 1;
  // Drivers of one process running the same model with these options (a simulation's units) may
  // share their set-up (shared_step_setup.hpp); null: each sets up its own.
  std::shared_ptr<SharedStepSetup> shared_setup;
};

// Throws InputError naming `source` for a negative warm-up count or invalid store, service or
// schedule options (a negative host release delay among them).
void validate(const DriverOptions& options, const std::string& source);

// One step's figures (platform clock, seconds; bytes). The step runs from its first op until
// every op of its plan has finished (the device stream has drained).
struct StepRecord {
  optim::Step step = 0;
  bool warmup = false;
  platform::Seconds step_time_s = 0.0;
  // Forward + backward device time: modelled, or measured by the model (asteria train). What the
  // step would take without an optimizer.
  platform::Seconds compute_s = 0.0;
  // Data-parallel ranks: the time the device stream sat idle while the step waited for its
  // collectives (gradient reduces, weight gathers): the communication the step did not hide.
  platform::Seconds exposed_communication_s = 0.0;
  // step_time_s − compute_s − exposed_communication_s: the time the step spends beyond its
  // forward/backward compute because of the optimizer — optimizer device work, waits for late
  // refreshes, waits for state moves, and the host-side bookkeeping between kernels. The driver
  // issues every wait while the device stream is idle, so each wait below is part of this
  // figure, never hidden.
  platform::Seconds visible_optimizer_s = 0.0;
  platform::Seconds refresh_wait_s = 0.0;      // the service's waits for late refreshes
  platform::Seconds state_move_wait_s = 0.0;   // the store's waits for state moves
  platform::Seconds optimizer_device_s = 0.0;  // modelled device time of accumulate/apply/publish
  std::int64_t refreshes_submitted = 0;
  std::int64_t refreshes_published = 0;
  std::int64_t refresh_backlog = 0;  // refresh jobs held at the step end
  optim::Step max_staleness = 0;
  // Bytes held on the shadow tier (host) for refresh snapshot and result buffers at the step end:
  // jobs in flight and the spare buffers kept for the next snapshots. Part of resident_bytes, not
  // of state_bytes.
  std::size_t shadow_bytes = 0;
  // The shadow pool (PreconditionerService, shadow_bound.hpp): its size, the most refresh jobs
  // holding buffers at once during the step, the snapshots' waits for room (part of
  // refresh_wait_s), jobs installed early to make room, and bytes held beyond the pool.
  std::size_t shadow_pool_bytes = 0;
  std::int64_t shadow_jobs = 0;
  platform::Seconds shadow_pool_wait_s = 0.0;
  std::int64_t early_installs = 0;
  std::size_t shadow_overflow_bytes = 0;
  // At the step end: everything the run holds on each tier (Memory usage: optimizer state,
  // refresh snapshot and result buffers, model weights and gradients where the run places them),
  // and of it the optimizer state alone (the state store's own regions).
  std::array<std::size_t, platform::kTierCount> resident_bytes{};
  std::array<std::size_t, platform::kTierCount> state_bytes{};
  std::array<std::size_t, platform::kTierCount> peak_bytes{};      // high-water mark so far
  std::array<std::size_t, platform::kTierCount> capacity_bytes{};
  TierPairTotals bytes_moved;  // the store's moves that finished during the step and the plan's transfers, per (from, to)
  // Bytes of this rank's buffers in the collectives it issued during the step (gradient
  // reduces, weight gathers, refresh results sent or received); 0 for one rank.
  double network_bytes = 0.0;
};

}  // namespace asteria::runtime

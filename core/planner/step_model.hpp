#pragma once
// The placement planner's model of a step: the placement problem of the optimizer blocks
// (placement_problem.hpp) built from a hardware profile, a model and a run configuration, the
// step's other loads on the same resources, and the methods that choose a placement (asteria
// plan's).
//
// Blocks: the step's set-up (runtime::set_up_step over the model's layers, fp32 values and
// state): the step driver's blocks, in its order and with its labels. Per block: state bytes; gradient and weight
// bytes = its values x 4 (fp32: what a host update moves each way); device_update_s = the
// profile's device time (CostModel::gpu_optimizer_seconds, as the simulator charges it) of the
// block's accumulate and apply, plus its publish once every precondition_frequency steps;
// host_update_s = the same phases on one host worker (CostModel::host_worker_charge, as the
// simulator charges them), and at least workers x their memory traffic / the host's memory
// bandwidth, which the workers share (the pool divides host_update_s by the workers).
//
// Fixed loads (the step without the blocks' updates), from the plan the step driver would build
// without blocks (plan::schedule_plan over the set-up's layers):
//   device_compute  every forward and backward op (gpu_step_seconds per piece, recompute included);
//   link_*, nvme_*  every transfer op of the layers (weights fetched, gradients sent, checkpoints
//                   moved): bytes / bandwidth + latency; a transfer between NVMe and the device
//                   uses the disk and the host link (bounce buffers, as the store's moves).
// The refreshes are not in the step: they run on the host workers once every
// precondition_frequency steps, beside the steps (a step waits for a late one: with S = 0, the
// longest refresh job; a resource sum cannot say how long). The prediction is the step between
// refreshes (the simulated median when refreshes are rare); refresh_host_s reports their host
// load, amortized per step, for the reader.
// The issuing thread is a seventh load: the plan's ops (blocks included, as placed) x the
// profile's issue latency.
//
// Capacities (bytes for resting state, per tier): hw::budgets_from(profile) less the model's own
// memory (workload::model_memory with device updates, as asteria sim reserves it for a planned
// placement), less on the host the refresh jobs' shadow pool (the step driver's in-flight bound
// for one unit, runtime::shadow_pool_bounds: the pool grows past it only into host room the
// state leaves free), less a staging reserve on the device and on the host: the largest
// set of blocks the step holds acquired at once (plan::blocks_held_together, every block
// counted), the room the store checks for blocks updated away from where they rest. A unified
// pool (gb10): state that fits the pool whole may rest on either tier up to the pool; otherwise
// the device's budget comes first, the host has the rest.
//
// A host update also has a latency the sums do not see: it starts once its layer's backward is
// done (the device's forward and backward up to there, from the block-free plan) and takes its
// gradient down, one piece of its update on a worker (the driver splits it in pieces of 1e6
// values), its weights back up (and its state from NVMe first): the step lasts at least that
// long, for every block updated on the host (the host path; deferred blocks excepted).
//
// The prediction of a placement: per resource, fixed + the blocks' usage (predict);
// the step time = the busiest of them, the issuer and the longest host path. The optimal method
// solves the problem with the fixed loads in it (as forced pseudo-blocks), so the optimum
// balances the whole step, not the update phase alone (a fixed NVMe load enters the solve as one
// pseudo-block charging both directions at the larger of the two: an over-estimate of the
// smaller, in the solve only); blocks whose host path would bind are then kept off the host
// (their host option priced out, the threshold lowered until the path no longer binds; the best
// prediction kept), and a last pass moves blocks to cheaper options (less summed usage: no NVMe
// or host round trip that buys nothing) while no resource, capacity or path gets worse.
#include <optional>
#include <string>
#include <vector>

#include <array>
#include <span>

#include "core/plan/schedule.hpp"
#include "core/planner/placement_problem.hpp"
#include "core/planner/placement_solver.hpp"
#include "core/run/run_config.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "core/workload/workload_model.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::planner {

struct PlanCapacity {
  std::array<double, platform::kTierCount> budget{};   // hw::budgets_from
  std::array<double, platform::kTierCount> model{};    // the model's own memory
  std::array<double, platform::kTierCount> staging{};  // reserved for staged blocks
  double shadow_host = 0;                               // refresh jobs' room on the host
};

// Data-parallel ranks (run::RunConfig::parallelism over `ranks`): the model's own memory is one
// rank's share (workload::model_memory over the ranks: fsdp's sharded weights and gradients),
// and with sharded state (zero1, zero2, fsdp) a rank places only the blocks it owns
// (plan::assign_block_owners over the blocks' state bytes, as the step driver assigns them), in
// its own memory, beside its own shadow pool and staging.
struct RankShare {
  int ranks = 1;
  int rank = 0;
};

struct StepModel {
  std::string hw;     // the profile's name
  std::string model;  // the model's name
  int batch = 1;      // sequences per step
  RankShare share;    // whose blocks these are
  // Each placed block's index among all the set-up's blocks (those of every rank), and how many
  // there are: a plan file names every block, each placed by its owner's plan.
  std::vector<std::size_t> block_index;
  std::size_t all_blocks = 0;
  PlacementProblem problem;  // blocks in the driver's order, labelled as the driver labels them
  Usage fixed_s{};           // the step's loads beside the blocks' updates
  PlanCapacity capacity;
  double issue_s_per_op = 0;
  // The refreshes' host-worker seconds per step, amortized (warm refreshes every
  // precondition_frequency steps, divided among the workers); not in fixed_s.
  double refresh_host_s = 0;
  // Per block: its host path (resting on the host), and the NVMe read a state resting there adds.
  std::vector<double> host_path_s;
  std::vector<double> nvme_read_s;
  // To rebuild the step plan of a placement (the issuer's op count).
  std::vector<plan::LayerWork> layers;
  std::vector<plan::BlockWork> blocks;  // update_on set per placement
  plan::ScheduleOptions schedule;
};

// `spec`: optimizer, hyperparameters, staleness, schedule options, numerics, warm-up, host
// workers (0: hw::default_host_workers). `weights`: the model's weights (its own memory, its
// sequences per step); `layers`: the same model as the step driver's layers. Throws InputError
// for bad settings, or when the model's own memory exceeds a tier (naming the tier and the
// --*-on options).
StepModel build_step_model(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                           const workload::WorkloadModel& weights, std::span<const runtime::LayerSpec> layers,
                           RankShare share = {});
// The models of ranks 0 .. ranks-1 (set up once): one per rank with sharded state, one (rank 0,
// every block) otherwise, since replicated ranks place alike.
std::vector<StepModel> build_rank_step_models(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                                              const workload::WorkloadModel& weights,
                                              std::span<const runtime::LayerSpec> layers, int ranks);

struct StepPrediction {
  Prediction blocks;  // the blocks' update alone (predict)
  Usage resource_s{};  // fixed + blocks
  double issuer_s = 0;
  double host_path_s = 0;  // the longest host path of the host-updated blocks (0: none)
  double step_s = 0;
  std::string binding;  // a planner resource name, "issuer" or "host_path"
};

StepPrediction predict_step(const StepModel& model, const Assignment& assignment);

// optimal | all-device | all-host | interleaved:K (K >= 1).
struct PlanMethod {
  enum class Kind { optimal, all_device, all_host, interleaved } kind = Kind::optimal;
  int k = 0;
};
PlanMethod parse_plan_method(const std::string& text, const std::string& option);
std::string to_string(const PlanMethod& method);

struct ChosenPlan {
  PlanMethod method;
  Assignment assignment;  // one choice per block
  StepPrediction prediction;
  std::string note;  // how it was found (solver, status, gap; subgroups)
};

struct ChooseOptions {
  int subgroups = 256;      // placement unit: consecutive blocks merged into at most this many
  double time_limit_s = 30;  // the MIP's
  // The MIP stops within this relative gap of its bound: the prediction is coarser than 0.1 %.
  double mip_gap = 1e-3;
};

// Throws InputError when the state fits no tier (the planner's message, naming the tier).
ChosenPlan choose_plan(const StepModel& model, const PlanMethod& method, const ChooseOptions& options);

}  // namespace asteria::planner

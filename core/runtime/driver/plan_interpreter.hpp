#pragma once
// The one interpreter of step plans (core/plan/): runs the typed ops of a StepPlan on a Platform
// with the model, the preconditioner service and the state store, whatever the backend (real,
// sim, fake) and whichever schedule generated the plan.
//
// Per op, in plan order (step_plan.hpp gives the issue rules):
//   forward, backward  one Work on the device stream; the backward's body computes the layer's
//                      gradient (after its last micro-batch) when device numerics run;
//   prefetch, acquire, release   the state store, on the issuing thread (acquire waits: the
//                      state-move wait of the step);
//   publish, accumulate, refresh, update   the preconditioner service's phases: with values,
//                      inside the body of the op's hook launch on the device stream; otherwise
//                      on the issuing thread when the plan reaches them (no values to compute on
//                      the device). A block whose accumulate skips the step (non-finite gradient)
//                      skips its refresh and update; its publish still runs;
//   reduce             once its deps have finished, the average of its bucket's gradients (one
//                      buffer of the model's, TrainingModel::gradient_bucket; or its blocks',
//                      packed) over the world group of the platform's communicator (fp32; bytes
//                      only when the backward did not compute values); the issuing thread does not
//                      wait for it. A platform without a communicator: an InputError;
//   scatter            (sharded gradients) the same average of its bucket's blocks' gradients by
//                      one reduce-scatter, each rank's blocks packed into its share (padded to the
//                      largest): a rank gets back its own blocks' only;
//   gather             (sharded state) the weights of its bucket's blocks from their owners to
//                      every rank: a broadcast when one rank owns them all, else an all-gather,
//                      each rank's share packed (after its own updates when it follows them) and
//                      padded to the largest.
//                      Values a collective brings land in the model's weights or gradients when
//                      the plan first waits for the op (before the hook or the visit that needs
//                      them), or once the step's work has drained (plan_interpreter_collectives);
//   transfer           once its deps have finished, Memory::transfer of its bytes between its
//                      tiers (a modelled move without data, recorded by the backend with role
//                      transfer and the op's tag); the issuing thread does not wait for it.
// A launch goes to its executor (device stream, or the host workers ahead of refreshes) when the
// plan reaches its last op. Its Cost is the fold (optim::combine) of its ops' costs: per block in
// plan order, then over its blocks from a zero cost, then each of its publish ops that installed
// a refresh (known only when the service ran on the issuing thread); pieces that do no work
// (Cost::does_work: AdamW's accumulate) are left out, so they cost no launch. A device launch is
// submitted when it carries its hook's numerics (a body) or some work; a host launch only with
// some work.
// Everything is recorded on the platform's ActivitySink (if any), tagged with the step and the
// op or launch, so that the trace can be joined with the plan; ops run on the issuing thread are
// recorded on its track ("cpu<u> main") from their start to their end (waits included); issuer
// ops that ran inside a launch body are recorded on the device stream's track.
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include "core/optim/blocking.hpp"
#include "core/plan/step_plan.hpp"
#include "core/platform/platform.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "core/runtime/service/preconditioner_service.hpp"
#include "core/runtime/store/state_store.hpp"

namespace asteria::runtime {

// Where the interpreter finds a plan block: its ids in the service and the store, and where its
// values sit in its layer's weight and gradient.
struct PlanBlock {
  BlockId service_id = 0;
  BlockId store_id = 0;
  optim::BlockRegion region;
  optim::MatrixShape view;  // the layer's tensor as the region indexes it (optim::tensor_view)
};

// What a step's ops added up to.
struct PlanTotals {
  platform::Seconds compute = 0.0;           // modelled forward and backward time
  platform::Seconds optimizer_device = 0.0;  // modelled device time of the optimizer launches
  platform::Seconds state_move_wait = 0.0;   // time acquire ops waited
  double network_bytes = 0.0;                // buffers of the reduce and gather ops
  // Exposed communication: while the plan waited for a collective (a reduce or gather op, or the
  // step's end for the collectives still running), the time the device stream sat idle.
  platform::Seconds exposed_communication = 0.0;
  TierPairTotals transferred;                // the plan's transfer ops (gradients down, weights up), per (from, to)
};

template <linalg::Real T>
class PlanInterpreter {
 public:
  // Everything outlives the interpreter; `blocks` is indexed like plan.blocks. Validates the plan.
  // `numerics_site`: which launch is charged for a host-placed optimizer op (plan::NumericsSite).
  PlanInterpreter(const plan::StepPlan& plan, platform::Platform& platform, TrainingModel<T>& model,
                  PreconditionerService<T>& service, StateStore& store, std::vector<PlanBlock> blocks,
                  DeviceSeconds device_seconds, platform::Seconds issue_seconds_per_op = 0.0,
                  plan::NumericsSite numerics_site = plan::NumericsSite::own_launch);
  // Waits for work still in flight (its bodies use the service and the model).
  ~PlanInterpreter();
  PlanInterpreter(const PlanInterpreter&) = delete;
  PlanInterpreter& operator=(const PlanInterpreter&) = delete;

  // Runs every op of the plan for step t (inside the service's step) and returns once all of
  // them have finished. values: every op computes (optimizer ops in their hook launches);
  // refresh: backward bodies run during the warm-up only, optimizer ops run on this thread (the
  // service decides whether blocks compute: set_block_numerics); shapes: nothing computes and
  // the service sees empty views.
  //
  // Carried ops (an update deferred into this step's forward) run as ops of step t - 1, and not
  // at all at t = 1. `boundary`, when set, is called once, before the first current-step
  // optimizer op is issued and after every carried op has finished: where the previous step's
  // optimizer work ends and this step's begins (the service's step boundary).
  // `carried_only`: run nothing but the carried ops (after the last step, with t = last + 1).
  PlanTotals run(Step t, platform::Numerics numerics, bool warmup, const std::function<void()>& boundary = {},
                 bool carried_only = false);
  void wait_in_flight() noexcept;
  // The role its collectives' activities are recorded with: op (the default: the plan's ops,
  // which a trace joins with the step's plan), or other for an interpreter of a side plan (the
  // step driver's weights gathers) whose op ids mean nothing in the step's plan.
  void record_collectives_as(platform::ActivityRole role) noexcept { collective_role_ = role; }

  const plan::StepPlan& plan() const noexcept { return plan_; }

 private:
  struct LaunchState {
    platform::Pending done;
    platform::Costs installs;  // costs of publish ops that installed a refresh
  };

  void execute(plan::OpId i);
  bool skipped_op(const plan::Op& op) const noexcept;
  Step step_of(const plan::Op& op) const noexcept { return op.carried ? step_ - 1 : step_; }
  void run_optimizer_op(plan::OpId i, bool body);
  void run_store_op(plan::OpId i);
  void run_transfer(plan::OpId i);
  platform::Comm& communicator(plan::OpId i);
  platform::CollectiveOptions collective_options(plan::OpId i, bool await_deps);
  void run_reduce(plan::OpId i);
  void run_scatter(plan::OpId i);
  void run_gather(plan::OpId i);
  void require_fp32(const platform::CollectiveOptions& options) const;
  template <class Copy>
  void each_row(int block, bool gradient, Copy&& copy);
  std::size_t block_values(int block) const;
  void pack(plan::OpId i, bool gradient, std::size_t base, std::size_t share, bool by_owner, bool own_only);
  platform::Pending pack_on_stream(plan::OpId i, std::function<void()> body);
  void to_wire(plan::OpId i, std::size_t first, std::size_t count);
  platform::CommBuffer wire_buffer(plan::OpId i, std::size_t first, std::size_t count);
  bool from_wire(plan::OpId i);
  void unpack(plan::OpId i);
  std::vector<char> first_arrivals() const;
  int sole_owner(const plan::BucketInfo& bucket) const;  // of the bucket's blocks; -1 when several ranks own them
  void submit_launch(int launch);
  platform::Costs launch_cost(int launch) const;
  double modelled_seconds(const platform::Costs& cost) const;
  void await(plan::OpId dep);  // until every Pending of op `dep` has finished (ok)
  // The part of the wait since `start` (until now) during which the device stream was idle.
  platform::Seconds device_idle_since(platform::Seconds start) const;
  bool ordered_before(const plan::Op& op, int launch, plan::OpId dep) const;
  void wait_ok(const platform::Pending& pending, const std::string& what);
  platform::Pending submit(platform::Executor& executor, platform::Work work);
  void record_issuer(plan::OpId i, platform::Seconds start, bool in_launch_body = false);
  linalg::MatrixView<T> weights(const plan::Op& op);
  linalg::MatrixView<T> block_weights(int block);  // plan block `block`'s region of its layer's weights
  linalg::ConstMatrixView<T> gradient(const plan::Op& op);
  // The device of the op's block state when it is not the one that addresses the model's tensors
  // (their values are then staged between the two); null when one device addresses both.
  ops::Device* staged_state_side(const plan::Op& op);
  // Whether the op's layer's whole gradient is finite in the op's step, checked once per layer
  // and step where the model keeps it (one device synchronization, not one per block).
  bool layer_gradient_finite(const plan::Op& op);

  const plan::StepPlan& plan_;
  platform::Platform& platform_;
  TrainingModel<T>& model_;
  PreconditionerService<T>& service_;
  StateStore& store_;
  std::vector<PlanBlock> blocks_;
  DeviceSeconds seconds_;
  platform::Seconds issue_seconds_;  // per op, on the issuing thread (0 under measured time)
  platform::ActivitySink* sink_;
  std::vector<plan::OpId> submit_points_;
  std::vector<std::vector<int>> launches_after_;  // per op: the launches submitted after it
  // Per launch, the ops charged to it (plan::launch_charges at the run's NumericsSite); per op,
  // the launch charged for it (-1: none).
  std::vector<std::vector<plan::OpId>> charges_;
  std::vector<int> charged_launch_;
  std::vector<std::vector<plan::OpId>> numerics_of_;  // per launch: ops whose hook it is
  std::vector<char> launch_carried_;                  // per launch: its ops are carried
  std::vector<plan::OpId> last_backward_;             // per layer: its last backward op
  std::vector<platform::Costs> publish_cost_;         // per plan block: what installing a refresh costs
  std::vector<std::size_t> plan_block_of_;            // per service block id: its plan block

  // Per step.
  Step step_ = 0;
  bool body_ = false;    // optimizer ops run inside their hook launch
  bool device_numerics_ = false;
  bool values_ = false;
  bool carried_only_ = false;
  PlanTotals totals_;
  std::vector<std::vector<platform::Pending>> finished_;  // per op: what must end for it to have ended
  std::vector<LaunchState> launch_state_;
  std::vector<char> skipped_;       // per block: skipped this step (issuing thread)
  std::vector<char> body_skipped_;  // the same, written by launch bodies (device thread only)
  // Per layer: the step whose gradient was last checked whole, and the verdict (written by
  // whichever thread runs the step's accumulate ops).
  struct LayerVerdict {
    Step step = 0;
    bool finite = false;
  };
  std::vector<LayerVerdict> layer_verdicts_;
  std::vector<platform::Pending> in_flight_;
  std::vector<platform::Pending> network_in_flight_;  // the collectives of reduce and gather ops
  platform::Pending device_tail_;                     // the last work submitted to the device stream
  std::exception_ptr body_error_;
  platform::ActivityRole collective_role_ = platform::ActivityRole::op;
  std::vector<char> unpacks_;              // per op: a collective bringing values this rank keeps
  std::vector<std::vector<T>> packed_;     // per collective op of blocks: its buffers
  std::vector<std::vector<std::uint16_t>> wire_;  // per reduce or scatter: packed_ as bf16 (reduce_dtype)
  std::vector<char> unpack_pending_;       // per op: values arrived or on the way, not unpacked yet
};

}  // namespace asteria::runtime

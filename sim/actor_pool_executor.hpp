#pragma once
// An executor served by daemon actors on one simulated host: the device stream (one actor on
// the GPU host: in order) and the host worker pool (N actors on the CPU host, one FIFO). Each
// work item becomes an execution of its modelled compute time on the host (shared with whatever
// else runs there: N workers on fewer cores share them), then an execution of its memory traffic
// on the memory it uses (a host whose speed is the memory's bandwidth: concurrent traffic shares
// it, as host workers share the CPU's DRAM), then, in data-true mode, its body runs, so results
// appear when the simulated work ends. An exception from a body becomes a failed Status.
// Items may be submitted before Simulation::run (they start when it does); the actors are
// daemons, killed when every unit's main has returned. An actor starts when it is first needed
// (an item finds no idle one), as many as the spec's tracks at most: a pool of 71 refresh workers
// that never has more than 3 items in flight costs SimGrid 3 actors, with the same times (a new
// actor counts as asleep, as the never-used sleepers it stands for would be woken first).
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <simgrid/s4u.hpp>

#include "core/platform/executor.hpp"
#include "hwmodels/cost_model.hpp"
#include "sim/core_load.hpp"
#include "sim/recorder.hpp"

namespace asteria::sim {

struct ActorPoolSpec {
  std::string name;                 // the executor's name: "gpu0 stream", "cpu0 workers"
  std::vector<std::string> tracks;  // one per actor (its size is the concurrency)
  simgrid::s4u::Host* host = nullptr;
  int threads_per_item = 1;         // cores one item occupies (a refresh worker's BLAS threads)
  // The cores of `host` as they slow one another (core_load.hpp); null: `host` is not a CPU
  // whose cores contend (a GPU).
  CoreLoad* cores = nullptr;
  // What one piece costs: compute seconds on `host`, and bytes of memory traffic on `memory`.
  std::function<hw::CostModel::Charge(const platform::Cost&)> charge;
  // The memory the items' traffic goes through: a host of one core whose speed is the memory's
  // bandwidth in bytes/s (topology.hpp).
  simgrid::s4u::Host* memory = nullptr;
  // The pool is the only user of `host` and `memory` and runs one item at a time (a GPU's device
  // stream): an item's compute and traffic then take exactly their modelled seconds, and are
  // waited out in one sleep instead of run as two executions (nothing shares the resources, so
  // there is nothing for SimGrid to solve).
  bool exclusive = false;
  bool run_bodies = true;
  platform::ActivitySink* activities = nullptr;  // where each item is recorded (null: nowhere)
  // Simulated seconds an actor that slept for want of work takes to start the item that woke it
  // (a real stream thread waking from its condition variable, a GPU stream going busy); an
  // actor that finds work queued pays nothing, one that has served nothing yet counts as asleep.
  // The item's recorded start is after the wake.
  double wake_seconds = 0.0;
};

// Runs the body, turning an escaping exception into a failed Status ("label: what"); lets
// SimGrid's actor-kill unwinding through.
Status run_body(const platform::Work& work);

class ActorPoolExecutor final : public platform::Executor {
 public:
  ActorPoolExecutor(ActorPoolSpec spec, platform::CompletionBoard& board, Recorder& recorder);
  ActorPoolExecutor(const ActorPoolExecutor&) = delete;
  ActorPoolExecutor& operator=(const ActorPoolExecutor&) = delete;

  std::string_view name() const noexcept override { return spec_.name; }
  int concurrency() const noexcept override { return static_cast<int>(spec_.tracks.size()); }
  platform::Pending submit(platform::Work work) override;

  void start();  // from now on, actors serve: those the queued items need start (once)

 private:
  struct Item {
    platform::Work work;
    platform::Promise promise;
  };
  void serve(std::size_t lane);
  void spawn_lane();

  ActorPoolSpec spec_;
  platform::CompletionBoard& board_;
  Recorder& recorder_;
  std::deque<Item> queue_;  // urgent items first, each part in submission order
  std::size_t urgent_queued_ = 0;
  // Idle actors sleep on `wake_`; a submit wakes one only if one is idle, so an actor that finds
  // work queued takes it without a SimGrid call (each call is a switch to the scheduler).
  simgrid::s4u::SemaphorePtr wake_;
  int idle_ = 0;
  bool started_ = false;
  std::size_t spawned_ = 0;  // actors started: lanes 0 .. spawned_ - 1
};

}  // namespace asteria::sim

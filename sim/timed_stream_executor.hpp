#pragma once
// An in-order executor without an actor: each item's end is a SimGrid kernel timer. For a
// stream that alone uses its host and memory and whose items have no body to run (a GPU's device
// stream in a data-free run): there is nothing for SimGrid to share or solve, so an item lasts
// exactly its compute plus its traffic at the memory's bandwidth, as the exclusive actor pool
// (actor_pool_executor.hpp) sleeps it out, with the same order (urgent items ahead of plain
// ones), wake latency and recorded activity, but without the actor's switches and sleep actions
// (each item cost the actor five switches to the scheduler and an LMM variable).
// Completions are fulfilled in the scheduler's context (sim_sync.hpp wakes waiters from there).
// stop() removes the pending timer: Simulation stops services when every main has returned, as
// SimGrid kills daemon actors, so queued work never runs past the mains.
#include <deque>
#include <string_view>

#include "core/platform/executor.hpp"
#include "sim/actor_pool_executor.hpp"
#include "sim/recorder.hpp"
#include "sim/timers.hpp"

namespace asteria::sim {

class TimedStreamExecutor final : public platform::Executor {
 public:
  // `spec` must be exclusive (one track, no shared cores) and run no bodies.
  TimedStreamExecutor(ActorPoolSpec spec, platform::CompletionBoard& board, Recorder& recorder);
  TimedStreamExecutor(const TimedStreamExecutor&) = delete;
  TimedStreamExecutor& operator=(const TimedStreamExecutor&) = delete;

  std::string_view name() const noexcept override { return spec_.name; }
  int concurrency() const noexcept override { return 1; }
  platform::Pending submit(platform::Work work) override;

  void start();  // items queued before now begin (once)
  void stop();   // nothing more runs: the pending item never ends, queued ones never start

  // Whether a spec can be served by timers: exclusive and without bodies.
  static bool serves(const ActorPoolSpec& spec) noexcept { return spec.exclusive && !spec.run_bodies; }

 private:
  struct Item {
    platform::Work work;
    platform::Promise promise;
  };
  enum class State { idle, waking, busy, stopped };

  void wake();       // idle with work queued: the stream starts after its wake latency
  void take_next();  // at a timer: the front item starts
  void finish();     // at a timer: the running item ends

  ActorPoolSpec spec_;
  platform::CompletionBoard& board_;
  Recorder& recorder_;
  std::deque<Item> queue_;  // urgent items first, each part in submission order
  std::size_t urgent_queued_ = 0;
  Item running_;
  double running_since_ = 0.0;
  State state_ = State::idle;
  bool started_ = false;
  Timers timers_;  // the pending wake or end
};

}  // namespace asteria::sim

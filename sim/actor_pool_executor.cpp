#include "sim/actor_pool_executor.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include <simgrid/Exception.hpp>

#include "sim/topology.hpp"

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

Status run_body(const platform::Work& work) {
  if (!work.body) return Status::success();
  try {
    return work.body();
  } catch (const simgrid::ForcefulKillException&) {
    throw;  // the simulation is ending: let the actor unwind
  } catch (const std::exception& e) {
    return {StatusCode::failed, work.label + ": " + e.what()};
  } catch (...) {
    return {StatusCode::failed, work.label + ": unknown exception"};
  }
}

ActorPoolExecutor::ActorPoolExecutor(ActorPoolSpec spec, platform::CompletionBoard& board, Recorder& recorder)
    : spec_(std::move(spec)), board_(board), recorder_(recorder), wake_(sg4::Semaphore::create(0)) {
  if (spec_.tracks.empty()) throw std::invalid_argument("ActorPoolExecutor '" + spec_.name + "': needs an actor");
  if (spec_.memory == nullptr || !spec_.charge)
    throw std::invalid_argument("ActorPoolExecutor '" + spec_.name + "': needs a memory host and a charge model");
  if (spec_.exclusive && (spec_.tracks.size() != 1 || spec_.cores != nullptr))
    throw std::invalid_argument("ActorPoolExecutor '" + spec_.name +
                                "': an exclusive pool is one actor on a host whose cores nothing else uses");
}

platform::Pending ActorPoolExecutor::submit(platform::Work work) {
  auto [promise, pending] = board_.make();
  if (work.urgent) {  // ahead of the plain items, behind earlier urgent ones
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(urgent_queued_),
                  Item{std::move(work), std::move(promise)});
    ++urgent_queued_;
  } else {
    queue_.push_back({std::move(work), std::move(promise)});
  }
  // An actor never started yet is the longest idle one (all of them would have gone to sleep at
  // the start, before any other): it takes the item, as the first of the sleepers would.
  if (started_ && spawned_ < spec_.tracks.size()) {
    spawn_lane();
  } else if (idle_ > 0) {
    --idle_;
    wake_->release();
  }
  return pending;
}

void ActorPoolExecutor::start() {
  if (started_) return;
  started_ = true;
  while (spawned_ < std::min(spec_.tracks.size(), queue_.size())) spawn_lane();
}

void ActorPoolExecutor::spawn_lane() {
  if (!recorder_.take_actor(spawned_ == 0)) return;  // the run fails at its end (Recorder)
  const std::size_t lane = spawned_++;
  sg4::Actor::create(spec_.tracks[lane], spec_.host, [this, lane] {
    sg4::Actor::self()->daemonize();  // a service: stopped when every main has returned
    serve(lane);
  });
}

void ActorPoolExecutor::serve(std::size_t lane) {
  bool fresh = true;  // an actor that has served nothing yet was idle: work found at its start woke it
  for (;;) {
    bool slept = std::exchange(fresh, false);
    while (queue_.empty()) {  // a woken actor may find the item taken by a busy one: sleep again
      ++idle_;
      wake_->acquire();
      slept = true;
    }
    // Waking takes time; the item stays queued meanwhile, so a busy actor that frees up first
    // may take it (as a real thread pool's would), and this one checks again.
    if (slept && spec_.wake_seconds > 0.0) {
      sg4::this_actor::sleep_for(spec_.wake_seconds);
      if (queue_.empty()) continue;
    }
    // Actors switch only inside SimGrid calls: nothing runs between the check and the pop.
    Item item = std::move(queue_.front());
    queue_.pop_front();
    if (urgent_queued_ > 0) --urgent_queued_;  // urgent items are the queue's front

    const double start = sg4::Engine::get_clock();
    double compute = 0.0, traffic = 0.0;
    for (const platform::Cost& piece : item.work.cost.pieces()) {
      const hw::CostModel::Charge c = spec_.charge(piece);
      compute += c.compute_seconds;
      traffic += c.memory_bytes;
    }
    if (spec_.exclusive) {
      const double seconds = compute + traffic / spec_.memory->get_speed();
      if (seconds > 0.0) sg4::this_actor::sleep_for(seconds);
      if (compute > 0.0) ++recorder_.counts().executions;
      if (traffic > 0.0) ++recorder_.counts().executions;
    } else if (compute > 0.0) {
      const CoreLoad::Busy busy(spec_.cores, spec_.threads_per_item);
      sg4::ExecPtr exec = sg4::this_actor::exec_init(compute * kSpeed);
      if (spec_.threads_per_item > 1) exec->set_thread_count(spec_.threads_per_item);
      exec->start();
      exec->wait();
      ++recorder_.counts().executions;
    }
    if (traffic > 0.0 && !spec_.exclusive) {
      sg4::ExecPtr exec = sg4::this_actor::exec_init(traffic);
      exec->set_host(spec_.memory);
      exec->start();
      exec->wait();
      ++recorder_.counts().executions;
    }
    const double worked = sg4::Engine::get_clock();
    Status status = spec_.run_bodies ? run_body(item.work) : Status::success();
    const double end = sg4::Engine::get_clock();
    // A body that let simulated time pass waited (a publication for its refresh, say): the item
    // is recorded as having waited first and worked after, as a data-free run schedules it, so
    // that its activity (and the busy time a run's energy counts) covers its work alone.
    if (spec_.activities != nullptr)
      spec_.activities->record({spec_.tracks[lane], item.work.label, item.work.tag, item.work.cost,
                                start + (end - worked), end, status.ok()});
    item.work.body = nullptr;  // drop what the body captured before waiters see the completion
    item.promise.fulfil(std::move(status));
  }
}

}  // namespace asteria::sim

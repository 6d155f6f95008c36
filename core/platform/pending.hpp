#pragma once
// Handles to work in flight. A backend creates a (Promise, Pending) pair from its
// CompletionBoard, hands the Pending to the caller and fulfils the Promise when the work ends.
// All completions of one board share one mutex, and waiting for any of several uses the board's
// condition variable; a wait for one work uses a condition variable of its own, made when first
// needed. Completions are coarse (a refresh, a tier move), so the shared lock is not contended. `done` is also an atomic, so that testing or waiting for a
// finished work takes no lock (on the simulated backend a lock is a switch to the scheduler).
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/common/status.hpp"
#include "core/platform/sync.hpp"
#include "core/platform/time.hpp"

namespace asteria::platform {

class Clock;
class CompletionBoard;

namespace detail {
struct CompletionState {
  CompletionBoard* board = nullptr;  // null for an already-complete Pending
  std::atomic<bool> done{false};  // set once, after status, with release order
  Status status;
  Seconds finished_at = -1.0;  // the board's clock when fulfilled (-1: a board without a clock)
  // Made by the first waiter of this work alone (under the board's mutex), so that its fulfilment
  // wakes its own waiters rather than every waiter of the board (on the simulated backend each
  // wake-up is an actor switch).
  std::unique_ptr<ConditionVariable> waiters;
  // Run once by the fulfilment, after the board's lock is released (Pending::when_all_settled).
  std::vector<std::function<void()>> continuations;
  // A join (CompletionBoard::all_of): done when every member is, and failed as its first failed
  // member; worked out from the members whenever asked (they never change once done).
  std::vector<std::shared_ptr<CompletionState>> members;
};
bool settled(const CompletionState& state);
const Status& outcome(const CompletionState& state);  // of a settled state
}  // namespace detail

class Pending {
 public:
  Pending() = default;  // invalid: valid() is false
  static Pending ready(Status status = Status::success());

  bool valid() const noexcept { return state_ != nullptr; }
  bool test() const;          // finished?
  void wait() const;          // blocks until finished
  Status status() const;      // waits, then the work's outcome
  // When the work finished, on the clock of its board (a join: when its last member did); none
  // while it runs, or when its board keeps no clock (a communicator's own board).
  std::optional<Seconds> finished_at() const;

  // Calls `then` once every one of `parts` is settled: at once (on this thread) if they are,
  // otherwise on the thread, actor or timer that fulfils the last of them, after its board's
  // lock is released. Instead of a thread or actor that waits only to go on: on the simulated
  // backend each such actor is a mapped stack and switches to the scheduler. `then` must not
  // block (it may run where nothing can wait). Invalid parts are ignored.
  static void when_all_settled(std::span<const Pending> parts, std::function<void()> then);

 private:
  friend class CompletionBoard;
  friend class Promise;
  explicit Pending(std::shared_ptr<detail::CompletionState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::CompletionState> state_;
};

class Promise {
 public:
  Promise() = default;
  // Marks the work finished and wakes every waiter. Fulfilling twice is a programming error.
  void fulfil(Status status = Status::success());
  bool valid() const noexcept { return state_ != nullptr; }

 private:
  friend class CompletionBoard;
  explicit Promise(std::shared_ptr<detail::CompletionState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::CompletionState> state_;
};

class CompletionBoard {
 public:
  // With a clock, each fulfilment notes the time (Pending::finished_at).
  explicit CompletionBoard(SyncFactory& sync, const Clock* clock = nullptr);
  CompletionBoard(const CompletionBoard&) = delete;
  CompletionBoard& operator=(const CompletionBoard&) = delete;

  struct Pair {
    Promise promise;
    Pending pending;
  };
  Pair make();
  // A Pending done when every one of `parts` is (made on this board, or ready), failed with the
  // first failed part's status in their order. Nobody fulfils it: it is settled when looked at.
  Pending all_of(std::span<const Pending> parts);

  // Index of a finished Pending among `pendings` (the lowest finished index), waiting until one
  // finishes. Invalid entries are ignored; throws std::invalid_argument if all are invalid.
  std::size_t wait_any(std::span<const Pending> pendings);

 private:
  friend class Pending;
  friend class Promise;
  SyncFactory& sync_;
  std::unique_ptr<Mutex> mutex_;
  std::unique_ptr<ConditionVariable> changed_;  // any completion (wait_any, joins)
  const Clock* clock_;
};

}  // namespace asteria::platform

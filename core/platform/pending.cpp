#include "core/platform/pending.hpp"

#include <cassert>
#include <stdexcept>

namespace asteria::platform {

Pending Pending::ready(Status status) {
  auto s = std::make_shared<detail::CompletionState>();
  s->status = std::move(status);
  s->done.store(true, std::memory_order_release);
  return Pending(std::move(s));
}

bool Pending::test() const {
  assert(state_);
  return state_->done.load(std::memory_order_acquire);
}

void Pending::wait() const {
  assert(state_);
  if (state_->done.load(std::memory_order_acquire)) return;
  CompletionBoard& board = *state_->board;
  LockGuard lock(*board.mutex_);
  board.changed_->wait(*board.mutex_, [&] { return state_->done.load(std::memory_order_acquire); });
}

Status Pending::status() const {
  wait();  // done, seen with acquire order: status is written and never changes again
  return state_->status;
}

void Promise::fulfil(Status status) {
  assert(state_ && state_->board);
  CompletionBoard& board = *state_->board;
  LockGuard lock(*board.mutex_);
  assert(!state_->done.load(std::memory_order_relaxed) && "a promise is fulfilled once");
  state_->status = std::move(status);
  state_->done.store(true, std::memory_order_release);
  board.changed_->notify_all();
}

CompletionBoard::CompletionBoard(SyncFactory& sync)
    : mutex_(sync.make_mutex()), changed_(sync.make_condition_variable()) {}

CompletionBoard::Pair CompletionBoard::make() {
  auto s = std::make_shared<detail::CompletionState>();
  s->board = this;
  return {Promise(s), Pending(s)};
}

std::size_t CompletionBoard::wait_any(std::span<const Pending> pendings) {
  bool any_valid = false;
  for (const Pending& p : pendings) any_valid = any_valid || p.valid();
  if (!any_valid) throw std::invalid_argument("wait_any: no valid pending");
  auto first_done = [&]() -> std::ptrdiff_t {
    for (std::size_t i = 0; i < pendings.size(); ++i)
      if (pendings[i].valid() && pendings[i].state_->done.load(std::memory_order_acquire))
        return static_cast<std::ptrdiff_t>(i);
    return -1;
  };
  std::ptrdiff_t found = first_done();
  if (found >= 0) return static_cast<std::size_t>(found);
  LockGuard lock(*mutex_);
  found = first_done();
  while (found < 0) {
    changed_->wait(*mutex_);
    found = first_done();
  }
  return static_cast<std::size_t>(found);
}

}  // namespace asteria::platform

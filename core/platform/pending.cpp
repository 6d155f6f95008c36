#include "core/platform/pending.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "core/platform/clock.hpp"

namespace asteria::platform {

namespace detail {
bool settled(const CompletionState& state) {
  if (state.members.empty()) return state.done.load(std::memory_order_acquire);
  for (const auto& member : state.members)
    if (!settled(*member)) return false;
  return true;
}

// Of a settled state: when it finished (a join: its last member), -1 when a part has no time.
Seconds finish_time(const CompletionState& state) {
  if (state.members.empty()) return state.finished_at;
  Seconds last = -1.0;
  for (const auto& member : state.members) {
    const Seconds t = finish_time(*member);
    if (t < 0.0) return -1.0;
    last = std::max(last, t);
  }
  return last;
}

const Status& outcome(const CompletionState& state) {
  for (const auto& member : state.members)
    if (const Status& s = outcome(*member); !s.ok()) return s;
  return state.status;  // a join's own stays success
}
}  // namespace detail

Pending Pending::ready(Status status) {
  auto s = std::make_shared<detail::CompletionState>();
  s->status = std::move(status);
  s->done.store(true, std::memory_order_release);
  return Pending(std::move(s));
}

bool Pending::test() const {
  assert(state_);
  return detail::settled(*state_);
}

void Pending::wait() const {
  assert(state_);
  if (detail::settled(*state_)) return;
  CompletionBoard& board = *state_->board;
  LockGuard lock(*board.mutex_);
  if (!state_->members.empty()) {  // a join: settled by any of its members' completions
    board.changed_->wait(*board.mutex_, [&] { return detail::settled(*state_); });
    return;
  }
  if (!state_->waiters) state_->waiters = board.sync_.make_condition_variable();
  state_->waiters->wait(*board.mutex_, [&] { return detail::settled(*state_); });
}

std::optional<Seconds> Pending::finished_at() const {
  assert(state_);
  if (!detail::settled(*state_)) return std::nullopt;
  const Seconds t = detail::finish_time(*state_);
  if (t < 0.0) return std::nullopt;
  return t;
}

Status Pending::status() const {
  wait();  // done, seen with acquire order: status is written and never changes again
  return detail::outcome(*state_);
}

void Promise::fulfil(Status status) {
  assert(state_ && state_->board);
  CompletionBoard& board = *state_->board;
  std::vector<std::function<void()>> continuations;
  {
    LockGuard lock(*board.mutex_);
    assert(!state_->done.load(std::memory_order_relaxed) && "a promise is fulfilled once");
    state_->status = std::move(status);
    if (board.clock_ != nullptr) state_->finished_at = board.clock_->now();
    state_->done.store(true, std::memory_order_release);
    continuations = std::move(state_->continuations);
    if (state_->waiters) state_->waiters->notify_all();
    board.changed_->notify_all();
  }
  for (const auto& then : continuations) then();
}

namespace {
// The states a Pending settles by: itself, or a join's members (recursively).
void collect_leaves(const std::shared_ptr<detail::CompletionState>& state,
                    std::vector<std::shared_ptr<detail::CompletionState>>& leaves) {
  if (state->members.empty()) {
    leaves.push_back(state);
    return;
  }
  for (const auto& member : state->members) collect_leaves(member, leaves);
}
}  // namespace

void Pending::when_all_settled(std::span<const Pending> parts, std::function<void()> then) {
  std::vector<std::shared_ptr<detail::CompletionState>> leaves;
  for (const Pending& part : parts)
    if (part.valid()) collect_leaves(part.state_, leaves);
  // One count per leaf still running, plus this registration's own, dropped last, so that `then`
  // runs once whether the leaves finish before, during or after the registration.
  struct Countdown {
    std::atomic<std::size_t> left;
    std::function<void()> then;
  };
  auto countdown = std::make_shared<Countdown>();
  countdown->left.store(1, std::memory_order_relaxed);
  countdown->then = std::move(then);
  auto one_settled = [countdown] {
    if (countdown->left.fetch_sub(1, std::memory_order_acq_rel) == 1) countdown->then();
  };
  for (const auto& leaf : leaves) {
    if (leaf->done.load(std::memory_order_acquire)) continue;
    assert(leaf->board != nullptr);
    LockGuard lock(*leaf->board->mutex_);
    if (leaf->done.load(std::memory_order_relaxed)) continue;  // fulfilled meanwhile
    countdown->left.fetch_add(1, std::memory_order_relaxed);
    leaf->continuations.emplace_back(one_settled);
  }
  one_settled();
}

CompletionBoard::CompletionBoard(SyncFactory& sync, const Clock* clock)
    : sync_(sync), mutex_(sync.make_mutex()), changed_(sync.make_condition_variable()), clock_(clock) {}

CompletionBoard::Pair CompletionBoard::make() {
  auto s = std::make_shared<detail::CompletionState>();
  s->board = this;
  return {Promise(s), Pending(s)};
}

Pending CompletionBoard::all_of(std::span<const Pending> parts) {
  auto s = std::make_shared<detail::CompletionState>();
  s->board = this;
  for (const Pending& part : parts) {
    if (!part.valid()) throw std::invalid_argument("CompletionBoard::all_of: an invalid pending");
    if (part.state_->board != nullptr && part.state_->board != this)
      throw std::invalid_argument("CompletionBoard::all_of: a pending of another board");
    s->members.push_back(part.state_);
  }
  if (parts.empty()) s->members.push_back(Pending::ready().state_);  // done at once
  return Pending(std::move(s));
}

std::size_t CompletionBoard::wait_any(std::span<const Pending> pendings) {
  bool any_valid = false;
  for (const Pending& p : pendings) any_valid = any_valid || p.valid();
  if (!any_valid) throw std::invalid_argument("wait_any: no valid pending");
  auto first_done = [&]() -> std::ptrdiff_t {
    for (std::size_t i = 0; i < pendings.size(); ++i)
      if (pendings[i].valid() && detail::settled(*pendings[i].state_))
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

#include "core/real/local_comm.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "core/platform/collective_values.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_sync.hpp"

namespace asteria::real {

namespace {

// One member's part of a collective.
struct Call : platform::CollectiveCall {
  Status input;  // the `after` work's outcome, or the mismatch found on arrival
  platform::Promise promise;
  std::string label;
  platform::OpTag tag;
  int world_rank = 0;
  platform::ActivitySink* sink = nullptr;
  const platform::Clock* clock = nullptr;
};

using platform::describe;

bool same_call(const Call& a, const Call& b) {
  return a.collective == b.collective && a.op == b.op && a.root == b.root && a.in.count == b.in.count &&
         a.out.count == b.out.count && a.in.dtype == b.in.dtype && a.in.bytes_only() == b.in.bytes_only();
}

double moved_bytes(const Call& c) {
  return static_cast<double>(c.collective == platform::Collective::all_gather ? c.out.bytes() : c.in.bytes());
}

}  // namespace

namespace detail {

// Where the ranks' calls meet. One mutex guards everything; values are combined on the worker
// thread, outside the lock.
class LocalHub {
 public:
  LocalHub() : worker_([this] { work(); }) {}
  ~LocalHub() { shutdown(); }

  // Member `group_rank` of `group` (of `members` ranks) makes its call `sequence`. Returns at
  // once; a call whose `after` is unfinished first waits on a thread of its own.
  void call(std::string key, int members, int group_rank, Call call, std::vector<platform::Pending> after) {
    const bool waiting = std::any_of(after.begin(), after.end(),
                                     [](const platform::Pending& p) { return p.valid() && !p.test(); });
    if (!waiting) {
      take_inputs(call, after);
      arrive(std::move(key), members, group_rank, std::move(call));
      return;
    }
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::logic_error("LocalCommWorld: a collective was called while the world shuts down");
    reap_waiters();
    Waiter& w = waiters_.emplace_back();
    w.thread = std::thread([this, &w, key = std::move(key), members, group_rank, call = std::move(call),
                            after = std::move(after)]() mutable {
      take_inputs(call, after);
      arrive(std::move(key), members, group_rank, std::move(call));
      std::lock_guard done(mutex_);
      w.finished = true;
    });
  }

  // The members (ranks, in new group order) of the group that `group_rank` joins with
  // `colour` (none for a negative colour), once every member has called split `key`.
  std::vector<int> split(const std::string& key, const std::vector<int>& members, int group_rank, int colour,
                         int sort_key) {
    std::unique_lock lock(mutex_);
    SplitGathering& g = splits_[key];
    if (g.colour_and_key.empty()) g.colour_and_key.assign(members.size(), {-1, 0});
    g.colour_and_key[static_cast<std::size_t>(group_rank)] = {colour, sort_key};
    if (++g.arrived == static_cast<int>(members.size())) {
      g.complete = true;
      split_done_.notify_all();
    } else {
      split_done_.wait(lock, [&g] { return g.complete; });
    }
    std::vector<int> joined;
    if (colour >= 0) {
      std::vector<std::pair<int, int>> order;  // (key, group rank) of the members of my colour
      for (std::size_t r = 0; r < members.size(); ++r)
        if (g.colour_and_key[r].first == colour) order.emplace_back(g.colour_and_key[r].second, static_cast<int>(r));
      std::sort(order.begin(), order.end());
      for (const auto& [k, r] : order) joined.push_back(members[static_cast<std::size_t>(r)]);
    }
    if (--g.arrived == 0) splits_.erase(key);
    return joined;
  }

  void shutdown() {
    std::list<Waiter> waiters;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      waiters.splice(waiters.end(), waiters_);
    }
    for (Waiter& w : waiters) w.thread.join();  // their `after` work must finish
    {
      std::lock_guard lock(mutex_);
      stop_worker_ = true;
    }
    ready_changed_.notify_all();
    worker_.join();
    // Collectives some member never called: nobody will complete them.
    for (auto& [key, g] : open_)
      for (auto& c : g.calls)
        if (c) c->promise.fulfil(Status(StatusCode::failed, "collective " + key + " (" + describe(*c) +
                                                                "): the LocalCommWorld ended before every member called it"));
    open_.clear();
  }

 private:
  struct Gathering {
    std::vector<std::optional<Call>> calls;
    int arrived = 0;
  };
  struct SplitGathering {
    std::vector<std::pair<int, int>> colour_and_key;  // per group rank
    int arrived = 0;
    bool complete = false;
  };
  struct Ready {
    std::string key;
    std::vector<std::optional<Call>> calls;
  };
  struct Waiter {
    std::thread thread;
    bool finished = false;  // guarded by mutex_
  };

  static void take_inputs(Call& call, const std::vector<platform::Pending>& after) {
    for (const platform::Pending& p : after) {
      if (!p.valid()) continue;
      const Status s = p.status();
      if (!s.ok() && call.input.ok())
        call.input = Status(s.code(), std::string(platform::to_string(call.collective)) +
                                          ": an input of the collective failed: " + s.reason());
    }
  }

  void arrive(std::string key, int members, int group_rank, Call call) {
    std::lock_guard lock(mutex_);
    Gathering& g = open_[key];
    if (g.calls.empty()) g.calls.resize(static_cast<std::size_t>(members));
    for (std::size_t r = 0; r < g.calls.size(); ++r)
      if (g.calls[r] && !same_call(*g.calls[r], call) && call.input.ok())
        call.input = Status(StatusCode::invalid_argument,
                            "collective " + key + ": the members' calls differ (rank " + std::to_string(r) +
                                " called " + describe(*g.calls[r]) + ", rank " + std::to_string(group_rank) +
                                " called " + describe(call) + ")");
    g.calls[static_cast<std::size_t>(group_rank)] = std::move(call);
    if (++g.arrived < members) return;
    ready_.push_back({key, std::move(g.calls)});
    open_.erase(key);
    ready_changed_.notify_all();
  }

  void work() {
    for (;;) {
      Ready next;
      {
        std::unique_lock lock(mutex_);
        ready_changed_.wait(lock, [this] { return stop_worker_ || !ready_.empty(); });
        if (ready_.empty()) return;  // stopping, with nothing left
        next = std::move(ready_.front());
        ready_.pop_front();
      }
      run(next.calls);
    }
  }

  static void run(std::vector<std::optional<Call>>& calls) {
    Status outcome = Status::success();
    for (const auto& c : calls)
      if (!c->input.ok() && outcome.ok()) outcome = c->input;
    std::vector<double> start(calls.size());
    for (std::size_t r = 0; r < calls.size(); ++r)
      if (calls[r]->sink != nullptr) start[r] = calls[r]->clock->now();
    const Call& first = *calls.front();
    if (outcome.ok() && !first.in.bytes_only()) {
      try {
        std::vector<platform::CommBuffer> ins, outs;
        for (const auto& c : calls) {
          ins.push_back(c->in);
          outs.push_back(c->out);
        }
        platform::combine_values(first.collective, first.op, first.root, ins, outs);
      } catch (const std::exception& e) {  // out of memory: the members fail, the worker goes on
        outcome = Status(StatusCode::failed, std::string(platform::to_string(first.collective)) + ": " + e.what());
      }
    }
    for (std::size_t r = 0; r < calls.size(); ++r) {
      Call& c = *calls[r];
      if (c.sink != nullptr && c.sink->recording(c.tag.step)) {
        platform::Activity a;
        a.track = platform::comm_track(c.world_rank);
        a.label = c.label.empty() ? std::string(platform::to_string(c.collective)) : c.label;
        a.tag = c.tag;
        a.cost = platform::Cost{platform::WorkKind::other, 0.0, moved_bytes(c), 0};
        a.start = start[r];
        a.end = c.clock->now();
        a.ok = outcome.ok();
        c.sink->record(std::move(a));
      }
      c.promise.fulfil(outcome);
    }
  }

  void reap_waiters() {  // under mutex_
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (!it->finished) {
        ++it;
        continue;
      }
      it->thread.join();  // it only has to return: it set `finished` last
      it = waiters_.erase(it);
    }
  }

  std::mutex mutex_;
  std::condition_variable split_done_;
  std::condition_variable ready_changed_;
  std::map<std::string, Gathering> open_;
  std::map<std::string, SplitGathering> splits_;
  std::deque<Ready> ready_;
  std::list<Waiter> waiters_;  // a list: a waiter's thread refers to its entry
  bool stopping_ = false;
  bool stop_worker_ = false;
  std::thread worker_;  // last: it starts on a complete hub
};

}  // namespace detail

// One rank's view: its Pendings' board and where it records.
class LocalComm final : public platform::Comm {
 public:
  LocalComm(detail::LocalHub& hub, int rank, int ranks, int ranks_per_node, const platform::Clock& clock);
  platform::CommGroup& world() override { return *world_; }
  int node_of(int world_rank) const override {
    if (world_rank < 0 || world_rank >= ranks_)
      throw std::out_of_range("LocalComm::node_of: no rank " + std::to_string(world_rank) + " in a world of " +
                              std::to_string(ranks_));
    return world_rank / ranks_per_node_;
  }

  detail::LocalHub& hub;
  RealSync sync;
  platform::CompletionBoard board{sync};
  int rank;
  platform::ActivitySink* sink = nullptr;
  const platform::Clock* clock;

 private:
  int ranks_;
  int ranks_per_node_;
  std::unique_ptr<platform::CommGroup> world_;
};

namespace {

class LocalGroup final : public platform::CheckedCommGroup {
 public:
  LocalGroup(LocalComm& owner, std::string id, std::vector<int> members)
      : owner_(owner), id_(std::move(id)), members_(std::move(members)) {
    const auto me = std::find(members_.begin(), members_.end(), owner_.rank);
    if (me == members_.end()) throw std::logic_error("LocalGroup " + id_ + ": rank " + std::to_string(owner_.rank) +
                                                     " is not a member");
    my_index_ = static_cast<int>(me - members_.begin());
  }

  int rank() const noexcept override { return my_index_; }
  int size() const noexcept override { return static_cast<int>(members_.size()); }
  int world_rank(int group_rank) const override {
    if (group_rank < 0 || group_rank >= size())
      throw std::out_of_range("LocalGroup::world_rank: no group rank " + std::to_string(group_rank) +
                              " in a group of " + std::to_string(size()));
    return members_[static_cast<std::size_t>(group_rank)];
  }

  std::unique_ptr<platform::CommGroup> split(int colour, int key) override {
    const std::string name = id_ + "/" + std::to_string(splits_++);
    std::vector<int> joined = owner_.hub.split(name, members_, my_index_, colour, key);
    if (colour < 0) return nullptr;
    return std::make_unique<LocalGroup>(owner_, name + ":" + std::to_string(colour), std::move(joined));
  }

 private:
  platform::Pending start(const platform::CollectiveCall& c, platform::CollectiveOptions options) override {
    auto [promise, pending] = owner_.board.make();
    Call call;
    static_cast<platform::CollectiveCall&>(call) = c;
    call.promise = std::move(promise);
    call.label = std::move(options.label);
    call.tag = options.tag;
    call.world_rank = owner_.rank;
    call.sink = owner_.sink;
    call.clock = owner_.clock;
    owner_.hub.call(id_ + "#" + std::to_string(collectives_++), size(), my_index_, std::move(call),
                    std::move(options.after));
    return std::move(pending);
  }

  LocalComm& owner_;
  std::string id_;            // the same on every member: "world", then "<parent>/<split>:<colour>"
  std::vector<int> members_;  // world ranks, in group rank order
  int my_index_ = 0;
  std::int64_t collectives_ = 0;  // calls made on this group so far (matches them across members)
  std::int64_t splits_ = 0;
};

std::vector<int> every_rank(int ranks) {
  std::vector<int> all(static_cast<std::size_t>(ranks));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

}  // namespace

LocalComm::LocalComm(detail::LocalHub& h, int r, int ranks, int ranks_per_node, const platform::Clock& c)
    : hub(h),
      rank(r),
      clock(&c),
      ranks_(ranks),
      ranks_per_node_(ranks_per_node),
      world_(std::make_unique<LocalGroup>(*this, "world", every_rank(ranks))) {}

LocalCommWorld::LocalCommWorld(int ranks, int ranks_per_node) : ranks_per_node_(ranks_per_node) {
  if (ranks < 1) throw std::invalid_argument("LocalCommWorld: needs at least one rank, got " + std::to_string(ranks));
  if (ranks_per_node < 1)
    throw std::invalid_argument("LocalCommWorld: ranks_per_node must be at least 1, got " +
                                std::to_string(ranks_per_node));
  hub_ = std::make_unique<detail::LocalHub>();
  for (int r = 0; r < ranks; ++r)
    ranks_.push_back(std::make_unique<LocalComm>(*hub_, r, ranks, ranks_per_node, clock_));
}

LocalCommWorld::~LocalCommWorld() { hub_->shutdown(); }

platform::Comm& LocalCommWorld::rank(int r) {
  if (r < 0 || r >= size())
    throw std::out_of_range("LocalCommWorld::rank: no rank " + std::to_string(r) + " in a world of " +
                            std::to_string(size()));
  return *ranks_[static_cast<std::size_t>(r)];
}

void LocalCommWorld::record(int r, platform::ActivitySink* sink, const platform::Clock* clock) {
  rank(r);  // checks r
  LocalComm& c = *ranks_[static_cast<std::size_t>(r)];
  c.sink = sink;
  c.clock = clock != nullptr ? clock : &clock_;
}

}  // namespace asteria::real

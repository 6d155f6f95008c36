#include "sim/comm/sim_comm.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

SimGroup::SimGroup(CommHub& hub, RankContext rank, std::string id, std::vector<int> members)
    : hub_(hub), rank_(rank), id_(std::move(id)), members_(std::move(members)) {
  const auto me = std::find(members_.begin(), members_.end(), rank_.unit);
  if (me == members_.end()) throw std::logic_error("SimGroup " + id_ + ": unit " + std::to_string(rank_.unit) +
                                                   " is not a member");
  my_index_ = static_cast<int>(me - members_.begin());
}

int SimGroup::world_rank(int group_rank) const {
  if (group_rank < 0 || group_rank >= size())
    throw std::out_of_range("SimGroup::world_rank: no group rank " + std::to_string(group_rank) + " in a group of " +
                            std::to_string(size()));
  return members_[static_cast<std::size_t>(group_rank)];
}

platform::Pending SimGroup::start(CollectiveCall call, platform::CollectiveOptions options) {
  auto [promise, pending] = rank_.board->make();
  call.promise = std::move(promise);
  call.label = std::move(options.label);
  call.tag = options.tag;
  call.activities = rank_.activities;
  const std::int64_t sequence = collectives_++;
  // The call joins the others once its input exists; the caller goes on at once.
  sg4::Actor::create(id_ + " collective " + std::to_string(sequence) + " rank " + std::to_string(my_index_),
                     rank_.host,
                     // By value: the group may be gone before its call completes.
                     [hub = &hub_, id = id_, members = members_, index = my_index_, sequence, call = std::move(call),
                      after = std::move(options.after)]() mutable {
                       sg4::Actor::self()->daemonize();  // a member that never calls must not hang the run
                       for (const platform::Pending& p : after) {
                         if (!p.valid()) continue;
                         const Status s = p.status();
                         if (!s.ok() && call.input.ok())
                           call.input = Status(s.code(), "an input of the collective failed: " + s.reason());
                       }
                       hub->arrive(id, sequence, members, index, std::move(call));
                     });
  return std::move(pending);
}

namespace {
CollectiveCall call_of(platform::Collective collective, platform::ReduceOp op, int root, platform::CommBuffer in,
                       platform::CommBuffer out) {
  CollectiveCall call;
  call.collective = collective;
  call.op = op;
  call.root = root;
  call.in = in;
  call.out = out;
  return call;
}
}  // namespace

platform::Pending SimGroup::all_reduce(platform::CommBuffer data, platform::ReduceOp op,
                                       platform::CollectiveOptions options) {
  platform::check_collective(platform::Collective::all_reduce, *this, data, data);
  return start(call_of(platform::Collective::all_reduce, op, 0, data, data), std::move(options));
}

platform::Pending SimGroup::reduce_scatter(platform::CommBuffer all, platform::CommBuffer mine, platform::ReduceOp op,
                                           platform::CollectiveOptions options) {
  platform::check_collective(platform::Collective::reduce_scatter, *this, all, mine);
  return start(call_of(platform::Collective::reduce_scatter, op, 0, all, mine), std::move(options));
}

platform::Pending SimGroup::all_gather(platform::CommBuffer mine, platform::CommBuffer all,
                                       platform::CollectiveOptions options) {
  platform::check_collective(platform::Collective::all_gather, *this, mine, all);
  return start(call_of(platform::Collective::all_gather, platform::ReduceOp::sum, 0, mine, all), std::move(options));
}

platform::Pending SimGroup::broadcast(platform::CommBuffer data, int root, platform::CollectiveOptions options) {
  platform::check_collective(platform::Collective::broadcast, *this, data, data);
  if (root < 0 || root >= size())
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank of a group of " +
                                std::to_string(size()));
  return start(call_of(platform::Collective::broadcast, platform::ReduceOp::sum, root, data, data), std::move(options));
}

std::unique_ptr<platform::CommGroup> SimGroup::split(int colour, int key) {
  const std::int64_t sequence = splits_++;
  std::vector<int> joined = hub_.split(id_, sequence, members_, my_index_, colour, key);
  if (colour < 0) return nullptr;
  return std::make_unique<SimGroup>(hub_, rank_, id_ + "/" + std::to_string(sequence) + ":" + std::to_string(colour),
                                    std::move(joined));
}

namespace {
std::vector<int> every_unit(int units) {
  std::vector<int> all(static_cast<std::size_t>(units));
  std::iota(all.begin(), all.end(), 0);
  return all;
}
}  // namespace

SimComm::SimComm(CommHub& hub, RankContext rank, int units)
    : hub_(hub), world_(hub, rank, "world", every_unit(units)) {}

}  // namespace asteria::sim

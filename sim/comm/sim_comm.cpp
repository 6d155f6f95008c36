#include "sim/comm/sim_comm.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace asteria::sim {


namespace {
// Of the finished `after` work: the first failure becomes the call's input status.
void fold_inputs(const std::vector<platform::Pending>& after, Status& input) {
  for (const platform::Pending& p : after) {
    if (!p.valid()) continue;
    const Status s = p.status();
    if (!s.ok() && input.ok()) input = Status(s.code(), "an input of the collective failed: " + s.reason());
  }
}
}  // namespace

SimGroup::SimGroup(CommHub& hub, RankContext rank, std::string id, std::vector<int> members)
    : hub_(hub), rank_(rank), id_(std::move(id)) {
  const auto me = std::find(members.begin(), members.end(), rank_.unit);
  if (me == members.end()) throw std::logic_error("SimGroup " + id_ + ": unit " + std::to_string(rank_.unit) +
                                                  " is not a member");
  my_index_ = static_cast<int>(me - members.begin());
  group_ = hub_.register_group(id_, members);
  members_ = hub_.members(group_);
}

int SimGroup::world_rank(int group_rank) const {
  if (group_rank < 0 || group_rank >= size())
    throw std::out_of_range("SimGroup::world_rank: no group rank " + std::to_string(group_rank) + " in a group of " +
                            std::to_string(size()));
  return (*members_)[static_cast<std::size_t>(group_rank)];
}

platform::Pending SimGroup::start(const platform::CollectiveCall& c, platform::CollectiveOptions options) {
  auto [promise, pending] = rank_.board->make();
  MemberCall call;
  static_cast<platform::CollectiveCall&>(call) = c;
  call.promise = std::move(promise);
  call.label = std::move(options.label);
  call.tag = options.tag;
  call.activities = rank_.activities;
  const std::int64_t sequence = collectives_++;
  // The call joins the others once its inputs have finished: now if they have, otherwise from the
  // completion of the last of them (no actor that waits: an actor is a mapped stack and a context
  // to switch to, and a 7B fsdp step would make thousands).
  platform::Pending::when_all_settled(options.after, [hub = &hub_, group = group_, index = my_index_, sequence,
                                                      call = std::move(call), after = options.after,  // by value:
                                                      host = rank_.host]() mutable {  // the group may be gone
    fold_inputs(after, call.input);
    hub->arrive(group, sequence, index, std::move(call), /*may_block=*/false, host);
  });
  return std::move(pending);
}

std::unique_ptr<platform::CommGroup> SimGroup::split(int colour, int key) {
  const std::int64_t sequence = splits_++;
  std::vector<int> joined = hub_.split(group_, sequence, my_index_, colour, key);
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

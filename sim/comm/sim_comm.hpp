#pragma once
// One simulated rank's communicator: its world group (every unit of the simulation) and the
// groups split from it. Collectives go through the simulation's CommHub (comm_hub.hpp).
#include <memory>
#include <string>
#include <vector>

#include "core/platform/comm.hpp"
#include "sim/comm/comm_hub.hpp"

namespace asteria::sim {

// What a rank's groups need of its platform.
struct RankContext {
  int unit = 0;
  simgrid::s4u::Host* host = nullptr;          // where the rank's waiting actors run (its CPU)
  platform::CompletionBoard* board = nullptr;  // the rank's Pendings
  platform::ActivitySink* activities = nullptr;
};

class SimGroup final : public platform::CheckedCommGroup {
 public:
  SimGroup(CommHub& hub, RankContext rank, std::string id, std::vector<int> members);

  int rank() const noexcept override { return my_index_; }
  int size() const noexcept override { return static_cast<int>(members_->size()); }
  int world_rank(int group_rank) const override;

  std::unique_ptr<platform::CommGroup> split(int colour, int key) override;

 private:
  platform::Pending start(const platform::CollectiveCall& c, platform::CollectiveOptions options) override;

  CommHub& hub_;
  RankContext rank_;
  std::string id_;  // the same on every member: "world", then "<parent>/<split>:<colour>"
  int group_ = 0;   // the hub's id of the group
  CommHub::MemberList members_;  // units, in group rank order (shared with the other members)
  int my_index_ = 0;
  std::int64_t collectives_ = 0;  // calls made on this group so far (matches them across members)
  std::int64_t splits_ = 0;
};

class SimComm final : public platform::Comm {
 public:
  SimComm(CommHub& hub, RankContext rank, int units);
  platform::CommGroup& world() override { return world_; }
  int node_of(int world_rank) const override { return hub_.node_of(world_rank); }

 private:
  CommHub& hub_;
  SimGroup world_;
};

}  // namespace asteria::sim

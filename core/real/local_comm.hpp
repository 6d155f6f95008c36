#pragma once
// An in-process communicator: the ranks are threads of one process sharing one address space
// (the fake backend of data parallelism, for tests and single-machine runs without MPI).
//
//   LocalCommWorld world(4, 2);            // four ranks, two per node
//   platform::Comm& mine = world.rank(r);  // rank r's view, used from rank r's thread
//
// Calls match by group and by their order in the group, as in MPI: the i-th call of a group on
// each member is one collective, and members whose calls differ (kind, sizes, dtype, op, root)
// all fail. A call never blocks its caller: a call whose `after` work is unfinished waits on a
// thread of its own (so no call holds up another, as in the simulator), and when the last
// member has arrived the world's worker thread combines the values (platform::combine_values:
// the reference bits) and completes every member's Pending. Splits are collective and block the
// caller until every member of the group has called them, as MPI_Comm_split does.
//
// Each rank's groups are used from one thread at a time (the rank's issuing thread).
#include <memory>
#include <vector>

#include "core/platform/clock.hpp"
#include "core/platform/comm.hpp"
#include "core/real/real_clock.hpp"

namespace asteria::real {

namespace detail {
class LocalHub;
}
class LocalComm;

class LocalCommWorld {
 public:
  // `ranks` >= 1 ranks filling nodes of `ranks_per_node` >= 1 in order (node_of(r) = r /
  // ranks_per_node); std::invalid_argument otherwise.
  LocalCommWorld(int ranks, int ranks_per_node);
  // Waits for calls still waiting on their `after` work, completes those every member made, and
  // fails the Pendings of collectives some member never called. Every `after` must finish.
  ~LocalCommWorld();
  LocalCommWorld(const LocalCommWorld&) = delete;
  LocalCommWorld& operator=(const LocalCommWorld&) = delete;

  int size() const noexcept { return static_cast<int>(ranks_.size()); }
  int ranks_per_node() const noexcept { return ranks_per_node_; }
  // Rank r's communicator (std::out_of_range for no such rank).
  platform::Comm& rank(int r);
  // Rank r records one activity per collective on `sink` (not owned, must outlive the world;
  // null: nothing recorded), timed by `clock` (not owned; null: a clock started with the
  // world). Call before rank r issues collectives, from its thread.
  void record(int r, platform::ActivitySink* sink, const platform::Clock* clock = nullptr);

 private:
  int ranks_per_node_;
  RealClock clock_;  // times the activities of ranks given no clock
  std::unique_ptr<detail::LocalHub> hub_;
  std::vector<std::unique_ptr<LocalComm>> ranks_;  // after the hub: they point into it
};

}  // namespace asteria::real

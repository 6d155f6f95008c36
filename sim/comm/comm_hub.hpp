#pragma once
// Where the simulated ranks' collectives meet. Each rank's SimGroup hands its call to the hub
// from a small actor that first waits for the call's `after` work; when the last member of the
// group has arrived, that actor moves the collective's flows over the simulated links
// (sim/collective: ring, tree or hierarchical), combines the values in data-true runs
// (platform::combine_values: rank order, so replicas stay bitwise equal), records one activity
// per member on its "gpu<u> comm" track and completes every member's Pending (hierarchical over
// a group whose nodes hold different numbers of members runs as a ring). Calls match by
// group and by their order in the group, as in MPI. Actors share one OS thread: no locks.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "core/platform/comm.hpp"
#include "sim/collective/flow_schedule.hpp"
#include "sim/recorder.hpp"
#include "sim/topology.hpp"

namespace asteria::sim {

// One member's part of a collective.
struct CollectiveCall {
  platform::Collective collective = platform::Collective::all_reduce;
  platform::ReduceOp op = platform::ReduceOp::sum;
  int root = 0;
  platform::CommBuffer in;
  platform::CommBuffer out;
  Status input;  // the `after` work's outcome: a failure fails the collective for every member
  platform::Promise promise;
  std::string label;
  platform::OpTag tag;
  platform::ActivitySink* activities = nullptr;  // the member's sink; null: not recorded
};

class CommHub {
 public:
  CommHub(const Topology& topology, collective::Algorithm algorithm, Recorder& recorder);
  CommHub(const CommHub&) = delete;
  CommHub& operator=(const CommHub&) = delete;

  collective::Algorithm algorithm() const noexcept { return algorithm_; }
  int node_of(int unit) const;

  // Call `sequence` of group `group` (its members: units in group rank order) by member
  // `group_rank`. Returns at once unless this is the last member: then it runs the collective
  // (simulated time passes) and returns when every member's Pending is complete. Inside an
  // actor only.
  void arrive(const std::string& group, std::int64_t sequence, const std::vector<int>& members, int group_rank,
              CollectiveCall call);

  // The members (units, in group order) of the group that `group_rank` joins with `colour`
  // (empty for a negative colour), once every member of `group` has called split `sequence`.
  // Blocks the calling actor until then.
  std::vector<int> split(const std::string& group, std::int64_t sequence, const std::vector<int>& members,
                         int group_rank, int colour, int key);

 private:
  struct Gathering {
    std::vector<std::optional<CollectiveCall>> calls;
    int arrived = 0;
  };
  struct SplitGathering {
    std::vector<std::pair<int, int>> colour_and_key;  // per group rank
    int arrived = 0;
    bool complete = false;
  };
  void run(const std::vector<int>& members, std::vector<std::optional<CollectiveCall>>& calls);
  // The configured algorithm, or ring for a hierarchical collective over uneven nodes.
  collective::Algorithm algorithm_for(const collective::Members& who) const;

  const Topology& topology_;
  collective::Algorithm algorithm_;
  Recorder& recorder_;
  std::map<std::string, Gathering> open_;
  std::map<std::string, SplitGathering> splits_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr split_done_;
};

}  // namespace asteria::sim

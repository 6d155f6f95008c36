#pragma once
// Where the simulated ranks' collectives meet. Each rank's SimGroup hands its call to the hub
// once the call's `after` work has finished (at once when it already has; otherwise from the
// completion of its last input: Pending::when_all_settled). When the last member of the group has
// arrived, the collective runs: alone on its links with an exact prediction
// (collective_choice.hpp), it lasts its predicted time on a timer (no actor, no flows); otherwise
// its flows move over the simulated links (sim/collective: ring, tree or hierarchical, by default
// the algorithm and protocol NCCL would pick for the call's size and group) in a fresh actor.
// Then the values are combined in data-true runs (platform::combine_values: rank order, so
// replicas stay bitwise equal), one activity per member is recorded on its "gpu<u> comm" track
// and every member's Pending completes (hierarchical over a group whose nodes hold different
// numbers of members runs as a ring). Calls match by group and by their order in the group, as in
// MPI. Actors and timers share one OS thread: no locks.
//
// Representative ranks (SimulationOptions::simulated_units): units from simulated_units on are
// mirrors that run nothing. A collective starts when its simulated members have arrived (a
// mirror, running the same work as they do, would arrive with them) and runs only the flows with
// a simulated end: every link of a simulated unit carries what it carries in the full run.
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

#include "core/platform/comm.hpp"
#include "sim/collective/collective_choice.hpp"
#include "sim/collective/flow_schedule.hpp"
#include "sim/recorder.hpp"
#include "sim/timers.hpp"
#include "sim/topology.hpp"

namespace asteria::sim {

// One member's part of a collective.
struct MemberCall : platform::CollectiveCall {
  Status input;  // the `after` work's outcome: a failure fails the collective for every member
  platform::Promise promise;
  std::string label;
  platform::OpTag tag;
  platform::ActivitySink* activities = nullptr;  // the member's sink; null: not recorded
};

// Stack of the short-lived actors that run a collective's flows: they call no deep code (no BLAS;
// combine_values loops), and SimGrid zeroes each new actor's stack, so the default 8 MiB cost
// more to create than the actor's work.
inline constexpr unsigned kCollectiveActorStack = 256 * 1024;

struct CommHubSettings {
  // None: NCCL's choice per call (collective_choice.hpp); the protocol is always chosen so.
  std::optional<collective::Algorithm> algorithm;
  int simulated_units = 0;           // units 0 .. simulated_units-1 run; the others mirror them
  bool coalesce_ring_steps = false;  // collective::RunFlowsOptions::coalesce_repeats
  // Each group runs its collectives one at a time, in call order (SimulationOptions).
  bool serial_collectives = true;
  bool predicted_collectives = true;  // SimulationOptions::predicted_collectives
};

class CommHub {
 public:
  CommHub(const Topology& topology, CommHubSettings settings, Recorder& recorder);
  CommHub(const CommHub&) = delete;
  CommHub& operator=(const CommHub&) = delete;

  std::optional<collective::Algorithm> algorithm() const noexcept { return settings_.algorithm; }
  int node_of(int unit) const;

  using MemberList = std::shared_ptr<const std::vector<int>>;
  // The id of the group named `name` (the same on every member) with these members (units, in
  // group rank order); its member list is shared by the members' handles.
  int register_group(const std::string& name, const std::vector<int>& members);
  const MemberList& members(int group) const;
  const std::string& name(int group) const;

  // Call `sequence` of `group` by member `group_rank`, whose `after` work has finished. Returns
  // at once unless this is the last (simulated) member, `may_block` and the collective runs its
  // flows: then it runs them (simulated time passes) and returns when every member's Pending is
  // complete; with `may_block` false they run in a fresh actor on `host` instead. From an actor,
  // a timer or a completion, or before the simulation runs.
  void arrive(int group, std::int64_t sequence, int group_rank, MemberCall call, bool may_block,
              simgrid::s4u::Host* host);

  // The members (units, in group order) of the group that `group_rank` joins with `colour`
  // (empty for a negative colour), once every member of `group` has called split `sequence`.
  // Blocks the calling actor until then. Throws std::logic_error for a group with mirrors (their
  // colours are unknown).
  std::vector<int> split(int group, std::int64_t sequence, int group_rank, int colour, int key);

  // The mains are done: collectives waiting out their predicted time never end (Simulation).
  void stop();

 private:
  using Calls = std::vector<std::optional<MemberCall>>;
  struct Group {
    std::string name;
    MemberList members;
    std::vector<int> nodes;  // the nodes of its members, sorted, once each
    // Its members as the collective schedules take them (units and their nodes), made once: shared,
    // as `members`, with collectives still running when groups are added.
    std::shared_ptr<const collective::Members> who;
    int simulated = 0;  // members that run (the others are mirrors)
    // serial_collectives: the next call to run, whether one runs, and those gathered early.
    std::int64_t next = 0;
    bool running = false;
    std::map<std::int64_t, std::shared_ptr<Calls>> gathered;
  };
  struct Gathering {
    std::vector<std::optional<MemberCall>> calls;
    int arrived = 0;
    int first = -1;               // the group rank whose call came first
    double first_arrival = -1.0;  // simulated time of the first member's call
    bool together = true;         // every member so far called at first_arrival
  };
  struct SplitGathering {
    std::vector<std::pair<int, int>> colour_and_key;  // per group rank
    int arrived = 0;
    bool complete = false;
  };
  struct Running;
  // How a gathered collective runs, decided when it starts.
  struct Launch {
    double start = 0.0;
    Status outcome;            // the members' inputs' (a failure: no flows, it fails at once)
    bool flows = false;        // its flows run; otherwise it lasts `seconds` (a timer)
    double seconds = 0.0;      // its predicted time
    bool holds_links = false;  // listed in running_ (at `running`) until it finishes
    std::list<CommHub::Running>::iterator running;
    const collective::CollectiveChoice* choice = nullptr;  // in choices_ (stable): what runs
    bool complete = true;  // every member called (no mirrors)
  };
  // Starts `calls`: a timer when no flows need to run, else their flows inline (`may_block`)
  // or in a fresh actor on `host`. Then finish().
  void start(int group, std::shared_ptr<Calls> calls, bool may_block, simgrid::s4u::Host* host);
  Launch decide(int group, const Calls& calls);
  void run_flows(int group, const Calls& calls, const Launch& launch);
  // Values combined, activities recorded, every member's Pending fulfilled; under
  // serial_collectives, then the group's next gathered call, if any, starts.
  void finish(int group, Calls& calls, const Launch& launch);
  simgrid::s4u::Host* host_of(int group) const;  // its first simulated member's CPU
  // The algorithm, protocol and shape a call of this group runs: the configured algorithm (ring
  // for a hierarchical collective over uneven nodes) or NCCL's choice, with the protocol of least
  // predicted time; remembered per group, collective, size and root (a step repeats its calls).
  const collective::CollectiveChoice& choice_for(int group, const collective::Members& who,
                                                 platform::Collective collective, double bytes, int root);
  bool mirrored(int unit) const noexcept { return unit >= settings_.simulated_units; }
  // Keeps the flows with a simulated end (a phase left with none keeps its first flow, so that it
  // still takes its time).
  collective::FlowSchedule without_mirror_flows(collective::FlowSchedule schedule) const;

  const Topology& topology_;
  CommHubSettings settings_;
  Recorder& recorder_;
  std::vector<Group> groups_;
  collective::LinkCosts link_costs_;
  std::map<std::tuple<int, platform::Collective, double, int>, collective::CollectiveChoice> choices_;
  // Collectives running now: their group and whether they run as their predicted time.
  struct Running {
    int group = 0;
    bool predicted = false;
  };
  Timers timers_;  // collectives waiting out their predicted time
  std::list<Running> running_;
  bool share_nodes(int a, int b) const;
  std::map<std::string, int> group_ids_;
  std::map<std::pair<int, std::int64_t>, Gathering> open_;
  std::map<std::pair<int, std::int64_t>, SplitGathering> splits_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr split_done_;
};

}  // namespace asteria::sim

#include "sim/comm/comm_hub.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/platform/collective_values.hpp"
#include "sim/collective/run_flows.hpp"

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

namespace {

std::string key_of(const std::string& group, std::int64_t sequence) { return group + "#" + std::to_string(sequence); }

// The nccl-tests size of a collective: the buffer, or for reduce_scatter / all_gather the whole.
double schedule_bytes(const CollectiveCall& call) {
  switch (call.collective) {
    case platform::Collective::all_reduce:
    case platform::Collective::broadcast:
    case platform::Collective::reduce_scatter: return static_cast<double>(call.in.bytes());
    case platform::Collective::all_gather: return static_cast<double>(call.out.bytes());
  }
  return 0.0;
}

// Hierarchical needs the same number of members on every node; a group split otherwise (three
// ranks over two nodes) runs as a ring instead of failing.
bool even_over_nodes(const collective::Members& who) {
  std::map<int, int> per_node;
  for (int node : who.nodes) ++per_node[node];
  return std::all_of(per_node.begin(), per_node.end(),
                     [&](const auto& entry) { return entry.second == per_node.begin()->second; });
}

bool same_call(const CollectiveCall& a, const CollectiveCall& b) {
  return a.collective == b.collective && a.op == b.op && a.root == b.root && a.in.count == b.in.count &&
         a.out.count == b.out.count && a.in.dtype == b.in.dtype && a.in.bytes_only() == b.in.bytes_only();
}

}  // namespace

CommHub::CommHub(const Topology& topology, collective::Algorithm algorithm, Recorder& recorder)
    : topology_(topology),
      algorithm_(algorithm),
      recorder_(recorder),
      mutex_(sg4::Mutex::create()),
      split_done_(sg4::ConditionVariable::create()) {}

int CommHub::node_of(int unit) const {
  if (unit < 0 || static_cast<std::size_t>(unit) >= topology_.units.size())
    throw std::out_of_range("CommHub::node_of: no unit " + std::to_string(unit));
  return topology_.units[static_cast<std::size_t>(unit)].node;
}

void CommHub::arrive(const std::string& group, std::int64_t sequence, const std::vector<int>& members,
                     int group_rank, CollectiveCall call) {
  const std::string key = key_of(group, sequence);
  Gathering& g = open_[key];
  if (g.calls.empty()) g.calls.resize(members.size());
  auto& slot = g.calls[static_cast<std::size_t>(group_rank)];
  if (slot) throw std::logic_error("CommHub: rank " + std::to_string(group_rank) + " called " + key + " twice");
  for (const auto& other : g.calls)
    if (other && !same_call(*other, call))
      call.input = Status(StatusCode::invalid_argument, "collective " + key + ": the members' calls differ (" +
                                   std::string(platform::to_string(other->collective)) + " of " +
                                   std::to_string(other->in.count) + " against " +
                                   std::string(platform::to_string(call.collective)) + " of " +
                                   std::to_string(call.in.count) + " elements)");
  slot = std::move(call);
  if (++g.arrived < static_cast<int>(members.size())) return;
  auto calls = std::move(g.calls);
  open_.erase(key);
  run(members, calls);
}

collective::Algorithm CommHub::algorithm_for(const collective::Members& who) const {
  if (algorithm_ == collective::Algorithm::hierarchical && !even_over_nodes(who)) return collective::Algorithm::ring;
  return algorithm_;
}

void CommHub::run(const std::vector<int>& members, std::vector<std::optional<CollectiveCall>>& calls) {
  Status outcome = Status::success();
  for (const auto& c : calls)
    if (!c->input.ok() && outcome.ok()) outcome = c->input;
  const CollectiveCall& first = *calls.front();
  const double start = sg4::Engine::get_clock();
  if (outcome.ok()) {
    collective::Members who;
    for (int unit : members) {
      who.units.push_back(unit);
      who.nodes.push_back(node_of(unit));
    }
    const collective::FlowSchedule schedule =
        collective::flow_schedule(algorithm_for(who), first.collective, who, schedule_bytes(first), first.root);
    for (const collective::Phase& phase : schedule) recorder_.counts().communications += phase.flows.size();
    collective::run_flows(schedule, topology_);
    if (!first.in.bytes_only()) {
      std::vector<platform::CommBuffer> ins, outs;
      for (const auto& c : calls) {
        ins.push_back(c->in);
        outs.push_back(c->out);
      }
      platform::combine_values(first.collective, first.op, first.root, ins, outs);
    }
  }
  const double end = sg4::Engine::get_clock();
  for (std::size_t r = 0; r < calls.size(); ++r) {
    CollectiveCall& c = *calls[r];
    if (c.activities != nullptr && c.activities->recording(c.tag.step)) {
      platform::Activity a;
      a.track = platform::comm_track(members[r]);
      a.label = c.label.empty() ? std::string(platform::to_string(c.collective)) : c.label;
      a.tag = c.tag;
      a.cost = platform::Cost{platform::WorkKind::other, 0.0, schedule_bytes(c), 0};
      a.start = start;
      a.end = end;
      a.ok = outcome.ok();
      c.activities->record(std::move(a));
    }
    c.promise.fulfil(outcome);
  }
}

std::vector<int> CommHub::split(const std::string& group, std::int64_t sequence, const std::vector<int>& members,
                                int group_rank, int colour, int key) {
  const std::string name = key_of(group, sequence);
  SplitGathering& g = splits_[name];
  if (g.colour_and_key.empty()) g.colour_and_key.assign(members.size(), {-1, 0});
  g.colour_and_key[static_cast<std::size_t>(group_rank)] = {colour, key};
  if (++g.arrived == static_cast<int>(members.size())) {
    g.complete = true;
    split_done_->notify_all();
  } else {
    std::unique_lock lock(*mutex_);
    split_done_->wait(lock, [&g] { return g.complete; });
  }
  std::vector<int> joined;
  if (colour >= 0) {
    std::vector<std::pair<int, int>> order;  // (key, group rank) of the members of my colour
    for (std::size_t r = 0; r < members.size(); ++r)
      if (g.colour_and_key[r].first == colour) order.emplace_back(g.colour_and_key[r].second, static_cast<int>(r));
    std::sort(order.begin(), order.end());
    for (const auto& [k, r] : order) joined.push_back(members[static_cast<std::size_t>(r)]);
  }
  if (--g.arrived == 0) splits_.erase(name);
  return joined;
}

}  // namespace asteria::sim

#include "sim/comm/comm_hub.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <simgrid/Exception.hpp>

#include "core/platform/collective_values.hpp"
#include "sim/collective/run_flows.hpp"

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

namespace {

std::string key_text(const std::string& group, std::int64_t sequence) { return group + "#" + std::to_string(sequence); }

// The nccl-tests size of a collective: the buffer, or for reduce_scatter / all_gather the whole.
double schedule_bytes(const MemberCall& call) {
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

// The first simulated member's call (every collective has one: it starts when they have called).
const MemberCall& first_call(const std::vector<std::optional<MemberCall>>& calls) {
  for (const auto& c : calls)
    if (c) return *c;
  throw std::logic_error("CommHub: a collective without a simulated member's call");
}

bool same_call(const MemberCall& a, const MemberCall& b) {
  return a.collective == b.collective && a.op == b.op && a.root == b.root && a.in.count == b.in.count &&
         a.out.count == b.out.count && a.in.dtype == b.in.dtype && a.in.bytes_only() == b.in.bytes_only();
}

}  // namespace

CommHub::CommHub(const Topology& topology, CommHubSettings settings, Recorder& recorder)
    : topology_(topology),
      settings_(settings),
      recorder_(recorder),
      link_costs_(topology),
      mutex_(sg4::Mutex::create()),
      split_done_(sg4::ConditionVariable::create()) {
  const int units = static_cast<int>(topology_.units.size());
  if (settings_.simulated_units <= 0 || settings_.simulated_units > units) settings_.simulated_units = units;
}

int CommHub::node_of(int unit) const {
  if (unit < 0 || static_cast<std::size_t>(unit) >= topology_.units.size())
    throw std::out_of_range("CommHub::node_of: no unit " + std::to_string(unit));
  return topology_.units[static_cast<std::size_t>(unit)].node;
}

int CommHub::register_group(const std::string& name, const std::vector<int>& members) {
  const auto [it, added] = group_ids_.try_emplace(name, static_cast<int>(groups_.size()));
  if (added) {
    const auto simulated = std::count_if(members.begin(), members.end(), [this](int u) { return !mirrored(u); });
    Group g;
    g.name = name;
    g.members = std::make_shared<const std::vector<int>>(members);
    auto who = std::make_shared<collective::Members>();
    who->units = members;
    for (const int unit : members) who->nodes.push_back(node_of(unit));
    g.nodes = who->nodes;
    g.who = std::move(who);
    std::sort(g.nodes.begin(), g.nodes.end());
    g.nodes.erase(std::unique(g.nodes.begin(), g.nodes.end()), g.nodes.end());
    g.simulated = static_cast<int>(simulated);
    groups_.push_back(std::move(g));
  } else if (*groups_[static_cast<std::size_t>(it->second)].members != members) {
    throw std::logic_error("CommHub: group " + name + " registered with different members");
  }
  return it->second;
}

const CommHub::MemberList& CommHub::members(int group) const { return groups_.at(static_cast<std::size_t>(group)).members; }
const std::string& CommHub::name(int group) const { return groups_.at(static_cast<std::size_t>(group)).name; }

void CommHub::arrive(int group, std::int64_t sequence, int group_rank, MemberCall call, bool may_block,
                     sg4::Host* host) {
  const Group& g = groups_.at(static_cast<std::size_t>(group));
  const auto key = std::make_pair(group, sequence);
  Gathering& gathering = open_[key];
  if (gathering.calls.empty()) gathering.calls.resize(g.members->size());
  auto& slot = gathering.calls[static_cast<std::size_t>(group_rank)];
  if (slot)
    throw std::logic_error("CommHub: rank " + std::to_string(group_rank) + " called " + key_text(g.name, sequence) +
                           " twice");
  // Against the first call only: calls that each match it match one another (O(1) an arrival, not
  // O(members): a world of 1024 ranks made every collective a million comparisons).
  if (gathering.first >= 0) {
    const MemberCall& other = *gathering.calls[static_cast<std::size_t>(gathering.first)];
    if (!same_call(other, call))
      call.input = Status(StatusCode::invalid_argument, "collective " + key_text(g.name, sequence) +
                                   ": the members' calls differ (" +
                                   std::string(platform::to_string(other.collective)) + " of " +
                                   std::to_string(other.in.count) + " against " +
                                   std::string(platform::to_string(call.collective)) + " of " +
                                   std::to_string(call.in.count) + " elements)");
  } else {
    gathering.first = group_rank;
  }
  slot = std::move(call);
  // Representative ranks stand for the mirrors only if the simulated ones are alike: they reach
  // every collective at the same time.
  const double now = sg4::Engine::get_clock();
  if (gathering.first_arrival < 0.0) gathering.first_arrival = now;
  else if (now != gathering.first_arrival) gathering.together = false;
  if (++gathering.arrived < g.simulated) return;
  if (g.simulated < static_cast<int>(g.members->size()) && !gathering.together)
    ++recorder_.counts().collectives_asymmetric;
  auto calls = std::make_shared<Calls>(std::move(gathering.calls));
  open_.erase(key);
  if (settings_.serial_collectives) {
    Group& grp = groups_[static_cast<std::size_t>(group)];
    grp.gathered.emplace(sequence, std::move(calls));
    if (grp.running || grp.gathered.begin()->first != grp.next) return;  // not its turn yet
    calls = std::move(grp.gathered.begin()->second);
    grp.gathered.erase(grp.gathered.begin());
    grp.running = true;
  }
  start(group, std::move(calls), may_block, host);
}

void CommHub::start(int group, std::shared_ptr<Calls> calls, bool may_block, sg4::Host* host) {
  const Launch launch = decide(group, *calls);
  if (!launch.flows) {  // its predicted time, or none (failed inputs): a timer, no actor
    timers_.at(launch.start + launch.seconds, [this, group, calls, launch] { finish(group, *calls, launch); });
    return;
  }
  if (may_block) {
    run_flows(group, *calls, launch);
    finish(group, *calls, launch);
    return;
  }
  // The caller (a rank's main) goes on at once: the flows run in an actor of their own.
  sg4::Actor::init("collective", host)
      ->set_stacksize(kCollectiveActorStack)
      ->start([this, group, calls = std::move(calls), launch] {
        sg4::Actor::self()->daemonize();  // a member that never waits must not hang the run
        try {
          run_flows(group, *calls, launch);
        } catch (const simgrid::ForcefulKillException&) {
          running_.erase(launch.running);  // stopped at the end of the run
          throw;
        }
        finish(group, *calls, launch);
      });
}

void CommHub::stop() { timers_.cancel_all(); }

const collective::CollectiveChoice& CommHub::choice_for(int group, const collective::Members& who,
                                                        platform::Collective collective, double bytes, int root) {
  const auto key = std::make_tuple(group, collective, bytes, root);
  if (const auto found = choices_.find(key); found != choices_.end()) return found->second;
  std::optional<collective::Algorithm> algorithm = settings_.algorithm;
  if (algorithm == collective::Algorithm::hierarchical && !even_over_nodes(who))
    algorithm = collective::Algorithm::ring;
  return choices_
      .emplace(key, collective::choose_collective(algorithm, std::nullopt, collective, who, bytes, root, link_costs_))
      .first->second;
}

bool CommHub::share_nodes(int a, int b) const {
  const std::vector<int>& x = groups_.at(static_cast<std::size_t>(a)).nodes;
  const std::vector<int>& y = groups_.at(static_cast<std::size_t>(b)).nodes;
  for (auto i = x.begin(), j = y.begin(); i != x.end() && j != y.end();) {
    if (*i == *j) return true;
    if (*i < *j) ++i;
    else ++j;
  }
  return false;
}

collective::FlowSchedule CommHub::without_mirror_flows(collective::FlowSchedule schedule) const {
  for (collective::Phase& phase : schedule) {
    if (phase.flows.empty()) continue;
    const collective::Flow stand_in = phase.flows.front();
    std::erase_if(phase.flows, [this](const collective::Flow& f) { return mirrored(f.from) && mirrored(f.to); });
    if (phase.flows.empty()) phase.flows.push_back(stand_in);
  }
  return schedule;
}

CommHub::Launch CommHub::decide(int group, const Calls& calls) {
  Launch launch;
  launch.start = sg4::Engine::get_clock();
  const MemberCall* first = &first_call(calls);
  for (const auto& c : calls) {
    if (!c) launch.complete = false;
    else if (!c->input.ok() && launch.outcome.ok()) launch.outcome = c->input;
  }
  if (!launch.outcome.ok()) return launch;  // no flows: the collective fails at once
  if (!first->in.bytes_only() && !launch.complete)
    throw std::logic_error("CommHub: values cannot be combined over mirrored ranks (data-free only)");
  const collective::Members& who = *groups_.at(static_cast<std::size_t>(group)).who;
  const collective::CollectiveChoice& choice =
      choice_for(group, who, first->collective, schedule_bytes(*first), first->root);
  launch.choice = &choice;
  bool alone = true;
  for (const Running& other : running_) {
    if (!share_nodes(group, other.group)) continue;
    alone = false;
    if (other.predicted) ++recorder_.counts().collectives_overlapped;
  }
  const bool predicted = settings_.predicted_collectives && choice.exact && alone;
  launch.running = running_.insert(running_.end(), Running{group, predicted});
  launch.holds_links = true;
  if (predicted) {
    ++recorder_.counts().collectives_predicted;
    launch.seconds = choice.predicted_seconds;
  } else {
    launch.flows = true;
  }
  return launch;
}

void CommHub::run_flows(int group, const Calls& calls, const Launch& launch) {
  // A copy of the members: groups may be added while the flows run.
  const std::shared_ptr<const collective::Members> shared_who = groups_.at(static_cast<std::size_t>(group)).who;
  const MemberCall& first = first_call(calls);
  const collective::CollectiveChoice& choice = *launch.choice;
  collective::FlowSchedule schedule = collective::compact_flow_schedule(
      choice.algorithm, first.collective, *shared_who, schedule_bytes(first), first.root, choice.options);
  if (!launch.complete) schedule = without_mirror_flows(std::move(schedule));
  for (const collective::Phase& phase : schedule)
    recorder_.counts().communications +=
        phase.flows.size() * static_cast<std::size_t>(settings_.coalesce_ring_steps ? 1 : phase.repeat);
  collective::run_flows(schedule, topology_, {settings_.coalesce_ring_steps});
}

void CommHub::finish(int group, Calls& calls, const Launch& launch) {
  if (launch.holds_links) running_.erase(launch.running);
  const MemberList list = members(group);
  const std::vector<int>& members = *list;
  if (launch.outcome.ok()) {
    const MemberCall* first = &first_call(calls);
    if (!first->in.bytes_only()) {
      std::vector<platform::CommBuffer> ins, outs;
      for (const auto& c : calls) {
        ins.push_back(c->in);
        outs.push_back(c->out);
      }
      platform::combine_values(first->collective, first->op, first->root, ins, outs);
    }
  }
  const double end = sg4::Engine::get_clock();
  for (std::size_t r = 0; r < calls.size(); ++r) {
    if (!calls[r]) continue;
    MemberCall& c = *calls[r];
    if (c.activities != nullptr && c.activities->recording(c.tag.step)) {
      platform::Activity a;
      a.track = platform::comm_track(members[r]);
      a.label = c.label.empty() ? std::string(platform::to_string(c.collective)) : c.label;
      a.tag = c.tag;
      a.cost = platform::Cost{platform::WorkKind::other, 0.0, schedule_bytes(c), 0};
      a.start = launch.start;
      a.end = end;
      a.ok = launch.outcome.ok();
      c.activities->record(std::move(a));
    }
    c.promise.fulfil(launch.outcome);
  }
  if (!settings_.serial_collectives) return;
  // The group's next call, if it has gathered: it starts now.
  Group& grp = groups_[static_cast<std::size_t>(group)];
  grp.running = false;
  ++grp.next;
  if (grp.gathered.empty() || grp.gathered.begin()->first != grp.next) return;
  std::shared_ptr<Calls> next = std::move(grp.gathered.begin()->second);
  grp.gathered.erase(grp.gathered.begin());
  grp.running = true;
  start(group, std::move(next), /*may_block=*/false, host_of(group));
}

sg4::Host* CommHub::host_of(int group) const {
  for (const int unit : *members(group))
    if (!mirrored(unit)) return topology_.units[static_cast<std::size_t>(unit)].cpu;
  throw std::logic_error("CommHub: group " + name(group) + " has no simulated member");
}

std::vector<int> CommHub::split(int group, std::int64_t sequence, int group_rank, int colour, int key) {
  const Group& grp = groups_.at(static_cast<std::size_t>(group));
  const MemberList list = grp.members;  // a copy: `grp` may move while this actor waits
  const std::vector<int>& members = *list;
  if (grp.simulated != static_cast<int>(members.size()))
    throw std::logic_error("CommHub: split of group " + grp.name +
                           ", which holds mirrored ranks: representative ranks cannot know their colours "
                           "(simulate every unit, or run work that splits no group)");
  const auto name = std::make_pair(group, sequence);
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

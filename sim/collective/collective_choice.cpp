#include "sim/collective/collective_choice.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include <simgrid/s4u.hpp>

namespace asteria::sim::collective {

namespace sg4 = simgrid::s4u;

LinkCosts::LinkCosts(const Topology& topology) : topology_(topology) {}

const LinkCosts::Route& LinkCosts::route(int from, int to) {
  const auto key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
                   static_cast<std::uint32_t>(to);
  if (const auto found = routes_.find(key); found != routes_.end()) return found->second;
  const auto gpu = [this](int unit) {
    if (unit < 0 || static_cast<std::size_t>(unit) >= topology_.units.size())
      throw std::out_of_range("LinkCosts: unit " + std::to_string(unit) + " is not in a topology of " +
                              std::to_string(topology_.units.size()) + " units");
    return topology_.units[static_cast<std::size_t>(unit)].gpu;
  };
  Route r;
  std::vector<sg4::Link*> links;
  gpu(from)->route_to(gpu(to), links, &r.latency);
  for (sg4::Link* link : links) {
    if (link->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE) continue;
    const auto [at, added] = link_ids_.try_emplace(link, static_cast<int>(bandwidth_.size()));
    if (added) {
      bandwidth_.push_back(link->get_bandwidth());
      flows_on_.push_back(0);
      latency_on_.push_back(INFINITY);
    }
    r.links.push_back(at->second);
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

// Whether a phase takes exactly `slowest` (its slowest flow by equal shares) under max-min
// sharing: every flow moves the same bytes, and each slowest flow has the largest latency and the
// smallest share of all, on a link whose flows all have its latency. Progressive filling then
// freezes that link's flows at that share from the moment they start (together) until they end
// (together); every other flow gets at least its equal share, starts no later and ends no later.
bool LinkCosts::exact_phase(const Phase& phase, const std::vector<const Route*>& routes,
                            const std::vector<double>& rates, double slowest) {
  double bytes = -1.0, least_rate = INFINITY, most_latency = 0.0;
  for (std::size_t i = 0; i < phase.flows.size(); ++i) {
    const double b = std::ceil(phase.flows[i].bytes);
    if (b <= 0.0) continue;
    if (bytes >= 0.0 && b != bytes) return false;
    bytes = b;
    least_rate = std::min(least_rate, rates[i]);
    most_latency = std::max(most_latency, routes[i]->latency);
  }
  if (bytes < 0.0) return true;  // no flow: the latency alone
  // Per link, the latency its flows share (NaN: they differ).
  for (std::size_t i = 0; i < phase.flows.size(); ++i) {
    if (std::ceil(phase.flows[i].bytes) <= 0.0) continue;
    for (const int l : routes[i]->links) {
      double& seen = latency_on_[static_cast<std::size_t>(l)];
      if (std::isinf(seen)) seen = routes[i]->latency;
      else if (seen != routes[i]->latency) seen = NAN;
    }
  }
  bool exact = true;
  for (std::size_t i = 0; i < phase.flows.size() && exact; ++i) {
    if (std::ceil(phase.flows[i].bytes) <= 0.0) continue;
    const double time = routes[i]->latency + (std::isinf(rates[i]) ? 0.0 : bytes / rates[i]);
    if (time < slowest) continue;
    if (rates[i] != least_rate || routes[i]->latency != most_latency) {
      exact = false;
      break;
    }
    bool frozen = false;  // on a link of the least share whose flows all share its latency
    for (const int l : routes[i]->links) {
      const auto k = static_cast<std::size_t>(l);
      if (bandwidth_[k] / flows_on_[k] == least_rate && latency_on_[k] == routes[i]->latency) frozen = true;
    }
    exact = frozen || std::isinf(rates[i]);
  }
  for (std::size_t i = 0; i < phase.flows.size(); ++i)
    for (const int l : routes[i]->links) latency_on_[static_cast<std::size_t>(l)] = INFINITY;
  return exact;
}

Prediction LinkCosts::predict(const FlowSchedule& schedule) {
  Prediction prediction;
  std::vector<const Route*> routes;
  std::vector<double> rates;
  for (const Phase& phase : schedule) {
    routes.clear();
    rates.clear();
    for (const Flow& flow : phase.flows) {
      const Route& r = route(flow.from, flow.to);
      routes.push_back(&r);
      if (flow.bytes > 0.0)
        for (const int l : r.links) ++flows_on_[static_cast<std::size_t>(l)];
    }
    double slowest = 0.0;
    for (std::size_t i = 0; i < phase.flows.size(); ++i) {
      const double bytes = std::ceil(phase.flows[i].bytes);  // as run_flows moves them
      double rate = INFINITY;
      if (bytes > 0.0) {
        for (const int l : routes[i]->links)
          rate = std::min(rate, bandwidth_[static_cast<std::size_t>(l)] / flows_on_[static_cast<std::size_t>(l)]);
        slowest = std::max(slowest, routes[i]->latency + (std::isinf(rate) ? 0.0 : bytes / rate));
      }
      rates.push_back(rate);
    }
    if (!exact_phase(phase, routes, rates, slowest)) prediction.exact = false;
    for (std::size_t i = 0; i < phase.flows.size(); ++i)
      if (phase.flows[i].bytes > 0.0)
        for (const int l : routes[i]->links) flows_on_[static_cast<std::size_t>(l)] = 0;
    prediction.seconds += phase.repeat * (slowest + phase.latency);
  }
  return prediction;
}

ScheduleOptions nccl_schedule_options(Algorithm algorithm, Protocol protocol, const Members& members, double bytes,
                                      int nics_per_node) {
  std::map<int, int> per_node;
  for (const int node : members.nodes) ++per_node[node];
  int most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  ScheduleOptions o;
  o.protocol = protocol;
  if (per_node.size() > 1) {
    o.channels = std::max(1, std::min(nics_per_node, most));
    if (algorithm == Algorithm::tree) o.channels *= 2;  // both trees over each NIC
  }
  const double per_channel = bytes / o.channels;
  o.pipeline_chunks = static_cast<int>(std::clamp(std::ceil(per_channel / kChunkBytes), 1.0, double{kMaxChunks}));
  return o;
}

CollectiveChoice choose_collective(std::optional<Algorithm> algorithm, std::optional<Protocol> protocol,
                                   platform::Collective collective, const Members& members, double bytes, int root,
                                   LinkCosts& costs) {
  std::vector<Algorithm> algorithms;
  if (algorithm) {
    algorithms.push_back(*algorithm);
  } else {
    algorithms.push_back(Algorithm::ring);
    if (collective == platform::Collective::all_reduce) algorithms.push_back(Algorithm::tree);
  }
  std::vector<Protocol> protocols;
  if (protocol) {
    protocols.push_back(*protocol);
  } else {
    const bool across_nodes = std::any_of(members.nodes.begin(), members.nodes.end(),
                                          [&](int node) { return node != members.nodes.front(); });
    for (const Protocol p : kProtocols)
      if (p != Protocol::ll128 || !across_nodes || costs.topology().nic_beside_gpu) protocols.push_back(p);
  }
  std::optional<CollectiveChoice> best;
  for (const Algorithm a : algorithms) {
    for (const Protocol p : protocols) {
      CollectiveChoice c;
      c.algorithm = a;
      c.options = nccl_schedule_options(a, p, members, bytes, costs.topology().nics_per_node);
      const Prediction prediction =
          costs.predict(compact_flow_schedule(a, collective, members, bytes, root, c.options));
      c.predicted_seconds = prediction.seconds;
      c.exact = prediction.exact;
      if (!best || c.predicted_seconds < best->predicted_seconds) best = c;
    }
  }
  return *best;
}

}  // namespace asteria::sim::collective

#include "sim/topology.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/core_load.hpp"

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

namespace {

using Route = std::vector<sg4::LinkInRoute>;

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency) {
  return zone->create_link(name, bandwidth)->set_latency(latency)->seal();
}

void one_way(sg4::NetZone* zone, simgrid::kernel::routing::NetPoint* from, simgrid::kernel::routing::NetPoint* to,
             sg4::Link* link) {
  zone->add_route(from, to, nullptr, nullptr, Route{sg4::LinkInRoute(link)}, false);
}

std::string nic_up_name(int node, int nic) { return "nic-up" + std::to_string(node) + "." + std::to_string(nic); }
std::string nic_down_name(int node, int nic) { return "nic-down" + std::to_string(node) + "." + std::to_string(nic); }

struct Node {
  sg4::NetZone* zone = nullptr;
  simgrid::kernel::routing::NetPoint* gateway = nullptr;
};

Node build_node(const SimulationOptions& options, sg4::NetZone* root, int node, int first_unit, int last_unit, Topology& topology) {
  const hw::HardwareProfile& p = options.profile;
  const std::string k = std::to_string(node);
  Node n;
  n.zone = sg4::create_full_zone("node" + k);
  n.zone->set_parent(root);
  n.gateway = n.zone->create_router("gateway" + k);
  const bool several_nodes = options.units > p.units_per_node();
  std::vector<sg4::Link*> nic_up;  // [j]: NIC j of the node (several nodes only)
  std::vector<sg4::Link*> nic_down;
  if (several_nodes) {
    for (int j = 0; j < static_cast<int>(p.node.nics_per_node.value); ++j) {
      nic_up.push_back(make_link(n.zone, nic_up_name(node, j), p.node.nic.bandwidth.value, p.node.nic.latency.value));
      nic_down.push_back(
          make_link(n.zone, nic_down_name(node, j), p.node.nic.bandwidth.value, p.node.nic.latency.value));
    }
  }

  const auto cores = static_cast<int>(p.cpu.cores.value);
  for (int u = first_unit; u < last_unit; ++u) {
    const std::string s = std::to_string(u);
    UnitResources r;
    r.unit = u;
    r.node = node;
    r.gpu = n.zone->create_host("gpu" + s, kSpeed)->seal();
    r.gpu_memory = n.zone->create_host("hbm-traffic" + s, p.gpu.memory_bandwidth.value)->seal();
    r.cpu_memory = n.zone->create_host("dram-traffic" + s, p.cpu.memory_bandwidth.value)->seal();
    // One pstate per count of other busy cores (core_load.hpp).
    r.cpu = n.zone->create_host("cpu" + s, contended_core_speeds(cores, p.cpu.contention_slowdown.value, kSpeed))
                ->set_core_count(cores);
    r.nvme = r.cpu->create_disk("nvme" + s, p.nvme.read_bandwidth.value, p.nvme.write_bandwidth.value);
    r.cpu->seal();
    r.h2d = make_link(n.zone, "h2d" + s, p.host_to_device.bandwidth.value, p.host_to_device.latency.value);
    r.d2h = make_link(n.zone, "d2h" + s, p.device_to_host.bandwidth.value, p.device_to_host.latency.value);
    r.device_memory = make_link(n.zone, "hbm" + s, p.gpu.memory_bandwidth.value / 2.0, 0.0);
    r.host_memory = make_link(n.zone, "dram" + s, p.cpu.memory_bandwidth.value / 2.0, 0.0);
    one_way(n.zone, r.cpu->get_netpoint(), r.gpu->get_netpoint(), r.h2d);
    one_way(n.zone, r.gpu->get_netpoint(), r.cpu->get_netpoint(), r.d2h);
    one_way(n.zone, r.gpu->get_netpoint(), r.gpu->get_netpoint(), r.device_memory);
    one_way(n.zone, r.cpu->get_netpoint(), r.cpu->get_netpoint(), r.host_memory);
    if (several_nodes) {
      const auto nic = static_cast<std::size_t>(nic_of_unit(p, u));
      r.nic_up = nic_up[nic];
      r.nic_down = nic_down[nic];
      for (sg4::Host* h : {r.gpu, r.cpu}) {
        one_way(n.zone, h->get_netpoint(), n.gateway, r.nic_up);
        one_way(n.zone, n.gateway, h->get_netpoint(), r.nic_down);
      }
    }
    topology.units.push_back(r);
  }
  for (int i = first_unit; i < last_unit; ++i) {
    for (int j = first_unit; j < last_unit; ++j) {
      if (i == j) continue;
      sg4::Link* nvlink = make_link(n.zone, "nvlink" + std::to_string(i) + "-" + std::to_string(j),
                                    p.node.gpu_link.bandwidth.value, p.node.gpu_link.latency.value);
      one_way(n.zone, topology.units[static_cast<std::size_t>(i)].gpu->get_netpoint(),
              topology.units[static_cast<std::size_t>(j)].gpu->get_netpoint(), nvlink);
    }
  }
  n.zone->seal();
  return n;
}

}  // namespace

int nic_of_unit(const hw::HardwareProfile& profile, int unit) {
  const int local = unit % std::max(profile.units_per_node(), 1);
  return local % std::max(static_cast<int>(profile.node.nics_per_node.value), 1);
}

Topology build_topology(const SimulationOptions& options) {
  // A star: each node's way to every other is one entry (O(nodes) calls); a full zone holds a
  // route per pair, O(nodes^2) calls each costing O(nodes) in SimGrid (most of the build at 1600
  // nodes: 52 s of its setup then, 9 s now).
  sg4::NetZone* root = sg4::create_star_zone("cluster");
  const int per_node = options.profile.units_per_node();
  Topology topology;
  topology.nodes = (options.units + per_node - 1) / per_node;
  topology.nics_per_node = std::max(static_cast<int>(options.profile.node.nics_per_node.value), 1);
  topology.nic_beside_gpu = options.profile.node.nic_beside_gpu;
  topology.units.reserve(static_cast<std::size_t>(options.units));
  std::vector<Node> nodes;
  for (int k = 0; k < topology.nodes; ++k) {
    const int first = k * per_node;
    const int last = std::min(options.units, first + per_node);
    nodes.push_back(build_node(options, root, k, first, last, topology));
  }
  if (topology.nodes > 1) {
    // Non-blocking fabric: a fat pipe shares nothing, each flow is limited by its NICs only.
    sg4::Link* backbone = root->create_link("backbone", options.profile.node.nic.bandwidth.value *
                                                            options.profile.node.nics_per_node.value)
                              ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                              ->seal();
    // Node a to node b: a's way up, then b's way down, each the backbone (a route holds a link
    // once): the same route as one between a and b.
    for (const Node& node : nodes)
      root->add_route(node.zone->get_netpoint(), nullptr, node.gateway, nullptr, Route{sg4::LinkInRoute(backbone)},
                      true);
  }
  root->seal();
  return topology;
}

}  // namespace asteria::sim

#include "core/runtime/service/refresh_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace asteria::runtime {

std::vector<int> assign_refresh_owners(std::span<const double> costs, platform::Comm& comm) {
  for (double c : costs)
    if (!(c >= 0.0) || !std::isfinite(c))
      throw std::invalid_argument("assign_refresh_owners: costs must be finite and >= 0");
  const int ranks = comm.size();
  const int nodes = comm.nodes();
  std::vector<std::vector<int>> ranks_of(static_cast<std::size_t>(nodes));
  for (int r = 0; r < ranks; ++r) ranks_of[static_cast<std::size_t>(comm.node_of(r))].push_back(r);
  // Largest first; equal costs in block order.
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  // A node's load per rank it holds: nodes with fewer ranks get proportionally less.
  std::vector<double> node_load(static_cast<std::size_t>(nodes), 0.0);
  std::vector<double> rank_load(static_cast<std::size_t>(ranks), 0.0);
  std::vector<int> owner(costs.size(), 0);
  for (std::size_t b : order) {
    int best_node = -1;
    for (int n = 0; n < nodes; ++n) {
      const auto& members = ranks_of[static_cast<std::size_t>(n)];
      if (members.empty()) continue;
      const double per_rank = node_load[static_cast<std::size_t>(n)] / static_cast<double>(members.size());
      if (best_node < 0 ||
          per_rank < node_load[static_cast<std::size_t>(best_node)] /
                         static_cast<double>(ranks_of[static_cast<std::size_t>(best_node)].size()))
        best_node = n;
    }
    int best_rank = -1;
    for (int r : ranks_of[static_cast<std::size_t>(best_node)])
      if (best_rank < 0 || rank_load[static_cast<std::size_t>(r)] < rank_load[static_cast<std::size_t>(best_rank)])
        best_rank = r;
    node_load[static_cast<std::size_t>(best_node)] += costs[b];
    rank_load[static_cast<std::size_t>(best_rank)] += costs[b];
    owner[b] = best_rank;
  }
  return owner;
}

namespace {
int group_rank_of(const platform::CommGroup& group, int world_rank) {
  for (int r = 0; r < group.size(); ++r)
    if (group.world_rank(r) == world_rank) return r;
  throw std::logic_error("share_result: world rank " + std::to_string(world_rank) + " is not in the group");
}
}  // namespace

platform::Pending share_result(platform::Comm& comm, std::span<std::byte> image, std::size_t bytes, int owner,
                               const platform::Pending& produced, const std::string& label,
                               const platform::OpTag& tag) {
  // Bytes travel as fp32 words (a broadcast copies them, never adds); the image is padded to whole words.
  const std::size_t words = (bytes + 3) / 4;
  if (image.data() != nullptr && image.size() < words * 4)
    throw std::logic_error("share_result: the image must hold whole 4-byte words");
  const platform::CommBuffer buffer = image.data() != nullptr
                                          ? platform::CommBuffer{image.data(), words, platform::DType::fp32}
                                          : platform::CommBuffer::sized(words, platform::DType::fp32);
  const int me = comm.rank();
  const int owner_node = comm.node_of(owner);
  const bool home = comm.node_of(me) == owner_node;
  platform::Pending last = me == owner ? produced : platform::Pending();
  auto after = [&last] {
    platform::CollectiveOptions o;
    if (last.valid()) o.after.push_back(last);
    return o;
  };
  platform::CommGroup& node = comm.node();
  if (home && node.size() > 1) {
    platform::CollectiveOptions o = after();
    o.label = label + " (inside node)";
    o.tag = tag;
    last = node.broadcast(buffer, group_rank_of(node, owner), std::move(o));
  }
  if (platform::CommGroup* leaders = comm.leaders(); leaders != nullptr && leaders->size() > 1) {
    int root = -1;
    for (int r = 0; r < leaders->size() && root < 0; ++r)
      if (comm.node_of(leaders->world_rank(r)) == owner_node) root = r;
    platform::CollectiveOptions o = after();
    o.label = label + " (between nodes)";
    o.tag = tag;
    last = leaders->broadcast(buffer, root, std::move(o));
  }
  if (!home && node.size() > 1) {
    platform::CollectiveOptions o = after();
    o.label = label + " (inside node)";
    o.tag = tag;
    last = node.broadcast(buffer, 0, std::move(o));  // from the node's leader
  }
  if (!last.valid()) last = produced.valid() ? produced : platform::Pending::ready();
  return last;
}

}  // namespace asteria::runtime

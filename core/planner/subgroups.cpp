#include "core/planner/subgroups.hpp"

#include <algorithm>
#include <cmath>

#include "core/common/error.hpp"

namespace asteria::planner {

namespace {

std::string name_of(const std::vector<BlockDemand>& blocks, std::size_t i) {
  return blocks[i].label.empty() ? "blocks[" + std::to_string(i) + "]" : blocks[i].label;
}

}  // namespace

Subgroups subgroups(const std::vector<BlockDemand>& blocks, int count) {
  if (count < 1)
    throw InputError("subgroups", "count", "expected at least 1 subgroup, found " + std::to_string(count));
  PlacementProblem check;
  check.blocks = blocks;
  check.rates = {1, 1, 1, 1, false, 1};
  validate(check);  // the block fields; the rest is a placeholder

  const std::size_t n = blocks.size();
  double total = 0;
  for (const BlockDemand& b : blocks) total += b.state_bytes;
  Subgroups g;
  double before = 0;
  long last = -1;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = blocks[i].state_bytes;
    const double mid = total > 0 ? (before + s / 2) / total : (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    before += s;
    const long index = std::min<long>(count - 1, static_cast<long>(std::floor(mid * count)));
    if (g.first.empty() || index != last) {
      g.first.push_back(i);
      BlockDemand d;
      d.label = name_of(blocks, i);
      g.demands.push_back(d);
      last = index;
    } else {
      g.demands.back().label = name_of(blocks, g.first.back()) + ".." + name_of(blocks, i);
    }
    BlockDemand& d = g.demands.back();
    d.state_bytes += s;
    d.gradient_bytes += blocks[i].gradient_bytes;
    d.weight_bytes += blocks[i].weight_bytes;
    d.device_update_s += blocks[i].device_update_s;
    d.host_update_s += blocks[i].host_update_s;
  }
  g.first.push_back(n);
  return g;
}

Assignment expand(const Subgroups& groups, const Assignment& group_assignment) {
  if (group_assignment.size() != groups.demands.size() || groups.first.size() != groups.demands.size() + 1)
    throw InputError("subgroups", "assignment",
                     "expected one choice per subgroup (" + std::to_string(groups.demands.size()) + "), found " +
                         std::to_string(group_assignment.size()));
  Assignment a(groups.first.back());
  for (std::size_t k = 0; k < group_assignment.size(); ++k)
    for (std::size_t i = groups.first[k]; i < groups.first[k + 1]; ++i) a[i] = group_assignment[k];
  return a;
}

}  // namespace asteria::planner

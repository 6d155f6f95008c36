#include "core/plan/gather_groups.hpp"

#include <algorithm>

namespace asteria::plan {

GatherSplit split_gather(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers) {
  std::vector<int> owned;
  double total = 0.0;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].layer >= layers.first_layer && blocks[b].layer <= layers.last_layer && blocks[b].owner >= 0) {
      owned.push_back(static_cast<int>(b));
      total += blocks[b].weight_bytes;
    }
  const double even = total / static_cast<double>(ranks);
  GatherSplit split;
  for (int b : owned) (blocks[static_cast<std::size_t>(b)].weight_bytes > even ? split.alone : split.together).push_back(b);
  return split;
}

double gather_bytes(const std::vector<BlockWork>& blocks, int ranks, const std::vector<int>& members) {
  std::vector<double> share(static_cast<std::size_t>(ranks), 0.0);
  for (int b : members) {
    const BlockWork& w = blocks[static_cast<std::size_t>(b)];
    share.at(static_cast<std::size_t>(w.owner)) += w.weight_bytes;
  }
  double total = 0.0;
  int owners = 0;
  for (double s : share) {
    total += s;
    owners += s > 0.0 ? 1 : 0;
  }
  if (owners <= 1) return total;
  return *std::max_element(share.begin(), share.end()) * static_cast<double>(ranks);
}

bool gather_is_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers) {
  const std::vector<int> together = split_gather(blocks, ranks, layers).together;
  double total = 0.0;
  for (int b : together) total += blocks[static_cast<std::size_t>(b)].weight_bytes;
  return gather_bytes(blocks, ranks, together) <= kGatherPadding * total;
}

}  // namespace asteria::plan

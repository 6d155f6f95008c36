#include "core/plan/share_groups.hpp"

#include <algorithm>

namespace asteria::plan {

ShareSplit split_shares(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes) {
  std::vector<int> owned;
  double total = 0.0;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].layer >= layers.first_layer && blocks[b].layer <= layers.last_layer && blocks[b].owner >= 0) {
      owned.push_back(static_cast<int>(b));
      total += blocks[b].*bytes;
    }
  const double even = total / static_cast<double>(ranks);
  ShareSplit split;
  for (int b : owned) (blocks[static_cast<std::size_t>(b)].*bytes > even ? split.alone : split.together).push_back(b);
  return split;
}

double padded_bytes(const std::vector<BlockWork>& blocks, int ranks, const std::vector<int>& members, BlockBytes bytes) {
  std::vector<double> share(static_cast<std::size_t>(ranks), 0.0);
  for (int b : members) {
    const BlockWork& w = blocks[static_cast<std::size_t>(b)];
    share.at(static_cast<std::size_t>(w.owner)) += w.*bytes;
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

bool shares_are_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes) {
  const std::vector<int> together = split_shares(blocks, ranks, layers, bytes).together;
  double total = 0.0;
  for (int b : together) total += blocks[static_cast<std::size_t>(b)].*bytes;
  return padded_bytes(blocks, ranks, together, bytes) <= kSharePadding * total;
}

std::vector<int> assign_block_owners(const std::vector<double>& bytes, const std::vector<int>& layers, int ranks) {
  std::vector<int> owners(bytes.size(), 0);
  std::vector<double> total(static_cast<std::size_t>(ranks), 0.0);
  for (std::size_t first = 0; first < bytes.size();) {
    std::size_t end = first;
    while (end < bytes.size() && layers[end] == layers[first]) ++end;
    std::vector<std::size_t> order;
    for (std::size_t b = first; b < end; ++b) order.push_back(b);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
    std::vector<double> in_layer(static_cast<std::size_t>(ranks), 0.0);
    for (std::size_t b : order) {
      std::size_t best = 0;
      for (std::size_t r = 1; r < in_layer.size(); ++r)
        if (in_layer[r] < in_layer[best] || (in_layer[r] == in_layer[best] && total[r] < total[best])) best = r;
      owners[b] = static_cast<int>(best);
      in_layer[best] += bytes[b];
      total[best] += bytes[b];
    }
    first = end;
  }
  return owners;
}

}  // namespace asteria::plan

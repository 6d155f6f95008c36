#include "core/plan/share_groups.hpp"

#include <algorithm>
#include <functional>
#include <tuple>
#include <utility>

namespace asteria::plan {

namespace {

// The blocks of layers first_layer..last_layer: blocks are listed layer by layer
// (validate_schedule_inputs), so two binary searches find them.
std::pair<std::size_t, std::size_t> blocks_of(const std::vector<BlockWork>& blocks, const BucketInfo& layers) {
  const auto first = std::lower_bound(blocks.begin(), blocks.end(), layers.first_layer,
                                      [](const BlockWork& b, int layer) { return b.layer < layer; });
  const auto end = std::upper_bound(first, blocks.end(), layers.last_layer,
                                    [](int layer, const BlockWork& b) { return layer < b.layer; });
  return {static_cast<std::size_t>(first - blocks.begin()), static_cast<std::size_t>(end - blocks.begin())};
}

bool together_are_even(const std::vector<BlockWork>& blocks, int ranks, const std::vector<int>& together,
                       BlockBytes bytes) {
  double total = 0.0;
  for (int b : together) total += blocks[static_cast<std::size_t>(b)].*bytes;
  return padded_bytes(blocks, ranks, together, bytes) <= kSharePadding * total;
}

}  // namespace

ShareSplit split_shares(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes) {
  std::vector<int> owned;
  double total = 0.0;
  const auto [first, end] = blocks_of(blocks, layers);
  for (std::size_t b = first; b < end; ++b)
    if (blocks[b].owner >= 0) {
      owned.push_back(static_cast<int>(b));
      total += blocks[b].*bytes;
    }
  const double even = total / static_cast<double>(ranks);
  ShareSplit split;
  for (int b : owned) (blocks[static_cast<std::size_t>(b)].*bytes > even ? split.alone : split.together).push_back(b);
  return split;
}

ShareSplit split_gradients(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers) {
  ShareSplit split = split_shares(blocks, ranks, layers, &BlockWork::gradient_bytes);
  const auto owner = [&](int b) { return blocks[static_cast<std::size_t>(b)].owner; };
  if (!split.together.empty() && std::all_of(split.together.begin(), split.together.end(),
                                             [&](int b) { return owner(b) == owner(split.together.front()); })) {
    split.alone.insert(split.alone.end(), split.together.begin(), split.together.end());
    std::sort(split.alone.begin(), split.alone.end());
    split.together.clear();
  }
  return split;
}

double compute_copy_scale(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                          const BucketInfo& bucket) {
  double compute = 0.0;
  double master = 0.0;
  for (int l = bucket.first_layer; l <= bucket.last_layer; ++l) compute += layers[static_cast<std::size_t>(l)].weight_bytes;
  const auto [first, end] = blocks_of(blocks, bucket);
  for (std::size_t b = first; b < end; ++b)
    if (blocks[b].owner >= 0) master += blocks[b].weight_bytes;
  return master > 0.0 ? compute / master : 1.0;
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
  return together_are_even(blocks, ranks, split_shares(blocks, ranks, layers, bytes).together, bytes);
}

bool shares_are_whole_and_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers,
                               BlockBytes bytes) {
  const ShareSplit split = split_shares(blocks, ranks, layers, bytes);
  return split.alone.empty() && together_are_even(blocks, ranks, split.together, bytes);
}

ShareTally::ShareTally(const std::vector<BlockWork>& blocks, int ranks, BlockBytes bytes)
    : blocks_(blocks), ranks_(ranks), bytes_(bytes), share_(static_cast<std::size_t>(std::max(ranks, 1)), 0.0) {}

void ShareTally::add_layer(int layer) {
  const auto [first, end] = blocks_of(blocks_, {layer, layer, {}});
  for (std::size_t b = first; b < end; ++b) {
    const BlockWork& w = blocks_[b];
    if (w.owner < 0) continue;
    const double bytes = w.*bytes_;
    double& share = share_.at(static_cast<std::size_t>(w.owner));
    if (share == 0.0 && bytes > 0.0) ++owners_;
    share += bytes;
    total_ += bytes;
    largest_block_ = std::max(largest_block_, bytes);
    largest_share_ = std::max(largest_share_, share);
  }
}

void ShareTally::clear() {
  std::fill(share_.begin(), share_.end(), 0.0);
  total_ = largest_block_ = largest_share_ = 0.0;
  owners_ = 0;
}

bool ShareTally::whole_and_even(const BucketInfo& layers) const {
  // Far from the limits (beyond any difference the order of the sums makes): not whole and even.
  constexpr double kMargin = 1.0 + 1e-9;
  if (largest_block_ > kMargin * total_ / ranks_) return false;
  const double padded = owners_ <= 1 ? total_ : largest_share_ * ranks_;
  if (padded > kMargin * kSharePadding * total_) return false;
  return shares_are_whole_and_even(blocks_, ranks_, layers, bytes_);
}

std::vector<int> fsdp_units(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                            const ScheduleOptions& options) {
  std::vector<double> bytes(layers.size(), 0.0);
  for (const BlockWork& b : blocks) bytes[static_cast<std::size_t>(b.layer)] += b.weight_bytes;
  std::vector<int> unit_of(layers.size(), 0);
  int units = 0;
  BucketInfo open{-1, -1, {}};
  double held = 0.0;
  ShareTally tally(blocks, options.data_parallel_ranks, &BlockWork::weight_bytes);
  for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
    if (open.last_layer < 0) open.first_layer = l;
    open.last_layer = l;
    held += bytes[static_cast<std::size_t>(l)];
    tally.add_layer(l);
    unit_of[static_cast<std::size_t>(l)] = units;
    if (held >= options.bucket_bytes && tally.whole_and_even(open)) {
      ++units;
      open = {-1, -1, {}};
      held = 0.0;
      tally.clear();
    }
  }
  return unit_of;
}

std::vector<BucketCollective> gradient_collectives(const std::vector<BlockWork>& blocks, int ranks,
                                                   Parallelism parallelism, const BucketInfo& layers, double bytes) {
  const ShareSplit split = shards_gradients(parallelism) ? split_gradients(blocks, ranks, layers) : ShareSplit{};
  if (split.alone.empty() && split.together.empty()) return {{OpKind::reduce, layers, bytes}};
  std::vector<BucketCollective> out;
  if (!split.alone.empty()) {
    double alone = 0.0;
    for (int b : split.alone) alone += blocks[static_cast<std::size_t>(b)].gradient_bytes;
    out.push_back({OpKind::reduce, {layers.first_layer, layers.last_layer, split.alone}, alone});
  }
  if (!split.together.empty())
    out.push_back({OpKind::scatter, {layers.first_layer, layers.last_layer, split.together},
                   padded_bytes(blocks, ranks, split.together, &BlockWork::gradient_bytes)});
  return out;
}

std::vector<BucketCollective> weight_gathers(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                                             int ranks, const BucketInfo& range) {
  const ShareSplit split = split_shares(blocks, ranks, range, &BlockWork::weight_bytes);
  const double scale = compute_copy_scale(layers, blocks, range);
  std::vector<BucketCollective> out;
  const auto add = [&](BucketInfo bucket) {
    const double bytes = scale * padded_bytes(blocks, ranks, bucket.blocks, &BlockWork::weight_bytes);
    out.push_back({OpKind::gather, std::move(bucket), bytes});
  };
  for (int b : split.alone) {
    const int layer = blocks[static_cast<std::size_t>(b)].layer;
    add({layer, layer, {b}});
  }
  if (!split.together.empty()) add({range.first_layer, range.last_layer, split.together});
  return out;
}

BucketInfo unit_layers(const std::vector<int>& unit_of, int unit) {
  const auto first = std::find(unit_of.begin(), unit_of.end(), unit) - unit_of.begin();
  const auto last = unit_of.rend() - std::find(unit_of.rbegin(), unit_of.rend(), unit) - 1;
  return {static_cast<int>(first), static_cast<int>(last), {}};
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
    // The rank with the fewest bytes of the layer, then the fewest in all, then the lowest: the
    // least (in layer, total, rank) of a heap (every rank has 0 of a new layer), not a scan of
    // every rank per block (O(blocks x ranks) on each of the ranks computing it).
    using Key = std::tuple<double, double, int>;
    std::vector<Key> heap;
    heap.reserve(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) heap.emplace_back(0.0, total[static_cast<std::size_t>(r)], r);
    std::make_heap(heap.begin(), heap.end(), std::greater<>());
    for (std::size_t b : order) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      auto& [in_layer, rank_total, best] = heap.back();
      owners[b] = best;
      in_layer += bytes[b];
      rank_total += bytes[b];
      total[static_cast<std::size_t>(best)] += bytes[b];
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
    first = end;
  }
  return owners;
}

}  // namespace asteria::plan

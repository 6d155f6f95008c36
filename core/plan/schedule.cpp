// The schedule's names and the checks of its inputs (the builder is schedule_builder.cpp).
#include <cmath>

#include "core/common/error.hpp"
#include "core/plan/schedule.hpp"

namespace asteria::plan {
namespace {
constexpr const char* kSource = "step schedule";
}  // namespace

std::string_view to_string(ScheduleOrder order) noexcept {
  return order == ScheduleOrder::vertical ? "vertical" : "horizontal";
}

ScheduleOrder parse_schedule_order(std::string_view text, const std::string& source, const std::string& field) {
  if (text == "horizontal") return ScheduleOrder::horizontal;
  if (text == "vertical") return ScheduleOrder::vertical;
  throw InputError(source, field, "horizontal or vertical, found '" + std::string(text) + "'");
}

std::string_view to_string(Parallelism parallelism) noexcept {
  switch (parallelism) {
    case Parallelism::ddp: return "ddp";
    case Parallelism::zero1: return "zero1";
    case Parallelism::zero2: return "zero2";
    case Parallelism::fsdp: return "fsdp";
  }
  return "ddp";
}

bool shards_state(Parallelism parallelism) noexcept { return parallelism != Parallelism::ddp; }

bool shards_gradients(Parallelism parallelism) noexcept {
  return parallelism == Parallelism::zero2 || parallelism == Parallelism::fsdp;
}

std::vector<bool> deferred_blocks(const std::vector<BlockWork>& blocks, double defer_fraction, int rank) {
  std::vector<bool> deferred(blocks.size(), false);
  if (!(defer_fraction > 0.0)) return deferred;
  double all = 0.0;
  double kept_back = 0.0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].owner >= 0 && blocks[b].owner != rank) continue;
    const double bytes = std::max(blocks[b].weight_bytes, 1.0);  // blocks without bytes count as one
    all += bytes;
    // Defer when the deferred share ends closer to α with this block than without it.
    if (std::abs(kept_back + bytes - defer_fraction * all) <= std::abs(kept_back - defer_fraction * all)) {
      deferred[b] = true;
      kept_back += bytes;
    }
  }
  return deferred;
}

void validate_schedule_inputs(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                              const ScheduleOptions& options) {
  if (layers.empty()) throw InputError(kSource, "layers", "expected at least one layer");
  if (options.micro_batches < 1) throw InputError(kSource, "micro_batches", "expected an integer >= 1");
  if (options.data_parallel_ranks < 1) throw InputError(kSource, "data_parallel_ranks", "expected an integer >= 1");
  if (options.rank < 0 || options.rank >= options.data_parallel_ranks)
    throw InputError(kSource, "rank", "expected a rank in [0, " + std::to_string(options.data_parallel_ranks) + ")");
  if (options.host_release_delay < 0)
    throw InputError(kSource, "host_release_delay", "expected an integer >= 1 (or 0: 1)");
  if (!(options.defer_fraction >= 0.0 && options.defer_fraction < 1.0))
    throw InputError(kSource, "defer_fraction", "expected a fraction in [0, 1)");
  if (options.prefetch_depth < 1) throw InputError(kSource, "prefetch_depth", "expected an integer >= 1");
  if (!(options.bucket_bytes >= 0.0) || !std::isfinite(options.bucket_bytes))
    throw InputError(kSource, "bucket_bytes", "expected a finite number of bytes >= 0");
  if (options.defer_lookahead < 0) throw InputError(kSource, "defer_lookahead", "expected an integer >= 0");
  if (!(options.host_piece_bytes >= 0.0)) throw InputError(kSource, "host_piece_bytes", "expected bytes >= 0");
  if (options.max_host_pieces < 1) throw InputError(kSource, "max_host_pieces", "expected an integer >= 1");
  if (options.tiers.checkpoints != platform::Tier::device && !options.recompute_activations)
    throw InputError(kSource, "tiers.checkpoints",
                     "activation checkpoints off the device only with recompute_activations (the rest of the "
                     "activations is recomputed in the backward)");
  bool owners = false;
  const bool sharded = shards_state(options.parallelism);
  if (sharded && options.data_parallel_ranks < 2)
    throw InputError(kSource, "parallelism",
                     "ddp with one rank (" + std::string(to_string(options.parallelism)) + " shards among ranks)");
  for (const BlockWork& b : blocks) {
    if (b.owner >= options.data_parallel_ranks || b.owner < -1)
      throw InputError(kSource, "owner", "expected -1 or a rank in [0, " + std::to_string(options.data_parallel_ranks) +
                                             ") for block " + b.label);
    if (sharded != (b.owner >= 0))
      throw InputError(kSource, "owner",
                       std::string(sharded ? "an owning rank" : "-1 (no owner)") + " for every block with parallelism " +
                           std::string(to_string(options.parallelism)) + ", found " + std::to_string(b.owner) +
                           " for block " + b.label);
    owners = owners || b.owner >= 0;
  }
  if (!options.reshard_after_use && options.parallelism != Parallelism::fsdp)
    throw InputError(kSource, "reshard_after_use",
                     "true (after-use) unless parallelism is fsdp (only fsdp shards the weights it would keep), found "
                     "after-step with " + std::string(to_string(options.parallelism)));
  if (options.parallelism == Parallelism::fsdp && options.tiers.weights != platform::Tier::device)
    throw InputError(kSource, "tiers.weights",
                     "device with fsdp (a layer's weights are gathered from their owners into device memory; resting "
                     "shards off the device is not modelled)");
  if (owners && options.defer_fraction > 0.0)
    throw InputError(kSource, "defer_fraction",
                     "0 with sharded optimizer state (a deferred update's weights would have to be gathered during the "
                     "next forward)");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string field = "layers[" + std::to_string(l) + "]";
    if (!(layers[l].gradient_bytes >= 0.0)) throw InputError(kSource, field + ".gradient_bytes", "expected bytes >= 0");
    if (!(layers[l].weight_bytes >= 0.0)) throw InputError(kSource, field + ".weight_bytes", "expected bytes >= 0");
    if (!(layers[l].checkpoint_bytes >= 0.0))
      throw InputError(kSource, field + ".checkpoint_bytes", "expected bytes >= 0");
  }
  int previous_layer = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const BlockWork& w = blocks[b];
    const std::string field = "blocks[" + std::to_string(b) + "]";
    if (w.layer < previous_layer || w.layer >= static_cast<int>(layers.size()))
      throw InputError(kSource, field + ".layer", "expected blocks listed layer by layer in forward order");
    previous_layer = w.layer;
    if (w.activation_delay != 0 && w.activation_delay != 1)
      throw InputError(kSource, field + ".activation_delay", "expected 0 or 1");
    if (w.update_on != Resource::device && w.update_on != Resource::host)
      throw InputError(kSource, field + ".update_on", "expected device or host");
    if (!(w.gradient_bytes >= 0.0)) throw InputError(kSource, field + ".gradient_bytes", "expected bytes >= 0");
    if (!(w.weight_bytes >= 0.0)) throw InputError(kSource, field + ".weight_bytes", "expected bytes >= 0");
  }
}

}  // namespace asteria::plan

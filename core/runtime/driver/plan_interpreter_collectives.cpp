// The plan interpreter's collective ops (plan_interpreter.hpp): a gradient bucket's reduce or
// scatter, and the gathers of sharded weights, over the platform's communicator.
//
// A collective of blocks packs them in block order into a buffer of its own (packed_): each
// rank's blocks together, every rank's share padded to the largest. Values land where they belong
// (unpack) when the plan first waits for the op (the hook of a scattered gradient, the visit of a
// gathered layer), or at the step's end for an op nothing waits for (the gathers of new weights
// after the updates). A layer gathered again in a step (fsdp: its backward after its forward)
// brings the weights it holds already; only the step's first gather of a block unpacks it.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/common/error.hpp"
#include "core/platform/collective_values.hpp"
#include "core/runtime/driver/plan_interpreter.hpp"

namespace asteria::runtime {

using plan::Op;
using plan::OpId;
using plan::OpKind;

// The communicator of collective op i; an InputError naming the op when the platform has none.
template <linalg::Real T>
platform::Comm& PlanInterpreter<T>::communicator(OpId i) {
  platform::Comm* comm = platform_.comm();
  if (comm == nullptr)
    throw InputError("step plan (" + plan_.schedule + ")", "ops[" + std::to_string(i) + "]",
                     "a data-parallel backend with a communicator for its " +
                         std::string(plan::to_string(plan_.ops[static_cast<std::size_t>(i)].kind)) +
                         " op; this platform (" + std::string(platform_.backend()) + ") has none");
  return *comm;
}

// The options of collective op i's collective: started after its deps' work (awaited first when
// `await_deps`), named by its bucket's layers as their gradients complete ("reduce <last> ..
// <first>") and tagged with the op.
template <linalg::Real T>
platform::CollectiveOptions PlanInterpreter<T>::collective_options(OpId i, bool await_deps) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  platform::CollectiveOptions options;
  for (OpId d : op.deps) {
    if (await_deps) await(d);
    for (const platform::Pending& p : finished_[static_cast<std::size_t>(d)]) options.after.push_back(p);
  }
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  options.label = plan::to_string(op.kind);
  options.label += ' ';
  options.label += plan_.layers[static_cast<std::size_t>(bucket.last_layer)].name;
  if (bucket.first_layer != bucket.last_layer) {
    options.label += " .. ";
    options.label += plan_.layers[static_cast<std::size_t>(bucket.first_layer)].name;
  }
  options.tag = {step_, collective_role_ == platform::ActivityRole::op ? i : -1, -1, collective_role_};
  return options;
}

// Gradients are reduced in fp32 (with values); an InputError naming the op otherwise.
template <linalg::Real T>
void PlanInterpreter<T>::require_fp32(const platform::CollectiveOptions& options) const {
  if constexpr (!std::is_same_v<T, float>)
    throw InputError("step plan (" + plan_.schedule + ")", options.label,
                     "fp32 values: data-parallel ranks reduce fp32 gradients (train in float, or run shapes)");
}

// Block b's region of its layer's weights or gradient, row by row: copy(row) for each row.
template <linalg::Real T>
template <class Copy>
void PlanInterpreter<T>::each_row(int b, bool gradient, Copy&& copy) {
  const PlanBlock& block = blocks_[static_cast<std::size_t>(b)];
  const auto l = static_cast<std::size_t>(plan_.blocks[static_cast<std::size_t>(b)].layer);
  const optim::BlockRegion& r = block.region;
  const linalg::MatrixView<T> m =
      optim::reshaped(gradient ? model_.mutable_gradient_matrix(l) : model_.weight_matrix(l), block.view)
          .block(r.row0, r.col0, r.rows, r.cols);
  for (linalg::index row = 0; row < m.rows(); ++row) copy(m.row(row));
}

template <linalg::Real T>
std::size_t PlanInterpreter<T>::block_values(int b) const {
  const optim::BlockRegion& r = blocks_[static_cast<std::size_t>(b)].region;
  return static_cast<std::size_t>(r.rows) * static_cast<std::size_t>(r.cols);
}

// Packs op i's bucket's blocks (weights, or `gradient`s) into its buffer from `at`: `by_owner`,
// each rank r's blocks at `at` + r * share; otherwise one after the other; only this rank's blocks
// when `own_only`. `share` (0: the rest of the buffer) bounds each rank's.
template <linalg::Real T>
void PlanInterpreter<T>::pack(OpId i, bool gradient, std::size_t at, std::size_t share, bool by_owner, bool own_only) {
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(plan_.ops[static_cast<std::size_t>(i)].bucket)];
  std::vector<T>& packed = packed_[static_cast<std::size_t>(i)];
  const int me = platform_.comm()->world().rank();
  std::vector<std::size_t> next(static_cast<std::size_t>(platform_.comm()->world().size()), 0);
  for (int b : bucket.blocks) {
    const int owner = plan_.blocks[static_cast<std::size_t>(b)].owner;
    if (own_only && owner != me) continue;
    std::size_t& offset = next[by_owner ? static_cast<std::size_t>(owner) : 0];
    const std::size_t base = at + (by_owner ? static_cast<std::size_t>(owner) * share : 0);
    if (offset + block_values(b) > (share > 0 ? share : packed.size() - at))
      throw std::logic_error("PlanInterpreter: a collective's share is smaller than its blocks");
    each_row(b, gradient, [&](std::span<T> row) {
      std::copy(row.begin(), row.end(), packed.begin() + static_cast<std::ptrdiff_t>(base + offset));
      offset += row.size();
    });
  }
}

// The reverse of pack: the blocks this rank keeps (its own, `mine`; or every other rank's) from
// their places back into the weights or gradients.
template <linalg::Real T>
void PlanInterpreter<T>::unpack(OpId i) {
  if (from_wire(i)) return;
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  const std::vector<T>& packed = packed_[static_cast<std::size_t>(i)];
  const int me = platform_.comm()->world().rank();
  const auto ranks = static_cast<std::size_t>(platform_.comm()->world().size());
  const bool gradient = op.kind != OpKind::gather;
  // Where each rank's blocks start: a scatter's result is this rank's share at 0; a reduce's
  // buffer and a broadcast's hold the blocks from 0 in block order; an all-gather's every share
  // after this rank's own.
  const bool all_gather = op.kind == OpKind::gather && sole_owner(bucket) < 0;
  const std::size_t share = all_gather ? packed.size() / (ranks + 1) : 0;
  std::vector<std::size_t> at(ranks, 0);
  for (std::size_t r = 0; r < ranks; ++r) at[r] = all_gather ? share * (r + 1) : 0;
  std::size_t sequential = 0;
  for (int b : bucket.blocks) {
    const int owner = plan_.blocks[static_cast<std::size_t>(b)].owner;
    const bool by_owner = all_gather || op.kind == OpKind::scatter;
    std::size_t& from = by_owner ? at.at(static_cast<std::size_t>(owner)) : sequential;
    const bool keep = gradient ? owner == me : owner != me;
    if (op.kind == OpKind::scatter && owner != me) continue;  // only this rank's share came back
    if (keep)
      each_row(b, gradient, [&](std::span<T> row) {
        std::copy(packed.begin() + static_cast<std::ptrdiff_t>(from),
                  packed.begin() + static_cast<std::ptrdiff_t>(from + row.size()), row.begin());
        from += row.size();
      });
    else
      from += block_values(b);
  }
}

// Starts the average of a gradient bucket among the data-parallel ranks once the backward that
// completed it has finished: its layers' gradients in place (one buffer of the model's,
// TrainingModel::gradient_bucket), or packed (its blocks', or the layers' converted to a narrower
// reduce_dtype); the issuing thread goes on (the next layers' backward is issued while it runs).
// Values travel only when the backward computed them this step.
template <linalg::Real T>
void PlanInterpreter<T>::run_reduce(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  platform::Comm& comm = communicator(i);
  platform::CollectiveOptions options = collective_options(i, /*await_deps=*/false);
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  const platform::DType dtype = plan_.reduce_dtype;
  const std::size_t count = static_cast<std::size_t>(op.cost.bytes()) / platform::bytes_per_element(dtype);
  platform::CommBuffer buffer = platform::CommBuffer::sized(count, dtype);
  if (device_numerics_) {
    require_fp32(options);
    if constexpr (std::is_same_v<T, float>) {
      const std::span<float> layers =
          bucket.blocks.empty() ? model_.gradient_bucket(static_cast<std::size_t>(bucket.first_layer),
                                                         static_cast<std::size_t>(bucket.last_layer))
                                : std::span<float>();
      if (bucket.blocks.empty() && layers.size() != count)
        throw std::logic_error("PlanInterpreter: the model does not keep the gradients of its bucket " +
                               std::to_string(op.bucket) + " in one array (the driver gives such a model one bucket per layer)");
      if (bucket.blocks.empty() && dtype == platform::DType::fp32) {
        buffer = platform::CommBuffer::of(layers);
      } else {
        packed_[static_cast<std::size_t>(i)].assign(count, 0.0f);
        buffer = wire_buffer(i, 0, count);  // sized here, before the pack work may run
        options.after.push_back(pack_on_stream(i, [this, i, layers] {
          if (layers.empty()) pack(i, true, 0, 0, false, false);
          else std::copy(layers.begin(), layers.end(), packed_[static_cast<std::size_t>(i)].begin());
          to_wire(i, 0, packed_[static_cast<std::size_t>(i)].size());
        }));
        unpack_pending_[static_cast<std::size_t>(i)] = 1;
      }
    }
  }
  totals_.network_bytes += static_cast<double>(buffer.bytes());
  const platform::Pending reduced = comm.world().all_reduce(buffer, platform::ReduceOp::average, std::move(options));
  finished_[static_cast<std::size_t>(i)].push_back(reduced);
  network_in_flight_.push_back(reduced);
}

// Starts the reduce-scatter of a bucket's blocks' gradients: every rank packs every block's
// gradient into its owner's share (on the device stream after the backward, as a framework
// copies into its flat buffer), and gets back the average of its own share.
template <linalg::Real T>
void PlanInterpreter<T>::run_scatter(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  platform::Comm& comm = communicator(i);
  const auto ranks = static_cast<std::size_t>(comm.world().size());
  platform::CollectiveOptions options = collective_options(i, /*await_deps=*/false);
  const platform::DType dtype = plan_.reduce_dtype;
  const std::size_t share = static_cast<std::size_t>(op.cost.bytes()) / platform::bytes_per_element(dtype) / ranks;
  platform::CommBuffer all = platform::CommBuffer::sized(share * ranks, dtype);
  platform::CommBuffer mine = platform::CommBuffer::sized(share, dtype);
  if (device_numerics_) {
    require_fp32(options);
    if constexpr (std::is_same_v<T, float>) {
      std::vector<float>& packed = packed_[static_cast<std::size_t>(i)];
      packed.assign(share * (ranks + 1), 0.0f);  // this rank's result, then every rank's share
      mine = wire_buffer(i, 0, share);  // sized here, before the pack work may run
      all = wire_buffer(i, share, share * ranks);
      options.after.push_back(pack_on_stream(i, [this, i, share, ranks] {
        pack(i, true, share, share, true, false);
        to_wire(i, share, share * ranks);
      }));
      unpack_pending_[static_cast<std::size_t>(i)] = 1;
    }
  }
  totals_.network_bytes += static_cast<double>(all.bytes());
  const platform::Pending scattered =
      comm.world().reduce_scatter(all, mine, platform::ReduceOp::average, std::move(options));
  finished_[static_cast<std::size_t>(i)].push_back(scattered);
  network_in_flight_.push_back(scattered);
}

// Gradients on the wire: op i's packed values [first, first + count) as reduce_dtype (a bf16 copy
// beside them, sized by wire_buffer() before; fp32 travels as packed), and the buffer a
// collective moves (wire_buffer: on the issuing thread, before the pack work is submitted).
template <linalg::Real T>
void PlanInterpreter<T>::to_wire(OpId i, std::size_t first, std::size_t count) {
  if (plan_.reduce_dtype != platform::DType::bf16) return;
  if constexpr (std::is_same_v<T, float>) {
    const std::vector<float>& packed = packed_[static_cast<std::size_t>(i)];
    std::vector<std::uint16_t>& wire = wire_[static_cast<std::size_t>(i)];
    for (std::size_t k = first; k < first + count; ++k) wire.at(k) = platform::float_to_bf16(packed[k]);
  }
}

template <linalg::Real T>
platform::CommBuffer PlanInterpreter<T>::wire_buffer(OpId i, std::size_t first, std::size_t count) {
  if (plan_.reduce_dtype == platform::DType::bf16) {
    std::vector<std::uint16_t>& wire = wire_[static_cast<std::size_t>(i)];
    wire.resize(packed_[static_cast<std::size_t>(i)].size());
    return platform::CommBuffer::of_bf16(std::span<std::uint16_t>(wire).subspan(first, count));
  }
  if constexpr (std::is_same_v<T, float>)
    return platform::CommBuffer::of(std::span<float>(packed_[static_cast<std::size_t>(i)]).subspan(first, count));
  throw std::logic_error("PlanInterpreter: gradients travel as fp32 or bf16 from float values");
}

// The result a reduce or scatter brought back into fp32 (its first `count` values: a scatter's
// own share, a reduce's whole buffer), then a reduce of whole layers into their gradients.
template <linalg::Real T>
bool PlanInterpreter<T>::from_wire(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  if (op.kind == OpKind::gather) return false;
  std::vector<T>& packed = packed_[static_cast<std::size_t>(i)];
  const auto ranks = static_cast<std::size_t>(platform_.comm()->world().size());
  const std::size_t count = op.kind == OpKind::scatter ? packed.size() / (ranks + 1) : packed.size();
  if (plan_.reduce_dtype == platform::DType::bf16) {
    const std::vector<std::uint16_t>& wire = wire_[static_cast<std::size_t>(i)];
    for (std::size_t k = 0; k < count; ++k) packed[k] = static_cast<T>(platform::bf16_to_float(wire[k]));
  }
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  if (!bucket.blocks.empty()) return false;
  if constexpr (std::is_same_v<T, float>) {
    const std::span<float> layers = model_.gradient_bucket(static_cast<std::size_t>(bucket.first_layer),
                                                           static_cast<std::size_t>(bucket.last_layer));
    std::copy(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(layers.size()), layers.begin());
  }
  return true;
}

// Packing as work of its own on the device stream, after the backward that wrote the gradients
// (stream order), so the issuing thread never waits for it; the collective starts after it.
template <linalg::Real T>
platform::Pending PlanInterpreter<T>::pack_on_stream(OpId i, std::function<void()> body) {
  platform::Work work;
  work.label = "pack " + std::string(plan::to_string(plan_.ops[static_cast<std::size_t>(i)].kind));
  work.tag = {step_, i, -1, platform::ActivityRole::op};
  work.body = [body = std::move(body)] {
    body();
    return Status::success();
  };
  return submit(platform_.device_stream(), std::move(work));
}

// Sends the weights of a gather's blocks (its bucket's) from their owners to every rank: by a
// broadcast when one rank owns them all, else by one all-gather of equal shares, each rank's
// blocks packed in block order and padded to the largest share. A gather after the updates
// packs once this rank's updates of its blocks have finished (the issuing thread waits for them;
// the plan issues it one hook after its layers', so the wait is short); a gather before a use
// (fsdp) packs at once (its weights are the last step's). Weights travel bit for bit as 4-byte
// words (a gather copies, never adds).
template <linalg::Real T>
void PlanInterpreter<T>::run_gather(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  platform::Comm& comm = communicator(i);
  const auto ranks = static_cast<std::size_t>(comm.world().size());
  const int me = comm.world().rank();
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  const int owner = sole_owner(bucket);
  // With values, the updates must have written the weights this rank packs.
  const bool after_updates = std::any_of(op.deps.begin(), op.deps.end(), [&](OpId d) {
    return plan_.ops[static_cast<std::size_t>(d)].kind == OpKind::update;
  });
  platform::CollectiveOptions options = collective_options(i, /*await_deps=*/values_ && after_updates);
  // A broadcast's buffer is the blocks; an all-gather's share is 1 / ranks of its bytes (the
  // weights as the forward reads them). Values travel as they are: the largest rank's blocks.
  std::size_t share_words = static_cast<std::size_t>(op.cost.bytes()) / 4 / (owner >= 0 ? 1 : ranks);
  std::size_t share = 0;  // in values
  if (values_) {
    std::vector<std::size_t> held(ranks, 0);
    for (int b : bucket.blocks) held.at(static_cast<std::size_t>(plan_.blocks[static_cast<std::size_t>(b)].owner)) += block_values(b);
    share = owner >= 0 ? held[static_cast<std::size_t>(owner)] : *std::max_element(held.begin(), held.end());
    share_words = share * sizeof(T) / 4;
  }
  const std::size_t all_words = owner >= 0 ? share_words : share_words * ranks;
  platform::CommBuffer mine = platform::CommBuffer::sized(share_words, platform::DType::fp32);
  platform::CommBuffer all = platform::CommBuffer::sized(all_words, platform::DType::fp32);
  if (values_) {
    // All-gather: this rank's share, then every rank's; broadcast: the blocks, in place.
    std::vector<T>& packed = packed_[static_cast<std::size_t>(i)];
    packed.assign(owner >= 0 ? share : share * (ranks + 1), T(0));
    pack(i, false, 0, share, false, true);
    mine = {packed.data(), share_words, platform::DType::fp32};
    all = {packed.data() + (owner >= 0 ? 0 : share), all_words, platform::DType::fp32};
    if (owner != me && unpacks_[static_cast<std::size_t>(i)]) unpack_pending_[static_cast<std::size_t>(i)] = 1;
  }
  totals_.network_bytes += static_cast<double>(all.bytes());
  const platform::Pending gathered = owner >= 0 ? comm.world().broadcast(all, owner, std::move(options))
                                                : comm.world().all_gather(mine, all, std::move(options));
  finished_[static_cast<std::size_t>(i)].push_back(gathered);
  network_in_flight_.push_back(gathered);
}

template <linalg::Real T>
int PlanInterpreter<T>::sole_owner(const plan::BucketInfo& bucket) const {
  int owner = -1;
  for (int b : bucket.blocks) {
    const int o = plan_.blocks[static_cast<std::size_t>(b)].owner;
    if (owner >= 0 && o != owner) return -1;
    owner = o;
  }
  return owner;
}

// Per collective op: whether it brings values this rank keeps (a gather: the step's first gather
// of one of its blocks; every reduce and scatter of blocks).
template <linalg::Real T>
std::vector<char> PlanInterpreter<T>::first_arrivals() const {
  std::vector<char> unpacks(plan_.ops.size(), 0);
  std::vector<char> seen(plan_.blocks.size(), 0);
  for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
    const Op& op = plan_.ops[i];
    if (!plan::is_collective_op(op.kind) || op.bucket < 0) continue;
    for (int b : plan_.buckets[static_cast<std::size_t>(op.bucket)].blocks) {
      if (op.kind != OpKind::gather) {
        unpacks[i] = 1;
        continue;
      }
      if (seen[static_cast<std::size_t>(b)]) continue;
      seen[static_cast<std::size_t>(b)] = 1;
      unpacks[i] = 1;
    }
  }
  return unpacks;
}

template void PlanInterpreter<float>::run_reduce(plan::OpId);
template void PlanInterpreter<float>::run_scatter(plan::OpId);
template void PlanInterpreter<float>::run_gather(plan::OpId);
template void PlanInterpreter<float>::unpack(plan::OpId);
template int PlanInterpreter<float>::sole_owner(const plan::BucketInfo&) const;
template std::vector<char> PlanInterpreter<float>::first_arrivals() const;
template void PlanInterpreter<double>::run_reduce(plan::OpId);
template void PlanInterpreter<double>::run_scatter(plan::OpId);
template void PlanInterpreter<double>::run_gather(plan::OpId);
template void PlanInterpreter<double>::unpack(plan::OpId);
template int PlanInterpreter<double>::sole_owner(const plan::BucketInfo&) const;
template std::vector<char> PlanInterpreter<double>::first_arrivals() const;

}  // namespace asteria::runtime

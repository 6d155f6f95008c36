// The plan interpreter's collective ops (plan_interpreter.hpp): a gradient bucket's reduce and
// the gathers of sharded state's new weights, over the platform's communicator.
#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/common/error.hpp"
#include "core/runtime/driver/plan_interpreter.hpp"

namespace asteria::runtime {

using plan::Op;
using plan::OpId;

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
  options.tag = {step_, i, -1, platform::ActivityRole::op};
  return options;
}

// Starts the all-reduce (average) of a gradient bucket's gradients (one buffer of the model's)
// among the data-parallel ranks once the backward that completed them has finished; the issuing
// thread goes on (the next layers' backward is issued while it runs). Values travel only when the
// backward computed them this step.
template <linalg::Real T>
void PlanInterpreter<T>::run_reduce(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  platform::Comm& comm = communicator(i);
  platform::CollectiveOptions options = collective_options(i, /*await_deps=*/false);
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  const auto first = static_cast<std::size_t>(bucket.first_layer);
  const auto last = static_cast<std::size_t>(bucket.last_layer);
  platform::CommBuffer buffer =
      platform::CommBuffer::sized(static_cast<std::size_t>(op.cost.bytes()) / sizeof(float), platform::DType::fp32);
  if (device_numerics_) {
    if constexpr (std::is_same_v<T, float>) {
      const std::span<float> g = model_.gradient_bucket(first, last);
      if (g.empty())
        throw std::logic_error("PlanInterpreter: the model does not keep the gradients of its bucket " +
                               std::to_string(op.bucket) + " in one array (the driver gives such a model one bucket per layer)");
      buffer = platform::CommBuffer::of(g);
    } else {
      throw InputError("step plan (" + plan_.schedule + ")", options.label,
                       "fp32 values: data-parallel ranks reduce fp32 gradients (train in float, or run shapes)");
    }
  }
  totals_.network_bytes += static_cast<double>(buffer.bytes());
  const platform::Pending reduced = comm.world().all_reduce(buffer, platform::ReduceOp::average, std::move(options));
  finished_[static_cast<std::size_t>(i)].push_back(reduced);
  network_in_flight_.push_back(reduced);
}

// Sends the new weights of a gather's blocks (its bucket's) from their owners to every rank: by a
// broadcast when one rank owns them all, else by one all-gather of equal shares, each rank's
// blocks packed in block order and padded to the largest share. A rank packs its own once their
// updates have finished (the issuing thread waits for them; the plan issues a gather one hook
// after its layers', so the wait is short); every rank unpacks the others' when the step's work
// has drained. Weights travel bit for bit as 4-byte words (a gather copies, never adds).
template <linalg::Real T>
void PlanInterpreter<T>::run_gather(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  platform::Comm& comm = communicator(i);
  const auto ranks = static_cast<std::size_t>(comm.world().size());
  const int me = comm.world().rank();
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  const int owner = sole_owner(bucket);
  // With values, the updates must have written the weights this rank packs.
  platform::CollectiveOptions options = collective_options(i, /*await_deps=*/values_);
  // A broadcast's buffer is the blocks; an all-gather's share is 1 / ranks of its bytes.
  const std::size_t share_words = static_cast<std::size_t>(op.cost.bytes()) / 4 / (owner >= 0 ? 1 : ranks);
  const std::size_t all_words = owner >= 0 ? share_words : share_words * ranks;
  platform::CommBuffer mine = platform::CommBuffer::sized(share_words, platform::DType::fp32);
  platform::CommBuffer all = platform::CommBuffer::sized(all_words, platform::DType::fp32);
  if (values_) {
    // All-gather: this rank's share, then every rank's; broadcast: the blocks, in place.
    const std::size_t share = share_words * 4 / sizeof(T);
    std::vector<T>& packed = gathered_[static_cast<std::size_t>(i)];
    packed.assign(owner >= 0 ? share : share * (ranks + 1), T(0));
    std::size_t at = 0;
    for (int b : bucket.blocks) {
      if (plan_.blocks[static_cast<std::size_t>(b)].owner != me) continue;
      const linalg::MatrixView<T> w = block_weights(b);
      for (linalg::index r = 0; r < w.rows(); ++r, at += static_cast<std::size_t>(w.cols()))
        std::copy(w.row(r).begin(), w.row(r).end(), packed.begin() + static_cast<std::ptrdiff_t>(at));
    }
    if (at > share) throw std::logic_error("PlanInterpreter: a gather's share is smaller than this rank's blocks");
    mine = {packed.data(), share_words, platform::DType::fp32};
    all = {packed.data() + (owner >= 0 ? 0 : share), all_words, platform::DType::fp32};
    if (owner != me) unpack_.push_back(i);
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

// The other ranks' blocks of a gather, from their shares (or the broadcast), into the weights.
template <linalg::Real T>
void PlanInterpreter<T>::unpack_gather(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  const plan::BucketInfo& bucket = plan_.buckets[static_cast<std::size_t>(op.bucket)];
  const std::vector<T>& packed = gathered_[static_cast<std::size_t>(i)];
  const int me = platform_.comm()->world().rank();
  const auto ranks = static_cast<std::size_t>(platform_.comm()->world().size());
  const bool broadcast = sole_owner(bucket) >= 0;
  const std::size_t share = broadcast ? 0 : packed.size() / (ranks + 1);
  std::vector<std::size_t> at;  // per rank: where its next block starts
  for (std::size_t r = 0; r < ranks; ++r) at.push_back(share * (r + 1));
  for (int b : bucket.blocks) {
    const int owner = plan_.blocks[static_cast<std::size_t>(b)].owner;
    std::size_t& from = at.at(static_cast<std::size_t>(owner));
    const linalg::MatrixView<T> w = block_weights(b);
    for (linalg::index r = 0; r < w.rows(); ++r, from += static_cast<std::size_t>(w.cols()))
      if (owner != me)
        std::copy(packed.begin() + static_cast<std::ptrdiff_t>(from),
                  packed.begin() + static_cast<std::ptrdiff_t>(from + static_cast<std::size_t>(w.cols())),
                  w.row(r).begin());
  }
}

template void PlanInterpreter<float>::run_reduce(plan::OpId);
template void PlanInterpreter<float>::run_gather(plan::OpId);
template void PlanInterpreter<float>::unpack_gather(plan::OpId);
template int PlanInterpreter<float>::sole_owner(const plan::BucketInfo&) const;
template void PlanInterpreter<double>::run_reduce(plan::OpId);
template void PlanInterpreter<double>::run_gather(plan::OpId);
template void PlanInterpreter<double>::unpack_gather(plan::OpId);
template int PlanInterpreter<double>::sole_owner(const plan::BucketInfo&) const;

}  // namespace asteria::runtime

#pragma once
// Collective communication among data-parallel ranks. A CommGroup is an ordered set of ranks
// (the world, the ranks of one node, the node leaders, any split by colour); its collectives
// carry a dtype and may be bytes only (data-free runs). A collective is ordered after the work
// that produces its input (`after`) and never blocks the caller: it returns a Pending.
//
// Every rank of a group must call the group's collectives in the same order with the same
// sizes (as MPI and NCCL require); the i-th call on each rank is one collective.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/activity.hpp"
#include "core/platform/memory.hpp"
#include "core/platform/pending.hpp"

namespace asteria::platform {

enum class DType { fp32, bf16 };
std::size_t bytes_per_element(DType dtype) noexcept;
std::string_view to_string(DType dtype) noexcept;

enum class ReduceOp { sum, average };

enum class Collective { all_reduce, reduce_scatter, all_gather, broadcast };
std::string_view to_string(Collective collective) noexcept;

// `count` elements of `dtype` at `data`; data null: bytes only (a data-free run moves the bytes
// in time, and there are no values). bf16 values are stored as their 16 upper fp32 bits.
struct CommBuffer {
  void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::fp32;

  std::size_t bytes() const noexcept { return count * bytes_per_element(dtype); }
  bool bytes_only() const noexcept { return data == nullptr; }

  static CommBuffer of(std::span<float> values) noexcept { return {values.data(), values.size(), DType::fp32}; }
  static CommBuffer of_bf16(std::span<std::uint16_t> values) noexcept {
    return {values.data(), values.size(), DType::bf16};
  }
  static CommBuffer sized(std::size_t count, DType dtype) noexcept { return {nullptr, count, dtype}; }
};

// What orders a collective and names it in traces.
struct CollectiveOptions {
  std::vector<Pending> after;  // started once every one has finished (their failure fails it)
  std::string label;
  OpTag tag{};
};

class CommGroup {
 public:
  virtual ~CommGroup() = default;
  virtual int rank() const noexcept = 0;  // this rank's index in the group
  virtual int size() const noexcept = 0;
  virtual int world_rank(int group_rank) const = 0;

  // In place: every rank ends with the reduction of all ranks' `data`.
  virtual Pending all_reduce(CommBuffer data, ReduceOp op, CollectiveOptions options = {}) = 0;
  // `all` holds size() equal shards; rank r ends with the reduction of shard r in `mine`.
  virtual Pending reduce_scatter(CommBuffer all, CommBuffer mine, ReduceOp op, CollectiveOptions options = {}) = 0;
  // Rank r's `mine` lands in shard r of every rank's `all`.
  virtual Pending all_gather(CommBuffer mine, CommBuffer all, CollectiveOptions options = {}) = 0;
  // `root`'s data (a group rank) lands in every rank's `data`.
  virtual Pending broadcast(CommBuffer data, int root, CollectiveOptions options = {}) = 0;

  // Collective over this group: ranks passing the same colour form a new group, ordered by
  // (key, rank); a negative colour joins none (null is returned).
  virtual std::unique_ptr<CommGroup> split(int colour, int key) = 0;
};

// One collective as a backend receives it: what, how, and its buffers (checked).
struct CollectiveCall {
  Collective collective = Collective::all_reduce;
  ReduceOp op = ReduceOp::sum;  // all_reduce and reduce_scatter
  int root = 0;                 // broadcast (a group rank)
  CommBuffer in;                // all_reduce, broadcast: in place (in and out are one buffer)
  CommBuffer out;
};

// A call as the members of a collective compare it before moving data (the MPI and NCCL
// backends' header exchange): the call's fields, and whether its inputs failed (last).
using CallHeader = std::array<std::int64_t, 8>;
inline constexpr std::size_t kCallHeaderFailed = 7;
CallHeader header_of(const CollectiveCall& call, bool failed);
// "all_reduce of 8 -> 8 fp32 sum", "broadcast of 4 -> 4 bf16 (bytes only) from root 1", ...
std::string describe(const CallHeader& header);
std::string describe(const CollectiveCall& call);

// The four collectives checked once, core-side (check_collective, a broadcast's root), then
// handed to the backend as one call: a backend implements start() (and may add checks of its
// own in check_buffers(), e.g. that buffers are device memory) instead of four entry points.
class CheckedCommGroup : public CommGroup {
 public:
  Pending all_reduce(CommBuffer data, ReduceOp op, CollectiveOptions options = {}) final;
  Pending reduce_scatter(CommBuffer all, CommBuffer mine, ReduceOp op, CollectiveOptions options = {}) final;
  Pending all_gather(CommBuffer mine, CommBuffer all, CollectiveOptions options = {}) final;
  Pending broadcast(CommBuffer data, int root, CollectiveOptions options = {}) final;

 protected:
  // Backend-specific checks, after the common ones; throw std::invalid_argument naming the
  // collective.
  virtual void check_buffers(const CollectiveCall& /*call*/) const {}
  virtual Pending start(const CollectiveCall& call, CollectiveOptions options) = 0;

 private:
  Pending checked(CollectiveCall call, CollectiveOptions options);
};

// This rank's view of the world: its groups and where ranks live.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual CommGroup& world() = 0;
  virtual int node_of(int world_rank) const = 0;  // ranks on one node talk fastest
  // Where the buffers of its collectives live: host memory (MPI, the simulator, LocalComm), or
  // the device tier's on a GPU (NCCL). A step's reduce passes the model's gradients as they are,
  // so the two must agree (StepDriver checks it).
  virtual Tier buffer_tier() const { return Tier::host; }
  int rank();
  int size();
  int nodes();  // ranks fill nodes in order: the last rank's node + 1
  // The ranks of this rank's node, and the node leaders (the first rank of each node; null on
  // the other ranks). Both are collective calls over the world, made once and kept.
  CommGroup& node();
  CommGroup* leaders();

 private:
  std::unique_ptr<CommGroup> node_;
  std::unique_ptr<CommGroup> leaders_;
  bool split_ = false;
  void split_once();
};

// Checks a collective's buffers against each other and the group (the same on every backend):
// throws std::invalid_argument naming the collective and what is wrong.
void check_collective(Collective collective, const CommGroup& group, const CommBuffer& in, const CommBuffer& out);

}  // namespace asteria::platform

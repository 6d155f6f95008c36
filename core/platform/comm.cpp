#include "core/platform/comm.hpp"

#include <stdexcept>
#include <string>

namespace asteria::platform {

std::size_t bytes_per_element(DType dtype) noexcept {
  switch (dtype) {
    case DType::fp32: return 4;
    case DType::bf16: return 2;
  }
  return 4;
}

std::string_view to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
  }
  return "fp32";
}

std::string_view to_string(Collective collective) noexcept {
  switch (collective) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_gather: return "all_gather";
    case Collective::broadcast: return "broadcast";
  }
  return "all_reduce";
}

int Comm::rank() { return world().rank(); }
int Comm::size() { return world().size(); }
int Comm::nodes() { return node_of(size() - 1) + 1; }

void Comm::split_once() {
  if (split_) return;
  CommGroup& w = world();
  const int me = w.rank();
  const int my_node = node_of(me);
  node_ = w.split(my_node, me);
  const bool leader = me == 0 || node_of(me - 1) != my_node;
  leaders_ = w.split(leader ? 0 : -1, me);
  split_ = true;
}

CommGroup& Comm::node() {
  split_once();
  return *node_;
}

CommGroup* Comm::leaders() {
  split_once();
  return leaders_.get();
}

void check_collective(Collective collective, const CommGroup& group, const CommBuffer& in, const CommBuffer& out) {
  const std::string what(to_string(collective));
  auto fail = [&](const std::string& why) { throw std::invalid_argument(what + ": " + why); };
  if (in.dtype != out.dtype) fail("the buffers' dtypes differ (" + std::string(to_string(in.dtype)) + ", " +
                                  std::string(to_string(out.dtype)) + ")");
  if (in.bytes_only() != out.bytes_only()) fail("one buffer holds values and the other is bytes only");
  const auto n = static_cast<std::size_t>(group.size());
  switch (collective) {
    case Collective::all_reduce:
    case Collective::broadcast:
      if (in.count != out.count) fail("in place, the buffer is one");
      break;
    case Collective::reduce_scatter:
      if (in.count != out.count * n)
        fail("the whole buffer must hold " + std::to_string(n) + " shards of " + std::to_string(out.count) +
             " elements, it holds " + std::to_string(in.count));
      break;
    case Collective::all_gather:
      if (out.count != in.count * n)
        fail("the whole buffer must hold " + std::to_string(n) + " shards of " + std::to_string(in.count) +
             " elements, it holds " + std::to_string(out.count));
      break;
  }
}

CallHeader header_of(const CollectiveCall& c, bool failed) {
  return {static_cast<std::int64_t>(c.collective), static_cast<std::int64_t>(c.op), c.root,
          static_cast<std::int64_t>(c.in.count),   static_cast<std::int64_t>(c.out.count),
          static_cast<std::int64_t>(c.in.dtype),   c.in.bytes_only() ? 1 : 0,
          failed ? 1 : 0};
}

std::string describe(const CallHeader& h) {
  const auto collective = static_cast<Collective>(h[0]);
  std::string text(to_string(collective));
  text += " of " + std::to_string(h[3]) + " -> " + std::to_string(h[4]) + " " +
          std::string(to_string(static_cast<DType>(h[5])));
  if (h[6] != 0) text += " (bytes only)";
  if (collective == Collective::all_reduce || collective == Collective::reduce_scatter)
    text += h[1] == static_cast<std::int64_t>(ReduceOp::sum) ? " sum" : " average";
  if (collective == Collective::broadcast) text += " from root " + std::to_string(h[2]);
  return text;
}

std::string describe(const CollectiveCall& call) { return describe(header_of(call, false)); }

Pending CheckedCommGroup::checked(CollectiveCall call, CollectiveOptions options) {
  check_collective(call.collective, *this, call.in, call.out);
  if (call.collective == Collective::broadcast && (call.root < 0 || call.root >= size()))
    throw std::invalid_argument("broadcast: root " + std::to_string(call.root) + " is not a rank of a group of " +
                                std::to_string(size()));
  check_buffers(call);
  return start(call, std::move(options));
}

Pending CheckedCommGroup::all_reduce(CommBuffer data, ReduceOp op, CollectiveOptions options) {
  return checked({Collective::all_reduce, op, 0, data, data}, std::move(options));
}

Pending CheckedCommGroup::reduce_scatter(CommBuffer all, CommBuffer mine, ReduceOp op, CollectiveOptions options) {
  return checked({Collective::reduce_scatter, op, 0, all, mine}, std::move(options));
}

Pending CheckedCommGroup::all_gather(CommBuffer mine, CommBuffer all, CollectiveOptions options) {
  return checked({Collective::all_gather, ReduceOp::sum, 0, mine, all}, std::move(options));
}

Pending CheckedCommGroup::broadcast(CommBuffer data, int root, CollectiveOptions options) {
  return checked({Collective::broadcast, ReduceOp::sum, root, data, data}, std::move(options));
}

}  // namespace asteria::platform

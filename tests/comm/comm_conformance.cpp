// The scenarios of the Comm conformance suite (comm_conformance.hpp).
#include "tests/comm/comm_conformance.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/platform/collective_values.hpp"

namespace asteria::comm_conformance {
namespace {

using platform::Collective;
using platform::CommBuffer;
using platform::CommGroup;
using platform::DType;
using platform::Pending;
using platform::ReduceOp;

// Element i of rank r's input: a column such as 1e8, 1, -1e8, 1 sums to 1 in rank order and to
// 0 pairwise, so any other order of addition shows in the bits.
float input(int rank, std::size_t i, int salt = 0) {
  static constexpr float kColumn[] = {1e8f, 1.0f, -1e8f, 1.0f, 3.0e-3f};
  const float base = kColumn[(static_cast<std::size_t>(rank) + i + static_cast<std::size_t>(salt)) % 5];
  return base + 0.1f * static_cast<float>((i * 7 + static_cast<std::size_t>(salt)) % 3);
}

// Rank r's buffer of `count` elements of `dtype`, as raw bytes (bf16: upper fp32 bits);
// `absolute`: their magnitudes.
std::vector<std::byte> inputs_of(int rank, std::size_t count, DType dtype, int salt, bool absolute = false) {
  std::vector<std::byte> bytes(count * platform::bytes_per_element(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    const float v = absolute ? std::fabs(input(rank, i, salt)) : input(rank, i, salt);
    if (dtype == DType::fp32) {
      const auto b = std::bit_cast<std::array<std::byte, 4>>(v);
      std::copy(b.begin(), b.end(), bytes.begin() + static_cast<std::ptrdiff_t>(4 * i));
    } else {
      const auto b = std::bit_cast<std::array<std::byte, 2>>(platform::float_to_bf16(v * 1e-3f));
      std::copy(b.begin(), b.end(), bytes.begin() + static_cast<std::ptrdiff_t>(2 * i));
    }
  }
  return bytes;
}

CommBuffer buffer(std::vector<std::byte>& bytes, DType dtype) {
  return {bytes.data(), bytes.size() / platform::bytes_per_element(dtype), dtype};
}

// What `me` must hold after the collective: combine_values over every rank's known inputs
// (`absolute`: over their magnitudes).
std::vector<std::byte> reference(Collective collective, ReduceOp op, int root, int ranks, int me, std::size_t in_count,
                                 std::size_t out_count, DType dtype, int salt, bool absolute = false) {
  std::vector<std::vector<std::byte>> ins, outs;
  std::vector<CommBuffer> in_buffers, out_buffers;
  const bool in_place = collective == Collective::all_reduce || collective == Collective::broadcast;
  for (int r = 0; r < ranks; ++r) {
    ins.push_back(inputs_of(r, in_count, dtype, salt, absolute));
    outs.push_back(in_place ? ins.back() : std::vector<std::byte>(out_count * platform::bytes_per_element(dtype)));
  }
  for (int r = 0; r < ranks; ++r) {
    in_buffers.push_back(buffer(ins[static_cast<std::size_t>(r)], dtype));
    out_buffers.push_back(in_place ? in_buffers.back() : buffer(outs[static_cast<std::size_t>(r)], dtype));
  }
  platform::combine_values(collective, op, root, in_buffers, out_buffers);
  return in_place ? ins[static_cast<std::size_t>(me)] : outs[static_cast<std::size_t>(me)];
}

std::string describe(Collective collective, ReduceOp op, DType dtype, std::size_t count) {
  return std::string(platform::to_string(collective)) + (op == ReduceOp::sum ? " sum " : " average ") +
         std::string(platform::to_string(dtype)) + " of " + std::to_string(count);
}

void expect_bits(const std::vector<std::byte>& got, const std::vector<std::byte>& want, const std::string& what,
                 int rank) {
  EXPECT_EQ(got.size(), want.size()) << what << " on rank " << rank;
  if (got.size() == want.size()) {
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << what << " on rank " << rank
                                                                  << ": not the reference bits";
  }
}

float value_at(const std::vector<std::byte>& bytes, std::size_t i, DType dtype) {
  if (dtype == DType::bf16) {
    std::uint16_t word = 0;
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(2 * i), 2, reinterpret_cast<std::byte*>(&word));
    return platform::bf16_to_float(word);
  }
  float value = 0.0f;
  std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(4 * i), 4, reinterpret_cast<std::byte*>(&value));
  return value;
}

// How far a reduced value may be from the reference on `rank`'s backend (Rank::reduction_ulps):
// `magnitude` is the same reduction over the terms' magnitudes.
float tolerance(const Rank& rank, float magnitude, DType dtype, int ranks) {
  const float epsilon = dtype == DType::fp32 ? 0x1p-23f : 0x1p-7f;
  return static_cast<float>(rank.reduction_ulps * ranks) * epsilon * magnitude;
}

// A reduction's result against the reference: bitwise, or within the backend's tolerance.
void expect_reduced(const Rank& rank, const std::vector<std::byte>& got, Collective collective, ReduceOp op, int ranks,
                    int me, std::size_t in_count, std::size_t out_count, DType dtype, int salt, const std::string& what) {
  const std::vector<std::byte> want = reference(collective, op, 0, ranks, me, in_count, out_count, dtype, salt);
  if (rank.reduction_ulps == 0) {
    expect_bits(got, want, what, me);
    return;
  }
  const std::vector<std::byte> magnitude =
      reference(collective, op, 0, ranks, me, in_count, out_count, dtype, salt, /*absolute=*/true);
  EXPECT_EQ(got.size(), want.size()) << what << " on rank " << me;
  if (got.size() != want.size()) return;
  std::size_t outside = 0, first = 0;
  const std::size_t count = got.size() / platform::bytes_per_element(dtype);
  for (std::size_t i = 0; i < count; ++i) {
    const float allowed = tolerance(rank, value_at(magnitude, i, dtype), dtype, ranks);
    if (!(std::fabs(value_at(got, i, dtype) - value_at(want, i, dtype)) <= allowed) && outside++ == 0) first = i;
  }
  EXPECT_EQ(outside, 0u) << what << " on rank " << me << ": " << outside << " elements beyond " << rank.reduction_ulps
                         << " ulps x " << ranks << " ranks of the sum of magnitudes; first at " << first << ": "
                         << value_at(got, first, dtype) << ", reference " << value_at(want, first, dtype);
}

void expect_ok(const Pending& p, const std::string& what, int rank) {
  const Status s = p.status();
  EXPECT_TRUE(s.ok()) << what << " on rank " << rank << ": " << s.message();
}

// One collective with values, checked against the reference. `count`: the input's elements
// (reduce_scatter: the whole; all_gather: the shard).
void check_collective(Rank& rank, Collective collective, ReduceOp op, DType dtype, std::size_t count, int root = 0,
                      int salt = 0) {
  CommGroup& world = rank.comm.world();
  const int n = world.size();
  const int me = world.rank();
  const auto un = static_cast<std::size_t>(n);
  const std::size_t out_count = collective == Collective::reduce_scatter ? count / un
                                : collective == Collective::all_gather   ? count * un
                                                                         : count;
  std::vector<std::byte> in = inputs_of(me, count, dtype, salt);
  std::vector<std::byte> out(out_count * platform::bytes_per_element(dtype), std::byte{0x5a});
  Pending p;
  switch (collective) {
    case Collective::all_reduce: p = world.all_reduce(buffer(in, dtype), op); break;
    case Collective::reduce_scatter: p = world.reduce_scatter(buffer(in, dtype), buffer(out, dtype), op); break;
    case Collective::all_gather: p = world.all_gather(buffer(in, dtype), buffer(out, dtype)); break;
    case Collective::broadcast: p = world.broadcast(buffer(in, dtype), root); break;
  }
  const std::string what = describe(collective, op, dtype, count);
  expect_ok(p, what, me);
  const bool in_place = collective == Collective::all_reduce || collective == Collective::broadcast;
  if (collective == Collective::all_reduce || collective == Collective::reduce_scatter) {
    expect_reduced(rank, in_place ? in : out, collective, op, n, me, count, out_count, dtype, salt, what);
  } else {
    expect_bits(in_place ? in : out, reference(collective, op, root, n, me, count, out_count, dtype, salt), what, me);
  }
}

void all_reduce_fp32(Rank& rank) {
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::average}) check_collective(rank, Collective::all_reduce, op, DType::fp32, count);
}

void all_reduce_bf16(Rank& rank) {
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::average}) check_collective(rank, Collective::all_reduce, op, DType::bf16, count);
}

// Large enough for real shards (a prime count: uneven ones).
void all_reduce_large(Rank& rank) {
  check_collective(rank, Collective::all_reduce, ReduceOp::sum, DType::fp32, 100003);
  check_collective(rank, Collective::all_reduce, ReduceOp::average, DType::bf16, 100003);
}

// The reference's order is visible: 1e8 + 1 - 1e8 + 1 is 1 in rank order (0 pairwise).
void all_reduce_adds_in_rank_order(Rank& rank) {
  CommGroup& world = rank.comm.world();
  static constexpr float kColumn[] = {1e8f, 1.0f, -1e8f, 1.0f};
  std::vector<float> v = {kColumn[world.rank() % 4]};
  expect_ok(world.all_reduce(CommBuffer::of(v), ReduceOp::sum), "all_reduce", world.rank());
  const float expected[] = {1e8f, 1e8f, 0.0f, 1.0f};  // partial sums in rank order
  if (rank.reduction_ulps == 0) {
    EXPECT_EQ(v[0], expected[(world.size() - 1) % 4]) << "rank " << world.rank();
  } else {
    float magnitude = 0.0f;
    for (int r = 0; r < world.size(); ++r) magnitude += std::fabs(kColumn[r % 4]);
    EXPECT_NEAR(v[0], expected[(world.size() - 1) % 4], tolerance(rank, magnitude, DType::fp32, world.size()))
        << "rank " << world.rank();
  }
}

void reduce_scatter(Rank& rank) {
  const auto n = static_cast<std::size_t>(rank.comm.world().size());
  for (DType dtype : {DType::fp32, DType::bf16})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::average})
      for (std::size_t shard : {std::size_t{1}, std::size_t{3}}) check_collective(rank, Collective::reduce_scatter, op, dtype, shard * n);
}

void all_gather(Rank& rank) {
  for (DType dtype : {DType::fp32, DType::bf16})
    for (std::size_t shard : {std::size_t{1}, std::size_t{3}})
      check_collective(rank, Collective::all_gather, ReduceOp::sum, dtype, shard);
}

void broadcast_from_last_rank(Rank& rank) {
  const int root = rank.comm.world().size() - 1;  // not 0 once there are two ranks
  for (DType dtype : {DType::fp32, DType::bf16})
    check_collective(rank, Collective::broadcast, ReduceOp::sum, dtype, 5, root, /*salt=*/1);
}

// Bytes-only calls complete, and the calls with values after them still match.
void bytes_only(Rank& rank) {
  CommGroup& world = rank.comm.world();
  const int me = world.rank();
  const auto n = static_cast<std::size_t>(world.size());
  expect_ok(world.all_reduce(CommBuffer::sized(1001, DType::bf16), ReduceOp::sum), "bytes-only all_reduce", me);
  expect_ok(world.reduce_scatter(CommBuffer::sized(4 * n, DType::fp32), CommBuffer::sized(4, DType::fp32),
                                 ReduceOp::average),
            "bytes-only reduce_scatter", me);
  expect_ok(world.all_gather(CommBuffer::sized(5, DType::fp32), CommBuffer::sized(5 * n, DType::fp32)),
            "bytes-only all_gather", me);
  expect_ok(world.broadcast(CommBuffer::sized(9, DType::bf16), world.size() - 1), "bytes-only broadcast", me);
  check_collective(rank, Collective::all_reduce, ReduceOp::sum, DType::fp32, 6);
}

// A collective whose input work is unfinished returns at once and does not complete before it.
void waits_for_its_after(Rank& rank) {
  CommGroup& world = rank.comm.world();
  const int me = world.rank();
  auto [promise, produced] = rank.board.make();
  std::vector<std::byte> data = inputs_of(me, 7, DType::fp32, 2);
  platform::CollectiveOptions options;
  options.after = {produced};
  options.label = "after input";
  Pending reduced = world.all_reduce(buffer(data, DType::fp32), ReduceOp::sum, std::move(options));
  rank.pause();
  EXPECT_FALSE(reduced.test()) << "completed before its input on rank " << me;
  const std::vector<std::byte> written = inputs_of(me, 7, DType::fp32, 3);
  std::copy(written.begin(), written.end(), data.begin());  // the input exists now, before its work is done
  promise.fulfil();
  expect_ok(reduced, "all_reduce after its input", me);
  expect_reduced(rank, data, Collective::all_reduce, ReduceOp::sum, world.size(), me, 7, 7, DType::fp32, 3,
                 "all_reduce after its input");
}

// One rank's failed input fails the collective on every member; the next one works.
void failed_after_fails_every_member(Rank& rank) {
  CommGroup& world = rank.comm.world();
  const int me = world.rank();
  auto [promise, produced] = rank.board.make();
  std::vector<float> data(4, 1.0f);
  platform::CollectiveOptions options;
  options.after = {produced, Pending::ready()};
  Pending reduced = world.all_reduce(CommBuffer::of(data), ReduceOp::sum, std::move(options));
  rank.pause();
  promise.fulfil(me == 0 ? Status(StatusCode::failed, "bad gradient") : Status::success());
  const Status s = reduced.status();
  EXPECT_FALSE(s.ok()) << "rank " << me;
  if (me == 0) {
    EXPECT_NE(s.reason().find("bad gradient"), std::string::npos) << s.message();
  }
  check_collective(rank, Collective::all_reduce, ReduceOp::average, DType::fp32, 3);
}

// node(): the ranks of my node, in world order; leaders(): the first rank of every node.
void node_and_leader_groups(Rank& rank) {
  platform::Comm& comm = rank.comm;
  const int me = comm.rank();
  std::vector<int> mates, leaders;
  for (int r = 0; r < comm.size(); ++r) {
    if (comm.node_of(r) == comm.node_of(me)) mates.push_back(r);
    if (r == 0 || comm.node_of(r - 1) != comm.node_of(r)) leaders.push_back(r);
  }
  EXPECT_EQ(static_cast<int>(leaders.size()), comm.nodes());
  CommGroup& node = comm.node();
  EXPECT_EQ(node.size(), static_cast<int>(mates.size())) << "rank " << me;
  for (int i = 0; i < node.size() && i < static_cast<int>(mates.size()); ++i)
    EXPECT_EQ(node.world_rank(i), mates[static_cast<std::size_t>(i)]) << "rank " << me;
  EXPECT_EQ(node.world_rank(node.rank()), me);
  std::vector<float> sum = {static_cast<float>(me), 1.0f};
  expect_ok(node.all_reduce(CommBuffer::of(sum), ReduceOp::sum), "node all_reduce", me);
  float mates_sum = 0.0f;
  for (int r : mates) mates_sum += static_cast<float>(r);
  EXPECT_EQ(sum, (std::vector<float>{mates_sum, static_cast<float>(mates.size())})) << "rank " << me;

  CommGroup* leader_group = comm.leaders();
  const bool leading = me == mates.front();
  EXPECT_EQ(leader_group != nullptr, leading) << "rank " << me;
  if (leader_group == nullptr) return;  // no further call: the others' leaders are not waiting on me
  EXPECT_EQ(leader_group->size(), static_cast<int>(leaders.size()));
  std::vector<float> across = {static_cast<float>(me)};
  expect_ok(leader_group->all_reduce(CommBuffer::of(across), ReduceOp::sum), "leaders all_reduce", me);
  float leaders_sum = 0.0f;
  for (int r : leaders) leaders_sum += static_cast<float>(r);
  EXPECT_EQ(across[0], leaders_sum) << "rank " << me;
}

// Split by colour: even and odd ranks, the last rank (of two or more) in none, ordered by key.
void split_by_colour(Rank& rank) {
  CommGroup& world = rank.comm.world();
  const int me = world.rank();
  const int n = world.size();
  auto colour_of = [n](int r) { return n > 1 && r == n - 1 ? -1 : r % 2; };
  std::unique_ptr<CommGroup> mine = world.split(colour_of(me), -me);  // reversed world order
  EXPECT_EQ(mine != nullptr, colour_of(me) >= 0) << "rank " << me;
  if (!mine) return;
  std::vector<int> members;  // by descending world rank
  for (int r = n - 1; r >= 0; --r)
    if (colour_of(r) == colour_of(me)) members.push_back(r);
  EXPECT_EQ(mine->size(), static_cast<int>(members.size())) << "rank " << me;
  for (int i = 0; i < mine->size() && i < static_cast<int>(members.size()); ++i)
    EXPECT_EQ(mine->world_rank(i), members[static_cast<std::size_t>(i)]) << "rank " << me;
  EXPECT_EQ(mine->world_rank(mine->rank()), me);
  EXPECT_THROW(static_cast<void>(mine->world_rank(mine->size())), std::out_of_range);
  // Group rank order is the reduction order: the first element shows it.
  std::vector<float> v = {input(mine->rank(), 0), static_cast<float>(me)};
  expect_ok(mine->all_reduce(CommBuffer::of(v), ReduceOp::sum), "split all_reduce", me);
  float ordered = 0.0f, magnitude = 0.0f, world_ranks = 0.0f;
  for (int i = 0; i < static_cast<int>(members.size()); ++i) {
    ordered += input(i, 0);
    magnitude += std::fabs(input(i, 0));
    world_ranks += static_cast<float>(members[static_cast<std::size_t>(i)]);
  }
  if (rank.reduction_ulps == 0) {
    EXPECT_EQ(v, (std::vector<float>{ordered, world_ranks})) << "rank " << me;
  } else {
    EXPECT_NEAR(v[0], ordered, tolerance(rank, magnitude, DType::fp32, mine->size())) << "rank " << me;
    EXPECT_EQ(v[1], world_ranks) << "rank " << me;
  }
  // A split of a split: everyone in one group, in the same order.
  std::unique_ptr<CommGroup> again = mine->split(7, 0);
  EXPECT_TRUE(again != nullptr);
  if (again) {
    EXPECT_EQ(again->world_rank(again->rank()), me);
  }
}

// Several calls in flight at once, over two groups, the first one held back by its input.
void several_in_flight(Rank& rank) {
  platform::Comm& comm = rank.comm;
  CommGroup& world = comm.world();
  CommGroup& node = comm.node();  // a collective split: made before any call is in flight
  const int me = world.rank();
  const int n = world.size();
  const auto un = static_cast<std::size_t>(n);
  auto [promise, produced] = rank.board.make();
  std::vector<std::byte> held = inputs_of(me, 9, DType::fp32, 4);
  std::vector<std::byte> sum16 = inputs_of(me, 11, DType::bf16, 5);
  std::vector<std::byte> own = inputs_of(me, 2, DType::fp32, 6);
  std::vector<std::byte> gathered(2 * un * 4);
  std::vector<std::byte> cast = inputs_of(me, 3, DType::bf16, 7);
  std::vector<std::byte> whole = inputs_of(me, 2 * un, DType::fp32, 8);
  std::vector<std::byte> shard(2 * 4);
  std::vector<float> on_node = {static_cast<float>(me)};
  platform::CollectiveOptions after;
  after.after = {produced};
  std::vector<Pending> calls;
  calls.push_back(world.all_reduce(buffer(held, DType::fp32), ReduceOp::average, std::move(after)));
  calls.push_back(world.all_reduce(buffer(sum16, DType::bf16), ReduceOp::sum));
  calls.push_back(node.all_reduce(CommBuffer::of(on_node), ReduceOp::sum));
  calls.push_back(world.all_gather(buffer(own, DType::fp32), buffer(gathered, DType::fp32)));
  calls.push_back(world.broadcast(buffer(cast, DType::bf16), n / 2));
  calls.push_back(world.reduce_scatter(buffer(whole, DType::fp32), buffer(shard, DType::fp32), ReduceOp::sum));
  promise.fulfil();
  for (const Pending& p : calls) expect_ok(p, "a call in flight", me);
  expect_reduced(rank, held, Collective::all_reduce, ReduceOp::average, n, me, 9, 9, DType::fp32, 4, "held all_reduce");
  expect_reduced(rank, sum16, Collective::all_reduce, ReduceOp::sum, n, me, 11, 11, DType::bf16, 5, "bf16 all_reduce");
  expect_bits(gathered, reference(Collective::all_gather, ReduceOp::sum, 0, n, me, 2, 2 * un, DType::fp32, 6),
              "all_gather", me);
  expect_bits(cast, reference(Collective::broadcast, ReduceOp::sum, n / 2, n, me, 3, 3, DType::bf16, 7), "broadcast",
              me);
  expect_reduced(rank, shard, Collective::reduce_scatter, ReduceOp::sum, n, me, 2 * un, 2, DType::fp32, 8,
                 "reduce_scatter");
  float mates = 0.0f;
  for (int r = 0; r < n; ++r)
    if (comm.node_of(r) == comm.node_of(me)) mates += static_cast<float>(r);
  EXPECT_EQ(on_node[0], mates) << "rank " << me;
}

// Members whose calls differ all fail, with a message naming both calls; the next call works.
void mismatched_sizes_fail(Rank& rank) {
  CommGroup& world = rank.comm.world();
  const int me = world.rank();
  if (world.size() < 2) return;  // one member cannot disagree with itself
  std::vector<float> data(me == world.size() - 1 ? 3 : 2, 1.0f);
  const Status s = world.all_reduce(CommBuffer::of(data), ReduceOp::sum).status();
  EXPECT_FALSE(s.ok()) << "rank " << me;
  EXPECT_NE(s.reason().find("of 2"), std::string::npos) << "names the one call: " << s.message();
  EXPECT_NE(s.reason().find("of 3"), std::string::npos) << "names the other call: " << s.message();
  check_collective(rank, Collective::all_reduce, ReduceOp::sum, DType::bf16, 5);
}

// Bad buffers throw where they are passed, and issue nothing: the next call still matches.
void bad_buffers_throw(Rank& rank) {
  CommGroup& world = rank.comm.world();
  const auto n = static_cast<std::size_t>(world.size());
  std::vector<float> all(2 * n + 1), mine(2);
  std::vector<std::uint16_t> half(2);
  EXPECT_THROW(world.reduce_scatter(CommBuffer::of(all), CommBuffer::of(mine), ReduceOp::sum), std::invalid_argument);
  EXPECT_THROW(world.all_gather(CommBuffer::of(mine), CommBuffer::of(all)), std::invalid_argument);
  EXPECT_THROW(world.broadcast(CommBuffer::of(mine), world.size()), std::invalid_argument);
  EXPECT_THROW(world.all_gather(CommBuffer::of(mine), CommBuffer::sized(2 * n, DType::fp32)), std::invalid_argument);
  EXPECT_THROW(world.reduce_scatter(CommBuffer::of_bf16(half), CommBuffer::of(mine), ReduceOp::sum),
               std::invalid_argument);
  check_collective(rank, Collective::all_reduce, ReduceOp::sum, DType::fp32, 3);
}

}  // namespace

std::vector<Case> cases() {
  return {
      {"all_reduce_fp32", all_reduce_fp32},
      {"all_reduce_bf16", all_reduce_bf16},
      {"all_reduce_large", all_reduce_large},
      {"all_reduce_adds_in_rank_order", all_reduce_adds_in_rank_order},
      {"reduce_scatter", reduce_scatter},
      {"all_gather", all_gather},
      {"broadcast_from_last_rank", broadcast_from_last_rank},
      {"bytes_only", bytes_only},
      {"waits_for_its_after", waits_for_its_after},
      {"failed_after_fails_every_member", failed_after_fails_every_member},
      {"node_and_leader_groups", node_and_leader_groups},
      {"split_by_colour", split_by_colour},
      {"several_in_flight", several_in_flight},
      {"mismatched_sizes_fail", mismatched_sizes_fail},
      {"bad_buffers_throw", bad_buffers_throw},
  };
}

std::vector<Param> params(const Backend& backend, const std::vector<int>& ranks) {
  std::vector<Param> all;
  for (const Case& c : cases())
    for (int n : ranks) all.push_back({backend, c, n});
  return all;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return info.param.scenario.name + "_" + std::to_string(info.param.ranks) + "_ranks";
}

TEST_P(CommConformance, Scenario) { GetParam().backend.run(GetParam().ranks, GetParam().scenario.run); }

}  // namespace asteria::comm_conformance

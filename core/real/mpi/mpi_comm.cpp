#include "core/real/mpi/mpi_comm.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "core/platform/collective_values.hpp"
#include "core/real/real_sync.hpp"

namespace asteria::real {

namespace {

// Throws std::runtime_error naming `what` and MPI's own words when `code` is an error.
void check(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  if (MPI_Error_string(code, text.data(), &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error(what + ": MPI error " + std::to_string(code) +
                           (length > 0 ? " (" + std::string(text.data(), static_cast<std::size_t>(length)) + ")" : ""));
}

std::string_view thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

}  // namespace

// ---- MpiSession ---------------------------------------------------------------------------

MpiSession::MpiSession(int* argc, char*** argv, bool multiple_comms) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0 || mpi_finalized())
    throw std::runtime_error("MpiSession: MPI was initialized before (one session per process)");
  const int wanted = multiple_comms ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
  check(MPI_Init_thread(argc, argv, wanted, &provided_), "MpiSession: MPI_Init_thread");
  try {
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MpiSession: MPI_Comm_set_errhandler");
    if (provided_ < wanted)
      throw std::runtime_error("MpiSession: MPI provides " + std::string(thread_level_name(provided_)) +
                               ", the progress thread needs " + std::string(thread_level_name(wanted)));
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MpiSession: MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MpiSession: MPI_Comm_size");
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

MpiSession::~MpiSession() { MPI_Finalize(); }

bool MpiSession::launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

// ---- the progress thread ------------------------------------------------------------------

namespace detail {

// Runs jobs in FIFO order on one thread: every MPI call of a comm after its construction. Once
// stopped (the comm is gone) jobs run on the posting thread: freeing a group's MPI_Comm then
// cannot race the progress thread, which has been joined.
class MpiEngine {
 public:
  MpiEngine(int rank_in_world, const platform::Clock& default_clock) : world_rank(rank_in_world), clock(&default_clock) {
    thread_ = std::thread([this] { work(); });
  }
  ~MpiEngine() { stop(); }
  MpiEngine(const MpiEngine&) = delete;
  MpiEngine& operator=(const MpiEngine&) = delete;

  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      if (!stopped_) {
        jobs_.push_back(std::move(job));
        changed_.notify_one();
        return;
      }
    }
    job();
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      changed_.notify_one();
    }
    thread_.join();
  }

  // Scratch memory of at least `bytes`, reused by the collectives (only the progress thread
  // runs them).
  std::byte* scratch(std::size_t bytes) {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    return scratch_.data();
  }

  RealSync sync;
  platform::CompletionBoard board{sync};
  const int world_rank;
  // Read by the issuing thread only (MpiComm::record's contract).
  platform::ActivitySink* sink = nullptr;
  const platform::Clock* clock;

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return stopped_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopped, every job run
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();  // jobs catch their own exceptions
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool stopped_ = false;
  std::vector<std::byte> scratch_;
  std::thread thread_;
};

}  // namespace detail

namespace {

using detail::MpiEngine;

// One member's part of a collective, as issued.
struct Call : platform::CollectiveCall {
  std::vector<platform::Pending> after;
  platform::Promise promise;
  std::string name;  // "<group>#<sequence>"
  std::string label;
  platform::OpTag tag;
  platform::ActivitySink* sink = nullptr;
  const platform::Clock* clock = nullptr;
};

using platform::describe;
using platform::header_of;
using Header = platform::CallHeader;
constexpr std::size_t kFailed = platform::kCallHeaderFailed;

int as_count(std::size_t count, const Call& call) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::runtime_error(std::string(platform::to_string(call.collective)) + " " + call.name + ": " +
                             std::to_string(count) + " elements are too many for one MPI call");
  return static_cast<int>(count);
}

// A group's MPI side: its communicator and who its members are.
struct GroupState {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  std::vector<int> world_ranks;  // per group rank
};

// The reduction of the members' copies of one shard: `pieces` holds them in group rank order
// (`count` elements each); the result goes to `out`. combine_values' all_reduce is the
// reference arithmetic itself, element by element.
void reduce_pieces(std::byte* pieces, std::size_t count, int members, const Call& call,
                   platform::CommBuffer out) {
  const std::size_t bytes = count * platform::bytes_per_element(out.dtype);
  std::vector<platform::CommBuffer> ins;
  for (int r = 0; r < members; ++r)
    ins.push_back({pieces + static_cast<std::size_t>(r) * bytes, count, out.dtype});
  const platform::CommBuffer outs[] = {out};
  platform::combine_values(platform::Collective::all_reduce, call.op, 0, ins, outs);
}

// Moves the data of a collective all members agreed on. Runs on the progress thread.
void exchange(MpiEngine& engine, const GroupState& g, const Call& call) {
  const std::size_t n = static_cast<std::size_t>(g.size);
  const std::size_t esize = platform::bytes_per_element(call.in.dtype);
  const MPI_Datatype type = call.in.dtype == platform::DType::fp32 ? MPI_FLOAT : MPI_UINT16_T;
  const bool values = !call.in.bytes_only();
  const std::string what = std::string(platform::to_string(call.collective)) + " " + call.name;
  switch (call.collective) {
    case platform::Collective::all_reduce: {
      // Shard r (count / n elements, the first count % n shards one more) is reduced by rank r.
      const std::size_t count = call.in.count;
      std::vector<int> counts(n), displs(n), mine_counts(n), mine_displs(n);
      std::size_t at = 0;
      for (std::size_t r = 0; r < n; ++r) {
        counts[r] = as_count(count / n + (r < count % n ? 1 : 0), call);
        displs[r] = as_count(at, call);
        at += static_cast<std::size_t>(counts[r]);
      }
      const std::size_t piece = static_cast<std::size_t>(counts[static_cast<std::size_t>(g.rank)]);
      for (std::size_t r = 0; r < n; ++r) {
        mine_counts[r] = static_cast<int>(piece);
        mine_displs[r] = as_count(r * piece, call);
      }
      std::byte* scratch = engine.scratch((n * piece + (values ? 0 : count)) * esize);
      std::byte* data = values ? static_cast<std::byte*>(call.in.data) : scratch + n * piece * esize;
      check(MPI_Alltoallv(data, counts.data(), displs.data(), type, scratch, mine_counts.data(), mine_displs.data(),
                          type, g.comm),
            what + ": MPI_Alltoallv");
      const std::size_t my_first = static_cast<std::size_t>(displs[static_cast<std::size_t>(g.rank)]);
      if (values) reduce_pieces(scratch, piece, g.size, call, {data + my_first * esize, piece, call.in.dtype});
      check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), displs.data(), type, g.comm),
            what + ": MPI_Allgatherv");
      break;
    }
    case platform::Collective::reduce_scatter: {
      const std::size_t shard = call.out.count;
      const int each = as_count(shard, call);
      as_count(shard * n, call);
      std::byte* scratch = engine.scratch((values ? n * shard : 2 * n * shard) * esize);
      const std::byte* all = values ? static_cast<const std::byte*>(call.in.data) : scratch + n * shard * esize;
      check(MPI_Alltoall(all, each, type, scratch, each, type, g.comm), what + ": MPI_Alltoall");
      if (values) reduce_pieces(scratch, shard, g.size, call, call.out);
      break;
    }
    case platform::Collective::all_gather: {
      const int each = as_count(call.in.count, call);
      as_count(call.out.count, call);
      std::byte* scratch = values ? nullptr : engine.scratch((n + 1) * call.in.count * esize);
      const void* mine = values ? call.in.data : scratch;
      void* all = values ? call.out.data : scratch + call.in.count * esize;
      check(MPI_Allgather(mine, each, type, all, each, type, g.comm), what + ": MPI_Allgather");
      break;
    }
    case platform::Collective::broadcast: {
      void* data = values ? call.in.data : engine.scratch(call.in.count * esize);
      check(MPI_Bcast(data, as_count(call.in.count, call), type, call.root, g.comm), what + ": MPI_Bcast");
      break;
    }
  }
}

// The whole life of one collective on the progress thread; never throws.
void run_collective(MpiEngine& engine, const GroupState& g, Call& call) {
  Status outcome = Status::success();
  double start = 0.0;
  try {
    for (const platform::Pending& p : call.after) {
      if (!p.valid()) continue;
      const Status s = p.status();
      if (!s.ok() && outcome.ok())
        outcome = Status(s.code(), std::string(platform::to_string(call.collective)) + " " + call.name +
                                       ": an input of the collective failed: " + s.reason());
    }
    const Header mine = header_of(call, !outcome.ok());
    std::vector<Header> all(static_cast<std::size_t>(g.size), mine);
    if (g.size > 1)
      check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                          static_cast<int>(mine.size()), MPI_INT64_T, g.comm),
            std::string(platform::to_string(call.collective)) + " " + call.name + ": MPI_Allgather of the headers");
    start = call.clock != nullptr ? call.clock->now() : 0.0;
    for (std::size_t r = 1; r < all.size() && outcome.ok(); ++r)
      if (!std::equal(all[r].begin(), all[r].begin() + kFailed, all[0].begin()))
        outcome = Status(StatusCode::invalid_argument, "collective " + call.name + ": the members' calls differ (rank 0 called " +
                                                           describe(all[0]) + ", rank " + std::to_string(r) +
                                                           " called " + describe(all[r]) + ")");
    for (std::size_t r = 0; r < all.size() && outcome.ok(); ++r)
      if (all[r][kFailed] != 0)
        outcome = Status(StatusCode::failed, std::string(platform::to_string(call.collective)) + " " + call.name +
                                                 ": an input of the collective failed on group rank " +
                                                 std::to_string(r));
    if (outcome.ok()) {
      if (g.size > 1) {
        exchange(engine, g, call);
      } else if (!call.in.bytes_only()) {  // one member: still the reference arithmetic (-0 + 0 = +0)
        const platform::CommBuffer ins[] = {call.in}, outs[] = {call.out};
        platform::combine_values(call.collective, call.op, call.root, ins, outs);
      }
    }
  } catch (const std::exception& e) {
    outcome = Status(StatusCode::failed, e.what());
  }
  if (call.sink != nullptr && call.sink->recording(call.tag.step)) {
    try {
      platform::Activity a;
      a.track = platform::comm_track(engine.world_rank);
      a.label = call.label.empty() ? std::string(platform::to_string(call.collective)) : call.label;
      a.tag = call.tag;
      const auto bytes = call.collective == platform::Collective::all_gather ? call.out.bytes() : call.in.bytes();
      a.cost = platform::Cost{platform::WorkKind::other, 0.0, static_cast<double>(bytes), 0};
      a.start = start;
      a.end = call.clock->now();
      a.ok = outcome.ok();
      call.sink->record(std::move(a));
    } catch (...) {  // a sink that cannot record must not leave the Pending unfinished
    }
  }
  call.promise.fulfil(std::move(outcome));
}

class MpiGroup final : public platform::CheckedCommGroup {
 public:
  MpiGroup(std::shared_ptr<MpiEngine> engine, GroupState state, std::string id)
      : engine_(std::move(engine)), state_(std::make_shared<GroupState>(std::move(state))), id_(std::move(id)) {}
  ~MpiGroup() override {
    // After the calls already posted (they hold the state); on this thread once the comm is gone.
    engine_->post([state = state_] {
      if (state->comm != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&state->comm);
    });
  }
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  int rank() const noexcept override { return state_->rank; }
  int size() const noexcept override { return state_->size; }
  int world_rank(int group_rank) const override {
    if (group_rank < 0 || group_rank >= size())
      throw std::out_of_range("MpiGroup::world_rank: no group rank " + std::to_string(group_rank) +
                              " in a group of " + std::to_string(size()));
    return state_->world_ranks[static_cast<std::size_t>(group_rank)];
  }

  // MPI_Comm_split on the progress thread, after every call issued before; the caller waits.
  std::unique_ptr<platform::CommGroup> split(int colour, int key) override {
    const std::string name = id_ + "/" + std::to_string(splits_++) + ":" + std::to_string(colour);
    std::promise<GroupState> made;
    std::future<GroupState> result = made.get_future();
    engine_->post([state = state_, world_rank = engine_->world_rank, colour, key, &made] {
      try {
        GroupState g;
        check(MPI_Comm_split(state->comm, colour < 0 ? MPI_UNDEFINED : colour, key, &g.comm), "split: MPI_Comm_split");
        if (g.comm != MPI_COMM_NULL) {
          check(MPI_Comm_rank(g.comm, &g.rank), "split: MPI_Comm_rank");
          check(MPI_Comm_size(g.comm, &g.size), "split: MPI_Comm_size");
          g.world_ranks.resize(static_cast<std::size_t>(g.size));
          check(MPI_Allgather(&world_rank, 1, MPI_INT, g.world_ranks.data(), 1, MPI_INT, g.comm),
                "split: MPI_Allgather of the world ranks");
        }
        made.set_value(std::move(g));
      } catch (...) {
        made.set_exception(std::current_exception());
      }
    });
    GroupState g = result.get();
    if (g.comm == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiGroup>(engine_, std::move(g), name);
  }

 private:
  platform::Pending start(const platform::CollectiveCall& c, platform::CollectiveOptions options) override {
    auto [promise, pending] = engine_->board.make();
    auto call = std::make_shared<Call>();
    static_cast<platform::CollectiveCall&>(*call) = c;
    call->after = std::move(options.after);
    call->promise = std::move(promise);
    call->name = id_ + "#" + std::to_string(collectives_++);
    call->label = std::move(options.label);
    call->tag = options.tag;
    call->sink = engine_->sink;
    call->clock = engine_->clock;
    engine_->post([engine = engine_.get(), state = state_, call] { run_collective(*engine, *state, *call); });
    return std::move(pending);
  }

  std::shared_ptr<MpiEngine> engine_;
  std::shared_ptr<GroupState> state_;  // shared with posted calls: the group may go first
  std::string id_;
  std::int64_t collectives_ = 0;
  std::int64_t splits_ = 0;
};

}  // namespace

// ---- MpiComm ------------------------------------------------------------------------------

MpiComm::MpiComm(MpiSession& session, MpiCommOptions options) : session_(session) {
  if (session_.live_comms_ > 0 && session_.provided_ < MPI_THREAD_MULTIPLE)
    throw std::logic_error("MpiComm: another MpiComm is alive and the MpiSession is serialized "
                           "(create it with multiple_comms for several comms)");
  if (options.ranks_per_node < 0)
    throw std::invalid_argument("MpiComm: ranks_per_node must be 0 (detect) or positive, got " +
                                std::to_string(options.ranks_per_node));
  GroupState world;
  world.rank = session_.rank_;
  world.size = session_.size_;
  world.world_ranks.resize(static_cast<std::size_t>(world.size));
  for (int r = 0; r < world.size; ++r) world.world_ranks[static_cast<std::size_t>(r)] = r;
  // Setup runs here, before the progress thread exists: MPI is never called by two threads.
  check(MPI_Comm_dup(MPI_COMM_WORLD, &world.comm), "MpiComm: MPI_Comm_dup");
  try {
    node_of_.resize(static_cast<std::size_t>(world.size));
    if (options.ranks_per_node > 0) {
      for (int r = 0; r < world.size; ++r) node_of_[static_cast<std::size_t>(r)] = r / options.ranks_per_node;
    } else {
      // The node's first world rank names it; nodes are numbered in the order of those.
      MPI_Comm shared = MPI_COMM_NULL;
      check(MPI_Comm_split_type(world.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared),
            "MpiComm: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
      int first = world.rank;
      const int bcast = MPI_Bcast(&first, 1, MPI_INT, 0, shared);
      MPI_Comm_free(&shared);
      check(bcast, "MpiComm: MPI_Bcast of the node's first rank");
      std::vector<int> firsts(static_cast<std::size_t>(world.size));
      check(MPI_Allgather(&first, 1, MPI_INT, firsts.data(), 1, MPI_INT, world.comm),
            "MpiComm: MPI_Allgather of the nodes' first ranks");
      std::vector<int> distinct = firsts;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      for (std::size_t r = 0; r < firsts.size(); ++r)
        node_of_[r] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), firsts[r]) - distinct.begin());
    }
    engine_ = std::make_shared<detail::MpiEngine>(world.rank, options.clock != nullptr ? *options.clock : own_clock_);
  } catch (...) {
    MPI_Comm_free(&world.comm);
    throw;
  }
  engine_->sink = options.activities;
  world_ = std::make_unique<MpiGroup>(engine_, std::move(world), "world");
  ++session_.live_comms_;
}

MpiComm::~MpiComm() {
  engine_->stop();  // every call issued so far runs first
  --session_.live_comms_;
}

int MpiComm::node_of(int world_rank) const {
  if (world_rank < 0 || static_cast<std::size_t>(world_rank) >= node_of_.size())
    throw std::out_of_range("MpiComm::node_of: no rank " + std::to_string(world_rank) + " in a world of " +
                            std::to_string(node_of_.size()));
  return node_of_[static_cast<std::size_t>(world_rank)];
}

void MpiComm::record(platform::ActivitySink* sink, const platform::Clock* clock) {
  engine_->sink = sink;
  engine_->clock = clock != nullptr ? clock : &own_clock_;
}

}  // namespace asteria::real

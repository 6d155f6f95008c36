#include "core/real/nccl/nccl_comm.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/real/mpi/mpi_comm.hpp"
#include "core/real/nccl/nccl_engine.hpp"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "NcclComm needs NCCL 2.18 or newer (ncclCommSplit)"
#endif

namespace asteria::real {

namespace {

using detail::check_cuda;
using detail::check_nccl;
using detail::cuda_words;
using detail::InFlight;
using detail::NcclCall;
using detail::NcclEngine;
using detail::NcclGroupState;
using detail::nccl_words;

// What the members compare before moving data (check_calls): MpiComm's header.
using platform::describe;
using platform::header_of;
using Header = platform::CallHeader;
static_assert(sizeof(Header) == NcclEngine::kHeaderBytes);
constexpr std::size_t kFailed = platform::kCallHeaderFailed;

ncclDataType_t nccl_type(platform::DType dtype) {
  return dtype == platform::DType::fp32 ? ncclFloat32 : ncclBfloat16;
}

// Records the call's activity and completes its Pending; never throws.
void finish(NcclEngine& engine, NcclCall& call, Status outcome, double start, double end) {
  if (call.sink != nullptr && call.sink->recording(call.tag.step)) {
    try {
      platform::Activity a;
      a.track = platform::comm_track(engine.world_rank);
      a.label = call.label.empty() ? std::string(platform::to_string(call.collective)) : call.label;
      a.tag = call.tag;
      const auto bytes = call.collective == platform::Collective::all_gather ? call.out.bytes() : call.in.bytes();
      a.cost = platform::Cost{platform::WorkKind::other, 0.0, static_cast<double>(bytes), 0};
      a.start = start;
      a.end = end;
      a.ok = outcome.ok();
      call.sink->record(std::move(a));
    } catch (...) {  // a sink that cannot record must not leave the Pending unfinished
    }
  }
  call.promise.fulfil(std::move(outcome));
}

// check_calls: every member learns every member's header. All members see the same headers, so
// all of them reach the same verdict.
Status exchange_headers(NcclEngine& engine, const std::shared_ptr<NcclGroupState>& g, const NcclCall& call,
                        bool failed) {
  const std::size_t bytes = NcclEngine::kHeaderBytes;
  const std::size_t n = static_cast<std::size_t>(g->size);
  const std::size_t mine = static_cast<std::size_t>(g->rank) * bytes;
  const std::string what = call.what() + ": the header exchange";
  std::byte* device_words = engine.meta.reserve(n * bytes, engine.stream, what);
  const Header header = header_of(call, failed);
  std::memcpy(engine.pinned + mine, header.data(), bytes);
  check_cuda(cudaMemcpyAsync(device_words + mine, engine.pinned + mine, bytes, cudaMemcpyHostToDevice, engine.stream),
             what + ": cudaMemcpyAsync");
  {
    std::lock_guard lock(engine.nccl_mutex);
    if (g->comm == nullptr) throw std::runtime_error(what + ": " + g->aborted);
    const ncclResult_t r = ncclAllGather(device_words + mine, device_words, 8, ncclInt64, g->comm, engine.stream);
    if (r != ncclSuccess) g->failed = true;
    check_nccl(r, g->comm, what + ": ncclAllGather");
  }
  check_cuda(cudaMemcpyAsync(engine.pinned, device_words, n * bytes, cudaMemcpyDeviceToHost, engine.stream),
             what + ": cudaMemcpyAsync");
  Status arrived = engine.await(g, what);
  if (!arrived.ok()) return arrived;
  std::vector<Header> all(n);
  std::memcpy(all.data(), engine.pinned, n * bytes);
  for (std::size_t r = 1; r < n; ++r)
    if (!std::equal(all[r].begin(), all[r].begin() + kFailed, all[0].begin()))
      return Status(StatusCode::invalid_argument, "collective " + call.name + ": the members' calls differ (rank 0 called " +
                                                      describe(all[0]) + ", rank " + std::to_string(r) + " called " +
                                                      describe(all[r]) + ")");
  for (std::size_t r = 0; r < n; ++r)
    if (all[r][kFailed] != 0)
      return Status(StatusCode::failed,
                    call.what() + ": an input of the collective failed on group rank " + std::to_string(r));
  return Status::success();
}

// Enqueues the NCCL call on the stream (the caller holds nccl_mutex).
ncclResult_t enqueue(const NcclCall& c, const void* in, void* out, ncclComm_t comm, cudaStream_t stream) {
  const ncclDataType_t type = nccl_type(c.in.dtype);
  const ncclRedOp_t op = c.op == platform::ReduceOp::sum ? ncclSum : ncclAvg;
  switch (c.collective) {
    case platform::Collective::all_reduce: return ncclAllReduce(in, out, c.in.count, type, op, comm, stream);
    case platform::Collective::reduce_scatter: return ncclReduceScatter(in, out, c.out.count, type, op, comm, stream);
    case platform::Collective::all_gather: return ncclAllGather(in, out, c.in.count, type, comm, stream);
    case platform::Collective::broadcast: return ncclBroadcast(in, out, c.in.count, type, c.root, comm, stream);
  }
  return ncclInvalidArgument;
}

// Records `event` on `stream`: empty, or what failed.
std::string record_event(cudaEvent_t event, cudaStream_t stream, const std::string& what) {
  const cudaError_t code = cudaEventRecord(event, stream);
  if (code == cudaSuccess) return {};
  cudaGetLastError();
  return what + ": cudaEventRecord: CUDA error " + cuda_words(code);
}

// The issue thread's part of one collective; never throws. A call that reaches the stream is
// completed by the completion thread, any other here.
void issue(NcclEngine& engine, const std::shared_ptr<NcclGroupState>& g, const std::shared_ptr<NcclCall>& call) {
  Status input = Status::success();
  double issued = 0.0;
  try {
    for (const platform::Pending& p : call->after) {
      if (!p.valid()) continue;
      const Status s = p.status();
      if (!s.ok() && input.ok())
        input = Status(s.code(), call->what() + ": an input of the collective failed: " + s.reason());
    }
    issued = call->clock->now();
    if (engine.check_calls && g->size > 1) {
      Status agreed = exchange_headers(engine, g, *call, !input.ok());
      if (!agreed.ok() || !input.ok()) {  // this rank's own failed input names its reason (as MpiComm)
        finish(engine, *call, input.ok() ? std::move(agreed) : std::move(input), issued, call->clock->now());
        return;
      }
    } else if (engine.check_calls && !input.ok()) {
      finish(engine, *call, std::move(input), issued, issued);  // as if exchanged: no data moves
      return;
    }
    // Bytes-only buffers: one scratch region, in place (NCCL's in-place forms of each call).
    auto on_scratch = [&engine, &g, &call](const void*& in, void*& out) {
      const std::size_t whole = std::max(call->in.bytes(), call->out.bytes());
      std::byte* s = engine.scratch.reserve(whole, engine.stream, call->what());
      const std::size_t mine = static_cast<std::size_t>(g->rank);
      in = s;
      out = s;
      if (call->collective == platform::Collective::reduce_scatter) out = s + mine * call->out.bytes();
      if (call->collective == platform::Collective::all_gather) in = s + mine * call->in.bytes();
    };
    const void* in = call->in.data;
    void* out = call->out.data;
    if (call->in.bytes_only()) on_scratch(in, out);
    InFlight entry;
    entry.group = g;
    entry.what = call->what();
    entry.begin = engine.take_event(entry.what);
    entry.end = engine.take_event(entry.what);
    // A failed input (without check_calls) runs anyway, to keep the other ranks in step.
    if (!input.ok())
      input = Status(input.code(), input.reason() + " (the NCCL call still ran with the buffer as it was, so that "
                                                    "the other ranks do not wait for this one)");
    {
      std::lock_guard lock(engine.nccl_mutex);
      std::string failure = g->comm == nullptr ? entry.what + ": " + g->aborted : "";
      if (failure.empty()) failure = record_event(entry.begin, engine.stream, entry.what);
      if (failure.empty()) {
        ncclResult_t r = enqueue(*call, in, out, g->comm, engine.stream);
        if (r != ncclSuccess) {
          const std::string refused = entry.what + ": NCCL error " + nccl_words(r, g->comm);
          // NCCL refused this rank's buffers (not device memory, say): the same call on scratch
          // memory keeps the other ranks from waiting for this one; this rank's call fails.
          if ((r == ncclInvalidArgument || r == ncclInvalidUsage) && !call->in.bytes_only()) {
            on_scratch(in, out);
            r = enqueue(*call, in, out, g->comm, engine.stream);
          }
          if (r != ncclSuccess) {
            g->failed = true;
            failure = refused;
          } else if (input.ok()) {
            input = Status(StatusCode::invalid_argument,
                           refused + " (the call ran on scratch memory instead, so that the other ranks do not wait "
                                     "for this one)");
          }
        }
      }
      if (failure.empty()) failure = record_event(entry.end, engine.stream, entry.what);
      if (!failure.empty()) {
        engine.give_event(entry.begin);
        engine.give_event(entry.end);
        throw std::runtime_error(failure);
      }
    }
    entry.done = [&engine, call, input, issued](Status ran, double device_seconds) {
      const double end = call->clock->now();
      finish(engine, *call, ran.ok() ? input : std::move(ran), std::max(issued, end - device_seconds), end);
    };
    engine.complete_later(std::move(entry));
  } catch (const std::exception& e) {
    finish(engine, *call, Status(StatusCode::failed, e.what()), issued, call->clock->now());
  }
}

// Throws std::invalid_argument unless `b` holds values in device memory of `device` (or is
// bytes only): NCCL reads and writes it from the GPU. Only on a thread whose current device is
// the comm's: asking CUDA elsewhere could create a context on another GPU; there NCCL's own
// check fails the collective instead.
void check_device_buffer(platform::Collective collective, const platform::CommBuffer& b, int device) {
  if (b.bytes_only() || b.count == 0) return;
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device) {
    cudaGetLastError();
    return;
  }
  const std::string what(platform::to_string(collective));
  cudaPointerAttributes attributes{};
  const cudaError_t e = cudaPointerGetAttributes(&attributes, b.data);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::invalid_argument(what + ": cannot tell where the buffer lives: CUDA error " + cuda_words(e));
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    throw std::invalid_argument(what + ": the buffer is host memory; NcclComm's buffers are device memory of device " +
                                std::to_string(device));
  if (attributes.type == cudaMemoryTypeDevice && attributes.device != device)
    throw std::invalid_argument(what + ": the buffer is memory of device " + std::to_string(attributes.device) +
                                ", the comm's device is " + std::to_string(device));
}

class NcclGroup final : public platform::CheckedCommGroup {
 public:
  NcclGroup(std::shared_ptr<NcclEngine> engine, std::shared_ptr<NcclGroupState> state, std::string id)
      : engine_(std::move(engine)), state_(std::move(state)), id_(std::move(id)) {}
  ~NcclGroup() override {
    // After the calls already posted, once none of them is in flight.
    engine_->post([engine = engine_.get(), state = state_] {
      engine->quiesce();
      std::lock_guard lock(engine->nccl_mutex);
      if (state->comm == nullptr) return;
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(state->comm, &async) != ncclSuccess || async != ncclSuccess) state->failed = true;
      if (state->failed) ncclCommAbort(state->comm);
      else ncclCommDestroy(state->comm);
      state->comm = nullptr;
    });
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int rank() const noexcept override { return state_->rank; }
  int size() const noexcept override { return state_->size; }
  int world_rank(int group_rank) const override {
    if (group_rank < 0 || group_rank >= size())
      throw std::out_of_range("NcclGroup::world_rank: no group rank " + std::to_string(group_rank) +
                              " in a group of " + std::to_string(size()));
    return state_->world_ranks[static_cast<std::size_t>(group_rank)];
  }

  // ncclCommSplit on the issue thread once every call issued before has completed; the caller
  // waits. The members' world ranks travel over the new communicator.
  std::unique_ptr<platform::CommGroup> split(int colour, int key) override {
    const std::string name = id_ + "/" + std::to_string(splits_++) + ":" + std::to_string(colour);
    NcclEngine& engine = *engine_;
    std::shared_ptr<NcclGroupState> made = engine.run([&engine, parent = state_, colour, key, name] {
      const std::string what = "split " + name;
      engine.quiesce();
      auto g = std::make_shared<NcclGroupState>();
      {
        std::lock_guard lock(engine.nccl_mutex);
        if (parent->comm == nullptr) throw std::runtime_error(what + ": " + parent->aborted);
        check_nccl(ncclCommSplit(parent->comm, colour < 0 ? NCCL_SPLIT_NOCOLOR : colour, key, &g->comm, nullptr),
                   parent->comm, what + ": ncclCommSplit");
      }
      if (g->comm == nullptr) return g;
      try {
        check_nccl(ncclCommUserRank(g->comm, &g->rank), g->comm, what + ": ncclCommUserRank");
        check_nccl(ncclCommCount(g->comm, &g->size), g->comm, what + ": ncclCommCount");
        const std::size_t n = static_cast<std::size_t>(g->size);
        const std::size_t mine = static_cast<std::size_t>(g->rank) * sizeof(std::int32_t);
        std::byte* words = engine.meta.reserve(n * sizeof(std::int32_t), engine.stream, what);
        const std::int32_t me = engine.world_rank;
        std::memcpy(engine.pinned + mine, &me, sizeof me);
        check_cuda(cudaMemcpyAsync(words + mine, engine.pinned + mine, sizeof me, cudaMemcpyHostToDevice,
                                   engine.stream),
                   what + ": cudaMemcpyAsync");
        check_nccl(ncclAllGather(words + mine, words, 1, ncclInt32, g->comm, engine.stream), g->comm,
                   what + ": ncclAllGather of the world ranks");
        check_cuda(cudaMemcpyAsync(engine.pinned, words, n * sizeof(std::int32_t), cudaMemcpyDeviceToHost, engine.stream),
                   what + ": cudaMemcpyAsync");
        const Status arrived = engine.await(g, what + ": the world ranks");
        if (!arrived.ok()) throw std::runtime_error(arrived.reason());
        g->world_ranks.resize(n);
        for (std::size_t r = 0; r < n; ++r) {
          std::int32_t w = 0;
          std::memcpy(&w, engine.pinned + r * sizeof w, sizeof w);
          g->world_ranks[r] = w;
        }
      } catch (...) {
        std::lock_guard lock(engine.nccl_mutex);
        if (g->comm != nullptr) ncclCommAbort(g->comm);
        g->comm = nullptr;
        throw;
      }
      return g;
    });
    if (made->comm == nullptr) return nullptr;
    return std::make_unique<NcclGroup>(engine_, std::move(made), name);
  }

 private:
  // The buffers must be this rank's device memory (where the calling thread can tell).
  void check_buffers(const platform::CollectiveCall& c) const override {
    check_device_buffer(c.collective, c.in, engine_->device);
    if (c.out.data != c.in.data) check_device_buffer(c.collective, c.out, engine_->device);
  }

  platform::Pending start(const platform::CollectiveCall& c, platform::CollectiveOptions options) override {
    auto [promise, pending] = engine_->board.make();
    auto call = std::make_shared<NcclCall>();
    static_cast<platform::CollectiveCall&>(*call) = c;
    call->after = std::move(options.after);
    call->promise = std::move(promise);
    call->name = id_ + "#" + std::to_string(collectives_++);
    call->label = std::move(options.label);
    call->tag = options.tag;
    call->sink = engine_->sink;
    call->clock = engine_->clock;
    engine_->post([engine = engine_.get(), state = state_, call] { issue(*engine, state, call); });
    return std::move(pending);
  }

  std::shared_ptr<NcclEngine> engine_;
  std::shared_ptr<NcclGroupState> state_;  // shared with posted calls: the group may go first
  std::string id_;
  std::int64_t collectives_ = 0;
  std::int64_t splits_ = 0;
};

}  // namespace

// ---- NcclComm ------------------------------------------------------------------------------

NcclComm::NcclComm(MpiComm& bootstrap, NcclCommOptions options) {
  platform::CommGroup& boot = bootstrap.world();
  const int me = boot.rank();
  const int n = boot.size();
  node_of_.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) node_of_[static_cast<std::size_t>(r)] = bootstrap.node_of(r);

  // This rank's part first; the ranks then agree that every one of them can go on, so that a
  // rank without a device fails every rank instead of leaving them waiting in NCCL's setup.
  std::string problem;
  bool bad_argument = false;
  ncclUniqueId id{};
  try {
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "NcclComm: cudaGetDeviceCount");
    if (devices == 0) throw std::runtime_error("NcclComm: no CUDA device");
    if (options.device >= devices)
      throw std::invalid_argument("NcclComm: no device " + std::to_string(options.device) + " (this rank sees " +
                                  std::to_string(devices) + ")");
    device_ = options.device;
    if (device_ < 0) {
      int index = 0;  // among the ranks of this node
      for (int r = 0; r < me; ++r) index += node_of_[static_cast<std::size_t>(r)] == node_of_[static_cast<std::size_t>(me)];
      device_ = index % devices;
    }
    engine_ = std::make_shared<detail::NcclEngine>(me, device_, options.check_calls);
    engine_->run([engine = engine_.get(), n] { engine->setup(n); });
    if (me == 0) check_nccl(ncclGetUniqueId(&id), nullptr, "NcclComm: ncclGetUniqueId");
  } catch (const std::invalid_argument& e) {
    problem = e.what();
    bad_argument = true;
  } catch (const std::exception& e) {
    problem = e.what();
  }
  float mine = problem.empty() ? 0.0f : 1.0f;
  std::vector<float> failed(static_cast<std::size_t>(n));
  const Status gathered =
      boot.all_gather(platform::CommBuffer::of({&mine, 1}), platform::CommBuffer::of(failed)).status();
  if (!gathered.ok()) throw std::runtime_error("NcclComm: the bootstrap's all_gather failed: " + gathered.reason());
  std::string failing;
  for (int r = 0; r < n; ++r)
    if (failed[static_cast<std::size_t>(r)] != 0.0f) failing += (failing.empty() ? "" : ", ") + std::to_string(r);
  if (!failing.empty()) {
    const std::string text = problem.empty() ? "NcclComm: cannot start on rank " + failing
                                             : problem + " (cannot start on rank " + failing + ")";
    if (bad_argument) throw std::invalid_argument(text);
    throw std::runtime_error(text);
  }

  // Rank 0's id, as 64 two-byte words (MPI moves them as integers: bit for bit).
  static_assert(sizeof(ncclUniqueId) % sizeof(std::uint16_t) == 0);
  std::array<std::uint16_t, sizeof(ncclUniqueId) / sizeof(std::uint16_t)> words{};
  std::memcpy(words.data(), &id, sizeof id);
  const Status sent = boot.broadcast(platform::CommBuffer::of_bf16(words), 0).status();
  if (!sent.ok()) throw std::runtime_error("NcclComm: the bootstrap's broadcast of the NCCL id failed: " + sent.reason());
  std::memcpy(&id, words.data(), sizeof id);

  auto world = std::make_shared<NcclGroupState>();
  world->rank = me;
  world->size = n;
  world->world_ranks.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) world->world_ranks[static_cast<std::size_t>(r)] = r;
  engine_->run([&world, &id, n, me] {
    check_nccl(ncclCommInitRank(&world->comm, n, id, me), nullptr, "NcclComm: ncclCommInitRank");
  });
  engine_->sink = options.activities;
  if (options.clock != nullptr) engine_->clock = options.clock;
  world_ = std::make_unique<NcclGroup>(engine_, std::move(world), "world");
}

NcclComm::~NcclComm() {
  world_.reset();       // posts the world's destruction after every call issued so far
  engine_->run([] {});  // and waits for it; split groups still alive keep the engine
}

int NcclComm::node_of(int world_rank) const {
  if (world_rank < 0 || static_cast<std::size_t>(world_rank) >= node_of_.size())
    throw std::out_of_range("NcclComm::node_of: no rank " + std::to_string(world_rank) + " in a world of " +
                            std::to_string(node_of_.size()));
  return node_of_[static_cast<std::size_t>(world_rank)];
}

void NcclComm::record(platform::ActivitySink* sink, const platform::Clock* clock) {
  engine_->sink = sink;
  engine_->clock = clock != nullptr ? clock : &engine_->own_clock;
}

int NcclComm::nccl_version() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return 0;
  return version;
}

}  // namespace asteria::real

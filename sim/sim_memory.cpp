#include "sim/sim_memory.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace asteria::sim {

namespace sg4 = simgrid::s4u;
using platform::Region;
using platform::Tier;

namespace {
std::size_t index_of(Tier tier) noexcept { return static_cast<std::size_t>(tier); }
}  // namespace

// Budgets and residency of the three tiers. Outlives the SimMemory when a storage held by a
// copy actor is freed late (actors are destroyed with the engine): then it only counts.
struct SimMemory::Accounts {
  std::array<platform::TierUsage, platform::kTierCount> tiers{};
  std::size_t unified = 0;
  std::size_t pool_peak = 0;  // the high-water mark of device + host
  platform::ActivitySink* activities = nullptr;  // null once the SimMemory is gone (or not recording)
  std::array<std::string, platform::kTierCount> counter_names;

  bool try_reserve(Tier tier, std::size_t bytes) {
    platform::TierUsage& t = tiers[index_of(tier)];
    if (bytes > t.capacity - t.resident) return false;  // resident <= capacity always holds
    if (unified != 0 && tier != Tier::nvme) {
      const std::size_t shared = tiers[index_of(Tier::device)].resident + tiers[index_of(Tier::host)].resident;
      if (bytes > unified - shared) return false;
    }
    t.resident += bytes;
    t.peak_resident = std::max(t.peak_resident, t.resident);
    if (tier != Tier::nvme)
      pool_peak = std::max(pool_peak, tiers[index_of(Tier::device)].resident + tiers[index_of(Tier::host)].resident);
    sample(tier);
    return true;
  }
  void give_back(Tier tier, std::size_t bytes) {
    tiers[index_of(tier)].resident -= bytes;
    sample(tier);
  }
  void sample(Tier tier) {
    if (activities != nullptr)
      activities->counter(counter_names[index_of(tier)], sg4::Engine::get_clock(),
                          static_cast<double>(tiers[index_of(tier)].resident));
  }
};

struct SimMemory::Storage {
  std::shared_ptr<Accounts> accounts;
  Tier tier = Tier::host;
  std::uint64_t id = 0;
  std::size_t bytes = 0;
  std::string label;
  std::vector<std::byte> data;  // data-true only
  bool reservation = false;     // counts bytes, holds none (Memory::reserve)

  Storage(std::shared_ptr<Accounts> a, Tier t, std::uint64_t i, std::size_t b, std::string l)
      : accounts(std::move(a)), tier(t), id(i), bytes(b), label(std::move(l)) {}
  ~Storage() { accounts->give_back(tier, bytes); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

SimMemory::SimMemory(MemorySpec spec, platform::CompletionBoard& board, Recorder& recorder)
    : spec_(std::move(spec)), board_(board), recorder_(recorder),
      disk_track_(platform::disk_track(spec_.resources.unit)), accounts_(std::make_shared<Accounts>()) {
  accounts_->tiers[index_of(Tier::device)].capacity = spec_.budgets.device;
  accounts_->tiers[index_of(Tier::host)].capacity = spec_.budgets.host;
  accounts_->tiers[index_of(Tier::nvme)].capacity = spec_.budgets.nvme;
  accounts_->unified = spec_.budgets.unified;
  accounts_->activities = spec_.activities;
  for (Tier tier : {Tier::device, Tier::host, Tier::nvme})
    accounts_->counter_names[index_of(tier)] = "gpu" + std::to_string(spec_.resources.unit) + " resident " +
                                               std::string(platform::to_string(tier)) + " bytes";
}

SimMemory::~SimMemory() {
  regions_.clear();
  accounts_->activities = nullptr;
}

platform::TierUsage SimMemory::usage(Tier tier) const { return accounts_->tiers[index_of(tier)]; }

std::optional<platform::TierUsage> SimMemory::shared_pool() const {
  if (accounts_->unified == 0) return std::nullopt;
  const platform::TierUsage& device = accounts_->tiers[index_of(Tier::device)];
  const platform::TierUsage& host = accounts_->tiers[index_of(Tier::host)];
  return platform::TierUsage{accounts_->unified, device.resident + host.resident, accounts_->pool_peak};
}

std::optional<Region> SimMemory::allocate(Tier tier, std::size_t bytes, std::string label) {
  if (!accounts_->try_reserve(tier, bytes)) return std::nullopt;
  auto storage = std::make_shared<Storage>(accounts_, tier, next_id_++, bytes, label);  // owns the reservation
  if (spec_.holds_data) {
    try {
      storage->data.resize(bytes);
    } catch (const std::bad_alloc&) {  // the machine ran out before the budget did: as full as a full budget
      return std::nullopt;
    }
  }
  Region region{tier, storage->id, bytes, std::move(label)};
  regions_.emplace(region.id, std::move(storage));
  return region;
}

std::optional<Region> SimMemory::reserve(Tier tier, std::size_t bytes, std::string label) {
  if (!accounts_->try_reserve(tier, bytes)) return std::nullopt;
  auto storage = std::make_shared<Storage>(accounts_, tier, next_id_++, bytes, label);  // owns the reservation
  storage->reservation = true;
  Region region{tier, storage->id, bytes, std::move(label)};
  regions_.emplace(region.id, std::move(storage));
  return region;
}

void SimMemory::release(Region& region) {
  if (!region.valid()) return;
  auto it = regions_.find(region.id);
  if (it == regions_.end()) throw std::logic_error("SimMemory::release: unknown region '" + region.label + "'");
  regions_.erase(it);
  region = {};
}

SimMemory::StoragePtr SimMemory::find(std::uint64_t id) const {
  auto it = regions_.find(id);
  return it == regions_.end() ? nullptr : it->second;
}

std::byte* SimMemory::host_address(const Region& region) {
  if (!spec_.holds_data || region.tier == Tier::nvme) return nullptr;
  StoragePtr storage = find(region.id);
  return storage && !storage->reservation ? storage->data.data() : nullptr;
}

struct SimMemory::CopyQueue {
  std::deque<std::shared_ptr<CopyJob>> jobs;
  // Idle engines sleep on `wake`; a copy wakes one only if one is idle, so a busy engine takes
  // the next queued copy without a SimGrid call.
  sg4::SemaphorePtr wake = sg4::Semaphore::create(0);
  int idle = 0;
};

platform::Pending SimMemory::copy(const Region& src, const Region& dst, const platform::OpTag& cause) {
  StoragePtr s = find(src.id);
  StoragePtr d = find(dst.id);
  if (!s || !d) throw std::logic_error("SimMemory::copy: unknown region '" + (s ? dst.label : src.label) + "'");
  if (s->reservation || d->reservation)
    throw std::logic_error("SimMemory::copy: region '" + (s->reservation ? src.label : dst.label) +
                           "' is a reservation and holds no bytes");
  const std::size_t bytes = std::min(s->bytes, d->bytes);
  if (s == d || bytes == 0) return platform::Pending::ready();
  const Tier from = s->tier;
  const Tier to = d->tier;
  // The job holds the regions until the copy ends, so a region released during the copy is
  // given back at its end.
  auto job = std::make_shared<CopyJob>(CopyJob{std::move(s), std::move(d), from, to, bytes, {}, {}, cause});
  if (spec_.activities != nullptr) job->name = job->src->label + " -> " + job->dst->label;  // only traces show it
  return enqueue(std::move(job));
}

platform::Pending SimMemory::transfer(Tier from, Tier to, std::size_t bytes, std::string label,
                                      const platform::OpTag& cause) {
  if (bytes == 0) return platform::Pending::ready();
  auto job = std::make_shared<CopyJob>(CopyJob{nullptr, nullptr, from, to, bytes, std::move(label), {}, cause});
  return enqueue(std::move(job));
}

platform::Pending SimMemory::enqueue(std::shared_ptr<CopyJob> job) {
  auto [promise, pending] = board_.make();
  job->promise = std::move(promise);
  start_copy_engines();
  copies_->jobs.push_back(std::move(job));
  if (copies_->idle > 0) {
    --copies_->idle;
    copies_->wake->release();
  }
  return pending;
}

void SimMemory::start_copy_engines() {
  if (copies_) return;
  copies_ = std::make_shared<CopyQueue>();
  for (int engine = 0; engine < kCopyEngines; ++engine) spawn_copy_engine(engine);
}

// SimGrid 3.32 keeps every Comm::sendto a copy engine issued in that actor's list of
// activities, and walks the whole list each time one of them ends: per copy, work grows with
// the copies the engine made before. So an engine retires after kCopiesPerEngine copies and
// hands its place to a fresh actor, whose list starts empty (and the old comms are freed).
void SimMemory::spawn_copy_engine(int engine) {
  sg4::Actor::create("copy engine " + std::to_string(engine), spec_.resources.cpu, [this, engine, queue = copies_] {
    sg4::Actor::self()->daemonize();  // the simulation ends when the mains do, copies in flight or not
    for (int done = 0; done < kCopiesPerEngine; ++done) {
      while (queue->jobs.empty()) {  // woken, but a busy engine may have taken it: sleep again
        ++queue->idle;
        queue->wake->acquire();
      }
      // Actors switch only inside SimGrid calls: nothing runs between the check and the pop.
      std::shared_ptr<CopyJob> job = std::move(queue->jobs.front());
      queue->jobs.pop_front();
      {
        const StoragePtr from = std::move(job->src);
        const StoragePtr to = std::move(job->dst);
        move(*job, from.get(), to.get());
      }
      job->promise.fulfil();
    }
    spawn_copy_engine(engine);
  });
}

void SimMemory::move(const CopyJob& job, const Storage* src, Storage* dst) {
  const UnitResources& r = spec_.resources;
  const Tier from = job.from;
  const Tier to = job.to;
  if (from == Tier::nvme) disk_io(false, job);
  if (from == Tier::device && to == Tier::device) cross_link(r.gpu, r.gpu, *r.device_memory, job);
  if (from == Tier::host && to == Tier::host) cross_link(r.cpu, r.cpu, *r.host_memory, job);
  if (from == Tier::device && to != Tier::device) cross_link(r.gpu, r.cpu, *r.d2h, job);
  if (from != Tier::device && to == Tier::device) cross_link(r.cpu, r.gpu, *r.h2d, job);
  if (to == Tier::nvme) disk_io(true, job);
  if (spec_.holds_data && src != nullptr && dst != nullptr) std::memcpy(dst->data.data(), src->data.data(), job.bytes);
}

void SimMemory::record(std::string track, const CopyJob& job, platform::ActivityRole role, double start) const {
  if (spec_.activities == nullptr) return;
  platform::OpTag tag = job.cause;
  tag.role = role;
  spec_.activities->record({std::move(track), job.name, tag,
                            platform::Cost{platform::WorkKind::other, 0.0, static_cast<double>(job.bytes), 0}, start,
                            sg4::Engine::get_clock(), true});
}

void SimMemory::cross_link(sg4::Host* from, sg4::Host* to, const sg4::Link& link, const CopyJob& job) {
  const double start = sg4::Engine::get_clock();
  if (spec_.copies_use_cores) {
    // The time the link would take alone, as work of one core of the CPU host (topology.hpp: a
    // core runs kSpeed per second).
    const double seconds = link.get_latency() + static_cast<double>(job.bytes) / link.get_bandwidth();
    const CoreLoad::Busy busy(spec_.cores, 1);
    sg4::ExecPtr exec = sg4::this_actor::exec_init(seconds * kSpeed);
    exec->set_host(spec_.resources.cpu);
    exec->start();
    exec->wait();
    ++recorder_.counts().executions;
  } else {
    sg4::Comm::sendto(from, to, job.bytes);
    ++recorder_.counts().communications;
  }
  record("link " + link.get_name(), job, platform::ActivityRole::transfer, start);
}

void SimMemory::disk_io(bool write, const CopyJob& job) {
  const double start = sg4::Engine::get_clock();
  if (spec_.nvme_latency > 0.0) sg4::this_actor::sleep_for(spec_.nvme_latency);
  if (write) spec_.resources.nvme->write(job.bytes);
  else spec_.resources.nvme->read(job.bytes);
  ++recorder_.counts().ios;
  record(disk_track_, job, platform::ActivityRole::io, start);
}

}  // namespace asteria::sim

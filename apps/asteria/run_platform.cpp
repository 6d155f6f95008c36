#include "apps/asteria/run_platform.hpp"

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/real/real_platform.hpp"
#if ASTERIA_HAVE_NVME_STORE
#include "core/real/nvme/nvme_store.hpp"
#include "core/real/tier_backend.hpp"
#endif

namespace asteria::cli {

struct RunPlatform::Nvme {
#if ASTERIA_HAVE_NVME_STORE
  Nvme(const std::filesystem::path& dir, std::size_t budget)
      : store(dir, [budget] {
          real::NvmeOptions o;
          o.capacity_bytes = budget;
          return o;
        }()),
        tier(store) {}
  real::NvmeStore store;
  real::NvmeStoreTier<real::NvmeStore> tier;
#endif
};

RunPlatform::RunPlatform(const RunConfig& spec, const DeviceTime& device, platform::ActivitySink* activities,
                         platform::Comm* comm, platform::Comm* side_comm, bool use_gpu) {
  const auto& seconds = device.seconds;
  if (spec.time == platform::TimeSource::simulated) {
    if (comm != nullptr)
      throw InputError("command line", "--time", "measured or modelled for data-parallel ranks (the fake backend is one process)");
    platform::fake::FakeOptions o;
    o.device_capacity = spec.device_budget;
    o.host_capacity = spec.host_budget;
    o.nvme_capacity = spec.nvme_budget;
    o.holds_data = spec.numerics != platform::Numerics::shapes;  // data-free: sizes only
    host_workers_ = spec.host_workers > 0 ? spec.host_workers : 1;  // deterministic whatever the machine
    o.host_workers = host_workers_;
    o.device_duration = [seconds](const platform::Work& w) { return platform::total_seconds(w.cost, seconds); };
    const double host_rate = device.fake_host_flops;
    o.host_duration = [host_rate](const platform::Work& w) { return w.cost.flops() / host_rate; };
    o.activities = activities;
    platform_ = std::make_unique<platform::fake::FakePlatform>(std::move(o));
    description_ = "fake backend (simulated time, one thread): " + device.description + ", " +
                   std::to_string(host_workers_) +
                   " host worker(s) at " + significant(host_rate / 1e9, 4) + " GFLOP/s, instant copies";
    return;
  }
  real::RealPlatformOptions o;
  o.memory.budgets.device = spec.device_budget;
  o.memory.budgets.host = spec.host_budget;
  o.memory.budgets.nvme = spec.nvme_budget;
  host_workers_ = spec.host_workers > 0 ? spec.host_workers : real::default_host_threads();
  o.host_threads = host_workers_;
  o.time = spec.time;
  o.device_seconds = seconds;
  o.gpu = use_gpu ? real::GpuUse::if_present : real::GpuUse::never;
  o.activities = activities;
  o.comm = comm;
  o.side_comm = side_comm;
  // A straggler: this rank's host workers run slower (a rank out of range slows nobody).
  if (comm != nullptr && spec.straggler.rank == comm->rank()) o.host_slowdown = spec.straggler.factor;
  std::string nvme = "no NVMe tier";
#if ASTERIA_HAVE_NVME_STORE
  if (spec.nvme_dir) {
    nvme_ = std::make_unique<Nvme>(*spec.nvme_dir, spec.nvme_budget);
    o.nvme = &nvme_->tier;
    nvme = "NVMe tier in " + spec.nvme_dir->string() + " (" + nvme_->store.mechanism() + ")";
  }
#endif
  auto real_platform = std::make_unique<real::RealPlatform>(o);
  const real::Accelerator* accelerator = real_platform->accelerator();
  platform_ = std::move(real_platform);
  std::string device_work;
  if (spec.time != platform::TimeSource::measured)
    device_work = "emulated " + device.description;
  else if (accelerator != nullptr)
    device_work = "device work on " + std::string(accelerator->name()) + ", completed at its events, measured";
  else
    device_work = "device work on a CPU thread, measured";
  const std::string device_tier =
      accelerator != nullptr ? "device tier in " + std::string(accelerator->name()) +
                                   " memory (optimizer math there; host-placed blocks on the host workers)"
                             : std::string("device tier in host RAM");
  // Where refreshes run, and who solves their factorizations there.
  const linalg::SymmetricSolver* device_solver = platform_->math(platform::Tier::device).solver();
  const std::string refreshes =
      spec.refresh_on == runtime::RefreshSite::device
          ? "refreshes on the device stream (" + (device_solver != nullptr ? device_solver->name() : std::string("host LAPACK")) + ")"
          : "refreshes on the host workers (host LAPACK)";
  description_ = "real backend (wall clock): " + device_work + ", " + std::to_string(host_workers_) +
                 " host worker thread(s), " + refreshes + ", " + device_tier + ", " + nvme;
}

RunPlatform::~RunPlatform() { platform_.reset(); }  // before the NVMe store it uses

}  // namespace asteria::cli

#include "core/real/energy_counters.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <system_error>

namespace asteria::real {

namespace {

bool read_number(const std::filesystem::path& file, double& out) {
  std::ifstream in(file);
  return static_cast<bool>(in >> out);
}

std::string read_word(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

// NVIDIA's management library, opened at run time: its total-energy counter per GPU (mJ since
// the driver loaded, Volta and later).
struct EnergyCounters::Nvml {
  using Init = int (*)();
  using Count = int (*)(unsigned*);
  using Handle = int (*)(unsigned, void**);
  using Energy = int (*)(void*, unsigned long long*);
  using Shutdown = int (*)();
  void* library = nullptr;
  Shutdown shutdown = nullptr;
  Handle handle = nullptr;
  Energy energy = nullptr;
  std::vector<void*> devices;

  Nvml() {
    library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return;
    const auto init = reinterpret_cast<Init>(dlsym(library, "nvmlInit_v2"));
    const auto count = reinterpret_cast<Count>(dlsym(library, "nvmlDeviceGetCount_v2"));
    handle = reinterpret_cast<Handle>(dlsym(library, "nvmlDeviceGetHandleByIndex_v2"));
    energy = reinterpret_cast<Energy>(dlsym(library, "nvmlDeviceGetTotalEnergyConsumption"));
    shutdown = reinterpret_cast<Shutdown>(dlsym(library, "nvmlShutdown"));
    unsigned n = 0;
    if (init == nullptr || count == nullptr || handle == nullptr || energy == nullptr || init() != 0) return;
    if (count(&n) != 0) return;
    for (unsigned i = 0; i < n; ++i) {
      void* device = nullptr;
      unsigned long long mj = 0;
      if (handle(i, &device) == 0 && energy(device, &mj) == 0) devices.push_back(device);
    }
  }
  ~Nvml() {
    if (shutdown != nullptr) shutdown();
    if (library != nullptr) dlclose(library);
  }
  std::uint64_t millijoules(std::size_t i) const {
    unsigned long long mj = 0;
    return energy(devices[i], &mj) == 0 ? mj : 0;
  }
};

EnergyCounters::EnergyCounters(std::filesystem::path powercap_root, bool nvml) {
  std::error_code ec;
  const std::regex package_zone(R"(intel-rapl:\d+)");
  std::vector<std::filesystem::path> zones;
  for (const auto& entry : std::filesystem::directory_iterator(powercap_root, ec))
    if (std::regex_match(entry.path().filename().string(), package_zone)) zones.push_back(entry.path());
  std::sort(zones.begin(), zones.end());
  std::string unreadable;
  for (const std::filesystem::path& dir : zones) {
    RaplZone zone;
    zone.energy = dir / "energy_uj";
    zone.name = read_word(dir / "name");
    if (zone.name.empty()) zone.name = dir.filename().string();
    if (!read_number(zone.energy, zone.last_uj) || !read_number(dir / "max_energy_range_uj", zone.range_uj)) {
      unreadable += (unreadable.empty() ? "" : ", ") + zone.name;
      continue;
    }
    rapl_.push_back(std::move(zone));
  }
  if (nvml) {
    nvml_ = std::make_unique<Nvml>();
    nvml_devices_ = static_cast<unsigned>(nvml_->devices.size());
  }
  restart();

  std::string found;
  for (const RaplZone& zone : rapl_) found += (found.empty() ? "RAPL " : ", ") + zone.name;
  if (nvml_devices_ > 0)
    found += (found.empty() ? "" : "; ") + std::string("NVML ") + std::to_string(nvml_devices_) +
             (nvml_devices_ == 1 ? " GPU" : " GPUs");
  if (!unreadable.empty()) found += (found.empty() ? "" : "; ") + std::string("RAPL ") + unreadable + " not readable here";
  description_ = found.empty() ? "no energy counter here (no RAPL zone under " + powercap_root.string() +
                                     (nvml ? ", no NVML GPU)" : ")")
                               : found;
}

EnergyCounters::~EnergyCounters() = default;

void EnergyCounters::read_rapl(RaplZone& zone) {
  double now = 0.0;
  if (!read_number(zone.energy, now)) return;
  // The counter wrapped at its range since the last read.
  zone.counted_uj += now >= zone.last_uj ? now - zone.last_uj : zone.range_uj - zone.last_uj + now;
  zone.last_uj = now;
}

void EnergyCounters::restart() {
  for (RaplZone& zone : rapl_) {
    read_rapl(zone);
    zone.counted_uj = 0.0;
  }
  nvml_start_mj_.clear();
  for (unsigned i = 0; i < nvml_devices_; ++i) nvml_start_mj_.push_back(nvml_->millijoules(i));
}

double EnergyCounters::joules() {
  double total = 0.0;
  for (RaplZone& zone : rapl_) {
    read_rapl(zone);
    total += zone.counted_uj * 1e-6;
  }
  // A failed read (0) or a driver reload would run the counter backwards: nothing is counted then.
  for (unsigned i = 0; i < nvml_devices_; ++i) {
    const std::uint64_t now = nvml_->millijoules(i);
    if (now >= nvml_start_mj_[i]) total += static_cast<double>(now - nvml_start_mj_[i]) * 1e-3;
  }
  return total;
}

}  // namespace asteria::real

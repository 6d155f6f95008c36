#pragma once
// The machine's own energy counters, for a real run's measured energy beside the modelled one
// (hwmodels/energy.hpp): the CPU packages' RAPL counters (Linux powercap,
// <root>/intel-rapl:<n>/energy_uj, which Intel and recent AMD kernels expose; sub-zones such as
// intel-rapl:0:0 are parts of a package and are left out), and each GPU's NVML total energy
// (libnvidia-ml, loaded at run time, so that nothing links it). A counter the machine lacks, or
// that this process may not read (RAPL is root-only on many systems), is left out, and
// description() says what was found.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace asteria::real {

class EnergyCounters {
 public:
  // `powercap_root`: where the powercap zones are; `nvml`: whether to look for NVIDIA's library.
  explicit EnergyCounters(std::filesystem::path powercap_root = "/sys/class/powercap", bool nvml = true);
  ~EnergyCounters();
  EnergyCounters(const EnergyCounters&) = delete;
  EnergyCounters& operator=(const EnergyCounters&) = delete;

  bool available() const noexcept { return !rapl_.empty() || nvml_devices_ > 0; }
  // "RAPL package-0, package-1; NVML 1 GPU", or why there is no counter.
  const std::string& description() const noexcept { return description_; }
  // Joules every counter together has counted since construction (or the last restart()), read
  // now. A RAPL counter wraps at its range: reading at least once per wrap (minutes at full
  // load) keeps the count exact.
  double joules();
  void restart();

 private:
  struct RaplZone {
    std::filesystem::path energy;  // energy_uj
    std::string name;
    double range_uj = 0.0;
    double last_uj = 0.0;
    double counted_uj = 0.0;  // since restart()
  };
  struct Nvml;
  void read_rapl(RaplZone& zone);

  std::vector<RaplZone> rapl_;
  std::unique_ptr<Nvml> nvml_;
  unsigned nvml_devices_ = 0;
  std::vector<std::uint64_t> nvml_start_mj_;
  std::string description_;
};

}  // namespace asteria::real

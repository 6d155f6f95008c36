#pragma once
// How long each resource of one unit worked over an interval: what a run's energy is computed
// from (hwmodels/energy.hpp). traces/busy_meter.hpp adds it up from the activities a backend
// reports.

namespace asteria::platform {

struct ResourceBusy {
  double device_s = 0.0;     // its device stream
  double host_core_s = 0.0;  // its host workers, core-seconds (each worker's own time, summed)
  double nvme_s = 0.0;       // its drive
  double network_s = 0.0;    // its collectives
  ResourceBusy& operator+=(const ResourceBusy& other) noexcept {
    device_s += other.device_s;
    host_core_s += other.host_core_s;
    nvme_s += other.nvme_s;
    network_s += other.network_s;
    return *this;
  }
};

}  // namespace asteria::platform

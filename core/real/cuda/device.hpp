#pragma once
// Whether a usable CUDA device is present. Machines with the toolkit but no GPU or no driver
// (CI) answer 0 devices instead of failing.
#include <string>

namespace asteria::real::cuda {

struct DeviceInfo {
  int count = 0;        // usable devices
  std::string name;     // of device 0, empty when count == 0
  std::string reason;   // why count is 0 (no driver, no device)
};

DeviceInfo query_devices();

}  // namespace asteria::real::cuda

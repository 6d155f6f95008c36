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

// The device CUDA work of the calling thread goes to (0 when none was chosen), and choosing it
// (std::runtime_error naming the device when CUDA refuses).
int current_device();
void use_device(int device);

}  // namespace asteria::real::cuda

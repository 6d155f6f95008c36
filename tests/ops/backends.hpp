#pragma once
// The backends the conformance harness runs every operation and every optimizer on: the CPU
// device once per instruction set this processor runs and once split over two threads, a staged
// backend that declines everything but the products (the core-side host fallback runs the rest),
// and the CUDA device when one is present. A backend the machine lacks is skipped, and says why.
#include <memory>
#include <string>
#include <vector>

#include "core/ops/device.hpp"
#include "core/ops/parallel.hpp"

namespace asteria::test {

struct Backend {
  std::unique_ptr<ops::ParallelRunner> runner;  // before the device, which uses it
  std::unique_ptr<ops::Device> device;
  std::string unavailable;  // why there is no device here (empty when there is)
  // Runs the CPU kernels and OpenBLAS (any instruction set, any threads, or through the host
  // fallback): an optimizer step gives the bits of the host's own step. Other backends (cuBLAS)
  // are held to the float64 reference within a tolerance.
  bool host_bits = true;
};

std::vector<std::string> backend_names();
Backend make_backend(const std::string& name);

}  // namespace asteria::test

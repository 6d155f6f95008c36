#pragma once
// The CPU backend: operands in host memory, products through BLAS, rules and reductions in loops
// vectorized for this processor (cpu_kernels.hpp), split over a ParallelRunner's threads when
// one is given. Operations run on the calling thread, in order, before the call returns.
#include <string>
#include <string_view>

#include "core/ops/cpu_kernels.hpp"
#include "core/ops/device.hpp"
#include "core/ops/parallel.hpp"

namespace asteria::ops {

class CpuDevice final : public Device {
 public:
  // `runner` (may be null: the calling thread alone) must outlive the device. `isa` must be one
  // this processor runs (std::invalid_argument otherwise); by default the widest.
  explicit CpuDevice(ParallelRunner* runner = nullptr, CpuIsa isa = detect_cpu_isa());

  std::string_view name() const noexcept override { return name_; }
  bool host_addressable() const noexcept override { return true; }
  CpuIsa isa() const noexcept { return context_.isa; }
  int threads() const noexcept { return context_.runner != nullptr ? context_.runner->width() : 1; }

 protected:
  void run(const Operation& op) override;
  void* allocate(std::size_t bytes) override;
  void release(void* data) noexcept override;
  void copy_from_host(const TensorRef& host, const TensorRef& on_device) override;
  void copy_to_host(const TensorRef& on_device, const TensorRef& host) override;

 private:
  CpuContext context_;
  std::string name_;
};

// A strided copy between two host views of equal shape and dtype.
void copy_host_view(const TensorRef& from, const TensorRef& to);

}  // namespace asteria::ops

#include "core/ops/cpu_device.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace asteria::ops {

// Buffers start on a cache line (and an AVX-512 vector).
constexpr std::align_val_t kBufferAlignment{64};

CpuDevice::CpuDevice(ParallelRunner* runner, CpuIsa isa) : context_{isa, runner} {
  const std::vector<CpuIsa> supported = supported_cpu_isas();
  if (std::find(supported.begin(), supported.end(), isa) == supported.end())
    throw std::invalid_argument("ops::CpuDevice: this processor does not run " + std::string(to_string(isa)) +
                                " (widest: " + std::string(to_string(detect_cpu_isa())) + ")");
  name_ = "cpu (" + std::string(to_string(isa)) + ", " + std::to_string(threads()) + " thread" +
          (threads() == 1 ? "" : "s") + ")";
}

void CpuDevice::run(const Operation& op) { run_on_cpu(op, context_); }

void* CpuDevice::allocate(std::size_t bytes) { return ::operator new(bytes, kBufferAlignment); }

void CpuDevice::release(void* data) noexcept { ::operator delete(data, kBufferAlignment); }

void copy_host_view(const TensorRef& from, const TensorRef& to) {
  const std::size_t row_bytes = static_cast<std::size_t>(from.cols) * element_bytes(from.dtype);
  const std::size_t element = element_bytes(from.dtype);
  if (from.contiguous() && to.contiguous()) {
    std::memmove(to.data, from.data, row_bytes * static_cast<std::size_t>(from.rows));
    return;
  }
  for (index i = 0; i < from.rows; ++i)
    std::memmove(static_cast<std::byte*>(to.data) + static_cast<std::size_t>(i * to.stride) * element,
                 static_cast<const std::byte*>(from.data) + static_cast<std::size_t>(i * from.stride) * element, row_bytes);
}

void CpuDevice::copy_from_host(const TensorRef& host, const TensorRef& on_device) { copy_host_view(host, on_device); }

void CpuDevice::copy_to_host(const TensorRef& on_device, const TensorRef& host) { copy_host_view(on_device, host); }

}  // namespace asteria::ops

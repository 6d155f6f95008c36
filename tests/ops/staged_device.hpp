#pragma once
// A backend whose memory the host may not read (as a GPU's), that runs only the products itself:
// every other operation goes through Device's core-side fallback (operands staged through host
// memory, the CPU kernels, results copied back). Its memory is host RAM in disguise, so the
// harness can check the fallback on any machine.
#include <cstring>
#include <new>
#include <variant>

#include "core/ops/cpu_device.hpp"
#include "core/ops/cpu_kernels.hpp"
#include "core/ops/device.hpp"

namespace asteria::test {

class StagedDevice final : public ops::Device {
 public:
  std::string_view name() const noexcept override { return "staged (products only, the rest by fallback)"; }
  bool host_addressable() const noexcept override { return false; }
  std::int64_t copies() const noexcept { return copies_; }

 protected:
  bool supports(const ops::Operation& op) const override {
    return std::holds_alternative<ops::GemmOp>(op) || std::holds_alternative<ops::SyrkOp>(op);
  }
  void run(const ops::Operation& op) override { ops::run_on_cpu(op, ops::CpuContext{}); }
  void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
  void release(void* data) noexcept override { ::operator delete(data); }
  void copy_from_host(const ops::TensorRef& host, const ops::TensorRef& on_device) override {
    ++copies_;
    ops::copy_host_view(host, on_device);
  }
  void copy_to_host(const ops::TensorRef& on_device, const ops::TensorRef& host) override {
    ++copies_;
    ops::copy_host_view(on_device, host);
  }

 private:
  std::int64_t copies_ = 0;
};

}  // namespace asteria::test

#pragma once
// The CUDA backend of the optimizers' per-step math (ops::Device): operands in GPU memory,
// operations queued in order on one CUDA stream, products through cuBLAS (FP32 or FP64, no TF32),
// the rules of core/ops/rules.hpp and the reductions in this backend's own kernels. Temporaries
// come from the stream-ordered allocator, so a buffer freed by one step is reused by the next
// without a synchronization. Reading a result on the host (raised(), value(), download())
// waits for the stream.
#include <memory>
#include <string>
#include <string_view>

#include "core/ops/device.hpp"

namespace asteria::real::cuda {

class CudaDevice final : public ops::Device {
 public:
  // Throws std::runtime_error when `device` cannot be used (check query_devices() first).
  explicit CudaDevice(int device = 0);
  ~CudaDevice() override;

  std::string_view name() const noexcept override { return name_; }
  bool host_addressable() const noexcept override { return false; }
  // The cudaStream_t operations run on (as an opaque pointer: this header includes no CUDA).
  void* stream() const noexcept;
  // An event recorded on the stream.
  std::unique_ptr<ops::Fence> fence() override;
  // cuSOLVER for the refresh factorizations placed on this device (null if its handles could
  // not be made: the host solves).
  const linalg::SymmetricSolver* solver() const noexcept override;
  // cudaHostRegister: device-to-host copies into `host` then run asynchronously on the stream.
  std::unique_ptr<ops::PinnedHost> pin(std::span<std::byte> host) override;

 protected:
  void run(const ops::Operation& op) override;
  void* allocate(std::size_t bytes) override;
  void release(void* data) noexcept override;
  void copy_from_host(const ops::TensorRef& host, const ops::TensorRef& on_device) override;
  void copy_to_host(const ops::TensorRef& on_device, const ops::TensorRef& host) override;
  // Queued on the stream, not awaited: the caller waits for a fence taken afterwards.
  void copy_to_host_async(const ops::TensorRef& on_device, const ops::TensorRef& host) override;
  // Staged through page-locked buffers of the device's own (up to 256 MiB, reused once their
  // copy has run): the host's memory is free when the call returns, the host never waits.
  void copy_from_host_async(const ops::TensorRef& host, const ops::TensorRef& on_device) override;
  void wait() override;
  void zero(const ops::TensorRef& cell) override;

 private:
  void make_current() const;
  struct Handles;
  std::unique_ptr<Handles> handles_;
  std::unique_ptr<linalg::SymmetricSolver> solver_;
  std::string name_;
};

}  // namespace asteria::real::cuda

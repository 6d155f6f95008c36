#pragma once
// Providers behind RealMemory's tiers. RealMemory keeps the budgets, the region table, the copy
// engines and the accounting; a provider only stores bytes:
//   NvmeTier — where nvme-tier regions keep their bytes (files, in practice);
//   GpuTier  — device memory and page-locked host memory of a real GPU.
// Both are called from RealMemory's copy-engine threads, concurrently, so they must be
// thread-safe; each call is synchronous (it returns when the bytes have moved).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace asteria::real {

class NvmeTier {
 public:
  virtual ~NvmeTier() = default;
  // Stores `data` as the whole content of region `id`, replacing what was there.
  virtual Status write(std::uint64_t id, std::span<const std::byte> data, const std::string& label) = 0;
  // Fills `out` with region `id`'s content. RealMemory only asks for exactly as many bytes as the
  // last successful write stored. A failure (I/O error, checksum mismatch) names the label and file.
  virtual Status read(std::uint64_t id, std::span<std::byte> out, const std::string& label) = 0;
  // Forgets region `id` (on release). A no-op for an id never written.
  virtual void remove(std::uint64_t id) = 0;
};

// Adapts any store with NvmeTier's three calls as members (NvmeStore in core/real/nvme/) without
// this header depending on it: `NvmeStore store(dir, opts); NvmeStoreTier<NvmeStore> tier(store);`
template <class Store>
class NvmeStoreTier final : public NvmeTier {
 public:
  explicit NvmeStoreTier(Store& store) : store_(store) {}
  Status write(std::uint64_t id, std::span<const std::byte> data, const std::string& label) override {
    return store_.write(id, data, label);
  }
  Status read(std::uint64_t id, std::span<std::byte> out, const std::string& label) override {
    return store_.read(id, out, label);
  }
  void remove(std::uint64_t id) override { store_.remove(id); }

 private:
  Store& store_;
};

enum class CopyDirection { host_to_device, device_to_host, device_to_device };

class GpuTier {
 public:
  virtual ~GpuTier() = default;
  virtual std::string_view name() const noexcept = 0;  // the device, for errors and reports
  // Zero-filled device memory; nullptr when the device has no room.
  virtual std::byte* allocate_device(std::size_t bytes) = 0;
  virtual void free_device(std::byte* pointer) noexcept = 0;
  // Zero-fills device bytes (a reused buffer); false when the device failed.
  virtual bool zero_device(std::byte* pointer, std::size_t bytes) noexcept = 0;
  // Zero-filled page-locked host memory (fast, asynchronous transfers); nullptr on failure.
  virtual std::byte* allocate_pinned(std::size_t bytes) = 0;
  virtual void free_pinned(std::byte* pointer) noexcept = 0;
  // Moves `bytes` bytes and returns when they have arrived; host pointers may be pinned or not.
  virtual Status copy(std::byte* dst, const std::byte* src, std::size_t bytes, CopyDirection direction) = 0;
};

}  // namespace asteria::real

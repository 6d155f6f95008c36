#pragma once
// An accelerator for machines without one: its memory is host RAM handed out at disguised
// addresses (a high address bit set, so that the pointers are not canonical and any host read
// or write through them faults), its math the CPU kernels on the revealed addresses, its copies
// memcpy. Everything the runtime does with a real GPU's memory goes through it the same way, so
// a path that touches device memory from the host crashes here instead of passing silently.
// Operations run before the calls return (no fences) unless `lagging_fences` is set: then each
// fence is reached only a little after it is taken, as a GPU's work ends after its launch, and an
// asynchronous copy to the host (download_async in an AsyncCopies scope) lands only when a fence
// taken after it is waited for, and only into pinned memory (pin()): a reader that does not wait,
// or a buffer that is not pinned, shows.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <variant>
#include <vector>

#include "core/ops/cpu_device.hpp"
#include "core/ops/cpu_kernels.hpp"
#include "core/ops/device.hpp"
#include "core/ops/operation.hpp"
#include "core/real/accelerator.hpp"

namespace asteria::test {

inline constexpr std::uintptr_t kDisguise = std::uintptr_t{1} << 62;

template <class P>
P* disguise(P* p) noexcept {
  return p == nullptr ? nullptr : reinterpret_cast<P*>(reinterpret_cast<std::uintptr_t>(p) | kDisguise);
}
template <class P>
P* reveal(P* p) noexcept {
  return reinterpret_cast<P*>(reinterpret_cast<std::uintptr_t>(p) & ~kDisguise);
}
inline bool disguised(const void* p) noexcept { return (reinterpret_cast<std::uintptr_t>(p) & kDisguise) != 0; }

class EmulatedAcceleratorMath final : public ops::Device {
 public:
  explicit EmulatedAcceleratorMath(bool lagging_fences) : lagging_(lagging_fences) {}
  std::string_view name() const noexcept override { return "emulated accelerator"; }
  bool host_addressable() const noexcept override { return false; }
  std::int64_t operations() const noexcept { return operations_.load(); }
  std::int64_t fences() const noexcept { return fences_.load(); }
  std::int64_t finiteness_checks() const noexcept { return finiteness_checks_.load(); }

  std::unique_ptr<ops::Fence> fence() override {
    if (!lagging_) return nullptr;
    ++fences_;
    const std::lock_guard lock(mutex_);
    return std::make_unique<LaggingFence>(*this, queued_);
  }
  std::unique_ptr<ops::PinnedHost> pin(std::span<std::byte> host) override {
    const std::lock_guard lock(mutex_);
    ++pins_;
    pinned_[host.data()] = host.size();
    return std::make_unique<Pin>(*this, host.data());
  }
  std::int64_t pins() const noexcept { return pins_.load(); }
  std::int64_t async_copies_landed() const noexcept { return landed_.load(); }

 protected:
  void run(const ops::Operation& op) override {
    std::vector<ops::TensorRef> operands;
    for (const ops::OperandUse& use : ops::operand_uses(op)) operands.push_back(revealed(use.tensor));
    ops::run_on_cpu(ops::with_operands(op, operands), ops::CpuContext{});
    ++operations_;
    if (std::holds_alternative<ops::CheckFiniteOp>(op)) ++finiteness_checks_;
  }
  void* allocate(std::size_t bytes) override { return disguise(::operator new(bytes == 0 ? 1 : bytes)); }
  void release(void* data) noexcept override { ::operator delete(reveal(data)); }
  void copy_from_host(const ops::TensorRef& host, const ops::TensorRef& on_device) override {
    ops::copy_host_view(host, revealed(on_device));
  }
  void copy_to_host(const ops::TensorRef& on_device, const ops::TensorRef& host) override {
    ops::copy_host_view(revealed(on_device), host);
  }
  void copy_to_host_async(const ops::TensorRef& on_device, const ops::TensorRef& host) override {
    if (!lagging_) return copy_to_host(on_device, host);
    const std::lock_guard lock(mutex_);
    const auto* first = static_cast<const std::byte*>(host.data);
    const std::size_t bytes = host.span_bytes();
    auto it = pinned_.upper_bound(first);
    if (it == pinned_.begin() || (--it, first + bytes > it->first + it->second))
      throw std::logic_error("emulated accelerator: an asynchronous copy into host memory that is not pinned");
    // The device's bytes as of now (stream order), delivered at a later fence's wait.
    Pending p{host, std::vector<std::byte>(bytes), ++queued_};
    ops::TensorRef staged = host;
    staged.data = p.staged.data();
    ops::copy_host_view(revealed(on_device), staged);
    pending_.push_back(std::move(p));
  }

 private:
  struct Pending {
    ops::TensorRef host;
    std::vector<std::byte> staged;  // laid out as `host` (its stride)
    std::int64_t sequence = 0;
  };
  // Delivers the copies queued up to `sequence`.
  void land(std::int64_t sequence) {
    const std::lock_guard lock(mutex_);
    auto done = std::stable_partition(pending_.begin(), pending_.end(),
                                      [sequence](const Pending& p) { return p.sequence > sequence; });
    for (auto it = done; it != pending_.end(); ++it) {
      ops::TensorRef staged = it->host;
      staged.data = it->staged.data();
      ops::copy_host_view(staged, it->host);
      ++landed_;
    }
    pending_.erase(done, pending_.end());
  }
  class LaggingFence final : public ops::Fence {
   public:
    LaggingFence(EmulatedAcceleratorMath& math, std::int64_t sequence) : math_(math), sequence_(sequence) {}
    void wait() override {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      math_.land(sequence_);
    }

   private:
    EmulatedAcceleratorMath& math_;
    std::int64_t sequence_;
  };
  class Pin final : public ops::PinnedHost {
   public:
    Pin(EmulatedAcceleratorMath& math, std::byte* at) : math_(math), at_(at) {}
    ~Pin() override {
      const std::lock_guard lock(math_.mutex_);
      math_.pinned_.erase(at_);
    }

   private:
    EmulatedAcceleratorMath& math_;
    std::byte* at_;
  };
  static ops::TensorRef revealed(ops::TensorRef t) {
    if (t.data != nullptr && !disguised(t.data))
      throw std::logic_error("emulated accelerator: operand " + ops::describe(t) + " is not in its memory");
    t.data = reveal(t.data);
    return t;
  }
  bool lagging_;
  std::mutex mutex_;
  std::map<const std::byte*, std::size_t> pinned_;
  std::vector<Pending> pending_;
  std::int64_t queued_ = 0;
  std::atomic<std::int64_t> pins_{0};
  std::atomic<std::int64_t> landed_{0};
  std::atomic<std::int64_t> operations_{0};
  std::atomic<std::int64_t> fences_{0};
  std::atomic<std::int64_t> finiteness_checks_{0};
};

class EmulatedGpuTier final : public real::GpuTier {
 public:
  std::string_view name() const noexcept override { return "emulated accelerator memory"; }
  std::byte* allocate_device(std::size_t bytes) override {
    auto* p = static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{4096}));
    std::memset(p, 0, bytes);
    return disguise(p);
  }
  void free_device(std::byte* pointer) noexcept override { ::operator delete(reveal(pointer), std::align_val_t{4096}); }
  bool zero_device(std::byte* pointer, std::size_t bytes) noexcept override {
    std::memset(reveal(pointer), 0, bytes);
    return true;
  }
  std::byte* allocate_pinned(std::size_t bytes) override {
    auto* p = static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{4096}));
    std::memset(p, 0, bytes);
    return p;
  }
  void free_pinned(std::byte* pointer) noexcept override { ::operator delete(pointer, std::align_val_t{4096}); }
  Status copy(std::byte* dst, const std::byte* src, std::size_t bytes, real::CopyDirection direction) override {
    const bool src_device = direction != real::CopyDirection::host_to_device;
    const bool dst_device = direction != real::CopyDirection::device_to_host;
    if (disguised(src) != src_device || disguised(dst) != dst_device)
      return {StatusCode::invalid_argument, "emulated accelerator: a copy's ends are not where its direction says"};
    std::memcpy(reveal(dst), reveal(src), bytes);
    ++copies_;
    return Status::success();
  }
  std::int64_t copies() const noexcept { return copies_.load(); }

 private:
  std::atomic<std::int64_t> copies_{0};
};

class EmulatedAccelerator final : public real::Accelerator {
 public:
  explicit EmulatedAccelerator(bool lagging_fences = false) : math_(lagging_fences) {}
  std::string_view name() const noexcept override { return "emulated accelerator"; }
  real::GpuTier& memory() override { return memory_; }
  ops::Device& math() override { return math_; }
  EmulatedGpuTier& emulated_memory() noexcept { return memory_; }
  EmulatedAcceleratorMath& emulated_math() noexcept { return math_; }

 private:
  EmulatedGpuTier memory_;
  EmulatedAcceleratorMath math_;
};

}  // namespace asteria::test

#pragma once
// An NvmeTier that keeps region bytes in RAM: lets the suite exercise the nvme tier of the real
// backend without a disk. Strict where RealMemory promises something: a read must ask for
// exactly the size last written. Failures can be injected.
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "core/real/tier_backend.hpp"

namespace asteria::real::testing {

class InMemoryNvmeTier final : public NvmeTier {
 public:
  Status write(std::uint64_t id, std::span<const std::byte> data, const std::string& label) override {
    std::lock_guard lock(mutex_);
    ++writes_;
    if (fail_writes_) return {StatusCode::io_error, "injected write failure of '" + label + "' at /nvme/" + std::to_string(id)};
    files_[id].assign(data.begin(), data.end());
    return Status::success();
  }
  Status read(std::uint64_t id, std::span<std::byte> out, const std::string& label) override {
    std::lock_guard lock(mutex_);
    ++reads_;
    const std::string file = "/nvme/" + std::to_string(id);
    if (fail_reads_) return {StatusCode::io_error, "injected checksum mismatch in " + file + " ('" + label + "')"};
    auto it = files_.find(id);
    if (it == files_.end()) return {StatusCode::io_error, file + " was never written ('" + label + "')"};
    if (it->second.size() != out.size())
      return {StatusCode::invalid_argument, "read of " + std::to_string(out.size()) + " bytes from " + file +
                                                " holding " + std::to_string(it->second.size())};
    if (!out.empty()) std::memcpy(out.data(), it->second.data(), out.size());
    return Status::success();
  }
  void remove(std::uint64_t id) override {
    std::lock_guard lock(mutex_);
    ++removes_;
    files_.erase(id);
  }

  void fail_reads(bool on) { std::lock_guard lock(mutex_); fail_reads_ = on; }
  void fail_writes(bool on) { std::lock_guard lock(mutex_); fail_writes_ = on; }
  std::size_t files() const { std::lock_guard lock(mutex_); return files_.size(); }
  int writes() const { std::lock_guard lock(mutex_); return writes_; }
  int reads() const { std::lock_guard lock(mutex_); return reads_; }
  int removes() const { std::lock_guard lock(mutex_); return removes_; }

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::vector<std::byte>> files_;
  bool fail_reads_ = false;
  bool fail_writes_ = false;
  int writes_ = 0;
  int reads_ = 0;
  int removes_ = 0;
};

}  // namespace asteria::real::testing

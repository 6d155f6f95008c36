// How RealMemory moves bytes between storages of any two kinds. Host-addressable bytes move by
// memcpy, GPU bytes through the GpuTier, NVMe bytes through the NvmeTier; a move with neither
// end host-addressable goes through a host bounce buffer.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/real/real_memory.hpp"
#include "core/real/real_memory_storage.hpp"

namespace asteria::real {

namespace {
Status with_context(Status status, const std::string& what) {
  if (status.ok()) return status;
  return {status.code(), what + ": " + status.reason()};
}
}  // namespace

Status RealMemory::move(const Storage& src, Storage& dst, std::size_t bytes) {
  if (bytes == 0) return Status::success();
  if (src.host_addressable() && dst.host_addressable()) {
    std::memcpy(dst.host(), src.host(), bytes);
    return Status::success();
  }
  if (src.kind == Storage::Kind::gpu && dst.kind == Storage::Kind::gpu)
    return with_context(gpu_->copy(dst.pointer, src.pointer, bytes, CopyDirection::device_to_device),
                        "device copy '" + src.label + "' -> '" + dst.label + "'");
  if (src.host_addressable()) return write_from_host(dst, src.host(), bytes);
  if (dst.host_addressable()) return read_to_host(src, dst.host(), bytes);
  std::vector<std::byte> bounce(bytes);
  if (Status s = read_to_host(src, bounce.data(), bytes); !s.ok()) return s;
  return write_from_host(dst, bounce.data(), bytes);
}

// The storage behind a device- or host-tier region that `bytes` fit in (the checks read and
// write share); a failed Status for too many bytes.
Status RealMemory::checked_storage(const platform::Region& region, std::size_t bytes, const char* verb,
                                   StoragePtr& storage) const {
  storage = find(region.id);
  if (!storage) throw std::logic_error(std::string("RealMemory::") + verb + ": unknown region '" + region.label + "'");
  if (storage->kind == Storage::Kind::nvme || storage->kind == Storage::Kind::accounted)
    throw std::logic_error(std::string("RealMemory::") + verb + ": region '" + region.label +
                           "' is not device or host memory");
  if (bytes > storage->bytes)
    return {StatusCode::invalid_argument, std::to_string(bytes) + " bytes for region '" + region.label + "' of " +
                                              std::to_string(storage->bytes)};
  return Status::success();
}

Status RealMemory::write(const platform::Region& region, std::span<const std::byte> bytes) {
  StoragePtr storage;
  if (Status s = checked_storage(region, bytes.size(), "write", storage); !s.ok() || bytes.empty()) return s;
  return write_from_host(*storage, bytes.data(), bytes.size());
}

Status RealMemory::read(const platform::Region& region, std::span<std::byte> out) {
  StoragePtr storage;
  if (Status s = checked_storage(region, out.size(), "read", storage); !s.ok() || out.empty()) return s;
  return read_to_host(*storage, out.data(), out.size());
}

Status RealMemory::read_to_host(const Storage& src, std::byte* out, std::size_t bytes) {
  switch (src.kind) {
    case Storage::Kind::host_heap:
    case Storage::Kind::host_pinned: std::memcpy(out, src.pointer, bytes); return Status::success();
    case Storage::Kind::gpu:
      return with_context(gpu_->copy(out, src.pointer, bytes, CopyDirection::device_to_host),
                          "device->host copy of '" + src.label + "'");
    case Storage::Kind::nvme: return read_nvme(src, out, bytes);
    case Storage::Kind::accounted: break;  // refused by copy()
  }
  return {StatusCode::invalid_argument, "unknown storage kind"};
}

Status RealMemory::write_from_host(Storage& dst, const std::byte* in, std::size_t bytes) {
  switch (dst.kind) {
    case Storage::Kind::host_heap:
    case Storage::Kind::host_pinned: std::memcpy(dst.pointer, in, bytes); return Status::success();
    case Storage::Kind::gpu:
      return with_context(gpu_->copy(dst.pointer, in, bytes, CopyDirection::host_to_device),
                          "host->device copy of '" + dst.label + "'");
    case Storage::Kind::nvme: return write_nvme(dst, in, bytes);
    case Storage::Kind::accounted: break;  // refused by copy()
  }
  return {StatusCode::invalid_argument, "unknown storage kind"};
}

// An nvme region holds the bytes its writes stored, followed by zeros up to its size.
Status RealMemory::read_nvme(const Storage& src, std::byte* out, std::size_t bytes) {
  const std::size_t stored = src.stored.load();
  const std::size_t from_store = std::min(stored, bytes);
  if (stored == bytes) {
    if (Status s = nvme_->read(src.id, {out, bytes}, src.label); !s.ok())
      return with_context(std::move(s), "nvme read of '" + src.label + "'");
  } else if (stored > 0) {
    std::vector<std::byte> whole(stored);
    if (Status s = nvme_->read(src.id, whole, src.label); !s.ok())
      return with_context(std::move(s), "nvme read of '" + src.label + "'");
    std::memcpy(out, whole.data(), from_store);
  }
  if (bytes > from_store) std::memset(out + from_store, 0, bytes - from_store);
  return Status::success();
}

// A write shorter than what the region stores keeps the stored tail (read, patch, write back),
// as a memcpy into the head of a larger region would.
Status RealMemory::write_nvme(Storage& dst, const std::byte* in, std::size_t bytes) {
  const std::size_t stored = dst.stored.load();
  Status status;
  if (bytes >= stored) {
    status = nvme_->write(dst.id, {in, bytes}, dst.label);
    if (status.ok()) dst.stored.store(bytes);
  } else {
    std::vector<std::byte> whole(stored);
    status = nvme_->read(dst.id, whole, dst.label);
    if (status.ok()) {
      std::memcpy(whole.data(), in, bytes);
      status = nvme_->write(dst.id, whole, dst.label);
    }
  }
  return with_context(std::move(status), "nvme write of '" + dst.label + "'");
}

}  // namespace asteria::real

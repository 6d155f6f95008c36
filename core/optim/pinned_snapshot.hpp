#pragma once
// The page lock of a refresh job's snapshot buffer, which a device fills by an asynchronous copy
// (ops::Device::download_async): taken once (ops::Device::pin) and kept while the job is reused
// as a spare, renewed only when the buffer moves (another shape, another device), dropped before
// the buffer is reallocated. Declare it after the matrix it covers, so that it goes first.
#include <cstddef>
#include <memory>
#include <span>

#include "core/linalg/matrix.hpp"
#include "core/ops/device.hpp"

namespace asteria::optim {

class SnapshotPin {
 public:
  // Sizes `buffer` to `source`'s shape and fills it from `source` on `device`: its values land
  // when a fence taken afterwards has been waited for (at once on a device without fences).
  template <Real T>
  void fill(ops::Device& device, linalg::ConstMatrixView<T> source, linalg::Matrix<T>& buffer) {
    if (buffer.size() != source.rows() * source.cols()) lock_.reset();  // before resize frees the memory
    buffer.resize(source.rows(), source.cols());
    const std::span<std::byte> bytes = std::as_writable_bytes(buffer.values());
    if (lock_ == nullptr || device_ != &device || at_ != bytes.data() || size_ != bytes.size()) {
      lock_.reset();
      lock_ = device.pin(bytes);
      device_ = &device;
      at_ = bytes.data();
      size_ = bytes.size();
    }
    device.download_async(source, buffer.view());
  }
  // Before the buffer is emptied or freed.
  void release() noexcept {
    lock_.reset();
    device_ = nullptr;
    at_ = nullptr;
    size_ = 0;
  }

 private:
  std::unique_ptr<ops::PinnedHost> lock_;
  const ops::Device* device_ = nullptr;
  const std::byte* at_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace asteria::optim

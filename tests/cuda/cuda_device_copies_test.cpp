// The CUDA device's asynchronous copies: uploads staged through its page-locked buffers (the
// host's memory free at once, the values there for the device's later work), downloads into
// pinned memory landing at a fence. Needs a CUDA device: without one the tests skip and say so.
#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/real/cuda/cuda_device.hpp"
#include "core/real/cuda/device.hpp"
#include "tests/cuda/cuda_device_test.hpp"

namespace asteria::real::cuda {
namespace {

class CudaDeviceCopies : public test::NeedsCudaDevice<> {};

// Many uploads of a strided host view in one scope (more than the staging cap in total, so
// buffers are reused and waited for), the host buffer overwritten after each call: every device
// matrix holds what the host held at its call.
TEST_F(CudaDeviceCopies, StagedUploadsKeepTheValuesOfTheirCall) {
  CudaDevice device(current_device());
  constexpr linalg::index rows = 512, cols = 1000, stride = 1024;
  std::vector<float> host(static_cast<std::size_t>(rows * stride));
  std::vector<ops::Buffer> on_device;
  constexpr int kUploads = 160;  // 160 x 2 MB > the 256 MiB cap
  {
    const ops::Device::AsyncCopies scope(device);
    for (int k = 0; k < kUploads; ++k) {
      for (linalg::index i = 0; i < rows; ++i)
        for (linalg::index j = 0; j < cols; ++j) host[static_cast<std::size_t>(i * stride + j)] = static_cast<float>(k * 7 + i - j);
      on_device.push_back(device.matrix<float>(rows, cols));
      device.upload_async(linalg::ConstMatrixView<float>(host.data(), rows, cols, stride), on_device.back().view<float>());
    }
  }
  linalg::Matrix<float> back(rows, cols);
  for (int k = 0; k < kUploads; k += 31) {
    device.download(linalg::ConstMatrixView<float>(on_device[static_cast<std::size_t>(k)].view<float>()), back.view());
    for (linalg::index i = 0; i < rows; i += 97)
      for (linalg::index j = 0; j < cols; j += 89) ASSERT_EQ(back(i, j), static_cast<float>(k * 7 + i - j)) << k;
  }
}

// A download into pinned memory inside a scope lands once a fence taken after it is waited for.
TEST_F(CudaDeviceCopies, PinnedDownloadsLandAtTheFence) {
  CudaDevice device(current_device());
  linalg::Matrix<float> source(300, 200), target(300, 200);
  for (linalg::index k = 0; k < source.size(); ++k) source.values()[static_cast<std::size_t>(k)] = static_cast<float>(k);
  ops::Buffer on_device = device.matrix<float>(300, 200);
  device.upload(linalg::ConstMatrixView<float>(source.view()), on_device.view<float>());
  const std::unique_ptr<ops::PinnedHost> pinned = device.pin(std::as_writable_bytes(target.values()));
  ASSERT_NE(pinned, nullptr);
  std::unique_ptr<ops::Fence> fence;
  {
    const ops::Device::AsyncCopies scope(device);
    device.download_async(linalg::ConstMatrixView<float>(on_device.view<float>()), target.view());
    fence = device.fence();
  }
  ASSERT_NE(fence, nullptr);
  fence->wait();
  EXPECT_EQ(target.values()[12345], 12345.0f);
}

}  // namespace
}  // namespace asteria::real::cuda

#pragma once
// Test data on a device: a host matrix uploaded into a buffer of the device (with a row stride
// wider than its columns, so that strided views are exercised), and read back.
#include <random>

#include "core/linalg/matrix.hpp"
#include "core/ops/device.hpp"

namespace asteria::test {

template <linalg::Real T>
class DeviceMatrix {
 public:
  // `pad` extra columns of storage per row (never part of the view).
  DeviceMatrix(ops::Device& device, const linalg::Matrix<T>& host, linalg::index pad = 3)
      : device_(&device), rows_(host.rows()), cols_(host.cols()),
        storage_(device.matrix<T>(host.rows(), host.cols() + pad)) {
    device.upload(linalg::ConstMatrixView<T>(host), view());
  }
  linalg::MatrixView<T> view() const {
    const linalg::MatrixView<T> all = storage_.template view<T>();
    return all.block(0, 0, rows_, cols_);
  }
  linalg::ConstMatrixView<T> cview() const { return view(); }
  linalg::Matrix<T> host() const {
    linalg::Matrix<T> out(rows_, cols_);
    device_->download(cview(), out.view());
    return out;
  }

 private:
  ops::Device* device_;
  linalg::index rows_, cols_;
  ops::Buffer storage_;
};

template <linalg::Real T>
linalg::Matrix<T> random_matrix(linalg::index rows, linalg::index cols, std::mt19937& gen, double low = -1.0,
                                double high = 1.0) {
  std::uniform_real_distribution<double> dist(low, high);
  linalg::Matrix<T> m(rows, cols);
  for (T& x : m.values()) x = static_cast<T>(dist(gen));
  return m;
}

}  // namespace asteria::test

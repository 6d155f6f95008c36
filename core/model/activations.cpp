#include "core/model/activations.hpp"

#include <cassert>
#include <cmath>
#include <numbers>

namespace asteria::model {
namespace {

constexpr double kGeluCubic = 0.044715;

template <linalg::Real T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

// (1 + tanh u)/2 = sigmoid(2u), so gelu(x) = x · sigmoid(2u) with u = c (x + 0.044715 x³): the
// tanh form, evaluated through exp (several times faster than tanh in glibc's float libm).
template <linalg::Real T>
void gelu_forward(std::span<const T> x, std::span<T> y) {
  assert(x.size() == y.size());
  const T c = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
  const T cubic = static_cast<T>(kGeluCubic);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T v = x[i];
    y[i] = v * sigmoid(T(2) * c * (v + cubic * v * v * v));
  }
}

// gelu'(x) = s + x · 2 s (1 − s) · u'(x), s = sigmoid(2u), u'(x) = c (1 + 3 · 0.044715 x²).
template <linalg::Real T>
void gelu_backward(std::span<const T> x, std::span<const T> dy, std::span<T> dx) {
  assert(x.size() == dy.size() && x.size() == dx.size());
  const T c = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
  const T cubic = static_cast<T>(kGeluCubic);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T v = x[i];
    const T s = sigmoid(T(2) * c * (v + cubic * v * v * v));
    const T slope = s + v * T(2) * s * (T(1) - s) * c * (T(1) + T(3) * cubic * v * v);
    dx[i] = dy[i] * slope;
  }
}

template <linalg::Real T>
void swiglu_forward(std::span<const T> gate, std::span<const T> up, std::span<T> y) {
  assert(gate.size() == up.size() && gate.size() == y.size());
  for (std::size_t i = 0; i < gate.size(); ++i) y[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

// silu'(g) = s (1 + g (1 − s)), s = sigmoid(g).
template <linalg::Real T>
void swiglu_backward(std::span<const T> gate, std::span<const T> up, std::span<const T> dy, std::span<T> d_gate,
                     std::span<T> d_up) {
  assert(gate.size() == up.size() && gate.size() == dy.size());
  assert(gate.size() == d_gate.size() && gate.size() == d_up.size());
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const T g = gate[i];
    const T s = sigmoid(g);
    const T d = dy[i];  // read before d_gate (which may alias dy) is written
    d_up[i] = d * g * s;
    d_gate[i] = d * up[i] * s * (T(1) + g * (T(1) - s));
  }
}

template void gelu_forward<float>(std::span<const float>, std::span<float>);
template void gelu_forward<double>(std::span<const double>, std::span<double>);
template void gelu_backward<float>(std::span<const float>, std::span<const float>, std::span<float>);
template void gelu_backward<double>(std::span<const double>, std::span<const double>, std::span<double>);
template void swiglu_forward<float>(std::span<const float>, std::span<const float>, std::span<float>);
template void swiglu_forward<double>(std::span<const double>, std::span<const double>, std::span<double>);
template void swiglu_backward<float>(std::span<const float>, std::span<const float>, std::span<const float>,
                                     std::span<float>, std::span<float>);
template void swiglu_backward<double>(std::span<const double>, std::span<const double>, std::span<const double>,
                                      std::span<double>, std::span<double>);

}  // namespace asteria::model

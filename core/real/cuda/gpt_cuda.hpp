#pragma once
// The decoder-only transformer of core/model/gpt.hpp on one CUDA device, in float: the same
// function (parameters, RoPE form and base, RMSNorm epsilon, GELU tanh form, SwiGLU, tied or
// untied head, mean next-token cross-entropy) and the same seeded initial weights, drawn on the
// host with Gpt's generator and copied, so a CPU Gpt<float> and a GptCuda of one config and
// seed start bit for bit equal and then agree to float rounding.
//
// Matrix products go through cuBLAS in full FP32 (no TF32), attention through strided-batched
// GEMMs over a head-major copy of q, k and v; the elementwise parts (norms, RoPE, softmax,
// activations, loss, embedding) are small kernels. Everything runs on the model's own stream;
// each public call returns once its work on the device has finished.
//
// No CUDA header is needed to use this class.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/model/gpt.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::real::cuda {

class GptCuda {
 public:
  // Throws InputError(config.name, field, expectation) for a config that Gpt rejects (checked
  // before any device work), std::runtime_error naming the CUDA error when no device is usable
  // or a CUDA call fails (an allocation too large for the device, for instance).
  GptCuda(const workload::ModelConfig& config, std::uint64_t seed);
  ~GptCuda();
  GptCuda(GptCuda&&) noexcept;
  GptCuda& operator=(GptCuda&&) noexcept;
  GptCuda(const GptCuda&) = delete;
  GptCuda& operator=(const GptCuda&) = delete;

  const workload::ModelConfig& config() const noexcept;
  // The parameter tensors, in workload order (workload::build_workload(config).weights).
  std::size_t tensor_count() const noexcept;
  const workload::WeightSpec& tensor(std::size_t i) const;
  std::size_t parameter_count() const noexcept;
  // Name of the device the model lives on.
  const std::string& device_name() const noexcept;

  // `tokens` as for Gpt: `batch` sequences of L + 1 ids, 1 <= L <= sequence_length. Throws
  // InputError (source "tokens") for a bad size or id, before touching the device.
  // Forward and backward: returns the mean loss and overwrites every gradient.
  double forward_backward(std::span<const model::TokenId> tokens, int batch);
  // Forward only: the mean loss; gradients untouched.
  double loss(std::span<const model::TokenId> tokens, int batch);

  // Host copies of tensor i (`out` / `in` hold exactly tensor(i).elements() floats, row-major;
  // otherwise InputError). Throw std::out_of_range for i >= tensor_count().
  void copy_parameter_to_host(std::size_t i, std::span<float> out) const;
  void copy_gradient_to_host(std::size_t i, std::span<float> out) const;
  void copy_parameter_from_host(std::size_t i, std::span<const float> in);

  // Device addresses of tensor i's parameters and gradient (tensor(i).elements() floats), for
  // an optimizer that runs on the device. Valid for the model's lifetime; the model's own work
  // on them has finished whenever a public call has returned.
  float* device_parameter(std::size_t i);
  const float* device_gradient(std::size_t i) const;

  // The convention of Gpt::step_flops (model FLOPs of one forward + backward).
  double step_flops(int batch, int sequence_length) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace asteria::real::cuda

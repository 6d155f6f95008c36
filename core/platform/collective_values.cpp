#include "core/platform/collective_values.hpp"

#include <bit>
#include <cstring>
#include <vector>

namespace asteria::platform {

float bf16_to_float(std::uint16_t value) noexcept { return std::bit_cast<float>(std::uint32_t{value} << 16); }

std::uint16_t float_to_bf16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // a quiet NaN, never rounded to infinity
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

namespace {

float load(const CommBuffer& b, std::size_t i) {
  if (b.dtype == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(b.data)[i]);
  return static_cast<const float*>(b.data)[i];
}

void store(const CommBuffer& b, std::size_t i, float v) {
  if (b.dtype == DType::bf16) static_cast<std::uint16_t*>(b.data)[i] = float_to_bf16(v);
  else static_cast<float*>(b.data)[i] = v;
}

// The reduction of element `index` of every rank's `ins`, in rank order.
float reduce_at(std::span<const CommBuffer> ins, ReduceOp op, std::size_t index) {
  float sum = 0.0f;
  for (const CommBuffer& in : ins) sum += load(in, index);
  if (op == ReduceOp::average) sum /= static_cast<float>(ins.size());
  return sum;
}

}  // namespace

void combine_values(Collective collective, ReduceOp op, int root, std::span<const CommBuffer> ins,
                    std::span<const CommBuffer> outs) {
  if (ins.empty() || ins.front().bytes_only()) return;
  const std::size_t n = ins.size();
  switch (collective) {
    case Collective::all_reduce: {
      // In place: every input is read before any output is written.
      const std::size_t count = ins.front().count;
      std::vector<float> result(count);
      for (std::size_t i = 0; i < count; ++i) result[i] = reduce_at(ins, op, i);
      for (const CommBuffer& out : outs)
        for (std::size_t i = 0; i < count; ++i) store(out, i, result[i]);
      break;
    }
    case Collective::reduce_scatter: {
      const std::size_t shard = outs.front().count;
      std::vector<float> result(shard * n);
      for (std::size_t i = 0; i < shard * n; ++i) result[i] = reduce_at(ins, op, i);
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t i = 0; i < shard; ++i) store(outs[r], i, result[r * shard + i]);
      break;
    }
    case Collective::all_gather: {
      const std::size_t bytes = ins.front().bytes();
      std::vector<std::byte> gathered(bytes * n);
      for (std::size_t r = 0; r < n; ++r) std::memcpy(gathered.data() + r * bytes, ins[r].data, bytes);
      for (const CommBuffer& out : outs) std::memcpy(out.data, gathered.data(), bytes * n);
      break;
    }
    case Collective::broadcast: {
      const CommBuffer& from = ins[static_cast<std::size_t>(root)];
      for (std::size_t r = 0; r < n; ++r)
        if (r != static_cast<std::size_t>(root)) std::memcpy(outs[r].data, from.data, from.bytes());
      break;
    }
  }
}

}  // namespace asteria::platform

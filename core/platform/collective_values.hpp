#pragma once
// What a collective does to the values, for backends whose ranks share one address space (the
// simulator, the fake backend): the reference every backend's results are checked against.
// Reductions add the ranks' values in group rank order, accumulating in fp32 (bf16 values are
// widened, added and rounded to nearest even once at the end), and an average divides the sum by
// the group size: the result does not depend on timing, so replicas stay bitwise equal.
#include <cstdint>
#include <span>

#include "core/platform/comm.hpp"

namespace asteria::platform {

// ins[r] and outs[r]: group rank r's buffers as passed to the collective (for all_reduce and
// broadcast the same buffer). Buffers are checked (check_collective) by the caller; bytes-only
// buffers are left alone.
void combine_values(Collective collective, ReduceOp op, int root, std::span<const CommBuffer> ins,
                    std::span<const CommBuffer> outs);

float bf16_to_float(std::uint16_t value) noexcept;
std::uint16_t float_to_bf16(float value) noexcept;  // round to nearest even; NaN stays NaN

}  // namespace asteria::platform

// Host-side pieces of GptCuda: token checks and staging, and the FLOP convention of core/model.
#include "core/real/cuda/gpt_cuda_host.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/common/error.hpp"

namespace asteria::real::cuda {

std::int64_t check_tokens(const workload::ModelConfig& c, std::span<const model::TokenId> tokens, int batch) {
  if (batch < 1) throw InputError("tokens", "batch", "expected at least 1 sequence, found " + std::to_string(batch));
  const auto size = static_cast<std::int64_t>(tokens.size());
  const std::int64_t length = size / batch - 1;
  if (size % batch != 0 || length < 1 || length > c.sequence_length)
    throw InputError("tokens", "size",
                     "expected batch (" + std::to_string(batch) + ") x (L + 1) ids with 1 <= L <= sequence_length (" +
                         std::to_string(c.sequence_length) + "), found " + std::to_string(size) + " ids");
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab)
      throw InputError("tokens", "id",
                       "expected ids in [0, " + std::to_string(c.vocab) + "), found " + std::to_string(tokens[i]) +
                           " at position " + std::to_string(i));
  return length;
}

void stage_tokens(std::span<const model::TokenId> tokens, int batch, std::int64_t length, TokenUpload& upload) {
  const std::int64_t n = batch * length;
  // Positions sorted by id (stable: ascending within an id) give the scatter plan.
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  std::vector<std::int32_t> inputs(static_cast<std::size_t>(n));
  std::vector<std::int32_t> targets(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < length; ++i) {
      const auto t = static_cast<std::size_t>(b * length + i);
      inputs[t] = tokens[static_cast<std::size_t>(b * (length + 1) + i)];
      targets[t] = tokens[static_cast<std::size_t>(b * (length + 1) + i + 1)];
    }
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order, {}, [&](std::int32_t t) { return inputs[static_cast<std::size_t>(t)]; });

  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> starts;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::int32_t id = inputs[static_cast<std::size_t>(order[k])];
    if (ids.empty() || ids.back() != id) {
      ids.push_back(id);
      starts.push_back(static_cast<std::int32_t>(k));
    }
  }
  starts.push_back(static_cast<std::int32_t>(n));

  upload.tokens = n;
  upload.distinct = static_cast<std::int64_t>(ids.size());
  std::vector<std::int32_t>& v = upload.values;
  v.clear();
  v.reserve(static_cast<std::size_t>(3 * n + 2 * upload.distinct + 1));
  v.insert(v.end(), inputs.begin(), inputs.end());
  v.insert(v.end(), targets.begin(), targets.end());
  v.insert(v.end(), ids.begin(), ids.end());
  v.insert(v.end(), starts.begin(), starts.end());
  v.insert(v.end(), order.begin(), order.end());
}


}  // namespace asteria::real::cuda

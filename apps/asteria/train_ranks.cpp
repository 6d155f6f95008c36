#include "apps/asteria/train_ranks.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/common/error.hpp"

namespace asteria::cli {

RankPlace rank_place(platform::Comm* comm) {
  if (comm == nullptr || comm->size() == 1) return {0, 1, comm};
  return {comm->rank(), comm->size(), comm};
}

std::filesystem::path rank_directory(const std::filesystem::path& out, const RankPlace& place) {
  return place.ranks > 1 ? out / ("rank" + std::to_string(place.rank)) : out;
}

int local_batch(int batch, int ranks) {
  if (ranks < 1 || batch % ranks != 0 || batch < ranks)
    throw InputError("command line", "--batch",
                     "a global batch that splits evenly over the " + std::to_string(ranks) + " data-parallel ranks (a multiple of " +
                         std::to_string(ranks) + "), found " + std::to_string(batch));
  return batch / ranks;
}

int global_batch(int rank_batch, int ranks) {
  const long long global = static_cast<long long>(rank_batch) * ranks;
  if (rank_batch < 1 || ranks < 1 || global > std::numeric_limits<int>::max())
    throw InputError("command line", "--batch",
                     "sequences per rank >= 1 whose global batch over the " + std::to_string(ranks) +
                         " data-parallel ranks is at most " + std::to_string(std::numeric_limits<int>::max()) +
                         ", found " + std::to_string(rank_batch));
  return static_cast<int>(global);
}

namespace {
void check(const platform::Pending& done, const std::string& why) {
  const Status s = done.status();
  if (!s.ok()) throw NumericalError("data-parallel " + why + " failed: " + s.message());
}
}  // namespace

void barrier(const RankPlace& place, const std::string& why) {
  if (place.comm == nullptr || place.ranks == 1) return;
  float token = 0.0f;
  check(place.comm->world().all_reduce(platform::CommBuffer::of({&token, 1}), platform::ReduceOp::sum,
                                       {{}, "barrier: " + why, {}}),
        why);
}

double mean_over_ranks(const RankPlace& place, double value, const std::string& why) {
  if (place.comm == nullptr || place.ranks == 1) return value;
  float v = static_cast<float>(value);
  check(place.comm->world().all_reduce(platform::CommBuffer::of({&v, 1}), platform::ReduceOp::average, {{}, why, {}}),
        why);
  return v;
}

std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t digest) {
  for (std::byte b : bytes) {
    digest ^= static_cast<std::uint64_t>(b);
    digest *= 1099511628211ull;
  }
  return digest;
}

std::string hex(std::uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

namespace {
// Figures travel as fp32 words, bit for bit (an all-gather copies, never adds): digests as two
// 32-bit halves, seconds as the two halves of their double.
constexpr std::size_t kWords = 12;
void put(std::vector<float>& w, std::size_t at, std::uint64_t bits) {
  const auto lo = static_cast<std::uint32_t>(bits), hi = static_cast<std::uint32_t>(bits >> 32);
  std::memcpy(&w[at], &lo, 4);
  std::memcpy(&w[at + 1], &hi, 4);
}
std::uint64_t take(const float* w) {
  std::uint32_t lo = 0, hi = 0;
  std::memcpy(&lo, w, 4);
  std::memcpy(&hi, w + 1, 4);
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
}  // namespace

std::vector<RankFigures> gather_figures(const RankPlace& place, const RankFigures& mine) {
  if (place.comm == nullptr || place.ranks == 1) return {mine};
  std::vector<float> words(kWords);
  put(words, 0, mine.weights_digest);
  put(words, 2, mine.optimizer_state_digest);
  put(words, 4, std::bit_cast<std::uint64_t>(mine.p50_step_s));
  put(words, 6, std::bit_cast<std::uint64_t>(mine.p99_step_s));
  put(words, 8, std::bit_cast<std::uint64_t>(mine.mean_step_s));
  put(words, 10, std::bit_cast<std::uint64_t>(mine.mean_visible_optimizer_s));
  std::vector<float> all(kWords * static_cast<std::size_t>(place.ranks));
  check(place.comm->world().all_gather(platform::CommBuffer::of(words), platform::CommBuffer::of(all),
                                       {{}, "gather rank figures", {}}),
        "gather of the ranks' figures");
  std::vector<RankFigures> out;
  for (int r = 0; r < place.ranks; ++r) {
    const float* w = all.data() + kWords * static_cast<std::size_t>(r);
    out.push_back({take(w), take(w + 2), std::bit_cast<double>(take(w + 4)), std::bit_cast<double>(take(w + 6)),
                   std::bit_cast<double>(take(w + 8)), std::bit_cast<double>(take(w + 10))});
  }
  return out;
}

nlohmann::ordered_json aggregate_summary(const std::vector<RankFigures>& ranks, const nlohmann::ordered_json& rank0) {
  nlohmann::ordered_json s = rank0;
  bool identical = true;
  double p50 = 0.0, p99 = 0.0, mean = 0.0, visible = 0.0;
  nlohmann::ordered_json per_rank = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankFigures& f = ranks[r];
    identical = identical && f.weights_digest == ranks[0].weights_digest &&
                f.optimizer_state_digest == ranks[0].optimizer_state_digest;
    p50 = std::max(p50, f.p50_step_s);
    p99 = std::max(p99, f.p99_step_s);
    mean = std::max(mean, f.mean_step_s);
    visible = std::max(visible, f.mean_visible_optimizer_s);
    per_rank.push_back({{"rank", r},
                        {"weights_digest", hex(f.weights_digest)},
                        {"optimizer_state_digest", hex(f.optimizer_state_digest)},
                        {"p50_step_s", f.p50_step_s},
                        {"p99_step_s", f.p99_step_s},
                        {"mean_step_s", f.mean_step_s},
                        {"mean_visible_optimizer_s", f.mean_visible_optimizer_s}});
  }
  s["ranks"] = ranks.size();
  s["replicas_identical"] = identical;
  s["slowest_rank_p50_step_s"] = p50;
  s["slowest_rank_p99_step_s"] = p99;
  s["slowest_rank_mean_step_s"] = mean;
  s["slowest_rank_mean_visible_optimizer_s"] = visible;
  s["per_rank"] = per_rank;
  return s;
}

}  // namespace asteria::cli

#pragma once
// `asteria train` over data-parallel ranks (launched by mpirun): which part of the global batch a
// rank trains on, the digests that show replicas equal, and the figures rank 0 gathers into one
// summary. One rank (no communicator) is the plain run.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/platform/comm.hpp"
#include "core/runtime/driver/run_summary.hpp"

namespace asteria::cli {

// This process's place among the ranks.
struct RankPlace {
  int rank = 0;
  int ranks = 1;
  platform::Comm* comm = nullptr;  // null with one rank
  bool leads() const noexcept { return rank == 0; }
};
RankPlace rank_place(platform::Comm* comm);

// Sequences of rank r in a global batch of `batch` (each `per_sequence` tokens long): the r-th of
// `ranks` equal slices. Throws InputError naming --batch when the batch does not split evenly.
int local_batch(int batch, int ranks);
// The global batch of `ranks` ranks of `rank_batch` sequences each (--batch is per rank); throws
// InputError naming --batch past the largest batch an int counts.
int global_batch(int rank_batch, int ranks);
template <class Token>
std::span<const Token> rank_slice(std::span<const Token> global, int batch, std::size_t per_sequence,
                                  const RankPlace& place) {
  const std::size_t local = static_cast<std::size_t>(local_batch(batch, place.ranks));
  return global.subspan(static_cast<std::size_t>(place.rank) * local * per_sequence, local * per_sequence);
}

// Where a rank writes its own files under --out: rank<r>/ with several ranks, DIR itself with one.
std::filesystem::path rank_directory(const std::filesystem::path& out, const RankPlace& place);

// Blocks until every rank has called it (a one-value all-reduce); a no-op for one rank.
void barrier(const RankPlace& place, const std::string& why);
// The mean over ranks of a per-rank value (the global batch's loss from the ranks' own).
double mean_over_ranks(const RankPlace& place, double value, const std::string& why);

// 64-bit FNV-1a over bytes, continued from `digest` (so several buffers chain into one).
std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t digest = 14695981039346656037ull);
std::string hex(std::uint64_t digest);

// What each rank contributes to the aggregate summary.
struct RankFigures {
  std::uint64_t weights_digest = 0;
  std::uint64_t optimizer_state_digest = 0;
  double p50_step_s = 0.0;
  double p99_step_s = 0.0;
  double mean_step_s = 0.0;
  double mean_visible_optimizer_s = 0.0;
};
// Every rank's figures, in rank order, on every rank (an all-gather).
std::vector<RankFigures> gather_figures(const RankPlace& place, const RankFigures& mine);
// The aggregate summary.json of a data-parallel run: ranks, per-rank figures, the slowest rank's
// p50/p99 step time, and whether every replica's weights and optimizer state are bitwise equal.
nlohmann::ordered_json aggregate_summary(const std::vector<RankFigures>& ranks, const nlohmann::ordered_json& rank0);

}  // namespace asteria::cli

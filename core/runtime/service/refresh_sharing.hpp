#pragma once
// Refreshes shared among data-parallel ranks: each block has one owner rank that runs its refresh
// jobs on its host workers; the result travels to the other ranks, which publish it exactly as if
// they had computed it (RefreshJob::save_result / load_result), so replicas stay bitwise equal
// while each rank's host workers carry only its share of the refresh work.
//
// Owners are chosen by refresh cost, largest first to the least loaded: first among the nodes
// (balancing each node's host CPUs), then among the ranks of the chosen node. Ties go to the
// lowest node and rank, so every rank computes the same assignment.
//
// A result travels hierarchically: a broadcast inside the owner's node, once between the node
// leaders, then inside each other node (each node's network link carries it once).
#include <span>
#include <string>
#include <vector>

#include "core/platform/comm.hpp"
#include "core/platform/pending.hpp"

namespace asteria::runtime {

// World rank of each block's owner; `costs` per block (any unit, >= 0). Throws
// std::invalid_argument for a negative or non-finite cost.
std::vector<int> assign_refresh_owners(std::span<const double> costs, platform::Comm& comm);

// Sends `image` (size bytes, a multiple of 4 not needed: moved as bytes) from world rank `owner`
// to every rank, starting on the owner once `produced` has finished (its failure fails the
// exchange on every rank). Every rank calls it, in the same order. Returns this rank's last call:
// when it has finished, the image holds the owner's bytes here. `image.data()` null: bytes only.
platform::Pending share_result(platform::Comm& comm, std::span<std::byte> image, std::size_t bytes, int owner,
                               const platform::Pending& produced, const std::string& label,
                               const platform::OpTag& tag);

}  // namespace asteria::runtime

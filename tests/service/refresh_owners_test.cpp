// Refresh owners: largest refresh first to the least-loaded node (per rank it holds), then to
// that node's least-loaded rank; the same answer on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

#include "core/runtime/service/refresh_sharing.hpp"

namespace asteria::runtime {
namespace {

// A Comm that only answers where ranks live (assignment calls no collective).
class LayoutComm final : public platform::Comm {
 public:
  LayoutComm(int rank, std::vector<int> node_of) : rank_(rank), node_of_(std::move(node_of)) {}
  platform::CommGroup& world() override { return world_; }
  int node_of(int world_rank) const override { return node_of_.at(static_cast<std::size_t>(world_rank)); }

 private:
  class World final : public platform::CommGroup {
   public:
    explicit World(LayoutComm& c) : c_(c) {}
    int rank() const noexcept override { return c_.rank_; }
    int size() const noexcept override { return static_cast<int>(c_.node_of_.size()); }
    int world_rank(int r) const override { return r; }
    platform::Pending all_reduce(platform::CommBuffer, platform::ReduceOp, platform::CollectiveOptions) override {
      throw std::logic_error("unused");
    }
    platform::Pending reduce_scatter(platform::CommBuffer, platform::CommBuffer, platform::ReduceOp,
                                     platform::CollectiveOptions) override {
      throw std::logic_error("unused");
    }
    platform::Pending all_gather(platform::CommBuffer, platform::CommBuffer, platform::CollectiveOptions) override {
      throw std::logic_error("unused");
    }
    platform::Pending broadcast(platform::CommBuffer, int, platform::CollectiveOptions) override {
      throw std::logic_error("unused");
    }
    std::unique_ptr<platform::CommGroup> split(int, int) override { throw std::logic_error("unused"); }

   private:
    LayoutComm& c_;
  };
  int rank_;
  std::vector<int> node_of_;
  World world_{*this};
};

TEST(RefreshOwners, BalancesNodesFirstThenRanks) {
  // 2 nodes x 2 ranks; costs 8, 7, 6, 5, 4, 3, 2, 1: LPT over nodes gives node loads 18 and 18.
  LayoutComm comm(0, {0, 0, 1, 1});
  const std::vector<double> costs{8, 7, 6, 5, 4, 3, 2, 1};
  const std::vector<int> owner = assign_refresh_owners(costs, comm);
  ASSERT_EQ(owner.size(), costs.size());
  std::map<int, double> node_load, rank_load;
  for (std::size_t b = 0; b < costs.size(); ++b) {
    node_load[comm.node_of(owner[b])] += costs[b];
    rank_load[owner[b]] += costs[b];
  }
  EXPECT_EQ(node_load[0], 18.0);
  EXPECT_EQ(node_load[1], 18.0);
  // Largest first: block 0 to node 0, rank 0; block 1 to node 1, rank 2.
  EXPECT_EQ(owner[0], 0);
  EXPECT_EQ(owner[1], 2);
  for (int r = 0; r < 4; ++r) EXPECT_GT(rank_load[r], 0.0) << "rank " << r << " owns nothing";
  const double most = std::max({rank_load[0], rank_load[1], rank_load[2], rank_load[3]});
  EXPECT_LE(most, 10.0);  // the ideal is 9
}

TEST(RefreshOwners, EveryRankComputesTheSameOwnersAndUnevenNodesWeighByTheirRanks) {
  // Node 0 holds 3 ranks, node 1 one: node 0 should carry about three quarters of the work.
  std::vector<double> costs(40);
  std::iota(costs.begin(), costs.end(), 1.0);
  std::vector<int> first;
  for (int rank = 0; rank < 4; ++rank) {
    LayoutComm comm(rank, {0, 0, 0, 1});
    const std::vector<int> owner = assign_refresh_owners(costs, comm);
    if (rank == 0) first = owner;
    EXPECT_EQ(owner, first) << "rank " << rank;
  }
  double node1 = 0.0, total = 0.0;
  for (std::size_t b = 0; b < costs.size(); ++b) {
    total += costs[b];
    if (first[b] == 3) node1 += costs[b];
  }
  EXPECT_NEAR(node1 / total, 0.25, 0.03);
}

TEST(RefreshOwners, RejectsNegativeCosts) {
  LayoutComm comm(0, {0, 0});
  const std::vector<double> costs{1.0, -1.0};
  EXPECT_THROW(assign_refresh_owners(costs, comm), std::invalid_argument);
}

}  // namespace
}  // namespace asteria::runtime

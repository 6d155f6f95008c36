// The placement planner's solver core: the cost model by hand, the exact and MIP methods against
// each other and against brute force, capacities, baselines and subgroups.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/common/error.hpp"
#include "core/planner/placement_baselines.hpp"
#include "core/planner/placement_problem.hpp"
#include "core/planner/placement_solver.hpp"
#include "core/planner/subgroups.hpp"

namespace asteria::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// "b<i>" (appended: GCC 12 warns falsely, -Wrestrict, on "b" + std::to_string(i)).
std::string name(std::size_t i) {
  std::string s = "b";
  s += std::to_string(i);
  return s;
}

double at(const Usage& u, Resource r) { return u[static_cast<std::size_t>(r)]; }

// Message of the InputError `f` throws (fails the test when it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

ResourceRates simple_rates() {
  ResourceRates r;
  r.link_h2d_bytes_per_s = 100;
  r.link_d2h_bytes_per_s = 50;
  r.nvme_read_bytes_per_s = 20;
  r.nvme_write_bytes_per_s = 10;
  r.host_workers = 4;
  return r;
}

TEST(PlacementProblem, OptionUsageByHand) {
  const BlockDemand b{"b", 1000, 200, 100, 0.5, 2.0};
  const ResourceRates r = simple_rates();
  // device tier, device site: only the device update.
  Usage u = option_usage(b, r, {Tier::device, Site::device});
  EXPECT_EQ(u, (Usage{0, 0, 0, 0, 0.5, 0}));
  // host tier, device site: state up 1000/100 = 10 s and back 1000/50 = 20 s.
  u = option_usage(b, r, {Tier::host, Site::device});
  EXPECT_EQ(u, (Usage{10, 20, 0, 0, 0.5, 0}));
  // nvme tier, device site: read 1000/20 = 50 s, write 1000/10 = 100 s, plus the link both ways.
  u = option_usage(b, r, {Tier::nvme, Site::device});
  EXPECT_EQ(u, (Usage{10, 20, 50, 100, 0.5, 0}));
  // host tier, host site: gradient down 200/50 = 4 s, weights up 100/100 = 1 s, 2 s / 4 workers.
  u = option_usage(b, r, {Tier::host, Site::host});
  EXPECT_EQ(u, (Usage{1, 4, 0, 0, 0, 0.5}));
  // nvme tier, host site: the disk both ways plus the host site's charges.
  u = option_usage(b, r, {Tier::nvme, Site::host});
  EXPECT_EQ(u, (Usage{1, 4, 50, 100, 0, 0.5}));
  // Not an option.
  EXPECT_NE(input_error([&] { option_usage(b, r, {Tier::device, Site::host}); }).find("device/host"),
            std::string::npos);
  // Half-duplex disk: reads and writes share nvme_read, 50 + 100 s.
  ResourceRates shared = r;
  shared.nvme_shared = true;
  u = option_usage(b, shared, {Tier::nvme, Site::device});
  EXPECT_EQ(at(u, Resource::nvme_read), 150);
  EXPECT_EQ(at(u, Resource::nvme_write), 0);
}

TEST(PlacementProblem, PredictSumsResourcesAndNamesTheBindingOne) {
  PlacementProblem p;
  p.rates = simple_rates();
  p.blocks = {{"a", 1000, 200, 100, 0.5, 2.0}, {"b", 500, 100, 100, 0.25, 1.0}};
  p.capacities = {0, 1000, kInf};
  const Prediction pr = predict(p, {{Tier::host, Site::host}, {Tier::nvme, Site::device}});
  // a: {1, 4, 0, 0, 0, 0.5}; b: {5, 10, 25, 50, 0.25, 0}.
  EXPECT_EQ(pr.resource_s, (Usage{6, 14, 25, 50, 0.25, 0.5}));
  EXPECT_EQ(pr.time_s, 50);
  EXPECT_EQ(pr.binding, Resource::nvme_write);
  EXPECT_EQ(pr.resting_bytes, (std::array<double, 3>{0, 1000, 500}));
  EXPECT_TRUE(pr.fits);
  EXPECT_FALSE(predict(p, {{Tier::host, Site::host}, {Tier::host, Site::device}}).fits);  // host: 1500 > 1000
  EXPECT_THROW(predict(p, {{Tier::host, Site::host}}), InputError);
  EXPECT_THROW(predict(p, {{Tier::device, Site::host}, {Tier::host, Site::host}}), InputError);
}

TEST(PlacementProblem, ValidateNamesFieldAndExpectation) {
  PlacementProblem p;
  p.rates = simple_rates();
  p.blocks = {{"a", 1, 1, 1, 1, 1}, {"w2", 1, 1, 1, 1, 1}};
  p.capacities = {1, 1, kInf};
  EXPECT_NO_THROW(validate(p));
  PlacementProblem q = p;
  q.blocks[1].state_bytes = -1;
  std::string m = input_error([&] { validate(q); });
  EXPECT_NE(m.find("blocks[1] ('w2').state_bytes"), std::string::npos) << m;
  EXPECT_NE(m.find(">= 0"), std::string::npos) << m;
  q = p;
  q.blocks[0].host_update_s = std::nan("");
  EXPECT_NE(input_error([&] { validate(q); }).find("host_update_s"), std::string::npos);
  q = p;
  q.rates.link_d2h_bytes_per_s = 0;
  EXPECT_NE(input_error([&] { validate(q); }).find("rates.link_d2h_bytes_per_s"), std::string::npos);
  q = p;
  q.rates.nvme_read_bytes_per_s = kInf;
  EXPECT_NE(input_error([&] { validate(q); }).find("rates.nvme_read_bytes_per_s"), std::string::npos);
  q = p;
  q.rates.host_workers = 0;
  EXPECT_NE(input_error([&] { validate(q); }).find("host_workers"), std::string::npos);
  q = p;
  q.capacities.host = -5;
  EXPECT_NE(input_error([&] { validate(q); }).find("capacities.host"), std::string::npos);
  q = p;
  q.capacities.device = std::nan("");
  EXPECT_NE(input_error([&] { solve(q); }).find("capacities.device"), std::string::npos);
}

// Every assignment, for small problems: the oracle of the oracle.
std::optional<double> brute_force(const PlacementProblem& p, const std::vector<std::optional<BlockChoice>>& fixed) {
  const std::size_t n = p.blocks.size();
  std::optional<double> best;
  std::vector<int> idx(n, 0);
  Assignment a(n);
  while (true) {
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = kOptions[static_cast<std::size_t>(idx[i])];
      if (!fixed.empty() && fixed[i] && !(*fixed[i] == a[i])) ok = false;
    }
    if (ok) {
      const Prediction pr = predict(p, a);
      if (pr.fits && (!best || pr.time_s < *best)) best = pr.time_s;
    }
    std::size_t k = 0;
    while (k < n && ++idx[k] == kOptionCount) idx[k++] = 0;
    if (k == n) break;
  }
  return best;
}

PlacementProblem random_problem(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  PlacementProblem p;
  p.rates.link_h2d_bytes_per_s = 10e9 + 20e9 * unit(rng);
  p.rates.link_d2h_bytes_per_s = 10e9 + 20e9 * unit(rng);
  p.rates.nvme_read_bytes_per_s = 2e9 + 5e9 * unit(rng);
  p.rates.nvme_write_bytes_per_s = 1e9 + 4e9 * unit(rng);
  p.rates.nvme_shared = unit(rng) < 0.3;
  p.rates.host_workers = 1 + static_cast<int>(16 * unit(rng));
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    BlockDemand b;
    b.label = name(i);
    const double params = std::round(1e6 + 1e8 * unit(rng));
    b.state_bytes = params * (4 + std::round(12 * unit(rng)));
    b.gradient_bytes = params * 2;
    b.weight_bytes = params * 2;
    b.device_update_s = b.state_bytes / 2e12 * (1 + unit(rng));
    b.host_update_s = b.state_bytes / 5e9 * (1 + 3 * unit(rng));
    total += b.state_bytes;
    p.blocks.push_back(b);
  }
  p.capacities.device = std::round(total * 0.6 * unit(rng));
  p.capacities.host = std::round(total * (0.1 + 0.8 * unit(rng)));
  p.capacities.nvme = unit(rng) < 0.5 ? kInf : std::round(total * 0.8 * unit(rng));
  return p;
}

TEST(PlacementSolver, ExactAndMipAgreeWithBruteForceOnRandomInstances) {
  std::mt19937 rng(20241021);
  int feasible = 0;
  for (int instance = 0; instance < 50; ++instance) {
    const std::size_t n = 2 + static_cast<std::size_t>(instance % 5);  // 2..6 blocks
    const PlacementProblem p = random_problem(rng, n);
    std::vector<std::optional<BlockChoice>> fixed;
    if (instance % 7 == 3) {  // now and then a forced block
      fixed.assign(n, std::nullopt);
      fixed[0] = BlockChoice{Tier::host, Site::host};
    }
    const std::optional<double> oracle = brute_force(p, fixed);
    SolverOptions exact;
    exact.method = Method::exact;
    exact.fixed = fixed;
    SolverOptions mip = exact;
    mip.method = Method::mip;
    if (!oracle) {
      EXPECT_THROW(solve(p, exact), InputError) << "instance " << instance;
      EXPECT_THROW(solve(p, mip), InputError) << "instance " << instance;
      continue;
    }
    ++feasible;
    const Solution se = solve(p, exact);
    const Solution sm = solve(p, mip);
    EXPECT_EQ(se.status, SolveStatus::optimal);
    EXPECT_EQ(sm.status, SolveStatus::optimal);
    EXPECT_EQ(sm.method, Method::mip);
    EXPECT_TRUE(se.prediction.fits);
    EXPECT_TRUE(sm.prediction.fits);
    EXPECT_NEAR(se.prediction.time_s, *oracle, 1e-9 * *oracle) << "instance " << instance;
    EXPECT_NEAR(sm.prediction.time_s, se.prediction.time_s, 1e-9 * se.prediction.time_s) << "instance " << instance;
    for (std::size_t i = 0; i < fixed.size(); ++i)
      if (fixed[i]) {
        EXPECT_EQ(se.assignment[i], *fixed[i]);
        EXPECT_EQ(sm.assignment[i], *fixed[i]);
      }
  }
  EXPECT_GE(feasible, 35);  // the generator mostly makes feasible instances
}

TEST(PlacementSolver, ExactAndMipAgreeOnLargerInstances) {
  std::mt19937 rng(7);
  for (int instance = 0; instance < 4; ++instance) {
    PlacementProblem p = random_problem(rng, 10);
    p.capacities.nvme = kInf;
    SolverOptions exact;
    exact.method = Method::exact;
    SolverOptions mip;
    mip.method = Method::mip;
    const Solution se = solve(p, exact);
    const Solution sm = solve(p, mip);
    EXPECT_NEAR(sm.prediction.time_s, se.prediction.time_s, 1e-9 * se.prediction.time_s) << "instance " << instance;
  }
}

// Four equal blocks whose state may rest only on the host (device and NVMe hold nothing); link
// 10 B/s each way, 2 host workers. Per block (state 40 B, gradient 10 B, weights 10 B, device
// update 1 s, host update 8 s on one worker):
//   host/device: h2d 40/10 = 4 s, d2h 4 s, device 1 s
//   host/host:   d2h 10/10 = 1 s, h2d 1 s, host 8/2 = 4 s
// With k blocks on the device: link (each way) 4k + (4 - k) = 3k + 4, device k, host 4(4 - k).
//   k = 0 (all host):   link 4,  host 16       -> T = 16
//   k = 1:              link 7,  host 12       -> T = 12
//   k = 2:              link 10, host 8        -> T = 10   (the optimum: the link binds)
//   k = 3:              link 13, host 4        -> T = 13
//   k = 4 (all device): link 16, device 4      -> T = 16
TEST(PlacementSolver, MixedSitesBeatBothAllDeviceAndAllHost) {
  PlacementProblem p;
  p.rates = {10, 10, 1, 1, false, 2};
  for (int i = 0; i < 4; ++i) p.blocks.push_back({name(i), 40, 10, 10, 1, 8});
  p.capacities = {0, kInf, 0};
  for (Method m : {Method::exact, Method::mip, Method::automatic}) {
    SolverOptions o;
    o.method = m;
    const Solution s = solve(p, o);
    EXPECT_DOUBLE_EQ(s.prediction.time_s, 10) << to_string(m);
    int on_device = 0;
    for (const BlockChoice& c : s.assignment) {
      EXPECT_EQ(c.tier, Tier::host);
      on_device += c.site == Site::device ? 1 : 0;
    }
    EXPECT_EQ(on_device, 2) << to_string(m);
  }
  const Baseline dev = all_device_site(p);
  const Baseline host = all_host_site(p);
  EXPECT_DOUBLE_EQ(dev.prediction.time_s, 16);
  EXPECT_EQ(dev.prediction.binding, Resource::link_h2d);
  EXPECT_DOUBLE_EQ(host.prediction.time_s, 16);
  EXPECT_EQ(host.prediction.binding, Resource::host_compute);
  EXPECT_DOUBLE_EQ(interleaved(p, 2).prediction.time_s, 10);  // happens to hit the optimum here
  EXPECT_DOUBLE_EQ(interleaved(p, 4).prediction.time_s, 12);
}

// The same blocks, forty of them: with k on the device, link (each way) 3k + 40 s, host
// 4(40 - k) s. They cross at k = 120/7 = 17.1: k = 17 gives link 91, host 92 -> T = 92; k = 18
// gives link 94, host 88 -> T = 94. The MIP counts identical blocks per option (no symmetry to
// search through), so it proves this at once.
TEST(PlacementSolver, MipSolvesManyIdenticalBlocks) {
  PlacementProblem p;
  p.rates = {10, 10, 1, 1, false, 2};
  for (int i = 0; i < 40; ++i) p.blocks.push_back({name(i), 40, 10, 10, 1, 8});
  p.capacities = {0, kInf, 0};
  SolverOptions o;
  o.method = Method::mip;
  const Solution s = solve(p, o);
  EXPECT_EQ(s.status, SolveStatus::optimal);
  EXPECT_DOUBLE_EQ(s.prediction.time_s, 92);
  EXPECT_EQ(s.prediction.binding, Resource::host_compute);
  int on_device = 0;
  for (const BlockChoice& c : s.assignment) on_device += c.site == Site::device ? 1 : 0;
  EXPECT_EQ(on_device, 17);
}

TEST(PlacementSolver, LimitsReturnTheBestAssignmentFoundWithItsGap) {
  std::mt19937 rng(7);
  PlacementProblem p = random_problem(rng, 9);
  p.capacities.nvme = kInf;
  SolverOptions o;
  o.method = Method::exact;
  const Solution optimum = solve(p, o);
  o.exact_node_limit = 5;
  const Solution stopped = solve(p, o);
  EXPECT_EQ(stopped.status, SolveStatus::node_limit);
  EXPECT_EQ(stopped.method, Method::exact);
  EXPECT_TRUE(stopped.prediction.fits);
  EXPECT_GE(stopped.prediction.time_s, optimum.prediction.time_s);
  EXPECT_GE(stopped.mip_gap, (stopped.prediction.time_s - optimum.prediction.time_s) / stopped.prediction.time_s - 1e-12);
  EXPECT_LE(stopped.mip_gap, 1);
  // automatic hands the problem to the MIP, which finishes the proof.
  o.method = Method::automatic;
  const Solution handed = solve(p, o);
  EXPECT_EQ(handed.method, Method::mip);
  EXPECT_EQ(handed.status, SolveStatus::optimal);
  EXPECT_NEAR(handed.prediction.time_s, optimum.prediction.time_s, 1e-9 * optimum.prediction.time_s);

  // GLPK's time limit: forty blocks of assorted sizes under tight capacities rarely finish in
  // 50 ms; either way the answer fits, and a stopped search says how far from proven it is.
  PlacementProblem big = random_problem(rng, 40);
  big.capacities.nvme = kInf;
  SolverOptions quick;
  quick.method = Method::mip;
  quick.time_limit_s = 0.05;
  const Solution q = solve(big, quick);
  EXPECT_TRUE(q.status == SolveStatus::time_limit || q.status == SolveStatus::optimal) << to_string(q.status);
  EXPECT_TRUE(q.prediction.fits);
  EXPECT_GE(q.mip_gap, 0);
  EXPECT_LE(q.mip_gap, 1);
  if (q.status == SolveStatus::optimal) {
    EXPECT_EQ(q.mip_gap, 0);
  }
}

TEST(PlacementSolver, CapacitiesAreRespected) {
  // Device updates are cheap and the link slow: unconstrained, every block rests on the device.
  // The device holds only two of the five blocks; streaming a block costs 30 s on the link
  // while a host update costs 5 s, so the other three go to the host site.
  PlacementProblem p;
  p.rates = {10, 10, 1, 1, false, 1};
  for (int i = 0; i < 5; ++i) p.blocks.push_back({name(i), 300, 10, 10, 1, 5});
  p.capacities = {600, kInf, 0};
  for (Method m : {Method::exact, Method::mip}) {
    SolverOptions o;
    o.method = m;
    const Solution s = solve(p, o);
    EXPECT_TRUE(s.prediction.fits);
    EXPECT_LE(s.prediction.resting_bytes[0], 600);
    EXPECT_EQ(s.prediction.resting_bytes[2], 0);
    // Two on the device (2 s of device), three on the host (15 s of host work, 3 s each way).
    EXPECT_DOUBLE_EQ(s.prediction.time_s, 15) << to_string(m);
    EXPECT_EQ(s.prediction.binding, Resource::host_compute);
  }
}

TEST(PlacementSolver, InfeasibleCapacitiesNameTheTierAndTheShortfall) {
  PlacementProblem p;
  p.rates = simple_rates();
  p.blocks = {{"a", 100, 1, 1, 1, 1}, {"b", 100, 1, 1, 1, 1}, {"c", 100, 1, 1, 1, 1}};
  p.capacities = {50, 100, 100};  // 250 bytes of room for 300
  for (Method m : {Method::exact, Method::mip}) {
    SolverOptions o;
    o.method = m;
    const std::string msg = input_error([&] { solve(p, o); });
    EXPECT_NE(msg.find("capacities.nvme"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at least 50 bytes short"), std::string::npos) << msg;
  }
  // Room enough in total (350), but the blocks do not split: only two fit whole.
  p.capacities = {50, 150, 150};
  const std::string msg = input_error([&] { solve(p); });
  EXPECT_NE(msg.find("does not pack"), std::string::npos) << msg;
  // Forced blocks overflowing their tier.
  p.capacities = {kInf, 150, kInf};
  SolverOptions o;
  o.fixed = {BlockChoice{Tier::host, Site::host}, BlockChoice{Tier::host, Site::device}, std::nullopt};
  const std::string forced = input_error([&] { solve(p, o); });
  EXPECT_NE(forced.find("capacities.host"), std::string::npos) << forced;
  EXPECT_NE(forced.find("at least 50 bytes short"), std::string::npos) << forced;
  // The fill rule of the baselines reports the same way.
  p.capacities = {50, 100, 100};
  EXPECT_NE(input_error([&] { all_device_site(p); }).find("capacities.nvme"), std::string::npos);
}

TEST(PlacementSolver, OptionsAreChecked) {
  PlacementProblem p;
  p.rates = simple_rates();
  for (int i = 0; i < 21; ++i) p.blocks.push_back({"b", 1, 1, 1, 1, 1});
  p.capacities = {kInf, kInf, kInf};
  SolverOptions o;
  o.method = Method::exact;
  EXPECT_NE(input_error([&] { solve(p, o); }).find("exact_block_limit = 20"), std::string::npos);
  o = {};
  o.fixed.assign(3, std::nullopt);
  EXPECT_NE(input_error([&] { solve(p, o); }).find("fixed"), std::string::npos);
  o.fixed.assign(21, std::nullopt);
  o.fixed[4] = BlockChoice{Tier::device, Site::host};
  EXPECT_NE(input_error([&] { solve(p, o); }).find("fixed[4]"), std::string::npos);
  o = {};
  o.time_limit_s = 0;
  EXPECT_NE(input_error([&] { solve(p, o); }).find("time_limit_s"), std::string::npos);
  o = {};
  o.mip_gap = -1;
  EXPECT_NE(input_error([&] { solve(p, o); }).find("mip_gap"), std::string::npos);
}

TEST(PlacementSolver, NoBlocksTakeNoTime) {
  PlacementProblem p;
  p.rates = simple_rates();
  const Solution s = solve(p);
  EXPECT_TRUE(s.assignment.empty());
  EXPECT_EQ(s.prediction.time_s, 0);
}

TEST(PlacementSolver, AutomaticUsesMipForManyBlocksAndBeatsTheBaselines) {
  std::mt19937 rng(11);
  PlacementProblem p = random_problem(rng, 30);
  p.capacities.nvme = kInf;
  SolverOptions o;
  o.time_limit_s = 2;  // proves it in tens of milliseconds
  const Solution s = solve(p, o);
  EXPECT_EQ(s.method, Method::mip);
  EXPECT_EQ(s.status, SolveStatus::optimal);
  EXPECT_TRUE(s.prediction.fits);
  for (const Baseline& b : {all_device_site(p), all_host_site(p), interleaved(p, 2), interleaved(p, 4)})
    EXPECT_LE(s.prediction.time_s, b.prediction.time_s * (1 + 1e-12)) << b.name;
}

TEST(PlacementBaselines, InterleavedPutsEveryKthBlockOnTheDevice) {
  PlacementProblem p;
  p.rates = simple_rates();
  for (int i = 0; i < 8; ++i) p.blocks.push_back({name(i), 10, 1, 1, 1, 1});
  p.capacities = {10, 30, kInf};
  const Baseline b = interleaved(p, 3);
  EXPECT_EQ(b.name, "interleaved(k=3)");
  // Sites: blocks 2 and 5 (the 3rd and 6th) on the device. Tiers by the fill rule: block 2 takes
  // the device's room; host-site blocks 0, 1, 3 fill the host; the rest rest on NVMe (device
  // full for block 5, host full).
  const Assignment expected{{Tier::host, Site::host},   {Tier::host, Site::host},   {Tier::device, Site::device},
                            {Tier::host, Site::host},   {Tier::nvme, Site::host},   {Tier::nvme, Site::device},
                            {Tier::nvme, Site::host},   {Tier::nvme, Site::host}};
  EXPECT_EQ(b.assignment, expected);
  EXPECT_EQ(b.prediction.time_s, predict(p, expected).time_s);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(interleaved(p, 1).assignment[i].site, Site::device);
  EXPECT_NE(input_error([&] { interleaved(p, 0); }).find("k"), std::string::npos);
  for (const BlockChoice& c : all_host_site(p).assignment) EXPECT_EQ(c.site, Site::host);
}

TEST(PlacementBaselines, ForcedChoicesExpressABaseline) {
  std::mt19937 rng(3);
  const PlacementProblem p = random_problem(rng, 6);
  PlacementProblem roomy = p;
  roomy.capacities = {0, kInf, kInf};
  const Baseline b = all_host_site(roomy);
  SolverOptions o;
  for (const BlockChoice& c : b.assignment) o.fixed.emplace_back(c);
  const Solution s = solve(roomy, o);
  EXPECT_EQ(s.assignment, b.assignment);
  EXPECT_EQ(s.prediction.time_s, b.prediction.time_s);
}

TEST(Subgroups, ConserveTotalsAndOrder) {
  std::mt19937 rng(5);
  const PlacementProblem p = random_problem(rng, 37);
  const Subgroups g = subgroups(p.blocks, 8);
  ASSERT_LE(g.demands.size(), 8u);
  ASSERT_GE(g.demands.size(), 6u);
  ASSERT_EQ(g.first.size(), g.demands.size() + 1);
  EXPECT_EQ(g.first.front(), 0u);
  EXPECT_EQ(g.first.back(), 37u);
  double state = 0, grad = 0, weights = 0, dev = 0, host = 0;
  for (const BlockDemand& b : p.blocks) {
    state += b.state_bytes;
    grad += b.gradient_bytes;
    weights += b.weight_bytes;
    dev += b.device_update_s;
    host += b.host_update_s;
  }
  double gs = 0, gg = 0, gw = 0, gd = 0, gh = 0;
  for (std::size_t k = 0; k < g.demands.size(); ++k) {
    EXPECT_LT(g.first[k], g.first[k + 1]);
    gs += g.demands[k].state_bytes;
    gg += g.demands[k].gradient_bytes;
    gw += g.demands[k].weight_bytes;
    gd += g.demands[k].device_update_s;
    gh += g.demands[k].host_update_s;
  }
  EXPECT_DOUBLE_EQ(gs, state);
  EXPECT_DOUBLE_EQ(gg, grad);
  EXPECT_DOUBLE_EQ(gw, weights);
  EXPECT_DOUBLE_EQ(gd, dev);
  EXPECT_DOUBLE_EQ(gh, host);
  EXPECT_EQ(g.demands.front().label.rfind("b0..", 0), 0u) << g.demands.front().label;

  // An assignment of subgroups predicts the same time for their blocks.
  PlacementProblem grouped = p;
  grouped.blocks = g.demands;
  grouped.capacities = {kInf, kInf, kInf};
  PlacementProblem blocks = p;
  blocks.capacities = grouped.capacities;
  const Baseline b = interleaved(grouped, 3);
  const Prediction expanded = predict(blocks, expand(g, b.assignment));
  EXPECT_NEAR(expanded.time_s, b.prediction.time_s, 1e-12 * b.prediction.time_s);
  EXPECT_EQ(expanded.resting_bytes, b.prediction.resting_bytes);

  // Equal blocks split evenly; more subgroups than blocks keeps every block alone.
  std::vector<BlockDemand> equal(12, BlockDemand{"x", 10, 1, 1, 1, 1});
  const Subgroups even = subgroups(equal, 4);
  EXPECT_EQ(even.first, (std::vector<std::size_t>{0, 3, 6, 9, 12}));
  EXPECT_EQ(subgroups(equal, 20).demands.size(), 12u);
  EXPECT_EQ(subgroups(equal, 1).demands.size(), 1u);
  EXPECT_THROW(subgroups(equal, 0), InputError);
  EXPECT_THROW(expand(even, Assignment(3)), InputError);
}

}  // namespace
}  // namespace asteria::planner

// The real backend's memory beyond the seam contract: alignment, move accounting, modelled
// links, NVMe provider plumbing and failures, regions released while a copy is in flight.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <random>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/real/real_platform.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/platform/in_memory_nvme_tier.hpp"

namespace asteria::real {
namespace {

using platform::Activity;
using platform::ActivityRole;
using platform::OpTag;
using platform::Region;
using platform::Tier;
using testing::InMemoryNvmeTier;

RealPlatformOptions small_platform(NvmeTier* nvme = nullptr, platform::ActivitySink* activities = nullptr) {
  RealPlatformOptions o;
  o.memory.budgets = {1 << 20, 1 << 20, 1 << 20};
  o.host_threads = 2;
  o.nvme = nvme;
  o.activities = activities;
  return o;
}

Region must(std::optional<Region> r) {
  if (!r) throw std::runtime_error("allocation failed");
  return *r;
}

TEST(RealMemory, HostAddressableRegionsAreAlignedForSimdAndODirect) {
  RealPlatform p(small_platform());
  RealMemory& m = p.real_memory();
  EXPECT_FALSE(m.device_is_gpu());
  for (Tier tier : {Tier::host, Tier::device}) {
    Region small = must(m.allocate(tier, 100, "small"));
    Region paged = must(m.allocate(tier, 8192 + 3, "paged"));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.host_address(small)) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.host_address(paged)) % 4096, 0u);
    const std::byte* bytes = m.host_address(paged);
    for (std::size_t i = 0; i < paged.bytes; ++i) ASSERT_EQ(bytes[i], std::byte{0}) << "regions start zeroed";
    m.release(small);
    m.release(paged);
  }
}

TEST(RealMemory, AReleasedBufferIsReusedZeroFilledByTheNextRegionOfItsSize) {
  RealPlatform p(small_platform());
  RealMemory& m = p.real_memory();
  for (Tier tier : {Tier::host, Tier::device}) {
    Region other_size = must(m.allocate(tier, 4096, "other size"));
    Region first = must(m.allocate(tier, 8192 + 3, "first"));
    std::byte* const address = m.host_address(first);
    std::memset(address, 0xAB, first.bytes);
    m.release(first);
    EXPECT_EQ(m.cached_bytes(tier), 8192u + 3u);
    Region second = must(m.allocate(tier, 8192 + 3, "second"));
    EXPECT_EQ(m.host_address(second), address);
    EXPECT_EQ(m.reused_buffers(tier), 1u);
    EXPECT_EQ(m.cached_bytes(tier), 0u);
    for (std::size_t i = 0; i < second.bytes; ++i) ASSERT_EQ(address[i], std::byte{0}) << "reused regions start zeroed";
    m.release(other_size);
    m.release(second);
  }
}

TEST(RealMemory, KeptBuffersNeverTakeTheTierPastThePeakOfItsLiveBytes) {
  RealPlatform p(small_platform());
  RealMemory& m = p.real_memory();
  constexpr std::size_t kSmall = 100 * 4096;
  std::vector<Region> held;
  for (int i = 0; i < 2; ++i) held.push_back(must(m.allocate(Tier::host, kSmall, "small")));
  for (Region& r : held) m.release(r);
  const std::size_t peak = m.usage(Tier::host).peak_resident;
  EXPECT_EQ(peak, 2 * kSmall);
  EXPECT_EQ(m.cached_bytes(Tier::host), 2 * kSmall) << "both fit under the peak";
  // A new size misses the cache: kept buffers give way so live + kept stay within the peak.
  Region big = must(m.allocate(Tier::host, 150 * 4096, "big"));
  EXPECT_LE(m.cached_bytes(Tier::host) + m.usage(Tier::host).resident, peak);
  EXPECT_EQ(m.cached_bytes(Tier::host), 0u);
  m.release(big);
  EXPECT_EQ(m.cached_bytes(Tier::host), 150u * 4096u);
  // The budget bounds the cache too: a full budget's worth of live regions leaves no room.
  const std::size_t budget = m.usage(Tier::host).capacity;
  Region all = must(m.allocate(Tier::host, budget, "all"));
  EXPECT_EQ(m.cached_bytes(Tier::host), 0u);
  m.release(all);
  EXPECT_EQ(m.usage(Tier::host).resident, 0u);
}

TEST(RealMemory, WithoutAnNvmeProviderTheNvmeTierHasNoRoom) {
  RealPlatform p(small_platform());
  EXPECT_EQ(p.memory().usage(Tier::nvme).capacity, 0u);
  EXPECT_FALSE(p.memory().allocate(Tier::nvme, 1, "x").has_value());
}

TEST(RealMemory, UnknownRegionsAreProgrammingErrors) {
  RealPlatform p(small_platform());
  Region ghost{Tier::host, 12345, 10, "ghost"};
  Region real = must(p.memory().allocate(Tier::host, 10, "real"));
  EXPECT_THROW(p.memory().release(ghost), std::logic_error);
  EXPECT_THROW((void)p.memory().copy(real, ghost), std::logic_error);
  EXPECT_EQ(p.memory().host_address(ghost), nullptr);
  Region invalid;
  p.memory().release(invalid);  // releasing an invalid region is a no-op
  p.memory().release(real);
}

TEST(RealMemory, EveryCopyIsAccountedPerTierPair) {
  test::RecordingSink sink(1);
  InMemoryNvmeTier nvme;
  RealPlatform p(small_platform(&nvme, &sink));
  RealMemory& m = p.real_memory();
  Region host = must(m.allocate(Tier::host, 1000, "h"));
  Region device = must(m.allocate(Tier::device, 600, "d"));
  Region disk = must(m.allocate(Tier::nvme, 1000, "n"));
  const OpTag upload{4, 7, -1, ActivityRole::op};
  const OpTag download{4, 8, 2, ActivityRole::launch};
  const OpTag evict{4, 9, -1, ActivityRole::op};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(m.copy(host, device, upload).status().ok());
  ASSERT_TRUE(m.copy(device, host, download).status().ok());
  ASSERT_TRUE(m.copy(host, disk, evict).status().ok());

  const MoveTotals to_device = m.totals(Tier::host, Tier::device);
  EXPECT_EQ(to_device.moves, 3u);
  EXPECT_EQ(to_device.bytes, 1800u);  // min(1000, 600) each time
  EXPECT_EQ(to_device.failures, 0u);
  EXPECT_GE(to_device.seconds, 0.0);
  EXPECT_EQ(m.totals(Tier::device, Tier::host).bytes, 600u);
  EXPECT_EQ(m.totals(Tier::host, Tier::nvme).bytes, 1000u);
  EXPECT_EQ(m.totals(Tier::nvme, Tier::host).moves, 0u);
  EXPECT_EQ(nvme.writes(), 1);

  const std::vector<MoveRecord> moves = m.moves();
  ASSERT_EQ(moves.size(), 5u);
  EXPECT_EQ(moves[3].from, Tier::device);
  EXPECT_EQ(moves[3].to, Tier::host);
  EXPECT_EQ(moves[4].to, Tier::nvme);
  EXPECT_NE(moves[4].label.find("h -> n"), std::string::npos) << moves[4].label;
  for (const MoveRecord& r : moves) {
    EXPECT_TRUE(r.ok);
    EXPECT_LE(r.start, r.end);
  }
  // Each copy is recorded on the track the simulator charges the same move to (the sink's unit
  // in the name), with its cause's step and op, as a transfer or, to or from NVMe, as I/O.
  const std::vector<Activity> recorded = sink.activities();
  ASSERT_EQ(recorded.size(), 5u);
  const char* const tracks[] = {"link h2d1", "link h2d1", "link h2d1", "link d2h1", "disk nvme1"};
  const OpTag causes[] = {upload, upload, upload, download, evict};
  const ActivityRole roles[] = {ActivityRole::transfer, ActivityRole::transfer, ActivityRole::transfer,
                                ActivityRole::transfer, ActivityRole::io};
  const double bytes[] = {600, 600, 600, 600, 1000};
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    const Activity& a = recorded[i];
    EXPECT_EQ(a.track, tracks[i]) << i;
    EXPECT_EQ(a.label, moves[i].label) << i;
    EXPECT_EQ(a.tag.step, causes[i].step) << i;
    EXPECT_EQ(a.tag.op, causes[i].op) << i;
    EXPECT_EQ(a.tag.launch, causes[i].launch) << i;
    EXPECT_EQ(a.tag.role, roles[i]) << i << ": " << platform::to_string(a.tag.role);
    EXPECT_EQ(a.cost.bytes(), bytes[i]) << i;
    EXPECT_LE(a.start, a.end) << i;
    if (i > 0) {
      EXPECT_LE(recorded[i - 1].end, a.start) << i << ": each copy was waited for before the next";
    }
    EXPECT_TRUE(a.ok) << i;
  }
}

TEST(RealMemory, CopiesBetweenLikeTiersAreRecordedOnTheirMemorysLink) {
  test::RecordingSink sink(0);
  RealPlatform p(small_platform(nullptr, &sink));
  RealMemory& m = p.real_memory();
  Region d1 = must(m.allocate(Tier::device, 100, "d1"));
  Region d2 = must(m.allocate(Tier::device, 100, "d2"));
  Region h1 = must(m.allocate(Tier::host, 100, "h1"));
  Region h2 = must(m.allocate(Tier::host, 100, "h2"));
  ASSERT_TRUE(m.copy(d1, d2).status().ok());
  ASSERT_TRUE(m.copy(h1, h2).status().ok());
  const std::vector<Activity> recorded = sink.activities();
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0].track, "link hbm0");
  EXPECT_EQ(recorded[1].track, "link dram0");
  for (const Activity& a : recorded) EXPECT_EQ(a.tag.role, ActivityRole::transfer);
}

TEST(RealMemory, ModelledLinksMakeMovesLastAtLeastTheirDuration) {
  RealPlatformOptions o = small_platform();
  o.memory.link(Tier::host, Tier::device) = LinkModel{1.0e6, 0.01};  // 1 MB/s, 10 ms latency
  RealPlatform p(o);
  RealMemory& m = p.real_memory();
  Region host = must(m.allocate(Tier::host, 30'000, "h"));
  Region device = must(m.allocate(Tier::device, 30'000, "d"));
  ASSERT_TRUE(m.copy(host, device).status().ok());
  ASSERT_TRUE(m.copy(device, host).status().ok());  // unmodelled direction
  const std::vector<MoveRecord> moves = m.moves();
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_GE(moves[0].end - moves[0].start, 0.01 + 0.03);
  EXPECT_GE(m.totals(Tier::host, Tier::device).seconds, 0.04);
}

TEST(RealMemory, NvmeFailuresComeBackAsStatusesNamingTheRegionAndFile) {
  test::RecordingSink sink(0);
  InMemoryNvmeTier nvme;
  RealPlatform p(small_platform(&nvme, &sink));
  RealMemory& m = p.real_memory();
  Region host = must(m.allocate(Tier::host, 256, "layer3.w block 2"));
  Region disk = must(m.allocate(Tier::nvme, 256, "layer3.w block 2 (evicted)"));
  nvme.fail_writes(true);
  const Status write = m.copy(host, disk).status();
  EXPECT_EQ(write.code(), StatusCode::io_error);
  EXPECT_NE(write.reason().find("layer3.w block 2 (evicted)"), std::string::npos) << write.message();
  EXPECT_NE(write.reason().find("/nvme/"), std::string::npos) << write.message();
  nvme.fail_writes(false);
  ASSERT_TRUE(m.copy(host, disk).status().ok());
  nvme.fail_reads(true);
  const Status read = m.copy(disk, host).status();
  EXPECT_EQ(read.code(), StatusCode::io_error);
  EXPECT_NE(read.reason().find("checksum"), std::string::npos) << read.message();
  EXPECT_EQ(m.totals(Tier::host, Tier::nvme).failures, 1u);
  EXPECT_EQ(m.totals(Tier::nvme, Tier::host).failures, 1u);
  EXPECT_FALSE(m.moves().front().ok);
  // The failed write, the good one and the failed read, on the disk's track.
  const std::vector<Activity> recorded = sink.activities();
  ASSERT_EQ(recorded.size(), 3u);
  for (const Activity& a : recorded) EXPECT_EQ(a.track, "disk nvme0");
  EXPECT_FALSE(recorded[0].ok);
  EXPECT_TRUE(recorded[1].ok);
  EXPECT_FALSE(recorded[2].ok);
}

TEST(RealMemory, NeverWrittenNvmeRegionsReadAsZerosAndReleaseRemovesTheirFiles) {
  InMemoryNvmeTier nvme;
  {
    RealPlatform p(small_platform(&nvme));
    RealMemory& m = p.real_memory();
    Region host = must(m.allocate(Tier::host, 64, "h"));
    std::memset(m.host_address(host), 0xab, 64);
    Region fresh = must(m.allocate(Tier::nvme, 64, "fresh"));
    ASSERT_TRUE(m.copy(fresh, host).status().ok());
    for (int i = 0; i < 64; ++i) EXPECT_EQ(m.host_address(host)[i], std::byte{0});
    EXPECT_EQ(nvme.reads(), 0);
    Region written = must(m.allocate(Tier::nvme, 64, "written"));
    Region kept = must(m.allocate(Tier::nvme, 64, "kept"));
    ASSERT_TRUE(m.copy(host, written).status().ok());
    ASSERT_TRUE(m.copy(host, kept).status().ok());
    EXPECT_EQ(nvme.files(), 2u);
    m.release(written);
    EXPECT_EQ(nvme.files(), 1u);
    (void)kept;  // released by the platform's destruction
  }
  EXPECT_EQ(nvme.files(), 0u);
}

TEST(RealMemory, NvmeStoreTierForwardsToTheStore) {
  struct RecordingStore {
    std::vector<std::string> calls;
    Status write(std::uint64_t id, std::span<const std::byte> data, const std::string& label) {
      calls.push_back("write " + std::to_string(id) + " " + std::to_string(data.size()) + " " + label);
      return Status::success();
    }
    Status read(std::uint64_t id, std::span<std::byte> out, const std::string& label) {
      calls.push_back("read " + std::to_string(id) + " " + std::to_string(out.size()) + " " + label);
      return Status(StatusCode::io_error, "bad checksum");
    }
    void remove(std::uint64_t id) { calls.push_back("remove " + std::to_string(id)); }
  } store;
  NvmeStoreTier<RecordingStore> tier(store);
  std::vector<std::byte> bytes(10);
  EXPECT_TRUE(tier.write(7, bytes, "a").ok());
  EXPECT_EQ(tier.read(7, bytes, "a").code(), StatusCode::io_error);
  tier.remove(7);
  EXPECT_EQ(store.calls, (std::vector<std::string>{"write 7 10 a", "read 7 10 a", "remove 7"}));
}

// A region released while its copy is in flight stays alive (and counted) until the copy ends.
// An NVMe tier whose writes wait (up to a bound, so a serial engine cannot hang the test) until
// `wanted` of them are in progress at once, and record the most seen together.
class GatheringNvmeTier final : public NvmeTier {
 public:
  explicit GatheringNvmeTier(int wanted) : wanted_(wanted) {}
  Status write(std::uint64_t id, std::span<const std::byte> data, const std::string& label) override {
    std::unique_lock lock(mutex_);
    most_ = std::max(most_, ++inside_);
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::seconds(5), [&] { return most_ >= wanted_; });
    --inside_;
    lock.unlock();
    return files_.write(id, data, label);
  }
  Status read(std::uint64_t id, std::span<std::byte> out, const std::string& label) override {
    return files_.read(id, out, label);
  }
  void remove(std::uint64_t id) override { files_.remove(id); }
  int most_together() const {
    std::lock_guard lock(mutex_);
    return most_;
  }

 private:
  const int wanted_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int inside_ = 0;
  int most_ = 0;
  InMemoryNvmeTier files_;
};

TEST(RealMemory, SeveralBlockWritesToNvmeAreInFlightAtOnce) {
  // Two write-backs issued back to back: the second must not wait for the first to end (a
  // serial engine would see one write at a time).
  GatheringNvmeTier nvme(2);
  RealPlatformOptions o = small_platform(&nvme);
  o.memory.nvme_moves_in_flight = 2;
  RealPlatform p(o);
  RealMemory& m = p.real_memory();
  std::vector<Region> host, disk;
  std::vector<platform::Pending> writes;
  for (int i = 0; i < 2; ++i) {
    host.push_back(must(m.allocate(Tier::host, 4096, "block " + std::to_string(i))));
    std::memset(m.host_address(host.back()), 7 + i, 4096);
    disk.push_back(must(m.allocate(Tier::nvme, 4096, "block " + std::to_string(i) + " on nvme")));
  }
  for (int i = 0; i < 2; ++i) writes.push_back(m.copy(host[static_cast<std::size_t>(i)], disk[static_cast<std::size_t>(i)], {}));
  for (platform::Pending& w : writes) ASSERT_TRUE(w.status().ok());
  EXPECT_EQ(nvme.most_together(), 2);
  // The bytes arrived whole all the same.
  for (int i = 0; i < 2; ++i) {
    Region back = must(m.allocate(Tier::host, 4096, "read back"));
    ASSERT_TRUE(m.copy(disk[static_cast<std::size_t>(i)], back, {}).status().ok());
    EXPECT_EQ(m.host_address(back)[4095], static_cast<std::byte>(7 + i));
    m.release(back);
  }
  for (Region& r : host) m.release(r);
  for (Region& r : disk) m.release(r);
}

TEST(RealMemory, RegionsReleasedDuringACopyLiveUntilItEnds) {
  RealPlatformOptions o = small_platform();
  o.memory.link(Tier::device, Tier::host) = LinkModel{1.0e9, 0.05};
  RealPlatform p(o);
  RealMemory& m = p.real_memory();
  Region device = must(m.allocate(Tier::device, 4096, "d"));
  Region host = must(m.allocate(Tier::host, 4096, "h"));
  std::memset(m.host_address(device), 1, 4096);
  platform::Pending copy = m.copy(device, host);
  m.release(device);
  m.release(host);
  EXPECT_FALSE(device.valid());
  ASSERT_TRUE(copy.status().ok());
  EXPECT_EQ(m.usage(Tier::device).resident, 0u);
  EXPECT_EQ(m.usage(Tier::host).resident, 0u);
}

// Raw threads against one RealMemory: the budget holds under contention (ThreadSanitizer checks
// the accounting for races).
TEST(RealMemory, BudgetHoldsUnderRawThreadContention) {
  RealPlatform p(small_platform());
  RealMemory& m = p.real_memory();
  const std::size_t cap = m.usage(Tier::device).capacity;
  std::atomic<int> over{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 gen(static_cast<unsigned>(t));
      std::vector<Region> held;
      for (int op = 0; op < 2000; ++op) {
        if (held.size() < 4 && gen() % 2 == 0) {
          if (auto r = m.allocate(Tier::device, 1 + gen() % (cap / 5), "t")) held.push_back(*r);
        } else if (!held.empty()) {
          m.release(held.back());
          held.pop_back();
        }
        if (m.usage(Tier::device).resident > cap) ++over;
      }
      for (Region& r : held) m.release(r);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(over.load(), 0);
  EXPECT_EQ(m.usage(Tier::device).resident, 0u);
  EXPECT_LE(m.usage(Tier::device).peak_resident, cap);
  EXPECT_GT(m.usage(Tier::device).peak_resident, cap / 2);
}

}  // namespace
}  // namespace asteria::real

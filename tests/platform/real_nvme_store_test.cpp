// RealMemory over the NVMe store (block files with checksums): bytes survive the round trip,
// and a corrupted file comes back as a failed copy naming the region and the file.
#include <gtest/gtest.h>

#if ASTERIA_HAVE_NVME_STORE

#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "core/real/nvme/nvme_store.hpp"
#include "core/real/real_platform.hpp"
#include "tests/platform/scratch_directory.hpp"

namespace asteria::real {
namespace {

using platform::Region;
using platform::Tier;

TEST(RealMemoryOnNvmeStore, BytesRoundTripAndCorruptionIsReported) {
  testing::ScratchDirectory dir("asteria-real-nvme");
  NvmeStore store(dir.path(), NvmeOptions{});
  NvmeStoreTier<NvmeStore> tier(store);
  RealPlatformOptions o;
  o.memory.budgets = {1 << 20, 1 << 20, 1 << 20};
  o.host_threads = 2;
  o.nvme = &tier;
  RealPlatform p(o);
  RealMemory& m = p.real_memory();

  constexpr std::size_t n = 100'003;
  std::vector<std::byte> data(n);
  std::mt19937 gen(5);
  for (std::byte& b : data) b = static_cast<std::byte>(gen() & 0xff);
  Region host = *m.allocate(Tier::host, n, "layer0.w block 1");
  Region disk = *m.allocate(Tier::nvme, n, "layer0.w block 1 (nvme)");
  Region back = *m.allocate(Tier::host, n, "back");
  std::memcpy(m.host_address(host), data.data(), n);
  ASSERT_TRUE(m.copy(host, disk).status().ok());
  ASSERT_TRUE(std::filesystem::exists(store.path_of(disk.id)));
  ASSERT_TRUE(m.copy(disk, back).status().ok());
  EXPECT_EQ(std::memcmp(m.host_address(back), data.data(), n), 0);

  {  // flip one payload byte on disk
    std::fstream file(store.path_of(disk.id), std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(-10, std::ios::end);
    char c = 0;
    file.get(c);
    file.seekp(-10, std::ios::end);
    file.put(static_cast<char>(c ^ 0x5a));
  }
  const Status corrupted = m.copy(disk, back).status();
  EXPECT_FALSE(corrupted.ok());
  EXPECT_NE(corrupted.reason().find("layer0.w block 1 (nvme)"), std::string::npos) << corrupted.message();
  EXPECT_NE(corrupted.reason().find(store.path_of(disk.id).filename().string()), std::string::npos)
      << corrupted.message();
  EXPECT_EQ(m.totals(Tier::nvme, Tier::host).failures, 1u);

  const std::filesystem::path file = store.path_of(disk.id);
  m.release(disk);
  EXPECT_EQ(store.block_count(), 0u) << "released at once";
  store.flush_removals();  // the file itself goes on the store's background thread
  EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace asteria::real

#endif  // ASTERIA_HAVE_NVME_STORE

// Several copy threads on one store, as RealMemory's copy engines use it: private blocks
// round-trip, and blocks shared by writers and readers are always read as one whole version.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "core/real/nvme/nvme_store.hpp"
#include "tests/nvme/nvme_test_support.hpp"

namespace {

using asteria::real::NvmeOptions;
using asteria::real::NvmeStore;
using asteria::testing::NvmeMode;
using asteria::testing::pattern;
using asteria::testing::ScratchDir;

class NvmeConcurrency : public ::testing::TestWithParam<NvmeMode> {};

constexpr int kThreads = 4;
constexpr std::size_t kShared = 2;
constexpr std::size_t kVersions = 4;

TEST_P(NvmeConcurrency, ThreadsWritingAndReadingSeeWholeVersionsOnly) {
  ScratchDir dir;
  NvmeOptions options = asteria::testing::options_for(GetParam());
  options.chunk_bytes = 64 * 1024;  // several chunks per block, so requests of calls interleave
  NvmeStore store(dir.path(), options);
  std::cout << "[ mechanism ] " << GetParam().name << ": " << store.mechanism() << "\n";

  // Shared blocks 1000+s all have the same length; version v of block s is pattern(.., 100*s + v).
  constexpr std::size_t kSharedBytes = 300'000 + 5;
  std::vector<std::vector<std::vector<std::byte>>> shared_versions(kShared);
  for (std::size_t s = 0; s < kShared; ++s) {
    for (std::size_t v = 0; v < kVersions; ++v) shared_versions[s].push_back(pattern(kSharedBytes, 100 * s + v));
    ASSERT_TRUE(store.write(1000 + s, shared_versions[s][0], "shared").ok());
  }

  std::atomic<int> failures{0};
  std::atomic<int> mixed_reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::byte> out;
      for (int i = 0; i < 12; ++i) {
        // A private block of a size particular to this thread and round.
        const std::uint64_t id = static_cast<std::uint64_t>(t) * 100 + static_cast<std::uint64_t>(i);
        const auto data = pattern(20'000 + static_cast<std::size_t>(t * 7919 + i * 131), id);
        if (!store.write(id, data, "private").ok()) ++failures;
        out.assign(data.size(), std::byte{0});
        if (!store.read(id, out, "private").ok() || out != data) ++failures;
        if (i % 3 == 2) store.remove(id);

        // Shared blocks: even threads write new versions, odd threads read.
        const std::size_t s = static_cast<std::size_t>(i) % kShared;
        if (t % 2 == 0) {
          if (!store.write(1000 + s, shared_versions[s][1 + static_cast<std::size_t>(i + t) % (kVersions - 1)], "shared").ok())
            ++failures;
        } else {
          out.assign(kSharedBytes, std::byte{0});
          if (!store.read(1000 + s, out, "shared").ok()) ++failures;
          bool whole = false;
          for (const auto& version : shared_versions[s]) whole = whole || out == version;
          if (!whole) ++mixed_reads;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mixed_reads.load(), 0);
  // 12 private blocks per thread, every third removed: 8 kept per thread, plus the shared ones.
  EXPECT_EQ(store.block_count(), static_cast<std::size_t>(kThreads * 8) + kShared);
  std::uint64_t expected_bytes = kShared * (4096 + kSharedBytes);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < 12; ++i)
      if (i % 3 != 2) expected_bytes += 4096 + 20'000 + static_cast<std::uint64_t>(t * 7919 + i * 131);
  EXPECT_EQ(store.used_bytes(), expected_bytes);
  EXPECT_LE(store.io_contexts(), static_cast<std::size_t>(kThreads) + 1);
  std::cout << "[ contexts ] " << store.io_contexts() << " I/O contexts for " << kThreads << " threads\n";
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, NvmeConcurrency, ::testing::ValuesIn(asteria::testing::kNvmeModes),
                         asteria::testing::mode_name);

}  // namespace

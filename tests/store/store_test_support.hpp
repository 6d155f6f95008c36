#pragma once
// Shared pieces of the state-store tests: blocks of optimizer state filled with seeded byte
// patterns (so any move that loses or mixes bytes shows), and a fake platform with budgets.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/optim/block_state.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/store/state_store.hpp"

namespace asteria::runtime::testing {

using platform::Tier;
using platform::fake::FakeOptions;
using platform::fake::FakePlatform;

inline std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline std::vector<std::byte> pattern(std::uint64_t seed, std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  std::uint64_t x = seed * 1000003u + 17u;
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>(splitmix(x) & 0xFFu);
  return out;
}

// One block's state (a single tensor of `floats` values) and its byte view for the store.
struct TestBlock {
  explicit TestBlock(std::size_t floats) {
    state.add_tensor("m", 1, static_cast<optim::index>(floats));
    view = std::make_unique<BlockStateRelocatable<float>>(state);
  }
  // Writes the pattern of `seed` into the state's current storage (must be resident).
  void fill(std::uint64_t seed) {
    expected = pattern(seed, view->bytes());
    std::memcpy(view->data(), expected.data(), expected.size());
  }
  // The state's bytes equal the last pattern written.
  bool intact() const {
    if (!state.resident()) return false;
    return std::memcmp(state.values().data(), expected.data(), expected.size()) == 0;
  }

  optim::BlockState<float> state;
  std::unique_ptr<BlockStateRelocatable<float>> view;
  std::vector<std::byte> expected;
};

using Blocks = std::vector<std::unique_ptr<TestBlock>>;

// Blocks of the given sizes in floats, each filled with its own pattern.
inline Blocks make_blocks(const std::vector<std::size_t>& floats, std::uint64_t seed = 1) {
  Blocks blocks;
  for (std::size_t i = 0; i < floats.size(); ++i) {
    blocks.push_back(std::make_unique<TestBlock>(floats[i]));
    blocks.back()->fill(seed * 100 + i);
  }
  return blocks;
}

inline std::vector<BlockId> add_all(StateStore& store, Blocks& blocks, const std::vector<bool>& on_device = {}) {
  std::vector<BlockId> ids;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    BlockOptions o;
    o.update_on_device = i < on_device.size() && on_device[i];
    ids.push_back(store.add(*blocks[i]->view, "block" + std::to_string(i), o));
  }
  return ids;
}

inline FakeOptions budgets(std::size_t device, std::size_t host, std::size_t nvme, double bytes_per_second = 0.0) {
  FakeOptions o;
  o.device_capacity = device;
  o.host_capacity = host;
  o.nvme_capacity = nvme;
  o.copy_bytes_per_second = bytes_per_second;
  return o;
}

inline StoreOptions store_options(PlacementPolicy policy, int lookahead = 0) {
  StoreOptions o;
  o.policy = policy;
  o.lookahead = lookahead;
  return o;
}

}  // namespace asteria::runtime::testing

#pragma once
// Room on one memory tier kept for bytes the state store does not own: the snapshot and result
// buffers of refresh jobs (shadow state), which occupy host memory from a job's snapshot until it
// is published or dropped. Each holder's bytes are reserved on the tier (Memory::reserve: counted
// against the tier's budget and its peak, with no second buffer) for as long as it holds them.
// The store treats the part of the set-aside that no holder uses yet as taken (StateStore::
// keep_free), so neither its placement nor its moves take the room a later job needs.
#include <atomic>
#include <cstddef>
#include <string>

#include "core/platform/memory.hpp"

namespace asteria::runtime {

class TierSetAside {
 public:
  // Bytes held on the tier while their holder lives; moves with it, gives them back at its end.
  class Hold {
   public:
    Hold() = default;
    ~Hold() { reset(); }
    Hold(Hold&& other) noexcept;
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

    std::size_t bytes() const noexcept { return reservation_.region().bytes; }
    void reset();

   private:
    friend class TierSetAside;
    Hold(TierSetAside& owner, platform::Allocation reservation)
        : owner_(&owner), reservation_(std::move(reservation)) {}
    TierSetAside* owner_ = nullptr;
    platform::Allocation reservation_;
  };

  // `purpose` names what the room is for in errors ("refresh snapshot buffers (shadow state)").
  TierSetAside(platform::Memory& memory, platform::Tier tier, std::string purpose);
  TierSetAside(const TierSetAside&) = delete;
  TierSetAside& operator=(const TierSetAside&) = delete;

  // The room to keep: what the holders can need at once at worst.
  void set_bytes(std::size_t bytes) noexcept { bytes_ = bytes; }
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t held() const noexcept { return held_.load(); }
  // Set aside and not held yet: what the store must leave free on the tier.
  std::size_t unused() const noexcept {
    const std::size_t held = held_.load();
    return bytes_ > held ? bytes_ - held : 0;
  }
  platform::Tier tier() const noexcept { return tier_; }
  const std::string& purpose() const noexcept { return purpose_; }

  // Reserves `bytes` on the tier for `label` (held may pass bytes(): the tier's budget is the
  // limit). Throws PlacementError naming the tier, the bytes needed and what is free of the
  // budget when the tier cannot hold them.
  Hold hold(std::size_t bytes, const std::string& label);
  // The same, nothing thrown: an empty Hold when the tier cannot hold them.
  Hold try_hold(std::size_t bytes, const std::string& label);

 private:
  platform::Memory& memory_;
  platform::Tier tier_;
  std::string purpose_;
  std::size_t bytes_ = 0;
  // Holders may change it on the device stream's thread (optimizer ops run in launch bodies)
  // while the store reads it on the issuing thread.
  std::atomic<std::size_t> held_{0};
};

}  // namespace asteria::runtime

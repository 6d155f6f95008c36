#include "core/real/nvme/transfer.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace asteria::real {

using io::Xxh64;
using io::xxh64;
namespace {

constexpr int kMaxRetries = 1000;  // EINTR/EAGAIN storms: give up rather than spin forever

std::size_t round_up(std::size_t n) { return (n + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment; }
std::size_t round_down(std::size_t n) { return n / kDirectAlignment * kDirectAlignment; }
bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kDirectAlignment == 0; }

class Engine {
 public:
  Engine(IoContext& context, const TransferTarget& target, IoOp op, std::byte* memory, std::size_t bytes,
         Xxh64* hasher, std::string_view what, const CompanionRequest* companion)
      : context_(context),
        target_(target),
        op_(op),
        memory_(memory),
        bytes_(bytes),
        hasher_(hasher),
        what_(what),
        companion_(companion),
        chunk_bytes_(context.chunk_bytes()),
        chunk_count_((bytes + chunk_bytes_ - 1) / chunk_bytes_),
        unit_count_(chunk_count_ + (companion ? 1 : 0)),
        slots_(context.queue().depth()),
        landed_(op == IoOp::read ? chunk_count_ : 0, 0) {
    for (unsigned s = 0; s < slots_.size(); ++s) free_slots_.push_back(static_cast<unsigned>(slots_.size()) - 1 - s);
  }

  Status run() {
    std::size_t in_flight = 0;
    while (next_unit_ < unit_count_ || in_flight > 0) {
      while (failure_.ok() && next_unit_ < unit_count_ && !free_slots_.empty()) {
        start_unit(next_unit_++);
        ++in_flight;
      }
      if (in_flight == 0) break;  // failed before anything else went out
      IoCompletion done;
      const int rc = context_.queue().wait(done);
      if (rc < 0) {
        // The queue broke with requests maybe still in flight: nothing can be reused safely.
        context_.poisoned = true;
        return Status(StatusCode::io_error, std::string(what_) + ": I/O queue failed: " + errno_text(-rc));
      }
      if (finish_or_resubmit(static_cast<unsigned>(done.tag), done.result)) {
        --in_flight;
        free_slots_.push_back(static_cast<unsigned>(done.tag));
      }
    }
    return failure_;
  }

 private:
  static constexpr std::size_t kCompanion = static_cast<std::size_t>(-1);

  struct Slot {
    std::size_t chunk = 0;          // kCompanion for the companion request
    std::uint64_t file_offset = 0;  // where the unit starts in the file
    std::byte* buffer = nullptr;    // where the kernel reads or writes: caller memory or bounce
    std::size_t logical = 0;        // the unit's bytes in the caller's range
    std::size_t io_bytes = 0;       // what is requested (logical, padded under O_DIRECT)
    std::size_t started_at = 0;     // where the outstanding request began, within the unit
    bool bounced = false;
    int retries = 0;
  };

  // Reads send the companion (header) first; writes send it last, once the checksum is final.
  void start_unit(std::size_t unit) {
    if (companion_ == nullptr) return start_chunk(unit);
    if (op_ == IoOp::read) return unit == 0 ? start_companion() : start_chunk(unit - 1);
    return unit == chunk_count_ ? start_companion() : start_chunk(unit);
  }

  unsigned take_slot() {
    const unsigned s = free_slots_.back();
    free_slots_.pop_back();
    slots_[s] = Slot{};
    return s;
  }

  void start_companion() {
    const unsigned s = take_slot();
    Slot& slot = slots_[s];
    slot.chunk = kCompanion;
    slot.file_offset = companion_->file_offset;
    slot.buffer = companion_->buffer.data();
    slot.logical = slot.io_bytes = companion_->buffer.size();
    if (op_ == IoOp::write && companion_->prepare) companion_->prepare();
    submit(s);
  }

  void start_chunk(std::size_t chunk) {
    const unsigned s = take_slot();
    Slot& slot = slots_[s];
    slot.chunk = chunk;
    slot.file_offset = target_.file_offset + chunk * chunk_bytes_;
    std::byte* source = memory_ + chunk * chunk_bytes_;
    slot.logical = std::min(chunk_bytes_, bytes_ - chunk * chunk_bytes_);
    slot.bounced = target_.direct && (!aligned(source) || slot.logical % kDirectAlignment != 0);
    slot.io_bytes = slot.bounced ? round_up(slot.logical) : slot.logical;
    slot.buffer = slot.bounced ? context_.bounce(s) : source;
    if (op_ == IoOp::write) {
      // Writes are prepared in file order, so the checksum streams along.
      if (hasher_) hasher_->update({source, slot.logical});
      if (slot.bounced) {
        std::memcpy(slot.buffer, source, slot.logical);
        std::memset(slot.buffer + slot.logical, 0, slot.io_bytes - slot.logical);
      }
    }
    submit(s);
  }

  void submit(unsigned s) {
    const Slot& slot = slots_[s];
    IoRequest request;
    request.op = op_;
    request.fd = target_.fd;
    request.buffer = slot.buffer + slot.started_at;
    request.bytes = slot.io_bytes - slot.started_at;
    request.offset = slot.file_offset + slot.started_at;
    request.tag = s;
    context_.queue().push(request);
  }

  // Returns true when the slot is free again (unit complete or failed).
  bool finish_or_resubmit(unsigned s, std::int64_t result) {
    Slot& slot = slots_[s];
    if ((result == -EINTR || result == -EAGAIN) && ++slot.retries <= kMaxRetries && failure_.ok()) {
      submit(s);
      return false;
    }
    if (result < 0) {
      fail(status_code_for_errno(static_cast<int>(-result)), describe(slot) + ": " + errno_text(static_cast<int>(-result)));
      return true;
    }
    if (result == 0) {
      fail(StatusCode::io_error, describe(slot) + (op_ == IoOp::read ? ": unexpected end of file (file too short)"
                                                                     : ": no progress (0 bytes written)"));
      return true;
    }
    const std::size_t done = slot.started_at + static_cast<std::size_t>(result);
    // A read's padded tail past end of file never arrives; only the logical bytes matter.
    const std::size_t needed = op_ == IoOp::read ? slot.logical : slot.io_bytes;
    if (done < needed) {
      if (!failure_.ok()) return true;  // stop resubmitting once something failed
      const std::size_t restart = target_.direct ? round_down(done) : done;
      if (restart <= slot.started_at) {
        fail(StatusCode::io_error,
             describe(slot) + ": short transfer of " + std::to_string(result) + " bytes, not resumable under O_DIRECT");
        return true;
      }
      slot.started_at = restart;
      submit(s);
      return false;
    }
    if (op_ == IoOp::read && slot.chunk != kCompanion) land(slot);
    return true;
  }

  // A read chunk is complete: copy it out of the bounce buffer and hash what is contiguous.
  void land(const Slot& slot) {
    std::byte* destination = memory_ + slot.chunk * chunk_bytes_;
    if (slot.bounced) std::memcpy(destination, slot.buffer, slot.logical);
    landed_[slot.chunk] = 1;
    while (next_to_hash_ < chunk_count_ && landed_[next_to_hash_]) {
      const std::size_t begin = next_to_hash_ * chunk_bytes_;
      if (hasher_) hasher_->update({memory_ + begin, std::min(chunk_bytes_, bytes_ - begin)});
      ++next_to_hash_;
    }
  }

  std::string describe(const Slot& slot) const {
    return std::string(what_) + ": " + (op_ == IoOp::read ? "read" : "write") + " of " +
           std::to_string(slot.io_bytes - slot.started_at) + " bytes at offset " +
           std::to_string(slot.file_offset + slot.started_at);
  }

  void fail(StatusCode code, std::string reason) {
    if (failure_.ok()) failure_ = Status(code, std::move(reason));
  }

  IoContext& context_;
  const TransferTarget target_;
  const IoOp op_;
  std::byte* const memory_;
  const std::size_t bytes_;
  Xxh64* const hasher_;
  const std::string_view what_;
  const CompanionRequest* const companion_;
  const std::size_t chunk_bytes_;
  const std::size_t chunk_count_;
  const std::size_t unit_count_;
  std::vector<Slot> slots_;
  std::vector<unsigned> free_slots_;
  std::vector<char> landed_;
  std::size_t next_unit_ = 0;
  std::size_t next_to_hash_ = 0;
  Status failure_;
};

}  // namespace

StatusCode status_code_for_errno(int error) noexcept {
  return (error == ENOSPC || error == EDQUOT || error == EFBIG) ? StatusCode::resource_exhausted
                                                                 : StatusCode::io_error;
}

Status write_range(IoContext& context, const TransferTarget& target, std::span<const std::byte> data,
                   Xxh64* hasher, std::string_view what, const CompanionRequest* companion) {
  // The engine only reads from `data` in write mode; the request type is shared with reads.
  Engine engine(context, target, IoOp::write, const_cast<std::byte*>(data.data()), data.size(), hasher, what,
                companion);
  return engine.run();
}

Status read_range(IoContext& context, const TransferTarget& target, std::span<std::byte> out, Xxh64* hasher,
                  std::string_view what, const CompanionRequest* companion) {
  Engine engine(context, target, IoOp::read, out.data(), out.size(), hasher, what, companion);
  return engine.run();
}

}  // namespace asteria::real

#pragma once
// Moves one contiguous byte range between memory and a file through an IoContext: the range is
// cut into chunks of context.chunk_bytes(), up to queue().depth() of them in flight. Every
// completion is checked: short transfers are resubmitted for the remainder, EINTR/EAGAIN are
// retried, any other failure stops new submissions, waits for those in flight (their buffers
// must outlive them) and comes back as a Status.
//
// With O_DIRECT, offsets, lengths and addresses must be multiples of kDirectAlignment: chunks
// whose memory is aligned move in place; others (a misaligned caller buffer, the tail of a
// length not a multiple of 4096) go through the context's bounce buffers. A write's padded tail
// is zero-filled (the caller truncates the file to its exact length afterwards); a read's tail
// stops at end of file.
//
// A companion request (the block header) may travel in the same pipeline, so it costs no extra
// round trip: a read submits it first; a write submits it once every chunk has been handed to
// the hasher, after calling `prepare` (which can then encode the final checksum).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "core/common/status.hpp"
#include "core/real/nvme/io_context.hpp"
#include "core/io/xxhash64.hpp"

namespace asteria::real {

using io::Xxh64;
using io::xxh64;

struct TransferTarget {
  int fd = -1;
  std::uint64_t file_offset = 0;  // a multiple of kDirectAlignment when direct
  bool direct = false;            // the file was opened with O_DIRECT
};

struct CompanionRequest {
  std::span<std::byte> buffer;      // aligned, a multiple of kDirectAlignment long
  std::uint64_t file_offset = 0;
  std::function<void()> prepare;    // writes only; may be empty
};

// Writes `data` at target.file_offset. `hasher`, when given, is fed the bytes in file order.
// `what` starts every error reason: "write block 'w1' (id 3) to /x/0000000000000003.blk.tmp".
Status write_range(IoContext& context, const TransferTarget& target, std::span<const std::byte> data,
                   Xxh64* hasher, std::string_view what, const CompanionRequest* companion = nullptr);

// Reads out.size() bytes from target.file_offset; a file that ends early is an error.
// `hasher`, when given, is fed the bytes in file order after they landed in `out`.
Status read_range(IoContext& context, const TransferTarget& target, std::span<std::byte> out, Xxh64* hasher,
                  std::string_view what, const CompanionRequest* companion = nullptr);

// ENOSPC, EDQUOT and EFBIG are resource_exhausted (no room); every other errno is io_error.
StatusCode status_code_for_errno(int error) noexcept;

}  // namespace asteria::real

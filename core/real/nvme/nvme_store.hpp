#pragma once
// The NVMe tier's byte store: one file per block id in a directory the user picks, moved with
// io_uring (several chunk requests in flight) and O_DIRECT where the filesystem allows it.
//
// File format: core/real/nvme/block_header.hpp (4096-byte header with magic, version, id,
// payload length, XXH64 of the payload and of the header; then the payload). Every read verifies
// header, id, length and payload checksum; a mismatch is a non-ok Status naming block and file.
//
// Writes never modify a block in place: bytes go to `<block>.tmp` (payload chunks and header
// in one pipeline, the header encoded once the payload is hashed), then rename() publishes the
// file atomically, only after every request succeeded. A failed write leaves the previous version
// readable, and readers see either the old or the new file, never a mix. Durability:
//   durable = false (default): no fsync. A process crash loses nothing already published; a
//     power loss may lose recent blocks, but the checksum makes any torn or stale file fail
//     verification instead of returning wrong data (the tier holds working state, not archives).
//   durable = true: fdatasync() the file before rename and fsync() the directory after, so a
//     write that returned ok survives power loss.
//
// Thread-safe: concurrent calls each lease their own I/O context (ring + bounce buffers) from a
// pool; writes and removes of the same id are serialized, everything else runs in parallel.
// Removal is logical at once and physical in the background: unlink() of a file just written can
// wait for the filesystem's journal, and the caller (the runtime's issuing thread, freeing a
// region) must not.
// One store per directory at a time: the directory is flock()ed while the store lives.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <thread>
#include <condition_variable>
#include <deque>

#include "core/common/status.hpp"
#include "core/real/nvme/id_locks.hpp"
#include "core/real/nvme/io_context.hpp"
#include "core/real/nvme/unique_fd.hpp"

namespace asteria::real {

enum class DirectIo {
  automatic,  // O_DIRECT when the filesystem accepts it (probed at construction), else buffered
  on,         // O_DIRECT or the constructor throws
  off,        // buffered (page cache)
};

enum class IoMechanism {
  automatic,  // io_uring when the kernel allows it (probed at construction), else pread/pwrite
  io_uring,   // io_uring or the constructor throws
  syscalls,   // pread/pwrite, one request at a time
};

struct NvmeOptions {
  unsigned queue_depth = 8;                  // chunk requests in flight per call, 1..1024
  std::size_t chunk_bytes = std::size_t{1} << 20;  // request size, a multiple of 4096, ≤ 256 MiB
  DirectIo direct_io = DirectIo::automatic;
  IoMechanism mechanism = IoMechanism::automatic;
  // Bytes the store may occupy on disk: committed block files (4096-byte header + payload) plus
  // the staging files of writes in progress. A write that would exceed it fails cleanly
  // (resource_exhausted) and touches nothing; note that replacing a block needs room for both
  // versions until the new one is published.
  std::uint64_t capacity_bytes = std::numeric_limits<std::uint64_t>::max();
  bool durable = false;  // see the file comment
};

class NvmeStore {
 public:
  // Creates `dir` if missing and probes it (writability, O_DIRECT, io_uring). Block files left
  // by an earlier store are adopted (readable, counted against the capacity); staging files of
  // interrupted writes are deleted. Throws asteria::InputError naming the directory when it
  // cannot be created or written, is in use by another store, or when a forced option
  // (DirectIo::on, IoMechanism::io_uring) is unavailable; and for invalid options.
  NvmeStore(std::filesystem::path dir, NvmeOptions options);
  ~NvmeStore();
  NvmeStore(const NvmeStore&) = delete;
  NvmeStore& operator=(const NvmeStore&) = delete;

  // Stores `data` as block `id`, replacing any previous version once complete. `data` is only
  // read. Failures (no room, I/O error, budget) name the label, id, file and operation; the
  // previous version, if any, stays readable.
  Status write(std::uint64_t id, std::span<const std::byte> data, const std::string& label);

  // Fills `out`, whose size must equal the block's stored length. Any failure (missing file,
  // I/O error, bad header, wrong id or length, payload checksum mismatch) returns a non-ok
  // Status naming label, id, file and operation; `out` then holds unspecified bytes.
  Status read(std::uint64_t id, std::span<std::byte> out, const std::string& label);

  // Forgets block `id` at once (reads fail as for a missing file; its bytes stop counting) and
  // deletes its file on a background thread; a no-op for an id never written. A later write of
  // the id cancels the pending deletion. Waits only for a write of the same id in progress.
  void remove(std::uint64_t id);
  // Returns once every file removed so far is deleted (the destructor does the same).
  void flush_removals();

  std::filesystem::path path_of(std::uint64_t id) const;         // <dir>/<16 hex digits>.blk
  std::filesystem::path staging_path_of(std::uint64_t id) const; // path_of(id) + ".tmp"
  const std::filesystem::path& directory() const noexcept { return dir_; }
  const NvmeOptions& options() const noexcept { return options_; }

  // How bytes move, for reports: "io_uring (queue depth 8, 1 MiB chunks), O_DIRECT" or
  // "pread/pwrite (io_uring unavailable: ...), buffered (O_DIRECT unsupported here: ...)".
  const std::string& mechanism() const noexcept { return mechanism_; }
  bool uses_io_uring() const noexcept { return uses_uring_; }
  bool uses_direct_io() const noexcept { return uses_direct_; }

  std::uint64_t used_bytes() const;          // committed block files, and files that could not be deleted
  std::size_t block_count() const;
  std::size_t io_contexts() const { return pool_->size(); }  // peak concurrent calls so far
  // Contexts that fell back to pread/pwrite because a later io_uring setup failed (0 normally).
  std::size_t contexts_without_io_uring() const { return pool_->degraded_contexts(); }

 private:
  Status write_staging(std::uint64_t id, std::span<const std::byte> data, const std::string& what,
                       const std::filesystem::path& staging);
  Status read_file(std::uint64_t id, std::span<std::byte> out, const std::string& what,
                   const std::filesystem::path& path);
  void adopt_existing_files();
  bool removal_pending(std::uint64_t id);
  void cancel_removal(std::uint64_t id);  // with the id's lock held
  void run_removals();                    // the remover thread

  std::filesystem::path dir_;
  NvmeOptions options_;
  UniqueFd dir_fd_;  // held open: flock() against a second store, fsync() when durable
  bool uses_uring_ = false;
  bool uses_direct_ = false;
  std::string mechanism_;
  std::unique_ptr<IoContextPool> pool_;
  IdLocks id_locks_;

  mutable std::mutex accounting_mutex_;
  std::unordered_map<std::uint64_t, std::uint64_t> file_bytes_;  // committed files by id
  std::uint64_t committed_bytes_ = 0;
  std::uint64_t reserved_bytes_ = 0;  // staging files of writes in progress
  std::uint64_t orphaned_bytes_ = 0;  // removed blocks whose file unlink() refused to delete

  std::mutex removal_mutex_;
  std::condition_variable removal_wake_;  // work queued or stopping
  std::condition_variable removal_done_;  // the queue ran empty
  std::deque<std::uint64_t> removal_queue_;
  std::unordered_map<std::uint64_t, std::uint64_t> removal_pending_;  // id -> file bytes
  bool removal_busy_ = false;
  bool removal_stopping_ = false;
  std::thread remover_;  // last: started once everything above exists
};

}  // namespace asteria::real

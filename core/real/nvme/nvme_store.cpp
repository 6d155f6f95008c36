#include "core/real/nvme/nvme_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <system_error>

#include "core/common/error.hpp"
#include "core/real/nvme/block_header.hpp"
#include "core/real/nvme/transfer.hpp"
#include "core/io/xxhash64.hpp"

namespace asteria::real {

using io::Xxh64;
using io::xxh64;
namespace {

constexpr unsigned kMaxQueueDepth = 1024;
constexpr std::size_t kMaxChunkBytes = std::size_t{256} << 20;
constexpr const char* kBlockSuffix = ".blk";
constexpr const char* kStagingSuffix = ".tmp";
constexpr const char* kProbeName = ".asteria-nvme-probe";

std::string hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

std::string block_name(std::uint64_t id, const std::string& label) {
  return "block '" + label + "' (id " + std::to_string(id) + ")";
}

std::uint64_t round_up(std::uint64_t n) { return (n + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment; }

Status errno_status(const std::string& what, const std::string& operation, int error) {
  return Status(status_code_for_errno(error), what + ": " + operation + ": " + errno_text(error));
}

// Opens with O_DIRECT when asked; falls back to buffered for this file when the kernel refuses
// O_DIRECT for it (EINVAL: a special file or another filesystem mounted below the directory).
UniqueFd open_file(const std::filesystem::path& path, int flags, bool& direct) {
  if (direct) {
    UniqueFd fd(::open(path.c_str(), flags | O_DIRECT | O_CLOEXEC, 0644));
    if (fd || errno != EINVAL) return fd;
    direct = false;
  }
  return UniqueFd(::open(path.c_str(), flags | O_CLOEXEC, 0644));
}

void validate(const NvmeOptions& options) {
  if (options.queue_depth < 1 || options.queue_depth > kMaxQueueDepth)
    throw InputError("NvmeOptions", "queue_depth",
                     "between 1 and " + std::to_string(kMaxQueueDepth) + ", got " + std::to_string(options.queue_depth));
  if (options.chunk_bytes < kDirectAlignment || options.chunk_bytes > kMaxChunkBytes ||
      options.chunk_bytes % kDirectAlignment != 0)
    throw InputError("NvmeOptions", "chunk_bytes",
                     "a multiple of 4096 between 4096 and 256 MiB, got " + std::to_string(options.chunk_bytes));
}

std::string size_text(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

// Writes 4096 aligned bytes into a probe file: proves the directory takes files, and whether it
// takes O_DIRECT. Returns the reason O_DIRECT is unavailable ("" when it works).
std::string probe_directory(const std::filesystem::path& dir, bool try_direct) {
  const std::filesystem::path probe = dir / kProbeName;
  const auto fail = [&](const std::string& operation, int error) {
    ::unlink(probe.c_str());
    throw InputError(dir.string(), "NVMe directory", "cannot " + operation + " " + probe.string() + ": " + errno_text(error));
  };
  std::string direct_problem;
  AlignedBuffer block(kDirectAlignment);
  if (try_direct) {
    UniqueFd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644));
    if (!fd && errno != EINVAL) fail("create", errno);
    if (!fd) {
      direct_problem = "open with O_DIRECT: " + errno_text(EINVAL);
    } else if (::pwrite(fd.get(), block.data(), block.size(), 0) != static_cast<ssize_t>(block.size())) {
      if (errno != EINVAL) fail("write", errno);
      direct_problem = "write with O_DIRECT: " + errno_text(EINVAL);
    }
  }
  if (!try_direct || !direct_problem.empty()) {
    UniqueFd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) fail("create", errno);
    if (::pwrite(fd.get(), block.data(), block.size(), 0) != static_cast<ssize_t>(block.size())) fail("write", errno);
  }
  ::unlink(probe.c_str());
  return direct_problem;
}

}  // namespace

NvmeStore::NvmeStore(std::filesystem::path dir, NvmeOptions options) : dir_(std::move(dir)), options_(options) {
  validate(options_);
  const std::string source = dir_.string();
  std::error_code ec;
  if (std::filesystem::exists(dir_, ec) && !std::filesystem::is_directory(dir_, ec))
    throw InputError(source, "NVMe directory", "exists but is not a directory");
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw InputError(source, "NVMe directory", "cannot be created: " + ec.message());

  dir_fd_ = UniqueFd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd_) throw InputError(source, "NVMe directory", "cannot be opened: " + errno_text(errno));
  if (::flock(dir_fd_.get(), LOCK_EX | LOCK_NB) != 0)
    throw InputError(source, "NVMe directory",
                     errno == EWOULDBLOCK ? "in use by another NvmeStore (the directory is locked)"
                                          : "cannot be locked: " + errno_text(errno));

  const std::string direct_problem = probe_directory(dir_, options_.direct_io != DirectIo::off);
  if (options_.direct_io == DirectIo::on && !direct_problem.empty())
    throw InputError(source, "NVMe directory", "O_DIRECT was required but is unsupported here (" + direct_problem + ")");
  uses_direct_ = options_.direct_io != DirectIo::off && direct_problem.empty();

  std::unique_ptr<IoContext> first;
  std::string uring_problem;
  if (options_.mechanism != IoMechanism::syscalls) {
    auto queue = make_uring_queue(options_.queue_depth, uring_problem);
    if (queue) first = std::make_unique<IoContext>(std::move(queue), options_.chunk_bytes);
    else if (options_.mechanism == IoMechanism::io_uring)
      throw InputError(source, "NVMe I/O mechanism", "io_uring was required but is unavailable (" + uring_problem + ")");
  }
  uses_uring_ = first != nullptr;
  pool_ = std::make_unique<IoContextPool>(uses_uring_, options_.queue_depth, options_.chunk_bytes, std::move(first));

  if (uses_uring_)
    mechanism_ = "io_uring (queue depth " + std::to_string(options_.queue_depth) + ", " + size_text(options_.chunk_bytes) +
                 " chunks)";
  else if (options_.mechanism == IoMechanism::syscalls)
    mechanism_ = "pread/pwrite (chosen by options), " + size_text(options_.chunk_bytes) + " chunks";
  else
    mechanism_ = "pread/pwrite (io_uring unavailable: " + uring_problem + "), " + size_text(options_.chunk_bytes) + " chunks";
  if (uses_direct_) mechanism_ += ", O_DIRECT";
  else if (options_.direct_io == DirectIo::off) mechanism_ += ", buffered (chosen by options)";
  else mechanism_ += ", buffered (O_DIRECT unsupported here: " + direct_problem + ")";

  adopt_existing_files();
  remover_ = std::thread([this] { run_removals(); });
}

NvmeStore::~NvmeStore() {
  {
    std::lock_guard lock(removal_mutex_);
    removal_stopping_ = true;
  }
  removal_wake_.notify_all();
  remover_.join();  // after deleting every file still queued
}

std::filesystem::path NvmeStore::path_of(std::uint64_t id) const { return dir_ / (hex16(id) + kBlockSuffix); }

std::filesystem::path NvmeStore::staging_path_of(std::uint64_t id) const {
  return dir_ / (hex16(id) + kBlockSuffix + kStagingSuffix);
}

void NvmeStore::adopt_existing_files() {
  const auto is_hex16 = [](const std::string& s) {
    return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  std::error_code listing_error;
  std::filesystem::directory_iterator listing(dir_, listing_error);
  if (listing_error) throw InputError(dir_.string(), "NVMe directory", "cannot be listed: " + listing_error.message());
  for (const auto& entry : listing) {
    const std::string name = entry.path().filename().string();
    const std::string stem = name.substr(0, 16);
    if (!is_hex16(stem)) continue;
    std::error_code ec;
    if (name == stem + kBlockSuffix + kStagingSuffix) {
      std::filesystem::remove(entry.path(), ec);  // an interrupted write: never published
    } else if (name == stem + kBlockSuffix && entry.is_regular_file(ec)) {
      const auto bytes = entry.file_size(ec);
      if (ec) continue;
      file_bytes_[std::stoull(stem, nullptr, 16)] = bytes;
      committed_bytes_ += bytes;
    }
  }
}

std::uint64_t NvmeStore::used_bytes() const {
  std::lock_guard lock(accounting_mutex_);
  return committed_bytes_ + orphaned_bytes_;
}

std::size_t NvmeStore::block_count() const {
  std::lock_guard lock(accounting_mutex_);
  return file_bytes_.size();
}

Status NvmeStore::write(std::uint64_t id, std::span<const std::byte> data, const std::string& label) {
  const std::filesystem::path staging = staging_path_of(id);
  const std::string what = "write " + block_name(id, label) + " to " + staging.string();
  const std::uint64_t file_bytes = kBlockHeaderBytes + data.size();
  const auto id_guard = id_locks_.lock(id);
  cancel_removal(id);  // this write's file replaces the removed one: it must stay

  {
    std::lock_guard lock(accounting_mutex_);
    const std::uint64_t in_use = committed_bytes_ + reserved_bytes_ + orphaned_bytes_;
    if (in_use > options_.capacity_bytes || file_bytes > options_.capacity_bytes - in_use)
      return Status(StatusCode::resource_exhausted,
                    what + ": capacity budget exceeded: the store holds " +
                        std::to_string(committed_bytes_ + orphaned_bytes_) +
                        " bytes (+" + std::to_string(reserved_bytes_) + " being written) of its " +
                        std::to_string(options_.capacity_bytes) + "-byte budget and this file needs " +
                        std::to_string(file_bytes));
    reserved_bytes_ += file_bytes;
  }
  // Gives the reservation back however this call ends (bad_alloc included).
  struct Unreserve {
    NvmeStore& store;
    std::uint64_t bytes;
    ~Unreserve() {
      std::lock_guard lock(store.accounting_mutex_);
      store.reserved_bytes_ -= bytes;
    }
  } unreserve{*this, file_bytes};

  Status status = write_staging(id, data, what, staging);
  const std::filesystem::path target = path_of(id);
  if (status.ok() && ::rename(staging.c_str(), target.c_str()) != 0)
    status = errno_status(what, "publish (rename to " + target.string() + ")", errno);
  if (!status.ok()) {
    ::unlink(staging.c_str());  // the previous version, if any, is untouched
    return status;
  }
  {
    std::lock_guard lock(accounting_mutex_);
    auto [it, inserted] = file_bytes_.try_emplace(id, 0);
    committed_bytes_ = committed_bytes_ - it->second + file_bytes;
    it->second = file_bytes;
  }
  if (options_.durable && ::fsync(dir_fd_.get()) != 0)
    return errno_status(what, "fsync directory " + dir_.string() + " after publishing " + target.string(), errno);
  return Status::success();
}

Status NvmeStore::write_staging(std::uint64_t id, std::span<const std::byte> data, const std::string& what,
                                const std::filesystem::path& staging) {
  bool direct = uses_direct_;
  UniqueFd fd = open_file(staging, O_WRONLY | O_CREAT | O_TRUNC, direct);
  if (!fd) return errno_status(what, "open", errno);

  const std::uint64_t exact_bytes = kBlockHeaderBytes + data.size();
  const std::uint64_t padded_bytes = kBlockHeaderBytes + (direct ? round_up(data.size()) : data.size());
  // No fallocate(): on ext4 it made O_DIRECT writes slower (unwritten extents to convert at
  // every completion); a full disk shows up as ENOSPC from the first write that hits it.
  auto context = pool_->acquire();
  Xxh64 hasher;
  // The header goes out in the payload's pipeline, encoded once every payload byte has been
  // hashed. Completion order does not matter: the file is published (renamed) only after all
  // requests succeeded, and an unpublished or torn file never verifies.
  const CompanionRequest header{context->header_block(), 0, [&] {
    encode_header({id, data.size(), hasher.digest()}, context->header_block());
  }};
  const Status status = write_range(*context, {fd.get(), kBlockHeaderBytes, direct}, data, &hasher, what, &header);
  if (!status.ok()) return status;

  if (padded_bytes != exact_bytes && ::ftruncate(fd.get(), static_cast<off_t>(exact_bytes)) != 0)
    return errno_status(what, "truncate to " + std::to_string(exact_bytes) + " bytes", errno);
  if (options_.durable && ::fdatasync(fd.get()) != 0) return errno_status(what, "fdatasync", errno);
  if (fd.close() != 0) return errno_status(what, "close", errno);
  return Status::success();
}

Status NvmeStore::read(std::uint64_t id, std::span<std::byte> out, const std::string& label) {
  const std::filesystem::path path = path_of(id);
  const std::string what = "read " + block_name(id, label) + " from " + path.string();
  if (removal_pending(id)) return errno_status(what, "open", ENOENT);  // removed; the file goes soon
  return read_file(id, out, what, path);
}

Status NvmeStore::read_file(std::uint64_t id, std::span<std::byte> out, const std::string& what,
                            const std::filesystem::path& path) {
  bool direct = uses_direct_;
  UniqueFd fd = open_file(path, O_RDONLY, direct);
  if (!fd) return errno_status(what, "open", errno);
  struct stat info{};
  if (::fstat(fd.get(), &info) != 0) return errno_status(what, "fstat", errno);
  if (!S_ISREG(info.st_mode)) return Status(StatusCode::io_error, what + ": not a regular file");
  const auto file_bytes = static_cast<std::uint64_t>(info.st_size);
  if (file_bytes < kBlockHeaderBytes)
    return Status(StatusCode::io_error, what + ": truncated: the file has " + std::to_string(file_bytes) +
                                            " bytes, fewer than its " + std::to_string(kBlockHeaderBytes) +
                                            "-byte header");

  auto context = pool_->acquire();
  const auto check_header = [&](BlockHeader& header) {
    std::string problem;
    if (!decode_header(context->header_block(), header, problem))
      return Status(StatusCode::io_error, what + ": corrupt header: " + problem);
    if (header.id != id)
      return Status(StatusCode::io_error, what + ": the file holds block id " + std::to_string(header.id) + ", not " +
                                              std::to_string(id));
    if (header.payload_bytes != out.size())
      return Status(StatusCode::invalid_argument, what + ": the block holds " + std::to_string(header.payload_bytes) +
                                                      " bytes but the destination has " + std::to_string(out.size()));
    if (file_bytes != kBlockHeaderBytes + header.payload_bytes)
      return Status(StatusCode::io_error, what + ": the file has " + std::to_string(file_bytes) +
                                              " bytes but its header promises " +
                                              std::to_string(kBlockHeaderBytes + header.payload_bytes) +
                                              " (truncated or extended)");
    return Status::success();
  };

  BlockHeader header;
  if (file_bytes != kBlockHeaderBytes + out.size()) {
    // Not the expected length: the header alone says why (wrong block, wrong size, damage).
    Status status = read_range(*context, {fd.get(), 0, direct}, context->header_block(), nullptr, what);
    if (status.ok()) status = check_header(header);
    if (status.ok())  // unreachable unless the file changed under us
      status = Status(StatusCode::io_error, what + ": the file changed while being read");
    return status;
  }
  // Header and payload in one pipeline: no extra round trip for the header.
  Xxh64 hasher;
  const CompanionRequest header_request{context->header_block(), 0, {}};
  Status status = read_range(*context, {fd.get(), kBlockHeaderBytes, direct}, out, &hasher, what, &header_request);
  if (!status.ok()) return status;
  status = check_header(header);
  if (!status.ok()) return status;
  const std::uint64_t computed = hasher.digest();
  if (computed != header.payload_checksum)
    return Status(StatusCode::io_error, what + ": payload checksum mismatch (stored " + hex16(header.payload_checksum) +
                                            ", computed " + hex16(computed) + "): the file is corrupt");
  return Status::success();
}

}  // namespace asteria::real

#include "core/checkpoint/checkpoint_reader.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/common/error.hpp"
#include "core/io/xxhash64.hpp"

namespace asteria::checkpoint {
namespace {

// An open file descriptor, closed on every exit.
class ReadFile {
 public:
  ReadFile(io::FileSystem& files, const std::filesystem::path& path) : files_(files), path_(path) {
    fd_ = files_.open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd_ < 0) throw IoError(path.string(), "open", std::strerror(errno));
  }
  ~ReadFile() { files_.close(fd_); }
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  // Exactly `out.size()` bytes at `offset`; a file that ends early is torn.
  void read(std::span<std::byte> out, std::uint64_t offset, const std::string& what) {
    while (!out.empty()) {
      const ::ssize_t n = files_.pread(fd_, out.data(), out.size(), static_cast<::off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError(path_.string(), what, std::strerror(errno));
      if (n == 0) throw IoError(path_.string(), what, "the file ends early (truncated)");
      out = out.subspan(static_cast<std::size_t>(n));
      offset += static_cast<std::uint64_t>(n);
    }
  }
  // The file's size, by reading past its end is not possible through pread alone: the
  // directory entry's size.
  std::uint64_t size() const {
    std::error_code ec;
    const std::uintmax_t bytes = std::filesystem::file_size(path_, ec);
    if (ec) throw IoError(path_.string(), "size", ec.message());
    return bytes;
  }

 private:
  io::FileSystem& files_;
  std::filesystem::path path_;
  int fd_ = -1;
};

std::string read_text(io::FileSystem& files, const std::filesystem::path& path) {
  ReadFile file(files, path);
  const std::uint64_t bytes = file.size();
  constexpr std::uint64_t kLargestManifest = std::uint64_t{1} << 30;  // far beyond any real one
  if (bytes > kLargestManifest)
    throw InputError(path.string(), "size", "a manifest of " + std::to_string(bytes) + " bytes (corrupted)");
  std::string text(static_cast<std::size_t>(bytes), '\0');
  file.read(std::as_writable_bytes(std::span(text.data(), text.size())), 0, "read");
  return text;
}

// The slot's manifest, checked against its data file's header and size (no chunk read).
Manifest check_slot_files(const std::filesystem::path& slot, io::FileSystem& files) {
  const std::filesystem::path manifest_path = slot / kManifestFile;
  std::error_code ec;
  if (!std::filesystem::exists(manifest_path, ec))
    throw InputError(manifest_path.string(), "manifest", "missing (no checkpoint, or one interrupted while written)");
  Manifest m = parse_manifest(read_text(files, manifest_path), manifest_path.string());
  const std::filesystem::path data = slot / kDataFile;
  ReadFile file(files, data);
  if (file.size() != m.data_bytes)
    throw InputError(data.string(), "size",
                     "expected " + std::to_string(m.data_bytes) + " bytes (the manifest's), found " +
                         std::to_string(file.size()) + " (torn or replaced)");
  std::vector<std::byte> header(kHeaderBytes);
  file.read(header, 0, "read the header");
  const Header h = parse_header(header, data.string());
  if (header_checksum(header) != m.header_checksum || h.step != m.step || h.sequence != m.sequence)
    throw InputError(data.string(), "header", "does not match the manifest (a data file of another checkpoint)");
  return m;
}

// Every chunk against its checksum, streamed in pieces.
void verify_chunks(const std::filesystem::path& slot, const Manifest& m, io::FileSystem& files) {
  const std::filesystem::path data = slot / kDataFile;
  ReadFile file(files, data);
  std::vector<std::byte> buffer(std::size_t{8} << 20);
  for (const Chunk& c : m.chunks) {
    io::Xxh64 hasher;
    for (std::uint64_t done = 0; done < c.bytes;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), c.bytes - done));
      file.read(std::span(buffer).first(n), c.offset + done, "read chunk '" + c.name + "'");
      hasher.update(std::span(buffer).first(n));
      done += n;
    }
    if (hasher.digest() != c.checksum)
      throw IoError(data.string(), "chunk '" + c.name + "'", "checksum mismatch (corrupted)");
  }
}

}  // namespace

bool is_checkpoint_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  for (std::string_view name : kSlotNames)
    if (std::filesystem::is_directory(dir / name, ec)) return true;
  return false;
}

SlotScan scan_slots(const std::filesystem::path& dir, io::FileSystem& files) {
  SlotScan scan;
  std::uint64_t newest_sequence = 0;
  for (std::size_t i = 0; i < std::size(kSlotNames); ++i) {
    try {
      const Manifest m = check_slot_files(dir / kSlotNames[i], files);
      scan.next_sequence = std::max(scan.next_sequence, m.sequence + 1);
      if (!scan.newest || m.sequence > newest_sequence) {
        scan.newest = i;
        newest_sequence = m.sequence;
      }
    } catch (const Error&) {  // incomplete or corrupted: free to overwrite
    }
  }
  return scan;
}

CheckpointReader::CheckpointReader(std::filesystem::path slot, Manifest manifest, io::FileSystem* files,
                                   std::shared_ptr<io::PosixFileSystem> own)
    : slot_(std::move(slot)), manifest_(std::move(manifest)), files_(files), own_files_(std::move(own)) {}

CheckpointReader CheckpointReader::open_latest(const std::filesystem::path& dir, io::FileSystem* files) {
  std::shared_ptr<io::PosixFileSystem> own = files == nullptr ? std::make_shared<io::PosixFileSystem>() : nullptr;
  io::FileSystem& fs = files == nullptr ? *own : *files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError(dir.string(), "checkpoint directory", "does not exist");
  struct Candidate {
    std::size_t slot;
    Manifest manifest;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < std::size(kSlotNames); ++i) {
    try {
      candidates.push_back({i, check_slot_files(dir / kSlotNames[i], fs)});
    } catch (const Error& e) {
      problems.push_back(std::string(kSlotNames[i]) + ": " + e.what());
    }
  }
  // Newest first; a slot whose chunks fail their checksums is passed over for the older one.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.manifest.sequence > b.manifest.sequence; });
  for (Candidate& c : candidates) {
    const std::filesystem::path slot = dir / kSlotNames[c.slot];
    try {
      verify_chunks(slot, c.manifest, fs);
    } catch (const Error& e) {
      problems.push_back(std::string(kSlotNames[c.slot]) + ": " + e.what());
      continue;
    }
    CheckpointReader reader(slot, std::move(c.manifest), files == nullptr ? own.get() : files, own);
    // Only slots newer than the one loaded count as passed over; an older broken one does not matter.
    for (const std::string& p : problems) reader.passed_over_.push_back(p);
    return reader;
  }
  std::string reasons;
  for (const std::string& p : problems) reasons += (reasons.empty() ? "" : "; ") + p;
  throw InputError(dir.string(), "checkpoint", "no loadable checkpoint (" + reasons + ")");
}

std::vector<std::byte> CheckpointReader::read(std::string_view name) const {
  const Chunk* c = manifest_.find(name);
  if (c == nullptr) throw InputError(slot_.string(), "chunk '" + std::string(name) + "'", "missing from the checkpoint");
  const std::filesystem::path data = slot_ / kDataFile;
  std::vector<std::byte> out(static_cast<std::size_t>(c->bytes));
  ReadFile file(*files_, data);
  file.read(out, c->offset, "read chunk '" + c->name + "'");
  if (io::xxh64(out) != c->checksum) throw IoError(data.string(), "chunk '" + c->name + "'", "checksum mismatch (corrupted)");
  return out;
}

const std::string& CheckpointReader::meta(const std::string& key) const {
  const auto it = manifest_.meta.find(key);
  if (it == manifest_.meta.end())
    throw InputError((slot_ / kManifestFile).string(), "meta." + key, "missing (a checkpoint of another kind of run)");
  return it->second;
}

}  // namespace asteria::checkpoint

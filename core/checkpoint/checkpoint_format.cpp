#include "core/checkpoint/checkpoint_format.hpp"

#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/checkpoint/byte_codec.hpp"
#include "core/common/error.hpp"
#include "core/io/xxhash64.hpp"

namespace asteria::checkpoint {
namespace {

constexpr char kMagic[8] = {'A', 'S', 'T', 'C', 'K', 'P', 'T', '1'};
constexpr std::string_view kFormatName = "asteria-checkpoint";

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::uint64_t parse_hex(const nlohmann::json& j, const std::string& source, const std::string& field) {
  if (!j.is_string()) throw InputError(source, field, "expected a 16-digit hexadecimal checksum");
  const std::string text = j.get<std::string>();
  if (text.size() != 16 || text.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw InputError(source, field, "expected 16 lowercase hexadecimal digits, found '" + text + "'");
  return std::stoull(text, nullptr, 16);
}

// The manifest without its checksum, as one canonical line (keys sorted, no spaces).
nlohmann::json body_of(const Manifest& m) {
  nlohmann::json j;
  j["format"] = kFormatName;
  j["version"] = kFormatVersion;
  j["step"] = m.step;
  j["sequence"] = m.sequence;
  j["data_file"] = kDataFile;
  j["data_bytes"] = m.data_bytes;
  j["header_checksum"] = hex(m.header_checksum);
  nlohmann::json chunks = nlohmann::json::array();
  for (const Chunk& c : m.chunks)
    chunks.push_back({{"name", c.name}, {"offset", c.offset}, {"bytes", c.bytes}, {"xxh64", hex(c.checksum)}});
  j["chunks"] = std::move(chunks);
  j["meta"] = m.meta;
  return j;
}

std::uint64_t text_checksum(const std::string& text) {
  return io::xxh64(std::as_bytes(std::span(text.data(), text.size())));
}

template <class V>
V field_of(const nlohmann::json& j, const char* key, const std::string& source, const std::string& where,
           const char* expected) {
  const auto it = j.find(key);
  if (it == j.end()) throw InputError(source, where + key, std::string("missing: expected ") + expected);
  if constexpr (std::is_same_v<V, std::string>) {
    if (!it->is_string()) throw InputError(source, where + key, std::string("expected ") + expected);
  } else if constexpr (std::is_signed_v<V>) {
    if (!it->is_number_integer()) throw InputError(source, where + key, std::string("expected ") + expected);
  } else {
    if (!it->is_number_unsigned()) throw InputError(source, where + key, std::string("expected ") + expected);
  }
  return it->get<V>();
}

}  // namespace

const Chunk* Manifest::find(std::string_view name) const noexcept {
  for (const Chunk& c : chunks)
    if (c.name == name) return &c;
  return nullptr;
}

std::uint64_t header_checksum(std::span<const std::byte> header_bytes) {
  return io::xxh64(header_bytes.first(kHeaderBytes - 8));
}

std::vector<std::byte> encode_header(const Header& header) {
  ByteWriter w;
  w.raw(kMagic, sizeof kMagic);
  const std::uint32_t version = kFormatVersion, reserved = 0;
  w.raw(&version, sizeof version);
  w.raw(&reserved, sizeof reserved);
  w.i64(header.step);
  w.u64(header.sequence);
  w.u64(header_checksum(w.image()));  // of the 32 bytes so far
  return std::move(w.image());
}

Header parse_header(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < kHeaderBytes)
    throw InputError(source, "header", "expected " + std::to_string(kHeaderBytes) + " bytes, found " +
                                           std::to_string(bytes.size()) + " (truncated)");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw InputError(source, "header.magic", "expected 'ASTCKPT1': not an Asteria checkpoint data file");
  ByteReader r(bytes.first(kHeaderBytes), source);
  r.take(sizeof kMagic, "header.magic");
  std::uint32_t version = 0, reserved = 0;
  std::memcpy(&version, r.take(4, "header.version").data(), 4);
  std::memcpy(&reserved, r.take(4, "header.reserved").data(), 4);
  Header h;
  h.step = r.i64("header.step");
  h.sequence = r.u64("header.sequence");
  const std::uint64_t stored = r.u64("header.checksum");
  if (stored != header_checksum(bytes))
    throw InputError(source, "header.checksum", "mismatch: the header is corrupted");
  if (version != kFormatVersion)
    throw InputError(source, "header.version",
                     "expected format version " + std::to_string(kFormatVersion) + ", found " + std::to_string(version));
  if (h.step < 0) throw InputError(source, "header.step", "expected a step >= 0, found " + std::to_string(h.step));
  return h;
}

std::string encode_manifest(const Manifest& manifest) {
  nlohmann::json j = body_of(manifest);
  j["checksum"] = hex(text_checksum(j.dump()));
  return j.dump(2) + '\n';
}

Manifest parse_manifest(std::string_view text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw InputError(source, "manifest", "expected a JSON object (corrupted)");
  const std::string format = field_of<std::string>(j, "format", source, "", "\"asteria-checkpoint\"");
  if (format != kFormatName)
    throw InputError(source, "format", "expected \"asteria-checkpoint\", found \"" + format + "\"");
  const std::uint64_t version = field_of<std::uint64_t>(j, "version", source, "", "an integer");
  if (version != kFormatVersion)
    throw InputError(source, "version",
                     "expected format version " + std::to_string(kFormatVersion) + ", found " + std::to_string(version));
  const auto stored = j.find("checksum");
  if (stored == j.end()) throw InputError(source, "checksum", "missing: expected the manifest's xxh64");
  const std::uint64_t checksum = parse_hex(*stored, source, "checksum");
  nlohmann::json body = j;
  body.erase("checksum");
  if (text_checksum(body.dump()) != checksum)
    throw InputError(source, "checksum", "mismatch: the manifest is corrupted");

  Manifest m;
  m.step = field_of<std::int64_t>(j, "step", source, "", "an integer step >= 0");
  if (m.step < 0) throw InputError(source, "step", "expected a step >= 0, found " + std::to_string(m.step));
  m.sequence = field_of<std::uint64_t>(j, "sequence", source, "", "an integer >= 0");
  if (field_of<std::string>(j, "data_file", source, "", "a file name") != kDataFile)
    throw InputError(source, "data_file", "expected \"" + std::string(kDataFile) + "\"");
  m.data_bytes = field_of<std::uint64_t>(j, "data_bytes", source, "", "a byte count");
  const auto header = j.find("header_checksum");
  if (header == j.end()) throw InputError(source, "header_checksum", "missing: expected the header's xxh64");
  m.header_checksum = parse_hex(*header, source, "header_checksum");
  const auto chunks = j.find("chunks");
  if (chunks == j.end() || !chunks->is_array()) throw InputError(source, "chunks", "expected an array of chunks");
  std::set<std::string> names;
  std::uint64_t end = kHeaderBytes;
  for (std::size_t i = 0; i < chunks->size(); ++i) {
    const nlohmann::json& c = (*chunks)[i];
    const std::string where = "chunks[" + std::to_string(i) + "].";
    if (!c.is_object()) throw InputError(source, where.substr(0, where.size() - 1), "expected an object");
    Chunk chunk;
    chunk.name = field_of<std::string>(c, "name", source, where, "a name");
    chunk.offset = field_of<std::uint64_t>(c, "offset", source, where, "a byte offset");
    chunk.bytes = field_of<std::uint64_t>(c, "bytes", source, where, "a byte count");
    const auto sum = c.find("xxh64");
    if (sum == c.end()) throw InputError(source, where + "xxh64", "missing: expected the chunk's checksum");
    chunk.checksum = parse_hex(*sum, source, where + "xxh64");
    if (!names.insert(chunk.name).second) throw InputError(source, where + "name", "'" + chunk.name + "' listed twice");
    if (chunk.offset < end)
      throw InputError(source, where + "offset", "expected chunks in file order, not overlapping (>= " + std::to_string(end) + ")");
    if (chunk.bytes > m.data_bytes || chunk.offset > m.data_bytes - chunk.bytes)
      throw InputError(source, where + "bytes", "the chunk ends past the data file's " + std::to_string(m.data_bytes) + " bytes");
    end = chunk.offset + chunk.bytes;
    m.chunks.push_back(std::move(chunk));
  }
  const auto meta = j.find("meta");
  if (meta == j.end() || !meta->is_object()) throw InputError(source, "meta", "expected an object of strings");
  for (auto it = meta->begin(); it != meta->end(); ++it) {
    if (!it->is_string()) throw InputError(source, "meta." + it.key(), "expected a string");
    m.meta[it.key()] = it->get<std::string>();
  }
  return m;
}

}  // namespace asteria::checkpoint

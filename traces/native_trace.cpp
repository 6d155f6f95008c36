#include "traces/native_trace.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/common/utf8.hpp"
#include "core/plan/op.hpp"
#include "core/platform/cost_text.hpp"
#include "core/io/atomic_file.hpp"

namespace asteria::traces {
namespace {

const std::string kMagic = "# asteria-trace ";

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
void put_text(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) {
    out += field;
    return;
  }
  out += '"';
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

class LineReader {
 public:
  LineReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}
  bool done() const noexcept { return pos_ >= text_.size(); }
  std::size_t line() const noexcept { return line_; }
  const std::string& source() const noexcept { return source_; }

  std::string_view next_line() {
    const std::size_t end = text_.find('\n', pos_);
    std::string_view line = text_.substr(pos_, end == std::string_view::npos ? std::string_view::npos : end - pos_);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }

  // One CSV row (quoted fields may span lines).
  std::vector<std::string> next_row() {
    std::vector<std::string> fields(1);
    bool quoted = false;
    ++line_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (quoted) {
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            fields.back() += '"';
            ++pos_;
          } else {
            quoted = false;
          }
        } else {
          if (c == '\n') ++line_;
          fields.back() += c;
        }
        continue;
      }
      if (c == '"') quoted = true;
      else if (c == ',') fields.emplace_back();
      else if (c == '\n') return fields;
      else if (c != '\r') fields.back() += c;
    }
    if (quoted) throw InputError(source_, "line " + std::to_string(line_), "a closing quote");
    return fields;
  }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
};

template <class Int>
Int parse_int(const std::string& text, const LineReader& in, std::string_view column) {
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    throw InputError(in.source(), "line " + std::to_string(in.line()) + ": " + std::string(column),
                     "an integer, found \"" + text + "\"");
  return value;
}

double parse_double(const std::string& text, const LineReader& in, std::string_view column) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    throw InputError(in.source(), "line " + std::to_string(in.line()) + ": " + std::string(column),
                     "a number, found \"" + text + "\"");
  // from_chars takes every spelling of infinity and NaN ("INF", "nan(1)"), not only the usual.
  if (!std::isfinite(value))
    throw InputError(in.source(), "line " + std::to_string(in.line()) + ": " + std::string(column),
                     "a finite number, found \"" + text + "\"");
  return value;
}

// Text goes on into JSON (the Chrome trace, replay.json), which must be UTF-8.
void require_utf8(std::string_view text, const LineReader& in, std::string_view column) {
  if (const auto at = utf8_error_at(text))
    throw InputError(in.source(), "line " + std::to_string(in.line()) + ": " + std::string(column),
                     "UTF-8 text, found an invalid byte sequence at byte " + std::to_string(*at + 1));
}

// The kinds a recorder writes: the plan's op kinds, and the records beside ops.
bool is_record_kind(std::string_view kind) {
  for (int k = 0; k < plan::kOpKindCount; ++k)
    if (plan::to_string(static_cast<plan::OpKind>(k)) == kind) return true;
  for (std::string_view other : {"counter", "launch", "refresh_job", "transfer", "io", "step", "other"})
    if (other == kind) return true;
  return false;
}

std::string record_kinds_text() {
  std::string text;
  for (int k = 0; k < plan::kOpKindCount; ++k) text += std::string(plan::to_string(static_cast<plan::OpKind>(k))) + ", ";
  return text + "counter, launch, refresh_job, transfer, io, step, other";
}

// What no recorder writes: a time before the run's start or an end before its start, negative
// amounts, unknown kinds, negative units or steps. A calibration or replay would fit or compare
// them as if measured.
void check_record(const TraceRecord& r, const LineReader& in) {
  const std::string where = "line " + std::to_string(in.line()) + ": ";
  if (r.unit < 0) throw InputError(in.source(), where + "unit", "an integer >= 0, found " + std::to_string(r.unit));
  if (r.step < 0) throw InputError(in.source(), where + "step", "an integer >= 0, found " + std::to_string(r.step));
  if (!is_record_kind(r.kind))
    throw InputError(in.source(), where + "kind", "one of " + record_kinds_text() + ", found \"" + r.kind + "\"");
  if (!(r.start_s >= 0.0))
    throw InputError(in.source(), where + "start_s", "seconds >= 0 since the run's start, found " + exact_number(r.start_s));
  if (!(r.end_s >= r.start_s))
    throw InputError(in.source(), where + "end_s",
                     "seconds >= start_s (" + exact_number(r.start_s) + "), found " + exact_number(r.end_s));
  if (!(r.bytes >= 0.0)) throw InputError(in.source(), where + "bytes", "a count >= 0, found " + exact_number(r.bytes));
  if (!(r.flops >= 0.0)) throw InputError(in.source(), where + "flops", "a count >= 0, found " + exact_number(r.flops));
}

}  // namespace

const std::vector<std::string_view>& native_trace_columns() {
  static const std::vector<std::string_view> columns = {"unit",  "step",     "op",    "launch",  "kind",   "layer",
                                                        "block", "micro_batch", "resource", "start_s", "end_s", "bytes",
                                                        "flops", "cost",     "deps",  "ok",      "label"};
  return columns;
}

std::string native_trace_text(const NativeTrace& trace) {
  std::string out = kMagic + std::to_string(kNativeTraceVersion) + '\n';
  for (const auto& [key, value] : trace.metadata) {
    if (key.find_first_of("=\n\r") != std::string::npos || value.find_first_of("\n\r") != std::string::npos)
      throw InputError("native trace", "metadata \"" + key + "\"", "a key without '=' or line breaks, a one-line value");
    out += "# " + key + '=' + value + '\n';
  }
  const auto& columns = native_trace_columns();
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    out += columns[c];
  }
  out += '\n';
  out.reserve(out.size() + trace.records.size() * 120);
  for (const TraceRecord& r : trace.records) {
    out += std::to_string(r.unit) + ',' + std::to_string(r.step) + ',' + std::to_string(r.op) + ',' +
           std::to_string(r.launch) + ',';
    put_text(out, r.kind);
    out += ',' + std::to_string(r.layer) + ',' + std::to_string(r.block) + ',' + std::to_string(r.micro_batch) + ',';
    put_text(out, r.resource);
    out += ',' + exact_number(r.start_s) + ',' + exact_number(r.end_s) + ',' + exact_number(r.bytes) + ',' +
           exact_number(r.flops) + ',';
    put_text(out, platform::to_text(r.cost));
    out += ',';
    for (std::size_t d = 0; d < r.deps.size(); ++d) {
      if (d) out += ';';
      out += std::to_string(r.deps[d]);
    }
    out += r.ok ? ",1," : ",0,";
    put_text(out, r.label);
    out += '\n';
  }
  return out;
}

NativeTrace parse_native_trace(std::string_view text, const std::string& source) {
  LineReader in(text, source);
  NativeTrace trace;
  if (in.done()) throw InputError(source, "line 1", "the line \"" + kMagic + std::to_string(kNativeTraceVersion) + "\"");
  const std::string_view first = in.next_line();
  if (first.substr(0, kMagic.size()) != kMagic)
    throw InputError(source, "line 1", "the line \"" + kMagic + "<version>\" (not an Asteria native trace)");
  const std::string version(first.substr(kMagic.size()));
  if (version != std::to_string(kNativeTraceVersion))
    throw InputError(source, "line 1", "format version " + std::to_string(kNativeTraceVersion) + ", found " + version);
  // Metadata lines, then the header.
  std::vector<std::string> header;
  for (;;) {
    if (in.done()) throw InputError(source, "line " + std::to_string(in.line() + 1), "the header row");
    // Peek: metadata lines start with "# ".
    LineReader probe = in;
    const std::string_view line = probe.next_line();
    if (line.substr(0, 2) == "# ") {
      in.next_line();
      const std::string_view body = line.substr(2);
      // What native_trace_text cannot write back (only a line's final '\r' is dropped).
      if (body.find('\r') != std::string_view::npos)
        throw InputError(source, "line " + std::to_string(in.line()), "metadata on one line, found a carriage return");
      const std::size_t eq = body.find('=');
      if (eq == std::string_view::npos)
        throw InputError(source, "line " + std::to_string(in.line()), "metadata as \"# key=value\"");
      require_utf8(body, in, "metadata");
      trace.metadata[std::string(body.substr(0, eq))] = std::string(body.substr(eq + 1));
      continue;
    }
    header = in.next_row();
    break;
  }
  const auto& columns = native_trace_columns();
  if (header.size() != columns.size() || !std::equal(header.begin(), header.end(), columns.begin()))
    throw InputError(source, "line " + std::to_string(in.line()), "the header row of format version " + std::to_string(kNativeTraceVersion));
  // A row seen twice would be counted twice by a fit or a replay: the line each row was first on.
  std::unordered_map<std::string, std::size_t> rows;
  while (!in.done()) {
    const std::vector<std::string> f = in.next_row();
    if (f.size() == 1 && f[0].empty()) continue;  // a blank line
    if (f.size() != columns.size())
      throw InputError(source, "line " + std::to_string(in.line()),
                       std::to_string(columns.size()) + " fields, found " + std::to_string(f.size()));
    TraceRecord r;
    r.unit = parse_int<int>(f[0], in, "unit");
    r.step = parse_int<std::int64_t>(f[1], in, "step");
    r.op = parse_int<std::int32_t>(f[2], in, "op");
    r.launch = parse_int<std::int32_t>(f[3], in, "launch");
    r.kind = f[4];
    r.layer = parse_int<std::int32_t>(f[5], in, "layer");
    r.block = parse_int<std::int32_t>(f[6], in, "block");
    r.micro_batch = parse_int<std::int32_t>(f[7], in, "micro_batch");
    r.resource = f[8];
    r.start_s = parse_double(f[9], in, "start_s");
    r.end_s = parse_double(f[10], in, "end_s");
    r.bytes = parse_double(f[11], in, "bytes");
    r.flops = parse_double(f[12], in, "flops");
    r.cost = platform::parse_costs(f[13], source, "line " + std::to_string(in.line()) + ": cost");
    std::string_view deps = f[14];
    while (!deps.empty()) {
      const std::size_t semi = deps.find(';');
      r.deps.push_back(parse_int<std::int32_t>(std::string(deps.substr(0, semi)), in, "deps"));
      deps = semi == std::string_view::npos ? std::string_view{} : deps.substr(semi + 1);
    }
    if (f[15] != "0" && f[15] != "1")
      throw InputError(source, "line " + std::to_string(in.line()) + ": ok", "0 or 1, found \"" + f[15] + "\"");
    r.ok = f[15] == "1";
    r.label = f[16];
    if (r.kind.empty()) throw InputError(source, "line " + std::to_string(in.line()) + ": kind", "a record kind");
    require_utf8(r.kind, in, "kind");
    require_utf8(r.resource, in, "resource");
    require_utf8(r.label, in, "label");
    check_record(r, in);
    std::string row;
    for (const std::string& field : f) row += field + '\x1f';
    if (const auto [at, fresh] = rows.try_emplace(std::move(row), in.line()); !fresh)
      throw InputError(source, "line " + std::to_string(in.line()),
                       "each record once, found a copy of line " + std::to_string(at->second));
    trace.records.push_back(std::move(r));
  }
  return trace;
}

void write_native_trace(const NativeTrace& trace, const std::filesystem::path& path) {
  io::write_file_atomically(path, native_trace_text(trace));
}

NativeTrace read_native_trace(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "file", "a readable native trace");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_native_trace(text.str(), path.string());
}

}  // namespace asteria::traces

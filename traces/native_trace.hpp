#pragma once
// The native trace: the plan a run executed, one record per operation with where and when it
// ran, what it moved and computed, and what it waited for. Every backend produces it through one
// recorder (trace_recorder.hpp); the Chrome trace is drawn from it (chrome_trace.hpp); a replay
// can rebuild the plan from it. The file format ("asteria-trace", version 2) is documented in
// traces/README.md: a CSV file whose first line is "# asteria-trace 2", then "# key=value"
// metadata lines, then a header row and one row per record.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/cost.hpp"

namespace asteria::traces {

inline constexpr int kNativeTraceVersion = 2;

// What a record is: a plan op (its kind: "forward", "backward", "reduce", "prefetch", "acquire",
// "release", "publish", "accumulate", "refresh", "update"), or work a plan op caused
// ("refresh_job", "transfer", "io"), a fused launch no op of which was charged ("launch"), a whole
// step ("step"), a counter sample ("counter"), or work outside any plan ("other").
struct TraceRecord {
  int unit = 0;                // the rank
  std::int64_t step = 0;       // 0: before the first step
  std::int32_t op = -1;        // the plan op (for refresh_job, transfer, io: the op that caused it)
  std::int32_t launch = -1;    // the launch the op was submitted in, if fused
  std::string kind;
  std::int32_t layer = -1;
  std::int32_t block = -1;
  std::int32_t micro_batch = -1;
  std::string resource;        // the track: "gpu0 stream", "cpu0 worker 1", "link c2c-h2d0", ...
  double start_s = 0.0;
  double end_s = 0.0;          // counters: the sample time, as start_s
  double bytes = 0.0;          // counters: the sample's value
  double flops = 0.0;
  // What the record was charged for, piece by piece (kind, flops, bytes, dimension): what a
  // calibration fits coefficients to. bytes and flops are its totals.
  platform::Costs cost;
  std::vector<std::int32_t> deps;  // ops of the same unit and step this record waited for
  bool ok = true;
  std::string label;           // "backward layer3", "copy host->device: ...", the counter's name

  friend bool operator==(const TraceRecord&, const TraceRecord&) = default;
};

struct NativeTrace {
  // Free-form run description ("hw", "model", "optimizer", "first_step", "last_step", ...);
  // keys and values without newlines.
  std::map<std::string, std::string> metadata;
  std::vector<TraceRecord> records;

  friend bool operator==(const NativeTrace&, const NativeTrace&) = default;
};

// The header row of the file, in column order.
const std::vector<std::string_view>& native_trace_columns();

// The file's text. Numbers are written in their shortest exact form, so read(write(t)) == t.
std::string native_trace_text(const NativeTrace& trace);
// Parses the text; `source` names it in errors. Throws InputError(source, "line N: <column>",
// expectation) for a missing or unsupported version line, a header that is not the documented
// one, a row with the wrong number of fields, or a field that does not parse.
NativeTrace parse_native_trace(std::string_view text, const std::string& source);

// Written atomically (temporary file + rename); InputError naming the file when it cannot be.
void write_native_trace(const NativeTrace& trace, const std::filesystem::path& path);
NativeTrace read_native_trace(const std::filesystem::path& path);

}  // namespace asteria::traces

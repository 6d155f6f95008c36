#pragma once
// Writes a Timeline as Chrome Trace Event Format JSON (the "JSON Object Format": an object with
// "traceEvents" and "displayTimeUnit"), which chrome://tracing and Perfetto (ui.perfetto.dev)
// open. Layout:
//   - one process per track group ("gpu0", "cpu0", "link", "disk": by default the part of the
//     track name before the first space), one thread per track, named with "M" metadata events
//     (process_name, process_sort_index, thread_name, thread_sort_index);
//   - slices as "X" complete events, ts and dur in microseconds, cat = the slice's category;
//   - counter samples as "C" events in a process of their own, one counter per name, its single
//     series called "value" (Perfetto shows the track as "<name> value");
//   - slices of one track that overlap only partially cannot share a thread, so they go to
//     overflow threads "<track> #2", "<track> #3"... (see track_lanes.hpp); nested slices stay.
// Times are rounded to whole nanoseconds first, so ts/dur print with at most three decimals and
// nesting decided here is the nesting a viewer sees. Events are sorted by ts (metadata first).
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "traces/native_trace.hpp"
#include "traces/timeline.hpp"

namespace asteria::traces {

struct ChromeTraceOptions {
  // Maps a track name to the process it is shown under; empty means default_track_group.
  std::function<std::string(std::string_view track)> group_of;
  // Name of the process that holds the counters.
  std::string counters_process = "counters";
  // How the viewer labels times: "ms" or "ns" (the only values the format defines).
  std::string display_time_unit = "ms";
  // Names the timeline's origin in error messages (e.g. the run directory).
  std::string source = "timeline";
  // Copied to the top-level "otherData" object when it is a non-empty object (run metadata).
  nlohmann::json other_data = nlohmann::json::object();
};

// The part of `track` before its first space, or the whole name when it has none.
std::string default_track_group(std::string_view track);

// The trace document as text, written event by event (a large trace never exists as a JSON tree
// in memory). Throws InputError (source = options.source) on a slice with an
// empty track, a non-finite time, end before start or a time beyond ±9.2e9 s; on a counter
// sample with an empty name or a non-finite time or value; on a bad display_time_unit; and when
// group_of returns an empty name or the counters process name is taken by a track group.
std::string chrome_trace_text(const Timeline& timeline, const ChromeTraceOptions& options = {});
// The same document parsed (for tests and small traces).
nlohmann::json chrome_trace_json(const Timeline& timeline, const ChromeTraceOptions& options = {});

// A native trace as a timeline: one slice per record on its resource's track, named by its label,
// with category compute (forward, backward), optimizer (accumulate, publish, update, launch),
// refresh (refresh_job), bookkeeping (prefetch, acquire, release, refresh on the issuing thread:
// their length is the wait), transfer, io, network (reduce), step (a whole step, enclosing its
// issuing thread's ops), other; args step, op, block, layer, bytes, flops where they apply.
// Counter records become counter samples.
Timeline chrome_timeline(const NativeTrace& trace);

// Writes chrome_trace_json(...) to `out` atomically (temporary file + rename): a reader never
// sees a half-written trace. Throws InputError naming the file when it cannot be written.
void write_chrome_trace(const Timeline& timeline, const std::filesystem::path& out,
                        const ChromeTraceOptions& options = {});
void write_chrome_trace(const NativeTrace& trace, const std::filesystem::path& out, const ChromeTraceOptions& options = {});

}  // namespace asteria::traces

#include "traces/chrome_trace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <sstream>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "traces/track_lanes.hpp"

namespace asteria::traces {
namespace {

// int64 nanoseconds hold about ±292 years; refuse anything near that rather than wrap.
constexpr double kMaxAbsSeconds = 9.2e9;

std::string describe(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::int64_t to_nanoseconds(double seconds, const std::string& source, const std::string& field) {
  if (!std::isfinite(seconds) || std::fabs(seconds) > kMaxAbsSeconds) {
    throw InputError(source, field, "expected a finite time within ±9.2e9 s, found " + describe(seconds));
  }
  return std::llround(seconds * 1e9);
}

double to_microseconds(std::int64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1000.0; }

// "worker 2" before "worker 10": digit runs compare by value, everything else by character.
bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t end_a = i;
      std::size_t end_b = j;
      while (end_a < a.size() && is_digit(a[end_a])) ++end_a;
      while (end_b < b.size() && is_digit(b[end_b])) ++end_b;
      std::string_view run_a = a.substr(i, end_a - i);
      std::string_view run_b = b.substr(j, end_b - j);
      run_a.remove_prefix(std::min(run_a.find_first_not_of('0'), run_a.size()));
      run_b.remove_prefix(std::min(run_b.find_first_not_of('0'), run_b.size()));
      if (run_a.size() != run_b.size()) return run_a.size() < run_b.size();
      if (run_a != run_b) return run_a < run_b;
      i = end_a;
      j = end_b;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // equal by value ("01" vs "1"): any fixed order will do
}

struct TimedSlice {
  std::size_t index = 0;  // into timeline.slices()
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  int tid = 0;
  int pid = 0;
};

struct TrackPlan {
  std::string name;
  std::string group;
  std::vector<std::size_t> slices;  // indices into the TimedSlice list
  std::vector<std::size_t> lanes;   // lane of each of `slices`
  std::size_t lane_count = 0;
};

// One entry of "traceEvents" that has a time: a slice or a counter sample.
struct TimedEvent {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;  // 0 for counters
  bool is_slice = true;
  std::size_t index = 0;  // into the TimedSlice list or timeline.counters()
};

// A JSON number that reads back as a float (Chrome's ts and dur are fractional microseconds).
std::string float_text(double value) {
  std::string text = exact_number(value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Appends JSON text; strings escaped as RFC 8259 asks.
void put_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void put_metadata(std::string& out, const char* name, int pid, int tid, const char* key, std::string_view value,
                  bool value_is_text) {
  out += "{\"ph\":\"M\",\"name\":";
  put_string(out, name);
  out += ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{";
  put_string(out, key);
  out += ':';
  if (value_is_text) put_string(out, value);
  else out += value;
  out += "}},\n";
}

void check_options(const ChromeTraceOptions& options) {
  if (options.display_time_unit != "ms" && options.display_time_unit != "ns") {
    throw InputError(options.source, "display_time_unit",
                     "expected \"ms\" or \"ns\", found \"" + options.display_time_unit + "\"");
  }
  if (options.counters_process.empty()) {
    throw InputError(options.source, "counters_process", "expected a non-empty process name");
  }
}

std::vector<TimedSlice> convert_slices(const Timeline& timeline, const std::string& source) {
  std::vector<TimedSlice> converted;
  converted.reserve(timeline.slices().size());
  for (std::size_t i = 0; i < timeline.slices().size(); ++i) {
    const Slice& slice = timeline.slices()[i];
    const std::string field = "slice " + std::to_string(i) + " (\"" + slice.name + "\" on track \"" + slice.track + "\")";
    if (slice.track.empty()) throw InputError(source, field, "expected a non-empty track name");
    TimedSlice timed;
    timed.index = i;
    timed.start_ns = to_nanoseconds(slice.start_s, source, field + " start_s");
    timed.end_ns = to_nanoseconds(slice.end_s, source, field + " end_s");
    if (slice.end_s < slice.start_s) {
      throw InputError(source, field,
                       "expected end_s >= start_s, found start_s " + describe(slice.start_s) + " and end_s " +
                           describe(slice.end_s));
    }
    converted.push_back(timed);
  }
  return converted;
}

std::vector<TrackPlan> plan_tracks(const Timeline& timeline, const std::vector<TimedSlice>& slices,
                                   const ChromeTraceOptions& options) {
  std::map<std::string, TrackPlan> by_name;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    by_name[timeline.slices()[slices[i].index].track].slices.push_back(i);
  }
  std::vector<TrackPlan> tracks;
  tracks.reserve(by_name.size());
  for (auto& [name, plan] : by_name) {
    plan.name = name;
    plan.group = options.group_of ? options.group_of(name) : default_track_group(name);
    if (plan.group.empty()) {
      throw InputError(options.source, "track \"" + name + "\"", "expected the grouping to name a non-empty process");
    }
    std::vector<LaneInterval> intervals;
    intervals.reserve(plan.slices.size());
    for (const std::size_t s : plan.slices) intervals.push_back({slices[s].start_ns, slices[s].end_ns});
    plan.lanes = assign_lanes(intervals);
    plan.lane_count = plan.lanes.empty() ? 0 : *std::max_element(plan.lanes.begin(), plan.lanes.end()) + 1;
    tracks.push_back(std::move(plan));
  }
  std::sort(tracks.begin(), tracks.end(), [](const TrackPlan& a, const TrackPlan& b) {
    if (a.group != b.group) return natural_less(a.group, b.group);
    return natural_less(a.name, b.name);
  });
  return tracks;
}

std::string lane_name(const std::string& track, std::size_t lane) {
  return lane == 0 ? track : track + " #" + std::to_string(lane + 1);
}

}  // namespace

std::string default_track_group(std::string_view track) {
  return std::string(track.substr(0, track.find(' ')));
}

std::string chrome_trace_text(const Timeline& timeline, const ChromeTraceOptions& options) {
  check_options(options);
  std::vector<TimedSlice> slices = convert_slices(timeline, options.source);
  const std::vector<TrackPlan> tracks = plan_tracks(timeline, slices, options);

  std::vector<std::int64_t> counter_ns;
  counter_ns.reserve(timeline.counters().size());
  for (std::size_t i = 0; i < timeline.counters().size(); ++i) {
    const CounterSample& sample = timeline.counters()[i];
    const std::string field = "counter sample " + std::to_string(i) + " (\"" + sample.counter + "\")";
    if (sample.counter.empty()) throw InputError(options.source, field, "expected a non-empty counter name");
    counter_ns.push_back(to_nanoseconds(sample.time_s, options.source, field + " time_s"));
    if (!std::isfinite(sample.value)) {
      throw InputError(options.source, field + " value", "expected a finite value, found " + describe(sample.value));
    }
  }

  // Processes 1..G for the groups (in track order), then the counters process. Thread ids are
  // unique across the whole trace and distinct from every pid: Perfetto, like Linux, treats a
  // tid as global and a tid equal to its pid as the main thread (which carries the process's
  // own metadata and counters).
  std::vector<std::string> groups;
  for (const TrackPlan& track : tracks) {
    if (groups.empty() || groups.back() != track.group) groups.push_back(track.group);
  }
  for (const std::string& group : groups)
    if (group == options.counters_process && !timeline.counters().empty())
      throw InputError(options.source, "counters_process",
                       "expected a name no track group uses, found \"" + options.counters_process + "\"");
  const int counters_pid = timeline.counters().empty() ? 0 : static_cast<int>(groups.size()) + 1;
  int next_tid = static_cast<int>(groups.size()) + 2;

  std::string out = "{\"displayTimeUnit\":";
  put_string(out, options.display_time_unit);
  if (options.other_data.is_object() && !options.other_data.empty())
    out += ",\"otherData\":" + options.other_data.dump();
  out += ",\"traceEvents\":[\n";
  out.reserve(out.size() + 160 * (slices.size() + counter_ns.size()));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const int pid = static_cast<int>(g) + 1;
    put_metadata(out, "process_name", pid, pid, "name", groups[g], true);
    put_metadata(out, "process_sort_index", pid, pid, "sort_index", std::to_string(pid), false);
  }
  if (counters_pid != 0) {
    put_metadata(out, "process_name", counters_pid, counters_pid, "name", options.counters_process, true);
    put_metadata(out, "process_sort_index", counters_pid, counters_pid, "sort_index", std::to_string(counters_pid),
                 false);
  }
  int thread_order = 0;
  std::size_t group_index = 0;
  for (const TrackPlan& track : tracks) {
    while (groups[group_index] != track.group) ++group_index;
    const int pid = static_cast<int>(group_index) + 1;
    const int first_tid = next_tid;
    for (std::size_t lane = 0; lane < track.lane_count; ++lane) {
      const int tid = next_tid++;
      put_metadata(out, "thread_name", pid, tid, "name", lane_name(track.name, lane), true);
      put_metadata(out, "thread_sort_index", pid, tid, "sort_index", std::to_string(++thread_order), false);
    }
    for (std::size_t k = 0; k < track.slices.size(); ++k) {
      TimedSlice& slice = slices[track.slices[k]];
      slice.pid = pid;
      slice.tid = first_tid + static_cast<int>(track.lanes[k]);
    }
  }

  std::vector<TimedEvent> timed;
  timed.reserve(slices.size() + counter_ns.size());
  for (std::size_t i = 0; i < slices.size(); ++i) {
    timed.push_back({slices[i].start_ns, slices[i].end_ns - slices[i].start_ns, true, i});
  }
  for (std::size_t i = 0; i < counter_ns.size(); ++i) timed.push_back({counter_ns[i], 0, false, i});
  // By time; on a tie, enclosing slices before the slices they enclose (longer first), and
  // slices before counters. Stable, so equal keys keep the timeline's order.
  std::stable_sort(timed.begin(), timed.end(), [](const TimedEvent& a, const TimedEvent& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.is_slice != b.is_slice) return a.is_slice;
    return a.dur_ns > b.dur_ns;
  });

  for (const TimedEvent& event : timed) {
    if (event.is_slice) {
      const TimedSlice& slice = slices[event.index];
      const Slice& source = timeline.slices()[slice.index];
      out += "{\"ph\":\"X\",\"name\":";
      put_string(out, source.name);
      out += ",\"cat\":";
      put_string(out, source.category);
      out += ",\"pid\":" + std::to_string(slice.pid) + ",\"tid\":" + std::to_string(slice.tid) +
             ",\"ts\":" + float_text(to_microseconds(event.ts_ns)) +
             ",\"dur\":" + float_text(to_microseconds(event.dur_ns));
      if (!source.args.empty()) {
        out += ",\"args\":{";
        for (std::size_t a = 0; a < source.args.size(); ++a) {
          if (a) out += ',';
          put_string(out, source.args[a].first);
          out += ':' + source.args[a].second;
        }
        out += '}';
      }
      out += "},\n";
    } else {
      const CounterSample& sample = timeline.counters()[event.index];
      out += "{\"ph\":\"C\",\"name\":";
      put_string(out, sample.counter);
      out += ",\"pid\":" + std::to_string(counters_pid) + ",\"tid\":" + std::to_string(counters_pid) +
             ",\"ts\":" + float_text(to_microseconds(event.ts_ns)) +
             ",\"args\":{\"value\":" + float_text(sample.value) + "}},\n";
    }
  }
  if (out.size() >= 2 && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);  // no trailing comma
  out += "]}\n";
  return out;
}

nlohmann::json chrome_trace_json(const Timeline& timeline, const ChromeTraceOptions& options) {
  return nlohmann::json::parse(chrome_trace_text(timeline, options));
}

void write_chrome_trace(const Timeline& timeline, const std::filesystem::path& out, const ChromeTraceOptions& options) {
  io::write_file_atomically(out, chrome_trace_text(timeline, options));
}

void write_chrome_trace(const NativeTrace& trace, const std::filesystem::path& out, const ChromeTraceOptions& options) {
  write_chrome_trace(chrome_timeline(trace), out, options);
}

}  // namespace asteria::traces

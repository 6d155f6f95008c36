#include "traces/chrome_trace.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::traces {
namespace {

using nlohmann::json;

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file.string());
  return json::parse(in);  // throws (and fails the test) when the file is not valid JSON
}

std::vector<json> events_with_phase(const json& trace, const std::string& phase) {
  std::vector<json> found;
  for (const json& event : trace.at("traceEvents")) {
    if (event.at("ph") == phase) found.push_back(event);
  }
  return found;
}

// pid -> process name, from the process_name metadata.
std::map<int, std::string> process_names(const json& trace) {
  std::map<int, std::string> names;
  for (const json& event : events_with_phase(trace, "M")) {
    if (event.at("name") == "process_name") names[event.at("pid").get<int>()] = event.at("args").at("name");
  }
  return names;
}

struct ThreadInfo {
  int pid = 0;
  int tid = 0;
};

// thread name -> (pid, tid), from the thread_name metadata.
std::map<std::string, ThreadInfo> threads_by_name(const json& trace) {
  std::map<std::string, ThreadInfo> threads;
  for (const json& event : events_with_phase(trace, "M")) {
    if (event.at("name") == "thread_name") {
      threads[event.at("args").at("name")] = {event.at("pid").get<int>(), event.at("tid").get<int>()};
    }
  }
  return threads;
}

// pid or tid -> sort index, from the *_sort_index metadata.
std::map<int, int> sort_indices(const json& trace, const std::string& kind, const std::string& id_key) {
  std::map<int, int> indices;
  for (const json& event : events_with_phase(trace, "M")) {
    if (event.at("name") == kind) indices[event.at(id_key).get<int>()] = event.at("args").at("sort_index");
  }
  return indices;
}

json slice_named(const json& trace, const std::string& name) {
  for (const json& event : events_with_phase(trace, "X")) {
    if (event.at("name") == name) return event;
  }
  ADD_FAILURE() << "no X event named " << name;
  return json::object();
}

TEST(ChromeTrace, EmptyTimelineWritesAValidFile) {
  testing::TempDir dir;
  const auto file = dir.path() / "trace.json";
  write_chrome_trace(Timeline{}, file);
  const json trace = read_json(file);
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_TRUE(trace.at("traceEvents").empty());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
}

TEST(ChromeTrace, OneProcessPerGroupOneThreadPerTrack) {
  Timeline timeline;
  timeline.add_slice({"gpu0 stream", "forward", "compute", 0.0, 1.0});
  timeline.add_slice({"gpu0 copy", "h2d", "transfer", 0.0, 1.0});
  timeline.add_slice({"cpu0 worker 10", "refresh b", "refresh", 0.0, 1.0});
  timeline.add_slice({"cpu0 worker 2", "refresh a", "refresh", 0.0, 1.0});
  timeline.add_slice({"link", "bare link", "transfer", 0.0, 1.0});
  testing::TempDir dir;
  write_chrome_trace(timeline, dir.path() / "trace.json");
  const json trace = read_json(dir.path() / "trace.json");

  const auto processes = process_names(trace);
  std::set<std::string> names;
  for (const auto& [pid, name] : processes) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"cpu0", "gpu0", "link"}));
  EXPECT_EQ(processes.size(), 3u);

  const auto threads = threads_by_name(trace);
  ASSERT_EQ(threads.size(), 5u);
  EXPECT_EQ(processes.at(threads.at("gpu0 stream").pid), "gpu0");
  EXPECT_EQ(processes.at(threads.at("gpu0 copy").pid), "gpu0");
  EXPECT_EQ(processes.at(threads.at("cpu0 worker 2").pid), "cpu0");
  EXPECT_EQ(processes.at(threads.at("cpu0 worker 10").pid), "cpu0");
  EXPECT_EQ(processes.at(threads.at("link").pid), "link");
  std::set<int> tids;
  for (const auto& [name, thread] : threads) tids.insert(thread.tid);
  EXPECT_EQ(tids.size(), 5u) << "every track gets its own tid";

  // Each slice sits on its track's thread.
  EXPECT_EQ(slice_named(trace, "refresh a").at("tid"), threads.at("cpu0 worker 2").tid);
  EXPECT_EQ(slice_named(trace, "h2d").at("tid"), threads.at("gpu0 copy").tid);
  EXPECT_EQ(slice_named(trace, "h2d").at("pid"), threads.at("gpu0 copy").pid);

  // Every process and thread has a sort index; worker 2 is listed before worker 10.
  const auto process_order = sort_indices(trace, "process_sort_index", "pid");
  const auto thread_order = sort_indices(trace, "thread_sort_index", "tid");
  for (const auto& [pid, name] : processes) EXPECT_TRUE(process_order.contains(pid)) << name;
  for (const auto& [name, thread] : threads) EXPECT_TRUE(thread_order.contains(thread.tid)) << name;
  EXPECT_LT(thread_order.at(threads.at("cpu0 worker 2").tid), thread_order.at(threads.at("cpu0 worker 10").tid));
}

TEST(ChromeTrace, GroupingFunctionChoosesTheProcess) {
  Timeline timeline;
  timeline.add_slice({"gpu0 stream", "a", "compute", 0.0, 1.0});
  timeline.add_slice({"cpu0 worker 0", "b", "refresh", 0.0, 1.0});
  ChromeTraceOptions options;
  options.group_of = [](std::string_view) { return std::string("node0"); };
  const json trace = chrome_trace_json(timeline, options);
  const auto processes = process_names(trace);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes.begin()->second, "node0");
  EXPECT_EQ(slice_named(trace, "a").at("pid"), processes.begin()->first);
  EXPECT_EQ(slice_named(trace, "b").at("pid"), processes.begin()->first);
}

TEST(ChromeTrace, CompleteEventsCarryMicroseconds) {
  Timeline timeline;
  timeline.add_slice({"gpu0 stream", "backward layer 3", "compute", 0.25, 0.75});
  timeline.add_slice({"disk nvme0", "read block", "io", 1.5e-6, 2.75e-6});
  // 0.1234567891 s = 123456789.1 ns, kept to the nanosecond: 123456.789 us.
  timeline.add_slice({"disk nvme0", "odd", "io", 0.1234567891, 0.2});
  const json trace = chrome_trace_json(timeline);

  const json backward = slice_named(trace, "backward layer 3");
  EXPECT_EQ(backward.at("cat"), "compute");
  ASSERT_TRUE(backward.at("ts").is_number_float());
  ASSERT_TRUE(backward.at("dur").is_number_float());
  EXPECT_DOUBLE_EQ(backward.at("ts").get<double>(), 250000.0);
  EXPECT_DOUBLE_EQ(backward.at("dur").get<double>(), 500000.0);

  const json read = slice_named(trace, "read block");
  EXPECT_EQ(read.at("cat"), "io");
  EXPECT_DOUBLE_EQ(read.at("ts").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(read.at("dur").get<double>(), 1.25);

  const json odd = slice_named(trace, "odd");
  EXPECT_DOUBLE_EQ(odd.at("ts").get<double>(), 123456.789);
  EXPECT_DOUBLE_EQ(odd.at("dur").get<double>(), 200000.0 - 123456.789);
}

TEST(ChromeTrace, NestedSlicesStayOnOneThread) {
  Timeline timeline;
  timeline.add_slice({"gpu0 stream", "step", "compute", 0.0, 10.0});
  timeline.add_slice({"gpu0 stream", "backward", "compute", 2.0, 5.0});
  timeline.add_slice({"gpu0 stream", "layer 3", "compute", 3.0, 4.0});
  timeline.add_slice({"gpu0 stream", "optimizer", "optimizer", 6.0, 10.0});
  const json trace = chrome_trace_json(timeline);
  const auto threads = threads_by_name(trace);
  ASSERT_EQ(threads.size(), 1u);
  const int tid = threads.at("gpu0 stream").tid;
  const auto slices = events_with_phase(trace, "X");
  ASSERT_EQ(slices.size(), 4u);
  for (const json& slice : slices) EXPECT_EQ(slice.at("tid"), tid) << slice.at("name");
}

TEST(ChromeTrace, PartialOverlapGoesToASecondLane) {
  Timeline timeline;
  timeline.add_slice({"cpu0 worker 1", "refresh a", "refresh", 0.0, 5.0});
  timeline.add_slice({"cpu0 worker 1", "refresh b", "refresh", 3.0, 8.0});
  timeline.add_slice({"cpu0 worker 1", "refresh c", "refresh", 9.0, 10.0});
  const json trace = chrome_trace_json(timeline);
  const auto threads = threads_by_name(trace);
  ASSERT_EQ(threads.size(), 2u);
  ASSERT_TRUE(threads.contains("cpu0 worker 1"));
  ASSERT_TRUE(threads.contains("cpu0 worker 1 #2"));
  const ThreadInfo main_lane = threads.at("cpu0 worker 1");
  const ThreadInfo overflow = threads.at("cpu0 worker 1 #2");
  EXPECT_NE(main_lane.tid, overflow.tid);
  EXPECT_EQ(main_lane.pid, overflow.pid);
  EXPECT_EQ(slice_named(trace, "refresh a").at("tid"), main_lane.tid);
  EXPECT_EQ(slice_named(trace, "refresh b").at("tid"), overflow.tid);
  EXPECT_EQ(slice_named(trace, "refresh c").at("tid"), main_lane.tid);
  // The overflow lane is listed right after its track.
  const auto thread_order = sort_indices(trace, "thread_sort_index", "tid");
  EXPECT_EQ(thread_order.at(overflow.tid), thread_order.at(main_lane.tid) + 1);
}

TEST(ChromeTrace, CountersAreCounterEventsInTheirOwnProcess) {
  Timeline timeline;
  timeline.add_slice({"gpu0 stream", "step", "compute", 0.0, 2.0});
  timeline.add_counter({"resident device bytes", 0.0, 100.0});
  timeline.add_counter({"resident device bytes", 1.0, 250.0});
  timeline.add_counter({"resident host bytes", 0.5, 7.0});
  const json trace = chrome_trace_json(timeline);

  const auto processes = process_names(trace);
  int counters_pid = -1;
  for (const auto& [pid, name] : processes) {
    if (name == "counters") counters_pid = pid;
  }
  ASSERT_NE(counters_pid, -1);
  EXPECT_NE(slice_named(trace, "step").at("pid"), counters_pid);

  const auto counters = events_with_phase(trace, "C");
  ASSERT_EQ(counters.size(), 3u);
  std::map<std::string, std::vector<std::pair<double, double>>> series;
  for (const json& event : counters) {
    EXPECT_EQ(event.at("pid"), counters_pid);
    series[event.at("name")].emplace_back(event.at("ts").get<double>(), event.at("args").at("value").get<double>());
  }
  using Samples = std::vector<std::pair<double, double>>;
  EXPECT_EQ(series.at("resident device bytes"), (Samples{{0.0, 100.0}, {1e6, 250.0}}));
  EXPECT_EQ(series.at("resident host bytes"), (Samples{{5e5, 7.0}}));
}

TEST(ChromeTrace, EventsAreSortedByTimeAfterTheMetadata) {
  Timeline timeline;
  // Recorded out of order, as a backend with several threads would.
  timeline.add_slice({"gpu0 stream", "late", "compute", 3.0, 4.0});
  timeline.add_counter({"queue depth", 2.5, 1.0});
  timeline.add_slice({"cpu0 worker 0", "middle", "refresh", 1.0, 2.0});
  timeline.add_slice({"gpu0 stream", "child", "compute", 0.0, 0.5});
  timeline.add_slice({"gpu0 stream", "parent", "compute", 0.0, 1.0});
  timeline.add_counter({"queue depth", 0.0, 3.0});
  const json trace = chrome_trace_json(timeline);
  const json& events = trace.at("traceEvents");

  bool seen_timed = false;
  double previous_ts = -1.0;
  std::vector<std::string> order;
  for (const json& event : events) {
    if (event.at("ph") == "M") {
      EXPECT_FALSE(seen_timed) << "metadata after a timed event";
      continue;
    }
    seen_timed = true;
    const double ts = event.at("ts").get<double>();
    EXPECT_GE(ts, previous_ts);
    previous_ts = ts;
    order.push_back(event.at("name"));
  }
  // At ts 0 the enclosing slice precedes the slice it encloses, and slices precede counters.
  EXPECT_EQ(order, (std::vector<std::string>{"parent", "child", "queue depth", "middle", "queue depth", "late"}));
}

TEST(ChromeTrace, OptionsReachTheDocument) {
  Timeline timeline;
  timeline.add_counter({"resident device bytes", 0.0, 1.0});
  ChromeTraceOptions options;
  options.display_time_unit = "ns";
  options.counters_process = "memory";
  options.other_data = {{"profile", "gh200"}};
  const json trace = chrome_trace_json(timeline, options);
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  EXPECT_EQ(trace.at("otherData").at("profile"), "gh200");
  const auto processes = process_names(trace);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes.begin()->second, "memory");
}

TEST(ChromeTrace, BadInputNamesTheSliceAndTheProblem) {
  ChromeTraceOptions options;
  options.source = "runs/a";
  {
    Timeline timeline;
    timeline.add_slice({"gpu0 stream", "backwards", "compute", 2.0, 1.0});
    try {
      chrome_trace_json(timeline, options);
      FAIL() << "end before start accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.source(), "runs/a");
      EXPECT_NE(std::string(error.what()).find("gpu0 stream"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("end_s >= start_s"), std::string::npos) << error.what();
    }
  }
  {
    Timeline timeline;
    timeline.add_slice({"gpu0 stream", "nan", "compute", std::nan(""), 1.0});
    EXPECT_THROW(chrome_trace_json(timeline, options), InputError);
  }
  {
    Timeline timeline;
    timeline.add_slice({"", "no track", "compute", 0.0, 1.0});
    EXPECT_THROW(chrome_trace_json(timeline, options), InputError);
  }
  {
    Timeline timeline;
    timeline.add_counter({"depth", 0.0, std::numeric_limits<double>::infinity()});
    EXPECT_THROW(chrome_trace_json(timeline, options), InputError);
  }
  options.display_time_unit = "s";
  EXPECT_THROW(chrome_trace_json(Timeline{}, options), InputError);
}

TEST(ChromeTrace, WriteReplacesTheFileAndLeavesNoTemporary) {
  testing::TempDir dir;
  const auto file = dir.path() / "trace.json";
  {
    std::ofstream old(file);
    old << "old content";
  }
  Timeline timeline;
  timeline.add_slice({"gpu0 stream", "forward", "compute", 0.0, 1.0});
  write_chrome_trace(timeline, file);
  EXPECT_EQ(events_with_phase(read_json(file), "X").size(), 1u);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
  EXPECT_THROW(write_chrome_trace(timeline, dir.path() / "missing" / "trace.json"), InputError);
}

}  // namespace
}  // namespace asteria::traces

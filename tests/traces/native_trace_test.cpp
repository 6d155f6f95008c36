// The native trace: write, read, equal (labels with commas, quotes and line breaks, extreme
// numbers, dependencies), the errors a damaged file gives, and the recorder that every backend
// reports to (window, size bound, launches expanded into their ops, joins with the plan).
#include <gtest/gtest.h>

#include <limits>

#include "core/common/error.hpp"
#include "core/plan/schedule.hpp"
#include "tests/io/temp_dir.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/native_trace.hpp"
#include "traces/trace_recorder.hpp"

namespace asteria::traces {
namespace {

NativeTrace sample_trace() {
  NativeTrace t;
  t.metadata = {{"hw", "gh200"}, {"model", "a model, with a comma"}, {"note", "= signs = fine"}};
  TraceRecord a;
  a.unit = 3;
  a.step = 12;
  a.op = 40;
  a.launch = 7;
  a.kind = "update";
  a.layer = 2;
  a.block = 9;
  a.resource = "gpu3 stream";
  a.start_s = 0.1 + 0.2;  // not a short decimal
  a.end_s = 1.0000000000000002;
  a.bytes = 1.5e12;
  a.flops = 3.0e-300;
  a.cost = {platform::Cost{platform::WorkKind::eigh, 9e6, 8192, 100},
            platform::Cost{platform::WorkKind::gemm, 0.1 + 0.2, 1.5e12, 4096, true}};
  a.deps = {1, 38, 39};
  a.label = "update layer \"3\", block 9\nsecond line";
  TraceRecord b;
  b.kind = "counter";
  b.resource = "gpu0 resident device bytes";
  b.start_s = b.end_s = 2.5;
  b.bytes = 123456789012345.0;
  b.label = b.resource;
  b.ok = false;
  TraceRecord step;
  step.kind = "step";
  t.records = {a, b, step};
  return t;
}

TEST(NativeTrace, RoundTripsThroughTextAndFile) {
  const NativeTrace trace = sample_trace();
  EXPECT_EQ(parse_native_trace(native_trace_text(trace), "memory"), trace);
  const testing::TempDir dir;
  write_native_trace(trace, dir.path() / "trace.csv");
  EXPECT_EQ(read_native_trace(dir.path() / "trace.csv"), trace);
  // The format is versioned on its first line.
  EXPECT_EQ(native_trace_text(trace).rfind("# asteria-trace 2\n", 0), 0u);
  // Each record's cost keeps its pieces, each with its kind, dimension and precision.
  EXPECT_NE(native_trace_text(trace).find(",eigh/9e+06/8192/100;gemm/0.30000000000000004/1.5e+12/4096/reduced,"),
            std::string::npos);
}

// The message of the InputError that reading `text` (as bad.csv) gives; a failure when it reads.
std::string message(const std::string& text) {
  try {
    parse_native_trace(text, "bad.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

std::string error_field(const std::string& text) {
  try {
    parse_native_trace(text, "bad.csv");
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "bad.csv");
    return e.field();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(NativeTrace, DamagedFilesNameTheLineAndColumn) {
  const std::string good = native_trace_text(sample_trace());
  EXPECT_EQ(error_field("hello\n"), "line 1");
  EXPECT_EQ(error_field("# asteria-trace 9\n"), "line 1");
  EXPECT_EQ(error_field("# asteria-trace 1\n"), "line 1");  // version 1 had no cost column
  EXPECT_EQ(error_field("# asteria-trace 2\nunit,step\n"), "line 2");
  std::string bad_cost = good;
  bad_cost.replace(bad_cost.find(",eigh/"), 6, ",eighx/");
  EXPECT_NE(error_field(bad_cost).find("cost"), std::string::npos);
  std::string bad_number = good;
  bad_number.replace(bad_number.find(",12,40,"), 7, ",x2,40,");
  EXPECT_NE(error_field(bad_number).find("step"), std::string::npos);
  std::string short_row = good.substr(0, good.size() - 1) + "\n1,2,3\n";
  EXPECT_NE(error_field(short_row).find("line"), std::string::npos);
}

// What the reader accepts, the writer writes back: each of these once read but could not be
// written, or (a dimension past 2^63) was converted with undefined behaviour.
TEST(NativeTrace, RejectsWhatCannotBeWrittenBack) {
  const std::string good = native_trace_text(sample_trace());
  // Infinity and NaN in every spelling from_chars takes, not only "inf" and "nan".
  for (const char* spelling : {"INF", "Infinity", "-inf", "NaN", "nan(7)"}) {
    std::string infinite = good;
    infinite.replace(infinite.find(",0.30000000000000004,"), 21, std::string(",") + spelling + ",");
    const std::string m = message(infinite);
    EXPECT_NE(m.find("start_s: a finite number, found \"" + std::string(spelling) + "\""), std::string::npos) << m;
  }
  // A carriage return inside a metadata line (only the line's last one is a line ending).
  std::string cr = good;
  cr.replace(cr.find("# note="), 7, "# no\rte=");
  EXPECT_NE(message(cr).find("bad.csv: line 4: metadata on one line, found a carriage return"), std::string::npos);
  std::string crlf = good;
  crlf.replace(crlf.find("# note== signs = fine\n"), 22, "# note== signs = fine\r\n");
  EXPECT_EQ(parse_native_trace(crlf, "ok.csv"), sample_trace());
  // A cost dimension that no 64-bit integer holds.
  std::string huge = good;
  huge.replace(huge.find("eigh/9e+06/8192/100"), 19, "eigh/9e+06/8192/1e300");
  EXPECT_NE(message(huge).find("cost: a dimension below 2^63, found \"1e300\""), std::string::npos) << message(huge);
  std::string largest = good;
  largest.replace(largest.find("eigh/9e+06/8192/100"), 19, "eigh/9e+06/8192/9223372036854774784");
  EXPECT_EQ(parse_native_trace(largest, "ok.csv").records[0].cost.pieces()[0].dimension, 9223372036854774784LL);
}

// What no recorder writes is refused where it is read, naming the line and the column: a replay
// or a calibration would otherwise compare or fit it as if measured.
TEST(NativeTrace, RecordsNoRunCouldHaveWrittenAreRefused) {
  const std::string good = native_trace_text(sample_trace());
  auto with = [](auto change) {
    NativeTrace t = sample_trace();
    change(t.records[0]);
    return native_trace_text(t);
  };
  const std::string negative = message(with([](TraceRecord& r) { r.start_s = -0.5; }));
  EXPECT_NE(negative.find("line 7: start_s: seconds >= 0 since the run's start, found -0.5"), std::string::npos) << negative;
  const std::string backwards = message(with([](TraceRecord& r) { r.end_s = 0.25; }));
  EXPECT_NE(backwards.find("end_s: seconds >= start_s"), std::string::npos) << backwards;
  const std::string unknown = message(with([](TraceRecord& r) { r.kind = "upgrade"; }));
  EXPECT_NE(unknown.find("kind: one of forward, backward"), std::string::npos) << unknown;
  const std::string bytes = message(with([](TraceRecord& r) { r.bytes = -1.0; }));
  EXPECT_NE(bytes.find("bytes: a count >= 0"), std::string::npos) << bytes;
  const std::string unit = message(with([](TraceRecord& r) { r.unit = -2; }));
  EXPECT_NE(unit.find("unit: an integer >= 0"), std::string::npos) << unit;
  // The last row twice.
  const std::size_t last_row = good.rfind('\n', good.size() - 2) + 1;
  const std::string twice = good + good.substr(last_row);
  EXPECT_NE(message(twice).find("each record once, found a copy of line"), std::string::npos) << message(twice);
  EXPECT_EQ(parse_native_trace(good, "ok.csv"), sample_trace());
}

// Labels, resources and metadata go on into JSON (the Chrome trace, replay.json), which
// nlohmann::json writes only as UTF-8: a stray byte is named where it is read.
TEST(NativeTrace, TextMustBeUtf8) {
  const std::string good = native_trace_text(sample_trace());
  auto field_and_message = [](const std::string& text) -> std::pair<std::string, std::string> {
    try {
      parse_native_trace(text, "bad.csv");
    } catch (const InputError& e) {
      return {e.field(), e.what()};
    }
    ADD_FAILURE() << "accepted: " << text;
    return {};
  };
  std::string label = good;
  label.replace(label.find("second line"), 6, "second\xff");
  EXPECT_EQ(field_and_message(label).first, "line 7: label");  // the row ends on line 7
  EXPECT_NE(field_and_message(label).second.find("UTF-8 text, found an invalid byte sequence at byte 33"),
            std::string::npos)
      << field_and_message(label).second;
  std::string resource = good;
  resource.replace(resource.find("gpu3 stream"), 4, "gpu\xc3");
  EXPECT_EQ(field_and_message(resource).first, "line 7: resource");
  std::string metadata = good;
  metadata.replace(metadata.find("gh200"), 5, "gh\xed\xa0\x80");  // a surrogate
  EXPECT_EQ(field_and_message(metadata).first, "line 2: metadata");
  std::string accented = good;
  accented.replace(accented.find("second line"), 6, "seconde \xc3\xa9");
  EXPECT_EQ(parse_native_trace(accented, "ok.csv").records[0].label, "update layer \"3\", block 9\nseconde \xc3\xa9 line");
}

TEST(NativeTrace, ChromeTraceIsDrawnFromItWithArgs) {
  const nlohmann::json chrome = chrome_trace_json(chrome_timeline(sample_trace()));
  bool found = false;
  for (const nlohmann::json& e : chrome.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "optimizer") {
      found = true;
      EXPECT_EQ(e.at("args").at("step"), 12);
      EXPECT_EQ(e.at("args").at("block"), 9);
      EXPECT_EQ(e.at("args").at("bytes"), 1.5e12);
      EXPECT_EQ(e.at("args").at("kind"), "update");
    }
  EXPECT_TRUE(found);
}

plan::StepPlan two_block_plan() {
  const platform::Cost c{platform::WorkKind::gemm, 1e9, 1e6, 8};
  return plan::schedule_plan({{"only", c, c, 64.0}},
                               {{0, "only block 0", 0, plan::Resource::device, c, c, c},
                                {0, "only block 1", 0, plan::Resource::device, c, c, c}});
}

TEST(TraceRecorder, KeepsItsWindowExpandsLaunchesAndJoinsThePlan) {
  const plan::StepPlan plan = two_block_plan();
  int launch = -1;
  for (const plan::Op& op : plan.ops)
    if (op.launch >= 0) launch = op.launch;
  ASSERT_GE(launch, 0);
  TraceRecorder recorder({{2, 3}, 0});
  recorder.set_plan(0, plan);
  platform::ActivitySink& sink = recorder.sink(0);
  EXPECT_FALSE(sink.recording(1));
  EXPECT_TRUE(sink.recording(3));
  for (std::int64_t step = 1; step <= 4; ++step) {
    sink.begin_step(step);
    sink.record({"gpu0 stream", "", {step, 0, -1, platform::ActivityRole::op}, plan.ops[0].cost, 1.0 * step,
                 1.0 * step + 0.5, true});
    sink.record({"gpu0 stream", "optimizer only", {step, -1, launch, platform::ActivityRole::launch}, {}, 2.0, 3.0, true});
    sink.record({"link h2d0", "copy", {step, 3, -1, platform::ActivityRole::transfer}, platform::Cost{platform::WorkKind::other, 0, 64, 0},
                 0.5, 0.75, true});
    sink.counter("gpu0 resident device bytes", 1.0 * step, 100.0 * step);
  }
  const NativeTrace trace = recorder.trace({{"hw", "test"}});
  EXPECT_EQ(trace.metadata.at("window_first_step"), "2");
  EXPECT_EQ(trace.metadata.at("window_last_step"), "3");
  std::size_t members = 0;
  for (const plan::Op& op : plan.ops) members += op.launch == launch;
  ASSERT_EQ(trace.records.size(), 2 * (1 + members + 1 + 1));  // steps 2 and 3 only
  for (const TraceRecord& r : trace.records) {
    EXPECT_TRUE(r.step == 2 || r.step == 3) << r.kind;
    if (r.kind == "forward") {
      EXPECT_EQ(r.layer, 0);
      EXPECT_EQ(r.label, "forward only");
    }
    if (r.kind == "transfer") {
      EXPECT_EQ(r.deps, (std::vector<std::int32_t>{3}));
    }
    if (r.launch == launch && r.kind != "counter") {
      EXPECT_EQ(r.start_s, 2.0);  // every fused op spans its launch
      EXPECT_EQ(plan.ops[static_cast<std::size_t>(r.op)].launch, launch);
      EXPECT_EQ(r.deps, plan.ops[static_cast<std::size_t>(r.op)].deps);
    }
  }
}

TEST(TraceRecorder, CountsWhatItCannotKeepPastItsSizeBound) {
  const std::size_t bound = 10 * (kRecordBytesEstimate + 3);  // a row, and its 3-byte label
  TraceRecorder recorder({{1, 100}, bound});
  platform::ActivitySink& sink = recorder.sink(0);
  for (int i = 0; i < 25; ++i) sink.record({"cpu0 worker 0", "job", {1, -1, -1, platform::ActivityRole::other}, {}, 0, 1, true});
  EXPECT_EQ(recorder.kept_records(), 10u);
  EXPECT_EQ(recorder.dropped_records(), 15u);
  EXPECT_LE(recorder.estimated_bytes(), bound);
  EXPECT_EQ(recorder.trace().metadata.at("dropped_records"), "15");
}

TEST(TraceRecorder, DefaultWindowFitsTheBudgetWithAtLeastOneStep) {
  const plan::StepPlan plan = two_block_plan();
  const std::size_t per_unit_step = records_per_unit_step(plan) * kRecordBytesEstimate;
  const TraceWindow three = default_window(5, 40, 2, plan, 3 * 2 * per_unit_step * 10 / 9 + 10);
  EXPECT_EQ(three.first_step, 5);
  EXPECT_EQ(three.last_step, 7);
  EXPECT_GE(three.units, 2);
  // One step of every unit does not fit: one step of as many units as fit, whole.
  const TraceWindow some = default_window(5, 40, 64, plan, 9 * per_unit_step * 10 / 9 + 10);
  EXPECT_EQ(some.last_step, 5);
  EXPECT_EQ(some.units, 9);
  EXPECT_TRUE(some.contains(8, 5));
  EXPECT_FALSE(some.contains(9, 5));
  EXPECT_EQ(default_window(5, 40, 64, plan, 10).last_step, 5);  // never empty
  EXPECT_EQ(default_window(5, 40, 64, plan, 10).units, 1);
  EXPECT_EQ(default_window(5, 6, 1, plan, std::size_t{1} << 40).last_step, 6);  // never past the run
  EXPECT_EQ(default_window(5, 40, 1, plan, 0).last_step, 40);  // no bound
}

}  // namespace
}  // namespace asteria::traces

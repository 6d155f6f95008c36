// `asteria sim` with data-parallel units: gradients reduced in buckets (--bucket-size), the
// communication a step did not hide reported on its own (exposed_communication_s), out of the
// visible optimizer time, and the state, gradients and weights sharded (--parallelism).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/apps/child_cli.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"
#include "traces/native_trace.hpp"

namespace asteria::cli {
namespace {

using testing::TempDir;

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// steps.csv as one map of column -> value per row.
std::vector<std::map<std::string, double>> read_steps(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> columns;
  std::stringstream header(line);
  for (std::string c; std::getline(header, c, ',');) columns.push_back(c);
  std::vector<std::map<std::string, double>> rows;
  while (std::getline(in, line)) {
    std::stringstream cells(line);
    std::map<std::string, double> row;
    std::string cell;
    for (std::size_t i = 0; i < columns.size() && std::getline(cells, cell, ','); ++i) row[columns[i]] = std::stod(cell);
    rows.push_back(row);
  }
  return rows;
}

std::size_t count_ops(const std::string& plan, const std::string& kind) {
  std::size_t n = 0;
  std::stringstream lines(plan);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream words(line);
    std::string op, id, k;
    words >> op >> id >> k;
    if (op == "op" && k == kind) ++n;
  }
  return n;
}

// A short data-free AdamW run of the toy model on `units` GPUs of gh200-alps (4 per node).
Args tiny_data_parallel(const std::filesystem::path& out, int units, const std::vector<std::string>& extra = {}) {
  Args args = {"sim",  "--hw",      "gh200-alps", "--model", "tiny", "--optimizer",  "adamw", "--steps",
               "3",    "--units",   std::to_string(units),     "--no-progress", "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// One reduce per bucket; the buckets hold every gradient once, whatever their size.
TEST(SimDataParallel, BucketsCutTheReducesAndMoveEveryGradientOnce) {
  const TempDir dir;
  const auto per_layer = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "per-layer", 8, {"--bucket-size", "0"}));
  ASSERT_EQ(per_layer.code, 0) << per_layer.err;
  const auto bucketed = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "bucketed", 8));
  ASSERT_EQ(bucketed.code, 0) << bucketed.err;
  const std::string layer_plan = read_text(dir.path() / "per-layer" / "plan.txt");
  const std::string bucket_plan = read_text(dir.path() / "bucketed" / "plan.txt");
  const nlohmann::json summary = read_json(dir.path() / "bucketed" / "summary.json");
  const double gradient_bytes = 4.0 * summary.at("parameters").get<double>();  // fp32
  // The toy model is far below DDP's 25 MiB: one bucket, one reduce; at 0 one per layer.
  EXPECT_EQ(count_ops(bucket_plan, "reduce"), 1u) << bucket_plan;
  EXPECT_GT(count_ops(layer_plan, "reduce"), 1u);
  EXPECT_EQ(count_ops(layer_plan, "reduce"), count_ops(layer_plan, "backward"));
  EXPECT_EQ(summary.at("network_bytes").get<double>(), gradient_bytes);
  EXPECT_EQ(read_json(dir.path() / "per-layer" / "summary.json").at("network_bytes").get<double>(), gradient_bytes);
  EXPECT_EQ(summary.at("setting_bucket_size"), "25MiB");
}

// With one bucket reduced after the last backward, the updates wait for it while the device has
// nothing to run: the whole all-reduce is exposed, step = compute + visible optimizer + exposed
// communication, and the trace's reduce lasts exactly the exposed time. One unit has none.
TEST(SimDataParallel, TheUnhiddenReduceIsExposedCommunicationNotOptimizerTime) {
  const TempDir dir;
  const auto run = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "dp", 8, {"--trace"}));
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("exposed communication"), std::string::npos) << run.out;
  const auto steps = read_steps(dir.path() / "dp" / "steps.csv");
  ASSERT_FALSE(steps.empty());
  const traces::NativeTrace trace = traces::read_native_trace(dir.path() / "dp" / "trace.csv");
  std::map<std::int64_t, double> reduce_seconds;
  for (const traces::TraceRecord& r : trace.records)
    if (r.unit == 0 && r.kind == "reduce") reduce_seconds[r.step] += r.end_s - r.start_s;
  for (const auto& row : steps) {
    const auto step = static_cast<std::int64_t>(row.at("step"));
    const double exposed = row.at("exposed_communication_s");
    EXPECT_GT(exposed, 0.0) << "step " << step;
    EXPECT_NEAR(row.at("compute_s") + row.at("visible_optimizer_s") + exposed, row.at("step_time_s"),
                1e-9 * row.at("step_time_s"))
        << "step " << step;
    if (reduce_seconds.contains(step)) {
      EXPECT_NEAR(exposed, reduce_seconds.at(step), 1e-9 * row.at("step_time_s")) << "step " << step;
    }
  }
  EXPECT_FALSE(reduce_seconds.empty()) << "the trace holds no reduce of unit 0";
  const nlohmann::json summary = read_json(dir.path() / "dp" / "summary.json");
  EXPECT_GT(summary.at("exposed_communication_s").get<double>(), 0.0);

  const auto alone = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "one", 1));
  ASSERT_EQ(alone.code, 0) << alone.err;
  for (const auto& row : read_steps(dir.path() / "one" / "steps.csv")) EXPECT_EQ(row.at("exposed_communication_s"), 0.0);
}

// --parallelism: zero1 gathers the new weights after the updates (every block's weights once),
// zero2 reduce-scatters the gradients instead of all-reducing them (a scatter op per bucket, no
// all-reduce of whole layers), fsdp gathers each unit's weights before each stretch of visits of
// its layers (none after the updates) and holds 1/N of the weights on the device in the fit check.
TEST(SimDataParallel, ParallelismShardsWhatTheRanksMoveAndHold) {
  const TempDir dir;
  std::map<std::string, nlohmann::json> summary;
  std::map<std::string, std::string> plan;
  for (const char* how : {"ddp", "zero1", "zero2", "fsdp"}) {
    const auto run = testing::run_cli_in_child(
        tiny_data_parallel(dir.path() / how, 8, {"--parallelism", how}));
    ASSERT_EQ(run.code, 0) << how << ": " << run.err;
    summary[how] = read_json(dir.path() / how / "summary.json");
    plan[how] = read_text(dir.path() / how / "plan.txt");
    EXPECT_EQ(summary[how].at("setting_parallelism"), how);
  }
  // AdamW keeps each tensor whole (one block a layer); the toy model is one 25 MiB bucket.
  const std::size_t layers = count_ops(plan["ddp"], "backward");
  ASSERT_GT(layers, 1u);
  EXPECT_EQ(count_ops(plan["ddp"], "reduce"), 1u);
  EXPECT_EQ(count_ops(plan["ddp"], "gather") + count_ops(plan["ddp"], "scatter"), 0u);
  EXPECT_EQ(count_ops(plan["zero1"], "reduce"), 1u);
  EXPECT_GT(count_ops(plan["zero1"], "gather"), 0u);
  EXPECT_EQ(count_ops(plan["zero1"], "scatter"), 0u);
  for (const char* how : {"zero2", "fsdp"}) {
    // The bucket's gradients by one reduce-scatter, and the blocks too large for an even share
    // (the embedding, the head) by a reduce each.
    EXPECT_EQ(count_ops(plan[how], "scatter"), 1u) << how;
    EXPECT_LE(count_ops(plan[how], "reduce"), 1u) << how;
  }
  EXPECT_EQ(count_ops(plan["zero2"], "gather"), count_ops(plan["zero1"], "gather"));
  // fsdp: the toy model is one unit of 25 MiB: its weights gathered once, before the first
  // forward, and kept over the step: the bytes of zero2 (whose gathers follow the updates).
  EXPECT_EQ(count_ops(plan["fsdp"], "gather"), 1u);
  EXPECT_LT(plan["fsdp"].find(" gather "), plan["fsdp"].find(" forward "));
  const double ddp_bytes = summary["ddp"].at("network_bytes").get<double>();
  EXPECT_GT(summary["zero1"].at("network_bytes").get<double>(), ddp_bytes);  // the gathers on top
  EXPECT_EQ(summary["fsdp"].at("network_bytes"), summary["zero2"].at("network_bytes"));
  // Smaller units (SOAP's 16 x 16 blocks: every layer's shares whole and even) are gathered
  // again for the backward: more gathers, more bytes.
  std::map<std::string, std::string> units;
  for (const char* size : {"25MiB", "1"}) {
    const std::string name = std::string("soap-units-") + size;
    Args args = tiny_data_parallel(dir.path() / name, 8,
                                   {"--parallelism", "fsdp", "--bucket-size", size, "--max-precond-dim", "16"});
    std::replace(args.begin(), args.end(), std::string("adamw"), std::string("soap"));
    const auto run = testing::run_cli_in_child(args);
    ASSERT_EQ(run.code, 0) << run.err;
    units[size] = read_text(dir.path() / name / "plan.txt");
    summary[name] = read_json(dir.path() / name / "summary.json");
  }
  EXPECT_EQ(count_ops(units["25MiB"], "gather"), 1u);
  // Units of a layer or a few (a norm's one block joins its neighbour): gathered for the forward
  // and again for the backward.
  EXPECT_GT(count_ops(units["1"], "gather"), layers);
  EXPECT_GT(summary["soap-units-1"].at("network_bytes").get<double>(),
            summary["soap-units-25MiB"].at("network_bytes").get<double>());
  // What a rank holds: a share of the state (zero1..fsdp), of the weights too (fsdp).
  auto resident = [&](const char* how) {
    return summary[how].at("peak_device_bytes").get<double>() + summary[how].at("peak_host_bytes").get<double>();
  };
  for (const char* how : {"zero1", "zero2", "fsdp"}) EXPECT_LT(resident(how), 0.5 * resident("ddp")) << how;
  EXPECT_LT(summary["fsdp"].at("model_device_bytes").get<double>(), summary["ddp"].at("model_device_bytes").get<double>());
  EXPECT_EQ(summary["zero1"].at("model_device_bytes"), summary["ddp"].at("model_device_bytes"));

  const auto offloaded = testing::run_cli_in_child(
      tiny_data_parallel(dir.path() / "bad", 2, {"--parallelism", "fsdp", "--weights-on", "host"}));
  EXPECT_NE(offloaded.code, 0);
  EXPECT_NE(offloaded.err.find("--weights-on"), std::string::npos) << offloaded.err;
  const auto unknown = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "bad2", 2, {"--parallelism", "zero3"}));
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.err.find("--parallelism"), std::string::npos) << unknown.err;
}

// A collective alone on its links takes its predicted time without running its flows; the
// prediction is exact, so every parallelism's steps are those of the run of every flow
// (--collective-flows) to SimGrid's precision (it rounds each activity's end to 1e-9 s), and none
// of them overlapped another (one group's collectives run one at a time).
TEST(SimDataParallel, CollectivesAloneTakeTheirExactPredictedTime) {
  const TempDir dir;
  for (const std::string parallelism : {"ddp", "fsdp"}) {
    SCOPED_TRACE(parallelism);
    const std::vector<std::string> extra = {"--parallelism", parallelism, "--bucket-size", "0"};
    const auto predicted = testing::run_cli_in_child(tiny_data_parallel(dir.path() / (parallelism + "-p"), 8, extra));
    ASSERT_EQ(predicted.code, 0) << predicted.err;
    std::vector<std::string> with_flows = extra;
    with_flows.push_back("--collective-flows");
    const auto flows = testing::run_cli_in_child(tiny_data_parallel(dir.path() / (parallelism + "-f"), 8, with_flows));
    ASSERT_EQ(flows.code, 0) << flows.err;
    const nlohmann::json p = read_json(dir.path() / (parallelism + "-p") / "summary.json");
    const nlohmann::json f = read_json(dir.path() / (parallelism + "-f") / "summary.json");
    EXPECT_GT(p.at("collectives_predicted").get<double>(), 0.0);
    EXPECT_EQ(p.at("collectives_overlapped").get<double>(), 0.0);
    EXPECT_EQ(p.at("activities_communications").get<double>(), 0.0) << "no flow ran";
    EXPECT_EQ(f.at("collectives_predicted").get<double>(), 0.0);
    EXPECT_GT(f.at("activities_communications").get<double>(), 0.0);
    const auto a = read_steps(dir.path() / (parallelism + "-p") / "steps.csv");
    const auto b = read_steps(dir.path() / (parallelism + "-f") / "steps.csv");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      for (const char* column : {"step_time_s", "exposed_communication_s", "visible_optimizer_s"})
        EXPECT_NEAR(a[i].at(column), b[i].at(column), 1e-8) << column << " step " << i;
  }
}

// Ranks alike (data-free, replicated refreshes, no sharding, whole nodes, no trace) are simulated
// by the first node's by default, bit for bit the run of every node; the simulator checks they
// stay alike (they reach every collective together). Sharded ranks differ: every node runs by
// default, and representative ranks asked for are reported as apart.
TEST(SimDataParallel, AlikeRanksAreSimulatedByTheFirstNodeByDefault) {
  const TempDir dir;
  const auto base = [&](const std::string& name, const std::vector<std::string>& extra) {
    Args args = {"sim",       "--hw",      "gh200-alps", "--model",     "tiny",      "--optimizer", "soap",
                 "--steps",   "4",         "--nodes",    "3",           "--numerics", "shapes",     "--no-progress",
                 "--out",     (dir.path() / name).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_cli_in_child(args);
  };
  const auto alike = base("alike", {"--refresh-sharing", "replicated"});
  const auto every = base("every", {"--refresh-sharing", "replicated", "--simulated-nodes", "3"});
  ASSERT_EQ(alike.code, 0) << alike.err;
  ASSERT_EQ(every.code, 0) << every.err;
  const nlohmann::json a = read_json(dir.path() / "alike" / "summary.json");
  const nlohmann::json e = read_json(dir.path() / "every" / "summary.json");
  EXPECT_EQ(a.at("simulated_units").get<int>(), 4);
  EXPECT_EQ(e.at("simulated_units").get<int>(), 12);
  EXPECT_EQ(a.at("collectives_asymmetric").get<int>(), 0);
  EXPECT_EQ(read_text(dir.path() / "alike" / "steps.csv"), read_text(dir.path() / "every" / "steps.csv"));

  const auto sharded = base("sharded", {"--parallelism", "fsdp"});
  ASSERT_EQ(sharded.code, 0) << sharded.err;
  EXPECT_EQ(read_json(dir.path() / "sharded" / "summary.json").at("simulated_units").get<int>(), 12);
  const auto asked = base("asked", {"--parallelism", "fsdp", "--simulated-nodes", "1"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  EXPECT_GT(read_json(dir.path() / "asked" / "summary.json").at("collectives_asymmetric").get<int>(), 0);
  EXPECT_NE(asked.err.find("not alike"), std::string::npos) << asked.err;
}

// --reshard after-step: fsdp keeps each unit's gathered weights for the step (fewer gathers, the
// whole model's weights counted on the device); refused without fsdp, naming the option.
TEST(SimDataParallel, FsdpKeptGathersTradeDeviceMemoryForGathers) {
  const TempDir dir;
  const std::vector<std::string> common = {"--parallelism", "fsdp", "--bucket-size", "0", "--micro-batches", "2",
                                           "--batch", "4"};
  const auto per_use = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "per-use", 4, common));
  std::vector<std::string> kept_args = common;
  kept_args.insert(kept_args.end(), {"--reshard", "after-step"});
  const auto kept = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "kept", 4, kept_args));
  ASSERT_EQ(per_use.code, 0) << per_use.err;
  ASSERT_EQ(kept.code, 0) << kept.err;
  EXPECT_LT(count_ops(read_text(dir.path() / "kept" / "plan.txt"), "gather"),
            count_ops(read_text(dir.path() / "per-use" / "plan.txt"), "gather"));
  const nlohmann::json a = read_json(dir.path() / "per-use" / "summary.json");
  const nlohmann::json b = read_json(dir.path() / "kept" / "summary.json");
  EXPECT_GT(b.at("model_device_bytes").get<double>(), a.at("model_device_bytes").get<double>());
  EXPECT_EQ(b.at("setting_reshard"), "after-step");
  const auto refused =
      testing::run_cli_in_child(tiny_data_parallel(dir.path() / "zero2", 4, {"--parallelism", "zero2", "--reshard", "after-step"}));
  EXPECT_EQ(refused.code, 1) << refused.out;
  EXPECT_NE(refused.err.find("--reshard"), std::string::npos) << refused.err;
}

TEST(SimDataParallel, ANegativeBucketSizeIsRefusedNamingTheOption) {
  const TempDir dir;
  const auto run = testing::run_cli_in_child(tiny_data_parallel(dir.path() / "bad", 2, {"--bucket-size", "-1"}));
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.err.find("--bucket-size"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace asteria::cli

// The study table from hand-written summary.json files: runs that fit, runs that do not, failed
// runs and malformed summaries; table.csv (every column, SI units) and table.md (eleven columns,
// seconds and GiB to 3 significant figures).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_table.hpp"
#include "core/common/number_text.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli::study {
namespace {

std::string significant3(double value) { return significant(value, 3); }

using testing::TempDir;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

const StudySpec& two_placements() {
  static const StudySpec spec = parse_study(
      "name: t\ngrid:\n  - hw: [gb10]\n    model: [m]\n    optimizer: [soap]\n    placement: [device, tiered]\n"
      "    staleness: [1]\n",
      "t.yaml", "/");
  return spec;
}

// 20 GiB needed on the device, 8.268e9 bytes free: 13206836480 bytes = 12.2998 GiB short.
constexpr const char* kDoesNotFit = R"({"verb": "sim", "fits": false, "p50_step_s": null, "peak_device_bytes": null,
  "shortfall": [{"tier": "device", "needed_bytes": 21474836480, "free_bytes": 8268000000,
                 "capacity_bytes": 137438953472}]})";

constexpr const char* kFits = R"({"verb": "sim", "fits": true, "shortfall": [],
  "p50_step_s": 0.0125, "p99_step_s": 0.025, "p99_over_p50": 2.0, "mean_step_s": 0.014, "compute_s": 0.01,
  "visible_optimizer_s": 0.004, "exposed_communication_s": 0.002, "refresh_wait_s": 0.003,
  "state_move_wait_s": 0.0005, "max_staleness": 1, "peak_device_bytes": 3221225472, "peak_host_bytes": 1610612736,
  "peak_nvme_bytes": 0, "network_bytes": 5637144576.5, "tokens_per_s": 1250000.5, "energy_per_step_j": 291.75,
  "energy_per_token_j": 0.0357, "mean_power_w": 20839.3})";

const std::string kMarkdownHeader =
    "| config | fits | p50 step (s) | p99 step (s) | p99/p50 | compute (s) | visible optimizer (s) | "
    "exposed comm (s) | refresh wait (s) | state-move wait (s) | peak device (GiB) | network/rank/step (GiB) | "
    "energy/step (J) |";

const std::string kHeader =
    "config,hw,model,optimizer,placement,staleness,fits,p50_step_s,p99_step_s,p99_over_p50,mean_step_s,compute_s,"
    "visible_optimizer_s,exposed_communication_s,refresh_wait_s,state_move_wait_s,max_staleness,peak_device_bytes,"
    "peak_host_bytes,"
    "peak_nvme_bytes,network_bytes,tokens_per_s,energy_per_step_j,energy_per_token_j,mean_power_w,shortfall,run_dir";

TEST(StudyTable, RunsThatFitAndRunsThatDoNot) {
  TempDir dir;
  const StudySpec& spec = two_placements();
  write(dir.path() / "runs/gb10_m_soap_device_s1/summary.json", kDoesNotFit);
  write(dir.path() / "runs/gb10_m_soap_tiered_s1/summary.json", kFits);
  std::vector<RunResult> results;
  for (const StudyPoint& p : spec.points) results.push_back(read_run_result(dir.path() / relative_run_dir(p), ""));
  ASSERT_FALSE(results[0].failed()) << results[0].failure;
  ASSERT_FALSE(results[1].failed()) << results[1].failure;
  EXPECT_FALSE(results[0].fits);
  EXPECT_TRUE(results[1].fits);
  ASSERT_EQ(results[0].shortfall.size(), 1U);
  EXPECT_EQ(results[0].shortfall[0].tier, "device");
  EXPECT_EQ(results[0].shortfall[0].capacity_bytes, 137438953472.0);

  const std::vector<std::string> csv = lines(table_csv(spec, results));
  ASSERT_EQ(csv.size(), 3U);
  EXPECT_EQ(csv[0], kHeader);
  // Fourteen empty metric cells between fits and shortfall.
  EXPECT_EQ(csv[1], "gb10_m_soap_device_s1,gb10,m,soap,device,1,false" + std::string(19, ',') +
                        "device 12.3 GiB short,runs/gb10_m_soap_device_s1");
  EXPECT_EQ(csv[2],
            "gb10_m_soap_tiered_s1,gb10,m,soap,tiered,1,true,0.0125,0.025,2,0.014,0.01,0.004,0.002,0.003,0.0005,1,"
            "3221225472,1610612736,0,5637144576.5,1.2500005e+06,291.75,0.0357,20839.3,,runs/gb10_m_soap_tiered_s1");

  const std::vector<std::string> md = lines(table_markdown(spec, results));
  ASSERT_EQ(md.size(), 4U);
  EXPECT_EQ(md[0], kMarkdownHeader);
  EXPECT_EQ(md[1], "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  // The shortfall is what the fits column says; the eleven number cells are empty.
  EXPECT_EQ(md[2], "| gb10_m_soap_device_s1 | device 12.3 GiB short |  |  |  |  |  |  |  |  |  |  |  |");
  // Seconds and GiB to 3 significant figures, trailing zeros kept; 5637144576.5 bytes = 5.25 GiB.
  EXPECT_EQ(md[3], "| gb10_m_soap_tiered_s1 | yes | 0.0125 | 0.0250 | 2.00 | 0.0100 | 0.00400 | 0.00200 | 0.00300 | 0.000500 | "
                   "3.00 | 5.25 | 292 |");
}

// Times of a toy model and of a run that streams its state from NVMe in one table: every digit
// before the decimal point is kept up to 99999 s, scientific notation beyond and below 1e-4.
TEST(StudyTable, MarkdownNumbersKeepThreeSignificantFiguresAtAnyScale) {
  TempDir dir;
  const StudySpec& spec = two_placements();
  write(dir.path() / "runs/gb10_m_soap_device_s1/summary.json", R"({"fits": true, "shortfall": [],
    "p50_step_s": 0.0000212, "p99_step_s": 0.00021249, "p99_over_p50": 10.023, "mean_step_s": 1, "compute_s": 1.7021566,
    "visible_optimizer_s": 145.417917, "exposed_communication_s": 0.5, "refresh_wait_s": 12345.6, "state_move_wait_s": 12345678.9,
    "max_staleness": 0, "peak_device_bytes": 1073741, "peak_host_bytes": 0, "peak_nvme_bytes": 0,
    "network_bytes": 0, "tokens_per_s": 0})");
  write(dir.path() / "runs/gb10_m_soap_tiered_s1/summary.json", R"({"fits": true, "shortfall": [],
    "p50_step_s": 0.00099996, "p99_step_s": 9.996, "p99_over_p50": 9996, "mean_step_s": 1, "compute_s": 0,
    "visible_optimizer_s": 99999.6, "exposed_communication_s": 0, "refresh_wait_s": 250000, "state_move_wait_s": 0.00000000025,
    "max_staleness": 0, "peak_device_bytes": 1649267441664, "peak_host_bytes": 0, "peak_nvme_bytes": 0,
    "network_bytes": 107374182400, "tokens_per_s": 2048})");
  std::vector<RunResult> results;
  for (const StudyPoint& p : spec.points) results.push_back(read_run_result(dir.path() / relative_run_dir(p), ""));
  ASSERT_FALSE(results[0].failed()) << results[0].failure;
  ASSERT_FALSE(results[1].failed()) << results[1].failure;
  const std::vector<std::string> md = lines(table_markdown(spec, results));
  ASSERT_EQ(md.size(), 4U);
  // 1073741 bytes = 0.000999999 GiB; 1649267441664 bytes = 1536 GiB.
  EXPECT_EQ(md[2],
            "| gb10_m_soap_device_s1 | yes | 2.12e-05 | 0.000212 | 10.0 | 1.70 | 145 | 0.500 | 12346 | 1.23e+07 | 0.00100 | 0 |  |");
  EXPECT_EQ(md[3],
            "| gb10_m_soap_tiered_s1 | yes | 0.00100 | 10.0 | 9996 | 0 | 1.00e+05 | 0 | 2.50e+05 | 2.50e-10 | 1536 | 100 |  |");
  // table.csv keeps every digit, in seconds and bytes.
  const std::vector<std::string> csv = lines(table_csv(spec, results));
  ASSERT_EQ(csv.size(), 3U);
  EXPECT_NE(csv[1].find(",2.12e-05,0.00021249,10.023,1,1.7021566,145.417917,0.5,12345.6,1.23456789e+07,0,1073741,0,0,0,"),
            std::string::npos)
      << csv[1];
}

TEST(StudyTable, TableNumberRoundsBeforeChoosingItsForm) {
  EXPECT_EQ(significant3(0.0), "0");
  EXPECT_EQ(significant3(-0.0), "0");
  EXPECT_EQ(significant3(1.70), "1.70");
  EXPECT_EQ(significant3(145.4), "145");
  EXPECT_EQ(significant3(1454.6), "1455");     // never 1450 or 1.45e+03
  EXPECT_EQ(significant3(99999.4), "1.00e+05");  // rounds up to 6 integer digits
  EXPECT_EQ(significant3(0.0001), "0.000100");
  EXPECT_EQ(significant3(0.000099996), "0.000100");
  EXPECT_EQ(significant3(0.0000999), "9.99e-05");
  EXPECT_EQ(significant3(0.5), "0.500");
  EXPECT_EQ(significant3(-2.5), "-2.50");
}

TEST(StudyTable, AFailedRunIsARowThatSaysSo) {
  TempDir dir;
  const StudySpec& spec = two_placements();
  // Even a summary left in place does not count when the process failed.
  write(dir.path() / "runs/gb10_m_soap_device_s1/summary.json", kFits);
  write(dir.path() / "runs/gb10_m_soap_tiered_s1/summary.json", kFits);
  const std::vector<RunResult> results = {
      read_run_result(dir.path() / "runs/gb10_m_soap_device_s1", "exit code 1"),
      read_run_result(dir.path() / "runs/gb10_m_soap_tiered_s1", ""),
  };
  ASSERT_TRUE(results[0].failed());
  EXPECT_EQ(results[0].failure, "exit code 1");
  EXPECT_FALSE(results[0][Metric::p50_step_s].has_value());
  const std::vector<std::string> csv = lines(table_csv(spec, results));
  ASSERT_EQ(csv.size(), 3U);
  EXPECT_EQ(csv[1], "gb10_m_soap_device_s1,gb10,m,soap,device,1,false" + std::string(19, ',') +
                        "run failed: exit code 1 (log: runs/gb10_m_soap_device_s1/log.txt),runs/gb10_m_soap_device_s1");
  const std::vector<std::string> md = lines(table_markdown(spec, results));
  ASSERT_EQ(md.size(), 4U);
  EXPECT_EQ(md[2], "| gb10_m_soap_device_s1 | failed: exit code 1 (log: runs/gb10_m_soap_device_s1/log.txt) |"
                   "  |  |  |  |  |  |  |  |  |  |  |");
  EXPECT_EQ(md[3].rfind("| gb10_m_soap_tiered_s1 | yes | 0.0125 |", 0), 0U) << md[3];
}

struct Malformed {
  const char* summary;  // nullptr: no file at all
  const char* expected_in_failure;
};

TEST(StudyTable, MalformedSummariesAreFailuresNamingTheKey) {
  const std::vector<Malformed> cases = {
      {nullptr, "summary.json: file: missing"},
      {"not json", "summary.json: json: expected a JSON object"},
      {"[1, 2]", "summary.json: json: expected a JSON object"},
      {R"({"fits": "yes"})", "summary.json: fits: expected true or false"},
      {R"({"fits": true, "p50_step_s": 0.1})", "summary.json: p99_step_s: missing; expected a number"},
      {R"({"fits": true, "p50_step_s": "fast"})", "summary.json: p50_step_s: expected a number, found \"fast\""},
      {R"({"fits": false, "shortfall": [{"tier": "device"}]})", "summary.json: shortfall[0].needed_bytes: missing"},
      {R"({"fits": false, "shortfall": {"tier": "device"}})", "summary.json: shortfall: expected a list"},
      // Every metric of a run that fits, network_bytes included (0 on one unit).
      {R"({"fits": true, "shortfall": [], "p50_step_s": 0.0125, "p99_step_s": 0.025, "p99_over_p50": 2.0,
          "mean_step_s": 0.014, "compute_s": 0.01, "visible_optimizer_s": 0.004, "exposed_communication_s": 0.0,
          "refresh_wait_s": 0.003,
          "state_move_wait_s": 0.0005, "max_staleness": 1, "peak_device_bytes": 3221225472,
          "peak_host_bytes": 1610612736, "peak_nvme_bytes": 0, "tokens_per_s": 1})",
       "summary.json: network_bytes: missing; expected a number (the run fits)"},
  };
  for (const Malformed& c : cases) {
    TempDir dir;
    if (c.summary != nullptr) write(dir.path() / "summary.json", c.summary);
    const RunResult r = read_run_result(dir.path(), "");
    ASSERT_TRUE(r.failed()) << (c.summary ? c.summary : "(no file)");
    EXPECT_NE(r.failure.find(c.expected_in_failure), std::string::npos) << r.failure;
  }
}

TEST(StudyTable, ExtraAxesAreColumnsAndCellsAreQuotedWhereNeeded) {
  const StudySpec spec = parse_study(
      "name: x\ngrid:\n  - hw: [gb10]\n    model: ['/data/a,b/m.yaml']\n    optimizer: [soap]\n"
      "    placement: [host]\n    staleness: [0]\n    steps: [10, 20]\n",
      "x.yaml", "/");
  std::vector<RunResult> results(2, RunResult{"exit code 2", false, {}, {}, {}});
  results[1].failure = "killed | signal 9";
  const std::vector<std::string> csv = lines(table_csv(spec, results));
  ASSERT_EQ(csv.size(), 3U);
  EXPECT_EQ(csv[0], kHeader + ",steps");
  EXPECT_EQ(csv[1].rfind("gb10_m_soap_host_s0_steps10,gb10,\"/data/a,b/m.yaml\",soap,host,0,false,", 0), 0U) << csv[1];
  EXPECT_EQ(csv[1].substr(csv[1].size() - 3), ",10");
  EXPECT_EQ(csv[2].substr(csv[2].size() - 3), ",20");
  // table.md leaves the extra axes to the config name (and table.csv); '|' in a cell is escaped.
  const std::vector<std::string> md = lines(table_markdown(spec, results));
  ASSERT_EQ(md.size(), 4U);
  EXPECT_EQ(md[0], kMarkdownHeader);
  EXPECT_EQ(md[2].rfind("| gb10_m_soap_host_s0_steps10 | failed: exit code 2 (log: runs/", 0), 0U) << md[2];
  EXPECT_EQ(md[3], "| gb10_m_soap_host_s0_steps20 | failed: killed \\| signal 9 (log: runs/gb10_m_soap_host_s0_steps20/"
                   "log.txt) |  |  |  |  |  |  |  |  |  |  |  |");
}

TEST(StudyTable, ShortfallTextListsEveryTierShort) {
  // device: 2 GiB needed, 0.5 GiB free; host: 4 GiB needed, 3972844749 B free (0.29999999 GiB short).
  const std::vector<Shortfall> tiers = {{"device", 2147483648.0, 536870912.0, 0.0},
                                        {"host", 4294967296.0, 3972844749.0, 0.0}};
  EXPECT_EQ(shortfall_text(tiers), "device 1.5 GiB short; host 0.3 GiB short");
  EXPECT_EQ(shortfall_text({}), "");
}

}  // namespace
}  // namespace asteria::cli::study

#include "apps/asteria/study_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <ostream>

#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/study_process.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"

namespace asteria::cli::study {
namespace {

std::string progress_detail(const RunResult& result, const std::filesystem::path& log) {
  if (result.failed()) return "FAILED: " + result.failure + "; log " + log.string();
  if (!result.fits) return "does not fit: " + shortfall_text(result.shortfall);
  return "fits, p50 " + significant(result[Metric::p50_step_s].value_or(0.0), 4) + " s, visible optimizer " +
         significant(result[Metric::visible_optimizer_s].value_or(0.0), 4) + " s";
}

// A run's directory: what a run writes there, and its log.
bool is_run_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "log.txt" && entry.is_regular_file(ec)) continue;
    const auto output = std::find_if(std::begin(kRunOutputs), std::end(kRunOutputs),
                                     [&](const RunOutput& o) { return o.name == name; });
    if (output == std::end(kRunOutputs)) return false;
    const bool ours = output->directory_is_ours == nullptr
                          ? entry.is_regular_file(ec) && !entry.is_symlink(ec)
                          : entry.is_directory(ec) && output->directory_is_ours(entry.path());
    if (!ours) return false;
  }
  return !ec;
}

// runs/: one run directory per configuration, nothing else.
bool is_runs_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(dir, ec))
    if (!entry.is_directory(ec) || entry.is_symlink(ec) || !is_run_directory(entry.path())) return false;
  return !ec;
}

// plots/: the plot scripts' PNG files.
bool is_plots_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(dir, ec))
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".png") return false;
  return !ec;
}

// slurm/: a job array's script, sbatch's output and the tasks' logs.
bool is_slurm_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = name == "array.sh" || name == "sbatch.log" ||
                      (name.rfind("point-", 0) == 0 && entry.path().extension() == ".log");
    if (!ours || !entry.is_regular_file(ec) || entry.is_symlink(ec)) return false;
  }
  return !ec;
}

constexpr RunOutput kStudyOutputs[] = {{"study.yaml"}, {"table.csv"}, {"table.md"}, {"loss_curves.csv"},
                                       {"runs", &is_runs_directory}, {"plots", &is_plots_directory},
                                       {"plots.log"}, {"slurm", &is_slurm_directory}};

void prepare_run_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  // prepare_study_output() cleared runs/: a directory here now is a configuration named twice.
  if (std::filesystem::exists(dir, ec))
    throw InputError(dir.string(), "directory", "a run directory of this study alone, found one already there");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), "directory", "could not be created: " + ec.message());
}

}  // namespace

void prepare_study_output(const std::filesystem::path& dir, bool overwrite) {
  // A summary left by an earlier study must never pass for this one's, and a user's files are
  // never removed: the one output policy, with the study's outputs.
  prepare_output(dir, overwrite, "study", kStudyOutputs);
}

void require_study_of(const std::filesystem::path& dir, const std::string& study_text, const std::string& option) {
  std::ifstream in(dir / "study.yaml", std::ios::binary);
  std::ostringstream earlier;
  earlier << in.rdbuf();
  if (!in.is_open())
    throw InputError(dir.string(), option, "expected a results directory this study prepared (its study.yaml), found none");
  if (earlier.str() != study_text)
    throw InputError(dir.string(), option,
                     "expected the results of this study file (study.yaml the same text), found another study's; use "
                     "--overwrite to replace them, or another --out");
}

void prepare_study_resume(const std::filesystem::path& dir, const std::string& study_text) {
  std::error_code ec;
  if (!std::filesystem::exists(dir / "study.yaml", ec)) {
    prepare_study_output(dir, /*overwrite=*/false);  // nothing to resume: a new study (or a refusal)
    return;
  }
  require_study_of(dir, study_text, "--resume");
}

std::vector<std::string> run_command(const StudyPoint& point, const RunnerOptions& options) {
  std::vector<std::string> command{options.asteria};
  const std::vector<std::string> args = sim_arguments(point, options.out_dir / relative_run_dir(point));
  command.insert(command.end(), args.begin(), args.end());
  if (options.traces) command.emplace_back("--trace");
  return command;
}

std::string shell_line(const std::vector<std::string>& command) {
  std::string line;
  for (const std::string& word : command) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("-_./=:+,@").find(c) != std::string_view::npos;
    });
    if (!line.empty()) line += ' ';
    if (plain) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) {
      if (c == '\'') line += "'\\''";  // close, escaped quote, reopen
      else line += c;
    }
    line += '\'';
  }
  return line;
}

namespace {

void write_tables(const StudySpec& spec, const RunnerOptions& options, std::span<const RunResult> results) {
  io::write_file_atomically(options.out_dir / "table.csv", table_csv(spec, results));
  io::write_file_atomically(options.out_dir / "table.md", table_markdown(spec, results));
  if (spec.targets) io::write_file_atomically(options.out_dir / "loss_curves.csv", loss_curves_csv(spec, results));
}

}  // namespace

std::vector<RunResult> run_study(const StudySpec& spec, const RunnerOptions& options, std::ostream& progress,
                                 const RankPlace& place) {
  std::vector<Job> jobs;
  std::vector<std::size_t> point_of;  // the point each of this rank's jobs runs
  std::vector<RunResult> results(spec.points.size());
  std::vector<char> kept_here(spec.points.size(), 0);
  const std::string who = place.ranks > 1 ? "rank " + std::to_string(place.rank) + " " : std::string();
  for (std::size_t i = 0; i < spec.points.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(place.ranks)) != place.rank) continue;
    if (options.point && i != *options.point) continue;
    const StudyPoint& point = spec.points[i];
    const std::filesystem::path dir = options.out_dir / relative_run_dir(point);
    std::error_code ec;
    const bool earlier = options.resume && std::filesystem::exists(dir, ec);
    if (earlier) {
      if (RunResult kept = read_run_result(dir, ""); !kept.failed()) {
        // One write a line: several ranks share the terminal.
        progress << who + spec.points[i].slug + ": kept from the earlier run\n" << std::flush;
        results[i] = std::move(kept);
        kept_here[i] = 1;
        continue;
      }
    } else {
      prepare_run_dir(dir);
    }
    std::vector<std::string> command = run_command(point, options);
    if (earlier) command.emplace_back("--overwrite");  // the run's own files, and only those
    const std::string program = command.front();
    command.erase(command.begin());
    jobs.push_back(Job{program, std::move(command), dir / "log.txt"});
    point_of.push_back(i);
  }
  std::vector<char> ran_here = kept_here;
  std::size_t finished = 0;
  const std::string total = std::to_string(jobs.size());
  run_jobs(jobs, options.jobs, [&](std::size_t index, const JobEnd& end) {
    const std::size_t i = point_of[index];
    const std::filesystem::path dir = options.out_dir / relative_run_dir(spec.points[i]);
    results[i] = read_run_result(dir, end.succeeded() ? std::string() : end.describe());
    ran_here[i] = 1;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f s", end.seconds);
    progress << who + '[' + std::to_string(++finished) + '/' + total + "] " + spec.points[i].slug + ": " +
                    progress_detail(results[i], jobs[index].log) + " (" + seconds + ")\n"
             << std::flush;
  });
  if (options.point) return results;  // one task of an array: the tables come later (--gather)
  barrier(place, "study: every rank's runs are done");
  if (!place.leads()) return {};
  for (std::size_t i = 0; i < spec.points.size(); ++i)
    if (ran_here[i] == 0) results[i] = read_run_result(options.out_dir / relative_run_dir(spec.points[i]), "");
  write_tables(spec, options, results);
  return results;
}

std::vector<RunResult> gather_study(const StudySpec& spec, const RunnerOptions& options) {
  std::vector<RunResult> results;
  for (const StudyPoint& point : spec.points) results.push_back(read_run_result(options.out_dir / relative_run_dir(point), ""));
  write_tables(spec, options, results);
  return results;
}

PlotOutcome render_plots(const std::string& python, const std::filesystem::path& script,
                         const std::filesystem::path& out_dir) {
  const std::filesystem::path log = out_dir / "plots.log";
  const JobEnd end = run_job(Job{python, {script.string(), out_dir.string()}, log});
  PlotOutcome outcome;
  // The script prints the path of each PNG it wrote, one a line, among its notes.
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    const bool png = line.size() > 4 && line.compare(line.size() - 4, 4, ".png") == 0;
    if (png && std::filesystem::is_regular_file(line)) outcome.paths.push_back(line);
  }
  if (!end.succeeded()) outcome.problem = python + " " + script.string() + ": " + end.describe() + "; see " + log.string();
  return outcome;
}

}  // namespace asteria::cli::study

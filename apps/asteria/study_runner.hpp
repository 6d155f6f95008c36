#pragma once
// Running a study: every point as an `asteria sim` child process, their summaries gathered into
// DIR/table.csv and DIR/table.md, then the plots.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_table.hpp"
#include "apps/asteria/train_ranks.hpp"

namespace asteria::cli::study {

struct RunnerOptions {
  std::filesystem::path out_dir;  // DIR: runs/<slug>/ per point, table.csv, table.md
  std::string asteria;            // the program run as `<asteria> sim ...`
  int jobs = 1;                   // runs at once
  bool traces = false;            // runs record trace.json (--trace); otherwise they record none
  bool resume = false;            // keep the points an earlier run of this study finished
  std::optional<std::size_t> point;  // run this point alone and write no table (a Slurm array task)
};

// The full command line of one point's run: program, "sim", options.
std::vector<std::string> run_command(const StudyPoint& point, const RunnerOptions& options);

// One command line as a shell would read it (arguments quoted where needed).
std::string shell_line(const std::vector<std::string>& command);

// The study's results directory, before any run: created, or refused when it holds an earlier
// study's results (study.yaml, table.csv, table.md, runs/, plots/, plots.log) unless
// `overwrite`, which removes exactly those, and only when each is what a study writes. Throws
// InputError naming the directory and --out.
void prepare_study_output(const std::filesystem::path& dir, bool overwrite);

// --resume: DIR holds an earlier run of the study whose text is `study_text` (its study.yaml the
// same bytes), or no study's results at all (it is then prepared as for a new study). InputError
// naming DIR and --resume otherwise.
void prepare_study_resume(const std::filesystem::path& dir, const std::string& study_text);

// DIR/study.yaml holds `study_text` (the study whose runs DIR holds); InputError naming DIR and
// `option` otherwise.
void require_study_of(const std::filesystem::path& dir, const std::string& study_text, const std::string& option);

// Runs every point (at most `jobs` at once; each run directory is created first, its output
// captured to runs/<slug>/log.txt), writes one progress line per finished run on `progress`,
// then writes table.csv and table.md atomically. Results are in the study's order.
// Several ranks (`mpirun -np N asteria study`, `place`): rank r runs the points r, r + N, ...;
// once every rank's are done, rank 0 reads every run's summary and writes the tables, and
// returns the results (the other ranks return none). A run that failed on another rank is one
// without a summary there. With options.resume a point whose run directory holds a summary that
// reads (fits or not) is kept; the others run again (their runs get --overwrite).
std::vector<RunResult> run_study(const StudySpec& spec, const RunnerOptions& options, std::ostream& progress,
                                 const RankPlace& place = {});

// The tables of what the points' runs left in their directories, none run here (after a Slurm
// job array): a point without a summary that reads is a failed row. Results in the study's order.
std::vector<RunResult> gather_study(const StudySpec& spec, const RunnerOptions& options);

struct PlotOutcome {
  std::vector<std::string> paths;  // the PNG files written
  std::string problem;             // non-empty when the plotting script failed
};

// Runs `python script DIR` (the study plots), its output captured to DIR/plots.log.
PlotOutcome render_plots(const std::string& python, const std::filesystem::path& script,
                         const std::filesystem::path& out_dir);

}  // namespace asteria::cli::study

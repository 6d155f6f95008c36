// asteria study: a what-if grid of `asteria sim` runs, gathered into one table and plots.
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/asteria/options.hpp"
#include "apps/asteria/study_runner.hpp"
#include "apps/asteria/study_slurm.hpp"
#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_validation.hpp"
#include "apps/asteria/train_ranks.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/shipped_files.hpp"
#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"
#if ASTERIA_HAVE_MPI
#include "core/real/mpi/mpi_comm.hpp"
#endif


namespace asteria::cli {
namespace {

// Debian's interpreter, where python3-matplotlib is installed; never a python3 found in PATH
// (a virtual environment there may lack matplotlib).
constexpr const char* kPython = "/usr/bin/python3";

constexpr std::string_view kSynopsis =
    "FILE.yaml [--out DIR] [--overwrite | --resume] [--jobs N] [--asteria PATH] [--no-plots] [--traces]\n"
    "       [--dry-run | --slurm [--sbatch-option OPT]... | --gather | --point I]";

constexpr std::string_view kAbout =
    "Runs a what-if study: the study file names a grid over hardware, model, optimizer, placement and\n"
    "staleness (and optionally other sim settings); every point of it runs as its own `asteria sim`\n"
    "process, --jobs at a time. Every run's inputs (profiles, models, units and nodes, hyperparameters)\n"
    "are checked first: a problem stops the study before any run starts (--dry-run checks too). A run\n"
    "that fails is reported with its log and the study goes on.\n"
    "The study format is described in experiments/README.md; experiments/studies/ holds examples.\n"
    "\n"
    "`mpirun -np N asteria study ...` spreads the points over N ranks (each runs its share --jobs at a\n"
    "time, on its own host where the results directory is shared); rank 0 writes the tables and plots.\n"
    "\n"
    "Exit code 0 when every run produced a summary (a model that does not fit is a result), 1 when\n"
    "some run did not, or the study file or a run's inputs are invalid.";

constexpr std::string_view kDetails =
    "Files written in DIR:\n"
    "  runs/<config>/   one run: summary.json, steps.csv (when it fits), log.txt (its output)\n"
    "  table.csv        one row per run, SI units: config, hw, model, optimizer, placement, staleness,\n"
    "                   fits, p50_step_s, p99_step_s, p99_over_p50, mean_step_s, compute_s,\n"
    "                   visible_optimizer_s, exposed_communication_s, refresh_wait_s,\n"
    "                   state_move_wait_s, max_staleness,\n"
    "                   peak_<tier>_bytes, shortfall, run_dir, then any extra axis\n"
    "  table.md         the same in ms and GiB\n"
    "  study.yaml       a copy of the study file, written before the first run (--resume, --gather)\n"
    "  slurm/           with --slurm: array.sh (the job array), sbatch.log, point-<I>.log (each task's output)\n"
    "  plots/*.png      step breakdown, tier occupancy, staleness histogram, drawn by\n"
    "                   /usr/bin/python3 plots/study_plots.py (plots.log: its notes)\n";

po::options_description study_options() {
  po::options_description o("Options");
  o.add_options()
      ("out", po::value<std::string>()->value_name("DIR"), "results directory (default results/<study name>)")
      ("overwrite", "replace the results of an earlier study in the results directory (refused otherwise)")
      ("resume", "go on with an earlier run of this study in the results directory: its finished points are kept, "
                 "the missing and failed ones run")
      ("slurm", "submit the points to run as a Slurm job array (sbatch), each task one point; table them "
                "afterwards with --gather (with --resume: only the points without a summary)")
      ("sbatch-option", po::value<std::vector<std::string>>()->value_name("OPT"),
       "with --slurm: an #SBATCH line of the array's script (--partition=gpu, --time=1:00:00, ...); repeatable")
      ("gather", "run nothing: table the runs the results directory holds (after a Slurm job array)")
      ("point", po::value<long long>()->value_name("I"),
       "run point I alone (0-based, in the study's order) into the results directory and write no table "
       "(a Slurm array task)")
      ("jobs", po::value<int>()->value_name("N"), "runs at once (default: the number of cores)")
      ("asteria", po::value<std::string>()->default_value("/proc/self/exe")->value_name("PATH"),
       "the asteria binary that runs each point")
      ("no-plots", "write the tables only")
      ("dry-run", "print the runs' command lines and stop")
      ("traces", "runs record trace.json (they get --trace; otherwise they record no trace)");
  return o;
}

// Like parse_verb_options, with the study file as the one positional argument.
std::optional<po::variables_map> parse_study_options(const Args& args, std::ostream& out, std::ostream& err,
                                                     int& exit_code) {
  po::options_description visible = study_options();
  visible.add_options()("help,h", "print this help and exit");
  po::options_description all = visible;
  all.add_options()("study", po::value<std::string>(), "the study file");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), values);
    if (values.count("help") != 0) {
      out << "usage: asteria study " << kSynopsis << "\n\n" << kAbout << "\n\n" << visible << '\n' << kDetails;
      exit_code = 0;
      return std::nullopt;
    }
    po::notify(values);
    if (values.count("study") == 0) throw po::error("the study file (FILE.yaml) is required");
  } catch (const po::error& e) {
    err << "asteria study: " << e.what() << "\n(see asteria study --help)\n";
    exit_code = 2;
    return std::nullopt;
  }
  return values;
}

int default_jobs() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

std::string asteria_program(const po::variables_map& v) {
  std::string program = v["asteria"].as<std::string>();
  if (program == "/proc/self/exe") {
    // Name the binary itself, so that the runs and the printed commands do not depend on /proc.
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink(program, ec);
    if (!ec) program = self.string();
  }
  if (program.find('/') != std::string::npos && ::access(program.c_str(), X_OK) != 0)
    throw InputError("--asteria", "asteria", "expected an executable file, found '" + program + "'");
  return program;
}

// The table on `out`, the plots, and the exit code: 1 when some run failed.
int report_study(const study::StudySpec& spec, const study::RunnerOptions& options,
                 const std::vector<study::RunResult>& results, bool plots_wanted, std::ostream& out,
                 std::ostream& err) {
  out << study::table_markdown(spec, results) << '\n';
  out << "wrote " << (options.out_dir / "table.csv").string() << ", " << (options.out_dir / "table.md").string()
      << (spec.targets ? ", " + (options.out_dir / "loss_curves.csv").string() : std::string()) << '\n';
  if (plots_wanted) {
    const study::PlotOutcome plots = study::render_plots(
        kPython, shipped_path("plots/study_plots.py"), options.out_dir);
    for (const std::string& path : plots.paths) out << "plot: " << path << '\n';
    if (!plots.problem.empty()) err << "asteria study: plots failed: " << plots.problem << '\n';
  }
  std::size_t failed = 0;
  for (const study::RunResult& r : results) failed += r.failed() ? 1 : 0;
  if (failed != 0) {
    err << "asteria study: " << failed << " of " << results.size() << " runs failed (see the table's shortfall "
        << "column and their log.txt)\n";
    return 1;
  }
  return 0;
}

}  // namespace

int study_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const auto values = parse_study_options(args, out, err, exit_code);
  if (!values) return exit_code;
  const po::variables_map& v = *values;
  const std::filesystem::path file = v["study"].as<std::string>();
  const study::StudySpec spec = study::load_study(file);

  study::RunnerOptions options;
  options.out_dir = v.count("out") != 0 ? std::filesystem::path(v["out"].as<std::string>())
                                        : std::filesystem::path("results") / spec.name;
  options.jobs = v.count("jobs") != 0 ? v["jobs"].as<int>() : default_jobs();
  if (options.jobs < 1) throw InputError("--jobs", "jobs", "expected a whole number >= 1");
  options.traces = v.count("traces") != 0;
  options.asteria = asteria_program(v);
  // A broken profile or a missing model is one error here, not one failed run per point.
  study::check_run_inputs(spec);

  // Under mpirun each rank runs its share of the points; rank 0 prepares the directory first and
  // writes the tables once every rank is done.
#if ASTERIA_HAVE_MPI
  std::optional<real::MpiSession> mpi;
  std::optional<real::MpiComm> mpi_comm;
  if (real::MpiSession::launched_by_mpirun()) {
    mpi.emplace();
    mpi_comm.emplace(*mpi);
  }
  const RankPlace place = rank_place(mpi_comm ? &*mpi_comm : nullptr);
#else
  const RankPlace place;
#endif

  // What the invocation does: run the points (here, or across mpirun's ranks), or one of these.
  int modes = 0;
  for (const char* mode : {"point", "gather", "slurm", "dry-run"}) modes += v.count(mode) != 0 ? 1 : 0;
  if (modes > 1) throw InputError("--point, --gather, --slurm, --dry-run", "mode", "expected at most one of them");
  if (v.count("slurm") != 0 && place.ranks > 1)
    throw InputError("--slurm", "launcher", "expected one launcher: --slurm without mpirun");
  if (v.count("sbatch-option") != 0 && v.count("slurm") == 0)
    throw InputError("--sbatch-option", "launcher", "expected only with --slurm");
  // The study file's text: DIR/study.yaml, written before any run, so that an interrupted study
  // resumes, and Slurm's tasks run, only with the same file.
  std::string study_text;
  {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    study_text = text.str();
  }
  // A Slurm array task: one point, in a directory --slurm prepared for this study file.
  if (v.count("point") != 0) {
    const long long point = v["point"].as<long long>();
    if (point < 0 || point >= static_cast<long long>(spec.points.size()))
      throw InputError("--point", "point", "expected a point of the study, 0 to " + std::to_string(spec.points.size() - 1) +
                                               ", found " + std::to_string(point));
    study::require_study_of(options.out_dir, study_text, "--point");
    options.point = static_cast<std::size_t>(point);
    options.resume = true;  // a point that has its summary is done; one resubmitted runs again
    const std::vector<study::RunResult> results = study::run_study(spec, options, err);
    return results[static_cast<std::size_t>(point)].failed() ? 1 : 0;
  }
  if (v.count("gather") != 0) {
    study::require_study_of(options.out_dir, study_text, "--gather");
    const std::vector<study::RunResult> results = study::gather_study(spec, options);
    return report_study(spec, options, results, v.count("no-plots") == 0, out, err);
  }

  if (v.count("dry-run") != 0) {
    if (!place.leads()) return 0;
    out << "# study " << spec.name << ": " << spec.points.size() << " runs\n";
    for (const study::StudyPoint& point : spec.points) out << study::shell_line(study::run_command(point, options)) << '\n';
    return 0;
  }

  options.resume = v.count("resume") != 0;
  if (options.resume && v.count("overwrite") != 0)
    throw InputError("--resume, --overwrite", "results directory", "expected at most one of the two");
  // Every rank learns whether rank 0 could prepare the directory, so that none waits forever.
  std::optional<InputError> unprepared;
  if (place.leads()) {
    try {
      if (options.resume) study::prepare_study_resume(options.out_dir, study_text);
      else study::prepare_study_output(options.out_dir, v.count("overwrite") != 0);
      io::write_file_atomically(options.out_dir / "study.yaml", study_text);
    } catch (const InputError& e) {
      unprepared = e;
    }
  }
  if (mean_over_ranks(place, unprepared ? 0.0 : 1.0, "study: the results directory prepared") < 1.0) {
    if (unprepared) throw *unprepared;
    return 1;  // rank 0 reports why
  }
  if (v.count("slurm") != 0) {
    const std::vector<std::size_t> points = study::points_to_run(spec, options.out_dir, options.resume);
    if (points.empty()) {
      out << "study " << spec.name << ": every point has its summary; table them with --gather\n";
      return 0;
    }
    std::filesystem::create_directories(options.out_dir / "slurm");
    const std::vector<std::string> sbatch_options =
        v.count("sbatch-option") != 0 ? v["sbatch-option"].as<std::vector<std::string>>() : std::vector<std::string>{};
    const std::filesystem::path script = options.out_dir / "slurm" / "array.sh";
    io::write_file_atomically(script, study::array_script(spec, options, file, points, sbatch_options));
    const std::string job = study::submit_array(script, options.out_dir / "slurm" / "sbatch.log");
    out << "study " << spec.name << ": submitted Slurm job array " << job << " (" << points.size() << " of "
        << spec.points.size() << " points: " << study::index_ranges(points) << "), " << script.string()
        << "\nonce it has finished: asteria study " << file.string() << " --out " << options.out_dir.string()
        << " --gather\n";
    return 0;
  }
  if (place.leads())
    err << "study " << spec.name << ": " << spec.points.size() << " runs, " << options.jobs << " at once"
        << (place.ranks > 1 ? " on each of " + std::to_string(place.ranks) + " ranks" : std::string()) << ", into "
        << options.out_dir.string() << std::endl;
  const std::vector<study::RunResult> results = study::run_study(spec, options, err, place);
  if (!place.leads()) return 0;
  return report_study(spec, options, results, v.count("no-plots") == 0, out, err);
}

}  // namespace asteria::cli

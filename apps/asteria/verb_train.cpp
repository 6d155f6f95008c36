// asteria train: a GPT-style language model trained through the runtime on a text corpus.
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "core/run/option_values.hpp"
#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/rank_agreement.hpp"
#include "core/run/settings_list.hpp"
#include "apps/asteria/train.hpp"
#include "core/common/error.hpp"
#include "apps/asteria/train_resume.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#if ASTERIA_HAVE_MPI
#include "core/real/mpi/mpi_comm.hpp"
#endif
#if ASTERIA_HAVE_NCCL
#include "core/real/cuda/device.hpp"
#include "core/real/nccl/nccl_comm.hpp"
#endif

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Trains a decoder-only transformer (byte-level, vocabulary 256) on a directory of text files, with the\n"
    "optimizer state in the runtime's tiered store and preconditioner refreshes on host workers under the\n"
    "staleness bound. The model's forward and backward run on the device stream (a CPU thread with\n"
    "--device cpu, multithreaded OpenBLAS GEMMs; the GPU with --device cuda, where the device tier is\n"
    "then GPU memory and the per-step optimizer math of blocks placed there runs on the GPU); the\n"
    "refreshes and host-placed updates on --host-workers threads.\n"
    "\n"
    "Without --data, the corpus is the Python standard library sources of this machine (/usr/lib/python3.*).\n"
    "\n"
    "Data-parallel: `mpirun -np N asteria train ...` runs N ranks (Open MPI). Each trains on its slice of\n"
    "the global --batch (a multiple of N) from the same weights; every step's plan averages the gradients\n"
    "over the ranks (a reduce op per layer, overlapping the next layer's backward), so replicas stay\n"
    "bitwise equal (summary.json: replicas_identical, with each rank's weight and optimizer-state digests).";

constexpr std::string_view kDetails =
    "Models: experiments/models/*.yaml (gpt-mini, tiny, ...) or a path; vocab must be 256, kv_heads = heads.\n"
    "Files written with --out DIR (README: Outputs):\n"
    "  steps.csv      one row per step: the shared columns (compute_s: the measured forward + backward),\n"
    "                 then loss, validation_loss (on evaluation steps), tokens_per_s\n"
    "  summary.json   the shared flat object, then corpus, first/final loss, final validation loss, throughput\n"
    "  plan.txt       the step plan every step ran, one typed op per line\n"
    "  checkpoint/    the final parameters: one .npy per tensor and manifest.json\n"
    "  resume/        with --checkpoint-every (unless --checkpoint-dir): the whole training state after\n"
    "                 every N-th step in two slots (slot-a/, slot-b/), for --resume\n"
    "  rank<r>/       data-parallel runs: each rank's steps.csv, summary.json, plan.txt (and trace); the\n"
    "                 summary.json above is then the aggregate (per-rank figures, replicas_identical)\n"
    "  trace.csv, trace.json   with --trace: the executed plan (native) and its Chrome trace (Perfetto)\n";

// train's options: the run settings it takes (core/run/run_schema.hpp), its own included.
po::options_description train_options() { return run_config_options(RunVerb::train); }

TrainSettings settings_from(const po::variables_map& v) {
  TrainSettings s;
  s.spec = read_run_config(RunVerb::train, v);
  if (s.spec.overwrite && !s.spec.out && !s.spec.train.checkpoint_dir)
    throw InputError("command line", "--overwrite",
                     "--out DIR or --checkpoint-dir DIR as well (what it replaces: results, checkpoints)");
  return s;
}

}  // namespace

int train_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values =
      parse_verb_options({"train", "[options]", kAbout, details}, train_options(), args, out, err, exit_code);
  if (!values) return exit_code;
  std::optional<TrainSettings> parsed = settings_from(*values);
  validate(parsed->spec);
  // Started by mpirun: this process is one data-parallel rank of several.
  platform::Comm* comm = nullptr;
#if ASTERIA_HAVE_MPI
  // Two communicators over the same ranks, each with its own progress thread: the step's
  // gradients, and refresh results (which must never queue a gradient behind a late refresh).
  platform::Comm* side_comm = nullptr;
  std::optional<real::MpiSession> mpi;
  std::optional<real::MpiComm> mpi_comm;
  std::optional<real::MpiComm> mpi_side_comm;
  if (real::MpiSession::launched_by_mpirun()) {
    mpi.emplace(nullptr, nullptr, /*multiple_comms=*/true);
    mpi_comm.emplace(*mpi);
    mpi_side_comm.emplace(*mpi);
    comm = &*mpi_comm;
    side_comm = &*mpi_side_comm;
  }
#endif
  // --device cuda ranks reduce their gradients with NCCL on their GPUs' memory (one GPU per rank,
  // the node's ranks in order), where the model keeps them; MPI stays for host-side exchanges.
  platform::Comm* step_comm = nullptr;
#if ASTERIA_HAVE_NCCL
  std::optional<real::NcclComm> nccl_comm;
  if (mpi_comm && parsed->spec.train.device == "cuda") {
    nccl_comm.emplace(*mpi_comm);
    real::cuda::use_device(nccl_comm->device());  // the model and the accelerator go there
    step_comm = &*nccl_comm;
  }
#endif
  const RankPlace place = rank_place(comm);
  // --resume: this rank's checkpoint, opened and verified, and the settings it was taken with.
  std::shared_ptr<const checkpoint::CheckpointReader> resume_from;
  Args arguments = args;
  if (values->count("resume") != 0) {
    std::filesystem::path dir = (*values)["resume"].as<std::string>();
    if (place.ranks > 1) dir /= "rank" + std::to_string(place.rank);
    resume_from = std::make_shared<const checkpoint::CheckpointReader>(checkpoint::CheckpointReader::open_latest(dir));
    const std::string source = resume_from->slot().string();
    arguments = resumed_arguments(parse_arguments_text(resume_from->meta("args"), source), args, train_options(), source);
    po::variables_map resumed;
    po::store(po::command_line_parser(arguments).options(train_options()).positional({}).run(), resumed);
    po::notify(resumed);
    parsed = settings_from(resumed);
    validate(parsed->spec);
  }
  {
    // Ranks that differ in any setting but these would wait on each other forever (or train
    // different runs under one summary): refused on every rank, naming the option.
    std::vector<std::string_view> per_rank;
    const std::vector<run::Setting> settings = run::all_settings();
    for (const run::Setting& s : settings)
      if (s.per_rank) per_rank.push_back(s.name);
    po::variables_map effective;
    po::store(po::command_line_parser(arguments).options(train_options()).positional({}).run(), effective);
    po::notify(effective);
    require_same_settings(place, effective_settings(effective, train_options(), per_rank));
  }
  TrainSettings settings = std::move(*parsed);
  settings.resume_from = std::move(resume_from);
  settings.saved_arguments = arguments_text(arguments_to_save(arguments, train_options()));
  const RunConfig& spec = settings.spec;
  // Checked before the corpus is read and a single step is run: a typo must not cost the run.
  if (spec.out) {
    // A resumed run whose checkpoints are those of --out (<--out>/resume) continues that run's
    // results: they are its own to replace, and its steps.csv rows before the checkpoint stay.
    bool continues_out = false;
    if (settings.resume_from && values->count("resume") != 0) {
      std::error_code ec;
      const auto same = [&](const std::filesystem::path& a, const std::filesystem::path& b) {
        return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
      };
      continues_out = same((*values)["resume"].as<std::string>(), *spec.out / "resume");
    }
    if (continues_out) {
      std::ifstream earlier(rank_directory(*spec.out, place) / "steps.csv", std::ios::binary);
      std::ostringstream text;
      text << earlier.rdbuf();
      settings.earlier_steps_csv = text.str();
    }
    if (place.leads()) prepare_output(*spec.out, spec.overwrite || continues_out, "train");
    barrier(place, "--out prepared");
    std::filesystem::create_directories(rank_directory(*spec.out, place));
  }
  const TrainOutcome outcome = run_train(settings, err, comm, side_comm, step_comm);
  if (place.leads()) print_train(outcome, out);
  if (spec.out) {
    write_train(outcome, *spec.out);
    if (place.leads())
      out << "wrote steps.csv, plan.txt, summary.json, " << (outcome.report.trace.written ? "trace.csv, trace.json, " : "")
          << "checkpoint/ to " << spec.out->string() << (place.ranks > 1 ? " (each rank's in rank<r>/)" : "") << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

// One `asteria train` run: corpus, model, platform, the step driver (values, measured time), the
// training loop with periodic validation.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>

#include "apps/asteria/corpus_training.hpp"
#include "apps/asteria/memory_check.hpp"
#include "apps/asteria/replay_metadata.hpp"
#include "apps/asteria/progress.hpp"
#include "apps/asteria/run_loop.hpp"
#include "apps/asteria/run_trace.hpp"
#include "core/real/energy_counters.hpp"
#include "apps/asteria/run_platform.hpp"
#include "apps/asteria/train.hpp"
#include "apps/asteria/rank_agreement.hpp"
#include "apps/asteria/train_checkpoint.hpp"
#include "apps/asteria/train_models.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::cli {

namespace {

using WallClock = std::chrono::steady_clock;
double seconds_between(WallClock::time_point a, WallClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The rows of an earlier steps.csv up to step `last`, when its header is this run's (a file of
// another layout is left out, said so on `progress`).
std::vector<std::string> rows_up_to(const std::string& csv, std::int64_t last, const std::string& header,
                                    std::ostream& progress) {
  std::vector<std::string> rows;
  if (csv.empty()) return rows;
  if (csv.compare(0, header.size(), header) != 0) {
    progress << "train: the earlier steps.csv in --out has other columns: its rows are not kept\n";
    return rows;
  }
  std::size_t from = header.size();
  while (from < csv.size()) {
    const std::size_t end = std::min(csv.find('\n', from), csv.size());
    const std::string row = csv.substr(from, end - from);
    from = end + 1;
    std::int64_t step = 0;
    const auto [ptr, ec] = std::from_chars(row.data(), row.data() + row.size(), step);
    if (row.empty() || ec != std::errc{} || ptr == row.data() + row.size() || *ptr != ',') continue;
    if (step <= last) rows.push_back(row);
  }
  return rows;
}

void validate(const TrainSettings& s) {
  cli::validate(s.spec);
  const std::string source = "command line";
  validate_corpus_settings(s.spec);
  if (s.spec.batch < 0) throw InputError(source, "--batch", "expected an integer >= 1 (0: the config's)");
  if (s.spec.host_workers < 1) throw InputError(source, "--host-workers", "expected an integer >= 1");
  if (s.spec.train.blas_threads < 0) throw InputError(source, "--blas-threads", "expected an integer >= 0 (0: all cores)");
  if (s.spec.train.checkpoint_every < 0) throw InputError(source, "--checkpoint-every", "expected an integer >= 0 (0: no checkpoints)");
  if (s.spec.train.device != "cpu" && s.spec.train.device != "cuda")
    throw InputError(source, "--device", "expected cpu or cuda, found '" + s.spec.train.device + "'");
}

// Times the model's forward and backward, so that the optimizer's visible share of a step is
// the step time minus this (the device stream runs them on a CPU thread, or drives the GPU).
class TimedModel final : public runtime::TrainingModel<float> {
 public:
  explicit TimedModel(runtime::TrainingModel<float>& inner) : inner_(inner) {}
  std::size_t layer_count() const override { return inner_.layer_count(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return inner_.layer(l); }
  linalg::MatrixView<float> weight_matrix(std::size_t l) override { return inner_.weight_matrix(l); }
  linalg::ConstMatrixView<float> gradient_matrix(std::size_t l) const override { return inner_.gradient_matrix(l); }
  linalg::MatrixView<float> mutable_gradient_matrix(std::size_t l) override { return inner_.mutable_gradient_matrix(l); }
  std::span<float> gradient_bucket(std::size_t first, std::size_t last) override {
    return inner_.gradient_bucket(first, last);
  }
  runtime::ModelPass pass() const noexcept override { return inner_.pass(); }
  platform::Tier tensor_tier() const noexcept override { return inner_.tensor_tier(); }
  void compute_gradient(std::size_t l, runtime::Step t) override {
    const WallClock::time_point start = WallClock::now();
    inner_.compute_gradient(l, t);
    seconds_ += seconds_between(start, WallClock::now());
  }
  void forward_pass(std::size_t l, int m, runtime::Step t) override {
    const WallClock::time_point start = WallClock::now();
    inner_.forward_pass(l, m, t);
    seconds_ += seconds_between(start, WallClock::now());
  }
  void backward_pass(std::size_t l, int m, runtime::Step t) override {
    const WallClock::time_point start = WallClock::now();
    inner_.backward_pass(l, m, t);
    seconds_ += seconds_between(start, WallClock::now());
  }
  std::optional<platform::Seconds> take_compute_seconds() override { return std::exchange(seconds_, 0.0); }

 private:
  runtime::TrainingModel<float>& inner_;
  double seconds_ = 0.0;  // written by the device stream's thread, read after the step has drained it
};

// Where checkpoints go, made ready before the first step (the plan must allow them).
void prepare_checkpoints(const TrainSettings& settings, const RankPlace& place, runtime::StepDriver<float>& driver) {
  driver.check_checkpointable();
  const std::filesystem::path dir = checkpoint_directory(settings, place);
  // A new run must not leave its checkpoints beside an earlier run's: --resume would pick
  // whichever is newer.
  if (!settings.resume_from && checkpoint::is_checkpoint_directory(dir)) {
    bool loadable = true;
    try {
      (void)checkpoint::CheckpointReader::open_latest(dir, settings.checkpoint_files);
    } catch (const InputError&) {  // only a first checkpoint cut short: nothing to keep
      loadable = false;
    }
    if (loadable && !settings.spec.overwrite)
      throw InputError(dir.string(), "--checkpoint-dir",
                       "holds checkpoints of an earlier run: --resume it to go on, or --overwrite to replace them");
    std::filesystem::remove_all(dir);
  }
}

// --resume: restores the newest checkpoint (every rank the same step) and returns the first step
// left to run; the earlier steps.csv rows are kept in `out`.
int resume(const TrainSettings& settings, const RankPlace& place, runtime::StepDriver<float>& driver,
           data::BatchLoader& train_loader, std::uint64_t digest, int warmup, int total, RunReport& out,
           std::ostream& progress_out) {
  const int first = static_cast<int>(restore_train_checkpoint(settings, place, driver, train_loader, digest, progress_out)) + 1;
  // Ranks resumed from checkpoints of different steps would run different step counts.
  require_same_value(place, first - 1, "command line", "--resume", "step restored from the ranks' checkpoints");
  out.earlier_rows = rows_up_to(settings.earlier_steps_csv, first - 1, steps_csv_header(out, false), progress_out);
  // A checkpoint of the last step is a run killed before it wrote its outputs (or one asked
  // to write them again): it is finished without a step. Past the last step is an error.
  if (first > total + 1)
    throw InputError("command line", "--steps",
                     "at least " + std::to_string(first - 1 - warmup) + ": the checkpoint was taken after step " +
                         std::to_string(first - 1) + " (" + std::to_string(warmup) +
                         " warm-up steps, then --steps), past the run's last step " + std::to_string(total));
  if (first == total + 1 && place.leads())
    progress_out << "train: the checkpoint holds step " << total
                 << ", the run's last: no step left to run, writing the run's outputs\n";
  return first;
}

// The run's final weights (what --out's weights file holds) and the figures every rank reports
// (digests of its weights and optimizer state, its step times), gathered on rank 0.
void keep_final_state(TrainModel& model, const runtime::StepDriver<float>& driver, bool sharded, TrainOutcome& outcome) {
  RunReport& out = outcome.report;
  const RankPlace& place = outcome.place;
  for (std::size_t i = 0; i < model.tensor_count(); ++i) {
    const workload::WeightSpec& w = model.tensor(i);
    outcome.tensor_names.push_back(w.name);
    outcome.tensor_shapes.push_back(w.order == 1 ? std::vector<std::int64_t>{w.cols}
                                                 : std::vector<std::int64_t>{w.rows, w.cols});
    outcome.tensors.push_back(model.parameters(i));
  }
  // Replicas are equal when these agree on every rank (bitwise: weights and every block's state).
  RankFigures figures;
  figures.weights_digest = fnv1a({});
  for (const std::vector<float>& t : outcome.tensors) figures.weights_digest = fnv1a(std::as_bytes(std::span(t)), figures.weights_digest);
  // Sharded state: each rank holds other blocks, so only the weights can agree (the state digest is 0).
  figures.optimizer_state_digest = sharded ? 0 : fnv1a({});
  for (std::size_t b = 0; b < driver.block_count() && !sharded; ++b) {
    const std::vector<std::byte> image = driver.block_state(b).serialize();
    figures.optimizer_state_digest = fnv1a(image, figures.optimizer_state_digest);
  }
  figures.p50_step_s = out.summary.p50_step_s;
  figures.p99_step_s = out.summary.p99_step_s;
  figures.mean_step_s = out.summary.mean_step_s;
  figures.mean_visible_optimizer_s = out.summary.mean_visible_optimizer_s;
  out.extra.emplace_back("weights_digest", hex(figures.weights_digest));
  out.extra.emplace_back("optimizer_state_digest", hex(figures.optimizer_state_digest));
  outcome.ranks = gather_figures(place, figures);
}

}  // namespace

TrainOutcome run_train(const TrainSettings& settings, std::ostream& progress_out, platform::Comm* comm,
                       platform::Comm* side_comm, platform::Comm* step_comm) {
  validate(settings);
  const RunConfig& spec = settings.spec;
  const RankPlace place = rank_place(comm);
  const WallClock::time_point start = WallClock::now();
  TrainOutcome outcome;
  outcome.place = place;
  RunReport& out = outcome.report;
  out.spec = spec;

  workload::ModelConfig config = workload::find_model_config(*spec.model);
  if (spec.batch > 0) config.micro_batch = spec.batch;  // each rank's
  if (config.vocab != data::kByteVocabulary)
    throw InputError(*spec.model, "vocab",
                     "expected " + std::to_string(data::kByteVocabulary) + " (byte-level tokens), found " +
                         std::to_string(config.vocab));
  out.model = config.name;
  // Each rank's model holds its own batch; the ranks slice one global batch between them.
  const int rank_batch = static_cast<int>(config.micro_batch);
  const int batch = global_batch(rank_batch, place.ranks);
  const int length = static_cast<int>(config.sequence_length);
  if (spec.straggler.rank >= place.ranks)
    throw InputError("command line", "--straggler",
                     "a rank below the " + std::to_string(place.ranks) + " data-parallel ranks, found " +
                         std::to_string(spec.straggler.rank));
  workload::ModelConfig rank_config = config;
  rank_config.micro_batch = rank_batch;

  const data::Corpus corpus = read_corpus(settings.spec, place.leads() ? &progress_out : nullptr);
  // Ranks slice one global batch: each must read the same text, wherever its copy lives.
  const std::uint64_t digest = corpus_digest(corpus);
  require_same_value(place, static_cast<std::int64_t>(digest), "command line", "--data",
                     "digest of the corpus text read (the same files, --max-corpus-bytes and --validation-fraction)");
  data::BatchLoader train_loader(corpus.train(), batch, length, spec.seed);
  data::BatchLoader validation_loader(corpus.validation(), batch, length, spec.seed);

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  openblas_set_num_threads(settings.spec.train.blas_threads > 0 ? settings.spec.train.blas_threads : cores);

  // Micro-batches (or the vertical schedule): the model computes each (layer, micro-batch) pass
  // where the schedule puts it; otherwise the whole batch at the step's first backward.
  const int micro_batched = micro_batched_passes(spec);
  if (micro_batched > 0 && rank_batch % micro_batched != 0)
    throw InputError("command line", "--micro-batches",
                     "a divisor of each rank's " + std::to_string(rank_batch) + " sequences, found " +
                         std::to_string(micro_batched));
  // Before any allocation: a model, a batch or an optimizer state past the machine's memory is an
  // InputError naming them, not a std::bad_alloc (CUDA keeps the activations on the GPU). Ranks
  // on one node share its memory.
  int on_my_node = 1;
  if (comm != nullptr && place.ranks > 1) {
    on_my_node = 0;
    for (int r = 0; r < place.ranks; ++r) on_my_node += comm->node_of(r) == comm->node_of(place.rank) ? 1 : 0;
  }
  check_train_memory(rank_config, /*activations_on_host=*/settings.spec.train.device != "cuda",
                     TrainOptimizer{spec.optimizer, spec.hp}, share_of_node(machine_memory(), on_my_node));
  // The same seed on every rank: replicas start from the same weights.
  const std::unique_ptr<TrainModel> model = make_train_model(settings.spec.train.device, rank_config, spec.seed);
  TimedModel timed(model->driver_model());
  out.parameters = model->parameter_count();
  out.tokens_per_step = static_cast<double>(batch) * static_cast<double>(length);
  const double step_flops = model->step_flops(rank_batch, length);  // this rank's

  const int warmup = spec.warmup_steps.value_or(0);
  out.warmup_steps = warmup;
  const int total = warmup + spec.steps;
  TraceSession trace(spec, 1, warmup + 1, total);
  if (step_comm == nullptr) step_comm = comm;
  RunPlatform platform(spec, DeviceTime{}, trace.sink(0), place.ranks > 1 ? step_comm : nullptr,
                       place.ranks > 1 ? side_comm : nullptr, /*use_gpu=*/settings.spec.train.device == "cuda");  // measured time
  // A GPU model with the run's accelerator on its GPU: the optimizer reads the gradients and
  // updates the weights where the model keeps them, unless the ranks' reduces take host memory
  // (MPI) or a sharded block's weights travel through it.
  ops::Device& device_math = platform.get().math(platform::Tier::device);
  const bool reduces_on_device = place.ranks == 1 || (step_comm->buffer_tier() == platform::Tier::device && !plan::shards_state(spec.parallelism));
  const bool tensors_on_device =
      !device_math.host_addressable() && reduces_on_device && model->keep_tensors_on(device_math);
  out.platform = model->device_description() +
                 (tensors_on_device ? ", weights and gradients handed to the optimizer in GPU memory"
                                    : ", weights and gradients handed to the optimizer in host memory") +
                 "; optimizer on the " + platform.description();
  out.host_workers = platform.host_workers();
  platform::Clock& clock = platform.get().clock();

  // Measured time: compute_s is the model's own timing (TimedModel), not a modelled duration.
  runtime::DriverOptions options = driver_options(spec, warmup, [](const platform::Cost&) { return 0.0; });
  options.schedule.data_parallel_ranks = place.ranks;
  runtime::StepDriver<float> driver(platform.get(), timed, spec.optimizer, spec.hp, options);
  start_run(driver, trace, 0, options.numerics_site, &out);
  out.blocks = driver.block_count();
  out.state_bytes = driver.state_bytes();
  out.capacity_bytes = {spec.device_budget, spec.host_budget, spec.nvme_budget};
  out.extra_columns = {"loss", "validation_loss", "tokens_per_s"};

  // Checkpoints: refused now rather than after the first N steps when the plan cannot have them.
  if (settings.spec.train.checkpoint_every > 0) prepare_checkpoints(settings, place, driver);
  const int first = settings.resume_from ? resume(settings, place, driver, train_loader, digest, warmup, total, out,
                                                   progress_out)
                                          : 1;

  std::ostringstream quiet;  // ranks other than 0 report nothing while they run
  Progress progress(place.leads() ? progress_out : quiet, "train", spec.progress, total);
  std::vector<data::TokenId> tokens;
  const std::size_t per_sequence = static_cast<std::size_t>(length) + 1;
  double first_loss = 0.0, last_loss = 0.0, first_measured_loss = 0.0;
  // The machine's own energy counters over the measured steps (RAPL, NVML), beside the model's.
  real::EnergyCounters counters;
  const int first_measured = std::max(first, warmup + 1);
  StepHooks hooks;
  hooks.before = [&](int t) {
    if (t == first_measured) counters.restart();
    train_loader.next(tokens);
    model->set_batch(rank_slice<data::TokenId>(tokens, batch, per_sequence, place), rank_batch, micro_batched);
  };
  hooks.after = [&](int t, const runtime::StepRecord& record) {  // compute_s: the model's own measurement
    const double loss = mean_over_ranks(place, model->last_loss(), "loss of step " + std::to_string(t));
    if (!std::isfinite(loss))
      throw NumericalError("asteria train: the training loss is " + exact_number(loss) + " at step " +
                           std::to_string(t) + " (try a smaller --lr)");
    if (t == first) first_loss = loss;
    if (t == first_measured) first_measured_loss = loss;
    last_loss = loss;
    std::optional<double> validation;
    const bool evaluates = t == total || (settings.spec.train.eval_every > 0 && t % settings.spec.train.eval_every == 0);
    const bool saves = settings.spec.train.checkpoint_every > 0 && t % settings.spec.train.checkpoint_every == 0;
    // fsdp: the whole model on every rank before it is read (every rank passes here at t).
    if (evaluates || saves) driver.gather_weights();
    if (evaluates) {
      const double eval_start = clock.now();
      validation = validation_loss(*model, validation_loader, settings.spec.train.eval_sequences);
      if (platform::ActivitySink* sink = trace.sink(0); sink != nullptr && sink->recording(t))
        sink->record({platform::issuer_track(0), "validation after step " + std::to_string(t),
                      {t, -1, -1, platform::ActivityRole::other}, {}, eval_start, clock.now(), true});
    }
    const double tokens_per_s = record.step_time_s > 0.0 ? static_cast<double>(rank_batch) * length / record.step_time_s : 0.0;
    out.extra_cells.push_back({exact_number(loss), validation ? exact_number(*validation) : "", exact_number(tokens_per_s)});
    if (validation) outcome.final_validation_loss = *validation;
    if (saves)
      save_train_checkpoint(settings, place, driver, train_loader, t, digest);
    return "loss " + significant(loss, 4) + (validation ? ", validation " + significant(*validation, 4) : "");
  };
  run_steps(driver, first, total, &progress, hooks, &out);
  const double measured_joules = counters.joules();
  const int measured_steps = total - first_measured + 1;
  if (first > total) {
    // Nothing ran in this process: the run's final validation loss from the restored weights
    // (fsdp: the whole model gathered first), and no training loss (null in summary.json).
    driver.gather_weights();
    outcome.final_validation_loss = validation_loss(*model, validation_loader, settings.spec.train.eval_sequences);
    first_loss = last_loss = std::numeric_limits<double>::quiet_NaN();
  }
  out.extra = {{"corpus", corpus.description()},
               {"train_bytes", corpus.train().size()},
               {"validation_bytes", corpus.validation().size()},
               {"device", settings.spec.train.device},
               {"batch", batch},
               {"rank_batch", rank_batch},
               {"rank", place.rank},
               {"ranks", place.ranks},
               {"sequence_length", length},
               {"first_loss", first_loss},
               {"final_loss", last_loss},
               {"final_validation_loss", outcome.final_validation_loss},
               {"step_flops", step_flops},
               {"tokens_per_s", out.summary.mean_step_s > 0.0 ? rank_batch * length / out.summary.mean_step_s : 0.0},
               {"model_flops_per_s", out.summary.mean_compute_s > 0.0 ? step_flops / out.summary.mean_compute_s : 0.0},
               {"energy_counters", counters.description()}};
  // Measured energy of this process's machine over the measured steps (null without a counter).
  const bool measured = counters.available() && measured_steps > 0 && out.summary.total_step_s > 0.0;
  out.extra.emplace_back("measured_energy_per_step_j",
                         measured ? nlohmann::ordered_json(measured_joules / measured_steps) : nlohmann::ordered_json());
  out.extra.emplace_back("measured_power_w", measured ? nlohmann::ordered_json(measured_joules / out.summary.total_step_s)
                                                      : nlohmann::ordered_json());
  // The training loss's drop over the measured steps per kJ the counters counted.
  out.extra.emplace_back("measured_loss_reduction_per_kj",
                         measured && measured_joules > 0.0
                             ? nlohmann::ordered_json((first_measured_loss - last_loss) / (measured_joules / 1e3))
                             : nlohmann::ordered_json());
  if (settings.resume_from) out.extra.emplace_back("resumed_from_step", first - 1);
  if (spec.optimizer == optim::OptimizerKind::soap) {
    out.extra.emplace_back("soap_second_moment",
                           spec.hp.soap_second_moment == optim::SecondMomentOnRefresh::rotate ? "rotate" : "permute");
    out.extra.emplace_back("soap_adam_before_first_basis", spec.hp.soap_adam_before_first_basis);
  }
  if (trace.enabled() && spec.out) {
    std::vector<runtime::LayerSpec> layers;
    for (std::size_t l = 0; l < timed.layer_count(); ++l) layers.push_back(timed.layer(l));
    // A replay simulates every rank.
    const TraceOrigin origin{"train", out.model, place.ranks,
                             {{"device", settings.spec.train.device},
                              {"blas_threads", std::to_string(settings.spec.train.blas_threads > 0
                                                                  ? settings.spec.train.blas_threads
                                                                  : cores)}}};
    out.trace = trace.write(rank_directory(*spec.out, place),
                            replay_metadata(spec, origin, layers, out.host_workers, warmup, 0, /*state_budgets=*/true,
                                            timed.pass()));
  }
  keep_final_state(*model, driver, plan::shards_state(spec.parallelism), outcome);
  out.wall_seconds = seconds_between(start, WallClock::now());
  return outcome;
}

}  // namespace asteria::cli

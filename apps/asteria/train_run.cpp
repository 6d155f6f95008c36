// One `asteria train` run: corpus, model, platform, the step driver in full-numerics mode, the
// training loop with periodic validation.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <thread>
#include <utility>

#include "apps/asteria/synth.hpp"
#include "apps/asteria/train.hpp"
#include "core/common/error.hpp"
#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"
#include "apps/asteria/train_models.hpp"
#include "core/real/trace.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/workload/model_config.hpp"
#include "traces/work_log_timeline.hpp"

namespace asteria::cli {

namespace {

using WallClock = std::chrono::steady_clock;
double seconds_between(WallClock::time_point a, WallClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void validate(const TrainSettings& s) {
  optim::validate(s.hp, "hyperparameters");
  if (s.steps < 1) throw InputError("asteria train", "--steps", "expected an integer >= 1");
  if (s.eval_every < 0) throw InputError("asteria train", "--eval-every", "expected an integer >= 0");
  if (s.eval_sequences < 1) throw InputError("asteria train", "--eval-sequences", "expected an integer >= 1");
  if (s.batch < 0) throw InputError("asteria train", "--batch", "expected an integer >= 1 (0: the config's)");
  if (s.staleness < 0) throw InputError("asteria train", "--staleness", "expected an integer >= 0");
  if (s.lookahead < 0) throw InputError("asteria train", "--lookahead", "expected an integer >= 0");
  if (s.host_workers < 1) throw InputError("asteria train", "--host-workers", "expected an integer >= 1");
  if (s.blas_threads < 0) throw InputError("asteria train", "--blas-threads", "expected an integer >= 0 (0: all cores)");
  if (!(s.validation_fraction > 0.0 && s.validation_fraction < 1.0))
    throw InputError("asteria train", "--validation-fraction", "expected a fraction in (0, 1)");
  if (s.device != "cpu" && s.device != "cuda")
    throw InputError("asteria train", "--device", "expected cpu or cuda, found '" + s.device + "'");
  if (s.placement == runtime::PlacementPolicy::nvme && !s.nvme_dir)
    throw InputError("asteria train", "--placement", "nvme placement needs --nvme-dir DIR");
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
  void compute_gradient(std::size_t l, runtime::Step t) override {
    const WallClock::time_point start = WallClock::now();
    inner_.compute_gradient(l, t);
    seconds_ += seconds_between(start, WallClock::now());
  }
  double take_seconds() noexcept { return std::exchange(seconds_, 0.0); }

 private:
  runtime::TrainingModel<float>& inner_;
  double seconds_ = 0.0;  // written by the device stream's thread, read after the step has drained it
};

double validation_loss(TrainModel& model, data::BatchLoader& loader, int max_sequences) {
  loader.rewind_in_order();
  std::vector<data::TokenId> tokens;
  double weighted = 0.0;
  int counted = 0;
  int sequences = 0;
  while (counted < max_sequences) {
    const bool more = loader.next_in_order(tokens, sequences);
    const int use = std::min(sequences, max_sequences - counted);
    if (use > 0) {
      const std::size_t per = static_cast<std::size_t>(loader.sequence_length()) + 1;
      weighted += model.loss(std::span<const data::TokenId>(tokens.data(), per * static_cast<std::size_t>(use)), use) * use;
      counted += use;
    }
    if (!more) break;
  }
  if (counted == 0)
    throw InputError("corpus", "validation", "expected at least one validation window of sequence_length + 1 bytes");
  return weighted / counted;
}

class Progress {
 public:
  Progress(std::ostream& out, bool enabled) : out_(out), enabled_(enabled), start_(WallClock::now()), last_(start_) {}
  void step(const TrainStep& s, int total) {
    if (!enabled_) return;
    const WallClock::time_point now = WallClock::now();
    if (seconds_between(start_, now) < 1.0 || (seconds_between(last_, now) < 1.0 && s.record.step != total)) return;
    last_ = now;
    char line[200];
    std::snprintf(line, sizeof line, "train: step %lld/%d, loss %.4f%s, %.0f ms/step, %.1f s\n",
                  static_cast<long long>(s.record.step), total, s.loss,
                  s.validation_loss ? (", validation " + std::to_string(*s.validation_loss)).c_str() : "",
                  s.record.step_time_s * 1e3, seconds_between(start_, now));
    out_ << line << std::flush;
  }

 private:
  std::ostream& out_;
  bool enabled_;
  WallClock::time_point start_;
  WallClock::time_point last_;
};

}  // namespace

TrainOutcome run_train(const TrainSettings& settings, std::ostream& progress_out) {
  validate(settings);
  const WallClock::time_point start = WallClock::now();
  TrainOutcome out;
  out.settings = settings;

  workload::ModelConfig config = workload::find_model_config(settings.model);
  if (settings.batch > 0) config.micro_batch = settings.batch;
  if (config.vocab != data::kByteVocabulary)
    throw InputError(settings.model, "vocab",
                     "expected " + std::to_string(data::kByteVocabulary) + " (byte-level tokens), found " +
                         std::to_string(config.vocab));
  out.model_name = config.name;
  const int batch = static_cast<int>(config.micro_batch);
  const int length = static_cast<int>(config.sequence_length);

  data::CorpusOptions corpus_options;
  corpus_options.validation_fraction = settings.validation_fraction;
  corpus_options.seed = settings.seed;
  corpus_options.max_bytes = settings.max_corpus_bytes;
  std::filesystem::path root;
  if (settings.data) {
    root = *settings.data;
  } else {
    root = data::default_corpus_dir();
    corpus_options.extensions = data::default_corpus_extensions();
  }
  const data::Corpus corpus = data::Corpus::from_directory(root, corpus_options);
  out.corpus = corpus.description();
  out.train_bytes = corpus.train().size();
  out.validation_bytes = corpus.validation().size();
  data::BatchLoader train_loader(corpus.train(), batch, length, settings.seed);
  data::BatchLoader validation_loader(corpus.validation(), batch, length, settings.seed);

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  openblas_set_num_threads(settings.blas_threads > 0 ? settings.blas_threads : cores);

  const std::unique_ptr<TrainModel> model = make_train_model(settings.device, config, settings.seed);
  TimedModel timed(model->driver_model());
  out.parameters = model->parameter_count();
  out.step_flops = model->step_flops(batch, length);
  out.device = model->device_description();

  SynthSettings platform_settings;
  platform_settings.device_mode = real::DeviceMode::cpu;
  platform_settings.device_budget = settings.device_budget;
  platform_settings.host_budget = settings.host_budget;
  platform_settings.nvme_budget = settings.nvme_budget;
  platform_settings.nvme_dir = settings.nvme_dir;
  platform_settings.host_threads = settings.host_workers;
  platform_settings.record_trace = settings.trace;
  SynthPlatform platform(platform_settings);
  platform::Clock& clock = platform.get().clock();  // the work records' time base

  runtime::DriverOptions o;
  o.mode = runtime::NumericsMode::full;
  o.warmup_steps = 0;  // every training step counts
  o.store.policy = settings.placement;
  o.store.lookahead = settings.lookahead;
  o.service = runtime::service_options(settings.hp, settings.staleness, runtime::PublishPolicy::deterministic);
  o.device_seconds = [](const platform::Cost&) { return 0.0; };  // measured, not modelled

  runtime::StepDriver<float> driver(platform.get(), timed, settings.optimizer, settings.hp, o);
  out.blocks = driver.block_count();
  out.state_bytes = driver.state_bytes();

  Progress progress(progress_out, settings.progress);
  std::vector<data::TokenId> tokens;
  std::vector<runtime::StepRecord> records;
  std::vector<traces::Slice> step_slices;  // the "steps" track of the trace
  for (int t = 1; t <= settings.steps; ++t) {
    train_loader.next(tokens);
    model->set_batch(tokens, batch);
    TrainStep step;
    const double step_start = clock.now();
    step.record = driver.run_step();
    if (settings.trace) step_slices.push_back({"steps", "step " + std::to_string(t), "step", step_start, clock.now()});
    step.model_s = timed.take_seconds();
    step.record.compute_s = step.model_s;
    step.record.visible_optimizer_s = std::max(0.0, step.record.step_time_s - step.model_s);
    step.loss = model->last_loss();
    step.tokens = static_cast<double>(batch) * length;
    if (!std::isfinite(step.loss))
      throw NumericalError("asteria train: the training loss is " + std::to_string(step.loss) + " at step " +
                           std::to_string(t) + " (try a smaller --lr)");
    const bool evaluate = t == settings.steps || (settings.eval_every > 0 && t % settings.eval_every == 0);
    if (evaluate) {
      const double eval_start = clock.now();
      step.validation_loss = validation_loss(*model, validation_loader, settings.eval_sequences);
      if (settings.trace)
        step_slices.push_back(
            {"steps", "validation after step " + std::to_string(t), "validation", eval_start, clock.now()});
    }
    records.push_back(step.record);
    out.steps.push_back(step);
    progress.step(out.steps.back(), settings.steps);
  }
  driver.finish();
  if (const real::WorkLog* log = platform.work_log()) {
    // After finish(): every refresh has ended, so the log holds the whole run.
    out.timeline.emplace();
    traces::add_work_records(log->records(), *out.timeline);
    for (traces::Slice& s : step_slices) out.timeline->add_slice(std::move(s));
    out.trace_dropped_records = log->dropped();
  }
  out.summary = runtime::summarize(records);
  out.refresh_failures = driver.service().totals().failures;
  out.final_validation_loss = *out.steps.back().validation_loss;
  for (std::size_t i = 0; i < model->tensor_count(); ++i) {
    const workload::WeightSpec& w = model->tensor(i);
    out.tensor_names.push_back(w.name);
    out.tensor_shapes.push_back(w.order == 1 ? std::vector<std::int64_t>{w.cols} : std::vector<std::int64_t>{w.rows, w.cols});
    out.tensors.push_back(model->parameters(i));
  }
  out.wall_seconds = seconds_between(start, WallClock::now());
  return out;
}

}  // namespace asteria::cli

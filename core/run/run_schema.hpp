#pragma once
// Every setting of a run, described once (as hwmodels/profile_schema.hpp describes a profile):
// its name, value type and range (the codec), help, the verbs that take it, whether a trace
// records it, whether a resumed run may change it, whether data-parallel ranks may differ in it.
// A visitor V provides
//   template <class T> void value(const Setting&, T& value, const Codec<T>& codec);
//   void flag(const Setting&, bool& value, bool when_given);  // a switch: given sets when_given
// The command-line options, their reader, the trace's recorded arguments and the checks of
// resumed and data-parallel runs are such visitors; a setting added here reaches all of them.
#include <cstdint>
#include <limits>

#include "core/common/error.hpp"
#include "core/run/run_config.hpp"
#include "core/run/setting.hpp"
#include "core/run/setting_codecs.hpp"

namespace asteria::run {

// The smallest trace bound: a trace's header (settings, the model's layers) takes kilobytes.
inline constexpr std::size_t kMinTraceBytes = std::size_t{64} << 10;

namespace optimizers {
using optim::OptimizerKind;
constexpr std::uint8_t of(OptimizerKind kind) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(kind)); }
constexpr std::uint8_t kEvery = of(OptimizerKind::adamw) | of(OptimizerKind::shampoo) | of(OptimizerKind::soap) |
                                of(OptimizerKind::kl_shampoo) | of(OptimizerKind::muon);
constexpr std::uint8_t kMatrixMethods = of(OptimizerKind::shampoo) | of(OptimizerKind::soap) | of(OptimizerKind::kl_shampoo);
constexpr std::uint8_t kSecondMoment = kMatrixMethods | of(OptimizerKind::adamw);
constexpr std::uint8_t kShampoo = of(OptimizerKind::shampoo);
constexpr std::uint8_t kSoap = of(OptimizerKind::soap);
constexpr std::uint8_t kMuon = of(OptimizerKind::muon);
}  // namespace optimizers

// The optimizer's hyperparameters. None has a command-line default: one not given keeps the
// optimizer's own (verb_hyperparameters). Which optimizers read each follows their code
// (core/optim): Muon's matrices keep no second moment and its vectors run AdamW with fixed betas
// and eps; AdamW and Muon keep matrices whole and never refresh; shampoo-beta is SOAP's and
// KL-Shampoo's statistics decay (Shampoo's is beta2).
template <class V>
void describe(V& v, optim::Hyperparameters& hp) {
  using namespace optimizers;
  const auto number = codec::number();
  const auto boolean = codec::boolean();
  auto s = [](std::string_view name, std::string_view help, std::uint8_t readers) {
    Setting setting{name, "X", help};
    setting.optimizers = readers;
    return setting;
  };
  // The blocks' shapes follow these: a plan file's blocks hold for its values.
  auto shapes_blocks = [](Setting setting) {
    setting.planned = true;
    return setting;
  };
  v.value(s("lr", "learning rate", kEvery), hp.lr, number);
  v.value(s("beta1", "first-moment (momentum) decay, in [0, 1)", kEvery), hp.beta1, number);
  v.value(s("beta2", "second-moment / statistics decay, in [0, 1] (Shampoo: 1 = AdaGrad sums)", kSecondMoment),
          hp.beta2, number);
  v.value(s("eps", "epsilon (Adam denominator; Shampoo: added to the factors before the root)", kSecondMoment), hp.eps,
          number);
  v.value(s("weight-decay", "decoupled weight decay", kEvery), hp.weight_decay, number);
  v.value(s("precondition-frequency", "steps between preconditioner refreshes (>= 1)", kMatrixMethods),
          hp.precondition_frequency, codec::integer(std::numeric_limits<int>::min()));
  v.value(shapes_blocks(s("max-precond-dim", "largest block side; larger dimensions are split", kMatrixMethods)),
          hp.max_precond_dim,
          codec::long_integer(std::numeric_limits<std::int64_t>::min()));
  v.value(s("shampoo-beta", "SOAP / KL-Shampoo statistics decay (< 0: use beta2)", kSoap | of(OptimizerKind::kl_shampoo)),
          hp.shampoo_beta, number);
  v.value(s("start-preconditioning-step",
            "Shampoo: first step that uses the roots; before it the graft direction alone (-1: precondition-frequency)",
            kShampoo),
          hp.start_preconditioning_step, codec::integer(std::numeric_limits<int>::min()));
  v.value(s("exponent-override", "Shampoo: root order p on every side, X^(-1/p) (0: 2 x tensor order)", kShampoo),
          hp.exponent_override, number);
  v.value(s("root-method", "Shampoo inverse root: eigen | coupled-newton", kShampoo), hp.root_method,
          codec::words<optim::RootMethod>(
              {{"eigen", optim::RootMethod::eigen}, {"coupled-newton", optim::RootMethod::coupled_newton}}));
  v.value(s("grafting", "Shampoo: Adam grafting, true | false", kShampoo), hp.grafting, boolean);
  v.value(s("graft-beta2", "Shampoo: second-moment decay of the Adam graft", kShampoo), hp.graft_beta2, number);
  v.value(s("graft-eps", "Shampoo: epsilon of the Adam graft", kShampoo), hp.graft_eps, number);
  v.value(shapes_blocks(s("precondition-vectors",
                          "Shampoo: one-sided Shampoo (root -1/2) on vectors, as Distributed Shampoo, true | false "
                          "(default: AdamW)",
                          kShampoo)),
          hp.precondition_vectors, boolean);
  v.value(shapes_blocks(s("merge-small-dims",
                          "Shampoo: a tensor of at most max-precond-dim values is one vector (dimensions of 1 "
                          "dropped), as Distributed Shampoo, true | false",
                          kShampoo)),
          hp.merge_small_dims, boolean);
  v.value(s("soap-second-moment",
            "SOAP: the second moment at a new eigenbasis, permute (the reference's) | rotate (with the momentum)", kSoap),
          hp.soap_second_moment,
          codec::words<optim::SecondMomentOnRefresh>({{"permute", optim::SecondMomentOnRefresh::permute},
                                                      {"rotate", optim::SecondMomentOnRefresh::rotate}}));
  v.value(s("soap-adam-before-first-basis",
            "SOAP: plain Adam while the first eigenbasis is pending (S > 0), true | false (default: no update)", kSoap),
          hp.soap_adam_before_first_basis, boolean);
  v.value(s("newton-schulz-steps", "Muon: Newton-Schulz iterations", kMuon), hp.newton_schulz_steps,
          codec::integer(std::numeric_limits<int>::min()));
  v.value(s("nesterov", "Muon: Nesterov momentum, true | false", kMuon), hp.nesterov, boolean);
  v.value(s("aux-adamw-lr", "Muon: learning rate of the AdamW used for tensors of order <= 1", kMuon), hp.aux_adamw_lr,
          number);
  v.value(s("non-finite-policy", "a block whose gradient holds NaN/Inf: skip (left untouched, counted) | error (stop)",
            kEvery),
          hp.non_finite,
          codec::words<optim::NonFinitePolicy>(
              {{"skip", optim::NonFinitePolicy::skip}, {"error", optim::NonFinitePolicy::error}}));
  v.value(s("max-consecutive-non-finite", "under skip: more in a row for one block is an error", kEvery),
          hp.max_consecutive_non_finite, codec::integer(std::numeric_limits<int>::min()));
  v.value(s("max-consecutive-refresh-failures",
            "failed preconditioner refreshes tolerated in a row per block (the previous one is kept)", kMatrixMethods),
          hp.max_consecutive_refresh_failures, codec::integer(std::numeric_limits<int>::min()));
}

// train's own settings. Not recorded: where the corpus, checkpoints and evaluations go change
// nothing a replay simulates; the BLAS threads and the device do. The corpus, its evaluation and
// the BLAS threads are sim's too, where it trains on the corpus (--gradients corpus).
template <class V>
void describe_train(V& v, TrainConfig& t) {
  const Verbs train = verb_bit(RunVerb::train);
  const Verbs corpus_verbs = train | verb_bit(RunVerb::sim);
  auto setting = [&](std::string_view name, std::string_view value_name, std::string_view help, bool recorded,
                     Verbs verbs = verb_bit(RunVerb::train)) {
    return Setting{name, value_name, help, verbs, recorded};
  };
  Setting data = setting("data", "DIR", "directory of text files (default: the built-in corpus)", false, corpus_verbs);
  // Its content is what must not change: the ranks and a resumed run compare the corpus's
  // digest, so a copy at another path (a node's own disk, a moved folder) is the same corpus.
  data.resumable = data.per_rank = true;
  v.value(data, t.data, codec::path());
  v.value(setting("validation-fraction", "F", "share of the corpus held out, in (0, 1)", false, corpus_verbs), t.validation_fraction,
          codec::number());
  v.value(setting("max-corpus-bytes", "SIZE", "read at most this much text (0: all)", false, corpus_verbs), t.max_corpus_bytes,
          codec::size(0));
  v.value(setting("device", "KIND", "cpu | cuda", true), t.device,
          codec::words<std::string>({{"cpu", "cpu"}, {"cuda", "cuda"}}));
  Setting eval_every = setting("eval-every", "N", "validation loss every N steps (0: at the end)", false, corpus_verbs);
  eval_every.resumable = true;
  v.value(eval_every, t.eval_every, codec::integer(0));
  v.value(setting("eval-sequences", "N", "validation windows per evaluation", false, corpus_verbs), t.eval_sequences,
          codec::integer(1));
  v.value(setting("blas-threads", "N", "OpenBLAS threads (0: all cores)", true, corpus_verbs), t.blas_threads, codec::integer(0));
  Setting every = setting("checkpoint-every", "N", "save the whole training state after every N-th step (0: never)", false);
  every.resumable = true;
  v.value(every, t.checkpoint_every, codec::integer(0));
  Setting dir = setting("checkpoint-dir", "DIR", "where checkpoints go (default: the --resume directory, else "
                        "<--out>/resume)", false);
  dir.resumable = dir.per_rank = true;  // a node's own disk
  v.value(dir, t.checkpoint_dir, codec::path());
  Setting resume = setting("resume", "DIR",
                           "continue the run whose checkpoints are in DIR from its newest loadable one, with its settings",
                           false);
  resume.resumable = resume.per_rank = true;
  v.value(resume, t.resume, codec::path());
}

// sim's simulated machine. Recorded: a replay of a sim trace simulates the same machine.
template <class V>
void describe_sim(V& v, SimConfig& m) {
  const Verbs sim = verb_bit(RunVerb::sim);
  // A plan for data-parallel ranks places each rank's share: it holds for that many ranks.
  Setting units{"units", "N", "GPUs simulated, filling nodes of the profile in order (default: 1, or all of --nodes)", sim};
  units.planned = true;
  v.value(units, m.units, codec::optional_integer(1));
  Setting nodes{"nodes", "N", "whole nodes simulated: N x the profile's units per node (with --units, they must agree)",
                sim};
  nodes.planned = true;
  v.value(nodes, m.nodes, codec::optional_integer(1));
  v.value(Setting{"gradients", "SOURCE",
                  "where each step's gradients come from: synthetic (the workload's, any model) | corpus (the "
                  "model's own forward and backward on --data's text, every unit training its slice of the global "
                  "batch: loss and validation loss against simulated time; byte-level GPT configs, --numerics values)",
                  sim},
          m.gradients,
          codec::words<SimGradients>({{"synthetic", SimGradients::synthetic}, {"corpus", SimGradients::corpus}}));
  v.value(Setting{"simulated-nodes", "K",
                  "representative ranks: only the first K nodes run, the other units mirror them (exact when every "
                  "rank runs the same work: data-free, --refresh-sharing replicated; faster at scale)",
                  sim},
          m.simulated_nodes, codec::optional_integer(1));
  v.flag(Setting{"coalesce-ring-steps", "",
                 "run each collective's ring steps as one transfer (approximate: faster with many nodes)", sim},
         m.coalesce_ring_steps, true);
  v.value(Setting{"collective-algorithm", "NAME",
                  "how collectives move their bytes: auto (NCCL's choice per call: ring or tree, and the protocol, of "
                  "least predicted time) | ring | tree | hierarchical (intra-node, then rings between nodes)",
                  sim},
          m.collective_algorithm,
          codec::words<std::string>(
              {{"auto", "auto"}, {"ring", "ring"}, {"tree", "tree"}, {"hierarchical", "hierarchical"}}));
  v.flag(Setting{"collective-flows", "",
                 "run every collective's flows, even one that runs alone on its links, whose time is then predicted "
                 "exactly and taken without them (the default; a check, slow at scale)",
                 sim},
         m.predicted_collectives, false);
  v.flag(Setting{"concurrent-collectives", "",
                 "a collective starts once its members have called it, alongside the group's earlier ones (they "
                 "share links); default: each group runs its collectives one at a time, in call order, as NCCL does "
                 "on one stream",
                 sim},
         m.serial_collectives, false);
}

// synth's synthetic stack and device model. Not recorded: a trace keeps the layers with their
// costs, which is what these settings make; a replay simulates a profile's device instead.
template <class V>
void describe_synth(V& v, SynthConfig& s) {
  auto setting = [](std::string_view name, std::string_view value_name, std::string_view help) {
    return Setting{name, value_name, help, verb_bit(RunVerb::synth), false};
  };
  v.value(setting("shape", "LIST", "layer shapes instead of --layers/--rows/--cols: 512x512,1024x256,..."), s.shapes,
          codec::shapes());
  v.value(setting("layers", "N", "layers of the stack (default: 8)"), s.layers, codec::optional_integer(1));
  v.value(setting("rows", "R", "rows of every layer's weight (default: 512)"), s.rows, codec::optional_long_integer(1));
  v.value(setting("cols", "C", "cols of every layer's weight (default: 512)"), s.cols, codec::optional_long_integer(1));
  v.value(setting("layer-flops", "F", "forward+backward flops of one layer per step"), s.layer_flops,
          codec::optional_non_negative_number());
  v.value(setting("step-seconds", "S",
                  "modelled forward+backward seconds of a step, split over layers by weight count (default: 0.1)"),
          s.step_seconds, codec::optional_positive_number());
  v.value(setting("device-tflops", "X", "device model without --hw: FLOP/s in units of 1e12 (H100 FP32 by default)"),
          s.device_tflops, codec::positive_number());
  v.value(setting("device-bandwidth", "X", "device model: TB/s (0: not modelled)"), s.device_bandwidth_tbps,
          codec::non_negative_number());
  v.value(setting("launch-latency-us", "X", "device model: us per kernel"), s.launch_latency_us,
          codec::non_negative_number());
  v.value(setting("fake-host-gflops", "X", "--time simulated: refresh speed of one host worker, GFLOP/s"),
          s.fake_host_gflops, codec::positive_number());
  v.value(setting("gradient-rank", "R", "rank of the gradients' structure"), s.gradient_rank, codec::integer(1));
  v.value(setting("gradient-noise", "X", "gradient noise level"), s.gradient_noise, codec::non_negative_number());
}

// The defaults the hyperparameters start from: a run setting, and asteria optim's too.
template <class V>
void describe_preset(V& v, optim::HyperparameterPreset& preset) {
  v.value(Setting{"preset", "NAME",
                  "the hyperparameters' defaults: asteria (each optimizer's, README) | distributed-shampoo (Shampoo "
                  "as Distributed Shampoo's constructor: no grafting, one-sided Shampoo on vectors, merged small "
                  "dimensions, refresh every step, blocks of 1024)"},
          preset, codec::named({optim::HyperparameterPreset::asteria, optim::HyperparameterPreset::distributed_shampoo}));
}

// The run's own settings (the hyperparameters are described above, apart: they follow the
// optimizer, which must be known first).
template <class V>
void describe_run(V& v, RunConfig& c) {
  constexpr Verbs kAll = kEveryVerb;
  // Not recorded: where files go and what the console shows change nothing of the run.
  auto output = [](Setting s) {
    s.recorded = false;
    s.output = true;
    return s;
  };
  auto resumable = [](Setting s) {
    s.resumable = true;
    return s;
  };
  // The step's schedule: a plan file's prediction holds for it.
  auto scheduled = [](Setting s) {
    s.planned = true;
    return s;
  };
  auto names_file = [](Setting s) {
    s.file_value = true;
    return s;
  };
  v.value(names_file(Setting{"hw", "PROFILE", "hardware profile name or path (modelled and simulated time; train "
                             "measures the machine it runs on and takes none)", kAll, false}),
          c.hw, codec::text());
  v.value(names_file(Setting{"model", "MODEL", "model config name or path (synth: default the --shape stack)", kAll,
                             false}),
          c.model, codec::text());
  v.value(Setting{"optimizer", "NAME", "adamw | shampoo | soap | kl-shampoo | muon"}, c.optimizer,
          codec::name<optim::OptimizerKind>([](const std::string& t, const std::string& o) { return optim::parse_optimizer_kind(t, o); },
                                            [](optim::OptimizerKind k) { return optim::to_string(k); }));
  describe_preset(v, c.preset);
  v.value(Setting{"placement", "POLICY",
                  "optimizer state placement: device | host | tiered | nvme (planned: with --placement-file)"},
          c.placement,
          codec::named({runtime::PlacementPolicy::device, runtime::PlacementPolicy::host, runtime::PlacementPolicy::tiered,
                        runtime::PlacementPolicy::nvme, runtime::PlacementPolicy::planned}));
  v.value(names_file(Setting{"placement-file", "FILE",
                             "place and update every optimizer block as this plan (asteria plan --out FILE) says; its "
                             "schedule settings (and model, optimizer) apply unless given here"}),
          c.placement_file, codec::path());
  v.value(Setting{"lookahead", "N", "uses ahead the store prefetches state"}, c.lookahead, codec::integer(0));
  v.value(Setting{"staleness", "S", "steps a refresh may be published after the synchronous schedule (0: synchronous)"},
          c.staleness, codec::integer(0));
  v.value(Setting{"publish", "POLICY",
                  "deterministic (results depend on S only) | opportunistic (newest finished refresh within S)"},
          c.publish,
          codec::named({runtime::PublishPolicy::deterministic, runtime::PublishPolicy::opportunistic}));
  v.value(Setting{"refresh-on", "WHERE",
                  "host (refreshes on the host workers, published under the staleness bound) | device (on the device "
                  "stream in order with the step, on the device's solver: cuSOLVER on a GPU; the synchronous "
                  "baseline, with --staleness 0)"},
          c.refresh_on,
          codec::named({runtime::RefreshSite::host, runtime::RefreshSite::device}));
  v.value(Setting{"refresh-sharing", "HOW",
                  "data-parallel ranks: owners (each block's refreshes run on one rank, chosen by cost, and the results "
                  "travel hierarchically) | replicated (every rank runs every refresh)"},
          c.share_refreshes, codec::either("owners", "replicated"));
  v.value(Setting{"sync-period", "K",
                  "data-parallel ranks: each refresh result is sent at the first step end on a multiple of K from its "
                  "snapshot on (as soon as its owner has it), at the latest at the last step end before it is due"},
          c.sync_period, codec::integer(1));
  v.value(Setting{"straggler", "RANK:FACTOR",
                  "data-parallel ranks: rank RANK's host workers (its refreshes) run FACTOR (>= 1) times slower"},
          c.straggler, codec::straggler());
  v.value(scheduled(Setting{"parallelism", "HOW",
                            "data-parallel ranks: ddp (all replicated) | zero1 (each block's optimizer state, "
                            "refreshes and update on one rank; new weights gathered after the updates) | zero2 (zero1, "
                            "and each gradient reduce-scattered to its owner) | fsdp (zero2, and weights sharded: a "
                            "layer's gathered before each use)"}),
          c.parallelism,
          codec::named({plan::Parallelism::ddp, plan::Parallelism::zero1, plan::Parallelism::zero2,
                        plan::Parallelism::fsdp}));
  v.value(Setting{"reduce-dtype", "DTYPE",
                  "data-parallel ranks: what gradients travel as in their reduces and reduce-scatters: fp32 | bf16 "
                  "(half the bytes; the ranks' bf16 values summed in fp32 and rounded once)"},
          c.reduce_dtype, codec::named({platform::DType::fp32, platform::DType::bf16}));
  v.value(Setting{"bucket-size", "SIZE",
                  "data-parallel ranks: gradients are all-reduced in buckets of at least SIZE (consecutive layers in "
                  "the order their gradients complete, as DDP's bucket_cap_mb); 0: one reduce per layer"},
          c.bucket_bytes, codec::size(0));
  v.value(scheduled(Setting{"schedule", "ORDER",
                  "horizontal (micro-batch after micro-batch) | vertical (all micro-batches of a layer before the next, "
                  "in snake order: GreedySnake)"}),
          c.schedule,
          codec::named({plan::ScheduleOrder::horizontal, plan::ScheduleOrder::vertical}));
  v.value(scheduled(Setting{"micro-batches", "M",
                            "micro-batches per step (gradient accumulation; the step's batch is split evenly)"}),
          c.micro_batches, codec::integer(1));
  v.value(scheduled(Setting{"defer-fraction", "ALPHA",
                            "fraction of the optimizer update (by weight bytes) deferred into the next step's forward, "
                            "in [0, 1)"}),
          c.defer_fraction, codec::fraction_below_one());
  v.value(scheduled(Setting{"prefetch-depth", "N",
                            "runs of layer visits ahead that a layer's weights are fetched (resting off the device) or "
                            "gathered from their owners (--parallelism fsdp), >= 1"}),
          c.prefetch_depth, codec::integer(1));
  v.value(scheduled(Setting{"reshard", "WHEN",
                            "--parallelism fsdp: after-use (a unit's gathered weights are dropped after each stretch "
                            "of visits of its layers, so each micro-batch gathers again: FSDP's default) | after-step "
                            "(kept until the step ends: one gather a unit a step, the whole model's weights on the "
                            "device)"}),
          c.reshard_after_use, codec::either("after-use", "after-step"));
  const auto tier = codec::named({platform::Tier::device, platform::Tier::host, platform::Tier::nvme});
  v.value(scheduled(Setting{"weights-on", "TIER",
                            "where the model's weights rest between uses: device | host | nvme (fetched before each use)"}),
          c.model_tiers.weights, tier);
  v.value(scheduled(Setting{"gradients-on", "TIER", "where gradients are accumulated: device | host | nvme"}),
          c.model_tiers.gradients, tier);
  v.value(scheduled(Setting{"checkpoints-on", "TIER",
                            "where activation checkpoints rest: device | host | nvme (off the device implies "
                            "--recompute-activations)"}),
          c.model_tiers.checkpoints, tier);
  v.flag(scheduled(Setting{"recompute-activations", "",
                           "activation checkpointing: each backward recomputes its layer's forward"}),
         c.recompute_activations, true);
  v.value(Setting{"host-workers", "N", "refresh workers per unit (0: the cores but one, by the profile's threads per worker)"},
          c.host_workers, codec::integer(0));
  v.value(Setting{"batch", "N",
                  "sequences per step on each unit (GPU, data-parallel rank), split over --micro-batches (0: the model "
                  "config's micro_batch); the global batch is N x units (synth: with --model)"},
          c.batch, codec::integer(0));
  v.value(resumable(Setting{"steps", "N", "measured steps"}), c.steps, codec::integer(1));
  v.value(Setting{"warmup-steps", "N",
                  "steps run first and left out of the summary (train: default 0; sim, synth: default until the first "
                  "refresh is published, so measured steps are steady state)"},
          c.warmup_steps, codec::optional_integer(0));
  v.value(Setting{"seed", "N", "seed of weights, gradients, batches"}, c.seed, codec::seed());
  v.value(Setting{"numerics", "WHAT",
                  "values (every op computes) | refresh (only refreshes compute after the warm-up) | shapes (nothing does)",
                  kAll, false},
          c.numerics,
          codec::named({platform::Numerics::values, platform::Numerics::refresh, platform::Numerics::shapes}));
  v.value(Setting{"time", "SOURCE",
                  "modelled (real clock, emulated device kernels) | measured (real clock, real kernels) | simulated "
                  "(the discrete-event backend); sim: simulated only, train: measured only",
                  kAll, false},
          c.time,
          codec::name<platform::TimeSource>(
              [](const std::string& t, const std::string& o) { return platform::parse_time_source(t, "command line", o); },
              [](platform::TimeSource s) { return platform::to_string(s); }));
  v.value(resumable(output(Setting{"out", "DIR",
                                   "write steps.csv, plan.txt, summary.json (and trace.csv, trace.json) here; checked "
                                   "before the run"})),
          c.out, codec::path());
  v.flag(resumable(output(Setting{"overwrite", "", "replace the results of an earlier run in --out (refused otherwise)"})),
         c.overwrite, true);
  v.flag(resumable(output(Setting{"trace", "",
                                  "record the executed plan: trace.csv (native) and trace.json (Chrome/Perfetto) in --out"})),
         c.trace.enabled, true);
  v.value(output(Setting{"trace-steps", "FIRST:LAST",
                         "steps the trace keeps (default: the first measured steps that fit --trace-max-bytes)"}),
          c.trace.steps, codec::step_range());
  v.value(output(Setting{"trace-units", "N",
                         "units (GPUs) the trace keeps: 0..N-1 (default: all, or as many as one step fits in "
                         "--trace-max-bytes)"}),
          c.trace.units, codec::optional_integer(1));
  v.value(output(Setting{"trace-max-bytes", "SIZE",
                         "bound on each trace file, at least 64KiB; records past it are counted, not kept"}),
          c.trace.max_bytes, codec::size(kMinTraceBytes));
  Setting progress = resumable(output(Setting{"no-progress", "", "no progress lines on stderr"}));
  progress.per_rank = true;
  v.flag(progress, c.progress, false);
  v.value(Setting{"device-budget", "SIZE", "device tier budget", kBudgetVerbs}, c.device_budget, codec::size());
  v.value(Setting{"host-budget", "SIZE", "host tier budget", kBudgetVerbs}, c.host_budget, codec::size());
  v.value(Setting{"nvme-budget", "SIZE", "NVMe tier budget", kBudgetVerbs}, c.nvme_budget, codec::size(0));
  Setting nvme_dir = output(Setting{"nvme-dir", "DIR", "NVMe tier files go here (real backend)", kBudgetVerbs});
  nvme_dir.per_rank = true;  // a node's own disk
  v.value(nvme_dir, c.nvme_dir, codec::path());
  describe_train(v, c.train);
  describe_sim(v, c.sim);
  describe_synth(v, c.synth);
}

}  // namespace asteria::run

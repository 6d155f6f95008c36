// asteria train: a GPT-style language model trained through the runtime on a text corpus.
#include <ostream>
#include <string>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/synth_parse.hpp"
#include "apps/asteria/train.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"

namespace asteria::cli {
namespace {

constexpr std::string_view kAbout =
    "Trains a decoder-only transformer (byte-level, vocabulary 256) on a directory of text files, with the\n"
    "optimizer state in the runtime's tiered store and preconditioner refreshes on host workers under the\n"
    "staleness bound. The model's forward and backward run on the device stream (a CPU thread with\n"
    "--device cpu, multithreaded OpenBLAS GEMMs; the GPU with --device cuda, the optimizer then on the\n"
    "host); the refreshes on --host-workers threads.\n"
    "\n"
    "Without --data, the corpus is the Python standard library sources of this machine (/usr/lib/python3.*).";

constexpr std::string_view kDetails =
    "Models: experiments/models/*.yaml (gpt-mini, tiny, ...) or a path; vocab must be 256, kv_heads = heads.\n"
    "Files written with --out DIR:\n"
    "  steps.csv      one row per step: loss, validation_loss (on evaluation steps), step_time_s, model_s\n"
    "                 (forward + backward), visible_optimizer_s, waits, tokens_per_s, tier bytes, staleness\n"
    "  summary.json   settings, first/final loss, final validation loss, p50/p99 step time, throughput\n"
    "  checkpoint/    the final parameters: one .npy per tensor and manifest.json\n"
    "  trace.json     with --trace: Chrome trace (open in Perfetto) of the device stream, host workers,\n"
    "                 copies and steps\n";

po::options_description train_options() {
  po::options_description o("Options");
  o.add_options()
      ("model-config", po::value<std::string>()->default_value("gpt-mini")->value_name("MODEL"), "model config name or path")
      ("data", po::value<std::string>()->value_name("DIR"), "directory of text files (default: the built-in corpus)")
      ("validation-fraction", po::value<double>()->default_value(0.05)->value_name("F"), "share of the corpus held out")
      ("max-corpus-bytes", po::value<std::string>()->default_value("0")->value_name("SIZE"),
       "read at most this much of the corpus (0: all)")
      ("optimizer", po::value<std::string>()->default_value("soap")->value_name("NAME"),
       "adamw | shampoo | soap | kl-shampoo | muon")
      ("placement", po::value<std::string>()->default_value("device")->value_name("POLICY"),
       "optimizer state placement: device | host | tiered | nvme")
      ("lookahead", po::value<int>()->default_value(2)->value_name("N"), "uses ahead the store prefetches state")
      ("staleness", po::value<int>()->default_value(0)->value_name("S"),
       "steps a refresh may be published after the synchronous schedule (0: synchronous)")
      ("device", po::value<std::string>()->default_value("cpu")->value_name("KIND"), "cpu | cuda")
      ("device-budget", po::value<std::string>()->default_value("8GiB")->value_name("SIZE"), "device tier budget")
      ("host-budget", po::value<std::string>()->default_value("16GiB")->value_name("SIZE"), "host tier budget")
      ("nvme-budget", po::value<std::string>()->default_value("64GiB")->value_name("SIZE"), "NVMe tier budget")
      ("nvme-dir", po::value<std::string>()->value_name("DIR"), "NVMe tier files (needed by --placement nvme)")
      ("steps", po::value<int>()->default_value(200)->value_name("N"), "training steps")
      ("eval-every", po::value<int>()->default_value(50)->value_name("N"), "validation loss every N steps (0: at the end)")
      ("eval-sequences", po::value<int>()->default_value(64)->value_name("N"), "validation windows per evaluation")
      ("batch", po::value<int>()->default_value(0)->value_name("N"), "sequences per step (0: the config's micro_batch)")
      ("seed", po::value<std::uint64_t>()->default_value(1)->value_name("N"), "weights, corpus split, batch order")
      ("host-workers", po::value<int>()->default_value(1)->value_name("N"), "refresh worker threads")
      ("blas-threads", po::value<int>()->default_value(0)->value_name("N"), "OpenBLAS threads (0: all cores)")
      ("no-progress", "no progress lines on stderr")
      ("trace", "record what each executor ran and write trace.json to --out (big for long runs)")
      ("out", po::value<std::string>()->value_name("DIR"),
       "write steps.csv, summary.json, checkpoint/ (trace.json) here");
  o.add(hyperparameter_options());
  return o;
}

TrainSettings settings_from(const po::variables_map& v) {
  TrainSettings s;
  s.model = v["model-config"].as<std::string>();
  if (v.count("data") != 0) s.data = v["data"].as<std::string>();
  s.validation_fraction = v["validation-fraction"].as<double>();
  s.max_corpus_bytes = parse_size(v["max-corpus-bytes"].as<std::string>(), "--max-corpus-bytes");
  s.optimizer = optim::parse_optimizer_kind(v["optimizer"].as<std::string>(), "--optimizer");
  s.hp = optim::default_hyperparameters(s.optimizer);
  apply_hyperparameter_options(v, s.hp);
  s.placement = runtime::parse_placement_policy(v["placement"].as<std::string>(), "--placement");
  s.lookahead = v["lookahead"].as<int>();
  s.staleness = v["staleness"].as<int>();
  s.device = v["device"].as<std::string>();
  s.device_budget = parse_size(v["device-budget"].as<std::string>(), "--device-budget");
  s.host_budget = parse_size(v["host-budget"].as<std::string>(), "--host-budget");
  s.nvme_budget = parse_size(v["nvme-budget"].as<std::string>(), "--nvme-budget");
  if (v.count("nvme-dir") != 0) s.nvme_dir = v["nvme-dir"].as<std::string>();
  s.steps = v["steps"].as<int>();
  s.eval_every = v["eval-every"].as<int>();
  s.eval_sequences = v["eval-sequences"].as<int>();
  s.batch = v["batch"].as<int>();
  s.seed = v["seed"].as<std::uint64_t>();
  s.host_workers = v["host-workers"].as<int>();
  s.blas_threads = v["blas-threads"].as<int>();
  s.progress = v.count("no-progress") == 0;
  s.trace = v.count("trace") != 0;
  if (s.trace && v.count("out") == 0)
    throw InputError("asteria train", "--trace", "expected --out DIR as well (trace.json is written there)");
  return s;
}

}  // namespace

int train_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const std::string details = std::string(kDetails) + '\n' + hyperparameter_defaults_table();
  const auto values =
      parse_verb_options({"train", "[options]", kAbout, details}, train_options(), args, out, err, exit_code);
  if (!values) return exit_code;
  const TrainSettings settings = settings_from(*values);
  const TrainOutcome outcome = run_train(settings, err);
  print_train(outcome, out);
  if (values->count("out") != 0) {
    const std::string dir = (*values)["out"].as<std::string>();
    write_train(outcome, dir);
    out << "wrote steps.csv, summary.json, " << (outcome.timeline ? "trace.json, " : "") << "checkpoint/ to " << dir
        << '\n';
  }
  if (outcome.trace_dropped_records > 0)
    err << "train: the work log was full; trace.json misses the last " << outcome.trace_dropped_records
        << " work records\n";
  return 0;
}

}  // namespace asteria::cli

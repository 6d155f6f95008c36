// asteria optim: one optimizer over a gradient sequence read from .npy, for conformance checks
// against other implementations (e.g. scripts/check_optim_numpy.py).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/setting_options.hpp"
#include "core/run/run_schema.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#include "core/io/npy.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/real/blas_kernel_choice.hpp"

namespace asteria::cli {
namespace {

using linalg::index;

constexpr std::string_view kAbout =
    "Runs one optimizer synchronously over a sequence of gradients and writes the parameters after\n"
    "every step.\n"
    "  --params P.npy  the initial parameter tensor, any shape (0-d included), float32 or float64\n"
    "  --grads G.npy   the gradients, shape (steps, *shape of params)\n"
    "  --out TRAJ.npy  written: shape (steps, *shape of params), row t = parameters after step t+1\n"
    "The output has the dtype of --params and the optimizer computes in that dtype; gradients of the\n"
    "other dtype are converted to it first (float64 -> float32 rounds to nearest). Tensors of order\n"
    "2 or more are viewed as a matrix (first dimension by the product of the others) and blocked by\n"
    "--max-precond-dim; tensors of order <= 1 use AdamW (Shampoo: one-sided Shampoo with\n"
    "--precondition-vectors true, small tensors merged into vectors with --merge-small-dims true;\n"
    "--preset distributed-shampoo sets both, as Distributed Shampoo). The output is written atomically: on any\n"
    "error no file is left behind and an existing file is kept. --out must be a regular file or a\n"
    "new path in a writable directory; anything else (a directory, a FIFO, /dev/null) is refused\n"
    "before any work.";

template <linalg::Real T>
void run_optimizer(optim::OptimizerKind kind, const optim::Hyperparameters& hp, const io::NpyArray& params,
                   const io::NpyArray& grads, const std::string& params_file, const std::string& out_file,
                   std::ostream& out) {
  optim::TensorOptimizer<T> optimizer(kind, hp, params.shape, params_file);
  std::vector<T> weights = params.values_as<T>();
  const std::vector<T> gradients = grads.values_as<T>();
  const auto steps = static_cast<std::size_t>(grads.shape.front());
  const std::size_t n = weights.size();
  std::vector<T> trajectory(steps * n);
  for (std::size_t s = 0; s < steps; ++s) {
    optimizer.step(std::span<T>(weights), std::span<const T>(gradients).subspan(s * n, n));
    std::copy(weights.begin(), weights.end(), trajectory.begin() + static_cast<std::ptrdiff_t>(s * n));
  }
  std::vector<index> out_shape = grads.shape;
  io::write_npy<T>(out_file, out_shape, trajectory);
  const optim::OptimizerCounters& c = optimizer.counters();
  out << "asteria optim: " << steps << " steps of " << optim::to_string(kind) << " on " << io::format_shape(params.shape)
      << ' ' << io::to_string(io::dtype_of<T>()) << " -> " << out_file << " (refreshes " << c.refreshes
      << ", refresh failures " << c.refresh_failures << ", skipped non-finite blocks " << c.skipped_non_finite_blocks
      << ")\n";
}

std::string kind_of(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  switch (type) {
    case file_type::directory: return "a directory";
    case file_type::fifo: return "a FIFO";
    case file_type::character: return "a character device";
    case file_type::block: return "a block device";
    case file_type::socket: return "a socket";
    default: return "a file that is not a regular file";
  }
}

// The trajectory is written to a temporary file renamed over --out: anything there but a regular
// file would be replaced (or, written in place, would swallow the output), and a directory that
// cannot take the temporary would fail only after all the work. Both are refused up front.
void check_output_path(const std::string& out_file) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& found) {
    throw InputError(out_file, "--out",
                     "expected a regular file or a path that does not exist yet, in a directory that exists and is "
                     "writable; found " + found);
  };
  const fs::path path(out_file);
  if (out_file.empty() || !path.has_filename()) refuse("a path that names no file");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows links: a link to /dev/null is refused
  if (fs::exists(status) && !fs::is_regular_file(status)) refuse(kind_of(status.type()));
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::file_status dir_status = fs::status(dir, ec);
  if (!fs::exists(dir_status)) refuse("no directory " + dir.string());
  if (!fs::is_directory(dir_status)) refuse(dir.string() + ", which is not a directory");
  // A probe file, not access(): root passes access() even where nothing can be created (/proc, a
  // read-only mount).
  const fs::path probe = dir / (".asteria-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) refuse("the directory " + dir.string() + ", which is not writable");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_shapes(const io::NpyArray& params, const io::NpyArray& grads, const std::string& params_file,
                  const std::string& grads_file) {
  const std::vector<index>& p = params.shape;
  const std::vector<index>& g = grads.shape;
  if (g.size() == p.size() + 1 && std::equal(p.begin(), p.end(), g.begin() + 1)) return;
  std::string wanted = "(steps";
  for (index d : p) wanted += ", " + std::to_string(d);
  wanted += p.empty() ? ",)" : ")";
  throw InputError(grads_file, "shape",
                   "expected " + wanted + " to match " + params_file + " of shape " + io::format_shape(p) +
                       ", found " + io::format_shape(g));
}

}  // namespace

int optim_main(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description files("Files");
  files.add_options()
      ("optimizer", po::value<std::string>()->required()->value_name("NAME"),
       "adamw | shampoo | soap | kl-shampoo | muon")
      ("params", po::value<std::string>()->required()->value_name("P.npy"), "initial parameters")
      ("grads", po::value<std::string>()->required()->value_name("G.npy"), "gradients, (steps, *param shape)")
      ("out", po::value<std::string>()->required()->value_name("TRAJ.npy"), "parameters after each step");
  optim::HyperparameterPreset preset = optim::HyperparameterPreset::asteria;
  OptionsBuilder preset_option(files, std::nullopt, /*show_defaults=*/true);
  run::describe_preset(preset_option, preset);
  po::options_description all;
  all.add(files).add(hyperparameter_options());
  const std::string details = hyperparameter_defaults_table();
  int exit_code = 0;
  const auto values = parse_verb_options(
      {"optim", "--optimizer NAME --params P.npy --grads G.npy --out TRAJ.npy [hyperparameters]", kAbout, details},
      all, args, out, err, exit_code);
  if (!values) return exit_code;
  real::require_cpu_blas_kernels("asteria optim");

  const optim::OptimizerKind kind = optim::parse_optimizer_kind((*values)["optimizer"].as<std::string>());
  OptionsReader preset_reader(*values, std::nullopt);
  run::describe_preset(preset_reader, preset);
  optim::Hyperparameters hp = optim::preset_hyperparameters(kind, preset, "--preset");
  apply_hyperparameter_options(*values, hp);
  optim::validate(hp, "command line");

  const auto params_file = (*values)["params"].as<std::string>();
  const auto grads_file = (*values)["grads"].as<std::string>();
  const auto out_file = (*values)["out"].as<std::string>();
  check_output_path(out_file);  // before reading or computing anything
  const io::NpyArray params = io::read_npy(params_file);
  const io::NpyArray grads = io::read_npy(grads_file);
  check_shapes(params, grads, params_file, grads_file);

  if (params.dtype() == io::DType::float32)
    run_optimizer<float>(kind, hp, params, grads, params_file, out_file, out);
  else
    run_optimizer<double>(kind, hp, params, grads, params_file, out_file, out);
  return 0;
}

}  // namespace asteria::cli

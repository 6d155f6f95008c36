// `asteria optim` in process (asteria::cli::run): a good run against an independent float64
// AdamW, dtype handling, every error path, --out targets refused before any work, and --help.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/verbs.hpp"
#include "tests/common/cli_harness.hpp"
#include "core/io/npy.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using io::index;
using testing::TempDir;

using testing::run_cli;
using Outcome = testing::CliOutcome;

std::vector<double> gaussian(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

template <class T, class U>
std::vector<T> cast(const std::vector<U>& v) {
  return {v.begin(), v.end()};
}

struct AdamSettings {
  double lr, beta1, beta2, eps, weight_decay;
};

// Plain float64 AdamW over `steps` gradient rows; returns the parameters after every step.
std::vector<double> reference_adamw(std::vector<double> w, const std::vector<double>& grads, std::size_t steps,
                                    const AdamSettings& s) {
  const std::size_t n = w.size();
  std::vector<double> m(n, 0.0), v(n, 0.0), trajectory;
  for (std::size_t t = 1; t <= steps; ++t) {
    for (std::size_t i = 0; i < n; ++i) {
      const double g = grads[(t - 1) * n + i];
      m[i] = s.beta1 * m[i] + (1 - s.beta1) * g;
      v[i] = s.beta2 * v[i] + (1 - s.beta2) * g * g;
      const double mhat = m[i] / (1 - std::pow(s.beta1, static_cast<double>(t)));
      const double vhat = v[i] / (1 - std::pow(s.beta2, static_cast<double>(t)));
      w[i] -= s.lr * mhat / (std::sqrt(vhat) + s.eps) + s.lr * s.weight_decay * w[i];
    }
    trajectory.insert(trajectory.end(), w.begin(), w.end());
  }
  return trajectory;
}

std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

class OptimVerb : public ::testing::Test {
 protected:
  // params (3, 2) and grads (4, 3, 2), rounded to T so the reference sees the same inputs.
  template <linalg::Real T>
  void write_inputs(std::size_t steps = 4) {
    params_ = cast<double>(cast<T>(gaussian(6, 1)));
    grads_ = cast<double>(cast<T>(gaussian(6 * steps, 2)));
    io::write_npy<T>(params_file_, std::vector<index>{3, 2}, cast<T>(params_));
    io::write_npy<T>(grads_file_, std::vector<index>{static_cast<index>(steps), 3, 2}, cast<T>(grads_));
  }
  Args args(const std::string& optimizer) const {
    return {"optim", "--optimizer", optimizer, "--params", params_file_, "--grads", grads_file_, "--out", out_file_};
  }

  TempDir dir_;
  std::string params_file_ = dir_.file("params.npy");
  std::string grads_file_ = dir_.file("grads.npy");
  std::string out_file_ = dir_.file("traj.npy");
  std::vector<double> params_, grads_;
};

TEST_F(OptimVerb, AdamWMatchesAFloat64ReferenceInFloat32) {
  write_inputs<float>();
  Args a = args("adamw");
  for (const char* option : {"--lr", "0.01", "--beta1", "0.8", "--beta2", "0.99", "--eps", "1e-6", "--weight-decay", "0.1"})
    a.emplace_back(option);
  const Outcome r = run_cli(a);
  ASSERT_EQ(r.code, 0) << r.err;
  const io::NpyArray traj = io::read_npy(out_file_);
  EXPECT_EQ(traj.shape, (std::vector<index>{4, 3, 2}));
  EXPECT_EQ(traj.dtype(), io::DType::float32);
  const std::vector<double> expected = reference_adamw(params_, grads_, 4, {0.01, 0.8, 0.99, 1e-6, 0.1});
  const std::vector<double> got = traj.values_as<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 2e-6) << "element " << i;
}

TEST_F(OptimVerb, UnsetHyperparametersTakeTheOptimizersDefaults) {
  write_inputs<double>();
  const Outcome r = run_cli(args("adamw"));
  ASSERT_EQ(r.code, 0) << r.err;
  const optim::Hyperparameters d = optim::default_hyperparameters(optim::OptimizerKind::adamw);
  const std::vector<double> expected =
      reference_adamw(params_, grads_, 4, {d.lr, d.beta1, d.beta2, d.eps, d.weight_decay});
  const io::NpyArray traj = io::read_npy(out_file_);
  EXPECT_EQ(traj.dtype(), io::DType::float64);
  const std::vector<double> got = traj.values_as<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-13) << "element " << i;
}

// --preset distributed-shampoo is the library's Shampoo with the preset's hyperparameters (the
// 3x2 parameter, 6 values, is merged into one vector and preconditioned); options given after
// it still win; another optimizer is refused.
TEST_F(OptimVerb, ThePresetIsTheLibraryWithThePresetsHyperparameters) {
  write_inputs<double>();
  Args a = args("shampoo");
  a.insert(a.end(), {"--preset", "distributed-shampoo", "--eps", "1e-3"});
  const Outcome r = run_cli(a);
  ASSERT_EQ(r.code, 0) << r.err;
  optim::Hyperparameters hp = optim::preset_hyperparameters(
      optim::OptimizerKind::shampoo, optim::HyperparameterPreset::distributed_shampoo, "test");
  hp.eps = 1e-3;
  optim::TensorOptimizer<double> library(optim::OptimizerKind::shampoo, hp, {3, 2});
  ASSERT_EQ(library.blocks().size(), 1u);
  EXPECT_EQ(library.blocks()[0].optimizer->name(), "shampoo");
  EXPECT_EQ(library.blocks()[0].region.rows, 1);
  std::vector<double> w = params_, expected;
  for (std::size_t t = 0; t < 4; ++t) {
    library.step(w, std::span<const double>(grads_).subspan(6 * t, 6));
    expected.insert(expected.end(), w.begin(), w.end());
  }
  EXPECT_EQ(io::read_npy(out_file_).values_as<double>(), expected);

  Args soap = args("soap");
  soap.insert(soap.end(), {"--preset", "distributed-shampoo"});
  const Outcome refused = run_cli(soap);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("--preset"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("expected --optimizer shampoo"), std::string::npos) << refused.err;
}

TEST_F(OptimVerb, GradientsOfTheOtherDtypeAreConvertedToTheParamsDtype) {
  params_ = gaussian(6, 1);
  grads_ = cast<double>(cast<float>(gaussian(12, 2)));  // float32 values, exact in float64
  io::write_npy<double>(params_file_, std::vector<index>{3, 2}, params_);
  io::write_npy<float>(grads_file_, std::vector<index>{2, 3, 2}, cast<float>(grads_));
  ASSERT_EQ(run_cli(args("adamw")).code, 0);
  const io::NpyArray traj = io::read_npy(out_file_);
  EXPECT_EQ(traj.dtype(), io::DType::float64);
  const optim::Hyperparameters d = optim::default_hyperparameters(optim::OptimizerKind::adamw);
  const std::vector<double> expected =
      reference_adamw(params_, grads_, 2, {d.lr, d.beta1, d.beta2, d.eps, d.weight_decay});
  const std::vector<double> got = traj.values_as<double>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-13) << "element " << i;
}

TEST_F(OptimVerb, ZeroDimensionalParams) {
  io::write_npy<double>(params_file_, std::vector<index>{}, std::vector<double>{0.5});
  io::write_npy<double>(grads_file_, std::vector<index>{3}, std::vector<double>{1.0, -2.0, 0.5});
  const Outcome r = run_cli(args("adamw"));
  ASSERT_EQ(r.code, 0) << r.err;
  const io::NpyArray traj = io::read_npy(out_file_);
  EXPECT_EQ(traj.shape, (std::vector<index>{3}));
  const optim::Hyperparameters d = optim::default_hyperparameters(optim::OptimizerKind::adamw);
  const std::vector<double> expected =
      reference_adamw({0.5}, {1.0, -2.0, 0.5}, 3, {d.lr, d.beta1, d.beta2, d.eps, d.weight_decay});
  const std::vector<double> got = traj.values_as<double>();
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], expected[i], 1e-13);
}

// The verb must hand every hyperparameter option to the optimizer: its output equals the
// library's TensorOptimizer run with the same settings. Holds for every optimizer once built.
class OptimVerbPerOptimizer : public OptimVerb, public ::testing::WithParamInterface<const char*> {};

TEST_P(OptimVerbPerOptimizer, OutputEqualsTheLibraryWithTheSameHyperparameters) {
  const std::vector<double> params = gaussian(24, 3), grads = gaussian(24 * 6, 4);
  io::write_npy<float>(params_file_, std::vector<index>{6, 4}, cast<float>(params));
  io::write_npy<float>(grads_file_, std::vector<index>{6, 6, 4}, cast<float>(grads));
  Args a = args(GetParam());
  for (const char* option : {"--lr", "0.004", "--weight-decay", "0.02", "--precondition-frequency", "2",
                             "--max-precond-dim", "4", "--beta1", "0.85"})
    a.emplace_back(option);
  const Outcome r = run_cli(a);
  ASSERT_EQ(r.code, 0) << r.err;

  const optim::OptimizerKind kind = optim::parse_optimizer_kind(GetParam());
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.lr = 0.004, hp.weight_decay = 0.02, hp.precondition_frequency = 2, hp.max_precond_dim = 4, hp.beta1 = 0.85;
  optim::TensorOptimizer<float> library(kind, hp, {6, 4});
  std::vector<float> w = cast<float>(params);
  const std::vector<float> g = cast<float>(grads);
  std::vector<float> expected;
  for (std::size_t s = 0; s < 6; ++s) {
    library.step(w, std::span<const float>(g).subspan(s * 24, 24));
    expected.insert(expected.end(), w.begin(), w.end());
  }
  const io::NpyArray traj = io::read_npy(out_file_);
  EXPECT_EQ(traj.shape, (std::vector<index>{6, 6, 4}));
  EXPECT_EQ(traj.values_as<float>(), expected);
  EXPECT_NE(traj.values_as<float>().back(), cast<float>(params).back());
}

INSTANTIATE_TEST_SUITE_P(EveryOptimizer, OptimVerbPerOptimizer,
                         ::testing::Values("adamw", "shampoo", "soap", "kl-shampoo", "muon"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST_F(OptimVerb, MissingAndMalformedFilesAreNamed) {
  write_inputs<float>();
  Args a = args("adamw");
  a[4] = dir_.file("absent.npy");
  Outcome r = run_cli(a);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(dir_.file("absent.npy") + ": file: "), std::string::npos) << r.err;

  std::ofstream(grads_file_, std::ios::binary) << "not an array";
  r = run_cli(args("adamw"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(grads_file_ + ": magic: "), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out_file_));
}

TEST_F(OptimVerb, ShapeMismatchNamesBothFilesAndShapes) {
  io::write_npy<float>(params_file_, std::vector<index>{3, 2}, std::vector<float>(6, 1.0f));
  io::write_npy<float>(grads_file_, std::vector<index>{4, 2, 3}, std::vector<float>(24, 1.0f));
  std::ofstream(out_file_) << "keep me";
  const Outcome r = run_cli(args("adamw"));
  EXPECT_EQ(r.code, 1);
  for (const std::string& fragment :
       {grads_file_ + ": shape: ", std::string("(steps, 3, 2)"), params_file_, std::string("(4, 2, 3)")})
    EXPECT_NE(r.err.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << r.err;
  EXPECT_EQ(read_text(out_file_), "keep me");

  io::write_npy<float>(grads_file_, std::vector<index>{3, 2}, std::vector<float>(6, 1.0f));
  const Outcome missing_steps = run_cli(args("adamw"));
  EXPECT_EQ(missing_steps.code, 1);
  EXPECT_NE(missing_steps.err.find("found (3, 2)"), std::string::npos) << missing_steps.err;
}

TEST_F(OptimVerb, UnknownOptimizerListsTheKnownOnes) {
  write_inputs<float>();
  const Outcome r = run_cli(args("adamx"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("'adamx'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("adamw, shampoo, soap, kl-shampoo, muon"), std::string::npos) << r.err;
}

TEST_F(OptimVerb, OutOfDomainHyperparameterIsAnInputError) {
  write_inputs<float>();
  Args a = args("adamw");
  a.insert(a.end(), {"--beta1", "1.5"});
  const Outcome r = run_cli(a);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("beta1"), std::string::npos) << r.err;
  a = args("shampoo");
  a.insert(a.end(), {"--root-method", "cholesky"});
  const Outcome bad_enum = run_cli(a);
  EXPECT_EQ(bad_enum.code, 1);
  EXPECT_NE(bad_enum.err.find("eigen or coupled-newton"), std::string::npos) << bad_enum.err;
}

TEST_F(OptimVerb, NonFiniteGradientUnderTheErrorPolicyWritesNothing) {
  write_inputs<double>(2);
  std::vector<double> grads = grads_;
  grads[7] = std::numeric_limits<double>::quiet_NaN();
  io::write_npy<double>(grads_file_, std::vector<index>{2, 3, 2}, grads);
  Args a = args("adamw");
  a.insert(a.end(), {"--non-finite-policy", "error"});
  const Outcome r = run_cli(a);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("NaN or Inf"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out_file_));
}

// --out names what the trajectory is renamed onto: anything that cannot become a regular file is
// refused before the inputs are read (a missing --params would otherwise be the error) and is
// left as it was.
class OptimVerbOut : public OptimVerb {
 protected:
  Outcome run_with_out(const std::string& out) const {
    Args a = args("soap");
    a[4] = dir_.file("absent.npy");
    a[8] = out;
    return run_cli(a);
  }
  static void expect_refused(const Outcome& r, const std::string& out, const std::string& found) {
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find(out + ": --out: expected a regular file or a path that does not exist yet, in a directory "
                               "that exists and is writable; found " + found),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("absent.npy"), std::string::npos) << "an input was read first: " << r.err;
  }
  static std::filesystem::file_type type_of(const std::string& path) {
    return std::filesystem::symlink_status(path).type();
  }
};

TEST_F(OptimVerbOut, AFifoIsRefused) {
  const std::string fifo = dir_.file("traj.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  expect_refused(run_with_out(fifo), fifo, "a FIFO");
  EXPECT_EQ(type_of(fifo), std::filesystem::file_type::fifo);
}

TEST_F(OptimVerbOut, ACharacterDeviceIsRefused) {
  expect_refused(run_with_out("/dev/null"), "/dev/null", "a character device");
  EXPECT_EQ(type_of("/dev/null"), std::filesystem::file_type::character);
  // Through a link too: the link is followed, and kept.
  const std::string link = dir_.file("traj.npy");
  std::filesystem::create_symlink("/dev/null", link);
  expect_refused(run_with_out(link), link, "a character device");
  EXPECT_EQ(type_of(link), std::filesystem::file_type::symlink);
}

TEST_F(OptimVerbOut, ADirectoryIsRefused) {
  const std::string dir = dir_.file("traj.npy");
  std::filesystem::create_directory(dir);
  expect_refused(run_with_out(dir), dir, "a directory");
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  expect_refused(run_with_out(dir_.file("sub/")), dir_.file("sub/"), "a path that names no file");
}

TEST_F(OptimVerbOut, AMissingParentDirectoryIsRefused) {
  const std::string nested = dir_.file("missing/traj.npy");
  expect_refused(run_with_out(nested), nested, "no directory " + dir_.file("missing"));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("missing")));

  const std::string file = dir_.file("plain");
  std::ofstream(file) << "a file";
  expect_refused(run_with_out(file + "/traj.npy"), file + "/traj.npy", file + ", which is not a directory");
  EXPECT_EQ(read_text(file), "a file");
}

TEST_F(OptimVerbOut, AnUnwritableDirectoryIsRefused) {
  // /proc takes no new files, from root either; a directory without write permission is another
  // case, which only a non-root run can show.
  expect_refused(run_with_out("/proc/traj.npy"), "/proc/traj.npy", "the directory /proc, which is not writable");
  if (::geteuid() == 0) return;
  const std::string locked = dir_.file("locked");
  std::filesystem::create_directory(locked);
  std::filesystem::permissions(locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  expect_refused(run_with_out(locked + "/traj.npy"), locked + "/traj.npy",
                 "the directory " + locked + ", which is not writable");
  EXPECT_TRUE(std::filesystem::is_empty(locked));
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
}

TEST_F(OptimVerbOut, AnExistingRegularFileIsReplaced) {
  write_inputs<float>();
  std::ofstream(out_file_) << "old trajectory";
  const Outcome r = run_cli(args("adamw"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::read_npy(out_file_).shape, (std::vector<index>{4, 3, 2}));
}

TEST_F(OptimVerb, UsageErrorsExitWithTwo) {
  write_inputs<float>();
  Args missing_out = args("adamw");
  missing_out.resize(7);
  Outcome r = run_cli(missing_out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;

  Args unknown = args("adamw");
  unknown.emplace_back("--learning-rate=0.1");
  r = run_cli(unknown);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("learning-rate"), std::string::npos) << r.err;

  // A value its setting does not take is an input error (1), as every setting's check is.
  Args not_a_number = args("adamw");
  not_a_number.insert(not_a_number.end(), {"--lr", "fast"});
  r = run_cli(not_a_number);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--lr: expected a finite number, found 'fast'"), std::string::npos) << r.err;
}

TEST(OptimVerbHelp, DescribesEveryOptionAndTheDefaults) {
  const Outcome r = run_cli({"optim", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.err.empty()) << r.err;
  for (const char* fragment :
       {"usage: asteria optim", "--optimizer", "--params", "--grads", "--out", "--lr", "--beta1", "--beta2", "--eps",
        "--weight-decay", "--precondition-frequency", "--max-precond-dim", "--shampoo-beta",
        "--start-preconditioning-step", "--exponent-override", "--root-method", "--non-finite-policy",
        "(steps, *shape of params)", "dtype of --params", "Defaults by optimizer", "kl-shampoo", "muon"})
    EXPECT_NE(r.out.find(fragment), std::string::npos) << "missing '" << fragment << "'";
}

}  // namespace
}  // namespace asteria::cli

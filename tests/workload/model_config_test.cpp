// Model configuration files: parsing, defaults, every class of bad input (naming the file and
// the field), and the shipped models against the published facts in HARDWARE.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "core/common/error.hpp"
#include "core/common/shipped_files.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::workload {
namespace {

const std::string kSource = "models/test.yaml";

// The required fields; tests append or replace lines.
std::string minimal(const std::string& extra = "") {
  return "name: toy\n"
         "layers: 2\n"
         "d_model: 64\n"
         "heads: 4\n"
         "mlp_hidden: 256\n"
         "vocab: 256\n"
         "sequence_length: 64\n"
         "micro_batch: 2\n" +
         extra;
}

// Replaces the line that starts with `key:` by `replacement` (or drops it when empty).
std::string with_line(const std::string& key, const std::string& replacement) {
  std::string text = minimal();
  const std::size_t start = text.find(key + ":");
  const std::size_t end = text.find('\n', start);
  text.replace(start, end - start + 1, replacement.empty() ? "" : replacement + "\n");
  return text;
}

// Parses `text` expecting an InputError about `field`; returns its message.
std::string expect_error(const std::string& text, const std::string& field) {
  try {
    parse_model_config(text, kSource);
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), kSource);
    EXPECT_EQ(e.field(), field) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no InputError for field " << field;
  return {};
}

TEST(ModelConfig, ParsesRequiredFieldsAndAppliesDefaults) {
  const ModelConfig c = parse_model_config(minimal(), kSource);
  EXPECT_EQ(c.name, "toy");
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.d_model, 64);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(c.kv_heads, 4);  // defaults to heads
  EXPECT_EQ(c.mlp_hidden, 256);
  EXPECT_EQ(c.mlp, MlpKind::swiglu);
  EXPECT_EQ(c.vocab, 256);
  EXPECT_EQ(c.sequence_length, 64);
  EXPECT_EQ(c.micro_batch, 2);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_TRUE(c.norm_weights);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_EQ(c.activation_bytes, 2);
  EXPECT_EQ(c.parameter_bytes, 4);
  EXPECT_EQ(c.gradient_bytes, 4);
  EXPECT_EQ(c.head_dim(), 16);
  EXPECT_EQ(c.kv_dim(), 64);
  EXPECT_EQ(c.tokens(), 128);
}

TEST(ModelConfig, ParsesOptionalFields) {
  const ModelConfig c = parse_model_config(
      minimal("kv_heads: 2\nmlp: gelu\ntied_embeddings: true\nnorm_weights: false\nqk_norm: true\n"
              "activation_bytes: 4\nparameter_bytes: 8\ngradient_bytes: 2\norigin: \"a paper\"\n"),
      kSource);
  EXPECT_EQ(c.kv_heads, 2);
  EXPECT_EQ(c.kv_dim(), 32);
  EXPECT_EQ(c.mlp, MlpKind::gelu);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_FALSE(c.norm_weights);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.activation_bytes, 4);
  EXPECT_EQ(c.parameter_bytes, 8);
  EXPECT_EQ(c.gradient_bytes, 2);
  EXPECT_EQ(c.origin, "a paper");
}

TEST(ModelConfig, MissingFieldIsNamed) {
  for (const char* field : {"name", "layers", "d_model", "heads", "mlp_hidden", "vocab", "sequence_length",
                            "micro_batch"}) {
    const std::string message = expect_error(with_line(field, ""), field);
    EXPECT_NE(message.find("missing"), std::string::npos) << message;
  }
}

// yaml-cpp would keep both and read the first: a repeated field is an error naming it.
TEST(ModelConfig, ARepeatedFieldIsRejected) {
  const std::string message = expect_error(with_line("layers", "") + "layers: 4\nlayers: 8\n", "layers");
  EXPECT_NE(message.find("twice"), std::string::npos) << message;
}

TEST(ModelConfig, NonPositiveSizesAreRejected) {
  expect_error(with_line("layers", "layers: 0"), "layers");
  expect_error(with_line("d_model", "d_model: -64"), "d_model");
  expect_error(with_line("vocab", "vocab: 0"), "vocab");
  expect_error(minimal("kv_heads: 0\n"), "kv_heads");
}

TEST(ModelConfig, WrongTypesAreRejected) {
  expect_error(with_line("d_model", "d_model: 64.5"), "d_model");
  expect_error(with_line("layers", "layers: two"), "layers");
  expect_error(with_line("heads", "heads: [4]"), "heads");
  expect_error(minimal("tied_embeddings: maybe\n"), "tied_embeddings");
  expect_error(with_line("name", "name: {a: 1}"), "name");
}

// The name goes into summary.json, which nlohmann::json writes only as UTF-8: once a stray byte
// here ended `asteria sim` with an internal error after the whole simulation.
TEST(ModelConfig, TextMustBeUtf8) {
  std::string message = expect_error(with_line("name", "name: toy\xff"), "name");
  EXPECT_NE(message.find("expected UTF-8 text, found an invalid byte sequence at byte 4"), std::string::npos)
      << message;
  message = expect_error(minimal("origin: \"overlong \xc0\xaf\"\n"), "origin");
  EXPECT_NE(message.find("at byte 10"), std::string::npos) << message;
  EXPECT_EQ(parse_model_config(with_line("name", "name: t\xc3\xb6y"), kSource).name, "t\xc3\xb6y");
}

// Sizes whose products overflowed 64-bit counts (undefined behaviour in tokens() and in the
// workload model's byte sizes), or whose layers alone exhausted memory in build_workload.
TEST(ModelConfig, SizesAreBoundedSoThatDerivedCountsFit) {
  std::string message = expect_error(with_line("layers", "layers: 1000000000"), "layers");
  EXPECT_NE(message.find("expected at most 10000 layers, found 1000000000"), std::string::npos) << message;
  message = expect_error(with_line("d_model", "d_model: 4611686018427387904"), "layers, d_model, mlp_hidden, vocab");
  EXPECT_NE(message.find("expected at most 2^48 weights"), std::string::npos) << message;
  message = expect_error(with_line("micro_batch", "micro_batch: 4611686018427387904"), "micro_batch, sequence_length");
  EXPECT_NE(message.find("expected at most 2^48 activations per micro-batch"), std::string::npos) << message;
  // Models far larger than any real one still read: 2e12 weights, a million-token context.
  const ModelConfig big = parse_model_config(
      "name: big\nlayers: 200\nd_model: 32768\nheads: 256\nmlp_hidden: 131072\nvocab: 1000000\n"
      "sequence_length: 1048576\nmicro_batch: 1\n",
      kSource);
  EXPECT_EQ(big.tokens(), 1048576);
}

TEST(ModelConfig, HeadsMustDivideDModel) {
  const std::string message = expect_error(with_line("heads", "heads: 5"), "heads");
  EXPECT_NE(message.find("d_model"), std::string::npos) << message;
}

TEST(ModelConfig, KvHeadsMustDivideHeads) {
  const std::string message = expect_error(minimal("kv_heads: 3\n"), "kv_heads");
  EXPECT_NE(message.find("divisor of heads"), std::string::npos) << message;
}

TEST(ModelConfig, UnknownMlpKindIsRejected) {
  const std::string message = expect_error(minimal("mlp: relu\n"), "mlp");
  EXPECT_NE(message.find("swiglu"), std::string::npos) << message;
}

TEST(ModelConfig, UnknownKeyIsRejected) {
  const std::string message = expect_error(minimal("dropout: 0.1\n"), "dropout");
  EXPECT_NE(message.find("unknown"), std::string::npos) << message;
}

TEST(ModelConfig, ElementSizesMustBeRealDtypes) {
  expect_error(minimal("activation_bytes: 3\n"), "activation_bytes");
  expect_error(minimal("parameter_bytes: 16\n"), "parameter_bytes");
}

TEST(ModelConfig, SyntaxErrorNamesTheLine) {
  // Line 3 is indented under a plain scalar: a mapping value where none may start.
  const std::string message = expect_error("name: toy\nlayers: 2\n  d_model: 64\nheads: 4\n", "yaml");
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  // Line 4 puts a second mapping value on one line.
  const std::string second = expect_error("name: toy\nlayers: 2\nd_model: 64\nheads: 4: 5\n", "yaml");
  EXPECT_NE(second.find("line 4"), std::string::npos) << second;
}

TEST(ModelConfig, TopLevelMustBeAMapping) { expect_error("- 1\n- 2\n", "yaml"); }

TEST(ModelConfig, LoadNamesTheFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "asteria_workload_bad_model.yaml";
  {
    std::ofstream out(path);
    out << with_line("vocab", "");
  }
  try {
    load_model_config(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), path.string());
    EXPECT_EQ(e.field(), "vocab");
  }
  std::filesystem::remove(path);
  EXPECT_THROW(load_model_config(path), InputError);  // unreadable now
}

TEST(ModelConfig, FindsShippedModelsByNameAndFilesByPath) {
  EXPECT_EQ(find_model_config("tiny").name, "tiny");
  const std::filesystem::path file = shipped_models_dir() / "olmo-1b.yaml";
  EXPECT_EQ(find_model_config(file.string()).name, "olmo-1b");
  const std::vector<std::string> names = shipped_model_names();
  EXPECT_EQ(names, (std::vector<std::string>{"dos-13b", "dos-70b", "gpt-100m", "gpt-175b", "gpt-25m", "gpt-65b", "gpt-mini", "olmo-1b", "olmo2-7b",
                                                   "paper-olmo2-1b", "paper-olmo2-7b", "tiny"}));
}

// Sets an environment variable for one test's scope and restores what was there.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    if (previous_) ::setenv(name_, previous_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

// A tree copied elsewhere (as on a device machine running bundled binaries) names itself.
TEST(ModelConfig, ShippedModelsFollowAMovedTree) {
  const std::filesystem::path moved = std::filesystem::temp_directory_path() / "asteria-moved-tree";
  std::filesystem::remove_all(moved);
  std::filesystem::create_directories(moved / "experiments" / "models");
  std::ofstream(moved / "experiments" / "models" / "only-here.yaml") << minimal();
  {
    const ScopedEnvironment env("ASTERIA_SOURCE_DIR", moved.string());
    EXPECT_EQ(shipped_root(), moved);
    EXPECT_EQ(find_model_config("only-here").name, "toy");
    EXPECT_EQ(shipped_model_names(), std::vector<std::string>{"only-here"});
    EXPECT_THROW(find_model_config("tiny"), InputError);  // the build tree's models are not read
  }
  EXPECT_EQ(find_model_config("tiny").name, "tiny");
  EXPECT_THROW(find_model_config("only-here"), InputError);
  std::filesystem::remove_all(moved);
}

TEST(ModelConfig, UnknownModelListsTheShippedOnes) {
  try {
    find_model_config("olmo-3b");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("olmo-3b"), std::string::npos) << message;
    for (const char* name : {"tiny", "olmo-1b", "olmo2-7b"})
      EXPECT_NE(message.find(name), std::string::npos) << message;
  }
}

TEST(ModelConfig, ShippedTinyMatchesItsSpecification) {
  const ModelConfig c = find_model_config("tiny");
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.d_model, 64);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(c.mlp_hidden, 256);
  EXPECT_EQ(c.vocab, 256);
  EXPECT_EQ(c.sequence_length, 64);
  EXPECT_EQ(c.micro_batch, 2);
}

// HARDWARE.md, "Model configurations": OLMo-1B 2048 / 16 / 16 / 8192 / 50304 / tied;
// OLMo-2 7B 4096 / 32 / 32 (kv 32) / 11008 / 100352 / untied; sequence length 1024.
TEST(ModelConfig, ShippedOlmoModelsMatchThePublishedConfigs) {
  const ModelConfig one = find_model_config("olmo-1b");
  EXPECT_EQ(one.d_model, 2048);
  EXPECT_EQ(one.layers, 16);
  EXPECT_EQ(one.heads, 16);
  EXPECT_EQ(one.kv_heads, 16);
  EXPECT_EQ(one.mlp_hidden, 8192);
  EXPECT_EQ(one.mlp, MlpKind::swiglu);
  EXPECT_EQ(one.vocab, 50304);
  EXPECT_TRUE(one.tied_embeddings);
  EXPECT_EQ(one.sequence_length, 1024);
  EXPECT_FALSE(one.origin.empty());

  const ModelConfig seven = find_model_config("olmo2-7b");
  EXPECT_EQ(seven.d_model, 4096);
  EXPECT_EQ(seven.layers, 32);
  EXPECT_EQ(seven.heads, 32);
  EXPECT_EQ(seven.kv_heads, 32);
  EXPECT_EQ(seven.mlp_hidden, 11008);
  EXPECT_EQ(seven.mlp, MlpKind::swiglu);
  EXPECT_EQ(seven.vocab, 100352);
  EXPECT_FALSE(seven.tied_embeddings);
  EXPECT_EQ(seven.sequence_length, 1024);
  EXPECT_FALSE(seven.origin.empty());
}

}  // namespace
}  // namespace asteria::workload

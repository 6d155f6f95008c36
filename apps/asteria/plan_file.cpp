#include "apps/asteria/plan_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>
#include <set>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/run/settings_list.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;

// The plan's own keys; the planned settings' keys (run_schema.hpp) come beside them.
constexpr std::array<std::string_view, 8> kPlanKeys = {"format", "hw",     "model",     "optimizer",
                                                      "batch",  "host_workers", "method", "predicted"};
constexpr std::string_view kBlocksKey = "blocks";

// A planned setting's key in the file: its name with '_' for '-'.
std::string file_key(std::string_view name) {
  std::string key(name);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::vector<std::string> top_keys() {
  std::vector<std::string> keys(kPlanKeys.begin(), kPlanKeys.end());
  for (const run::Setting& s : run::all_settings())
    if (s.planned) keys.push_back(file_key(s.name));
  keys.emplace_back(kBlocksKey);
  return keys;
}

constexpr std::array<std::string_view, 3> kPredictedKeys = {"update_s", "step_s", "binding"};
constexpr std::array<std::string_view, 3> kBlockKeys = {"label", "tier", "update"};

// Reads one mapping's entries, refusing keys outside `known` and keys given twice (yaml-cpp
// keeps both copies of a repeated key and answers lookups with the first, silently).
class Fields {
 public:
  template <class Keys>
  Fields(const YAML::Node& node, const Keys& known, const std::string& file, const std::string& field)
      : file_(file), prefix_(field.empty() ? "" : field + ".") {
    if (!node.IsMap())
      throw InputError(file, field.empty() ? "(top level)" : field, "expected a mapping, found " + kind(node) + line(node));
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      bool is_known = false;
      for (std::string_view k : known) is_known = is_known || k == key;
      if (!is_known) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        throw InputError(file, prefix_ + key, "unknown key; expected one of " + list + line(entry.first));
      }
      if (!seen.insert(key).second) throw InputError(file, prefix_ + key, "given once, found twice" + line(entry.first));
      values_.emplace_back(key, entry.second);
    }
  }

  // The node of `key`, or an undefined node when absent.
  std::optional<YAML::Node> find(std::string_view key) const {
    for (const auto& [k, v] : values_)
      if (k == key) return v;
    return std::nullopt;
  }
  YAML::Node required(std::string_view key, const std::string& expectation) const {
    std::optional<YAML::Node> node = find(key);
    if (!node) throw InputError(file_, prefix_ + std::string(key), "missing; expected " + expectation);
    return *node;
  }
  std::string field(std::string_view key) const { return prefix_ + std::string(key); }
  const std::vector<std::pair<std::string, YAML::Node>>& entries() const { return values_; }

  std::string text(const YAML::Node& node, std::string_view key, const std::string& expectation) const {
    if (!node.IsScalar() || node.Scalar().empty())
      throw InputError(file_, field(key), "expected " + expectation + ", found " + kind(node) + line(node));
    return node.Scalar();
  }
  template <class T>
  T number(const YAML::Node& node, std::string_view key, const std::string& expectation) const {
    T value{};
    if (!node.IsScalar() || !YAML::convert<T>::decode(node, value))
      throw InputError(file_, field(key), "expected " + expectation + ", found " + kind(node) + line(node));
    return value;
  }

  static std::string kind(const YAML::Node& node) {
    if (node.IsMap()) return "a mapping";
    if (node.IsSequence()) return "a list";
    if (node.IsScalar()) return "'" + node.Scalar() + "'";
    return "nothing";
  }
  static std::string line(const YAML::Node& node) {
    const int l = node.Mark().line;
    return l >= 0 ? " (line " + std::to_string(l + 1) + ")" : "";
  }

 private:
  std::string file_;
  std::string prefix_;
  std::vector<std::pair<std::string, YAML::Node>> values_;
};

std::optional<Tier> tier_named(const std::string& text) {
  for (Tier t : {Tier::device, Tier::host, Tier::nvme})
    if (text == platform::to_string(t)) return t;
  return std::nullopt;
}

Tier read_tier(const Fields& f, const YAML::Node& node, std::string_view key, const std::string& file) {
  const std::string text = f.text(node, key, "device, host or nvme");
  const std::optional<Tier> tier = tier_named(text);
  if (!tier) throw InputError(file, f.field(key), "expected device, host or nvme, found '" + text + "'" + Fields::line(node));
  return *tier;
}

runtime::BlockPlacement read_block(const YAML::Node& node, const std::string& file, const std::string& field) {
  const Fields f(node, kBlockKeys, file, field);
  runtime::BlockPlacement b;
  b.label = f.text(f.required("label", "the block's label"), "label", "the block's label");
  b.home = read_tier(f, f.required("tier", "device, host or nvme"), "tier", file);
  const YAML::Node update = f.required("update", "device or host");
  const std::string site = f.text(update, "update", "device or host");
  if (site != "device" && site != "host")
    throw InputError(file, f.field("update"), "expected device or host, found '" + site + "'" + Fields::line(update));
  b.update_on_device = site == "device";
  if (b.home == Tier::device && !b.update_on_device)
    throw InputError(file, f.field("update"),
                     "expected device for a block resting on the device (tier: device), found host" +
                         Fields::line(update));
  return b;
}

PlanFile read_document(const YAML::Node& root, const std::string& file) {
  const Fields f(root, top_keys(), file, "");
  PlanFile p;
  const YAML::Node format = f.required("format", std::string("'") + kPlanFormat + "'");
  if (!format.IsScalar() || format.Scalar() != kPlanFormat)
    throw InputError(file, "format",
                     std::string("expected '") + kPlanFormat + "' (a file written by asteria plan), found " +
                         Fields::kind(format) + Fields::line(format));
  if (auto n = f.find("hw")) p.hw = f.text(*n, "hw", "a hardware profile name or path");
  p.model = f.text(f.required("model", "a model config name or path"), "model", "a model config name or path");
  const YAML::Node optimizer = f.required("optimizer", "an optimizer name");
  p.optimizer = f.text(optimizer, "optimizer", "an optimizer name");
  try {
    (void)optim::parse_optimizer_kind(p.optimizer, file);
  } catch (const InputError&) {
    throw InputError(file, "optimizer",
                     "expected adamw, shampoo, soap, kl-shampoo or muon, found '" + p.optimizer + "'" +
                         Fields::line(optimizer));
  }
  auto positive = [&](std::string_view key) -> std::optional<int> {
    const std::optional<YAML::Node> n = f.find(key);
    if (!n) return std::nullopt;
    const int value = f.number<int>(*n, key, "an integer >= 1");
    if (value < 1)
      throw InputError(file, f.field(key), "expected an integer >= 1, found " + std::to_string(value) + Fields::line(*n));
    return value;
  };
  p.batch = positive("batch");
  // The planned settings, each read by its own codec.
  for (const run::Setting& s : run::all_settings()) {
    if (!s.planned) continue;
    const std::string key = file_key(s.name);
    const std::optional<YAML::Node> n = f.find(key);
    if (!n) continue;
    const std::string text = f.text(*n, key, "a value of --" + std::string(s.name));
    try {
      p.settings.emplace_back(std::string(s.name), *run::normalized_value(s.name, text));
    } catch (const InputError& e) {
      throw InputError(file, key, e.expectation() + Fields::line(*n));
    }
  }
  p.host_workers = positive("host_workers");
  if (auto n = f.find("method")) p.method = f.text(*n, "method", "the method that chose the plan");
  if (auto n = f.find("predicted")) {
    const Fields pf(*n, kPredictedKeys, file, "predicted");
    PlanPredicted pred;
    auto seconds = [&](std::string_view key) {
      const YAML::Node s = pf.required(key, "seconds");
      const double v = pf.number<double>(s, key, "finite seconds >= 0");
      if (!(v >= 0.0) || !std::isfinite(v))
        throw InputError(file, pf.field(key), "expected finite seconds >= 0, found " + s.Scalar() + Fields::line(s));
      return v;
    };
    pred.update_s = seconds("update_s");
    pred.step_s = seconds("step_s");
    pred.binding = pf.text(pf.required("binding", "a resource name"), "binding", "a resource name");
    p.predicted = pred;
  }
  const YAML::Node blocks = f.required(kBlocksKey, "a list of {label, tier, update}, one per optimizer block");
  if (!blocks.IsSequence())
    throw InputError(file, "blocks",
                     "expected a list of {label, tier, update}, found " + Fields::kind(blocks) + Fields::line(blocks));
  for (std::size_t i = 0; i < blocks.size(); ++i)
    p.blocks.push_back(read_block(blocks[i], file, "blocks[" + std::to_string(i) + "]"));
  return p;
}

}  // namespace

PlanFile parse_plan_file(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(source, "YAML", "expected a well-formed YAML document: " + e.msg + " (line " +
                                         std::to_string(e.mark.line + 1) + ")");
  }
  try {
    return read_document(root, source);
  } catch (const YAML::Exception& e) {  // a conversion the checks above did not foresee
    throw InputError(source, "YAML", "expected a plan file: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
  }
}

PlanFile read_plan_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  if (!std::filesystem::is_regular_file(file))
    throw InputError(name, "file", "expected a plan file (asteria plan --out FILE), found none");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw InputError(name, "file", "expected a readable plan file");
  return parse_plan_file(text.str(), name);
}

std::string plan_file_text(const PlanFile& p) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "format" << YAML::Value << kPlanFormat;
  if (p.hw) out << YAML::Key << "hw" << YAML::Value << *p.hw;
  out << YAML::Key << "model" << YAML::Value << p.model;
  out << YAML::Key << "optimizer" << YAML::Value << p.optimizer;
  if (p.batch) out << YAML::Key << "batch" << YAML::Value << *p.batch;
  for (const auto& [name, value] : p.settings) out << YAML::Key << file_key(name) << YAML::Value << value;
  if (p.host_workers) out << YAML::Key << "host_workers" << YAML::Value << *p.host_workers;
  if (p.method) out << YAML::Key << "method" << YAML::Value << *p.method;
  if (p.predicted) {
    out << YAML::Key << "predicted" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "update_s" << YAML::Value << exact_number(p.predicted->update_s);
    out << YAML::Key << "step_s" << YAML::Value << exact_number(p.predicted->step_s);
    out << YAML::Key << "binding" << YAML::Value << p.predicted->binding;
    out << YAML::EndMap;
  }
  out << YAML::Key << "blocks" << YAML::Value << YAML::BeginSeq;
  for (const runtime::BlockPlacement& b : p.blocks) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "label" << YAML::Value << YAML::DoubleQuoted << b.label;
    out << YAML::Key << "tier" << YAML::Value << std::string(platform::to_string(b.home));
    out << YAML::Key << "update" << YAML::Value << (b.update_on_device ? "device" : "host");
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return "# asteria plan: where each optimizer block's state rests (tier) and where its update runs.\n"
         "# Use with asteria sim|synth|train --placement-file FILE.\n" +
         std::string(out.c_str()) + "\n";
}

void write_plan_file(const std::filesystem::path& file, const PlanFile& plan) {
  io::write_file_atomically(file, plan_file_text(plan));
}

}  // namespace asteria::cli

// Model files (experiments/models/*.yaml): any text reads or is rejected with an InputError, and
// what reads passes validate(), gives whole head dimensions, builds a workload model (whose
// counts must not overflow) and has text that JSON output (summary.json) can hold.
#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/workload_model.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  workload::ModelConfig config;
  try {
    config = workload::parse_model_config(fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  workload::validate(config, "fuzz.yaml");  // throws (and so fails here) if parsing let it slip
  fuzz::require(config.head_dim() * config.heads == config.d_model, "heads divide d_model");
  fuzz::require(config.kv_heads <= config.heads, "kv_heads <= heads");
  const workload::WorkloadModel model = workload::build_workload(config);
  fuzz::require(model.totals.parameters > 0 && model.totals.tokens == config.tokens(), "the workload model adds up");
  // No catch: nlohmann::json throws on text that is not UTF-8.
  const nlohmann::json text = {{"name", config.name}, {"origin", config.origin}};
  fuzz::require(!text.dump().empty(), "name and origin write as JSON");
  return 0;
}

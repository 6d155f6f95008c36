// Hardware profiles (YAML): any text reads or is rejected with an InputError, a profile that reads
// writes back (profile_to_yaml) to text that reads to an equal profile, and its names can go
// into JSON output (summary.json).
#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "hwmodels/profile_loader.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  hw::HardwareProfile profile;
  try {
    profile = hw::parse_profile(fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  // No catch: the writer's output must read back.
  const hw::HardwareProfile again = hw::parse_profile(hw::profile_to_yaml(profile), "fuzz.yaml");
  fuzz::require(again == profile, "parse_profile(profile_to_yaml(p)) == p");
  // No catch: nlohmann::json throws on text that is not UTF-8.
  const nlohmann::json names = {{"name", profile.name}, {"gpu", profile.gpu.model}, {"cpu", profile.cpu.model}};
  fuzz::require(!names.dump().empty(), "names write as JSON");
  return 0;
}

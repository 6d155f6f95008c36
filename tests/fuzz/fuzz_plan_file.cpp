// Plan files (asteria plan --out): any text reads or is rejected with an InputError; a plan that
// reads writes a text that reads back to the same plan, which writes the same text again.
#include <string>

#include "apps/asteria/plan_file.hpp"
#include "core/common/error.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  cli::PlanFile plan;
  try {
    plan = cli::parse_plan_file(std::string(fuzz::as_text(data, size)), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  const std::string text = cli::plan_file_text(plan);
  cli::PlanFile again;
  try {
    again = cli::parse_plan_file(text, "written.yaml");
  } catch (const InputError&) {
    fuzz::require(false, "a plan that reads writes a text that reads");
  }
  fuzz::require(again.settings == plan.settings, "the planned settings read back");
  fuzz::require(again.blocks.size() == plan.blocks.size(), "every block reads back");
  for (std::size_t i = 0; i < plan.blocks.size(); ++i)
    fuzz::require(again.blocks[i].label == plan.blocks[i].label && again.blocks[i].home == plan.blocks[i].home &&
                      again.blocks[i].update_on_device == plan.blocks[i].update_on_device,
                  "each block reads back as written");
  fuzz::require(cli::plan_file_text(again) == text, "written again, the same text");
  return 0;
}

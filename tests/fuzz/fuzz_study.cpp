// Study files (experiments/studies/*.yaml): any text reads or is rejected with an InputError;
// every point of a study that reads has the core settings and a unique slug, and gives sim
// arguments.
#include <set>
#include <string>

#include "apps/asteria/study_spec.hpp"
#include "core/common/error.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  namespace study = cli::study;
  study::StudySpec spec;
  try {
    spec = study::parse_study(fuzz::as_text(data, size), "fuzz.yaml", "/studies");
  } catch (const InputError&) {
    return 0;
  }
  fuzz::require(!spec.points.empty(), "a study has at least one point");
  std::set<std::string> slugs;
  for (const study::StudyPoint& point : spec.points) {
    for (std::string_view key : study::kCoreSettings)
      fuzz::require(point[key].has_value(), "every point has the core settings");
    fuzz::require(slugs.insert(point.slug).second, "slugs are unique");
    fuzz::require(point.staleness() >= 0, "staleness >= 0");
    fuzz::require(study::sim_arguments(point, "/runs/x").size() > 2 * study::kCoreSettings.size(),
                  "sim arguments carry the core settings");
  }
  return 0;
}

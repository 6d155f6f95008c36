#include "hwmodels/profile_loader.hpp"

#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "core/common/error.hpp"
#include "hwmodels/profile_reader.hpp"
#include "hwmodels/profile_schema.hpp"
#include "hwmodels/units.hpp"

namespace asteria::hw {
namespace {

YAML::Node parse_yaml(std::string_view yaml_text, const std::string& source) {
  try {
    return YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    std::string where = "document";
    if (e.mark.line >= 0) {
      where = "line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1);
    }
    throw InputError(source, where, "expected valid YAML (" + e.msg + ")");
  }
}

// Constraints that tie fields together.
void check_consistency(const HardwareProfile& profile, const std::string& source) {
  const HostMemorySpec& host = profile.host_memory;
  const double pool = host.bytes.value * host.usable_fraction.value;
  if (host.unified && profile.gpu.memory_bytes.value > pool) {
    throw InputError(source, "gpu.memory_bytes",
                     "expected at most host_memory.bytes x host_memory.usable_fraction (" +
                         format_amount(pool, UnitClass::bytes) + ") on unified memory, found " +
                         format_amount(profile.gpu.memory_bytes.value, UnitClass::bytes));
  }
  if (profile.device != DeviceKind::cpu) return;
  // A CPU device computes in host memory on host cores.
  if (!host.unified)
    throw InputError(source, "host_memory.unified",
                     "expected true with device: cpu (the device stream's memory is host memory), found false");
  const double threads = profile.gpu.device_threads.value;
  if (threads > profile.cpu.cores.value)
    throw InputError(source, "gpu.device_threads",
                     "expected at most cpu.cores (" + format_amount(profile.cpu.cores.value, UnitClass::dimensionless) +
                         ") with device: cpu, found " + format_amount(threads, UnitClass::dimensionless));
}

}  // namespace

HardwareProfile parse_profile(std::string_view yaml_text, const std::string& source) {
  const YAML::Node root = parse_yaml(yaml_text, source);
  if (!root.IsMap()) {
    throw InputError(source, "document",
                     "expected a mapping with the sections name, description, gpu, cpu, host_memory, "
                     "host_to_device, device_to_host, nvme, node");
  }
  HardwareProfile profile;
  try {
    schema::Reader reader(root, "", source);
    schema::describe(reader, profile);
    reader.reject_unknown_keys();
  } catch (const YAML::Exception& e) {  // a malformed node the checks above did not foresee
    throw InputError(source, "document", "expected a well-formed profile (" + e.msg + ")");
  }
  check_consistency(profile, source);
  profile.origin = source;
  return profile;
}

HardwareProfile load_profile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "file", "expected a readable profile file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), path.string());
}

}  // namespace asteria::hw

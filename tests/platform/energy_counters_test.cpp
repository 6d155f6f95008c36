// The machine's energy counters, on a powercap tree written here: package zones counted, their
// sub-zones left out, a wrap at the counter's range counted through, unreadable zones named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/real/energy_counters.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::real {
namespace {

void zone(const std::filesystem::path& dir, const std::string& name, double energy_uj, double range_uj) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "name") << name << "\n";
  std::ofstream(dir / "energy_uj") << static_cast<long long>(energy_uj) << "\n";
  if (range_uj > 0) std::ofstream(dir / "max_energy_range_uj") << static_cast<long long>(range_uj) << "\n";
}

TEST(EnergyCounters, CountTheCpuPackagesAcrossAWrap) {
  testing::TempDir root;
  zone(root.path() / "intel-rapl:0", "package-0", 1'000'000, 10'000'000);
  zone(root.path() / "intel-rapl:0:0", "core", 500'000, 10'000'000);  // a part of package 0
  zone(root.path() / "intel-rapl:1", "package-1", 9'000'000, 10'000'000);
  EnergyCounters counters(root.path(), /*nvml=*/false);
  ASSERT_TRUE(counters.available());
  EXPECT_EQ(counters.description(), "RAPL package-0, package-1");
  EXPECT_DOUBLE_EQ(counters.joules(), 0.0);
  zone(root.path() / "intel-rapl:0", "package-0", 4'000'000, 10'000'000);  // +3 J
  zone(root.path() / "intel-rapl:0:0", "core", 9'500'000, 10'000'000);     // not counted
  zone(root.path() / "intel-rapl:1", "package-1", 2'000'000, 10'000'000);  // wrapped: +1 J to the range, +2 J
  EXPECT_DOUBLE_EQ(counters.joules(), 3.0 + 3.0);
  zone(root.path() / "intel-rapl:0", "package-0", 4'500'000, 10'000'000);
  EXPECT_DOUBLE_EQ(counters.joules(), 6.5);
  counters.restart();
  EXPECT_DOUBLE_EQ(counters.joules(), 0.0);
}

TEST(EnergyCounters, SayWhatIsMissing) {
  testing::TempDir root;
  EnergyCounters none(root.path() / "absent", false);
  EXPECT_FALSE(none.available());
  EXPECT_NE(none.description().find("no energy counter"), std::string::npos) << none.description();
  EXPECT_DOUBLE_EQ(none.joules(), 0.0);
  zone(root.path() / "intel-rapl:0", "package-0", 1'000, 0);  // no range file: not readable
  EnergyCounters unreadable(root.path(), false);
  EXPECT_FALSE(unreadable.available());
  EXPECT_NE(unreadable.description().find("package-0 not readable"), std::string::npos) << unreadable.description();
}

}  // namespace
}  // namespace asteria::real

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "hwmodels/profile_loader.hpp"
#include "hwmodels/profile_schema.hpp"

namespace asteria::hw {
namespace {

// Visits a profile the way the loader does and checks every quantity against its measure.
class QuantityChecker {
 public:
  explicit QuantityChecker(std::string path = {}) : path_(std::move(path)) {}

  void text(std::string_view key, std::string& value) { EXPECT_FALSE(value.empty()) << field(key); }
  void flag(std::string_view, bool&) {}
  void optional_flag(std::string_view, bool&, bool) {}
  void optional_integer(std::string_view key, int& value, int) { EXPECT_GE(value, 1) << field(key); }
  void device_kind(std::string_view, DeviceKind&) {}
  void optional_quantity(std::string_view key, Quantity& q, schema::Measure measure) {
    // A GPU's default is one thread; shipped profiles leave gpu.wake_latency and
    // cpu.contention_slowdown out (0: not given; no public figure, calibrate measures it), and
    // power.package_cap where GPU and CPU are separate packages.
    if (q != defaults_.gpu.device_threads && q != defaults_.gpu.wake_latency &&
        q != defaults_.cpu.contention_slowdown && q != defaults_.power.package_cap)
      quantity(key, q, measure);
  }
  template <class F>
  void section(std::string_view key, F&& describe_fields) {
    QuantityChecker child(field(key));
    describe_fields(child);
    count_ += child.count_;
  }
  template <class F>
  void optional_section(std::string_view key, F&& describe_fields) {
    section(key, describe_fields);  // every shipped profile gives its power
  }
  template <class F>
  void size_classes(std::string_view key, GemmEfficiency&, F&& describe_fields) {
    section(key, describe_fields);
  }
  void quantity(std::string_view key, Quantity& q, schema::Measure measure) {
    ++count_;
    const std::string name = field(key);
    EXPECT_TRUE(std::isfinite(q.value)) << name;
    EXPECT_GT(q.value, 0.0) << name;  // every shipped number, latencies included, is positive
    EXPECT_GE(q.source.size(), 10u) << name << ": a source says where the number comes from";
    // A '#' after a space starts a YAML comment in plain text and would cut the source short.
    EXPECT_EQ(std::count(q.source.begin(), q.source.end(), '('), std::count(q.source.begin(), q.source.end(), ')'))
        << name << ": " << q.source;
    if (measure == schema::Measure::fraction) {
      EXPECT_LE(q.value, 1.0) << name;
    }
    if (measure == schema::Measure::count) {
      EXPECT_EQ(q.value, std::floor(q.value)) << name;
    }
  }
  int count() const { return count_; }

 private:
  std::string field(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  std::string path_;
  int count_ = 0;
  HardwareProfile defaults_;
};

const std::vector<std::string> kShipped = {"a100-40gb",   "a100-80gb",  "a100-80gb-1gpu-host", "a100-80gb-4gpu-host",
                                           "gb10",        "gh200",      "gh200-480gb",         "gh200-alps",
                                           "h100-pcie-host"};

TEST(ShippedProfiles, AreListed) { EXPECT_EQ(shipped_profile_names(), kShipped); }

TEST(ShippedProfiles, LoadWithPositiveSourcedValues) {
  for (const std::string& name : kShipped) {
    SCOPED_TRACE(name);
    HardwareProfile p = load_profile(find_profile(name));
    EXPECT_EQ(p.name, name);
    EXPECT_NE(p.origin.find(name + ".yaml"), std::string::npos);
    QuantityChecker checker;
    schema::describe(checker, p);
    // gpu 7 + 4 efficiency classes, cpu 7, host memory 2, links 2 x 2, nvme 4, node 6, power 9
    // (and a SoC's package cap)
    EXPECT_EQ(checker.count(), 46 + (p.power.package_cap.value > 0.0 ? 1 : 0));
    // A resource draws more at work than idle; a run reports energy.
    EXPECT_TRUE(p.power.has_power());
    EXPECT_GT(p.power.gpu_busy.value, p.power.gpu_idle.value);
    EXPECT_GT(p.power.nvme_busy.value, p.power.nvme_idle.value);
    EXPECT_GT(p.power.nic_busy.value, p.power.nic_idle.value);
    EXPECT_EQ(p.device, DeviceKind::gpu);
    // Larger products reach more of the peak.
    for (std::size_t i = 1; i < GemmEfficiency::kClasses; ++i)
      EXPECT_LT(p.gpu.gemm_efficiency.by_class(i - 1).value, p.gpu.gemm_efficiency.by_class(i).value);
    EXPECT_GE(p.gpu.bf16_flops.value, p.gpu.fp32_flops.value);
    EXPECT_EQ(p.node.nodes, 1);
  }
}

TEST(ShippedProfiles, CarryTheKeyFigures) {
  const HardwareProfile gh200 = load_profile(find_profile("gh200"));
  EXPECT_EQ(gh200.host_to_device.bandwidth.value, 375e9);
  EXPECT_EQ(gh200.host_to_device.bandwidth.provenance, Provenance::measured);
  EXPECT_EQ(gh200.device_to_host.bandwidth.value, 297e9);
  EXPECT_EQ(gh200.gpu.memory_bytes.value, 96e9);
  EXPECT_EQ(gh200.cpu.cores.value, 72.0);
  EXPECT_NEAR(gh200.gpu.gemm_efficiency.from_4096.value, 828.6 / 989.0, 1e-3);
  // XLA's sm_90 table: 2048³ at 632.0 TFLOP/s, 27.18 us per product, 23.18 us without the 4 us
  // launch: 2 x 2048³ / (989e12 x 23.18e-6) = 0.749.
  EXPECT_NEAR(gh200.gpu.gemm_efficiency.below_4096.value, 0.749, 1e-3);
  EXPECT_EQ(gh200.cpu.task_latency.value, 20e-6);
  EXPECT_FALSE(gh200.host_memory.unified);
  EXPECT_NE(gh200.description.find("480 GB"), std::string::npos);

  const HardwareProfile alps = load_profile(find_profile("gh200-alps"));
  EXPECT_EQ(alps.units_per_node(), 4);
  EXPECT_EQ(alps.node.gpu_link.bandwidth.value, 150e9);
  EXPECT_EQ(alps.node.nics_per_node.value, 4.0);
  EXPECT_EQ(alps.gpu, gh200.gpu);  // the same superchip
  EXPECT_EQ(alps.cpu, gh200.cpu);
  EXPECT_EQ(alps.power, gh200.power);

  // GB10's power from the SoC's measured idle (31.5 W) and CPU stress (127 W) over 20 cores.
  const HardwareProfile spark = load_profile(find_profile("gb10"));
  EXPECT_DOUBLE_EQ(spark.power.gpu_idle.value + spark.power.cpu_idle.value + spark.power.memory.value, 31.5);
  EXPECT_DOUBLE_EQ(spark.power.cpu_core_busy.value, 4.8);
  EXPECT_NE(spark.power.cpu_core_busy.source.find("127 W"), std::string::npos);

  // The 480 GB LPDDR5X option: four times the host memory, slower (HARDWARE.md: 384 GB/s peak,
  // STREAM 288-342 GB/s), everything else the same superchip.
  const HardwareProfile big_host = load_profile(find_profile("gh200-480gb"));
  EXPECT_EQ(big_host.host_memory.bytes.value, 480e9);
  EXPECT_EQ(big_host.host_memory.bytes.provenance, Provenance::peak);
  EXPECT_EQ(big_host.cpu.memory_bandwidth.value, 288e9);
  EXPECT_EQ(big_host.cpu.memory_bandwidth.provenance, Provenance::measured);
  EXPECT_NE(big_host.cpu.memory_bandwidth.source.find("288-342"), std::string::npos);
  EXPECT_EQ(big_host.gpu, gh200.gpu);
  EXPECT_EQ(big_host.host_to_device, gh200.host_to_device);
  EXPECT_EQ(big_host.device_to_host, gh200.device_to_host);
  EXPECT_EQ(big_host.nvme, gh200.nvme);
  EXPECT_EQ(big_host.node, gh200.node);
  EXPECT_EQ(big_host.host_memory.usable_fraction, gh200.host_memory.usable_fraction);
  EXPECT_FALSE(big_host.host_memory.unified);
  EXPECT_EQ(big_host.cpu.cores, gh200.cpu.cores);
  EXPECT_EQ(big_host.cpu.eigh_seconds_per_n3, gh200.cpu.eigh_seconds_per_n3);

  const HardwareProfile gb10 = load_profile(find_profile("gb10"));
  EXPECT_TRUE(gb10.host_memory.unified);
  EXPECT_EQ(gb10.host_memory.bytes.value, 128.0 * 1024 * 1024 * 1024);
  EXPECT_NEAR(gb10.host_memory.usable_fraction.value, 119.7 / 128.0, 1e-3);
  EXPECT_EQ(gb10.cpu.cores.value, 20.0);
  EXPECT_EQ(gb10.units_per_node(), 1);

  const HardwareProfile h100 = load_profile(find_profile("h100-pcie-host"));
  EXPECT_EQ(h100.host_to_device.bandwidth.value, 55.43e9);
  EXPECT_EQ(h100.device_to_host.bandwidth.value, 55.06e9);
  EXPECT_EQ(h100.node.nic.bandwidth.value, 50e9);  // 400 Gb/s
  EXPECT_NEAR(h100.gpu.gemm_efficiency.from_4096.value, 794.5 / 989.0, 1e-3);
  EXPECT_EQ(h100.gpu.gemm_efficiency.below_256, gh200.gpu.gemm_efficiency.below_256);  // the same sm_90 table
  // GB10: 0.738 x 16 tiles / 48 SMs for a 512³ product.
  EXPECT_NEAR(gb10.gpu.gemm_efficiency.below_1024.value, 0.738 * 16.0 / 48.0, 1e-3);
}

TEST(ShippedProfiles, RoundTripThroughYaml) {
  for (const std::string& name : kShipped) {
    SCOPED_TRACE(name);
    const HardwareProfile p = load_profile(find_profile(name));
    EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
  }
}

TEST(ShippedProfiles, FindProfileTakesPathsAndNames) {
  const auto by_name = find_profile("gh200");
  EXPECT_EQ(by_name.filename(), "gh200.yaml");
  EXPECT_EQ(find_profile(by_name.string()), by_name);  // an existing path is returned as is
  EXPECT_EQ(find_profile("gh200.yaml").filename(), "gh200.yaml");
  try {
    find_profile("gh300");
    ADD_FAILURE() << "found a profile that does not exist";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "gh300");
    EXPECT_NE(std::string(e.what()).find("gb10, gh200, gh200-480gb, gh200-alps, h100-pcie-host"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(find_profile("no/such/dir/gh200"), InputError);
}

}  // namespace
}  // namespace asteria::hw

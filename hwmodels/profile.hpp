#pragma once
// A hardware profile: the machine a simulation runs on, as numbers with their provenance.
//
// A profile describes one *unit* — one GPU with the CPU cores, host memory, host link and NVMe
// that serve it (a GH200 superchip; a DGX Spark; one GPU of a PCIe server with its share of the
// host) — and the node that groups units (GPU-GPU links, NICs, node count). All values are SI:
// bytes, seconds, FLOP/s, bytes/s. Every value keeps where it came from (vendor peak,
// measurement, or derived from other numbers, with how) so a study can say what it rests on.
// The on-disk format (YAML) and its loader are described in hwmodels/README.md.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asteria::hw {

enum class Provenance { peak, measured, derived };
std::string_view to_string(Provenance p) noexcept;

// One number of a profile: SI value, provenance, source (a citation, or how it was derived).
struct Quantity {
  double value = 0.0;
  Provenance provenance = Provenance::derived;
  std::string source;

  bool operator==(const Quantity&) const = default;
};

// A one-way link: time of a transfer of B bytes alone on it = latency + B / bandwidth;
// concurrent transfers share the bandwidth.
struct LinkSpec {
  Quantity bandwidth;  // bytes/s, one direction
  Quantity latency;    // s

  bool operator==(const LinkSpec&) const = default;
};

struct GpuSpec {
  std::string model;            // "H100 96GB HBM3 (GH200)"
  Quantity fp32_flops;          // FLOP/s, non-tensor peak
  Quantity bf16_flops;          // FLOP/s, dense tensor-core peak
  Quantity gemm_efficiency;     // fraction of peak that large GEMMs reach (dimensionless, (0, 1])
  Quantity memory_bytes;        // device memory (HBM), or the unified pool's share on GB10
  Quantity memory_bandwidth;    // bytes/s, achievable
  Quantity launch_latency;      // s per kernel
  Quantity eigh_seconds_per_n3; // syevd (with vectors) of an n x n fp32 matrix takes c·n³ s
  Quantity qr_seconds_per_n3;   // orthogonalization (QR) of n x n takes c·n³ s

  bool operator==(const GpuSpec&) const = default;
};

struct CpuSpec {
  std::string model;              // "Grace, 72 Neoverse V2"
  Quantity cores;                 // cores serving this unit (integer valued)
  Quantity gemm_flops_per_core;   // FP32 FLOP/s one core reaches in SGEMM
  Quantity memory_bandwidth;      // bytes/s of host memory as the cores see it
  Quantity eigh_seconds_per_n3;   // one refresh worker (threads_per_worker threads): c·n³ s
  Quantity qr_seconds_per_n3;     // one refresh worker: c·n³ s
  Quantity threads_per_worker;    // BLAS threads one refresh worker uses (integer valued)

  bool operator==(const CpuSpec&) const = default;
};

struct HostMemorySpec {
  Quantity bytes;            // capacity serving this unit
  Quantity usable_fraction;  // of `bytes`, what a process can really use (OS, driver, CUDA context)
  // GB10-style unified memory: GPU and CPU allocate from the same pool; then the device tier and
  // the host tier together may not exceed bytes·usable_fraction (GpuSpec::memory_bytes is the
  // largest share the GPU may take).
  bool unified = false;

  bool operator==(const HostMemorySpec&) const = default;
};

struct NvmeSpec {
  Quantity bytes;
  Quantity read_bandwidth;   // bytes/s, sustained sequential
  Quantity write_bandwidth;  // bytes/s, sustained sequential
  Quantity latency;          // s per request

  bool operator==(const NvmeSpec&) const = default;
};

struct NodeSpec {
  Quantity units_per_node;  // GPUs (units) per node (integer valued)
  LinkSpec gpu_link;        // GPU-GPU inside a node, per direction per pair (NVLink)
  Quantity nics_per_node;   // (integer valued)
  LinkSpec nic;             // one NIC, per direction
  int nodes = 1;            // a parameter of the study, not of the hardware

  bool operator==(const NodeSpec&) const = default;
};

struct HardwareProfile {
  std::string name;         // "gh200"
  std::string description;
  std::string origin;       // file it was read from, or "asteria calibrate on <host>"
  GpuSpec gpu;
  CpuSpec cpu;
  HostMemorySpec host_memory;
  LinkSpec host_to_device;  // H2D: NVLink-C2C or PCIe
  LinkSpec device_to_host;  // D2H
  NvmeSpec nvme;
  NodeSpec node;

  int units_per_node() const noexcept { return static_cast<int>(node.units_per_node.value); }
  int total_units() const noexcept { return units_per_node() * node.nodes; }

  bool operator==(const HardwareProfile&) const = default;
};

}  // namespace asteria::hw

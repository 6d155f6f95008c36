#pragma once
// A hardware profile: the machine a simulation runs on, as numbers with their provenance.
//
// A profile describes one *unit* — one GPU with the CPU cores, host memory, host link and NVMe
// that serve it (a GH200 superchip; a DGX Spark; one GPU of a PCIe server with its share of the
// host) — and the node that groups units (GPU-GPU links, NICs, node count). All values are SI:
// bytes, seconds, FLOP/s, bytes/s. Every value keeps where it came from (vendor peak,
// measurement, or derived from other numbers, with how) so a study can say what it rests on.
// The on-disk format (YAML) and its loader are described in hwmodels/README.md.
#include <array>
#include <cstddef>
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

// What runs the device stream: a GPU, or host cores (the real backend's CPU mode, whose model
// GEMMs run on OpenBLAS threads). With `cpu`, GpuSpec describes that stream on host cores.
enum class DeviceKind { gpu, cpu };
std::string_view to_string(DeviceKind kind) noexcept;

// The fraction of peak that GEMMs reach, by size class of Cost::dimension (the matrix size that
// dominates the product): small products cannot fill the machine, so they reach less.
struct GemmEfficiency {
  static constexpr std::size_t kClasses = 4;
  // Field names, in class order; class i holds dimensions below kUpperBounds[i] (the last: all).
  static constexpr std::array<std::string_view, kClasses> kNames{"below_256", "below_1024", "below_4096",
                                                                 "from_4096"};
  static constexpr std::array<std::int64_t, kClasses - 1> kUpperBounds{256, 1024, 4096};

  Quantity below_256;   // dimension < 256
  Quantity below_1024;  // 256 <= dimension < 1024
  Quantity below_4096;  // 1024 <= dimension < 4096
  Quantity from_4096;   // dimension >= 4096, and dimension 0 (no size given: the large-GEMM figure)

  // The class of `dimension` (0 ... kClasses - 1).
  static std::size_t class_of(std::int64_t dimension) noexcept;
  const Quantity& by_class(std::size_t index) const noexcept;
  Quantity& by_class(std::size_t index) noexcept;
  double for_dimension(std::int64_t dimension) const noexcept { return by_class(class_of(dimension)).value; }

  // One figure for every class (how a profile with a single gemm_efficiency reads).
  GemmEfficiency& operator=(const Quantity& every_class);

  bool operator==(const GemmEfficiency&) const = default;
};

struct GpuSpec {
  std::string model;            // "H100 96GB HBM3 (GH200)"
  Quantity fp32_flops;          // FLOP/s, non-tensor peak
  Quantity bf16_flops;          // FLOP/s, dense tensor-core peak
  GemmEfficiency gemm_efficiency;  // fraction of the peak GEMMs reach, by size class
  Quantity memory_bytes;        // device memory (HBM), or the unified pool's share on GB10
  Quantity memory_bandwidth;    // bytes/s, achievable
  Quantity launch_latency;      // s per kernel
  Quantity eigh_seconds_per_n3; // syevd (with vectors) of an n x n fp32 matrix takes c·n³ s
  Quantity qr_seconds_per_n3;   // orthogonalization (QR) of n x n takes c·n³ s
  // Host cores the device stream occupies (integer valued): the OpenBLAS threads of a CPU
  // device; a GPU's stream is driven by one host thread.
  Quantity device_threads{1.0, Provenance::derived, "a GPU's device stream is driven by one host thread"};
  // Seconds per flop of the arithmetic of memory-bound (elementwise) kernels, on top of their
  // traffic: square roots and divisions that a CPU computes far below its GEMM rate. 0: free.
  Quantity elementwise_seconds_per_flop{0.0, Provenance::derived, "not given: elementwise arithmetic is free"};
  // Seconds from submitting work to an idle device stream until it starts: a CPU device's stream
  // thread waking from its condition variable; a GPU stream's idle-to-busy start latency. Work
  // queued behind a busy stream does not pay it. 0: an idle stream starts at once.
  Quantity wake_latency{0.0, Provenance::derived, "not given: an idle device stream starts work at once"};

  double efficiency_for(std::int64_t dimension) const noexcept { return gemm_efficiency.for_dimension(dimension); }

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
  // Fixed cost of one piece of host work (s): handing a task to a worker, a LAPACK call's setup.
  Quantity task_latency{0.0, Provenance::derived, "not given: no fixed cost per host task"};
  // Seconds the thread that issues the step plan spends per op (bookkeeping, a launch's host
  // side): while it issues, the device may wait for work. 0: issuing is free.
  Quantity issue_latency{0.0, Provenance::derived, "not given: issuing a plan op is free"};
  // One worker's seconds per flop of elementwise arithmetic (an update on the host), beside its
  // traffic. 0: free.
  Quantity elementwise_seconds_per_flop{0.0, Provenance::derived, "not given: elementwise arithmetic is free"};
  // How much slower one core computes while every other core of the unit computes too (0.25:
  // 25% slower), through what they share: power and clocks, caches, memory. With k of the other
  // cores busy a core is slower by contention_slowdown · k / (cores - 1). 0: no such effect.
  Quantity contention_slowdown{0.0, Provenance::derived, "not given: cores do not slow one another"};

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
  // Each NIC sits on its GPU's PCIe switch (GPUDirect RDMA without crossing a CPU), as in DGX
  // nodes; false where the NICs hang off the CPU (GH200: Grace). NCCL runs its LL128 protocol
  // between nodes only in the first case.
  bool nic_beside_gpu = false;
  int nodes = 1;            // a parameter of the study, not of the hardware

  bool operator==(const NodeSpec&) const = default;
};

// What the resources draw (W), from which a run's energy follows (hwmodels/energy.hpp): each
// draws its idle power for the whole run and its busy power while it works. Per unit, as the
// gpu, cpu, host_memory and nvme sections describe a unit's share: its GPU (busy while its
// stream runs work), the CPU serving it (idle, plus cpu_core_busy for each core a host worker
// keeps busy), its host memory, its NVMe drive; per node: each NIC. Absent from a profile: zero,
// and a run reports no energy (has_power()).
struct PowerSpec {
  Quantity gpu_idle{0.0, Provenance::derived, "not given"};
  Quantity gpu_busy{0.0, Provenance::derived, "not given"};
  Quantity cpu_idle{0.0, Provenance::derived, "not given"};       // the unit's CPU, its cores idle
  Quantity cpu_core_busy{0.0, Provenance::derived, "not given"};  // added per busy core
  Quantity memory{0.0, Provenance::derived, "not given"};         // the unit's host memory, on
  Quantity nvme_idle{0.0, Provenance::derived, "not given"};
  Quantity nvme_busy{0.0, Provenance::derived, "not given"};
  Quantity nic_idle{0.0, Provenance::derived, "not given"};       // one NIC
  Quantity nic_busy{0.0, Provenance::derived, "not given"};       // while it moves a collective's bytes
  // GPU, CPU and memory sharing one package (a SoC's TDP): their mean draw at most this; 0: none.
  Quantity package_cap{0.0, Provenance::derived, "not given"};

  bool has_power() const noexcept { return gpu_busy.value > 0.0 || cpu_idle.value > 0.0; }
  bool operator==(const PowerSpec&) const = default;
};

struct HardwareProfile {
  std::string name;         // "gh200"
  std::string description;
  std::string origin;       // file it was read from, or "asteria calibrate on <host>"
  DeviceKind device = DeviceKind::gpu;  // cpu: `gpu` describes the device stream on host cores
  GpuSpec gpu;
  CpuSpec cpu;
  HostMemorySpec host_memory;
  LinkSpec host_to_device;  // H2D: NVLink-C2C or PCIe
  LinkSpec device_to_host;  // D2H
  NvmeSpec nvme;
  NodeSpec node;
  PowerSpec power;

  int units_per_node() const noexcept { return static_cast<int>(node.units_per_node.value); }
  int total_units() const noexcept { return units_per_node() * node.nodes; }

  bool operator==(const HardwareProfile&) const = default;
};

}  // namespace asteria::hw

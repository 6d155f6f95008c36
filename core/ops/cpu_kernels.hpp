#pragma once
// The CPU implementation of every operation (operation.hpp): BLAS for the products, and for the
// rules and reductions loops compiled once per instruction set and chosen at run time for the
// processor at hand. The instruction sets give the same bits: rules are element-wise and never
// contracted into fused multiply-adds, and reductions sum in a fixed lane and piece order.
// Used by CpuDevice, and by Device's host fallback for operations a backend declines.
#include <string_view>
#include <vector>

#include "core/ops/operation.hpp"
#include "core/ops/parallel.hpp"

namespace asteria::ops {

// Vector instruction sets the loops are compiled for. x86-64: SSE2 (generic), AVX2, AVX-512
// (F, VL, BW, DQ). Elsewhere only the generic build (on AArch64 that is NEON, its baseline).
enum class CpuIsa { generic, avx2, avx512 };

std::string_view to_string(CpuIsa isa) noexcept;
// The widest instruction set this processor runs.
CpuIsa detect_cpu_isa() noexcept;
// Every instruction set this processor runs, narrowest first.
std::vector<CpuIsa> supported_cpu_isas();

struct CpuContext {
  CpuIsa isa = CpuIsa::generic;
  ParallelRunner* runner = nullptr;  // null: the calling thread alone
};

// Runs a checked operation whose operands are host memory.
void run_on_cpu(const Operation& op, const CpuContext& context);

}  // namespace asteria::ops

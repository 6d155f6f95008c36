#pragma once
// Each optimizer's figures as pure functions of shapes and hyperparameters: the state a block
// lays out, its refresh schedule, what its refresh job reports, what its every-step phases cost.
//
// Why: shape-only ("data-free") simulations of a 7B model need these figures without
// allocating any state, and the real blocks (AdamWBlock, ShampooBlock, SoapBlock,
// KlShampooBlock, MuonBlock) build their BlockState, answer refresh_due() and cost their refresh
// jobs through these same functions, so the simulated and the real numbers cannot drift apart.
// tests/optim/shape_model_test.cpp drives the real blocks and compares.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/optim/block_state.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/platform/cost.hpp"

namespace asteria::optim {

// The tensors a rows x cols block's state holds, in the order, with the names, shapes and arena
// offsets (in elements) its BlockState lays them out. Throws InputError for negative sizes.
std::vector<TensorSlot> state_layout(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols);

// The block state's integer counters, in order.
std::vector<std::string> state_counters(OptimizerKind kind, const Hyperparameters& hp);

// The counter of state_counters() that counts the gradients the block's statistics have
// absorbed (accumulate calls); empty for optimizers without statistics, which never refresh.
std::string_view statistics_counter(OptimizerKind kind) noexcept;

// BlockState::tensor_bytes() of that layout at `element_bytes` per value.
std::size_t state_bytes(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols,
                        std::size_t element_bytes);

// Steps between a refresh and the first update that uses it: 0 for Shampoo (the step's own
// update), 1 for SOAP and KL-Shampoo (the next step's), 0 for those without a refresh.
int activation_delay(OptimizerKind kind) noexcept;

// Whether a refresh is due once the block's statistics have absorbed `statistics_updates`
// gradients. Every optimizer's schedule depends on that count alone (not on the driver's step):
// a block that skipped a non-finite gradient, or was restored from a file, keeps its own rhythm.
bool refresh_due_after(OptimizerKind kind, const Hyperparameters& hp, std::int64_t statistics_updates);

// What the block's refresh job's cost() reports before it runs. `first`: no refresh of the block
// has been published yet (SOAP and KL-Shampoo then compute a full eigh, later a warm power step
// and an orthogonalization; Shampoo recomputes its roots either way, with coupled Newton at its
// iteration estimate). Empty for AdamW and Muon. Throws InputError as ShampooBlock does for a
// root order coupled Newton cannot take.
std::vector<platform::Cost> refresh_cost(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols,
                                         std::size_t element_bytes, bool first);
// The same job's parts (RefreshJob::parts, part_cost): the left factor's pieces, then the
// right's; together refresh_cost. Empty for AdamW and Muon.
std::vector<std::vector<platform::Cost>> refresh_part_costs(OptimizerKind kind, const Hyperparameters& hp, index rows,
                                                            index cols, std::size_t element_bytes, bool first);

// What the block's refresh job's bytes() reports (snapshot and result buffers, as they are once
// the job has run); 0 for AdamW and Muon.
std::size_t refresh_job_bytes(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols,
                              std::size_t element_bytes);
// What the block's refresh job's result_bytes() reports (the result that data-parallel ranks
// share); 0 for AdamW and Muon.
std::size_t refresh_result_bytes(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols,
                                 std::size_t element_bytes);

// What the cheap, every-step phases cost on the device per rows x cols block, so a device model
// (or a simulator) can charge time for them when their numerics are not run. The counts follow
// ALGORITHMS.md; they are models (dominant terms, symmetric products at half the cost of a
// general one), not measurements.
struct PhaseCosts {
  platform::Cost accumulate;  // statistics update (AdamW: none, its moments move in apply)
  platform::Cost apply;       // the update with the active preconditioner
  platform::Cost publish;     // installing a finished refresh (copy; SOAP also rotates m)
};

PhaseCosts phase_costs(OptimizerKind kind, index rows, index cols, std::size_t element_bytes);

}  // namespace asteria::optim

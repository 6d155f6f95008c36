#pragma once
// A block that is only a shape: the optimizer of `kind` for a rows x cols block with no values
// at all, for shape-only ("data-free") runs. A 7B model's optimizer state is tens of gigabytes,
// yet a what-if study needs only when each block refreshes, what each refresh costs and how many
// bytes the block's state and its refresh jobs occupy. Every one of those figures comes from
// the shape model (shape_model.hpp), which the real blocks use too, so a ShapeBlock reports
// what the real block of that shape would when driven the same way:
//   - accumulate only counts gradients; the schedule is refresh_due_after(that count);
//   - snapshot() returns a job whose run() does nothing, with the real job's cost() (a full
//     refresh until the first publish, warm ones after) and bytes();
//   - apply() touches nothing; state() stays empty (state_bytes() says what it would hold).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::optim {

// A refresh job that carries the cost, the parts and the bytes of a real one and computes nothing.
template <Real T>
class ShapeRefreshJob final : public RefreshJob<T> {
 public:
  // `parts`: each part's pieces (refresh_part_costs); none: one part costing nothing.
  ShapeRefreshJob(Step stats_step, std::vector<std::vector<platform::Cost>> parts, std::size_t bytes,
                  std::size_t result_bytes)
      : RefreshJob<T>(stats_step), parts_(std::move(parts)), bytes_(bytes), result_bytes_(result_bytes) {
    if (parts_.empty()) parts_.emplace_back();
  }
  Status run() override { return Status::success(); }
  std::vector<platform::Cost> cost() const override {
    std::vector<platform::Cost> pieces;
    for (const auto& part : parts_) pieces.insert(pieces.end(), part.begin(), part.end());
    return pieces;
  }
  int parts() const override { return static_cast<int>(parts_.size()); }
  Status run_part(int /*part*/) override { return Status::success(); }
  std::vector<platform::Cost> part_cost(int part) const override { return parts_.at(static_cast<std::size_t>(part)); }
  std::size_t bytes() const override { return bytes_; }
  // The real job's size; the bytes travel (data-free runs move them in time), the values do not.
  std::size_t result_bytes() const override { return result_bytes_; }
  bool has_values() const override { return false; }

 private:
  std::vector<std::vector<platform::Cost>> parts_;
  std::size_t bytes_;
  std::size_t result_bytes_;
};

template <Real T>
class ShapeBlock final : public BlockOptimizer<T> {
 public:
  // Throws InputError for invalid hyperparameters (optim::validate), a negative size, or a root
  // order Shampoo's coupled Newton cannot take (as the real block does).
  ShapeBlock(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols)
      : BlockOptimizer<T>(rows, cols),
        kind_(kind),
        hp_(validated(hp)),
        first_refresh_(refresh_part_costs(kind, hp, rows, cols, sizeof(T), /*first=*/true)),
        warm_refresh_(refresh_part_costs(kind, hp, rows, cols, sizeof(T), /*first=*/false)),
        job_bytes_(refresh_job_bytes(kind, hp, rows, cols, sizeof(T))),
        result_bytes_(refresh_result_bytes(kind, hp, rows, cols, sizeof(T))) {}

  std::string_view name() const noexcept override { return to_string(kind_); }
  int activation_delay() const noexcept override { return optim::activation_delay(kind_); }

  void accumulate(ops::Device& /*device*/, linalg::ConstMatrixView<T> /*grad*/, Step /*t*/) override { ++accumulated_; }
  // As the real blocks: only optimizers with statistics count them.
  std::int64_t statistics_updates() const noexcept override {
    return statistics_counter(kind_).empty() ? 0 : accumulated_;
  }
  bool refresh_due_after(std::int64_t updates) const override { return optim::refresh_due_after(kind_, hp_, updates); }

  std::unique_ptr<RefreshJob<T>> snapshot(ops::Device& /*device*/, Step t) const override {
    if (statistics_counter(kind_).empty()) return nullptr;  // no refresh, as the real blocks
    // Until a refresh is published the next one starts cold, as the real blocks decide.
    return std::make_unique<ShapeRefreshJob<T>>(t, publications_ == 0 ? first_refresh_ : warm_refresh_, job_bytes_,
                                                result_bytes_);
  }
  // A receiving job holds the result's bytes only (the real receiving jobs' bytes()).
  std::unique_ptr<RefreshJob<T>> receiver(Step t, std::unique_ptr<RefreshJob<T>> /*spare*/) const override {
    if (statistics_counter(kind_).empty()) return nullptr;
    return std::make_unique<ShapeRefreshJob<T>>(t, publications_ == 0 ? first_refresh_ : warm_refresh_,
                                                result_bytes_, result_bytes_);
  }
  void publish(ops::Device& /*device*/, RefreshJob<T>& /*finished*/) override { ++publications_; }
  [[nodiscard]] bool apply(ops::Device& /*device*/, linalg::MatrixView<T> /*weights*/,
                           linalg::ConstMatrixView<T> /*grad*/, Step /*t*/) override {
    return true;
  }

  // Bytes the real block's state would hold (its BlockState::tensor_bytes()).
  std::size_t state_bytes() const { return optim::state_bytes(kind_, hp_, this->rows(), this->cols(), sizeof(T)); }
  OptimizerKind kind() const noexcept { return kind_; }
  std::int64_t publications() const noexcept { return publications_; }

 private:
  static const Hyperparameters& validated(const Hyperparameters& hp) {
    validate(hp, "shape block hyperparameters");
    return hp;
  }

  OptimizerKind kind_;
  Hyperparameters hp_;
  // refresh_cost(first = true / false) and refresh_job_bytes of this shape, computed once.
  std::vector<std::vector<platform::Cost>> first_refresh_;
  std::vector<std::vector<platform::Cost>> warm_refresh_;
  std::size_t job_bytes_;
  std::size_t result_bytes_;
  std::int64_t accumulated_ = 0;
  std::int64_t publications_ = 0;
};

}  // namespace asteria::optim

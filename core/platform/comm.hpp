#pragma once
// Collective communication among data-parallel ranks, hierarchical by node. Declared here so
// the runtime can be written against it; backends implement it with the data-parallel work.
#include <span>
#include <vector>

#include "core/platform/pending.hpp"

namespace asteria::platform {

enum class ReduceOp { sum, average };

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  virtual int node_of(int rank) const noexcept = 0;  // topology: ranks on one node talk fastest

  virtual Pending all_reduce(std::span<float> data, ReduceOp op) = 0;
  virtual Pending broadcast(std::span<float> data, int root) = 0;
  virtual Pending all_gather(std::span<const float> mine, std::span<float> all) = 0;
  virtual Pending reduce_scatter(std::span<const float> all, std::span<float> mine, ReduceOp op) = 0;
};

}  // namespace asteria::platform

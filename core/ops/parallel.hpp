#pragma once
// How the CPU backend splits a loop over threads it does not own. Core code has no threads (the
// seam); the real backend supplies a runner (core/real/fork_join_pool.hpp), everything else
// runs pieces one after another on the calling thread.
//
// Pieces are cut by the caller at fixed sizes that do not depend on the runner's width, and
// reductions combine piece results in piece order: results are the same bits for any number of
// threads.
#include <cstdint>
#include <functional>

namespace asteria::ops {

class ParallelRunner {
 public:
  virtual ~ParallelRunner() = default;
  // Threads that may run pieces at once, the calling thread included.
  virtual int width() const noexcept = 0;
  // Runs piece(0) … piece(pieces − 1), each exactly once, in any order and on any of its
  // threads (the caller's included), and returns when all are done. A piece that throws: the
  // first exception is rethrown here after the others finished.
  virtual void run(std::int64_t pieces, const std::function<void(std::int64_t)>& piece) = 0;
};

// The calling thread alone.
class SerialRunner final : public ParallelRunner {
 public:
  int width() const noexcept override { return 1; }
  void run(std::int64_t pieces, const std::function<void(std::int64_t)>& piece) override {
    for (std::int64_t p = 0; p < pieces; ++p) piece(p);
  }
};

}  // namespace asteria::ops

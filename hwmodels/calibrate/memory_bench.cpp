#include "hwmodels/calibrate/memory_bench.hpp"

#include <algorithm>
#include <barrier>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {
namespace {

std::string mib(std::size_t bytes) {
  const double value = static_cast<double>(bytes) / (1024.0 * 1024.0);
  const std::string whole = std::to_string(static_cast<long long>(value));
  return (value == static_cast<double>(static_cast<long long>(value)) ? whole : std::to_string(value)) + " MiB";
}

}  // namespace

Measured copy_bandwidth(std::span<std::byte> dst, std::span<const std::byte> src, int threads, int repeats) {
  if (src.empty() || dst.size() != src.size())
    throw InputError("memcpy bandwidth", "buffers", "expected two non-empty buffers of the same size");
  if (threads < 1 || repeats < 1)
    throw InputError("memcpy bandwidth", "threads, repeats", "expected at least one thread and one repetition");
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads), src.size());
  const std::size_t slice = (src.size() + workers - 1) / workers;

  // Every pass: all workers start together, copy their slice, and the pass ends when the last
  // one finishes. The calling thread is worker 0 and reads the clock at the two barriers.
  std::barrier<> start(static_cast<std::ptrdiff_t>(workers));
  std::barrier<> finish(static_cast<std::ptrdiff_t>(workers));
  const int passes = repeats + 1;  // pass 0 touches the pages and is not timed
  auto copy_slice = [&](std::size_t worker) {
    const std::size_t begin = std::min(src.size(), worker * slice);
    const std::size_t length = std::min(src.size(), begin + slice) - begin;
    for (int pass = 0; pass < passes; ++pass) {
      start.arrive_and_wait();
      std::memcpy(dst.data() + begin, src.data() + begin, length);
      finish.arrive_and_wait();
    }
  };
  std::vector<std::jthread> helpers;
  for (std::size_t worker = 1; worker < workers; ++worker) helpers.emplace_back(copy_slice, worker);

  const std::size_t begin0 = 0;
  const std::size_t length0 = std::min(src.size(), slice);
  double best = INFINITY;
  for (int pass = 0; pass < passes; ++pass) {
    start.arrive_and_wait();
    const WallClock::time_point t0 = WallClock::now();
    std::memcpy(dst.data() + begin0, src.data() + begin0, length0);
    finish.arrive_and_wait();
    const double elapsed = seconds_between(t0, WallClock::now());
    if (pass > 0) best = std::min(best, elapsed);
  }
  helpers.clear();  // joins

  Measured m;
  m.value = 2.0 * static_cast<double>(src.size()) / best;
  m.method = "memcpy of " + mib(src.size()) + ", " + std::to_string(workers) +
             (workers == 1 ? " thread" : " threads") + ", best of " + std::to_string(repeats) +
             ", counting bytes read + written";
  return m;
}

Measured measure_memcpy(std::size_t bytes, int threads, int repeats) {
  if (bytes == 0) throw InputError("memcpy bandwidth", "bytes", "expected a buffer size > 0");
  // Not value-initialized: the untimed first pass touches the destination; the source is
  // filled here so the copy reads real pages, not the shared zero page.
  const std::unique_ptr<std::byte[]> src(new std::byte[bytes]);
  const std::unique_ptr<std::byte[]> dst(new std::byte[bytes]);
  std::memset(src.get(), 0x5a, bytes);
  return copy_bandwidth({dst.get(), bytes}, {src.get(), bytes}, threads, repeats);
}

}  // namespace asteria::hw::calibrate

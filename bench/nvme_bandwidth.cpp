// Sustained sequential bandwidth of the NVMe tier's store (NvmeStore): N blocks of B MiB written
// then read back, as a tier manager spilling and prefetching optimizer state would.
//
// Where: $ASTERIA_NVME_DIR (default: nvme-bench/ next to this executable, i.e. under build/).
// Size: $ASTERIA_NVME_BLOCKS blocks (64) × $ASTERIA_NVME_BLOCK_MIB MiB (16); requests of
// $ASTERIA_NVME_CHUNK_KIB KiB (1024), $ASTERIA_NVME_QUEUE_DEPTH in flight (8); each measurement
// makes $ASTERIA_NVME_PASSES passes (3) over all blocks.
//
// Page cache: the direct:1 cases use O_DIRECT, so neither writes nor reads touch the page cache
// and the numbers are the device's. Buffered (direct:0) writes without durable stop at the page
// cache (memory speed); durable:1 adds fdatasync per block, which is what the disk sustains.
// Buffered reads come in two kinds: cold (each file's cached pages dropped with fdatasync +
// posix_fadvise(DONTNEED) before every iteration, untimed) and warm (straight from the cache).
// aligned:0 hands the store a caller buffer one byte off 4096-alignment, so every chunk goes
// through the bounce buffers (an extra copy); aligned:1 lets O_DIRECT move caller memory in place.
//
// Also: XXH64 speed (the per-block checksum), and what a pooled I/O context saves: a 4 KiB block
// round trip against io_uring setup + teardown alone.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/real/nvme/io_context.hpp"
#include "core/real/nvme/io_queue.hpp"
#include "core/real/nvme/nvme_store.hpp"
#include "core/io/xxhash64.hpp"

namespace {

using asteria::real::AlignedBuffer;
using asteria::real::DirectIo;
using asteria::real::NvmeOptions;
using asteria::real::NvmeStore;

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return static_cast<std::size_t>(std::strtoull(text, nullptr, 10));
}

std::filesystem::path bench_root() {
  if (const char* dir = std::getenv("ASTERIA_NVME_DIR"); dir != nullptr && *dir != '\0') return dir;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::current_path() : exe.parent_path()) / "nvme-bench";
}

struct Config {
  std::size_t blocks = env_size("ASTERIA_NVME_BLOCKS", 64);
  std::size_t block_bytes = env_size("ASTERIA_NVME_BLOCK_MIB", 16) << 20;
  std::size_t chunk_bytes = env_size("ASTERIA_NVME_CHUNK_KIB", 1024) << 10;
  unsigned queue_depth = static_cast<unsigned>(env_size("ASTERIA_NVME_QUEUE_DEPTH", 8));
};

const Config& config() {
  static const Config instance;
  return instance;
}

// One store per option set, each in its own subdirectory (a directory takes one store), alive
// for the whole run; the subdirectories are deleted at exit unless ASTERIA_NVME_KEEP=1.
class Stores {
 public:
  ~Stores() {
    const bool keep = std::getenv("ASTERIA_NVME_KEEP") != nullptr;
    for (auto& [name, store] : stores_) {
      const auto dir = store->directory();
      store.reset();
      std::error_code ec;
      if (!keep) std::filesystem::remove_all(dir, ec);
    }
    std::error_code ec;
    if (!keep) std::filesystem::remove(bench_root(), ec);  // only when empty
  }
  NvmeStore& get(bool direct, bool durable) {
    std::lock_guard lock(mutex_);
    const std::string name = std::string(direct ? "direct" : "buffered") + (durable ? "-durable" : "");
    auto& slot = stores_[name];
    if (!slot) {
      NvmeOptions options;
      options.direct_io = direct ? DirectIo::on : DirectIo::off;
      options.durable = durable;
      options.queue_depth = config().queue_depth;
      options.chunk_bytes = config().chunk_bytes;
      slot = std::make_unique<NvmeStore>(bench_root() / name, options);
    }
    return *slot;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<NvmeStore>> stores_;
};

Stores& stores() {
  static Stores instance;
  return instance;
}

// A block's worth of incompressible bytes, 4096-aligned; `misalign` shifts the usable span.
struct Payload {
  explicit Payload(std::size_t bytes, std::size_t misalign) : storage(bytes + misalign), data(storage.data() + misalign, bytes) {
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(data.data() + i, &x, 8);
    }
  }
  AlignedBuffer storage;
  std::span<std::byte> data;
};

std::string label_of(std::size_t id) { return "bench block " + std::to_string(id); }

void ensure_blocks(NvmeStore& store) {
  const Payload payload(config().block_bytes, 0);
  for (std::size_t id = 0; id < config().blocks; ++id) {
    std::error_code ec;
    if (std::filesystem::file_size(store.path_of(id), ec) == 4096 + config().block_bytes) continue;
    if (const auto status = store.write(id, payload.data, label_of(id)); !status.ok())
      throw std::runtime_error(status.message());
  }
}

void drop_cached_pages(const NvmeStore& store) {
  for (std::size_t id = 0; id < config().blocks; ++id) {
    const int fd = ::open(store.path_of(id).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

void report(benchmark::State& state, const NvmeStore& store, std::size_t bytes_per_iteration) {
  const auto bytes = static_cast<std::int64_t>(bytes_per_iteration) * state.iterations();
  state.SetBytesProcessed(bytes);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(store.mechanism());
}

// Runs `work(id)` for every block, split over `threads` threads (1: the calling thread).
// Returns the first failure.
template <class Work>
asteria::Status for_each_block(std::size_t threads, const Work& work) {
  std::vector<asteria::Status> failures(threads);
  const auto share = [&](std::size_t t) {
    for (std::size_t id = t; id < config().blocks; id += threads)
      if (auto status = work(t, id); !status.ok()) {
        failures[t] = std::move(status);
        return;
      }
  };
  if (threads == 1) {
    share(0);
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(share, t);
    for (auto& thread : pool) thread.join();
  }
  for (auto& failure : failures)
    if (!failure.ok()) return failure;
  return asteria::Status::success();
}

// Args: direct, aligned, durable, threads (copy threads sharing the store, as RealMemory's
// copy engines would).
void BM_Write(benchmark::State& state) {
  const bool direct = state.range(0) != 0;
  const bool aligned = state.range(1) != 0;
  const bool durable = state.range(2) != 0;
  const auto threads = static_cast<std::size_t>(state.range(3));
  NvmeStore& store = stores().get(direct, durable);
  const Payload payload(config().block_bytes, aligned ? 0 : 1);
  for (auto _ : state) {
    // Fresh files each pass, as fio writes them: freeing the previous pass's extents (a discard
    // on SSDs) is not part of the write.
    state.PauseTiming();
    for (std::size_t id = 0; id < config().blocks; ++id) store.remove(id);
    ::sync();
    state.ResumeTiming();
    const auto status = for_each_block(threads, [&](std::size_t, std::size_t id) {
      return store.write(id, payload.data, label_of(id));
    });
    if (!status.ok()) return state.SkipWithError(status.message().c_str());
  }
  report(state, store, config().blocks * config().block_bytes);
}

// Args: direct, aligned, cold (buffered only: drop the page cache before each iteration), threads.
void BM_Read(benchmark::State& state) {
  const bool direct = state.range(0) != 0;
  const bool aligned = state.range(1) != 0;
  const bool cold = state.range(2) != 0;
  const auto threads = static_cast<std::size_t>(state.range(3));
  NvmeStore& store = stores().get(direct, false);
  ensure_blocks(store);
  std::vector<Payload> out;
  for (std::size_t t = 0; t < threads; ++t) out.emplace_back(config().block_bytes, aligned ? 0 : 1);
  for (auto _ : state) {
    if (cold && !direct) {
      state.PauseTiming();
      drop_cached_pages(store);
      state.ResumeTiming();
    }
    const auto status = for_each_block(threads, [&](std::size_t t, std::size_t id) {
      return store.read(id, out[t].data, label_of(id));
    });
    if (!status.ok()) return state.SkipWithError(status.message().c_str());
    benchmark::DoNotOptimize(out.front().data.data());
  }
  report(state, store, config().blocks * config().block_bytes);
}

void BM_Xxh64(benchmark::State& state) {
  const Payload payload(std::size_t{16} << 20, 0);
  for (auto _ : state) benchmark::DoNotOptimize(asteria::io::xxh64(payload.data));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(payload.data.size()));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(payload.data.size()) / 1e9,
                                              benchmark::Counter::kIsRate);
}

// Latency of a 4 KiB block written and read back with a pooled I/O context (what every call
// pays), next to the io_uring setup + teardown a context-per-call design would add to it.
void BM_SmallBlockRoundTrip(benchmark::State& state) {
  NvmeStore& store = stores().get(state.range(0) != 0, false);
  const Payload payload(4096, 0);
  Payload out(4096, 0);
  for (auto _ : state) {
    if (!store.write(1'000'000, payload.data, "small").ok() || !store.read(1'000'000, out.data, "small").ok()) {
      state.SkipWithError("small block round trip failed");
      return;
    }
  }
  store.remove(1'000'000);
  state.SetLabel(store.mechanism());
}

void BM_RingSetupTeardown(benchmark::State& state) {
  for (auto _ : state) {
    std::string problem;
    auto queue = asteria::real::make_uring_queue(config().queue_depth, problem);
    if (!queue) {
      state.SkipWithError(("io_uring unavailable: " + problem).c_str());
      return;
    }
    benchmark::DoNotOptimize(queue.get());
  }
}

// Passes over all blocks per measurement ($ASTERIA_NVME_PASSES, 3).
const auto kRounds = static_cast<benchmark::IterationCount>(env_size("ASTERIA_NVME_PASSES", 3));

BENCHMARK(BM_Write)->ArgNames({"direct", "aligned", "durable", "threads"})
    ->Args({1, 1, 0, 1})->Args({1, 0, 0, 1})->Args({0, 1, 0, 1})->Args({0, 1, 1, 1})->Args({1, 1, 0, 4})
    ->Iterations(kRounds)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Read)->ArgNames({"direct", "aligned", "cold", "threads"})
    ->Args({1, 1, 0, 1})->Args({1, 0, 0, 1})->Args({0, 1, 1, 1})->Args({0, 1, 0, 1})->Args({1, 1, 0, 4})
    ->Iterations(kRounds)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Xxh64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SmallBlockRoundTrip)->ArgName("direct")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RingSetupTeardown)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

// The transfer engine under a queue that misbehaves the ways kernels may: completions out of
// order, short transfers, EINTR/EAGAIN, hard errors, a broken queue.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/real/nvme/io_context.hpp"
#include "core/real/nvme/transfer.hpp"
#include "core/real/nvme/unique_fd.hpp"
#include "tests/nvme/nvme_test_support.hpp"

namespace {

using asteria::StatusCode;
using asteria::real::IoCompletion;
using asteria::real::IoContext;
using asteria::real::IoOp;
using asteria::real::IoQueue;
using asteria::real::IoRequest;
using asteria::real::UniqueFd;
using asteria::real::Xxh64;
using asteria::testing::pattern;
using asteria::testing::ScratchDir;

// Holds up to `depth` requests and finishes the newest first. Every 5th answer is EINTR and
// every 7th EAGAIN (nothing moved); the others move at most `max_bytes` bytes.
class ChoppyQueue final : public IoQueue {
 public:
  ChoppyQueue(unsigned depth, std::size_t max_bytes) : depth_(depth), max_bytes_(max_bytes) {}
  unsigned depth() const noexcept override { return depth_; }
  void push(const IoRequest& request) override {
    EXPECT_LT(pending_.size(), depth_) << "more requests in flight than the queue depth";
    pending_.push_back(request);
  }
  int wait(IoCompletion& done) override {
    if (fail_queue_with != 0) return -fail_queue_with;
    if (pending_.empty()) {
      ADD_FAILURE() << "wait() with nothing in flight";
      return -EINVAL;
    }
    const IoRequest request = pending_.back();
    pending_.pop_back();
    done.tag = request.tag;
    ++answers;
    if (answers % 5 == 0) {
      done.result = -EINTR;
    } else if (answers % 7 == 0) {
      done.result = -EAGAIN;
    } else {
      const std::size_t bytes = std::min(request.bytes, max_bytes_);
      ++requests_moved;
      if (bytes < request.bytes) ++short_answers;
      const ssize_t moved = request.op == IoOp::read
                                ? ::pread(request.fd, request.buffer, bytes, static_cast<off_t>(request.offset))
                                : ::pwrite(request.fd, request.buffer, bytes, static_cast<off_t>(request.offset));
      done.result = moved < 0 ? -errno : moved;
    }
    return 0;
  }
  int fail_queue_with = 0;
  int answers = 0;
  int requests_moved = 0;
  int short_answers = 0;

 private:
  unsigned depth_;
  std::size_t max_bytes_;
  std::vector<IoRequest> pending_;
};

struct Rig {
  Rig(std::size_t max_bytes, bool open_direct, std::size_t chunk = 64 * 1024) : direct(open_direct) {
    auto q = std::make_unique<ChoppyQueue>(4, max_bytes);
    queue = q.get();
    context = std::make_unique<IoContext>(std::move(q), chunk);
    fd = UniqueFd(::open((dir / "file").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0), 0644));
    EXPECT_TRUE(fd) << std::strerror(errno);
  }
  ScratchDir dir;
  bool direct;
  ChoppyQueue* queue = nullptr;
  std::unique_ptr<IoContext> context;
  UniqueFd fd;
};

void expect_round_trip(Rig& rig, std::size_t bytes, std::size_t misalign) {
  const auto data = pattern(bytes + misalign, 21);
  const std::span<const std::byte> source = std::span(data).subspan(misalign);
  Xxh64 write_hash;
  auto status = asteria::real::write_range(*rig.context, {rig.fd.get(), 4096, rig.direct}, source, &write_hash, "test write");
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<std::byte> back(bytes + misalign);
  const std::span<std::byte> target = std::span(back).subspan(misalign);
  Xxh64 read_hash;
  // Under O_DIRECT the padded tail was written as zeros; the read stops at the logical length.
  status = asteria::real::read_range(*rig.context, {rig.fd.get(), 4096, rig.direct}, target, &read_hash, "test read");
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(std::equal(source.begin(), source.end(), target.begin()));
  EXPECT_EQ(write_hash.digest(), asteria::real::xxh64(source));
  EXPECT_EQ(read_hash.digest(), asteria::real::xxh64(source));
}

TEST(NvmeTransfer, ShortBufferedTransfersAreResumedToTheLastByte) {
  Rig rig(1000, false);
  expect_round_trip(rig, (std::size_t{1} << 20) + 3, 1);
  EXPECT_GT(rig.queue->short_answers, 100);
  EXPECT_GT(rig.queue->answers, rig.queue->requests_moved);  // EINTR/EAGAIN were answered and retried
}

TEST(NvmeTransfer, ShortAlignedTransfersAreResumedUnderODirect) {
  Rig rig(8192, true);
  expect_round_trip(rig, (std::size_t{1} << 20) + 4097, 0);  // aligned chunks in place, the tail bounced
  expect_round_trip(rig, 200'000, 5);                         // every chunk bounced
  EXPECT_GT(rig.queue->short_answers, 50);
}

TEST(NvmeTransfer, UnalignedShortTransferUnderODirectIsReportedNotLooped) {
  Rig rig(1000, false);  // a buffered file, so the 1000-byte write succeeds and comes up short
  const auto data = pattern(8192, 1);
  const auto status = asteria::real::write_range(*rig.context, {rig.fd.get(), 0, true}, data, nullptr, "w 'x'");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.reason().find("not resumable under O_DIRECT"), std::string::npos) << status.reason();
  EXPECT_EQ(status.reason().rfind("w 'x': write of ", 0), 0U) << status.reason();
}

TEST(NvmeTransfer, ReadingPastEndOfFileIsAnError) {
  Rig rig(1 << 20, false);
  const auto data = pattern(10'000, 2);
  ASSERT_TRUE(asteria::real::write_range(*rig.context, {rig.fd.get(), 0, false}, data, nullptr, "w").ok());
  std::vector<std::byte> out(20'000);
  const auto status = asteria::real::read_range(*rig.context, {rig.fd.get(), 0, false}, out, nullptr, "r");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::io_error);
  EXPECT_NE(status.reason().find("unexpected end of file"), std::string::npos) << status.reason();
}

TEST(NvmeTransfer, BrokenQueuePoisonsTheContext) {
  Rig rig(1 << 20, false);
  rig.queue->fail_queue_with = EIO;
  const auto data = pattern(4096, 3);
  const auto status = asteria::real::write_range(*rig.context, {rig.fd.get(), 0, false}, data, nullptr, "w");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.reason().find("I/O queue failed"), std::string::npos) << status.reason();
  EXPECT_TRUE(rig.context->poisoned);
}

// A negative completion from the real queues: read() on a directory answers EISDIR.
TEST(NvmeTransfer, FailedCompletionComesBackWithItsErrnoFromBothRealQueues) {
  ScratchDir dir;
  UniqueFd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  std::string uring_problem;
  auto uring = asteria::real::make_uring_queue(4, uring_problem);
  std::cout << "[ mechanism ] io_uring " << (uring ? "available" : "unavailable: " + uring_problem) << "\n";
  std::vector<std::unique_ptr<IoQueue>> queues;
  queues.push_back(asteria::real::make_syscall_queue());
  if (uring) queues.push_back(std::move(uring));
  for (auto& queue : queues) {
    IoContext context(std::move(queue), 64 * 1024);
    std::vector<std::byte> out(200'000);
    const auto status = asteria::real::read_range(context, {fd.get(), 0, false}, out, nullptr, "read 'dir'");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::io_error);
    EXPECT_NE(status.reason().find("EISDIR"), std::string::npos) << status.reason();
    EXPECT_EQ(status.reason().rfind("read 'dir': read of ", 0), 0U) << status.reason();
  }
}

}  // namespace

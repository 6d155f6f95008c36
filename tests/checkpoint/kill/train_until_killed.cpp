// The process the kill-and-resume test runs: trains a tiny GPT (asteria train's loop) with a
// checkpoint after every step and raises SIGKILL on its N-th checkpoint file call (0: never).
// It resumes from the directory's newest loadable checkpoint when there is one, and prints
//   digests <weights> <optimizer state> resumed_from <step> calls <checkpoint file calls>
// Usage: train_until_killed <checkpoint dir> <corpus dir> <nvme dir> <kill at> <staleness> <optimizer>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "apps/asteria/train.hpp"
#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/common/error.hpp"
#include "core/optim/hyperparameters.hpp"

namespace {

using namespace asteria;

// The operating system's calls, until the N-th: the process dies there, as on a power cut or
// an OOM kill, with whatever the disk holds at that instant.
class KillingFileSystem final : public io::FileSystem {
 public:
  explicit KillingFileSystem(long kill_at) : kill_at_(kill_at) {}
  long calls() const noexcept { return calls_; }
  int open(const char* path, int flags, int mode) override { return tick(), real_.open(path, flags, mode); }
  ::ssize_t write(int fd, const void* data, std::size_t bytes) override { return tick(), real_.write(fd, data, bytes); }
  ::ssize_t pread(int fd, void* data, std::size_t bytes, ::off_t offset) override {
    return tick(), real_.pread(fd, data, bytes, offset);
  }
  int fsync(int fd) override { return tick(), real_.fsync(fd); }
  int close(int fd) override { return tick(), real_.close(fd); }
  int rename(const char* from, const char* to) override { return tick(), real_.rename(from, to); }
  int unlink(const char* path) override { return tick(), real_.unlink(path); }

 private:
  void tick() {
    if (++calls_ == kill_at_) std::raise(SIGKILL);
  }
  io::PosixFileSystem real_;
  long kill_at_;
  long calls_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: train_until_killed <checkpoint dir> <corpus dir> <nvme dir> <kill at> <staleness> <optimizer>\n";
    return 2;
  }
  try {
    KillingFileSystem files(std::atol(argv[4]));
    cli::TrainSettings s;
    s.spec.model = "tiny";
    s.spec.optimizer = optim::parse_optimizer_kind(argv[6], "optimizer argument");
    s.spec.hp = optim::default_hyperparameters(s.spec.optimizer);
    s.spec.hp.precondition_frequency = 2;
    s.spec.staleness = std::atoi(argv[5]);
    s.spec.steps = 6;
    s.spec.warmup_steps = 1;
    s.spec.host_workers = 2;
    s.spec.progress = false;
    // The state rests on NVMe between its updates: a checkpoint reads it from there.
    s.spec.placement = runtime::PlacementPolicy::nvme;
    s.spec.nvme_dir = argv[3];
    s.spec.train.data = argv[2];
    s.spec.train.eval_every = 0;
    s.spec.train.eval_sequences = 2;
    s.spec.train.blas_threads = 1;
    s.spec.train.checkpoint_every = 1;
    s.spec.train.checkpoint_dir = argv[1];
    s.checkpoint_files = &files;
    s.saved_arguments = "[]";
    if (checkpoint::is_checkpoint_directory(argv[1])) {
      try {
        s.resume_from = std::make_shared<const checkpoint::CheckpointReader>(
            checkpoint::CheckpointReader::open_latest(argv[1], &files));
      } catch (const InputError&) {  // killed before its first checkpoint was whole: start over
      }
    }
    std::ostringstream progress;
    const cli::TrainOutcome outcome = cli::run_train(s, progress);
    std::cout << "digests " << std::hex << outcome.ranks.at(0).weights_digest << ' '
              << outcome.ranks.at(0).optimizer_state_digest << std::dec << " resumed_from "
              << (s.resume_from ? s.resume_from->step() : 0) << " calls " << files.calls() << '\n';
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "train_until_killed: " << e.what() << '\n';
    return 1;
  }
}

// SIGKILL at random points while checkpoints are written: a process trains a tiny GPT with a
// checkpoint after every step (state partly on NVMe, refreshes in flight) and dies on its N-th
// checkpoint file call, N drawn at random over all of them; a new process then resumes from the
// newest loadable checkpoint (or starts over when none was whole yet). Every resumed run must end
// with the weights and optimizer state of the run that was never killed, bit for bit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/checkpoint/checkpoint_test_support.hpp"

namespace asteria::checkpoint::test {
namespace {

struct ChildRun {
  int status = 0;  // as waitpid reports it
  std::string digests;
  long resumed_from = -1;
  long calls = 0;
};

ChildRun run_child(const std::vector<std::string>& args, const std::filesystem::path& output) {
  std::vector<char*> argv;
  std::string program = ASTERIA_KILL_CHILD;
  argv.push_back(program.data());
  std::vector<std::string> copies = args;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) ::_exit(127);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ChildRun run;
  ::waitpid(pid, &run.status, 0);
  std::ifstream in(output);
  std::string word;
  while (in >> word) {
    if (word == "digests") {
      std::string w, s;
      in >> w >> s;
      run.digests = w + " " + s;
    } else if (word == "resumed_from") {
      in >> run.resumed_from;
    } else if (word == "calls") {
      in >> run.calls;
    }
  }
  return run;
}

// A small text corpus: sentences from a fixed vocabulary, so the run needs no system files.
void write_corpus(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const char* words[] = {"tiered", "state", "moves", "between", "device", "host", "and", "nvme", "while",
                         "refreshes", "run", "on", "workers", "under", "a", "staleness", "bound"};
  std::mt19937 random(3);
  std::ofstream out(dir / "corpus.txt");
  for (int sentence = 0; sentence < 2000; ++sentence) {
    const int length = 4 + static_cast<int>(random() % 9);
    for (int w = 0; w < length; ++w) out << words[random() % std::size(words)] << (w + 1 < length ? " " : ".\n");
  }
}

int kills() {
  const char* text = std::getenv("ASTERIA_KILLS");
  return text != nullptr ? std::atoi(text) : 100;
}

TEST(KillDuringCheckpoint, EveryKilledRunResumesFromTheLastWholeCheckpointBitExact) {
  ScratchDir dir;
  write_corpus(dir.path() / "corpus");
  for (const char* optimizer : {"soap", "shampoo"}) {
    SCOPED_TRACE(optimizer);
    const std::string staleness = "3";
    const std::string tag = optimizer;
    const ChildRun reference = run_child({(dir.path() / ("ref-" + tag)).string(), (dir.path() / "corpus").string(),
                                          (dir.path() / ("ref-nvme-" + tag)).string(), "0", staleness, optimizer},
                                         dir.path() / "ref.out");
    ASSERT_TRUE(WIFEXITED(reference.status) && WEXITSTATUS(reference.status) == 0) << "the reference run failed";
    ASSERT_FALSE(reference.digests.empty());
    ASSERT_GT(reference.calls, 20);
    std::mt19937_64 random(20261124);
    std::uniform_int_distribution<long> point(1, reference.calls);
    int killed = 0, resumed = 0;
    const int runs = std::string(optimizer) == "soap" ? kills() : kills() / 4;
    for (int i = 0; i < runs; ++i) {
      const std::filesystem::path ckpt = dir.path() / ("run" + std::to_string(i));
      const std::string nvme = (dir.path() / ("nvme" + std::to_string(i))).string();
      const long kill_at = point(random);
      const std::string corpus = (dir.path() / "corpus").string();
      const ChildRun first = run_child({ckpt.string(), corpus, nvme, std::to_string(kill_at), staleness, optimizer},
                                       dir.path() / "first.out");
      ASSERT_TRUE(WIFSIGNALED(first.status) && WTERMSIG(first.status) == SIGKILL)
          << "run " << i << " was not killed at checkpoint call " << kill_at;
      ++killed;
      const ChildRun second = run_child({ckpt.string(), corpus, nvme, "0", staleness, optimizer},
                                        dir.path() / "second.out");
      ASSERT_TRUE(WIFEXITED(second.status) && WEXITSTATUS(second.status) == 0)
          << "run " << i << " (killed at call " << kill_at << ") could not go on";
      EXPECT_EQ(second.digests, reference.digests) << "run " << i << " killed at call " << kill_at << ", resumed from step "
                                                   << second.resumed_from;
      if (second.resumed_from > 0) ++resumed;
      std::filesystem::remove_all(ckpt);
      std::filesystem::remove_all(nvme);
    }
    std::cout << optimizer << ": " << killed << " runs killed while checkpointing, " << resumed
              << " resumed from a checkpoint (the others had none whole yet), all bit-exact\n";
    EXPECT_GT(resumed, runs / 2);
  }
}

}  // namespace
}  // namespace asteria::checkpoint::test

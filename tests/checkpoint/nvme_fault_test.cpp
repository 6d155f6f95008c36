// The NVMe tier failing under a running driver: a block file corrupted on disk between steps is
// caught by its checksum when the block is next loaded, and the step fails with a TransferError
// naming the block and the file; no value read from it reaches the weights. A checkpoint taken
// before the damage restores the run in a new driver, which then goes on bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "core/runtime/store/store_errors.hpp"
#include "tests/checkpoint/checkpoint_test_support.hpp"
#include "tests/checkpoint/nvme_machine.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using checkpoint::test::Machine;
using checkpoint::test::ScratchDir;
using T = float;

DriverOptions on_nvme() {
  DriverOptions o = full_numerics(1);
  o.store.policy = PlacementPolicy::nvme;
  return o;
}

TEST(NvmeFaultUnderTraining, ACorruptedBlockFileFailsTheStepNamingBlockAndFileAndTheCheckpointRecovers) {
  const OptimizerKind kind = OptimizerKind::soap;
  const Hyperparameters hp = small_blocks(kind, 2);
  ScratchDir dir;
  Weights<T> expected;
  {
    Machine machine(dir.path() / "nvme-straight");
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(machine.platform(), model, kind, hp, on_nvme());
    for (int t = 0; t < 6; ++t) driver.run_step();
    driver.finish();
    expected = weights_of(model);
  }
  {
    Machine machine(dir.path() / "nvme");
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(machine.platform(), model, kind, hp, on_nvme());
    for (int t = 0; t < 3; ++t) driver.run_step();
    checkpoint::CheckpointWriter writer(dir.path() / "ckpt", 3, {});
    driver.save(writer);
    writer.commit();
    const Weights<T> before = weights_of(model);
    // Bit rot in every block file: the payload past the header.
    int damaged = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path() / "nvme"))
      if (entry.path().extension() == ".blk" && entry.file_size() > 4200) {
        checkpoint::test::flip_bit(entry.path(), 4200);
        ++damaged;
      }
    ASSERT_GT(damaged, 0);
    try {
      driver.run_step();
      FAIL() << "a corrupted NVMe block was loaded";
    } catch (const TransferError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(e.block_label()), std::string::npos) << what;
      EXPECT_NE(what.find("layer"), std::string::npos) << what;
      EXPECT_NE(what.find(".blk"), std::string::npos) << what;
      EXPECT_NE(what.find("checksum mismatch"), std::string::npos) << what;
    }
    // Whatever the step updated, nothing came from the damaged bytes: every weight is finite and
    // the layers the step did not reach are as they were.
    const Weights<T> after = weights_of(model);
    for (const std::vector<T>& layer : after)
      for (T w : layer) ASSERT_TRUE(std::isfinite(w));
    EXPECT_TRUE(bitwise_equal(before.front(), after.front()));
  }
  // The checkpoint of step 3 (in another directory than the damaged tier) takes the run on.
  Machine machine(dir.path() / "nvme-resumed");
  SyntheticModel<T> model(small_stack());
  StepDriver<T> driver(machine.platform(), model, kind, hp, on_nvme());
  driver.restore(checkpoint::CheckpointReader::open_latest(dir.path() / "ckpt"));
  for (int t = 3; t < 6; ++t) driver.run_step();
  driver.finish();
  const Weights<T> resumed = weights_of(model);
  for (std::size_t l = 0; l < expected.size(); ++l) EXPECT_TRUE(bitwise_equal(expected[l], resumed[l])) << "layer " << l;
}

}  // namespace
}  // namespace asteria::runtime::test

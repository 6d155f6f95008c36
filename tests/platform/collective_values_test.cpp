// The reference semantics of collectives (core/platform/collective_values.hpp) and the buffer
// checks every backend applies (core/platform/comm.hpp).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/platform/collective_values.hpp"

namespace asteria::platform {
namespace {

TEST(Bf16, RoundsToNearestEvenAndKeepsNaNAndInfinity) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  // 1 + 2⁻⁸ lies halfway between 1 (0x3f80, even) and 1 + 2⁻⁷ (0x3f81): ties go to even.
  EXPECT_EQ(float_to_bf16(1.00390625f), 0x3f80);
  // 1 + 3·2⁻⁸ lies halfway between 0x3f81 (odd) and 0x3f82 (even).
  EXPECT_EQ(float_to_bf16(1.01171875f), 0x3f82);
  EXPECT_EQ(float_to_bf16(1.005f), 0x3f81);  // nearer 1 + 2⁻⁷
  EXPECT_EQ(bf16_to_float(float_to_bf16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the low bits must not round to infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7f800001u)))));
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

// A stand-in group: only its size matters to the checks.
class SizedGroup final : public CommGroup {
 public:
  explicit SizedGroup(int n) : n_(n) {}
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return n_; }
  int world_rank(int r) const override { return r; }
  Pending all_reduce(CommBuffer, ReduceOp, CollectiveOptions) override { return Pending::ready(); }
  Pending reduce_scatter(CommBuffer, CommBuffer, ReduceOp, CollectiveOptions) override { return Pending::ready(); }
  Pending all_gather(CommBuffer, CommBuffer, CollectiveOptions) override { return Pending::ready(); }
  Pending broadcast(CommBuffer, int, CollectiveOptions) override { return Pending::ready(); }
  std::unique_ptr<CommGroup> split(int, int) override { return nullptr; }

 private:
  int n_;
};

TEST(CheckCollective, NamesTheCollectiveAndWhatIsWrong) {
  const SizedGroup four(4);
  std::vector<float> eight(8), two(2), three(3);
  EXPECT_NO_THROW(check_collective(Collective::reduce_scatter, four, CommBuffer::of(eight), CommBuffer::of(two)));
  EXPECT_NO_THROW(check_collective(Collective::all_gather, four, CommBuffer::of(two), CommBuffer::of(eight)));
  try {
    check_collective(Collective::reduce_scatter, four, CommBuffer::of(eight), CommBuffer::of(three));
    FAIL() << "8 elements are not 4 shards of 3";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("reduce_scatter"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 shards of 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_collective(Collective::all_reduce, four, CommBuffer::of(two), CommBuffer::sized(2, DType::fp32)),
               std::invalid_argument);
  EXPECT_THROW(check_collective(Collective::all_reduce, four, CommBuffer::sized(2, DType::bf16),
                                CommBuffer::sized(2, DType::fp32)),
               std::invalid_argument);
  EXPECT_EQ(CommBuffer::sized(3, DType::bf16).bytes(), 6u);
}

TEST(CombineValues, AverageDividesTheRankOrderSum) {
  std::vector<float> a = {1.0f, 3.0f}, b = {2.0f, 5.0f}, c = {4.0f, 7.0f};
  const std::vector<CommBuffer> buffers = {CommBuffer::of(a), CommBuffer::of(b), CommBuffer::of(c)};
  combine_values(Collective::all_reduce, ReduceOp::average, 0, buffers, buffers);
  for (const auto* v : {&a, &b, &c}) EXPECT_EQ(*v, (std::vector<float>{7.0f / 3.0f, 5.0f}));
}

TEST(CombineValues, BytesOnlyBuffersAreLeftAlone) {
  const std::vector<CommBuffer> buffers = {CommBuffer::sized(4, DType::fp32), CommBuffer::sized(4, DType::fp32)};
  EXPECT_NO_THROW(combine_values(Collective::all_reduce, ReduceOp::sum, 0, buffers, buffers));
}

}  // namespace
}  // namespace asteria::platform

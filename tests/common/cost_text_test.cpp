#include "core/platform/cost_text.hpp"

#include <gtest/gtest.h>

#include "core/common/error.hpp"

namespace asteria::platform {
namespace {

TEST(CostText, RoundTripsEveryPieceExactly) {
  const Costs cost{Cost{WorkKind::eigh, 9e6, 8192, 100}, Cost{WorkKind::gemm, 0.1 + 0.2, 1.5e12, 4096, true},
                   Cost{WorkKind::elementwise, 0, 3, 0}};
  const std::string text = to_text(cost);
  EXPECT_EQ(text, "eigh/9e+06/8192/100;gemm/0.30000000000000004/1.5e+12/4096/reduced;elementwise/0/3/0");
  EXPECT_EQ(parse_costs(text, "t", "cost"), cost);
  EXPECT_EQ(to_text(Costs{}), "-");
  EXPECT_TRUE(parse_costs("-", "t", "cost").empty());
}

TEST(CostText, BadPiecesNameTheField) {
  for (const char* bad : {"eighx/1/2/3", "gemm/1/2", "gemm/-1/2/3", "gemm/1/2/3/fast", "gemm/1/2/3.5", "gemm/nan/2/3", ""}) {
    try {
      parse_costs(bad, "trace.csv", "line 9: cost");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), "trace.csv");
      EXPECT_EQ(e.field(), "line 9: cost");
    }
  }
}

}  // namespace
}  // namespace asteria::platform

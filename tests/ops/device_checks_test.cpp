// What Device checks once, for every backend (comm.hpp's pattern): operands that do not fit
// their operation are refused before any backend sees them, and what a backend declines runs
// through the host fallback.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/ops/cpu_device.hpp"
#include "core/ops/rules.hpp"
#include "tests/ops/staged_device.hpp"

namespace asteria::test {
namespace {

using linalg::ConstMatrixView;
using linalg::Matrix;
using linalg::Op;

TEST(DeviceChecks, OperandsThatDoNotFitAreRefusedNamingTheOperation) {
  ops::CpuDevice cpu;
  Matrix<float> a(3, 4), b(5, 6), c(3, 6), v(3, 1), square(3, 3);
  Matrix<double> d(3, 4);
  try {
    cpu.gemm<float>(1.0f, a, Op::none, b, Op::none, 0.0f, c.view());
    FAIL() << "a 3x4 by 5x6 product was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gemm"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cpu.syrk<float>(1.0f, a, Op::none, 0.0f, c.view()), std::invalid_argument);  // result must be 3x3
  Matrix<float> stack_a(6, 4), stack_b(8, 5), stack_c(6, 5);
  EXPECT_NO_THROW(cpu.gemm_batched<float>(1.0f, stack_a, Op::none, stack_b, Op::none, 0.0f, stack_c.view(), 2));
  EXPECT_THROW(cpu.gemm_batched<float>(1.0f, stack_a, Op::none, stack_b, Op::none, 0.0f, stack_c.view(), 4),
               std::invalid_argument);  // 6 rows are not 4 equal matrices
  EXPECT_THROW(cpu.map(ops::Assign<float>{}, a.view(), ConstMatrixView<float>(c)), std::invalid_argument);
  // A per-row operand of the wrong length, a rule of another precision, an operand the rule
  // writes given as const, operands that overlap where one is written.
  EXPECT_THROW(cpu.map(ops::ScaleRows<float>{}, c.view(), ConstMatrixView<float>(Matrix<float>(4, 1))),
               std::invalid_argument);
  EXPECT_THROW(cpu.map(ops::Assign<double>{}, d.view(), ConstMatrixView<double>(Matrix<double>(3, 5))),
               std::invalid_argument);
  EXPECT_THROW(cpu.map(ops::Square<float>{}, ConstMatrixView<float>(a), ConstMatrixView<float>(a)),
               std::invalid_argument);
  EXPECT_THROW(cpu.map(ops::Assign<float>{}, square.view().block(0, 0, 2, 2), ConstMatrixView<float>(square.view().block(1, 1, 2, 2))),
               std::invalid_argument);
  const std::vector<ops::index> not_a_permutation{0, 0, 2};
  EXPECT_THROW(cpu.permute<float>(square.view(), not_a_permutation, std::vector<ops::index>{0, 1, 2}),
               std::invalid_argument);
  EXPECT_THROW(cpu.kl_estimates<float>(a, v, v, v.view(), v.view()), std::invalid_argument);  // s_right must be 4
}

TEST(DeviceChecks, WhatABackendDeclinesRunsThroughTheHostFallback) {
  StagedDevice staged;
  Matrix<float> a(4, 4), c(4, 4);
  for (ops::index i = 0; i < 4; ++i) a(i, i) = 2.0f;
  ops::Buffer da = staged.matrix<float>(4, 4), dc = staged.matrix<float>(4, 4);
  staged.upload<float>(a, da.view<float>());
  const std::int64_t copies_before = staged.copies();
  staged.gemm<float>(1.0f, da.view<float>(), Op::none, da.view<float>(), Op::none, 0.0f, dc.view<float>());
  EXPECT_EQ(staged.fallback_count(), 0) << "products run on the backend";
  EXPECT_EQ(staged.copies(), copies_before);
  staged.map(ops::AddScaled<float>{0.5f}, dc.view<float>(), ConstMatrixView<float>(da.view<float>()));
  EXPECT_EQ(staged.fallback_count(), 1);
  EXPECT_EQ(staged.copies(), copies_before + 2 + 1) << "two operands staged in, the written one back";
  staged.download<float>(dc.view<float>(), c.view());
  EXPECT_EQ(c(1, 1), 5.0f);  // 2·2 + 0.5·2
  EXPECT_EQ(c(0, 1), 0.0f);
}

}  // namespace
}  // namespace asteria::test

#include "hwmodels/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/common/error.hpp"

namespace asteria::hw {
namespace {

double parse(const std::string& text, UnitClass unit_class) {
  return parse_amount(text, unit_class, "units.yaml", "field.path");
}

TEST(Units, ParsesDecimalAndBinarySizes) {
  EXPECT_EQ(parse("96 GB", UnitClass::bytes), 96e9);
  EXPECT_EQ(parse("1.5 TB", UnitClass::bytes), 1.5e12);
  EXPECT_EQ(parse("128 GiB", UnitClass::bytes), 137438953472.0);  // 128 * 2^30
  EXPECT_EQ(parse("3 KiB", UnitClass::bytes), 3072.0);
  EXPECT_EQ(parse("2 MiB", UnitClass::bytes), 2097152.0);
  EXPECT_EQ(parse("1 TiB", UnitClass::bytes), 1099511627776.0);
  EXPECT_EQ(parse("512 B", UnitClass::bytes), 512.0);
}

TEST(Units, ParsesBandwidthsIncludingBitRates) {
  EXPECT_EQ(parse("375 GB/s", UnitClass::bandwidth), 375e9);
  EXPECT_EQ(parse("3.31 TB/s", UnitClass::bandwidth), 3.31 * 1e12);
  EXPECT_EQ(parse("1 GiB/s", UnitClass::bandwidth), 1073741824.0);
  EXPECT_EQ(parse("200 Gb/s", UnitClass::bandwidth), 25e9);  // bits: 200/8 GB/s
  EXPECT_EQ(parse("100 B/s", UnitClass::bandwidth), 100.0);
}

TEST(Units, ParsesRatesTimesAndPlainNumbers) {
  EXPECT_EQ(parse("67 TFLOP/s", UnitClass::flop_rate), 67e12);
  EXPECT_EQ(parse("2 PFLOP/s", UnitClass::flop_rate), 2e15);
  EXPECT_EQ(parse("80 GFLOP/s", UnitClass::flop_rate), 80e9);
  EXPECT_EQ(parse("5 us", UnitClass::time), 5e-6);
  EXPECT_EQ(parse("2 ms", UnitClass::time), 2e-3);
  EXPECT_EQ(parse("40 ns", UnitClass::time), 40e-9);
  EXPECT_EQ(parse("1.2e-10 s", UnitClass::time), 1.2e-10);
  EXPECT_EQ(parse("0.84", UnitClass::dimensionless), 0.84);
  EXPECT_EQ(parse("  72  ", UnitClass::dimensionless), 72.0);
  EXPECT_EQ(parse("10GB/s", UnitClass::bandwidth), 10e9);  // the space is optional
}

// The error names source and field, and says what was expected.
void expect_rejected(const std::string& text, UnitClass unit_class, const std::string& expectation) {
  try {
    parse(text, unit_class);
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "units.yaml");
    EXPECT_EQ(e.field(), "field.path");
    EXPECT_NE(std::string(e.what()).find(expectation), std::string::npos) << e.what();
  }
}

TEST(Units, ParsesPowers) {
  EXPECT_EQ(parse("700 W", UnitClass::power), 700.0);
  EXPECT_EQ(parse("1.2 kW", UnitClass::power), 1200.0);
  EXPECT_EQ(parse("500 mW", UnitClass::power), 0.5);
  expect_rejected("700 GB", UnitClass::power, "a power");
  EXPECT_EQ(parse(format_amount(4.8, UnitClass::power), UnitClass::power), 4.8);
}

TEST(Units, RejectsMalformedAmounts) {
  expect_rejected("GB/s", UnitClass::bandwidth, "'<number> <unit>'");
  expect_rejected("", UnitClass::bytes, "'<number> <unit>'");
  expect_rejected("nan GB/s", UnitClass::bandwidth, "'<number> <unit>'");
  expect_rejected("inf s", UnitClass::time, "'<number> <unit>'");
  expect_rejected("12", UnitClass::bandwidth, "without a unit");
  expect_rejected("1,000 GB/s", UnitClass::bandwidth, "unknown unit ',000 GB/s'");
  expect_rejected("0.5 s", UnitClass::dimensionless, "plain number without unit");
}

TEST(Units, RejectsUnknownUnitsAndListsTheAcceptedOnes) {
  expect_rejected("12 gb/s", UnitClass::bandwidth, "unknown unit 'gb/s'");  // case matters
  expect_rejected("12 XB/s", UnitClass::bandwidth, "B/s, KB/s, MB/s, GB/s, TB/s");
  expect_rejected("3 minutes", UnitClass::time, "s, ms, us, ns");
}

TEST(Units, RejectsAUnitOfAnotherClass) {
  expect_rejected("12 GB", UnitClass::bandwidth, "expected a bandwidth");
  expect_rejected("12 GB", UnitClass::bandwidth, "(a size in bytes)");
  expect_rejected("5 GB/s", UnitClass::bytes, "(a bandwidth)");
  expect_rejected("5 us", UnitClass::flop_rate, "(a time)");
  expect_rejected("5 TFLOP/s", UnitClass::time, "(a FLOP rate)");
}

TEST(Units, FormatsInAReadableUnit) {
  EXPECT_EQ(format_amount(375e9, UnitClass::bandwidth), "375 GB/s");
  EXPECT_EQ(format_amount(137438953472.0, UnitClass::bytes), "128 GiB");
  EXPECT_EQ(format_amount(96e9, UnitClass::bytes), "96 GB");
  EXPECT_EQ(format_amount(55.43e9, UnitClass::bandwidth), "55.43 GB/s");  // not "55430 MB/s"
  EXPECT_EQ(format_amount(3.84e12, UnitClass::bytes), "3.84 TB");
  EXPECT_EQ(format_amount(67e12, UnitClass::flop_rate), "67 TFLOP/s");
  EXPECT_EQ(format_amount(5e-6, UnitClass::time), "5 us");
  EXPECT_EQ(format_amount(1.2e-10, UnitClass::time, "s"), "1.2e-10 s");
  EXPECT_EQ(format_amount(72.0, UnitClass::dimensionless), "72");
  EXPECT_EQ(format_amount(0.0, UnitClass::time), "0 s");
}

TEST(Units, FormattedAmountsReadBackExactly) {
  const double awkward[] = {1e9 / 3.0, 123456789.123, 6.6 * 1073741824.0, 3.31e12, 0.1 + 0.2,
                            55.43e9,   1e-13,         7.0 / 3.0 * 1e-11,   2.5e15, 1.0};
  for (const double value : awkward) {
    for (const UnitClass unit_class : {UnitClass::bytes, UnitClass::bandwidth, UnitClass::flop_rate,
                                       UnitClass::time, UnitClass::dimensionless}) {
      const std::string text = format_amount(value, unit_class);
      EXPECT_EQ(parse(text, unit_class), value) << text;
      EXPECT_EQ(parse(format_amount(value, unit_class, "s"), unit_class), value);
    }
  }
}

}  // namespace
}  // namespace asteria::hw

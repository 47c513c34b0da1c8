// Parsing and display of user quantities: binary token suffixes, decimal bytes, percentages.
#include <gtest/gtest.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

using namespace vc;

TEST(Units, TokenSuffixesAreBinary) {
  EXPECT_EQ(parse_tokens("32K", "--context"), 32768u);        // DESIGN.md: 32K = 32,768
  EXPECT_EQ(parse_tokens("1M", "--context"), 1048576u);       // 1M = 1,048,576
  EXPECT_EQ(parse_tokens("8192", "--context"), 8192u);
  EXPECT_EQ(parse_tokens("1.5K", "--context"), 1536u);
  EXPECT_EQ(parse_tokens("128k", "--context"), 131072u);
  EXPECT_EQ(parse_tokens("1,048,576", "--context"), 1048576u);
  EXPECT_EQ(parse_tokens("32,768", "--context"), 32768u);
  // A comma is a thousands separator only: a list such as "1,2" is not twelve.
  EXPECT_THROW(parse_tokens("1,2", "--context"), InputError);
  EXPECT_THROW(parse_tokens("1,0485,76", "--context"), InputError);
  EXPECT_THROW(parse_tokens(",123", "--context"), InputError);
  EXPECT_THROW(parse_tokens("1234,567", "--context"), InputError);
}

TEST(Units, BadTokenCountsNameTheFlag) {
  for (const char* bad : {"-5", "0", "abc", "1.3", "5X", "", "99999999999999999999"}) {
    try {
      parse_tokens(bad, "--context");
      FAIL() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.subject(), "--context");
      EXPECT_NE(std::string(e.what()).find("accepted"), std::string::npos) << e.what();
    }
  }
}

TEST(Units, BytesDecimalAndBinary) {
  EXPECT_EQ(parse_bytes("80GB", "--vram"), 80'000'000'000u);
  EXPECT_EQ(parse_bytes("24GiB", "--vram"), 24ull << 30);
  EXPECT_EQ(parse_bytes("1.5TB", "--vram"), 1'500'000'000'000u);
  EXPECT_EQ(parse_bytes("512", "--vram"), 512u);
  EXPECT_THROW(parse_bytes("12 parsecs", "--vram"), InputError);
}

TEST(Units, BytesFractionOfAUnitRoundsDown) {
  // vLLM prints "79.19 GiB total"; 79.19 x 2^30 = 85,029,615,042.56 by hand, rounded down.
  EXPECT_EQ(parse_bytes("79.19GiB", "--gpu-memory"), 85'029'615'042u);
  EXPECT_EQ(parse_bytes("0.5KiB", "--gpu-memory"), 512u);
  EXPECT_THROW(parse_bytes("1.5B", "--gpu-memory"), InputError);  // half a byte
  EXPECT_THROW(parse_bytes("1.5", "--gpu-memory"), InputError);
}

TEST(Units, PercentInBasisPoints) {
  EXPECT_EQ(parse_percent_bp("15%", "--overhead"), 1500u);
  EXPECT_EQ(parse_percent_bp("9.75", "--overhead"), 975u);
  EXPECT_THROW(parse_percent_bp("9.755%", "--overhead"), InputError);
  EXPECT_THROW(parse_percent_bp("-1%", "--overhead"), InputError);
}

TEST(Units, Display) {
  EXPECT_EQ(format_bytes(1'560'936'091'448ull), "1,560.94 GB");
  EXPECT_EQ(format_bytes(1ull << 30, ByteUnits::Binary), "1.00 GiB");
  EXPECT_EQ(format_bytes(2'097'152), "2.10 MB");  // under 10 MB: MB, not "0.00 GB"
  EXPECT_EQ(format_bytes(10'000'000), "0.01 GB");
  EXPECT_EQ(format_bytes(0), "0.00 GB");
  EXPECT_EQ(format_tokens(1048576), "1M");
  EXPECT_EQ(format_tokens(32768), "32K");
  EXPECT_EQ(format_tokens(1000), "1000");
  EXPECT_EQ(format_percent_bp(975), "9.75%");
}

TEST(Checked, OverflowThrowsInsteadOfWrapping) {
  EXPECT_THROW(checked_mul(uint64_t{1} << 40, uint64_t{1} << 40), OverflowError);
  EXPECT_THROW(checked_add(UINT64_MAX, 1), OverflowError);
  EXPECT_EQ(ceil_div(1796, 24), 75u);
  EXPECT_EQ(mul_div_round(1000, 15, 100), 150u);
}

// Parameter counts print to 3 significant digits (4 for trillions); a count that rounds up to 1000
// of one unit moves to the next (Gemma 3 1B: 999,885,952 -> "1B", not "1e+03M").
TEST(Units, ParamCountsChangeUnitWhereTheyRoundUp) {
  EXPECT_EQ(vc::format_params(999'885'952), "1B");
  EXPECT_EQ(vc::format_params(596'049'920), "596M");
  EXPECT_EQ(vc::format_params(8'190'735'360), "8.19B");
  EXPECT_EQ(vc::format_params(1'026'408'232'448), "1.026T");
  EXPECT_EQ(vc::format_params(999'600'000'000), "0.9996T");
}

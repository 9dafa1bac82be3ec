#include "cli_parse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace zeus::cli {
namespace {

std::string message_of(const Result<double>& r) { return r ? "" : r.error().message; }

// A count past its maximum, or past 2^64 - 1, is an error naming the maximum,
// never a saturated value.
TEST(CliParse, CountsAreBoundedAndNeverSaturate) {
  EXPECT_EQ(*parse_count("12", "--seeds", 1, 1000), 12u);
  auto large = parse_count("100000000", "--seeds", 1, 1000);
  ASSERT_FALSE(large);
  EXPECT_NE(large.error().message.find("at most 1000"), std::string::npos);
  auto huge = parse_count("99999999999999999999", "--seed", 0, UINT64_MAX);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("at most 18446744073709551615"), std::string::npos);
  EXPECT_EQ(*parse_count("18446744073709551615", "--seed", 0, UINT64_MAX), UINT64_MAX);
  EXPECT_FALSE(parse_count("0", "--seeds", 1, 1000));
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.0"}) {
    EXPECT_FALSE(parse_count(bad, "--seeds", 0, 1000)) << bad;
  }
}

// Durations are finite and non-negative; 0 only where it has a meaning.
TEST(CliParse, DurationsAreFiniteWithUnits) {
  EXPECT_DOUBLE_EQ(*parse_seconds("1.2", "--duration", {0.01, true}), 1.2);
  EXPECT_DOUBLE_EQ(*parse_seconds("500ms", "--interval", {0.01, false}), 0.5);
  EXPECT_DOUBLE_EQ(*parse_seconds("2m", "--duration", {0.01, true}), 120.0);
  EXPECT_DOUBLE_EQ(*parse_seconds("1h", "--duration", {0.01, true}), 3600.0);
  EXPECT_DOUBLE_EQ(*parse_seconds("10s", "--duration", {0.01, true}), 10.0);
  EXPECT_DOUBLE_EQ(*parse_seconds("0", "--duration", {0.01, true}), 0.0);
  EXPECT_FALSE(parse_seconds("0", "--interval", {0.01, false}));
  EXPECT_FALSE(parse_seconds("0.001", "--interval", {0.01, false}));
  for (const char* bad : {"nan", "inf", "-1", "", "s", "1x", "1e999", "1e308h", "NaNs", " 1"}) {
    EXPECT_FALSE(parse_seconds(bad, "--duration", {0.01, true})) << bad;
  }
  EXPECT_NE(message_of(parse_seconds("nan", "--duration", {0.01, true})).find("--duration 'nan'"),
            std::string::npos);
}

// A wait converts to nanoseconds, which overflow near 9.2e9 s, and the loop then spins: every
// duration has an upper bound (a day by default, more where the command allows it, never past
// 1e9 s), named.
TEST(CliParse, DurationsHaveAnUpperBoundBelowTheWaitOverflow) {
  EXPECT_DOUBLE_EQ(*parse_seconds("24h", "--interval", {0.001}), 86400.0);
  for (const char* long_ : {"86401", "1e10s", "1e12s", "9.3e9", "25h"}) {
    auto r = parse_seconds(long_, "--interval", {0.001});
    ASSERT_FALSE(r) << long_;
    EXPECT_NE(message_of(r).find("too long: at most 86400 s (a day)"), std::string::npos)
        << message_of(r);
  }
  EXPECT_DOUBLE_EQ(*parse_seconds("720h", "--duration", {0.01, true, 366 * 86400.0}), 2592000.0);
  EXPECT_FALSE(parse_seconds("1e10", "--duration", {0.01, true, 1e12}));  // capped at 1e9 s
  EXPECT_DOUBLE_EQ(*parse_seconds("1e9", "--interval", {0.01, false, 1e9}), 1e9);
}

// '' is no list (it used to mean "all GPUs"), and the message names the items.
TEST(CliParse, ListsNameTheirItemsAndRejectEmpty) {
  EXPECT_EQ(*parse_int_list("0,2", "--gpus", "GPU indices like 0,1"), (std::vector<int>{0, 2}));
  auto empty = parse_int_list("", "--gpus", "GPU indices like 0,1");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("--gpus is empty"), std::string::npos);
  auto gap = parse_int_list("8,,16", "--batch-sizes", "batch sizes like 32,64,128");
  ASSERT_FALSE(gap);
  EXPECT_NE(gap.error().message.find("is not a list of batch sizes"), std::string::npos);
  for (const char* bad : {",", "1,", ",1", "a", "-1", "99999999999", "1;2"}) {
    EXPECT_FALSE(parse_int_list(bad, "--gpus", "GPU indices like 0,1")) << bad;
  }
}

// An echoed value is cut to its first 80 bytes plus its size.
TEST(CliParse, EchoedValuesAreBounded) {
  EXPECT_EQ(echo_value("short"), "short");
  const std::string long_value(100000, 'x');
  EXPECT_EQ(echo_value(long_value), std::string(80, 'x') + "\u2026(100000 bytes)");
  // Never half a UTF-8 character: 79 ASCII bytes then a 2-byte character at bytes 79-80.
  const std::string accented = std::string(79, 'a') + "\u00e9" + std::string(50, 'b');
  EXPECT_EQ(echo_value(accented), std::string(79, 'a') + "\u2026(131 bytes)");
  auto error = parse_int_list(long_value, "--gpus", "GPU indices like 0,1");
  ASSERT_FALSE(error);
  EXPECT_LT(error.error().message.size(), 200u);
  // A library's message that quotes a long value in full comes out bounded.
  const std::string bounded =
      bound_message("unknown workload '" + long_value + "' (use cifar100)", 2048);
  EXPECT_EQ(bounded,
            "unknown workload '" + std::string(80, 'x') + "\u2026(100000 bytes)' (use cifar100)");
  EXPECT_LE(bound_message(long_value, 2048).size(), 2048u + 20);
  // A value echo_value() has cut already is not cut again.
  const std::string once = "--gpus '" + echo_value(long_value) + "' is bad";
  EXPECT_EQ(bound_message(once, 2048), once);
  // An apostrophe is no quote: the text between "server's" and a quoted value stays whole.
  const std::string prose = "the server's token " + std::string(100, 'y') + " in 'file'";
  EXPECT_EQ(bound_message(prose, 2048), prose);
}

TEST(CliParse, NumbersAreFiniteAndWhole) {
  EXPECT_DOUBLE_EQ(*parse_number("0.8", "--eta"), 0.8);
  EXPECT_DOUBLE_EQ(*parse_number("1e3", "--eta"), 1000.0);
  for (const char* bad : {"nan", "inf", "-inf", "", "0.8x", "0x1p3", " 1", "1e999"}) {
    EXPECT_FALSE(parse_number(bad, "--eta")) << bad;
  }
}

TEST(CliParse, NamedValuesSplitBeforeTheirValue) {
  auto named =
      parse_named_value("meta-llama/Llama-3.1-8B=http://127.0.0.1:8000", "--upstream", "=http://");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->name, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(named->value, "http://127.0.0.1:8000");
  auto plain = parse_named_value("http://127.0.0.1:8000/?a=b", "--upstream", "=http://");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->name, "");
  EXPECT_EQ(plain->value, "http://127.0.0.1:8000/?a=b");
  auto gpus = parse_named_value("b=2,3", "--gpus", "=");
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->name, "b");
  EXPECT_EQ(gpus->value, "2,3");
  auto nameless = parse_named_value("=http://x:1", "--upstream", "=http://");
  ASSERT_FALSE(nameless);
  EXPECT_NE(nameless.error().message.find("NAME=http://"), std::string::npos);
}

}  // namespace
}  // namespace zeus::cli

#include "zeusd/upstream_query.h"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

const QuerySpec kRead{"GPU", false, false, {}, {}};
const QuerySpec kSetLimit{"GPU", true, true, {"power_limit_mw"}, {}};
const QuerySpec kCpuEnergy{"CPU", false, false, {}, {"cpu", "dram"}};

TEST(UpstreamQuery, DeviceIdsAreTrimmedSortedAndDeduplicated) {
  auto ids = parse_device_ids(" 3, 1,3 ,0", "GPU");
  ASSERT_TRUE(ids.has_value()) << ids.error().message;
  EXPECT_EQ(*ids, (std::vector<int>{0, 1, 3}));
}

TEST(UpstreamQuery, MalformedDeviceIdsAreRefusedWithTheParameterNamed) {
  for (const char* raw :
       {"", "  ", "1,", ",1", "1,,2", "a", "-1", "1.5", "+1", "0x1", "99999999999999999999999"}) {
    auto ids = parse_device_ids(raw, "GPU");
    ASSERT_FALSE(ids.has_value()) << "'" << raw << "'";
    EXPECT_EQ(ids.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_NE(parse_device_ids("", "CPU").error().message.find("cpu_ids"), std::string::npos);
  EXPECT_NE(parse_device_ids("x", "GPU").error().message.find("Invalid GPU index: x"),
            std::string::npos);
}

TEST(UpstreamQuery, OmittedIdsOnAReadMeanEveryDevice) {
  auto q = parse_query({}, kRead, 3);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->ids, (std::vector<int>{0, 1, 2}));
  q = parse_query({{"gpu_ids", "2,0"}}, kRead, 3);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->ids, (std::vector<int>{0, 2}));
}

TEST(UpstreamQuery, UnknownDeviceIsNotFoundInUpstreamsWords) {
  auto q = parse_query({{"gpu_ids", "0,3"}}, kRead, 2);
  ASSERT_FALSE(q.has_value());
  EXPECT_EQ(q.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(q.error().message, "GPU 3 not found");
  q = parse_query({{"cpu_ids", "1"}, {"cpu", "true"}, {"dram", "true"}}, kCpuEnergy, 1);
  ASSERT_FALSE(q.has_value());
  EXPECT_EQ(q.error().message, "CPU 1 not found");
}

TEST(UpstreamQuery, WritesParseTheirFieldsAndBlock) {
  auto q = parse_query({{"gpu_ids", "1"}, {"power_limit_mw", "250000"}, {"block", "false"}},
                       kSetLimit, 2);
  ASSERT_TRUE(q.has_value()) << q.error().message;
  EXPECT_EQ(q->ids, std::vector<int>{1});
  EXPECT_EQ(q->numbers.at("power_limit_mw"), 250000u);
  EXPECT_FALSE(q->block);
}

TEST(UpstreamQuery, WritesNeedIdsBlockAndEveryField) {
  const std::vector<QueryPairs> missing = {
      {{"power_limit_mw", "1"}, {"block", "true"}},
      {{"gpu_ids", "0"}, {"block", "true"}},
      {{"gpu_ids", "0"}, {"power_limit_mw", "1"}},
  };
  for (const QueryPairs& query : missing) {
    auto q = parse_query(query, kSetLimit, 2);
    ASSERT_FALSE(q.has_value());
    EXPECT_NE(q.error().message.find("missing query parameter"), std::string::npos)
        << q.error().message;
  }
}

TEST(UpstreamQuery, BadValuesUnknownAndRepeatedFieldsAreRefused) {
  auto refuse = [](const QueryPairs& query, const QuerySpec& spec, const std::string& says) {
    auto q = parse_query(query, spec, 2);
    ASSERT_FALSE(q.has_value());
    EXPECT_EQ(q.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(q.error().message.find(says), std::string::npos) << q.error().message;
  };
  refuse({{"gpu_ids", "0"}, {"power_limit_mw", "-5"}, {"block", "true"}}, kSetLimit,
         "non-negative integer");
  refuse({{"gpu_ids", "0"}, {"power_limit_mw", "4294967296"}, {"block", "true"}}, kSetLimit,
         "below 2^32");
  refuse({{"gpu_ids", "0"}, {"power_limit_mw", "1"}, {"block", "yes"}}, kSetLimit,
         "must be true or false");
  refuse({{"gpu_ids", "0"}, {"power_limit_mw", "1"}, {"block", "True"}}, kSetLimit,
         "must be true or false");
  refuse({{"gpu_ids", "0"}, {"power_limit_mw", "1"}, {"block", "true"}, {"force", "1"}}, kSetLimit,
         "unknown query parameter 'force'");
  refuse({{"gpu_ids", "0"}, {"gpu_ids", "1"}}, kRead, "given twice");
  refuse({{"gpu_id", "0"}}, kRead, "this route takes gpu_ids");
  refuse({{"cpu", "true"}}, kCpuEnergy, "missing query parameter dram");
}

TEST(UpstreamQuery, CpuFlagsAreBothRequired) {
  auto q = parse_query({{"cpu", "true"}, {"dram", "false"}}, kCpuEnergy, 2);
  ASSERT_TRUE(q.has_value()) << q.error().message;
  EXPECT_TRUE(q->flags.at("cpu"));
  EXPECT_FALSE(q->flags.at("dram"));
  EXPECT_EQ(q->ids, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace zeus::zeusd

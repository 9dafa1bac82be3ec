// The wire codec: Zeus 0.16's bodies decode, bad ones are refused with the field and reason.
#include "perseus/wire/wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace zeus::pfo {
namespace {

// What Zeus 0.16's client sends: JobInfo(...).dict() and RankInfo(...).dict() through httpx.
TEST(WireTest, DecodesZeusClientBodies) {
  auto job = decode_job_info(
      R"({"job_id": "", "pp_degree": 2, "dp_degree": 2, "tp_degree": 1, "world_size": 4, "job_metadata": null})");
  ASSERT_TRUE(job) << job.error().msg;
  EXPECT_EQ(job->pp_degree, 2);
  EXPECT_EQ(job->world_size, 4);
  EXPECT_FALSE(job->job_metadata);
  job = decode_job_info(
      R"({"job_id": "", "pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "job_metadata": "gpt3"})");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_metadata.value_or(""), "gpt3");

  auto rank = decode_rank_info(
      R"({"rank": 3, "dp_rank": 1, "pp_rank": 1, "tp_rank": 0, "available_frequencies": [1980, 1965, 210]})");
  ASSERT_TRUE(rank) << rank.error().msg;
  EXPECT_EQ(rank->rank, 3);
  EXPECT_EQ(rank->available_frequencies, (std::vector<int>{1980, 1965, 210}));

  auto result = decode_profiling_result(
      R"({"rank": 1, "iter_time": [1.5, 2], "iter_energy": [300.0, 310.5],
          "time_breakdown": {"forward": [[0.1, 0.2], [0.1]]}})");
  ASSERT_TRUE(result) << result.error().msg;
  EXPECT_EQ(result->iter_time, (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(result->time_breakdown.at("forward")[0], (std::vector<double>{0.1, 0.2}));
  EXPECT_TRUE(result->energy_breakdown.empty());
}

TEST(WireTest, RefusesWhatPydanticWouldAndMore) {
  struct Case {
    const char* body;
    std::vector<std::string> loc;
  };
  const std::vector<Case> cases = {
      {R"({"pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 4})", {"body", "world_size"}},
      {R"({"pp_degree": 0, "dp_degree": 1, "tp_degree": 1, "world_size": 0})", {"body", "pp_degree"}},
      {R"({"pp_degree": "2", "dp_degree": 1, "tp_degree": 1, "world_size": 2})", {"body", "pp_degree"}},
      {R"({"pp_degree": 2.5, "dp_degree": 1, "tp_degree": 1, "world_size": 2})", {"body", "pp_degree"}},
      {R"({"pp_degree": true, "dp_degree": 1, "tp_degree": 1, "world_size": 1})", {"body", "pp_degree"}},
      {R"({"dp_degree": 1, "tp_degree": 1, "world_size": 1})", {"body", "pp_degree"}},
      {R"({"job_id": "x", "pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1})", {"body", "job_id"}},
      {R"({"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "colour": 1})", {"body", "colour"}},
      {R"({"pp_degree": 1, "pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1})", {"body", "pp_degree"}},
      {R"({"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "job_metadata": "a/b"})", {"body", "job_metadata"}},
      // What would break the job id in a URL path.
      {R"({"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "job_metadata": "a?b"})", {"body", "job_metadata"}},
      {R"({"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "job_metadata": "a#b"})", {"body", "job_metadata"}},
      {R"({"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "job_metadata": "a%2Fb"})", {"body", "job_metadata"}},
      {R"({"pp_degree": 65536, "dp_degree": 65536, "tp_degree": 65536, "world_size": 1})", {"body", "world_size"}},
      {R"([1, 2])", {"body"}},
      {R"({"pp_degree": 1,)", {"body"}},
  };
  for (const Case& c : cases) {
    auto job = decode_job_info(c.body);
    ASSERT_FALSE(job) << c.body;
    EXPECT_EQ(job.error().loc, c.loc) << c.body << ": " << job.error().msg;
  }
  auto rank = decode_rank_info(
      R"({"rank": -1, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0, "available_frequencies": []})");
  ASSERT_FALSE(rank);
  EXPECT_EQ(rank.error().type, "value_error.number.not_ge");
  rank = decode_rank_info(
      R"({"rank": 0, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0, "available_frequencies": [1980, "x"]})");
  ASSERT_FALSE(rank);
  EXPECT_EQ(rank.error().loc, (std::vector<std::string>{"body", "available_frequencies", "1"}));
  auto result = decode_profiling_result(R"({"rank": 0, "iter_time": [1e999], "iter_energy": []})");
  EXPECT_FALSE(result);
  result = decode_profiling_result(R"({"rank": 0, "iter_time": [1], "iter_energy": [1],
      "energy_breakdown": {"forward": [1.0]}})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().loc, (std::vector<std::string>{"body", "energy_breakdown", "forward", "0"}));
}

// A rank's clock list is bounded (30 ranks of 10^6 clocks once held 260 MB): 512
// clocks are taken, 513 refused with pydantic's list error, naming the field.
TEST(WireTest, ARanksClockListIsBounded) {
  auto body = [](size_t n) {
    std::string clocks;
    for (size_t i = 0; i < n; ++i) clocks += (i ? "," : "") + std::to_string(2000 - i % 1000);
    return R"({"rank": 0, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0, "available_frequencies": [)" +
           clocks + "]}";
  };
  EXPECT_TRUE(decode_rank_info(body(kMaxRankClocks)).has_value());
  auto refused = decode_rank_info(body(kMaxRankClocks + 1));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().loc, (std::vector<std::string>{"body", "available_frequencies"}));
  EXPECT_EQ(refused.error().type, "value_error.list.max_items");
  EXPECT_FALSE(decode_rank_info(body(1000000)).has_value());
}

TEST(WireTest, WorldSizeMessageShowsTheProduct) {
  auto job = decode_job_info(R"({"pp_degree": 2, "dp_degree": 3, "tp_degree": 1, "world_size": 4})");
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().msg.find("2 x 3 x 1 = 6"), std::string::npos) << job.error().msg;
}

TEST(WireTest, RankQuery) {
  EXPECT_EQ(decode_rank_query(nullptr).error().type, "value_error.missing");
  const std::string three = "3", minus = "-1", word = "x", frac = "1.5";
  EXPECT_EQ(*decode_rank_query(&three), 3);
  EXPECT_FALSE(decode_rank_query(&minus));
  EXPECT_FALSE(decode_rank_query(&word));
  EXPECT_FALSE(decode_rank_query(&frac));
}

TEST(WireTest, EncodesRoundTripAndErrorBodies) {
  FrequencySchedule s{2, {{"forward", 1980}, {"backward", 0}}};
  EXPECT_EQ(encode(s), R"({"frequencies":[["forward",1980],["backward",0]],"rank":2})");
  auto back = decode_frequency_schedule(encode(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->frequencies, s.frequencies);
  ProfilingResult r{1, {1.25}, {300}, {{"forward", {{0.5, 0.25}}}}, {}};
  auto r2 = decode_profiling_result(encode(r));
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->time_breakdown, r.time_breakdown);
  const auto body = nlohmann::json::parse(
      validation_error_body({{"body", "available_frequencies", "1"}, "bad", "type_error.integer"}));
  EXPECT_EQ(body["detail"][0]["loc"], nlohmann::json::parse(R"(["body","available_frequencies",1])"));
  EXPECT_EQ(body["detail"][0]["type"], "type_error.integer");
  EXPECT_EQ(detail_body("unknown job"), R"({"detail":"unknown job"})");
}

}  // namespace
}  // namespace zeus::pfo

// Schedule files: upstream's Python literal parsed (never run), JSON forms, clear errors.
#include "perseus/server/schedule_literal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace zeus::pfo {
namespace {

using Entries = std::vector<std::pair<std::string, int>>;

// As lowtime writes freqs_pipeline_%05d.py: "[\n", repr() of each stage's list + ",\n", "]\n",
// then comment lines.
TEST(ScheduleLiteralTest, ParsesLowtimeOutput) {
  const char* text =
      "[\n"
      "[('forward', 1410), ('forward', 1395), ('backward', 1410)],\n"
      "[('forward', 1200), ('backward', 1410), ('backward', 1410)],\n"
      "]\n"
      "# Iteration 42 cost 1234.5 (time 3.2 s)\n"
      "# eval('anything') in a comment is just text\n";
  Result<RankSchedules> s = parse_schedule_literal(text);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0], (Entries{{"forward", 1410}, {"forward", 1395}, {"backward", 1410}}));
  EXPECT_EQ((*s)[1][0], (std::pair<std::string, int>{"forward", 1200}));
}

TEST(ScheduleLiteralTest, AcceptsListsQuotesCommentsAndTrailingCommas) {
  const char* text =
      "  # a schedule\n"
      "[ [ [\"forward\", 1_980], ['backward' , 0,],  # idle clock kept\n"
      "  ], (('for\\'ward', +15),), [], ]";
  Result<RankSchedules> s = parse_schedule_literal(text);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0], (Entries{{"forward", 1980}, {"backward", 0}}));
  EXPECT_EQ((*s)[1], (Entries{{"for'ward", 15}}));
  EXPECT_TRUE((*s)[2].empty());
  // "(x)" is x, as in Python; JSON is a Python literal too.
  s = parse_schedule_literal("[[(('forward', 10))]]");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)[0], (Entries{{"forward", 10}}));
  EXPECT_TRUE(parse_schedule_literal(R"([[["forward", 1980]]])"));
}

struct Bad {
  const char* text;
  const char* expected;  // in the message
};

TEST(ScheduleLiteralTest, CodeIsRefusedWithItsPlace) {
  const std::vector<Bad> cases = {
      {"__import__('os').system('x')", "line 1, column 1: a name ('__import__') is not allowed"},
      {"[[('forward', 1980)],\n [('backward', __import__('os').system('rm -rf /'))]]",
       "line 2, column 16: a name ('__import__')"},
      {"[[('forward', int('1980'))]]", "line 1, column 15: a name ('int')"},
      {"[[('forward', 1980)]] + [[('x', 1)]]", "line 1, column 23: unexpected '+'"},
      {"import os\n[[]]", "a name ('import')"},
      {"[[(f'forward', 1980)]]", "a name ('f')"},
      {"[[('forward', 1980.5)]]", "only whole numbers"},
      {"[[('forward', 2**10)]]", "line 1, column 16: expected ','"},
      {"[[('forward', -(5))]]", "an operator is not allowed"},
      {"[[('forward', 1980)]", "ends early"},
      {"[[('''forward''', 1980)]]", "triple-quoted"},
      {"[[('forward\n', 1980)]]", "not closed on its line"},
      {"[{'forward': 1980}]", "a dict or set is not allowed"},
      {"[[('forward', 1980)]]; x", "after the schedule"},
      {"", "holds no schedule"},
      {"[[('forward', 1980, 3)]]", "line 1, column 3: rank 0: an entry must be"},
      {"[[('forward', -15)]]", "a clock cannot be negative"},
      {"[('forward', 1980)]", "rank 0: an entry must be"},
      {"[[('forward', 1980)], 'x']", "rank 1's schedule must be a list"},
      {"[[('forward', 99999999999)]]", "too large"},
  };
  for (const Bad& c : cases) {
    Result<RankSchedules> s = parse_schedule_literal(c.text);
    ASSERT_FALSE(s) << c.text;
    EXPECT_NE(s.error().message.find(c.expected), std::string::npos)
        << c.text << " -> " << s.error().message;
  }
  std::string deep(1000, '[');
  EXPECT_FALSE(parse_schedule_literal(deep));  // bounded recursion
}

TEST(ScheduleLiteralTest, JsonForms) {
  Result<RankSchedules> s = parse_schedule_json(R"([[["forward", 1980], ["backward", 1965]], []])");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)[0], (Entries{{"forward", 1980}, {"backward", 1965}}));
  // What `zeus pfo choose` writes.
  s = parse_schedule_json(
      R"({"plan": 3, "rule": "fastest", "time": 1.0, "energy": 2.0, "stages": 2, "microbatches": 1,
          "frequencies": [[["forward", 1410], ["backward", 1410]], [["forward", 1200], ["backward", 1410]]]})");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[1][0].second, 1200);
  // A dumped N.sched.json.
  s = parse_schedule_json(R"([{"rank": 0, "frequencies": [["forward", 1]]}, {"rank": 1, "frequencies": []}])");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->size(), 2u);
  EXPECT_FALSE(parse_schedule_json(R"([{"rank": 1, "frequencies": []}])"));
  EXPECT_FALSE(parse_schedule_json(R"({"plan": 1})"));
  EXPECT_FALSE(parse_schedule_json(R"([[["forward", "1980"]]])"));
  EXPECT_FALSE(parse_schedule_json(R"([[["forward", -1]]])"));
}

TEST(ScheduleLiteralTest, ReadsFilesByExtension) {
  const auto dir = std::filesystem::temp_directory_path() / ("pfo_sched_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "freqs_pipeline_00001.py") << "[[('forward', 1410)]]\n";
  std::ofstream(dir / "schedule.json") << R"({"frequencies": [[["forward", 1410]]]})";
  std::ofstream(dir / "evil.py") << "exec('1')";
  EXPECT_TRUE(read_schedule_file((dir / "freqs_pipeline_00001.py").string()));
  EXPECT_TRUE(read_schedule_file((dir / "schedule.json").string()));
  Result<RankSchedules> evil = read_schedule_file((dir / "evil.py").string());
  ASSERT_FALSE(evil);
  EXPECT_NE(evil.error().message.find("evil.py: line 1, column 1: a name ('exec')"),
            std::string::npos)
      << evil.error().message;
  Result<RankSchedules> missing = read_schedule_file((dir / "none.py").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::pfo

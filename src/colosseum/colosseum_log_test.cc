#include "colosseum/colosseum_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace zeus::proxy {
namespace {

using nlohmann::json;

const std::array<std::string, 2> kModels = {"llama", "mistral"};
constexpr double kUnix = 1748779200.25;  // 2025-06-01T12:00:00.250Z

class ColosseumLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("colosseum_log_test_" + std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                .string();
    std::filesystem::remove(path_);
    auto opened = ColosseumLog::open(path_);
    ASSERT_TRUE(opened) << opened.error().message;
    log_ = std::move(*opened);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::vector<json> lines() const {
    std::vector<json> out;
    std::ifstream file(path_);
    std::string text;
    while (std::getline(file, text)) out.push_back(json::parse(text));
    return out;
  }

  // What the Colosseum does around each call to the book (colosseum.cc).
  void prompt(const std::string& id, int side, double t) {
    const auto before = duel_state_of(book_, id);
    const auto answer = book_.prompt(id, side, kModels, t);
    for (const ForgottenDuel& gone : book_.take_forgotten()) log_->forgotten(gone, t, kUnix + t);
    log_->prompt(id, side, before, kModels, answer, kUnix + t);
  }
  void answered(const std::string& id, int side, double energy_j, int64_t tokens, bool whole,
                double t) {
    const auto before = duel_state_of(book_, id);
    log_->answered(id, side, whole, before, book_.answered(id, side, energy_j, tokens, whole, t),
                   kUnix + t);
  }
  void response_vote(const std::string& id, int victory_index, double t) {
    const auto before = duel_state_of(book_, id);
    log_->response_vote(id, victory_index, before, book_.response_vote(id, victory_index, t),
                        kUnix + t);
  }
  void energy_vote(const std::string& id, bool is_worth, double t) {
    const auto before = duel_state_of(book_, id);
    log_->energy_vote(id, is_worth, before, book_.energy_vote(id, is_worth, t), kUnix + t);
  }
  void play(const std::string& id, double energy_0, double energy_1, double t) {
    prompt(id, 0, t);
    prompt(id, 1, t);
    answered(id, 0, energy_0, 10, true, t + 1);
    answered(id, 1, energy_1, 12, true, t + 1);
  }

  std::string path_;
  std::unique_ptr<ColosseumLog> log_;
  DuelBook book_{DuelLimits{2, 100}};
};

TEST_F(ColosseumLogTest, AFullDuelIsItsStateChangesInOrder) {
  play("r1", 30, 10, 0);
  response_vote("r1", 0, 2);  // the costlier answer
  energy_vote("r1", true, 3);
  const std::vector<json> got = lines();
  ASSERT_EQ(got.size(), 3u);  // the second prompt and the answers change no state

  EXPECT_EQ(got[0]["time"], "2025-06-01T12:00:00.250Z");
  EXPECT_DOUBLE_EQ(got[0]["unix_s"].get<double>(), kUnix);
  EXPECT_EQ(got[0]["event"], "state");
  EXPECT_EQ(got[0]["request_id"], "r1");
  EXPECT_EQ(got[0]["state"], "prompted");
  EXPECT_TRUE(got[0]["prev_state"].is_null());
  EXPECT_EQ(got[0]["action"], "prompt");
  EXPECT_EQ(got[0]["model_index"], 0);
  EXPECT_EQ(got[0]["models"], json(kModels));
  EXPECT_FALSE(got[0].contains("energy_consumptions"));  // hidden until the vote

  EXPECT_EQ(got[1]["time"], "2025-06-01T12:00:02.250Z");
  EXPECT_EQ(got[1]["event"], "state");
  EXPECT_EQ(got[1]["state"], "chose_more_energy_response");
  EXPECT_EQ(got[1]["prev_state"], "prompted");
  EXPECT_EQ(got[1]["action"], "response_vote");
  EXPECT_EQ(got[1]["victory_index"], 0);
  EXPECT_EQ(got[1]["models"], json(kModels));
  EXPECT_EQ(got[1]["energy_consumptions"], json({30.0, 10.0}));
  EXPECT_EQ(got[1]["tokens"], json({10, 12}));

  EXPECT_EQ(got[2]["state"], "voted_energy");
  EXPECT_EQ(got[2]["prev_state"], "chose_more_energy_response");
  EXPECT_EQ(got[2]["action"], "energy_vote");
  EXPECT_EQ(got[2]["is_worth"], true);
  EXPECT_EQ(got[2]["victory_index"], 0);
  EXPECT_FALSE(log_->failed());
}

TEST_F(ColosseumLogTest, ChoosingTheCheaperAnswerEndsIt) {
  play("r1", 30, 10, 0);
  response_vote("r1", 1, 2);
  const std::vector<json> got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1]["state"], "chose_less_energy_response");
  EXPECT_EQ(got[1]["victory_index"], 1);
}

TEST_F(ColosseumLogTest, AbnormalStepsAreLoggedWithTheStateUnchanged) {
  response_vote("nope", 0, 0);  // unknown id
  play("r1", 10, 30, 0);
  energy_vote("r1", true, 1);   // before the response vote
  response_vote("r1", 0, 2);    // chose less: done
  response_vote("r1", 1, 3);    // a second vote
  energy_vote("r1", false, 4);  // no extra energy to vote on
  prompt("r1", 0, 5);           // after the vote
  response_vote("r1", 0, 150);  // expired (ttl 100 s)

  const std::vector<json> got = lines();
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got[0]["event"], "abnormal");
  EXPECT_EQ(got[0]["request_id"], "nope");
  EXPECT_TRUE(got[0]["state"].is_null());
  EXPECT_TRUE(got[0]["prev_state"].is_null());
  EXPECT_EQ(got[0]["action"], "response_vote");
  EXPECT_EQ(got[0]["status"], 404);
  EXPECT_NE(got[0]["message"].get<std::string>().find("unknown request_id"), std::string::npos);
  EXPECT_EQ(got[0]["victory_index"], 0);

  EXPECT_EQ(got[1]["state"], "prompted");  // r1's prompt
  const std::vector<std::pair<std::string, int>> expected = {
      {"energy_vote", 409}, {"", 0}, {"response_vote", 409}, {"energy_vote", 409}, {"prompt", 409}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& line = got[2 + i];
    if (expected[i].first.empty()) {
      EXPECT_EQ(line["event"], "state");
      EXPECT_EQ(line["state"], "chose_less_energy_response");
      continue;
    }
    EXPECT_EQ(line["event"], "abnormal") << line;
    EXPECT_EQ(line["action"], expected[i].first) << line;
    EXPECT_EQ(line["status"], expected[i].second) << line;
    EXPECT_EQ(line["state"], line["prev_state"]) << line;
  }
  EXPECT_EQ(got[2]["state"], "prompted");
  EXPECT_EQ(got[2]["is_worth"], true);
  EXPECT_EQ(got[4]["state"], "chose_less_energy_response");
  EXPECT_EQ(got[6]["model_index"], 0);
  EXPECT_EQ(got[7]["action"], "response_vote");
  EXPECT_EQ(got[7]["status"], 410);
  EXPECT_EQ(got[7]["state"], "chose_less_energy_response");
}

TEST_F(ColosseumLogTest, AnAnswerThatBrokeOffIsAbnormal) {
  prompt("r1", 0, 0);
  prompt("r1", 1, 0);
  answered("r1", 0, 10, 5, false, 1);
  answered("r1", 0, 10, 5, true, 1);  // twice: refused
  const std::vector<json> got = lines();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1]["event"], "abnormal");
  EXPECT_EQ(got[1]["action"], "answered");
  EXPECT_FALSE(got[1].contains("status"));
  EXPECT_NE(got[1]["message"].get<std::string>().find("broke off"), std::string::npos);
  EXPECT_EQ(got[2]["status"], 409);
  EXPECT_EQ(got[2]["model_index"], 0);
}

TEST_F(ColosseumLogTest, ForgottenDuelsAreExpiries) {
  play("r1", 30, 10, 0);
  response_vote("r1", 0, 1);
  play("r2", 1, 2, 10);
  play("r3", 1, 2, 20);  // room for 2: r1 goes
  book_.sweep(230);      // r2 and r3 past twice their time to live
  for (const ForgottenDuel& gone : book_.take_forgotten()) log_->forgotten(gone, 230, kUnix + 230);
  std::vector<json> got = lines();
  ASSERT_EQ(got.size(), 7u);
  EXPECT_EQ(got[3]["event"], "expired");  // before r3's prompted line
  EXPECT_EQ(got[3]["request_id"], "r1");
  EXPECT_EQ(got[3]["state"], "expired");
  EXPECT_EQ(got[3]["prev_state"], "chose_more_energy_response");
  EXPECT_EQ(got[3]["reason"], "room");
  EXPECT_DOUBLE_EQ(got[3]["age_s"].get<double>(), 20);
  EXPECT_EQ(got[3]["victory_index"], 0);
  EXPECT_EQ(got[4]["request_id"], "r3");
  EXPECT_EQ(got[4]["state"], "prompted");
  EXPECT_EQ(got[5]["request_id"], "r2");
  EXPECT_EQ(got[5]["reason"], "ttl");
  EXPECT_EQ(got[5]["prev_state"], "prompted");
  EXPECT_FALSE(got[5].contains("victory_index"));
  EXPECT_EQ(got[6]["request_id"], "r3");
  EXPECT_TRUE(book_.take_forgotten().empty());
}

TEST_F(ColosseumLogTest, LinesAreAppendedToWhatIsThere) {
  prompt("r1", 0, 0);
  log_.reset();
  auto again = ColosseumLog::open(path_);
  ASSERT_TRUE(again);
  log_ = std::move(*again);
  prompt("r2", 0, 1);
  const std::vector<json> got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["request_id"], "r1");
  EXPECT_EQ(got[1]["request_id"], "r2");
}

TEST(ColosseumLogOpenTest, AFileThatCannotBeOpenedIsRefused) {
  auto opened = ColosseumLog::open("/nonexistent-dir/duels.jsonl");
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("cannot open"), std::string::npos);
  EXPECT_FALSE(ColosseumLog::open(""));
}

TEST(ColosseumLogOpenTest, AFailedWriteIsReportedAndTheDuelGoesOn) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto opened = ColosseumLog::open("/dev/full");
  ASSERT_TRUE(opened) << opened.error().message;
  DuelBook book;
  const auto answer = book.prompt("r1", 0, kModels, 0);
  (*opened)->prompt("r1", 0, std::nullopt, kModels, answer, kUnix);
  (*opened)->prompt("r2", 0, std::nullopt, kModels, answer, kUnix);  // no throw, no second report
  EXPECT_TRUE((*opened)->failed());
  EXPECT_TRUE(book.prompt("r1", 1, kModels, 0));
}

}  // namespace
}  // namespace zeus::proxy

#include "store/sqlite/vote_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

namespace zeus::store {
namespace {

DuelRecord record(const std::string& id) {
  DuelRecord r;
  r.request_id = id;
  r.models = {"a", "b"};
  r.energy_j = {12.5, 20.25};
  r.tokens = {40, 41};
  r.victory_index = 1;
  r.voted_unix_s = 1700000000.5;
  return r;
}

class VoteStoreTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("vote_store_test_" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
};

TEST_F(VoteStoreTest, VotesSurviveReopeningWithTheirEnergyVote) {
  const std::string path = (dir_ / "votes.db").string();
  {
    auto votes = VoteStore::open(path);
    ASSERT_TRUE(votes) << votes.error().message;
    ASSERT_TRUE((*votes)->record_vote(record("r1")));
    ASSERT_TRUE((*votes)->record_vote(record("r2")));
    ASSERT_TRUE((*votes)->record_energy_vote("r1", true));
  }
  auto votes = VoteStore::open(path);
  ASSERT_TRUE(votes);
  auto rows = (*votes)->all();
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  const DuelRecord& r1 = (*rows)[0];
  EXPECT_EQ(r1.request_id, "r1");
  EXPECT_EQ(r1.models[1], "b");
  EXPECT_DOUBLE_EQ(r1.energy_j[1], 20.25);
  EXPECT_EQ(r1.tokens[0], 40);
  EXPECT_EQ(r1.victory_index, 1);
  EXPECT_EQ(r1.is_worth, 1);
  EXPECT_EQ((*rows)[1].is_worth, -1);
}

TEST_F(VoteStoreTest, ASecondVoteAndAnUnknownEnergyVoteAreRefused) {
  auto votes = VoteStore::open(":memory:");
  ASSERT_TRUE(votes);
  ASSERT_TRUE((*votes)->record_vote(record("r1")));
  Result<void> again = (*votes)->record_vote(record("r1"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  Result<void> unknown = (*votes)->record_energy_vote("zz", false);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

TEST_F(VoteStoreTest, AFileThatIsNotADatabaseIsRefusedWithTheFix) {
  const std::string path = (dir_ / "notes.txt").string();
  std::ofstream(path) << "these are not the votes you are looking for, not at all, no\n";
  auto votes = VoteStore::open(path);
  ASSERT_FALSE(votes);
  EXPECT_EQ(votes.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(votes.error().message.find("--votes"), std::string::npos);
  auto missing = VoteStore::open((dir_ / "no" / "such" / "votes.db").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("writable"), std::string::npos);
}

}  // namespace
}  // namespace zeus::store

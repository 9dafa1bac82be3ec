#include "colosseum/duel.h"

#include <gtest/gtest.h>

namespace zeus::proxy {
namespace {

const std::array<std::string, 2> kDuelModels = {"llama", "mistral"};

// Both sides prompted and answered whole: side 0 with energy_0, side 1 with energy_1.
void play(DuelBook& book, const std::string& id, double energy_0, double energy_1, double t = 0) {
  ASSERT_EQ(book.prompt(id, 0, kDuelModels, t).value(), "llama");
  ASSERT_EQ(book.prompt(id, 1, kDuelModels, t).value(), "mistral");
  ASSERT_TRUE(book.answered(id, 0, energy_0, 10, true, t));
  ASSERT_TRUE(book.answered(id, 1, energy_1, 12, true, t));
}

TEST(DuelBookTest, ChoosingTheCheaperAnswerEndsTheDuel) {
  DuelBook book;
  play(book, "r1", 10, 30);
  DuelResult<Duel> duel = book.response_vote("r1", 0, 1);
  ASSERT_TRUE(duel);
  EXPECT_EQ(duel->state, DuelState::kChoseLessEnergy);
  EXPECT_EQ(duel->models[1], "mistral");
  EXPECT_DOUBLE_EQ(duel->answers[1].energy_j, 30);
  DuelResult<Duel> energy = book.energy_vote("r1", true, 2);
  ASSERT_FALSE(energy);
  EXPECT_EQ(energy.error().status, 409);
  EXPECT_NE(energy.error().message.find("no extra energy"), std::string::npos);
}

TEST(DuelBookTest, ChoosingTheCostlierAnswerAsksWhetherItWasWorthIt) {
  DuelBook book;
  play(book, "r1", 10, 30);
  ASSERT_EQ(book.response_vote("r1", 1, 1)->state, DuelState::kChoseMoreEnergy);
  DuelResult<Duel> energy = book.energy_vote("r1", false, 2);
  ASSERT_TRUE(energy);
  EXPECT_EQ(energy->state, DuelState::kVotedEnergy);
  EXPECT_EQ(energy->is_worth, false);
  EXPECT_EQ(book.energy_vote("r1", true, 3).error().status, 409);  // twice
}

TEST(DuelBookTest, VotingTwiceIsAConflict) {
  DuelBook book;
  play(book, "r1", 10, 30);
  ASSERT_TRUE(book.response_vote("r1", 0, 1));
  DuelResult<Duel> again = book.response_vote("r1", 1, 2);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().status, 409);
  EXPECT_NE(again.error().message.find("one vote per duel"), std::string::npos);
  EXPECT_EQ(book.prompt("r1", 0, kDuelModels, 3).error().status, 409);  // no prompt after a vote
}

TEST(DuelBookTest, WrongStatesAndBadValuesAreRefused) {
  DuelBook book;
  EXPECT_EQ(book.response_vote("nope", 0, 0).error().status, 404);
  EXPECT_EQ(book.energy_vote("nope", true, 0).error().status, 404);
  EXPECT_EQ(book.prompt("r1", 2, kDuelModels, 0).error().status, 400);
  EXPECT_EQ(book.prompt("", 0, kDuelModels, 0).error().status, 400);
  ASSERT_TRUE(book.prompt("r1", 0, kDuelModels, 0));
  EXPECT_EQ(book.prompt("r1", 0, kDuelModels, 0).error().status, 409);  // the same side twice
  EXPECT_EQ(book.response_vote("r1", 3, 0).error().status, 400);
  // Side 1 never asked, then still streaming, then failed: each a 409 that says so.
  DuelResult<Duel> early = book.response_vote("r1", 0, 0);
  EXPECT_EQ(early.error().status, 409);
  EXPECT_NE(early.error().message.find("still streaming"), std::string::npos);
  ASSERT_TRUE(book.answered("r1", 0, 5, 3, true, 0));
  EXPECT_NE(book.response_vote("r1", 0, 0).error().message.find("never asked"), std::string::npos);
  ASSERT_TRUE(book.prompt("r1", 1, kDuelModels, 0));
  ASSERT_TRUE(book.answered("r1", 1, 5, 3, false, 0));
  EXPECT_NE(book.response_vote("r1", 0, 0).error().message.find("failed"), std::string::npos);
  EXPECT_EQ(book.energy_vote("r1", true, 0).error().status, 409);        // no response vote yet
  EXPECT_EQ(book.answered("r1", 1, 5, 3, true, 0).error().status, 409);  // ended already
}

TEST(DuelBookTest, DuelsExpireAndTheOldestGoFirst) {
  DuelBook book(DuelLimits{2, 10});
  play(book, "old", 1, 2, 0);
  DuelResult<Duel> late = book.response_vote("old", 0, 11);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().status, 410);
  EXPECT_NE(late.error().message.find("expired"), std::string::npos);
  book.sweep(21);
  EXPECT_EQ(book.response_vote("old", 0, 21).error().status, 404);  // forgotten
  play(book, "a", 1, 2, 30);
  play(book, "b", 1, 2, 31);
  play(book, "c", 1, 2, 32);  // over max_duels: "a" goes
  EXPECT_EQ(book.size(), 2u);
  EXPECT_EQ(book.response_vote("a", 0, 33).error().status, 404);
  EXPECT_TRUE(book.response_vote("c", 0, 33));
}

TEST(DuelBookTest, TheRevealSentenceComparesWithTheOtherAnswer) {
  const EnergyComparison less = compare_energy(12.6, 20);
  EXPECT_TRUE(less.less);
  EXPECT_NEAR(less.percent, 37, 1e-9);
  EXPECT_EQ(less.sentence, "That answer also used 37 % less energy (12.6 J vs 20.0 J).");
  const EnergyComparison more = compare_energy(20, 10);
  EXPECT_FALSE(more.less);
  EXPECT_NEAR(more.percent, 100, 1e-9);
  EXPECT_EQ(more.sentence, "That answer used 2.0× the energy (20.0 J vs 10.0 J).");
  // Small energies keep the digits that tell them apart.
  EXPECT_EQ(compare_energy(0.812, 0.915).sentence,
            "That answer also used 11 % less energy (0.812 J vs 0.915 J).");
  EXPECT_EQ(compare_energy(2.5, 3.25).sentence,
            "That answer also used 23 % less energy (2.50 J vs 3.25 J).");
  EXPECT_EQ(compare_energy(0, 0).percent, 0);
  EXPECT_EQ(compare_energy(5, 0).percent, 100);
}

// "503 % more energy" is hard to picture; from twice the other's
// energy on, the sentence is a ratio. Smaller differences, and less energy, stay percentages.
TEST(DuelBookTest, ALargeDifferenceReadsAsARatioASmallOneAsAPercentage) {
  const EnergyComparison large = compare_energy(436.1, 72.4);
  EXPECT_FALSE(large.less);
  EXPECT_NEAR(large.percent, 502.3, 0.1);  // the field keeps the percentage
  EXPECT_EQ(large.sentence, "That answer used 6.0× the energy (436.1 J vs 72.4 J).");
  EXPECT_EQ(compare_energy(19.9, 10).sentence,
            "That answer used 99 % more energy (19.9 J vs 10.0 J).");
  EXPECT_EQ(compare_energy(12, 10).sentence, "That answer used 20 % more energy (12.0 J vs 10.0 J).");
  EXPECT_EQ(compare_energy(72.4, 436.1).sentence,
            "That answer also used 83 % less energy (72.4 J vs 436.1 J).");
  // No ratio against nothing: 5 J against 0 J stays "100 % more".
  EXPECT_EQ(compare_energy(5, 0).sentence, "That answer used 100 % more energy (5.00 J vs 0.000 J).");
}

}  // namespace
}  // namespace zeus::proxy

// DuelBook: the Colosseum's state machine (the flow of ML.ENERGY's Colosseum, kept so that it is
// recognisable). One prompt goes to two models whose names stay hidden; each side's answer is
// streamed by its own `POST /prompt` (request_id, model_index 0 or 1) and its energy recorded when
// it ends; `POST /response_vote` picks the better answer and only then reveals the names and
// energies; if the chosen answer used more energy, `POST /energy_vote` says whether that extra
// energy was worth it.
//   prompted --response_vote--> chose_less_energy_response            (done)
//            \-----------------> chose_more_energy_response --energy_vote--> voted_energy (done)
// Duels expire ttl_s after their first prompt (then 410 Gone); at most max_duels are kept (the
// oldest goes first). Each duel the book forgets (past twice its time to live, or the oldest
// dropped for room) waits in take_forgotten() for the caller to log it. Every refusal is a
// DuelError with the HTTP status to answer and a message that says what to do instead: 400 bad
// value, 404 unknown id, 409 wrong state (a second vote, a vote before both answers ended), 410
// expired. Pure: no clock, no I/O, no randomness (the caller draws which model gets which side).
// Thread-safety: none (the Colosseum holds it under a mutex).
//
//   DuelBook book;
//   book.prompt("r1", 0, {"a", "b"}, now);  book.prompt("r1", 1, {"a", "b"}, now);
//   book.answered("r1", 0, 12.5, 40, true); book.answered("r1", 1, 20.0, 41, true);
//   auto reveal = book.response_vote("r1", 0, now);  // names, energies; state chose_less
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

namespace zeus::proxy {

enum class DuelState { kPrompted, kChoseLessEnergy, kChoseMoreEnergy, kVotedEnergy };

// The original's names: "prompted", "chose_less_energy_response", ...
const char* duel_state_name(DuelState state);

struct DuelError {
  int status = 400;  // the HTTP status to answer
  std::string message;
};
template <typename T>
using DuelResult = tl::expected<T, DuelError>;

struct DuelLimits {
  size_t max_duels = 10000;
  double ttl_s = 600;
};

struct DuelAnswer {
  bool prompted = false;  // its POST /prompt came
  bool ended = false;     // its stream ended
  bool ok = false;        // ... with a whole answer
  double energy_j = 0;
  int64_t tokens = 0;
};

struct Duel {
  std::string request_id;
  std::array<std::string, 2> models;  // models[i] answers on side i
  double created_s = 0;
  DuelState state = DuelState::kPrompted;
  std::array<DuelAnswer, 2> answers;
  int victory_index = -1;
  std::optional<bool> is_worth;
};

// A duel the book forgot: expired (past twice its time to live) or dropped for room (max_duels).
struct ForgottenDuel {
  Duel duel;
  bool for_room = false;  // dropped for room, not expired
};

// How the chosen answer's energy compares with the other's: "That answer also used 37 % less
// energy (12.5 J vs 20.0 J)."
struct EnergyComparison {
  bool less = true;      // the chosen answer used no more energy than the other
  double percent = 0;    // |chosen - other| / other x 100 (100 when other is 0 J and chosen not)
  std::string sentence;  // for the page
};
EnergyComparison compare_energy(double chosen_j, double other_j);

class DuelBook {
 public:
  explicit DuelBook(DuelLimits limits = {}) : limits_(limits) {}

  // One side's prompt: the first creates the duel with `models` (later ones keep the first's).
  // Answers the model that answers on `side`.
  DuelResult<std::string> prompt(const std::string& request_id, int side,
                                 const std::array<std::string, 2>& models, double now_s);
  // The side's answer ended (ok: whole; else cut or failed), with its energy and tokens.
  DuelResult<void> answered(const std::string& request_id, int side, double energy_j,
                            int64_t tokens, bool ok, double now_s);
  // The vote for the better answer: both answers must have ended whole. Answers the duel after.
  DuelResult<Duel> response_vote(const std::string& request_id, int victory_index, double now_s);
  // Whether the chosen answer's extra energy was worth it (state chose_more_energy_response).
  DuelResult<Duel> energy_vote(const std::string& request_id, bool is_worth, double now_s);

  // Forgets duels past twice their time to live (an id seen then is unknown: 404).
  void sweep(double now_s);
  size_t size() const { return duels_.size(); }
  // The duel as it stands, expired or not; nullptr when unknown. Valid until the next call.
  const Duel* peek(const std::string& request_id) const;
  // The duels forgotten since the last call (sweep and prompt forget), oldest first. The caller
  // drains it; it holds no more than the duels forgotten in between.
  std::vector<ForgottenDuel> take_forgotten();

 private:
  DuelResult<Duel*> find(const std::string& request_id, double now_s);
  void forget(std::multimap<double, std::string>::iterator oldest, bool for_room);

  DuelLimits limits_;
  std::map<std::string, Duel> duels_;
  std::multimap<double, std::string> by_age_;  // created_s -> request_id
  std::vector<ForgottenDuel> forgotten_;
};

}  // namespace zeus::proxy

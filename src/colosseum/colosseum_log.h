// ColosseumLog: `zeus proxy --colosseum-log FILE`, the Colosseum's duels as JSON lines, as the
// original logged every state change of a play to requests.log. One line per event, written whole
// (one write(2) of the line and its newline to a file opened for appending) and so on disk as soon
// as the call returns. Every line has "time" (ISO 8601 UTC, milliseconds), "unix_s", "event",
// "request_id", "state" (the duel's state after the event; null for an unknown id) and
// "prev_state" (before it; null when the duel did not exist), then the event's fields:
//   event "state"    a state change: "prompted" (the first side's prompt: "action":"prompt",
//                    "model_index", "models"), "chose_less_energy_response" or
//                    "chose_more_energy_response" ("action":"response_vote", "victory_index",
//                    "models", "energy_consumptions" (J), "tokens", revealed now), "voted_energy"
//                    ("action":"energy_vote", "is_worth").
//   event "abnormal" a step the state machine refused (state unchanged): "action" (prompt,
//                    answered, response_vote, energy_vote), "status" (the HTTP status answered),
//                    "message", and the step's value (model_index, victory_index, is_worth); or
//                    an answer that broke off ("action":"answered", no status).
//   event "expired"  the Colosseum forgot the duel: "state":"expired", "reason" ("ttl": past
//                    twice its time to live; "room": the oldest dropped for a new one past
//                    max_duels), "age_s", "models", and its votes if any.
// The lines of one duel come in the order of its events. The calls take what the caller saw of
// the DuelBook (the state before the call and the call's answer), so the book stays pure.
// Failure: open() fails when the file cannot be opened for appending; a write that fails later is
// reported once on stderr (failed() says so) and never stops the Colosseum: later lines are still
// tried.
// Thread-safety: every method may be called from any thread (lines never interleave).
//
//   auto log = ColosseumLog::open("duels.jsonl");
//   std::optional<DuelState> before = state_of(book, id);
//   DuelResult<Duel> duel = book.response_vote(id, 1, now);
//   (*log)->response_vote(id, 1, before, duel, unix_now);
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "colosseum/duel.h"
#include "zeus/common/result.h"

namespace zeus::proxy {

// The duel's state in `book`, nullopt when it is unknown.
std::optional<DuelState> duel_state_of(const DuelBook& book, const std::string& request_id);

class ColosseumLog {
 public:
  static Result<std::unique_ptr<ColosseumLog>> open(const std::string& path);
  ~ColosseumLog();
  ColosseumLog(const ColosseumLog&) = delete;
  ColosseumLog& operator=(const ColosseumLog&) = delete;

  // A side's POST /prompt: a state line when it created the duel (before is nullopt and it was
  // accepted: `models` are then the duel's), an abnormal line when refused, else nothing.
  void prompt(const std::string& request_id, int model_index, std::optional<DuelState> before,
              const std::array<std::string, 2>& models, const DuelResult<std::string>& answer,
              double unix_s);
  // A side's answer ended (whole or not): an abnormal line when refused or not whole.
  void answered(const std::string& request_id, int model_index, bool whole,
                std::optional<DuelState> before, const DuelResult<void>& answer, double unix_s);
  void response_vote(const std::string& request_id, int victory_index,
                     std::optional<DuelState> before, const DuelResult<Duel>& answer,
                     double unix_s);
  void energy_vote(const std::string& request_id, bool is_worth, std::optional<DuelState> before,
                   const DuelResult<Duel>& answer, double unix_s);
  // A duel the book forgot (DuelBook::take_forgotten()); now_s on the book's clock.
  void forgotten(const ForgottenDuel& gone, double now_s, double unix_s);

  const std::string& path() const { return path_; }
  bool failed() const;  // a write has failed (reported once on stderr)

 private:
  ColosseumLog(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void write_line(std::string line);

  const std::string path_;
  const int fd_;
  mutable std::mutex mu_;
  bool failed_ = false;
};

}  // namespace zeus::proxy

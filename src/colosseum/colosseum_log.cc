#include "colosseum/colosseum_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "zeus/common/log.h"

namespace zeus::proxy {
namespace {

using Line = nlohmann::ordered_json;  // keys in the order written: time first

// "2025-06-01T12:00:00.123Z"
std::string iso8601_utc_ms(double unix_s) {
  const double whole = std::floor(unix_s);
  int ms = static_cast<int>(std::lround((unix_s - whole) * 1000));
  time_t seconds = static_cast<time_t>(whole);
  if (ms >= 1000) {
    ms -= 1000;
    ++seconds;
  }
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &parts);
  char text[48];
  std::snprintf(text, sizeof text, "%s.%03dZ", date, ms);
  return text;
}

Line state_or_null(std::optional<DuelState> state) {
  return state ? Line(duel_state_name(*state)) : Line(nullptr);
}

// The fields every line starts with.
Line head(double unix_s, const char* event, const std::string& request_id,
          std::optional<DuelState> before, const Line& state) {
  Line line;
  line["time"] = iso8601_utc_ms(unix_s);
  line["unix_s"] = unix_s;
  line["event"] = event;
  line["request_id"] = request_id;
  line["state"] = state;
  line["prev_state"] = state_or_null(before);
  return line;
}

// A refused step: the state is what it was.
Line abnormal(double unix_s, const char* action, const std::string& request_id,
              std::optional<DuelState> before, const DuelError& error) {
  Line line = head(unix_s, "abnormal", request_id, before, state_or_null(before));
  line["action"] = action;
  line["status"] = error.status;
  line["message"] = error.message;
  return line;
}

void add_reveal(Line& line, const Duel& duel) {
  line["models"] = duel.models;
  line["victory_index"] = duel.victory_index;
  line["energy_consumptions"] = {duel.answers[0].energy_j, duel.answers[1].energy_j};
  line["tokens"] = {duel.answers[0].tokens, duel.answers[1].tokens};
}

std::string dump(const Line& line) {
  return line.dump(-1, ' ', false, Line::error_handler_t::replace);
}

}  // namespace

std::optional<DuelState> duel_state_of(const DuelBook& book, const std::string& request_id) {
  const Duel* duel = book.peek(request_id);
  return duel ? std::optional<DuelState>(duel->state) : std::nullopt;
}

Result<std::unique_ptr<ColosseumLog>> ColosseumLog::open(const std::string& path) {
  if (path.empty()) return fail(ErrorCode::kInvalidArgument, "--colosseum-log: give a file name");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable, "--colosseum-log: cannot open '" + path +
                                             "' for appending: " + std::strerror(errno));
  }
  return std::unique_ptr<ColosseumLog>(new ColosseumLog(path, fd));
}

ColosseumLog::~ColosseumLog() { ::close(fd_); }

bool ColosseumLog::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

void ColosseumLog::write_line(std::string line) {
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  size_t done = 0;
  int error = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (error != 0 && !failed_) {
    failed_ = true;
    log_warning("zeus colosseum: cannot write the Colosseum log '" + path_ +
                "': " + std::strerror(error) +
                " (the duels go on; later lines are still tried, failures not reported again)");
  }
}

void ColosseumLog::prompt(const std::string& request_id, int model_index,
                          std::optional<DuelState> before, const std::array<std::string, 2>& models,
                          const DuelResult<std::string>& answer, double unix_s) {
  if (!answer) {
    Line line = abnormal(unix_s, "prompt", request_id, before, answer.error());
    line["model_index"] = model_index;
    write_line(dump(line));
    return;
  }
  if (before) return;  // the second side: no state change
  Line line = head(unix_s, "state", request_id, before, duel_state_name(DuelState::kPrompted));
  line["action"] = "prompt";
  line["model_index"] = model_index;
  line["models"] = models;
  write_line(dump(line));
}

void ColosseumLog::answered(const std::string& request_id, int model_index, bool whole,
                            std::optional<DuelState> before, const DuelResult<void>& answer,
                            double unix_s) {
  if (answer && whole) return;
  Line line;
  if (!answer) {
    line = abnormal(unix_s, "answered", request_id, before, answer.error());
  } else {
    line = head(unix_s, "abnormal", request_id, before, state_or_null(before));
    line["action"] = "answered";
    line["message"] =
        "side " + std::to_string(model_index) + "'s answer broke off: the duel cannot be voted on";
  }
  line["model_index"] = model_index;
  write_line(dump(line));
}

void ColosseumLog::response_vote(const std::string& request_id, int victory_index,
                                 std::optional<DuelState> before, const DuelResult<Duel>& answer,
                                 double unix_s) {
  if (!answer) {
    Line line = abnormal(unix_s, "response_vote", request_id, before, answer.error());
    line["victory_index"] = victory_index;
    write_line(dump(line));
    return;
  }
  Line line = head(unix_s, "state", request_id, before, duel_state_name(answer->state));
  line["action"] = "response_vote";
  add_reveal(line, *answer);
  write_line(dump(line));
}

void ColosseumLog::energy_vote(const std::string& request_id, bool is_worth,
                               std::optional<DuelState> before, const DuelResult<Duel>& answer,
                               double unix_s) {
  if (!answer) {
    Line line = abnormal(unix_s, "energy_vote", request_id, before, answer.error());
    line["is_worth"] = is_worth;
    write_line(dump(line));
    return;
  }
  Line line = head(unix_s, "state", request_id, before, duel_state_name(answer->state));
  line["action"] = "energy_vote";
  line["is_worth"] = is_worth;
  line["models"] = answer->models;
  line["victory_index"] = answer->victory_index;
  write_line(dump(line));
}

void ColosseumLog::forgotten(const ForgottenDuel& gone, double now_s, double unix_s) {
  const Duel& duel = gone.duel;
  Line line = head(unix_s, "expired", duel.request_id, duel.state, "expired");
  line["reason"] = gone.for_room ? "room" : "ttl";
  line["age_s"] = now_s - duel.created_s;
  line["models"] = duel.models;
  if (duel.victory_index >= 0) line["victory_index"] = duel.victory_index;
  if (duel.is_worth) line["is_worth"] = *duel.is_worth;
  write_line(dump(line));
}

}  // namespace zeus::proxy

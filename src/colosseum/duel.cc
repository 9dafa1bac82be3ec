#include "colosseum/duel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace zeus::proxy {
namespace {

tl::unexpected<DuelError> refuse(int status, std::string message) {
  return tl::unexpected(DuelError{status, std::move(message)});
}

std::string quoted(const std::string& id) { return "'" + id + "'"; }

}  // namespace

const char* duel_state_name(DuelState state) {
  switch (state) {
    case DuelState::kPrompted:
      return "prompted";
    case DuelState::kChoseLessEnergy:
      return "chose_less_energy_response";
    case DuelState::kChoseMoreEnergy:
      return "chose_more_energy_response";
    case DuelState::kVotedEnergy:
      return "voted_energy";
  }
  return "unknown";
}

EnergyComparison compare_energy(double chosen_j, double other_j) {
  EnergyComparison out;
  out.less = chosen_j <= other_j;
  if (other_j > 0) {
    out.percent = std::fabs(chosen_j - other_j) / other_j * 100;
  } else {
    out.percent = chosen_j > 0 ? 100 : 0;
  }
  // Energies under 10 J with more decimals: "0.81 J vs 0.92 J", never "0.8 J vs 0.8 J".
  const auto joules = [](double j) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f J", std::fabs(j) < 1 ? 3 : std::fabs(j) < 10 ? 2 : 1, j);
    return std::string(text);
  };
  // At twice the other's energy or more, a ratio: "503 % more" is hard to picture, "6.0x the
  // energy" is not. Small differences stay percentages ("37 % more"); less energy is always one
  // (at most 100 %).
  char text[96];
  if (!out.less && other_j > 0 && chosen_j >= 2 * other_j) {
    std::snprintf(text, sizeof(text), "That answer used %.1f× the energy", chosen_j / other_j);
  } else {
    std::snprintf(text, sizeof(text), out.less ? "That answer also used %.0f %% less energy"
                                               : "That answer used %.0f %% more energy",
                  out.percent);
  }
  out.sentence = std::string(text) + " (" + joules(chosen_j) + " vs " + joules(other_j) + ").";
  return out;
}

DuelResult<Duel*> DuelBook::find(const std::string& request_id, double now_s) {
  auto it = duels_.find(request_id);
  if (it == duels_.end()) {
    return refuse(404, "unknown request_id " + quoted(request_id) +
                           ": send POST /prompt for both sides first (or it expired long ago)");
  }
  if (now_s - it->second.created_s > limits_.ttl_s) {
    return refuse(410, "duel " + quoted(request_id) + " expired (older than " +
                           std::to_string(static_cast<int>(limits_.ttl_s)) +
                           " s): start a new one with a new request_id");
  }
  return &it->second;
}

DuelResult<std::string> DuelBook::prompt(const std::string& request_id, int side,
                                         const std::array<std::string, 2>& models, double now_s) {
  if (request_id.empty() || request_id.size() > 128) {
    return refuse(400, "request_id must be a non-empty string of at most 128 characters");
  }
  if (side != 0 && side != 1) return refuse(400, "model_index must be 0 or 1");
  if (!duels_.count(request_id)) {
    sweep(now_s);
    while (duels_.size() >= std::max<size_t>(limits_.max_duels, 1)) {
      forget(by_age_.begin(), /*for_room=*/true);
    }
    Duel duel;
    duel.request_id = request_id;
    duel.models = models;
    duel.created_s = now_s;
    duels_.emplace(request_id, std::move(duel));
    by_age_.emplace(now_s, request_id);
  }
  DuelResult<Duel*> duel = find(request_id, now_s);
  if (!duel) return tl::unexpected(duel.error());
  Duel& d = **duel;
  if (d.state != DuelState::kPrompted) {
    return refuse(409, "duel " + quoted(request_id) + " was voted on already (" +
                           duel_state_name(d.state) + "): start a new one with a new request_id");
  }
  if (d.answers[side].prompted) {
    return refuse(409, "side " + std::to_string(side) + " of duel " + quoted(request_id) +
                           " was prompted already: each side is prompted once");
  }
  d.answers[side].prompted = true;
  return d.models[side];
}

DuelResult<void> DuelBook::answered(const std::string& request_id, int side, double energy_j,
                                    int64_t tokens, bool ok, double now_s) {
  if (side != 0 && side != 1) return refuse(400, "model_index must be 0 or 1");
  DuelResult<Duel*> duel = find(request_id, now_s);
  if (!duel) return tl::unexpected(duel.error());
  DuelAnswer& answer = (*duel)->answers[side];
  if (!answer.prompted || answer.ended) {
    return refuse(409, "side " + std::to_string(side) + " of duel " + quoted(request_id) +
                           " is not being answered");
  }
  answer.ended = true;
  answer.ok = ok;
  answer.energy_j = energy_j;
  answer.tokens = tokens;
  return {};
}

DuelResult<Duel> DuelBook::response_vote(const std::string& request_id, int victory_index,
                                         double now_s) {
  if (victory_index != 0 && victory_index != 1) return refuse(400, "victory_index must be 0 or 1");
  DuelResult<Duel*> duel = find(request_id, now_s);
  if (!duel) return tl::unexpected(duel.error());
  Duel& d = **duel;
  if (d.state != DuelState::kPrompted) {
    return refuse(409, "duel " + quoted(request_id) + " has its response vote already (" +
                           duel_state_name(d.state) + "): one vote per duel");
  }
  for (int side = 0; side < 2; ++side) {
    const DuelAnswer& a = d.answers[side];
    const std::string which = "side " + std::to_string(side) + "'s answer";
    if (!a.prompted) return refuse(409, which + " was never asked for: POST /prompt it first");
    if (!a.ended) return refuse(409, which + " is still streaming: vote once both have ended");
    if (!a.ok) {
      return refuse(409, which + " failed (the model's server broke off): start a new duel");
    }
  }
  d.victory_index = victory_index;
  d.state = d.answers[victory_index].energy_j <= d.answers[1 - victory_index].energy_j
                ? DuelState::kChoseLessEnergy
                : DuelState::kChoseMoreEnergy;
  return d;
}

DuelResult<Duel> DuelBook::energy_vote(const std::string& request_id, bool is_worth, double now_s) {
  DuelResult<Duel*> duel = find(request_id, now_s);
  if (!duel) return tl::unexpected(duel.error());
  Duel& d = **duel;
  switch (d.state) {
    case DuelState::kPrompted:
      return refuse(409, "duel " + quoted(request_id) +
                             " has no response vote yet: POST /response_vote first");
    case DuelState::kChoseLessEnergy:
      return refuse(409, "the answer chosen in duel " + quoted(request_id) +
                             " used less energy: there is no extra energy to vote on");
    case DuelState::kVotedEnergy:
      return refuse(409, "duel " + quoted(request_id) + " has its energy vote already");
    case DuelState::kChoseMoreEnergy:
      break;
  }
  d.is_worth = is_worth;
  d.state = DuelState::kVotedEnergy;
  return d;
}

void DuelBook::sweep(double now_s) {
  while (!by_age_.empty() && now_s - by_age_.begin()->first > 2 * limits_.ttl_s) {
    forget(by_age_.begin(), /*for_room=*/false);
  }
}

void DuelBook::forget(std::multimap<double, std::string>::iterator oldest, bool for_room) {
  auto it = duels_.find(oldest->second);
  if (it != duels_.end()) {
    forgotten_.push_back(ForgottenDuel{std::move(it->second), for_room});
    duels_.erase(it);
  }
  by_age_.erase(oldest);
}

const Duel* DuelBook::peek(const std::string& request_id) const {
  auto it = duels_.find(request_id);
  return it == duels_.end() ? nullptr : &it->second;
}

std::vector<ForgottenDuel> DuelBook::take_forgotten() {
  std::vector<ForgottenDuel> out;
  out.swap(forgotten_);
  return out;
}

}  // namespace zeus::proxy
